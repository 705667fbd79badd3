"""Simulation-based calibration of the semi-supervised posterior (Gibbs sampling over the hidden
labels) for multinomial, Bernoulli and Gaussian naive Bayes and GDA, and a control that fails.

Each simulation draws the parameters from the fit's own prior, 30 labels and rows from the
model, and hides 24 of the 30 labels (80 %) completely at random; the rank of each true
parameter among 99 posterior draws (every second of 198 Gibbs sweeps after 50 tuning ones, one
chain) is uniform on 0..99 for a correct posterior (Talts et al. 2018), which a chi-square test
of 10 bins checks for each ranked parameter at level 0.001. All slow: about 5 minutes a model
on an idle 2-core machine (100 simulations, two fits each). A data set whose 6 labelled rows
hold one class only (a semi-supervised fit needs both) is drawn again, parameters and all: that
conditions the pairs (θ, data) on an event of the data alone, which leaves p(θ | data) and so
the ranks' uniformity intact (unlike fixing two rows' labels, which no prior draw made).

The loop is written here rather than through :func:`bayesgen.checks.calibration.sbc`, whose
simulations cannot hide labels.

The control: the conjugate posterior at the EM's completed expected statistics (what a fit
with λ_u < 1 holds, here λ_u = 1 − 1e-12) treats the hidden labels as known fractions and is
too narrow; the same simulations rank the truth in its tails, and the uniformity test fails.
The posterior of the labelled rows alone would not do as a control: labels hidden at random are
ignorable, so it is a correct posterior given less data, and calibrated.
"""

from functools import cache

import numpy as np
import pytest
from scipy import stats

from bayesgen import (
    BernoulliNB,
    GaussianDiscriminantAnalysis,
    GaussianNB,
    MultinomialNB,
    NormalInverseGamma,
    NormalInverseWishart,
)

N_SIMULATIONS, N_ROWS, N_HIDDEN, N_DRAWS = 100, 30, 24, 99
#: Every second sweep kept: the Gibbs draws are autocorrelated, which skews ranks.
THIN = 2
N_BINS, LEVEL = 10, 0.001
GIBBS = {"inference": "conjugate", "prior_draws": 0, "compute_map": False, "chains": 1}
# κ₀ = 2: class means about one within-class SD apart, so that the hidden labels are uncertain
# (with κ₀ = 0.5 they are far apart, the labels nearly certain, and the control barely wrong).
NIG = NormalInverseGamma(mean=0.0, kappa=2.0, shape=3.0, scale=2.0)
NIW = NormalInverseWishart(mean=np.zeros(2), kappa=0.5, dof=5.0, scale=2.0 * np.eye(2))


def bernoulli(rng, y):
    feature_prob = rng.beta(2.0, 2.0, size=(2, 3))
    X = (rng.random((y.size, 3)) < feature_prob[y]).astype(float)
    return X, np.r_[feature_prob[0, 0], feature_prob[1, 2]]


def multinomial(rng, y):
    feature_prob = rng.dirichlet([2.0, 2.0, 2.0], size=2)
    X = np.stack([rng.multinomial(5, feature_prob[k]) for k in y]).astype(float)
    return X, np.r_[feature_prob[0, 0], feature_prob[1, 2]]


def gaussian_nb(rng, y):
    var = stats.invgamma(3.0, scale=2.0).rvs(size=(2, 2), random_state=rng)
    mu = rng.normal(0.0, np.sqrt(var / 2.0))
    return rng.normal(mu[y], np.sqrt(var[y])), np.r_[mu[0, 0], var[1, 1]]


def gda(rng, y):
    cov = stats.invwishart(df=5.0, scale=2.0 * np.eye(2)).rvs(random_state=rng)
    mu = rng.multivariate_normal(np.zeros(2), cov / 0.5, size=2)
    X = mu[y] + rng.multivariate_normal(np.zeros(2), cov, size=y.size)
    return X, np.r_[mu[0, 0], cov[1, 1], cov[0, 1]]


