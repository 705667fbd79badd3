"""Fit a full posterior in a script: multinomial naive Bayes on the bundled spam corpus.

Prints the posterior (an xarray DataTree node), the eight most probable words given spam with
their 94% intervals, and p(spam | message) for two new messages with its 94% interval.

Run: python examples/fit_posterior.py [--draws 1000] [--inference nuts|conjugate]
"""

import argparse

from sklearn.feature_extraction.text import CountVectorizer

import bayesgen
from bayesgen.input.datasets import load_toy_spam


def main(draws: int, inference: str) -> None:
    texts, labels = load_toy_spam()
    vectorizer = CountVectorizer()
    X = vectorizer.fit_transform(texts)
    clf = bayesgen.MultinomialNB(
        alpha=1.0, inference=inference, draws=draws, tune=draws, random_seed=0
    )
    clf.fit(X, labels, feature_names=vectorizer.get_feature_names_out())

    posterior = clf.idata_["posterior"]
    print(posterior)  # an xarray DataTree node: dims chain, draw, class, feature
    # The words whose spam probability the data pins down best, with 94% intervals.
    spam = posterior["feature_prob"].sel({"class": "spam"})
    mean = spam.mean(("chain", "draw"))
    # Coordinates are NumPy scalars: str() keeps their repr (np.str_('now')) out of the output.
    top = [str(word) for word in mean.sortby(mean, ascending=False).feature.values[:8]]
    bounds = spam.sel(feature=top).quantile([0.03, 0.97], dim=("chain", "draw"))
    for word in top:
        low, high = (float(value) for value in bounds.sel(feature=word).values)
        print(f"P({word!r} | spam) = {float(mean.sel(feature=word)):.4f}  [{low:.4f}, {high:.4f}]")

    messages = ["claim your free cash prize now", "see you at lunch tomorrow"]
    proba = clf.predict_proba(vectorizer.transform(messages))
    lower, upper = clf.predict_proba_interval(vectorizer.transform(messages), prob=0.94)
    spam_column = list(clf.classes_).index("spam")
    for text, p, lo, hi in zip(
        messages,
        proba[:, spam_column],
        lower[:, spam_column],
        upper[:, spam_column],
        strict=True,
    ):
        print(f"p(spam | {text!r}) = {p:.3f}  (94% interval {lo:.3f} to {hi:.3f})")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--draws",
        type=int,
        default=1000,
        help="posterior draws per chain, and as many NUTS tuning steps (default: %(default)s)",
    )
    parser.add_argument(
        "--inference",
        choices=["nuts", "conjugate"],
        default="nuts",
        help="nuts: PyMC's sampler (compiles the model the first time, about a minute); "
        "conjugate: exact draws, nothing compiled (default: %(default)s)",
    )
    options = parser.parse_args()
    main(options.draws, options.inference)
