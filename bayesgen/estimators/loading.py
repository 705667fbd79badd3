"""Loading a model file as the estimator that wrote it: the estimator classes handed to
:func:`bayesgen.io.model_files.load`, which sits below this layer and names none of them.
"""

from __future__ import annotations

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
from bayesgen.io import model_files

__all__ = ["ESTIMATORS", "load"]

#: The estimator classes a model file may name.
ESTIMATORS = (
    BernoulliNB,
    CategoricalNB,
    DirichletMultinomialNB,
    GaussianDiscriminantAnalysis,
    GaussianNB,
    MultinomialNB,
    NaiveBayes,
    PoissonNB,
    QuadraticDiscriminantAnalysis,
)


def load(path):
    """The fitted estimator saved at ``path`` (by :meth:`save`), ready to predict.

    See :func:`bayesgen.io.model_files.load` for what is checked on the way in.

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> import numpy as np
    >>> from bayesgen import MultinomialNB, load
    >>> X = np.array([[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]])
    >>> y = ["ham", "ham", "spam", "spam"]
    >>> est = MultinomialNB(inference="conjugate", compute_map=False, random_seed=0).fit(X, y)
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     loaded = load(est.save(Path(folder) / "spam.nc"))
    >>> bool(np.array_equal(loaded.predict_proba(X), est.predict_proba(X)))
    True
    """
    return model_files.load(path, ESTIMATORS)
