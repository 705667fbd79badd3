"""scikit-learn's own estimator checks on the four estimators.

They run with exact conjugate draws (nothing compiles) and few of them, so that the hundreds
of fits the checks make stay fast. ``BernoulliNB`` gets ``binarize=0.0``, scikit-learn's
default: with bayesgen's default ``binarize=None`` it accepts only 0/1 input, which no
scikit-learn tag can express, and the checks feed it real-valued data.

No check is expected to fail: where a check once failed, the estimator changed (tags,
``NotFittedError``, error types and messages, the column-vector ``DataConversionWarning``).
"""

from sklearn.utils.estimator_checks import parametrize_with_checks

from bayesgen import BernoulliNB, CategoricalNB, GaussianDiscriminantAnalysis, MultinomialNB

FAST = {
    "inference": "conjugate",
    "compute_map": False,
    "draws": 100,
    "prior_draws": 0,
    "random_seed": 0,
}
ESTIMATORS = [
    MultinomialNB(**FAST),
    BernoulliNB(binarize=0.0, **FAST),
    CategoricalNB(**FAST),
    GaussianDiscriminantAnalysis(**FAST),
]


# No expected_failed_checks: no check contradicts a documented Bayesian difference.
@parametrize_with_checks(ESTIMATORS)
def test_scikit_learn_estimator_check(estimator, check):
    check(estimator)
