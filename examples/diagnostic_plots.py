"""Produce ArviZ diagnostic plots for a NUTS fit of Bernoulli naive Bayes, and an HTML report.

The model: Bernoulli naive Bayes on eight binarized pixels of scikit-learn's digits 0, 1 and
2 (70% of them; the other 30% are the report's held-out rows). Writes trace.png, rank.png,
ess.png and energy.png, and report/index.html, under --out. The first NUTS fit compiles the
model (about a minute); later runs reuse the compiled code.

Run: python examples/diagnostic_plots.py [--draws 1000] [--out reports/example-diagnostics]
"""

import argparse
from pathlib import Path

from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

import bayesgen
from bayesgen.plotting import plots


def main(draws: int, out: Path) -> None:
    X, y = load_digits(return_X_y=True)
    keep = y < 3  # digits 0, 1, 2
    X_train, X_test, y_train, y_test = train_test_split(
        X[keep][:, 20:28], y[keep], test_size=0.3, random_state=0
    )
    clf = bayesgen.BernoulliNB(binarize=7.5, draws=draws, tune=draws, random_seed=0)
    clf.fit(X_train, y_train)
    out.mkdir(parents=True, exist_ok=True)
    plots.plot_trace(clf).savefig(out / "trace.png")
    plots.plot_rank(clf).savefig(out / "rank.png")
    plots.plot_ess(clf).savefig(out / "ess.png")
    plots.plot_energy(clf).savefig(out / "energy.png")
    index = bayesgen.report(clf, out / "report", X_test=X_test, y_test=y_test)
    print(f"plots in {out}; report at {index}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--draws",
        type=int,
        default=1000,
        help="NUTS draws per chain, and as many tuning steps (default: %(default)s)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=Path("reports/example-diagnostics"),
        help="folder for the PNG plots and the report's folder, created if missing "
        "(default: %(default)s)",
    )
    options = parser.parse_args()
    main(options.draws, options.out)
