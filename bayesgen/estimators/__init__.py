"""The scikit-learn estimators, one class per model, and the machinery they share.

Modules here import :mod:`bayesgen.io` and the layers below it. Above this layer the model
is reached through an estimator's ``model_``; below it, nothing looks a model up by name.
"""

from bayesgen.estimators.dcm import DirichletMultinomialNB
from bayesgen.estimators.gaussian_nb import GaussianNB
from bayesgen.estimators.mixed import NaiveBayes
from bayesgen.estimators.models import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)
from bayesgen.estimators.poisson_nb import PoissonNB

__all__ = [
    "BernoulliNB",
    "CategoricalNB",
    "DirichletMultinomialNB",
    "GaussianDiscriminantAnalysis",
    "GaussianNB",
    "MultinomialNB",
    "NaiveBayes",
    "PoissonNB",
    "QuadraticDiscriminantAnalysis",
]