#: Per model: the rows given the labels (and the parameters ranked besides π_0), the
#: estimator at the simulation's prior, and the posterior cells ranked beside π_0.
MODELS = {
    "bernoulli": (
        bernoulli,
        lambda **fit: BernoulliNB(alpha=2.0, class_alpha=2.0, **fit),
        [("feature_prob", (0, 0)), ("feature_prob", (1, 2))],
    ),
    "gaussian_nb": (
        gaussian_nb,
        lambda **fit: GaussianNB(class_alpha=2.0, prior=NIG, **fit),
        [("mu", (0, 0)), ("var", (1, 1))],
    ),
    "gda": (
        gda,
        lambda **fit: GaussianDiscriminantAnalysis(class_alpha=2.0, prior=NIW, **fit),
        [("mu", (0, 0)), ("cov", (1, 1)), ("cov", (0, 1))],
    ),
    "multinomial": (
        multinomial,
        lambda **fit: MultinomialNB(alpha=2.0, class_alpha=2.0, **fit),
        [("feature_prob", (0, 0)), ("feature_prob", (1, 2))],
    ),
}


def simulate(model: str, rng):
    """θ from the prior, 30 labels and rows, 24 labels hidden (NaN); drawn again, θ and all,
    until the labelled rows hold both classes."""
    rows_of = MODELS[model][0]
    while True:
        class_prob = rng.dirichlet([2.0, 2.0])
        y = rng.choice(2, N_ROWS, p=class_prob)
        X, others = rows_of(rng, y)
        hidden = y.astype(float)
        hidden[rng.choice(N_ROWS, N_HIDDEN, replace=False)] = np.nan
        if np.unique(hidden[~np.isnan(hidden)]).size == 2:
            return np.r_[class_prob[0], others], X, hidden


def ranked_draws(model: str, est) -> np.ndarray:
    """The draws of π_0 and the model's other ranked cells, shape (draws, parameters)."""
    posterior = est.idata_["posterior"]
    cells = [("class_prob", (0,)), *MODELS[model][2]]
    draws = [posterior[name].values[0][(slice(None), *index)] for name, index in cells]
    return np.stack(draws, axis=1)[::THIN]


@cache
def ranks(model: str) -> dict[str, np.ndarray]:
    """Ranks of the truth among the Gibbs posterior's draws and among the control's, one row
    per simulation (the same simulations for both)."""
    rng = np.random.default_rng(list(MODELS).index(model))
    make = MODELS[model][1]
    found = {"gibbs": [], "expected_statistics": []}
    for _ in range(N_SIMULATIONS):
        truth, X, hidden = simulate(model, rng)
        seed = int(rng.integers(2**31))
        gibbs = make(draws=N_DRAWS * THIN, tune=50, random_seed=seed, **GIBBS).fit(X, hidden)
        assert gibbs.closed_form_.attrs["semi_supervised_posterior"] == "gibbs"
        control = make(draws=N_DRAWS * THIN, random_seed=seed, **GIBBS).fit(
            X, hidden, unlabelled_weight=1 - 1e-12
        )
        assert control.closed_form_.attrs["semi_supervised_posterior"] == "expected_statistics"
        for name, est in (("gibbs", gibbs), ("expected_statistics", control)):
            found[name].append((ranked_draws(model, est) < truth).sum(axis=0))
    return {name: np.array(values) for name, values in found.items()}


def uniformity_p_values(ranks_: np.ndarray) -> np.ndarray:
    """The chi-square test's p-value of each parameter's ranks in ``N_BINS`` equal bins."""
    return np.array(
        [
            stats.chisquare(np.bincount(column * N_BINS // (N_DRAWS + 1), minlength=N_BINS)).pvalue
            for column in ranks_.T
        ]
    )


@pytest.mark.slow
@pytest.mark.parametrize("model", list(MODELS))
def test_the_gibbs_posterior_of_hidden_labels_is_calibrated(model):
    p_values = uniformity_p_values(ranks(model)["gibbs"])
    assert np.all(p_values > LEVEL), p_values


@pytest.mark.slow
@pytest.mark.parametrize("model", list(MODELS))
def test_the_expected_statistics_posterior_fails_the_same_check(model):
    """The check can fail: the narrower approximation ranks the truth in its tails."""
    p_values = uniformity_p_values(ranks(model)["expected_statistics"])
    assert np.any(p_values < LEVEL), p_values
