"""The seed 003 spam pipeline, Bayesian: CountVectorizer -> TfidfTransformer -> MultinomialNB.

TF-IDF weights are fractional counts; bayesgen's multinomial model takes them as a weighted
likelihood (each token contributes its weight). Uses the SMS Spam Collection when a path is
given, else the bundled toy corpus.

Run: python examples/spam_pipeline.py [--data-path SMSSpamCollection.tsv] [--draws 500]
"""

import argparse

from sklearn.feature_extraction.text import CountVectorizer, TfidfTransformer
from sklearn.metrics import accuracy_score
from sklearn.model_selection import GridSearchCV, train_test_split
from sklearn.pipeline import Pipeline

import bayesgen
from bayesgen.input.datasets import load_sms_spam, load_toy_spam


def main(data_path: str | None, draws: int) -> None:
    texts, labels = load_sms_spam(data_path) if data_path else load_toy_spam()
    X_train, X_test, y_train, y_test = train_test_split(
        texts, labels, test_size=0.25, random_state=0, stratify=labels
    )
    pipeline = Pipeline(
        [
            ("vect", CountVectorizer()),
            ("tfidf", TfidfTransformer()),
            (
                "clf",
                bayesgen.MultinomialNB(
                    inference="conjugate",
                    draws=draws,
                    compute_map=False,
                    prior_draws=0,
                    random_seed=0,
                ),
            ),
        ]
    )
    search = GridSearchCV(pipeline, {"clf__alpha": [0.1, 0.5, 1.0]}, cv=3)
    search.fit(X_train, y_train)
    predicted = search.predict(X_test)
    print(f"best alpha: {search.best_params_['clf__alpha']}")
    print(f"held-out accuracy: {accuracy_score(y_test, predicted):.3f} on {len(y_test)} messages")
    for text in ["WINNER! claim your free prize now", "are we still on for lunch?"]:
        proba = search.predict_proba([text])[0]
        print(
            f"{text!r}: "
            + ", ".join(f"p({c})={p:.3f}" for c, p in zip(search.classes_, proba, strict=True))
        )


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
        default=500,
        help="exact posterior draws per chain of each fit (default: %(default)s)",
    )
    options = parser.parse_args()
    main(options.data_path, options.draws)
