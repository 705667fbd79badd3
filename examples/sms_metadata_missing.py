"""Text plus metadata with missing entries: integrate them out, or drop the incomplete rows?

Each message's words, and metadata computed from the message itself: its length in
characters, and whether it holds a digit, a currency sign (£, $, €), a shouted word (three or
more capitals) or an exclamation mark. Then 20 % of the metadata entries are blanked
completely at random (seeded): missing completely at random, so integrating a missing entry
out is exact. ``bayesgen.NaiveBayes`` fits a multinomial block on the words, a Gaussian block
on the length and a Bernoulli block on the five 0/1 flags (NaN where blanked); each block
counts, per class and column, the rows observed there, and a prediction drops a missing
entry's factor.

The digits enter as a flag, not as a Poisson count of digits: such a count misfits SMS text
badly (spam holds long phone numbers, so the count's variance is far above its mean).

Scored by exact leave-one-out, Σ_i log p(y_i | x_i, D without row i):

* on all messages: words and metadata with the blanks, the same without blanks (what the
  blanks cost), and words alone;
* on the complete rows only (no metadata entry blanked), the same three and a fit on the
  complete rows alone ("drop"), which is what dropping the incomplete rows gives.

Uses the SMS Spam Collection when a path is given, else the bundled toy corpus.

Run: python examples/sms_metadata_missing.py [--data-path SMSSpamCollection.tsv]
     [--missing 0.2] [--seed 0]
"""

import argparse
import time

import numpy as np
import pandas as pd

import bayesgen
from bayesgen.input.datasets import load_sms_spam, load_toy_spam

#: Leave-one-out needs no draws (it is exact); a few keep the fits quick.
OPTIONS = {
    "inference": "conjugate",
    "draws": 100,
    "chains": 2,
    "prior_draws": 0,
    "compute_map": False,
    "random_seed": 0,
}
#: Each flag: a regular expression the message matches (case-sensitive).
FLAGS = {
    "has_digit": r"\d",
    "has_currency": r"[£$€]",
    "has_shouting": r"\b[A-Z]{3,}\b",
    "has_exclamation": r"!",
}
METADATA = ["length", *FLAGS]
WORDS = ("words", "multinomial", "text")
BLOCKS = [WORDS, ("length", "gaussian", ["length"]), ("flags", "bernoulli", list(FLAGS))]
BLANKED = "words + metadata, blanks integrated out"
WHOLE = "words + metadata, nothing blanked"
WORDS_ALONE = "words alone"
DROPPED = "words + metadata, incomplete rows dropped"


def with_metadata(texts: list[str]) -> pd.DataFrame:
    """The texts and the metadata computed from each: length, and 0/1 flags (floats, so that a
    blank can be NaN)."""
    table = pd.DataFrame({"text": texts})
    table["length"] = table["text"].str.len().astype(np.float64)
    for flag, pattern in FLAGS.items():
        table[flag] = table["text"].str.contains(pattern, regex=True).astype(np.float64)
    return table


def blank(table: pd.DataFrame, share: float, seed: int) -> pd.DataFrame:
    """A copy with each metadata entry blanked (NaN) with probability ``share``, independently."""
    blanked = table.copy()
    hidden = np.random.default_rng(seed).random((len(table), len(METADATA))) < share
    for j, column in enumerate(METADATA):
        blanked[column] = blanked[column].mask(hidden[:, j])
    return blanked


def fit(blocks, X: pd.DataFrame, y: np.ndarray):
    return bayesgen.NaiveBayes(blocks, **OPTIONS).fit(X, y)


def complete_rows_table(pointwise: dict[str, np.ndarray]) -> pd.DataFrame:
    """elpd over the complete rows of each model, and its paired difference from the best."""
    best = max(pointwise, key=lambda name: pointwise[name].sum())
    n_rows = len(pointwise[best])
    return pd.DataFrame(
        {
            "elpd_loo": {name: score.sum() for name, score in pointwise.items()},
            "se": {name: np.sqrt(n_rows * np.var(score)) for name, score in pointwise.items()},
            "elpd_diff": {
                name: (pointwise[best] - score).sum() for name, score in pointwise.items()
            },
            "se_diff": {
                name: np.sqrt(n_rows * np.var(pointwise[best] - score))
                for name, score in pointwise.items()
            },
        }
    ).sort_values("elpd_loo", ascending=False)


def main(data_path: str | None, share: float, seed: int) -> None:
    start = time.perf_counter()
    texts, labels = load_sms_spam(data_path) if data_path else load_toy_spam()
    y = np.asarray(labels)
    whole = with_metadata(list(texts))
    X = blank(whole, share, seed)
    complete = X[METADATA].notna().all(axis=1).to_numpy()
    print(
        f"{len(y)} messages; {X[METADATA].isna().to_numpy().mean():.1%} of the metadata entries "
        f"blanked (seed {seed}); {complete.sum()} messages keep all {len(METADATA)}"
    )
    print("metadata by class (before blanking):")
    print(whole.groupby(y)[METADATA].mean().round(3).to_string())

    fits = {
        BLANKED: fit(BLOCKS, X, y),
        WHOLE: fit(BLOCKS, whole, y),
        WORDS_ALONE: fit([WORDS], X, y),
    }
    print("\nExact leave-one-out on all messages:")
    with pd.option_context("display.width", 160, "display.max_columns", None):
        print(bayesgen.compare_models(fits).iloc[:, :5].round(3).to_string())

    pointwise = {
        name: bayesgen.leave_one_out(est).pointwise[complete] for name, est in fits.items()
    }
    pointwise[DROPPED] = bayesgen.leave_one_out(fit(BLOCKS, X[complete], y[complete])).pointwise
    print(
        f"\nExact leave-one-out on the {complete.sum()} complete messages (the drop fit learns "
        "from them alone):"
    )
    with pd.option_context("display.width", 160, "display.max_columns", None):
        print(complete_rows_table(pointwise).round(3).to_string())
    print(f"({time.perf_counter() - start:.1f} s)")


def share_of_entries(text: str) -> float:
    value = float(text)
    if not 0 <= value < 1:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1); got {value}")
    return value


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
        "--missing",
        type=share_of_entries,
        default=0.2,
        help="share of the metadata entries blanked at random (default: 0.2)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the blanking (default: 0)")
    args = parser.parse_args()
    main(args.data_path, args.missing, args.seed)
