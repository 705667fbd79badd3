"""bayesgen: Bayesian generative classifiers with PyMC posteriors checked against closed forms.

The closed forms (:mod:`bayesgen.closed_form`) need only NumPy, SciPy and xarray; the
estimators, inference, comparison and reports import PyMC and ArviZ when first used, so
``import bayesgen.closed_form`` stays light.
"""

from importlib import import_module

__version__ = "0.1.0"

# public name -> module that defines it; resolved on first attribute access (PEP 562).
_LAZY = {
    "GaussianDiscriminantAnalysis": "bayesgen.estimators.models",
    "QuadraticDiscriminantAnalysis": "bayesgen.estimators.models",
    "BernoulliNB": "bayesgen.estimators.models",
    "MultinomialNB": "bayesgen.estimators.models",
    "CategoricalNB": "bayesgen.estimators.models",
    "PoissonNB": "bayesgen.estimators.poisson_nb",
    "DirichletMultinomialNB": "bayesgen.estimators.dcm",
    "GaussianNB": "bayesgen.estimators.gaussian_nb",
    "NaiveBayes": "bayesgen.estimators.mixed",
    "NormalInverseGamma": "bayesgen.maths.normal_inverse_gamma",
    "NormalInverseWishart": "bayesgen.closed_form",
    "load": "bayesgen.estimators.loading",
    "compare": "bayesgen.checks.comparison",
    "compare_predictions": "bayesgen.checks.predictions",
    "predictive_probabilities": "bayesgen.checks.predictions",
    "lambda_sweep": "bayesgen.checks.sweep",
    "plot_lambda_sweep": "bayesgen.checks.sweep",
    "report": "bayesgen.plotting.report",
    "loo_proba": "bayesgen.checks.loo",
    "leave_one_out": "bayesgen.checks.loo",
    "compare_models": "bayesgen.checks.loo",
    # Not bayesgen.sbc: importing a submodule of that name would shadow the function.
    "sbc": "bayesgen.checks.calibration",
    "SBCResult": "bayesgen.checks.calibration",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'bayesgen' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
