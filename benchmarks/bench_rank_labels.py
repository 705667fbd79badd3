"""How often does a correct fit's rank plot say "chains differ"? Per panel against family-wise.

Fits exact conjugate posteriors (right by construction, their chains exchangeable) for many
seeds, and for the panels a report's rank plot shows (:func:`bayesgen.plotting.plots.plot_rank`
with its defaults: 4 features, 250 draws per chain) counts the figures that

* ``per panel at 0.01``: ArviZ's multi-chain rank uniformity test fails in some panel at
  p < 0.01, the rule the plot labelled by before (ArviZ's default);
* ``plot_rank now``: carry a red "chains differ" label, drawn by the plot itself (each panel
  tested at ``RANK_FAMILY_RATE`` over the number of panels).

Run (from the project root)::

    .venv/bin/python benchmarks/bench_rank_labels.py --seeds 200
"""

from __future__ import annotations

import argparse
import time
from datetime import date

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # after the backend is chosen
import numpy as np
import xarray as xr
from sklearn.datasets import load_digits

from bayesgen import MultinomialNB
from bayesgen.plotting import plots
from bayesgen.plotting.report import RANK_MAX_DRAWS


def panel_p_values(est) -> np.ndarray:
    """ArviZ's test for every panel of the report's rank plot, on the draws it shows."""
    tree = plots.plot_tree(est, None, 4)
    step = plots.rank_thinning(est, RANK_MAX_DRAWS)
    posterior = tree["posterior"].to_dataset().isel(draw=slice(None, None, step))
    p_values = plots._rank_p_values(posterior)  # the plot's own call of ArviZ's test
    return np.concatenate([np.ravel(p_values[name].values) for name in p_values.data_vars])


def labelled(est) -> bool:
    """Whether the rank plot, as drawn, labels some panel "chains differ"."""
    figure = plots.plot_rank(est, max_draws=RANK_MAX_DRAWS).viz["figure"].item()
    try:
        return any(t.get_gid() == "rank test failed" for ax in figure.axes for t in ax.texts)
    finally:
        plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=200)
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain")
    parser.add_argument("--chains", type=int, default=4)
    args = parser.parse_args()

    digits = load_digits()
    X, y = digits.data, digits.target
    print(
        f"{date.today()}  digits MultinomialNB, inference='conjugate', {args.chains} chains × "
        f"{args.draws} draws, {args.seeds} seeds; rank plots of 4 features (the report's)"
    )
    per_panel = family = 0
    panels = 0
    start = time.perf_counter()
    for seed in range(args.seeds):
        est = MultinomialNB(
            inference="conjugate",
            draws=args.draws,
            chains=args.chains,
            random_seed=seed,
            compute_map=False,
            prior_draws=0,
        ).fit(X, y)
        p_values = panel_p_values(est)
        panels = p_values.size
        per_panel += bool((p_values < 0.01).any())
        family += labelled(est)
    rate = plots.RANK_FAMILY_RATE
    print(f"{panels} panels per figure; {time.perf_counter() - start:.0f} s")
    print(
        xr.Dataset(
            {
                "figures labelled": ("rule", [per_panel, family]),
                "share": ("rule", [per_panel / args.seeds, family / args.seeds]),
                "expected": ("rule", [1 - 0.99**panels, rate]),
            },
            coords={"rule": ["per panel at 0.01", f"plot_rank now ({rate:g} / {panels})"]},
        )
        .to_dataframe()
        .to_string(float_format=lambda v: f"{v:.3f}")
    )


if __name__ == "__main__":
    main()
