"""Posterior predictive checks of the two event models on the SMS Spam collection.

Simulates the messages again from each fitted model (same labels, same lengths for the
multinomial model) and compares one statistic of the simulated data sets with the real one:

* multinomial: distinct words per message. A multinomial draws every token independently,
  so it repeats words less than people do (burstiness): real messages have fewer distinct
  words than the simulated ones.
* Bernoulli: words present per message. Add-λ with λ = 1 gives every one of the thousands of
  absent words a little probability, which adds up to words the messages do not have.

Run: python examples/sms_predictive_checks.py [--data PATH] [--draws 100]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

import bayesgen
from bayesgen.datasets import load_sms_spam

DEFAULT_DATA = (
    Path(__file__).resolve().parents[1].parent
    / "shared"
    / "data"
    / "sms_spam"
    / "SMSSpamCollection.tsv"
)


def check(name: str, est, statistic: str, draws: int) -> None:
    """Print the observed mean of ``statistic`` against its posterior predictive spread."""
    tree = est.sample_posterior_predictive(random_seed=1, draws=draws, keep_rows=False)
    observed = tree["observed_data"][statistic].values.mean()
    simulated = tree["posterior_predictive"][statistic].mean("obs").values.ravel()
    low, high = np.quantile(simulated, [0.03, 0.97])
    share = np.mean(simulated > observed)
    print(
        f"{name}: {statistic} per message, observed mean {observed:.2f}; simulated "
        f"{simulated.mean():.2f} (94% interval {low:.2f} to {high:.2f}); "
        f"P(simulated > observed) = {share:.2f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--draws", type=int, default=100)
    args = parser.parse_args()
    start = time.perf_counter()
    texts, labels = load_sms_spam(args.data)
    X = CountVectorizer().fit_transform(texts)
    common = {"inference": "conjugate", "compute_map": False, "random_seed": 0, "draws": 500}
    multinomial = bayesgen.MultinomialNB(**common).fit(X, labels)
    bernoulli = bayesgen.BernoulliNB(binarize=0.0, **common).fit(X, labels)
    print(f"{X.shape[0]} messages, {X.shape[1]} words")
    check("multinomial", multinomial, "distinct_words", args.draws)
    check("Bernoulli", bernoulli, "present_features", args.draws)
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    main()
