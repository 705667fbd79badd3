"""Simulation-based calibration of the semi-supervised posterior sampled by NUTS (the hidden
labels summed out) for Bernoulli naive Bayes.

The simulations, the ranked parameters and the uniformity test are those of
tests/test_semi_supervised_sbc.py (the Gibbs sampler's check), imported from it: θ from the
fit's own prior, 30 labels and rows, 24 labels hidden completely at random, redrawn until the
6 labelled rows hold both classes; the rank of each true parameter among 99 posterior draws is
uniform on 0..99 for a correct posterior, which a chi-square test of 10 bins checks at level
0.001. The 99 draws are every second of two NUTS chains of 99 draws after 200 tuning steps.

32 simulations, not the Gibbs check's 100: each NUTS fit builds and compiles its PyMC graph
(about 20 s a fit on a loaded 2-core machine, sampling itself well under a second), so 32
take about 11 minutes. The bins then expect 3.2 ranks each, enough for a gross miscalibration,
not for a subtle one. Bernoulli naive Bayes only, the cheapest model.

No control here: the conjugate posterior at the EM's completed expected statistics (too
narrow), ranked on the same 32 simulations, was not rejected at level 0.001 (one run: p =
0.029, 0.043, 0.163, where the NUTS posterior gave 0.663, 0.267, 0.845), so this check shows
only a grosser miscalibration than that one. The Gibbs check's 100 simulations do reject it
(tests/test_semi_supervised_sbc.py); NUTS needs a compiled graph reused across fits to afford
as many.
"""

import warnings

import numpy as np
import pytest
from test_semi_supervised_sbc import LEVEL, MODELS, N_DRAWS, simulate, uniformity_p_values

MODEL = "bernoulli"
N_SIMULATIONS = 32
#: Every second draw of the two chains put end to end: 2 × 99 draws → 99, as the bins need.
THIN = 2
NUTS = {
    "inference": "nuts",
    "draws": N_DRAWS,
    "tune": 200,
    "chains": 2,
    "cores": 1,
    "progressbar": False,
    "prior_draws": 0,
}


def ranked_draws(est) -> np.ndarray:
    """The draws of π_0 and the model's other ranked cells over all chains, thinned, shape
    (N_DRAWS, parameters)."""
    posterior = est.idata_["posterior"]
    cells = [("class_prob", (0,)), *MODELS[MODEL][2]]
    draws = []
    for name, index in cells:
        values = posterior[name].values
        all_chains = values.reshape(-1, *values.shape[2:])
        draws.append(all_chains[(slice(None), *index)])
    return np.stack(draws, axis=1)[::THIN]


def nuts_ranks() -> np.ndarray:
    """Ranks of the truth among the NUTS posterior's draws, one row per simulation."""
    rng = np.random.default_rng(0)
    make = MODELS[MODEL][1]
    found = []
    for _ in range(N_SIMULATIONS):
        truth, X, hidden = simulate(MODEL, rng)
        seed = int(rng.integers(2**31))
        with warnings.catch_warnings():
            # Few draws by design: the warnings that compare() would want more are expected.
            warnings.simplefilter("ignore", UserWarning)
            nuts = make(random_seed=seed, **NUTS).fit(X, hidden)
        assert nuts.closed_form_.attrs["semi_supervised_posterior"] == "nuts"
        draws = ranked_draws(nuts)
        assert draws.shape[0] == N_DRAWS
        found.append((draws < truth).sum(axis=0))
    return np.array(found)


@pytest.mark.slow(reason="32 NUTS fits, each compiling its graph: about 11 minutes")
def test_the_nuts_posterior_of_hidden_labels_is_calibrated(record_property):
    p_values = uniformity_p_values(nuts_ranks())
    record_property("p_values", p_values.round(4).tolist())
    assert np.all(p_values > LEVEL), p_values
