"""bayesgen: Bayesian generative classifiers with PyMC posteriors checked against closed forms.

The closed forms (:mod:`bayesgen.closed_form`) need only NumPy, SciPy and xarray; the
estimators, inference, comparison and reports import PyMC and ArviZ when first used, so
``import bayesgen.closed_form`` stays light.
"""

from importlib import import_module

__version__ = "0.1.0"

# public name -> module that defines it; resolved on first attribute access (PEP 562).
_LAZY = {
    "GaussianDiscriminantAnalysis": "bayesgen.estimators",
    "QuadraticDiscriminantAnalysis": "bayesgen.estimators",
    "BernoulliNB": "bayesgen.estimators",
    "MultinomialNB": "bayesgen.estimators",
    "CategoricalNB": "bayesgen.estimators",
    "NormalInverseWishart": "bayesgen.closed_form",
    "load": "bayesgen.io",
    "compare": "bayesgen.checks",
    "compare_predictions": "bayesgen.predictions",
    "predictive_probabilities": "bayesgen.predictions",
    "lambda_sweep": "bayesgen.sweep",
    "plot_lambda_sweep": "bayesgen.sweep",
    "report": "bayesgen.reporting",
    "loo_proba": "bayesgen.loo",
    "leave_one_out": "bayesgen.loo",
    "compare_models": "bayesgen.loo",
    # Not bayesgen.sbc: importing a submodule of that name would shadow the function.
    "sbc": "bayesgen.calibration",
    "SBCResult": "bayesgen.calibration",
}

__all__ = ["__version__", *_LAZY]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'bayesgen' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(__all__)
