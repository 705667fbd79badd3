"""Which event model suits SMS text, multinomial or Bernoulli, and by how much?

The lecture notes' question. Both models read the same CountVectorizer vocabulary: the
multinomial event model the word counts of a message, the multivariate Bernoulli event model
which words it contains (and which it does not). Their joint likelihoods are of different
data, so they are compared by what both predict, the label of each message from its words,
with that message left out of the fit: elpd_loo = Σ_i log p(y_i | x_i, D without message i),
computed exactly from the conjugate posteriors (bayesgen.compare_models).

Uses the SMS Spam Collection when a path is given, else the bundled toy corpus.

Run: python examples/sms_event_models.py [--data-path SMSSpamCollection.tsv]
"""

import argparse
import time

import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer

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


def main(data_path: str | None) -> None:
    start = time.perf_counter()
    texts, labels = load_sms_spam(data_path) if data_path else load_toy_spam()
    vectorizer = CountVectorizer()
    counts = vectorizer.fit_transform(texts)
    vocabulary = vectorizer.get_feature_names_out()
    print(f"{len(texts)} messages, {len(vocabulary)} words in the vocabulary")
    models = {
        "multinomial": bayesgen.MultinomialNB(**OPTIONS),
        "bernoulli": bayesgen.BernoulliNB(binarize=0.0, **OPTIONS),
    }
    for model in models.values():
        model.fit(counts, labels, feature_names=vocabulary)
    table = bayesgen.compare_models(models)
    with pd.option_context("display.width", 120, "display.max_columns", None):
        print(table.round(3))
    best, other = table.index
    diff, se_diff = table.loc[other, "elpd_diff"], table.loc[other, "se_diff"]
    accuracy = table["accuracy_loo"]
    # Where the score comes from: the messages each model gets wrong, and the others.
    errors = {}
    for name in table.index:
        result = bayesgen.leave_one_out(models[name])
        wrong = result.log_proba.argmax(axis=1) != result.y_codes
        errors[name] = (wrong.sum(), result.pointwise[wrong].sum(), result.pointwise[~wrong].sum())
        print(
            f"  {name}: {errors[name][0]} messages misclassified; log score "
            f"{errors[name][1]:.1f} on them, {errors[name][2]:.1f} on the others"
        )
    if abs(accuracy[best] - accuracy[other]) < 0.01:
        reason = (
            f"at nearly the same leave-one-out accuracy ({accuracy[best]:.3f} against "
            f"{accuracy[other]:.3f}), so the difference is how much probability each model "
            f"leaves on the right label when it is wrong ({errors[best][1]:.0f} against "
            f"{errors[other][1]:.0f} nats on its errors)"
        )
    else:
        reason = f"and leave-one-out accuracy {accuracy[best]:.3f} against {accuracy[other]:.3f}"
    verdict = (
        f"The {best} event model suits this text better"
        if diff > 2 * se_diff
        else "These data cannot tell the event models apart (within 2 standard errors)"
    )
    print(
        f"{verdict}: the {best} model's leave-one-out log score of the labels is higher by "
        f"{diff:.1f} ± {se_diff:.1f} nats ({diff / se_diff:.1f} standard errors, "
        f"{diff / counts.shape[0]:.3f} nats per message), {reason}."
    )
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
    main(parser.parse_args().data_path)
