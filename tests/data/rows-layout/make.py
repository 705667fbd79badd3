"""Make the model files of this folder: the layout that bayesgen wrote before issue 20 (the
log-likelihood as ``row``; the rows' sparse internals, the statistics and integer ``y`` in
``observed_data``; simulated rows and statistics as ``posterior_predictive``).

Run from the repository root at commit ef3946f (the last commit with that layout), not with
the current code: ``python tests/data/rows-layout/make.py``.
"""

from pathlib import Path

import numpy as np
import scipy.sparse as sp

HERE = Path(__file__).parent


def main() -> None:
    import sys

    sys.path.insert(0, str(HERE.parents[1]))
    from conftest import DATA, make_estimator

    common = {"inference": "conjugate", "draws": 40, "chains": 2, "prior_draws": 10}
    common |= {"random_seed": 5, "compute_map": False}
    X, y = DATA["multinomial_nb"]()
    X = sp.csr_array(X.to_numpy())
    # Drawn at fit (idata_ read), with a posterior predictive group added: sparse rows.
    est = make_estimator("multinomial_nb", **common).fit(X, y)
    est.sample_posterior_predictive(random_seed=1, draws=6)
    est.save(HERE / "multinomial-drawn.nc")
    np.save(HERE / "multinomial-drawn-proba.npy", est.predict_proba(X))
    # Never drawn: the file holds the rows but no draws.
    lazy = make_estimator("multinomial_nb", **common).fit(X, y)
    lazy.save(HERE / "multinomial-lazy.nc")
    np.save(HERE / "multinomial-lazy-proba.npy", lazy.predict_proba(X))
    # Dense rows with weights.
    X, y = DATA["gda"]()
    weights = np.where(np.arange(len(y)) % 5 == 0, 2.0, 1.0)
    gda = make_estimator("gda", **common).fit(X, y, sample_weight=weights)
    gda.idata_  # noqa: B018 - draw now, so that the file holds the draws and rows
    gda.save(HERE / "gda-weighted.nc")
    np.save(HERE / "gda-weighted-proba.npy", gda.predict_proba(X))


if __name__ == "__main__":
    main()
