"""Simulation-based calibration of the Dirichlet compound multinomial with NUTS (Talts et al.
2018): θ* drawn from the prior, documents simulated from θ*, NUTS fitted, and the rank of θ*
among the posterior draws uniform for every parameter ranked.

The first test's loop is written here, independently of ``bayesgen.sbc`` (which the last
slow test runs on the same design, with the family's prior draws and simulator), with the
prior drawn by NumPy from its definition: π ~ Dirichlet(1, 1), s_k ~ Gamma(1, 1 / V)
and m_k ~ Dirichlet(1) (``mean_prior_strength=0``: the default centres m's prior on the
training data's frequencies, a prior that would move with each simulated data set, which
SBC cannot test), and the documents by the Pólya urn's law, θ ~ Dirichlet(s m), x ~
Multinomial(n, θ), not by the family's simulator.
"""

import warnings

import numpy as np
import pytest
from scipy import stats

from bayesgen import DirichletMultinomialNB, sbc

N_CLASSES, N_WORDS, N_DOCUMENTS, LENGTH = 2, 5, 30, 12
#: N_DRAWS + 1 possible ranks, N_BINS bins of 40 each.
N_SIMULATIONS, N_DRAWS, N_BINS = 50, 199, 5
#: Family-wise level of the uniformity tests (Bonferroni over the parameters ranked).
LEVEL = 0.001
#: Every fit: the prior of m free of the data, NUTS 2 x (300 + 200), nothing else drawn.
FIT = {
    "mean_prior_strength": 0.0,
    "draws": 200,
    "tune": 300,
    "chains": 2,
    "prior_draws": 0,
    "compute_map": False,
    "progressbar": False,
}


def simulate(rng):
    """(truth, X, y) from the prior, or None where a class has no document (redrawn as a
    pair, as bayesgen.checks.calibration does, so the ranks stay uniform)."""
    class_prob = rng.dirichlet(np.ones(N_CLASSES))
    concentration = rng.gamma(1.0, N_WORDS, size=N_CLASSES)  # scale = 1 / rate
    mean = rng.dirichlet(np.ones(N_WORDS), size=N_CLASSES)
    y = rng.choice(N_CLASSES, size=N_DOCUMENTS, p=class_prob)
    if np.bincount(y, minlength=N_CLASSES).min() == 0:
        return None
    alpha = concentration[:, None] * mean
    X = np.array([rng.multinomial(LENGTH, rng.dirichlet(np.maximum(alpha[k], 1e-12))) for k in y])
    truth = {"class_prob": class_prob[:1], "concentration": concentration, "feature_mean": mean}
    return truth, X.astype(float), y


def ranks_of(posterior: dict, truth: dict, rng) -> list:
    """Rank of each true value among N_DRAWS of its posterior draws (chain, draw, ...),
    thinned evenly; ties broken at random."""
    ranks = []
    for name, values in truth.items():
        draws = posterior[name].reshape(-1, *posterior[name].shape[2:])
        draws = draws[np.linspace(0, len(draws) - 1, N_DRAWS).astype(int)]
        flat_draws = draws.reshape(N_DRAWS, -1)[:, : np.size(values)]
        flat_truth = np.ravel(values)
        below = (flat_draws < flat_truth).sum(axis=0)
        ties = (flat_draws == flat_truth).sum(axis=0)
        ranks.extend(below + rng.integers(0, ties + 1))
    return ranks


@pytest.fixture(scope="module")
def simulations():
    """[(truth, posterior draws by name)] of N_SIMULATIONS NUTS fits to simulated data."""
    rng = np.random.default_rng(2025)
    fits = []
    while len(fits) < N_SIMULATIONS:
        simulated = simulate(rng)
        if simulated is None:
            continue
        truth, X, y = simulated
        est = DirichletMultinomialNB(random_seed=int(rng.integers(2**31)), **FIT)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an unconverged fit is what SBC would show
            est.fit(X, y)
        posterior = est.idata_["posterior"]
        fits.append((truth, {name: posterior[name].values for name in truth}))
    return fits


def smallest_p_value(fits, rng) -> tuple[float, int]:
    """The Bonferroni-corrected smallest p-value of the parameters' rank uniformity tests
    (chi-square on N_BINS bins), and which parameter has it."""
    ranks = np.array([ranks_of(posterior, truth, rng) for truth, posterior in fits])
    edges = np.linspace(-0.5, N_DRAWS + 0.5, N_BINS + 1)
    p_values = np.array(
        [stats.chisquare(np.histogram(column, bins=edges)[0]).pvalue for column in ranks.T]
    )
    return p_values.min() * len(p_values), int(p_values.argmin())


@pytest.mark.slow  # 50 NUTS fits: about 7 minutes on two loaded cores (see docs/dcm.md)
def test_nuts_posterior_of_the_dcm_is_calibrated(simulations):
    p_value, parameter = smallest_p_value(simulations, np.random.default_rng(0))
    assert p_value > LEVEL, f"parameter {parameter}: corrected p = {p_value:.2g}"


@pytest.mark.slow  # shares the fits above
def test_sbc_fails_a_posterior_whose_concentration_is_a_third_too_large(simulations):
    """The check can fail: the same fits' s draws scaled by 4/3 (a biased posterior)."""
    biased = [
        (truth, {**posterior, "concentration": posterior["concentration"] * 4 / 3})
        for truth, posterior in simulations
    ]
    p_value, _ = smallest_p_value(biased, np.random.default_rng(0))
    assert p_value < LEVEL


@pytest.mark.slow  # 50 more NUTS fits: about 5 minutes on two cores
def test_bayesgen_sbc_calibrates_the_dcm_under_a_prior_of_m_free_of_the_data():
    """The package's own loop (bayesgen.sbc: the family's prior draws and simulator) on the
    same design."""
    rng = np.random.default_rng(7)
    X = rng.multinomial(LENGTH, np.ones(N_WORDS) / N_WORDS, size=N_DOCUMENTS).astype(float)
    y = np.arange(N_DOCUMENTS) % N_CLASSES
    est = DirichletMultinomialNB(random_seed=0, **FIT)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est.fit(X, y)
        result = sbc(
            est,
            n_simulations=N_SIMULATIONS,
            n_draws=N_DRAWS,
            n_bins=N_BINS,
            level=LEVEL,
            random_seed=1,
        )
    assert result.ok, str(result)


def test_a_true_value_above_every_draw_ranks_last_and_below_every_draw_first():
    draws = np.linspace(1.0, 2.0, 2 * N_DRAWS).reshape(2, N_DRAWS, 1) * np.ones(N_CLASSES)
    truth = {"concentration": np.array([5.0, 0.5])}
    ranks = ranks_of({"concentration": draws}, truth, np.random.default_rng(0))
    assert ranks == [N_DRAWS, 0]
