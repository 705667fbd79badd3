"""Closed-form multinomial naive Bayes fit vs scikit-learn's MultinomialNB, on one matrix.

Builds a synthetic bag-of-words matrix (Zipf-distributed words, per-class perturbations,
Poisson document lengths), then times ``bayesgen.closed_form.multinomial_nb(X, y)`` and
``sklearn.naive_bayes.MultinomialNB().fit(X, y)`` interleaved in one run (A B A B ... after a
warm-up of each), so that both see the same machine load. The goal is a median ratio
ours / scikit-learn of at most 1.5.

Usage::

    .venv/bin/python benchmarks/bench_closed_form.py [--docs 20000] [--words 50000]
        [--classes 20] [--repeats 7]
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time

import numpy as np
import scipy.sparse as sp
import sklearn
from sklearn.naive_bayes import MultinomialNB

from bayesgen.closed_form import multinomial_nb

GOAL_RATIO = 1.5


def zipf_bag_of_words(
    n_docs: int,
    n_words: int,
    n_classes: int,
    *,
    mean_length: float = 100.0,
    exponent: float = 1.07,
    perturbation: float = 0.7,
    seed: int = 0,
) -> tuple[sp.csr_array, np.ndarray]:
    """Document-term counts (CSR, float64) and class labels.

    Word w of rank r has base probability ∝ r^(-exponent); each class multiplies these by
    log-normal noise (sd ``perturbation`` on the log scale) and renormalises. Document lengths
    are Poisson(``mean_length``); tokens are drawn from the document's class distribution.
    """
    rng = np.random.default_rng(seed)
    base = np.arange(1, n_words + 1, dtype=np.float64) ** -exponent
    y = rng.integers(0, n_classes, size=n_docs)
    lengths = rng.poisson(mean_length, size=n_docs)
    doc_ids, word_ids = [], []
    for k in range(n_classes):
        probs = base * np.exp(perturbation * rng.standard_normal(n_words))
        probs /= probs.sum()
        docs = np.flatnonzero(y == k)
        n_tokens = int(lengths[docs].sum())
        doc_ids.append(np.repeat(docs, lengths[docs]))
        word_ids.append(rng.choice(n_words, size=n_tokens, p=probs))
    rows, cols = np.concatenate(doc_ids), np.concatenate(word_ids)
    X = sp.coo_array((np.ones(rows.size), (rows, cols)), shape=(n_docs, n_words)).tocsr()
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=20_000, help="documents (rows)")
    parser.add_argument("--words", type=int, default=50_000, help="vocabulary size (columns)")
    parser.add_argument("--classes", type=int, default=20, help="number of classes")
    parser.add_argument("--repeats", type=int, default=7, help="timed rounds after a warm-up")
    parser.add_argument("--seed", type=int, default=0, help="random seed for the matrix")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    X, y = zipf_bag_of_words(args.docs, args.words, args.classes, seed=args.seed)
    built = time.perf_counter() - start
    print(
        f"matrix: {X.shape[0]} docs x {X.shape[1]} words, {args.classes} classes, "
        f"{X.nnz} non-zeros, {X.sum() / X.shape[0]:.1f} tokens/doc (built in {built:.1f} s)"
    )
    print(
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"scikit-learn {sklearn.__version__}; {args.repeats} interleaved rounds after a warm-up"
    )

    # Same estimates first: the timing compares like with like.
    ours = multinomial_nb(X, y, class_alpha=0)
    ref = MultinomialNB().fit(X, y)
    np.testing.assert_allclose(np.log(ours["feature_prob"].values), ref.feature_log_prob_)

    times = interleaved_timings(
        {
            "bayesgen multinomial_nb": lambda: multinomial_nb(X, y),
            "sklearn MultinomialNB.fit": lambda: MultinomialNB().fit(X, y),
        },
        args.repeats,
    )
    (name_a, t_a), (name_b, t_b) = times.items()
    ratios = [a / b for a, b in zip(t_a, t_b, strict=True)]
    for name, values in times.items():
        print(
            f"{name:<28} median {statistics.median(values) * 1e3:8.1f} ms "
            f"(min {min(values) * 1e3:.1f}, max {max(values) * 1e3:.1f})"
        )
    ratio = statistics.median(ratios)
    verdict = "meets" if ratio <= GOAL_RATIO else "MISSES"
    print(
        f"median ratio {name_a.split()[0]}/{name_b.split()[0]}: {ratio:.2f} "
        f"(pairwise {min(ratios):.2f}..{max(ratios):.2f}); {verdict} the goal <= {GOAL_RATIO}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
