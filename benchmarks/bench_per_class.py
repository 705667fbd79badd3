"""One λ per class against one λ for all: when does the evidence's choice predict better?

``alpha="evidence_per_class"`` gives each class its own λ_k where the log Bayes factor of
one λ per class against one for all
(:func:`bayesgen.inference.smoothing.per_class_log_bayes_factor`)
is positive. The evidence scores how well each class's features are modelled, not how well
the classes are told apart, so this benchmark measures both on held-out rows:

* synthetic word counts whose classes differ in concentration: class k's word distribution
  is θ_k ~ Dirichlet(c_k V m) around one Zipf law m over V = 2,000 words, documents of 50
  tokens; the classes' c_k are equal or a hundredfold apart, with 10, 30 or 100 training
  documents per class and 500 held out, over ``--seeds`` data sets;
* SMS Spam (a stratified 75/25 split) and the 20-class Zipf corpus of
  ``bench_smoothing.py``, with the uniform and the pooled prior mean.

For each: the held-out log loss of the exact posterior predictive with ``alpha="evidence"``
and with ``alpha="evidence_per_class"``, the log Bayes factor, and the time of the two fits
(medians of ``--repeats``, interleaved in one process).

Run: python benchmarks/bench_per_class.py [--seeds 10] [--repeats 3] [--quick]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from datetime import date

import numpy as np
from bench_smoothing import DATA, sms_spam, zipf
from sklearn.metrics import log_loss

import bayesgen
from bayesgen.inference.smoothing import EvidenceBoundaryWarning

#: Vocabulary, document length and held-out documents per class of the synthetic data.
VOCABULARY, LENGTH, HELD_OUT = 2_000, 50, 500
#: The classes' concentrations c_k (θ_k ~ Dirichlet(c_k V m)).
CONCENTRATIONS = {"equal": (1.0, 1.0), "100-fold apart": (10.0, 0.1)}
ROWS_PER_CLASS = (10, 30, 100)


def synthetic(concentrations, rows: int, seed: int):
    """Training and held-out counts of classes θ_k ~ Dirichlet(c_k V m), m a Zipf law."""
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, VOCABULARY + 1) ** 1.1
    base /= base.sum()
    thetas = [rng.dirichlet(c * VOCABULARY * base) for c in concentrations]

    def draw(per_class: int):
        X = np.vstack([rng.multinomial(LENGTH, theta, size=per_class) for theta in thetas])
        return X, np.repeat(np.arange(len(thetas)), per_class)

    X, y = draw(rows)
    X_test, y_test = draw(HELD_OUT)
    return X, X_test, y, y_test


def compare(X, X_test, y, y_test, *, prior_mean: str = "uniform", repeats: int = 1) -> dict:
    """Held-out log loss of one λ and of λ per class (where supported), and their fit times."""
    result, times = {}, {"evidence": [], "evidence_per_class": []}
    for repeat in range(repeats):
        for alpha in times:
            est = bayesgen.MultinomialNB(
                alpha=alpha,
                prior_mean=prior_mean,
                inference="conjugate",
                compute_map=False,
                prior_draws=0,
                draws=10,
                chains=1,
                random_seed=0,
            )
            start = time.perf_counter()
            est.fit(X, y)
            times[alpha].append(time.perf_counter() - start)
            if repeat == 0:
                proba = est.posterior_predictive_proba(X_test)
                result[alpha] = log_loss(y_test, proba, labels=est.classes_)
                result[f"{alpha}_alpha"] = np.atleast_1d(est.alpha_)
        result["log_bf"] = est.closed_form_.attrs["alpha_log_bayes_factor"]
    return result | {f"{name}_time": statistics.median(values) for name, values in times.items()}


def synthetic_table(seeds: int) -> str:
    lines = [
        "| classes' c_k | documents per class | log loss, one λ | log loss, λ per class "
        "(where supported) | per class chosen | better | mean log Bayes factor |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, concentrations in CONCENTRATIONS.items():
        for rows in ROWS_PER_CLASS:
            runs = [compare(*synthetic(concentrations, rows, seed)) for seed in range(seeds)]
            one = np.mean([r["evidence"] for r in runs])
            own = np.mean([r["evidence_per_class"] for r in runs])
            chosen = sum(r["log_bf"] > 0 for r in runs)
            better = sum(r["evidence_per_class"] < r["evidence"] for r in runs)
            lines.append(
                f"| {name} {concentrations} | {rows} | {one:.4f} | {own:.4f} | "
                f"{chosen} of {seeds} | {better} of {seeds} | "
                f"{np.mean([r['log_bf'] for r in runs]):.1f} |"
            )
            print(lines[-1], flush=True)
    return "\n".join(lines)


def real_table(quick: bool, repeats: int) -> str:
    lines = [
        "| data | prior mean | λ (one) | λ per class (range) | log Bayes factor | log loss, one λ "
        "| log loss, λ per class | fit time, one λ (s) | fit time, per class (s) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    datasets = [("SMS Spam", lambda: sms_spam(DATA))]
    datasets.append(("Zipf 20 classes", lambda: zipf("quick" if quick else "full")))
    for name, load in datasets:
        X, X_test, y, y_test = load()
        for prior_mean in ("uniform", "pooled"):
            r = compare(X, X_test, y, y_test, prior_mean=prior_mean, repeats=repeats)
            own = r["evidence_per_class_alpha"]
            lines.append(
                f"| {name} | {prior_mean} | {r['evidence_alpha'][0]:.3g} | "
                f"{own.min():.3g}–{own.max():.3g} | {r['log_bf']:.1f} | {r['evidence']:.4f} | "
                f"{r['evidence_per_class']:.4f} | {r['evidence_time']:.3f} | "
                f"{r['evidence_per_class_time']:.3f} |"
            )
            print(lines[-1], flush=True)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10, help="synthetic data sets per cell")
    parser.add_argument("--repeats", type=int, default=3, help="timed fits of the real data")
    parser.add_argument("--quick", action="store_true", help="the 2,000 x 5,000 Zipf corpus")
    args = parser.parse_args()
    with warnings.catch_warnings():
        # A class whose evidence peaks at a bound is reported by the table, not by warnings.
        warnings.simplefilter("ignore", EvidenceBoundaryWarning)
        synthetic_rows = synthetic_table(args.seeds)
        real_rows = real_table(args.quick, args.repeats)
    print(f"\n{date.today().isoformat()}, synthetic: {args.seeds} data sets a row\n")
    print(synthetic_rows)
    print(f"\nreal data, medians of {args.repeats} fits\n")
    print(real_rows)


if __name__ == "__main__":
    main()
