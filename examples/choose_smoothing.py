"""Choosing the smoothing λ from the data, and comparing the choices exactly.

Add-λ asks for a λ. Under its Dirichlet prior the evidence p(X | y, λ), the word
probabilities integrated out, is a closed form, so bayesgen can choose λ without
cross-validation, in four ways:

* ``alpha="evidence"``: the λ that maximises the evidence (empirical Bayes);
* ``alpha="evidence_per_class"``: one λ per class where the evidence supports it (a positive
  log Bayes factor against one λ for all, each λ integrated out), else the one above;
* ``alpha_prior=(shape, rate)``: λ ~ Gamma(shape, rate), learned with the rest (its exact
  collapsed posterior p(λ | D));
* ``prior_mean="pooled"`` with ``alpha="evidence"``: a prior whose mean is the class-pooled
  word frequencies instead of uniform.

The evidence cannot compare priors fitted to the same data, nor say how well the classes are
told apart; exact leave-one-out can: elpd_loo = Σ_i log p(y_i | x_i, D without message i),
computed from the conjugate posteriors without a refit (``bayesgen.compare_models``). A
difference in elpd_loo smaller than its standard error (se_diff) does not tell two choices
apart: the script names the choices within one standard error of the best, not one winner.

Uses the SMS Spam Collection when a path is given, else the bundled toy corpus.

Run: python examples/choose_smoothing.py [--data-path SMSSpamCollection.tsv]
"""

import argparse
import time
import warnings
from collections.abc import Mapping

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer

import bayesgen
from bayesgen.inference.smoothing import EvidenceBoundaryWarning
from bayesgen.input.datasets import load_sms_spam, load_toy_spam

#: Exact posteriors; the λ of a hyperprior needs draws for its leave-one-out (PSIS).
OPTIONS = {
    "inference": "conjugate",
    "draws": 500,
    "chains": 2,
    "prior_draws": 0,
    "compute_map": False,
    "random_seed": 0,
}
CHOICES = {
    "add-one (alpha=1)": {"alpha": 1.0},
    'alpha="evidence"': {"alpha": "evidence"},
    'alpha="evidence_per_class"': {"alpha": "evidence_per_class"},
    "alpha_prior=(1, 1)": {"alpha_prior": (1.0, 1.0)},
    'alpha="evidence", prior_mean="pooled"': {"alpha": "evidence", "prior_mean": "pooled"},
}


def describe(model: bayesgen.MultinomialNB) -> str:
    """λ as fitted: one number, one per class, or its posterior under the hyperprior."""
    fitted = model.closed_form_.attrs
    if "alpha_prior_shape" in fitted:
        return f"λ | D = {fitted['alpha']:.3g} ± {fitted['alpha_sd']:.2g}"
    if np.ndim(model.alpha_) == 0 and not isinstance(model.alpha_, Mapping):
        return f"λ = {model.alpha_:.3g}"
    # One λ per class: a mapping {class label: λ}, or an array in the order of classes_.
    alpha = model.alpha_
    if not isinstance(alpha, Mapping):
        alpha = dict(zip(model.classes_, alpha, strict=True))
    per_class = ", ".join(f"{label}: {value:.3g}" for label, value in alpha.items())
    return f"λ = ({per_class}), log Bayes factor {fitted['alpha_log_bayes_factor']:.1f}"


def main(data_path: str | None) -> None:
    start = time.perf_counter()
    texts, labels = load_sms_spam(data_path) if data_path else load_toy_spam()
    vectorizer = CountVectorizer()
    counts = vectorizer.fit_transform(texts)
    print(f"{len(texts)} messages, {counts.shape[1]} words in the vocabulary")
    models = {}
    for name, choice in CHOICES.items():
        with warnings.catch_warnings(record=True) as caught:
            # An evidence still rising at the search's bound is worth reading: print it.
            warnings.simplefilter("always", EvidenceBoundaryWarning)
            models[name] = bayesgen.MultinomialNB(**OPTIONS, **choice).fit(counts, labels)
        print(f"  {name}: {describe(models[name])}")
        for warning in caught:
            print(f"    ({warning.category.__name__}: {warning.message})")
    table = bayesgen.compare_models(models)
    with pd.option_context("display.width", 140, "display.max_columns", None):
        print(table.round(3))
    print(ranking(table))
    print(f"({time.perf_counter() - start:.1f} s)")


def ranking(table: pd.DataFrame) -> str:
    """The highest score, and which choices it does not clearly beat.

    A choice whose elpd is within one standard error of the difference (``se_diff``) of the
    best is not told apart from it by these data; one more than two standard errors behind is
    clearly worse.
    """
    best, others = table.index[0], table.iloc[1:]
    close = others.index[others["elpd_diff"] <= others["se_diff"]].tolist()
    far = others.index[others["elpd_diff"] > 2 * others["se_diff"]].tolist()
    between = [name for name in others.index if name not in close and name not in far]
    lines = [f"Highest leave-one-out log score of the labels: {best}"]
    if close:
        lines.append(
            f"  but within one standard error of it, so not a clear winner over: {'; '.join(close)}"
        )
    else:
        lines.append("  more than one standard error ahead of every other choice")
    if between:
        lines.append(f"  ahead by one to two standard errors of: {'; '.join(between)}")
    if far:
        lines.append(f"  clearly ahead (more than two standard errors) of: {'; '.join(far)}")
    return "\n".join(lines)


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
