"""What storing the training rows and their pointwise log-likelihood adds to a fit.

Since issue 10, ``fit`` also keeps the training rows (``y`` in ``observed_data``, X in
``constant_data``) and builds the ``log_likelihood`` group (one value per row and draw, for
``az.loo``). This benchmark times conjugate fits of the SMS Spam collection with and without
that step, interleaved in one process so that the machine's noise hits both alike, and
reports the ratio of medians.

Run: python benchmarks/bench_observed.py [--repeats 5] [--data PATH]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from sklearn.feature_extraction.text import CountVectorizer

import bayesgen
from bayesgen.estimators.classifier import GenerativeClassifier
from bayesgen.input.datasets import load_sms_spam

DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "sms_spam" / "SMSSpamCollection.tsv"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    texts, labels = load_sms_spam(args.data)
    X = CountVectorizer().fit_transform(texts)
    with_rows = GenerativeClassifier._add_observed
    options = {"inference": "conjugate", "compute_map": False, "random_seed": 0}
    print(f"SMS Spam: {X.shape[0]} messages x {X.shape[1]} words, 2 chains x 1000 draws")
    for name, cls, extra in (
        ("multinomial", bayesgen.MultinomialNB, {}),
        ("bernoulli", bayesgen.BernoulliNB, {"binarize": 0.0}),
    ):
        times = {"with": [], "without": []}
        for _ in range(args.repeats):
            for mode in ("with", "without"):
                GenerativeClassifier._add_observed = (
                    with_rows if mode == "with" else lambda *a, **k: None
                )
                start = time.perf_counter()
                cls(**options, **extra).fit(X, labels)
                times[mode].append(time.perf_counter() - start)
        GenerativeClassifier._add_observed = with_rows
        a, b = statistics.median(times["with"]), statistics.median(times["without"])
        print(
            f"{name}: fit {a:.2f} s with rows and log-likelihood, {b:.2f} s without: {a / b:.2f}x"
        )


if __name__ == "__main__":
    main()
