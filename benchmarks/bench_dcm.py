"""The Dirichlet compound multinomial (issue 25): its point fit against scikit-learn's
``MultinomialNB.fit`` on one matrix, and a NUTS fit of 2 classes x 2,000 words.

(a) ``point``: a bursty Zipf bag of words (20 classes x 50,000 words x 20,000 documents by
default, sparse CSR). Each class has Zipf word probabilities with log-normal noise, as in
``benchmarks/bench_closed_form.py``; each document draws ``length / 2`` tokens from its class
and repeats each one 1 + Poisson(1) times, so that a word seen once in a document is likely
seen again there (what the DCM models). Times the DCM's point fit,
``DirichletMultinomialFamily.fit(X, y)`` (the count histograms, then Newton's method for the
posterior mode and for the flat-prior evidence maximiser), its two parts (the statistics
alone, and ``from_statistics``: the two fits), and
``sklearn.naive_bayes.MultinomialNB().fit(X, y)`` interleaved (A B A B ... after a warm-up of
each, which also compiles the numba kernels), so that all see the same machine load; prints
the medians side by side and their ratio (goal: at most 10).

(b) ``nuts``: ``DirichletMultinomialNB`` with NUTS (PyMC, 2 chains on 2 cores, 1,000 tuning
steps + 1,000 draws each) on 2 classes x 2,000 words, 400 bursty documents; prints the wall
time (the model's log density and gradient compiled first, timed apart, plus the fit:
sampling, the MAP by ``find_MAP`` and the pointwise log-likelihood included; goal: at most 3
minutes), NUTS's tree depth and step size, the lowest bulk ESS and the highest R-hat of
(π, s, m), and the divergences.

(c) ``loo``: the DCM's plug-in leave-one-out (the point fit refitted without each document,
``DirichletMultinomialFamily.loo_log_joint``) against one point fit, per-class and pooled
mean, on a bursty corpus of SMS Spam's shape by default (``--loo-docs 5000 --loo-words
1000``, 2 classes): medians of interleaved runs, the cost per document, and the largest
difference from refits from scratch of three documents (the check that the warm starts
converge to the same fit).

Usage::

    .venv/bin/python benchmarks/bench_dcm.py [point|nuts|loo|both] [--docs 20000]
        [--words 50000] [--classes 20] [--repeats 3] [--target-accept 0.9]
        [--loo-docs 5000] [--loo-words 1000]
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.naive_bayes import MultinomialNB

from bayesgen.families.class_prior import CLASS_PRIOR
from bayesgen.families.dcm import FAMILY, prior_of
from bayesgen.maths.dirichlet_multinomial import (
    count_histograms,
    dirichlet_multinomial_log_pmf,
    fit_concentration,
)

GOAL_RATIO = 10.0
GOAL_NUTS_SECONDS = 180.0


def bursty_zipf_bag_of_words(
    n_docs: int,
    n_words: int,
    n_classes: int,
    *,
    mean_length: float = 100.0,
    exponent: float = 1.07,
    perturbation: float = 0.7,
    seed: int = 0,
) -> tuple[sp.csr_array, np.ndarray]:
    """Document-term counts (CSR, float64) and class labels, words repeated in bursts.

    Word w of rank r has base probability ∝ r^(-exponent); each class multiplies these by
    log-normal noise (sd ``perturbation`` on the log scale) and renormalises. A document
    draws Poisson(``mean_length`` / 2) tokens from its class and repeats each 1 + Poisson(1)
    times (mean length ``mean_length``).
    """
    rng = np.random.default_rng(seed)
    base = np.arange(1, n_words + 1, dtype=np.float64) ** -exponent
    y = rng.integers(0, n_classes, size=n_docs)
    draws = rng.poisson(mean_length / 2.0, size=n_docs)
    doc_ids, word_ids = [], []
    for k in range(n_classes):
        probs = base * np.exp(perturbation * rng.standard_normal(n_words))
        probs /= probs.sum()
        docs = np.flatnonzero(y == k)
        doc_ids.append(np.repeat(docs, draws[docs]))
        word_ids.append(rng.choice(n_words, size=int(draws[docs].sum()), p=probs))
    rows, cols = np.concatenate(doc_ids), np.concatenate(word_ids)
    repeats = 1.0 + rng.poisson(1.0, size=rows.size)
    X = sp.coo_array((repeats, (rows, cols)), shape=(n_docs, n_words)).tocsr()
    X.sum_duplicates()
    return X, y


def interleaved_timings(candidates: dict, repeats: int) -> dict[str, list[float]]:
    """Run each candidate once to warm up, then ``repeats`` rounds of all of them in turn."""
    for fit in candidates.values():
        fit()
    times: dict[str, list[float]] = {name: [] for name in candidates}
    for _ in range(repeats):
        for name, fit in candidates.items():
            start = time.perf_counter()
            fit()
            times[name].append(time.perf_counter() - start)
    return times


def bench_point(n_docs: int, n_words: int, n_classes: int, repeats: int) -> float:
    X, y = bursty_zipf_bag_of_words(n_docs, n_words, n_classes)
    print(
        f"(a) point fit: {n_classes} classes x {n_words} words x {n_docs} documents, "
        f"{X.nnz} non-zeros, {X.sum():.0f} tokens"
    )
    fit = FAMILY.fit(X, y)
    stats = FAMILY.sufficient_statistics(X, y)
    print(
        f"    {stats.sizes['word_entry']} (class, word, level) entries, "
        f"{stats.sizes['length_entry']} (class, length) entries; point fit converged: "
        f"{bool(fit.attrs['point_fit_converged'])}, flat-prior MLE converged: "
        f"{bool(fit.attrs['mle_converged'])}; s from {fit['concentration'].values.min():.3g} "
        f"to {fit['concentration'].values.max():.3g}"
    )
    times = interleaved_timings(
        {
            "bayesgen DCM point fit": lambda: FAMILY.fit(X, y),
            "DCM statistics only": lambda: FAMILY.sufficient_statistics(X, y),
            "DCM fits from statistics": lambda: FAMILY.from_statistics(stats),
            "sklearn MultinomialNB.fit": lambda: MultinomialNB().fit(X, y),
        },
        repeats,
    )
    for name, values in times.items():
        print(f"    {name:28s} median {statistics.median(values):8.3f} s  (min {min(values):.3f})")
    dcm_time = statistics.median(times["bayesgen DCM point fit"])
    sklearn_time = statistics.median(times["sklearn MultinomialNB.fit"])
    ratio = dcm_time / sklearn_time
    verdict = "within" if ratio <= GOAL_RATIO else "ABOVE"
    print(
        f"    DCM {dcm_time:.3f} s | sklearn {sklearn_time:.3f} s | ratio {ratio:.2f} "
        f"({verdict} the goal {GOAL_RATIO:g}); load average {os.getloadavg()[0]:.1f}"
    )
    return ratio


def bench_nuts(n_words: int = 2000, n_docs: int = 400, target_accept: float = 0.9) -> float:
    import arviz as az
    from pymc.blocking import DictToArrayBijection

    from bayesgen import DirichletMultinomialNB

    X, y = bursty_zipf_bag_of_words(n_docs, n_words, 2, mean_length=60.0, seed=1)
    print(f"(b) NUTS: 2 classes x {n_words} words x {n_docs} documents, {X.nnz} non-zeros")
    # The function NUTS calls (log density and gradient) compiled first and timed on its own:
    # with an empty PyTensor cache this is the bulk of the compiling a first fit pays (which
    # also compiles find_MAP's log density and the prior draws); the fit then finds it in the
    # cache, and the total below counts both.
    start = time.perf_counter()
    model = FAMILY.pymc_model(FAMILY.fit(X, y))
    log_density = model.logp_dlogp_function(ravel_inputs=True)
    log_density.set_extra_values({})
    start_point = model.initial_point()
    value_vars = model.continuous_value_vars
    log_density(DictToArrayBijection.map({var.name: start_point[var.name] for var in value_vars}))
    compile_time = time.perf_counter() - start
    est = DirichletMultinomialNB(
        draws=1000,
        tune=1000,
        chains=2,
        cores=2,
        random_seed=0,
        progressbar=False,
        target_accept=target_accept,
    )
    start = time.perf_counter()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est.fit(X, y)
    fit_time = time.perf_counter() - start
    wall = compile_time + fit_time
    posterior = est.idata_["posterior"]
    sample_stats = est.idata_["sample_stats"]
    variables = ["class_prob", "concentration", "feature_mean"]
    ess = az.ess(posterior, var_names=variables, method="bulk")
    rhat = az.rhat(posterior, var_names=variables)
    min_ess = min(float(ess[name].min()) for name in variables)
    max_rhat = max(float(rhat[name].max()) for name in variables)
    print(
        f"    wall {wall:.1f} s: compile {compile_time:.1f} s + fit {fit_time:.1f} s (sampling "
        f"{posterior.attrs.get('sampling_time', float('nan')):.1f} s); target_accept "
        f"{target_accept:g}"
    )
    depth = sample_stats["tree_depth"].values
    step_size = sample_stats["step_size"].values[:, 0]
    print(
        f"    tree depth mean {depth.mean():.2f}, max {depth.max()}; step size "
        f"{', '.join(f'{value:.3f}' for value in step_size)}; min bulk ESS {min_ess:.0f}; max "
        f"R-hat {max_rhat:.4f}; divergences {int(sample_stats['diverging'].sum())}; load "
        f"average {os.getloadavg()[0]:.1f}"
    )
    for warning in caught:
        print(f"    warning: {warning.message}")
    verdict = "within" if wall <= GOAL_NUTS_SECONDS else "ABOVE"
    print(f"    {verdict} the goal of {GOAL_NUTS_SECONDS:g} s")
    return wall


def bench_loo(n_docs: int, n_words: int, repeats: int) -> None:
    X, y = bursty_zipf_bag_of_words(n_docs, n_words, 2, mean_length=20.0)
    print(f"(c) plug-in leave-one-out: 2 classes x {n_words} words x {n_docs} documents")
    for prior_mean in ("per_class", "pooled"):
        fit = FAMILY.fit(X, y, prior_mean=prior_mean)
        times = interleaved_timings(
            {
                "point fit": lambda fit_mean=prior_mean: FAMILY.fit(X, y, prior_mean=fit_mean),
                "leave-one-out": lambda fit=fit: FAMILY.loo_log_joint(fit, X, y),
            },
            repeats,
        )
        words = FAMILY.loo_log_joint(fit, X, y) - CLASS_PRIOR.loo_log_prob(fit, y)
        concentration_prior, mean_prior = prior_of(fit)
        worst = 0.0
        for i in (0, n_docs // 2, n_docs - 1):
            keep = np.arange(n_docs) != i
            refit = fit_concentration(  # from scratch, the priors held as the full fit's
                count_histograms(X[keep], y[keep], 2),
                shared_mean=prior_mean == "pooled",
                concentration_prior=concentration_prior,
                mean_prior=mean_prior,
            )
            scratch = dirichlet_multinomial_log_pmf(X[[i]], refit.alpha)[0]
            worst = max(worst, float(np.abs(scratch - words[i]).max()))
        fit_time = statistics.median(times["point fit"])
        loo_time = statistics.median(times["leave-one-out"])
        print(
            f"    m {prior_mean:9s}: point fit {fit_time:.3f} s | leave-one-out {loo_time:.2f} s "
            f"({1e3 * loo_time / n_docs:.2f} ms a document, {loo_time / fit_time:.0f} fits); "
            f"largest difference from refits from scratch {worst:.1e}"
        )
    print(f"    load average {os.getloadavg()[0]:.1f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("part", nargs="?", choices=("point", "nuts", "loo", "both"), default="both")
    parser.add_argument("--docs", type=int, default=20_000)
    parser.add_argument("--words", type=int, default=50_000)
    parser.add_argument("--classes", type=int, default=20)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--target-accept", type=float, default=0.9, help="NUTS (b) only")
    parser.add_argument("--loo-docs", type=int, default=5_000, help="(c) only")
    parser.add_argument("--loo-words", type=int, default=1_000, help="(c) only")
    args = parser.parse_args(argv)
    print(
        f"Python {platform.python_version()}, scikit-learn {sklearn.__version__}, "
        f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}"
    )
    if args.part in ("point", "both"):
        bench_point(args.docs, args.words, args.classes, args.repeats)
    if args.part in ("nuts", "both"):
        bench_nuts(target_accept=args.target_accept)
    if args.part == "loo":
        bench_loo(args.loo_docs, args.loo_words, args.repeats)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
