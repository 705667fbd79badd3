"""Do unlabelled messages help a spam filter with a handful of labels? Supervised against EM
against EM-λ, the weight of the unlabelled rows chosen by leave-one-out.

A few messages keep their label, the rest of the training messages lose it, and a held-out
set is scored. Three multinomial naive Bayes fits, each predicting with the exact posterior
predictive at its statistics:

* supervised: the labelled messages alone;
* EM: every training message, the unlabelled ones with their class latent (λ_u = 1);
* EM-λ: λ_u, how much an unlabelled message counts beside a labelled one, chosen from
  (0, 0.01, 0.03, 0.1, 0.3, 1) by the exact leave-one-out log score of the labelled messages
  (bayesgen.inference.unlabelled_weight.choose_unlabelled_weight). λ_u = 0 is the supervised
  fit, so where the unlabelled messages hurt the choice can fall back to it.

Uses the SMS Spam Collection when a path is given, else the bundled toy corpus (50 messages:
the numbers are then a demonstration, not evidence; benchmarks/bench_semi_supervised.py has
the learning curves).

Run: python examples/semi_supervised_text.py [--data-path SMSSpamCollection.tsv] [--labelled 6]
"""

import argparse
import time

import numpy as np
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split

from bayesgen import MultinomialNB
from bayesgen.inference.unlabelled_weight import choose_unlabelled_weight
from bayesgen.input.datasets import load_sms_spam, load_toy_spam

#: alpha=2 (add one at the mode): EM's MAP needs alpha >= 1. One chain of few draws: the
#: predictions below are exact and read no draws.
OPTIONS = {
    "alpha": 2.0,
    "inference": "conjugate",
    "draws": 100,
    "tune": 20,
    "chains": 1,
    "prior_draws": 0,
    "compute_map": False,
    "random_seed": 0,
}


def main(data_path: str | None, n_labelled: int | None) -> None:
    start = time.perf_counter()
    texts, labels = load_sms_spam(data_path) if data_path else load_toy_spam()
    labels = np.asarray(labels, dtype=object)
    n_labelled = n_labelled or (30 if data_path else 6)
    pool, test, y_pool, y_test = train_test_split(
        texts, labels, test_size=0.3, stratify=labels, random_state=0
    )
    vectorizer = CountVectorizer()
    X_pool, X_test = vectorizer.fit_transform(pool), vectorizer.transform(test)
    labelled, _ = train_test_split(
        np.arange(len(y_pool)), train_size=n_labelled, stratify=y_pool, random_state=0
    )
    y_hidden = np.full(len(y_pool), None, dtype=object)
    y_hidden[labelled] = y_pool[labelled]
    print(
        f"{n_labelled} labelled and {len(y_pool) - n_labelled} unlabelled training messages, "
        f"{len(y_test)} held out ({X_pool.shape[1]} words)\n"
    )

    supervised = MultinomialNB(**OPTIONS).fit(X_pool[labelled], y_pool[labelled])
    em = MultinomialNB(**OPTIONS).fit(X_pool, y_hidden)
    choice = choose_unlabelled_weight(MultinomialNB(**OPTIONS), X_pool, y_hidden)
    print("Leave-one-out log score of the labelled messages, by λ_u:")
    print(choice.table().round(3).to_string())
    print(f"chosen: λ_u = {choice.best:g}\n")

    print(f"{'fit':<26} {'held-out accuracy':>17} {'log loss':>9}")
    fits = {
        "supervised": supervised,
        "EM (λ_u = 1)": em,
        f"EM-λ (λ_u = {choice.best:g})": choice.estimator,
    }
    for name, fit in fits.items():
        proba = fit.posterior_predictive_proba(X_test)
        accuracy = np.mean(fit.classes_[proba.argmax(axis=1)] == y_test)
        loss = log_loss(y_test, proba, labels=fit.classes_)
        print(f"{name:<26} {accuracy:>17.3f} {loss:>9.3f}")
    print(f"\n({time.perf_counter() - start:.1f} s)")


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
        "--labelled",
        type=int,
        default=None,
        help="how many training messages keep their label, a stratified sample (default: 6 "
        "for the toy corpus, 30 for SMS Spam)",
    )
    arguments = parser.parse_args()
    main(arguments.data_path, arguments.labelled)
