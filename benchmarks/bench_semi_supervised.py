"""The learning curve of semi-supervised naive Bayes, honestly: where unlabelled rows help and
where they hurt.

Multinomial naive Bayes on word counts, a few labelled rows and the rest of a training pool
unlabelled, scored on held-out labelled rows (issue 24, part 4). Two corpora:

* **SMS Spam** (the shared data): 5,574 messages, a stratified 75/25 split into the pool
  (4,180) and the test set (1,394); scikit-learn's ``CountVectorizer`` on the pool.
* **Zipf, 20 classes**: 3,000 synthetic documents of ``bench_smoothing.zipf_corpus`` (the
  classes Dirichlet perturbations of one Zipf law over 2,000 words, 100 tokens a document on
  average), 2,000 in the pool and 1,000 in the test set, stratified. The data are drawn from
  the multinomial model itself; the classes differ mostly in rare words.

For each number of labelled rows (SMS: 10, 30, 100, 300; Zipf: 20, 30, 100, 300, since 10
rows cannot label 20 classes and a class without a labelled row cannot be learnt) and each of
``--draws`` label draws (a stratified sample of the pool, seeded by the draw), the methods:

* **supervised**: ``MultinomialNB(alpha=2, inference="conjugate")`` on the labelled rows alone;
* **EM**: the semi-supervised fit on the whole pool with λ_u = 1 (the MAP by EM);
* **EM-λ (LOO)**: λ_u chosen from (0, 0.01, 0.03, 0.1, 0.3, 1) by the exact leave-one-out log
  score of the labelled rows (:func:`bayesgen.inference.unlabelled_weight.
  choose_unlabelled_weight`; the unlabelled rows' responsibilities held at each full fit);
* **full posterior**: the same fit's Gibbs draws over the unlabelled rows' labels
  (``--gibbs-draws`` sweeps after ``--gibbs-tune``, one chain), ``predict_proba`` (the mean of
  p(y | x, θ) over the draws);
* **self-training**: scikit-learn's ``SelfTrainingClassifier(MultinomialNB())`` (its own
  naive Bayes, α = 1, pseudo-labels above probability 0.75, the default).

The first three predict with ``posterior_predictive_proba``: the exact predictive of the
conjugate posterior at the fit's (completed expected) statistics, the quantity the LOO scores.
Prints one Markdown table per corpus, mean ± SD over the draws of held-out accuracy and log
loss, and the λ_u the LOO chose in each draw.

The draws run ``--jobs`` at a time (joblib processes, 2 by default).

**Run time.** ``--full`` is the whole table of docs/performance.md: 5 label draws at every
size of both corpora, 28 minutes on the shared 2-core machine (the Zipf corpus's EM fits stack
20 copies of the pool, and at 20 and 30 labelled rows run for hundreds of iterations). The
default is the same measurement, smaller: 3 label draws, and the Zipf corpus at 20, 100 and 300
labelled rows (its 30 left out), about 10 minutes. Each row of the table measures the same
thing in both; the default's means have wider error bars. ``--draws`` and ``--sizes`` override
either.

Run: python benchmarks/bench_semi_supervised.py [--full] [--draws N] [--sizes 10 30 100 300]
[--corpora sms zipf] [--jobs 2] [--data PATH]
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections import defaultdict
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from bench_smoothing import zipf_corpus
from joblib import Parallel, delayed
from sklearn import naive_bayes as sk
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.metrics import log_loss
from sklearn.model_selection import train_test_split
from sklearn.semi_supervised import SelfTrainingClassifier

from bayesgen import MultinomialNB
from bayesgen.inference.unlabelled_weight import DEFAULT_GRID, choose_unlabelled_weight
from bayesgen.input.datasets import load_sms_spam

DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "sms_spam" / "SMSSpamCollection.tsv"
)
METHODS = ("supervised", "EM (λ_u = 1)", "EM-λ (LOO)", "full posterior (Gibbs)", "self-training")
#: Label draws per size: the default run's and ``--full``'s.
DEFAULT_DRAWS, FULL_DRAWS = 3, 5
#: Labelled rows: SMS Spam's (both runs), the Zipf corpus's by default and with ``--full``.
SMS_SIZES = (10, 30, 100, 300)
ZIPF_DEFAULT_SIZES, ZIPF_FULL_SIZES = (20, 100, 300), (20, 30, 100, 300)
#: The add-one-at-the-mode smoothing that the MAP by EM needs (alpha >= 1; docs/semi-supervised.md).
ALPHA = 2.0
UNLABELLED = -1


def sms(path: Path):
    """SMS Spam: the pool's and the test set's word counts, labels as 0 (ham) and 1 (spam)."""
    texts, labels = load_sms_spam(path)
    codes = (np.asarray(labels) == "spam").astype(int)
    pool, test, y_pool, y_test = train_test_split(
        texts, codes, test_size=0.25, stratify=codes, random_state=0
    )
    vectorizer = CountVectorizer()
    X_pool = sp.csr_array(vectorizer.fit_transform(pool))
    return X_pool, sp.csr_array(vectorizer.transform(test)), y_pool, y_test


def zipf():
    """The 20-class Zipf corpus: 2,000 documents in the pool, 1,000 in the test set."""
    X, y = zipf_corpus(3_000, 2_000, 20, mean_length=100.0, seed=1)
    X_pool, X_test, y_pool, y_test = train_test_split(
        X, y, test_size=1_000, stratify=y, random_state=0
    )
    return sp.csr_array(X_pool), sp.csr_array(X_test), y_pool, y_test


def bayes(**options) -> MultinomialNB:
    settings = {"draws": 1, "tune": 0, "chains": 1, "prior_draws": 0, "random_seed": 0}
    return MultinomialNB(
        alpha=ALPHA, inference="conjugate", compute_map=False, **(settings | options)
    )


def one_draw(X_pool, y_pool, X_test, y_test, n_labelled: int, seed: int, args) -> dict:
    """Every method on one stratified draw of ``n_labelled`` labelled rows: accuracy and log
    loss of each, and the λ_u the LOO chose."""
    labelled, _ = train_test_split(
        np.arange(y_pool.size), train_size=n_labelled, stratify=y_pool, random_state=seed
    )
    y_hidden = np.full(y_pool.size, UNLABELLED)
    y_hidden[labelled] = y_pool[labelled]
    classes = np.unique(y_pool)
    proba = {"supervised": bayes().fit(X_pool[labelled], y_pool[labelled])}
    proba["supervised"] = proba["supervised"].posterior_predictive_proba(X_test)
    gibbs = bayes(draws=args.gibbs_draws, tune=args.gibbs_tune, random_seed=seed)
    gibbs.fit(X_pool, y_hidden, unlabelled_label=UNLABELLED)
    proba["EM (λ_u = 1)"] = gibbs.posterior_predictive_proba(X_test)  # EM's closed form
    proba["full posterior (Gibbs)"] = gibbs.predict_proba(X_test)
    choice = choose_unlabelled_weight(
        bayes(), X_pool, y_hidden, unlabelled_label=UNLABELLED, grid=DEFAULT_GRID, refit=False
    )
    proba["EM-λ (LOO)"] = choice.estimator.posterior_predictive_proba(X_test)
    with warnings.catch_warnings():  # its "no new labels added" at the last iteration
        warnings.simplefilter("ignore", UserWarning)
        self_training = SelfTrainingClassifier(sk.MultinomialNB()).fit(X_pool, y_hidden)
    proba["self-training"] = self_training.predict_proba(X_test)
    scores = {
        method: (
            float(np.mean(classes[p.argmax(axis=1)] == y_test)),
            log_loss(y_test, p, labels=classes),
        )
        for method, p in proba.items()
    }
    return {"scores": scores, "weight": choice.best}


def learning_curve(name: str, data, sizes, args) -> str:
    """The Markdown table of one corpus: rows are sizes × methods."""
    X_pool, X_test, y_pool, y_test = data
    lines = [
        f"**{name}** ({y_pool.size} rows in the pool, {y_test.size} held out, "
        f"{np.unique(y_pool).size} classes, {X_pool.shape[1]} words; {args.draws} label draws)",
        "",
        "| labelled | method | accuracy | log loss | λ_u chosen by LOO |",
        "|---:|---|---|---|---|",
    ]
    for n_labelled in sizes:
        start = time.perf_counter()
        scores, weights = defaultdict(list), []
        results = Parallel(n_jobs=args.jobs)(
            delayed(one_draw)(X_pool, y_pool, X_test, y_test, n_labelled, seed, args)
            for seed in range(args.draws)
        )
        for result in results:
            for method, score in result["scores"].items():
                scores[method].append(score)
            weights.append(result["weight"])
        for method in METHODS:
            accuracy, loss = np.array(scores[method]).T
            chosen = ", ".join(f"{w:g}" for w in weights) if method == "EM-λ (LOO)" else ""
            lines.append(
                f"| {n_labelled if method == METHODS[0] else ''} | {method} | "
                f"{accuracy.mean():.3f} ± {accuracy.std(ddof=1):.3f} | "
                f"{loss.mean():.3f} ± {loss.std(ddof=1):.3f} | {chosen} |"
            )
        print(f"  {name}, {n_labelled} labelled: {time.perf_counter() - start:.0f} s", flush=True)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="SMSSpamCollection.tsv")
    parser.add_argument(
        "--full", action="store_true", help="5 draws at every size (the 28-minute table)"
    )
    parser.add_argument("--draws", type=int, help="label draws per size (default 3; 5 --full)")
    parser.add_argument(
        "--sizes", type=int, nargs="+", help="labelled rows (default: see the module docstring)"
    )
    parser.add_argument("--corpora", nargs="+", default=["sms", "zipf"], choices=["sms", "zipf"])
    parser.add_argument("--gibbs-draws", type=int, default=200)
    parser.add_argument("--gibbs-tune", type=int, default=50)
    parser.add_argument("--jobs", type=int, default=2, help="label draws fitted at once")
    args = parser.parse_args()
    if args.draws is None:
        args.draws = FULL_DRAWS if args.full else DEFAULT_DRAWS
    start = time.perf_counter()
    tables = []
    if "sms" in args.corpora:
        sizes = args.sizes or SMS_SIZES
        tables.append(learning_curve("SMS Spam", sms(args.data), sizes, args))
    if "zipf" in args.corpora:
        # 20 classes need 20 labelled rows at least: 10 becomes 20.
        sizes = args.sizes or (ZIPF_FULL_SIZES if args.full else ZIPF_DEFAULT_SIZES)
        sizes = sorted({max(n, 20) for n in sizes})
        tables.append(learning_curve("Zipf, 20 classes", zipf(), sizes, args))
    print(f"\n{time.perf_counter() - start:.0f} s in all\n")
    print("\n\n".join(tables))


if __name__ == "__main__":
    main()
