"""Posterior predictive checks of the two event models on SMS text.

Simulates the messages again from each fitted model (same labels, same lengths for the
multinomial model) and compares one statistic of the simulated data sets with the real one:

* multinomial: distinct words per message. A multinomial draws every token independently,
  so it repeats words less than people do (burstiness): real messages have fewer distinct
  words than the simulated ones.
* Bernoulli: words present per message. Add-λ with λ = 1 gives every one of the thousands of
  absent words a little probability, which adds up to words the messages do not have.

Uses the SMS Spam Collection when a path is given, else the bundled toy corpus (50 messages,
on which the findings above need not hold: there the multinomial simulates fewer distinct
words than the messages have).

Run: python examples/sms_predictive_checks.py [--data-path SMSSpamCollection.tsv] [--draws 100]
"""

import argparse
import time

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

import bayesgen
from bayesgen.input.datasets import load_sms_spam, load_toy_spam


def check(name: str, est, statistic: str, draws: int) -> None:
    """Print the observed mean of ``statistic`` against its posterior predictive spread."""
    tree = est.sample_posterior_predictive(random_seed=1, draws=draws, keep_rows=False)
    observed = tree["constant_data"][statistic].values.mean()  # of the training rows
    simulated = tree["posterior_predictive_rows"][statistic].mean("obs").values.ravel()
    low, high = np.quantile(simulated, [0.03, 0.97])
    share = np.mean(simulated > observed)
    print(
        f"{name}: {statistic} per message, observed mean {observed:.2f}; simulated "
        f"{simulated.mean():.2f} (94% interval {low:.2f} to {high:.2f}); "
        f"P(simulated > observed) = {share:.2f}"
    )


def main(data_path: str | None, draws: int) -> None:
    start = time.perf_counter()
    texts, labels = load_sms_spam(data_path) if data_path else load_toy_spam()
    X = CountVectorizer().fit_transform(texts)
    common = {"inference": "conjugate", "compute_map": False, "random_seed": 0, "draws": 500}
    multinomial = bayesgen.MultinomialNB(**common).fit(X, labels)
    bernoulli = bayesgen.BernoulliNB(binarize=0.0, **common).fit(X, labels)
    print(f"{X.shape[0]} messages, {X.shape[1]} words")
    check("multinomial", multinomial, "distinct_words", draws)
    check("Bernoulli", bernoulli, "present_features", draws)
    print(f"({time.perf_counter() - start:.1f} s)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data-path",
        default=None,
        help="the SMS Spam Collection's tab-separated file (label, message) (default: none, "
        "the bundled toy corpus)",
    )
    parser.add_argument(
        "--draws",
        type=int,
        default=100,
        help="posterior predictive data sets to simulate (default: %(default)s)",
    )
    options = parser.parse_args()
    main(options.data_path, options.draws)
