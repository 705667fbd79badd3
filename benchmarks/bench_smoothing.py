"""λ by the evidence against λ by cross-validation: held-out log loss and fit time.

scikit-learn users choose the smoothing of naive Bayes by grid search: ``GridSearchCV`` over
20 log-spaced ``alpha`` with 5-fold cross-validation (100 fits and scorings) and a refit.
bayesgen's ``alpha="evidence"`` maximises the closed-form evidence instead (one dimension, in
log λ). On SMS Spam (a fixed stratified 75/25 split) and on a synthetic 20-class Zipf corpus,
this benchmark reports for the multinomial and the Bernoulli model:

* the grid search: its chosen α, held-out log loss and time;
* ``bayesgen`` with ``alpha="evidence"``, ``inference="conjugate"``, ``draws`` exact posterior
  draws (one chain, no prior draws, no MAP): the log loss of ``predict_proba`` (the plug-in
  averaged over the draws) and of ``posterior_predictive_proba`` (exact), and the fit time;
* the same with ``prior_mean="pooled"``: the prior Dirichlet(λ V m) whose mean m is the
  training set's word frequencies (Beta(2λ m, 2λ (1 − m)) for the Bernoulli model), λ again
  by the evidence; the log evidence of both priors says which the data support;
* the evidence search alone, as a user of the closed forms pays it
  (``closed_form.multinomial_nb`` + ``smoothing.evidence_alpha``), with the log loss of the
  add-λ plug-in at that λ.

The two sides run interleaved, ``--repeats`` times, in one process (the machine is shared:
noise hits both alike); times are medians, and the ratio is the grid search's over ours.

Run: python benchmarks/bench_smoothing.py [--quick] [--repeats 3] [--draws 200] [--data PATH]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings
from datetime import date
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from sklearn import naive_bayes as sk
from sklearn.base import clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, train_test_split

import bayesgen
from bayesgen import closed_form as cf
from bayesgen.inference.smoothing import evidence_alpha
from bayesgen.input.datasets import load_sms_spam

DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "sms_spam" / "SMSSpamCollection.tsv"
)
#: The grid search's 20 values of alpha.
GRID = np.logspace(-4, 1, 20)
#: (documents, vocabulary, classes) of the synthetic corpus, full and --quick.
ZIPF_SIZES = {"full": (20_000, 50_000, 20), "quick": (2_000, 5_000, 20)}


def zipf_corpus(
    n_docs: int,
    n_words: int,
    n_classes: int,
    *,
    mean_length: float = 100.0,
    exponent: float = 1.1,
    seed: int = 0,
) -> tuple[sp.csr_array, np.ndarray]:
    """A bag-of-words corpus whose classes are Dirichlet perturbations of one Zipf law.

    Word w has base probability ∝ 1 / w^exponent; class k's word distribution is
    θ_k ~ Dirichlet(V · base), which keeps the Zipf shape but gives each class its own rare
    words; documents have Poisson(mean_length) tokens (at least one) drawn from their class's
    θ_k; labels are uniform. Tokens are drawn class by class as one stream, so the cost is
    that of the tokens, not of documents × vocabulary.

    Returns
    -------
    X : scipy.sparse.csr_array of shape (n_docs, n_words)
    y : numpy.ndarray of int
    """
    rng = np.random.default_rng(seed)
    base = 1.0 / np.arange(1, n_words + 1) ** exponent
    theta = rng.dirichlet(n_words * base / base.sum(), size=n_classes)
    y = rng.integers(0, n_classes, size=n_docs)
    lengths = np.maximum(rng.poisson(mean_length, size=n_docs), 1)
    rows, words = [], []
    for k in range(n_classes):
        members = np.flatnonzero(y == k)
        words.append(rng.choice(n_words, size=lengths[members].sum(), p=theta[k]))
        rows.append(np.repeat(members, lengths[members]))
    rows, words = np.concatenate(rows), np.concatenate(words)
    X = sp.csr_array((np.ones(rows.size), (rows, words)), shape=(n_docs, n_words))
    X.sum_duplicates()
    return X, y


def sms_spam(path: Path):
    """SMS Spam: word counts of a stratified 75/25 split (the vocabulary of the training
    messages)."""
    texts, labels = load_sms_spam(path)
    train, test, y_train, y_test = train_test_split(
        texts, np.asarray(labels), test_size=0.25, stratify=labels, random_state=0
    )
    vectorizer = CountVectorizer()
    return vectorizer.fit_transform(train), vectorizer.transform(test), y_train, y_test


def zipf(size: str):
    X, y = zipf_corpus(*ZIPF_SIZES[size])
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.2, stratify=y, random_state=0
    )
    return sp.csr_array(X_train), sp.csr_array(X_test), y_train, y_test


MODELS = {
    # name: (scikit-learn class, bayesgen class, closed form, options of both)
    "multinomial": (sk.MultinomialNB, bayesgen.MultinomialNB, cf.multinomial_nb, {}),
    "bernoulli": (sk.BernoulliNB, bayesgen.BernoulliNB, cf.bernoulli_nb, {"binarize": 0.0}),
}


def timed(function):
    start = time.perf_counter()
    result = function()
    return time.perf_counter() - start, result


def run(X, X_test, y, y_test, model: str, *, repeats: int, draws: int) -> dict:
    """Time the three ways to choose λ, interleaved; the log losses of the first repeat."""
    sk_class, bg_class, closed_form, options = MODELS[model]
    times = {"grid": [], "fit": [], "pooled_fit": [], "search": []}
    result = {}
    for repeat in range(repeats):
        search = GridSearchCV(sk_class(**options), {"alpha": GRID}, cv=5, scoring="neg_log_loss")
        elapsed, _ = timed(lambda: search.fit(X, y))  # noqa: B023 (called at once)
        times["grid"].append(elapsed)
        est = bg_class(
            alpha="evidence",
            inference="conjugate",
            draws=draws,
            chains=1,
            prior_draws=0,
            compute_map=False,
            random_seed=0,
            **options,
        )
        elapsed, _ = timed(lambda: est.fit(X, y))  # noqa: B023
        times["fit"].append(elapsed)
        pooled = clone(est).set_params(prior_mean="pooled")
        elapsed, _ = timed(lambda: pooled.fit(X, y))  # noqa: B023
        times["pooled_fit"].append(elapsed)
        elapsed, alpha = timed(lambda: evidence_alpha(closed_form(X, y, **options)))
        times["search"].append(elapsed)
        if repeat == 0:
            plug_in = closed_form(X, y, alpha=alpha, **options)
            result = {
                "grid_alpha": search.best_params_["alpha"],
                "grid_loss": log_loss(y_test, search.predict_proba(X_test), labels=est.classes_),
                "alpha": est.alpha_,
                "mean_loss": log_loss(y_test, est.predict_proba(X_test), labels=est.classes_),
                "exact_loss": log_loss(
                    y_test, est.posterior_predictive_proba(X_test), labels=est.classes_
                ),
                "plug_in_loss": log_loss(
                    y_test, cf.predict_proba(plug_in, X_test), labels=est.classes_
                ),
                "evidence": cf.log_evidence(est.closed_form_),
                "pooled_alpha": pooled.alpha_,
                "pooled_mean_loss": log_loss(
                    y_test, pooled.predict_proba(X_test), labels=est.classes_
                ),
                "pooled_exact_loss": log_loss(
                    y_test, pooled.posterior_predictive_proba(X_test), labels=est.classes_
                ),
                "pooled_evidence": cf.log_evidence(pooled.closed_form_),
            }
    return result | {name: statistics.median(values) for name, values in times.items()}


def table(rows: list[tuple[str, str, dict]], draws: int) -> str:
    """The results as a Markdown table: log loss and time, each against the grid search's."""
    lines = [
        "| data | model | method | λ | held-out log loss | vs grid | time (s) | grid time / time "
        "| log evidence |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for data, model, r in rows:
        grid, fit, search, pooled = r["grid"], r["fit"], r["search"], r["pooled_fit"]

        def versus(loss: float) -> str:
            return f"{100 * (loss / r['grid_loss'] - 1):+.1f}%"  # noqa: B023 (called at once)

        lines += [
            f"| {data} | {model} | GridSearchCV, 20 α × 5 folds | {r['grid_alpha']:.3g} | "
            f"{r['grid_loss']:.4f} | | {grid:.2f} | 1 | |",
            f'| | | alpha="evidence", {draws} draws: predict_proba | {r["alpha"]:.3g} | '
            f"{r['mean_loss']:.4f} | {versus(r['mean_loss'])} | {fit:.2f} | {grid / fit:.1f} "
            f"| {r['evidence']:.1f} |",
            f"| | | the same fit: posterior_predictive_proba | | {r['exact_loss']:.4f} | "
            f"{versus(r['exact_loss'])} | | | |",
            f'| | | alpha="evidence", prior_mean="pooled": predict_proba | '
            f"{r['pooled_alpha']:.3g} | {r['pooled_mean_loss']:.4f} | "
            f"{versus(r['pooled_mean_loss'])} | {pooled:.2f} | {grid / pooled:.1f} "
            f"| {r['pooled_evidence']:.1f} |",
            f"| | | the same fit: posterior_predictive_proba | | {r['pooled_exact_loss']:.4f} "
            f"| {versus(r['pooled_exact_loss'])} | | | |",
            f"| | | evidence search alone (closed form, add-λ plug-in) | {r['alpha']:.3g} | "
            f"{r['plug_in_loss']:.4f} | {versus(r['plug_in_loss'])} | {search:.3f} | "
            f"{grid / search:.0f} | |",
        ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a 2,000 x 5,000 Zipf corpus")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--zipf-repeats", type=int, default=None, help="default --repeats")
    parser.add_argument("--draws", type=int, default=200, help="posterior draws of the fits")
    parser.add_argument("--data", type=Path, default=DATA, help="SMS Spam Collection file")
    args = parser.parse_args()
    size = "quick" if args.quick else "full"
    datasets = [("SMS Spam", lambda: sms_spam(args.data), args.repeats)]
    n_docs, n_words, n_classes = ZIPF_SIZES[size]
    zipf_name = f"Zipf {n_classes} classes, {n_docs:,} docs × {n_words:,} words"
    datasets.append((zipf_name, lambda: zipf(size), args.zipf_repeats or args.repeats))
    rows = []
    # Warm-up: imports and first-call costs count for neither side.
    X, X_test, y, y_test = sms_spam(args.data)
    run(X[:500], X_test, y[:500], y_test, "multinomial", repeats=1, draws=10)
    for name, load, repeats in datasets:
        X, X_test, y, y_test = load()
        print(f"{name}: train {X.shape[0]} x {X.shape[1]}, test {X_test.shape[0]}", flush=True)
        for model in MODELS:
            with warnings.catch_warnings():
                # The grid search's α = 1e-4 folds may score a zero probability; scikit-learn
                # warns about it and clips, as it does for every user.
                warnings.simplefilter("ignore", UserWarning)
                result = run(X, X_test, y, y_test, model, repeats=repeats, draws=args.draws)
            rows.append((name, model, result))
            print(f"  {model}: {result}", flush=True)
    print(f"\n{date.today().isoformat()}, medians of --repeats (Zipf: {repeats}):\n")
    print(table(rows, args.draws))


if __name__ == "__main__":
    main()
