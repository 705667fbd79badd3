"""Draw the documentation gallery: python make_gallery.py OUT_DIR.

Called by ``docs/conf.py`` at the start of every build. Every model is fitted with
``inference="conjugate"`` and ``compute_map=False``: exact draws from the conjugate posterior
and no PyTensor compilation, so the whole gallery takes seconds. The figures come from the
package's own plot functions (:mod:`bayesgen.plotting.plots`,
:func:`bayesgen.checks.sweep.plot_lambda_sweep`),
so the gallery shows what users get. Two figures that illustrate the maths page are drawn here
with matplotlib.

Each ``plot_*`` function writes one PNG named after it (without the ``plot_`` prefix).
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from functools import cache
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

import bayesgen
from bayesgen import closed_form as cf
from bayesgen.input.data import vectorize_text
from bayesgen.plotting import plots
from bayesgen.plotting import workflow as plots_workflow

# The module, not the function of the same name that ``bayesgen`` exports lazily.
sweep_module = importlib.import_module("bayesgen.checks.sweep")

SEED = 0
DPI = 110

# Seed 000 of the lecture notes: four e-mails over the words a, b, c; the first and last are spam.
EMAILS = [["a", "b"], ["b", "a"], ["a", "c", "b"], ["c", "c", "c"]]
LABELS = ["spam", "ham", "ham", "spam"]


def _fit(estimator, X, y):
    return estimator.set_params(
        inference="conjugate", compute_map=False, random_seed=SEED, draws=1000, chains=2
    ).fit(X, y)


def _save(plot, path: Path) -> None:
    """Save an ArviZ PlotCollection/PlotMatrix or a matplotlib Figure, then close it."""
    figure = plot if isinstance(plot, matplotlib.figure.Figure) else plot.viz["figure"].item()
    # Written beside the target and renamed, so that a build running at the same time (the
    # docs test builds too) never copies a half-written PNG.
    partial = path.with_name(f".{path.stem}.{os.getpid()}.png")
    figure.savefig(partial, dpi=DPI, bbox_inches="tight")
    plt.close(figure)
    os.replace(partial, path)


# -- Data and fits, each made once ---------------------------------------------------------------


@cache
def seed_counts(binary: bool = False) -> pd.DataFrame:
    X, vectorizer = vectorize_text(EMAILS, binary=binary)
    return pd.DataFrame(X.toarray(), columns=vectorizer.get_feature_names_out())


@cache
def seed_multinomial():
    return _fit(bayesgen.MultinomialNB(alpha=1.0), seed_counts(), LABELS)


@cache
def seed_bernoulli():
    return _fit(bayesgen.BernoulliNB(alpha=1.0), seed_counts(binary=True), LABELS)


@cache
def toy_spam():
    from bayesgen.input.datasets import load_toy_spam

    texts, labels = load_toy_spam()
    counts, vectorizer = vectorize_text(texts)
    X = pd.DataFrame(counts.toarray(), columns=vectorizer.get_feature_names_out())
    return _fit(bayesgen.MultinomialNB(alpha=1.0), X, labels)


@cache
def digits_split():
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    digits = load_digits()
    return train_test_split(
        digits.data, digits.target, test_size=0.25, random_state=SEED, stratify=digits.target
    )


@cache
def digits_multinomial(alpha: float = 1.0):
    X_train, _, y_train, _ = digits_split()
    return _fit(bayesgen.MultinomialNB(alpha=alpha), X_train, y_train)


@cache
def iris_two_classes():
    from sklearn.datasets import load_iris

    iris = load_iris(as_frame=True)
    keep = iris.target > 0  # versicolor vs virginica: the two classes that overlap
    X = iris.data.loc[keep, ["sepal length (cm)", "petal length (cm)"]]
    X.columns = ["sepal_length", "petal_length"]
    y = iris.target_names[iris.target[keep]]
    return X, y


@cache
def iris_gda():
    X, y = iris_two_classes()
    return _fit(bayesgen.GaussianDiscriminantAnalysis(), X, y)


# -- bayesgen.plotting.plots / bayesgen.checks.sweep figures ---------------------------------------


def plot_posterior_vs_closed_form(out: Path) -> None:
    _save(plots.plot_posterior_vs_closed_form(seed_multinomial()), out)


def plot_bernoulli_posterior_vs_closed_form(out: Path) -> None:
    _save(plots.plot_posterior_vs_closed_form(seed_bernoulli(), var_names=["feature_prob"]), out)


def plot_prior_posterior(out: Path) -> None:
    _save(plots.plot_prior_posterior(seed_multinomial(), var_names=["feature_prob"]), out)


def plot_lambda_sweep(out: Path) -> None:
    sweep_table = sweep_module.lambda_sweep(
        seed_counts(), LABELS, lambdas=(0.1, 0.3, 1, 3, 10), compute_map=False, random_seed=SEED
    )
    _save(sweep_module.plot_lambda_sweep(sweep_table, max_parameters=6), out)


def plot_top_features(out: Path) -> None:
    _save(plots.plot_top_features(toy_spam(), k=10), out)


def plot_calibration(out: Path) -> None:
    _, X_test, _, y_test = digits_split()
    _save(plots.plot_calibration(digits_multinomial(), X_test, y_test), out)


def plot_predictive_intervals(out: Path) -> None:
    _, X_test, _, y_test = digits_split()
    _save(plots.plot_predictive_intervals(digits_multinomial(), X_test, y_test), out)


def plot_gda_trace(out: Path) -> None:
    _save(plots.plot_trace(iris_gda(), var_names=["mu"], compact=False), out)


def plot_gda_mu_pair(out: Path) -> None:
    _save(plots.plot_mu_pair(iris_gda()), out)


def plot_gda_decision_boundary(out: Path) -> None:
    X, y = iris_two_classes()
    _save(plots.plot_decision_boundary(iris_gda(), X, y, n_boundaries=60), out)


# -- bayesgen.plotting.workflow: the model against its own data ------------------------------------


def plot_ppc(out: Path) -> None:
    # 40 simulated data sets of the 1,347 training digits are enough to see the gap.
    _save(plots_workflow.plot_ppc(digits_multinomial(), draws=40), out)


def plot_gda_ppc(out: Path) -> None:
    _save(plots_workflow.plot_ppc(iris_gda()), out)


def plot_loo(out: Path) -> None:
    _save(plots_workflow.plot_loo(toy_spam()), out)


def plot_gda_loo(out: Path) -> None:
    _save(plots_workflow.plot_loo(iris_gda()), out)


# -- bayesgen.sbc: the inference against simulations from the prior -----------------------------


def plot_sbc(out: Path) -> None:
    # 100 simulated toy corpora (50 messages, 230 words), each fitted exactly: 6-8 s.
    _save(bayesgen.sbc(toy_spam(), n_simulations=100, random_seed=SEED).plot(), out)


def plot_sbc_mismatch(out: Path) -> None:
    result = bayesgen.sbc(toy_spam(), n_simulations=100, random_seed=SEED, prior_alpha=1 / 25)
    _save(result.plot(), out)


# -- Figures for the maths page (matplotlib) -----------------------------------------------------


def plot_posterior_mean_vs_add_lambda(out: Path) -> None:
    """Digits as counts: every posterior-mean pixel probability against its add-λ value."""
    figure, axes = plt.subplots(1, 2, figsize=(9, 4), layout="constrained")
    for ax, alpha in zip(axes, (1.0, 0.1), strict=True):
        clf = digits_multinomial(alpha)
        closed = clf.closed_form_["feature_prob"].values.ravel()
        posterior = clf.posterior_mean()["feature_prob"].values.ravel()
        ax.plot(closed, posterior, ".", markersize=3, alpha=0.6)
        top = max(closed.max(), posterior.max()) * 1.05
        ax.plot([0, top], [0, top], color="0.5", linewidth=0.8, label="y = x")
        ax.set(
            xlabel="add-λ closed form (N_kw + λ) / (N_k + Vλ)",
            ylabel="posterior mean (2,000 draws)",
            title=f"λ = {alpha:g}: max |difference| {np.abs(posterior - closed).max():.1e}",
        )
        ax.legend(loc="upper left")
    figure.suptitle("Multinomial NB on the digits (640 pixel probabilities)")
    _save(figure, out)


def plot_predictive_sweep(out: Path) -> None:
    """P(y = spam | x) as λ goes from 10⁻³ to 10: add-λ plug-in and exact predictive."""
    X = seed_counts()
    queries = {'"b c"': [0, 1, 1], '"b c c"': [0, 1, 2]}
    lambdas = np.logspace(-3, 1, 60)
    figure, ax = plt.subplots(figsize=(6.5, 4), layout="constrained")
    for (text, counts), color in zip(queries.items(), ("C0", "C1"), strict=True):
        query = pd.DataFrame([counts], columns=X.columns)
        plug_in, predictive = [], []
        for lam in lambdas:
            est = cf.multinomial_nb(X, LABELS, alpha=lam, class_alpha=lam)
            plug_in.append(cf.predict_proba(est, query)[0, 1])
            predictive.append(cf.posterior_predictive_proba(est, query)[0, 1])
        mle = cf.multinomial_nb(X, LABELS, alpha=0, class_alpha=0)
        ax.semilogx(lambdas, plug_in, color=color, label=f"{text}: add-λ plug-in")
        ax.semilogx(lambdas, predictive, "--", color=color, label=f"{text}: exact predictive")
        ax.plot(lambdas[0], cf.predict_proba(mle, query)[0, 1], "o", color=color)
    ax.axhline(0.5, color="0.8", linewidth=0.8)
    ax.set(
        xlabel="λ (prior concentration, also used for the class prior)",
        ylabel="P(y = spam | x)",
        title="Seed 000 e-mails; dots: MLE (λ → 0)",
    )
    ax.legend(loc="upper right", fontsize="small")
    _save(figure, out)


PLOTS = [
    plot_posterior_vs_closed_form,
    plot_bernoulli_posterior_vs_closed_form,
    plot_prior_posterior,
    plot_lambda_sweep,
    plot_posterior_mean_vs_add_lambda,
    plot_predictive_sweep,
    plot_top_features,
    plot_calibration,
    plot_predictive_intervals,
    plot_gda_trace,
    plot_gda_mu_pair,
    plot_gda_decision_boundary,
    plot_ppc,
    plot_gda_ppc,
    plot_loo,
    plot_gda_loo,
    plot_sbc,
    plot_sbc_mismatch,
]


def main(out_dir: str) -> None:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stale in out.glob("*.png"):  # a renamed figure must not linger
        stale.unlink()
    for plot in PLOTS:
        start = time.perf_counter()
        name = plot.__name__.removeprefix("plot_")
        plot(out / f"{name}.png")
        print(f"  {name}.png ({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else str(Path(__file__).parents[1] / "_static/gallery"))
