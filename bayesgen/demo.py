"""``bayesgen demo``: every model on data that ships with scikit-learn or with bayesgen.

First the closed forms of the lecture notes' four-e-mail example and of the digits data; then
each model is fitted, compared with its closed forms (the verdict is printed), saved under
``models/`` and reported under ``reports/``. The models run in ``--workers`` processes
(:func:`default_workers`: one for NUTS, whose chains already use the cores; two for exact
conjugate draws on a machine with an idle second core): their results are printed in the
demo's order, and a line per step on standard error (:mod:`bayesgen.inference.progress`)
tells what each is doing.
``--export DIR`` instead writes the demo's data as CSV files for the command-line examples.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits, load_wine
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.model_selection import train_test_split

from bayesgen import closed_form as cf

# compare and report are called through their modules (checks.compare, reporting.report), so
# that a caller who replaces either (the tests do) is heard here too.
from bayesgen.checks import comparison as checks
from bayesgen.estimators.gaussian_nb import GaussianNB
from bayesgen.estimators.mixed import NaiveBayes
from bayesgen.estimators.models import (
    BernoulliNB,
    CategoricalNB,
    GaussianDiscriminantAnalysis,
    MultinomialNB,
    QuadraticDiscriminantAnalysis,
)
from bayesgen.estimators.poisson_nb import PoissonNB
from bayesgen.inference.progress import Progress
from bayesgen.input.data import vectorize_text
from bayesgen.input.datasets import load_penguins, load_sms_spam, load_toy_spam
from bayesgen.input.files import check_output_path, write_csv
from bayesgen.plotting import report as reporting

# Seed 000 of the lecture notes: four e-mails over the words a, b, c; y = 1 is spam.
SEED_EMAILS = [["a", "b"], ["b", "a"], ["a", "c", "b"], ["c", "c", "c"]]
SEED_LABELS = [1, 0, 0, 1]


@dataclass
class Job:
    """One demo fit: a name, an unfitted estimator and its train/test data."""

    name: str
    estimator: object
    X_train: object
    y_train: np.ndarray
    X_test: object
    y_test: np.ndarray
    feature_names: list[str] | None = None


def run(args: argparse.Namespace) -> int:
    """Run the demo with the CLI's options; returns the exit status.

    1 when any model's posterior disagrees with its closed form (``compare(...).ok`` is
    False), so that a script or CI running the demo sees the failure; 0 otherwise.
    """
    progress = Progress(quiet=getattr(args, "quiet", False))
    if getattr(args, "export", None) is not None:
        export_data(args, progress=progress)
        return 0
    progress("closed forms of the lecture example and of the digits data")
    print_closed_forms(alpha=args.alpha)
    progress("loading digits, wine and the text corpus")
    jobs = demo_jobs(args)
    # A copy that carries the progress to each job (and each worker process); the caller's
    # namespace is left as it was.
    job_args = argparse.Namespace(**vars(args), progress=progress)
    verdicts = run_jobs(jobs, job_args, workers=getattr(args, "workers", 1))
    progress("done")
    print("\n== Summary ==")
    print(pd.DataFrame(verdicts).to_string(index=False))
    failed = [row["model"] for row in verdicts if row["posterior = closed form"] != "yes"]
    if failed:
        print(f"\nThe posterior disagrees with its closed form for: {', '.join(failed)}.")
        return 1
    return 0


def print_closed_forms(*, alpha: float = 1.0) -> None:
    """Print MLE and add-λ for the lecture example and the digits data."""
    print("== Seed 000: four e-mails over the vocabulary a, b, c (multinomial event model) ==")
    X, vectorizer = vectorize_text(SEED_EMAILS)
    words = vectorizer.get_feature_names_out()
    mle = cf.multinomial_nb(X, SEED_LABELS, alpha=0, class_alpha=0)
    smoothed = cf.multinomial_nb(X, SEED_LABELS, alpha=alpha, class_alpha=alpha)
    table = pd.DataFrame(
        {
            "MLE, y=1": mle["feature_prob"].sel({"class": 1}).values,
            "MLE, y=0": mle["feature_prob"].sel({"class": 0}).values,
            f"add-{alpha:g}, y=1": smoothed["feature_prob"].sel({"class": 1}).values,
            f"add-{alpha:g}, y=0": smoothed["feature_prob"].sel({"class": 0}).values,
        },
        index=pd.Index(words, name="word"),
    )
    print(table.round(4).to_string())
    query = vectorizer.transform([["b", "c"]])
    print(
        f"P(y=1 | 'b c'):  MLE {cf.predict_proba(mle, query)[0, 1]:.4f} (the notes: 0.6)   "
        f"add-{alpha:g} {cf.predict_proba(smoothed, query)[0, 1]:.4f}"
    )

    print("\n== scikit-learn digits: 8x8 pixel intensities 0-16 as counts ==")
    X_train, X_test, y_train, y_test = _split(*load_digits(return_X_y=True))
    multinomial = cf.multinomial_nb(X_train, y_train, alpha=alpha)
    bernoulli = cf.bernoulli_nb(X_train, y_train, alpha=alpha, binarize=7.5)
    for name, estimates in (("multinomial", multinomial), ("Bernoulli (x > 7.5)", bernoulli)):
        accuracy = np.mean(cf.predict(estimates, X_test) == y_test)
        gap = np.abs(estimates["feature_prob"] - estimates["feature_prob_mle"]).max().item()
        print(
            f"{name:>20}: held-out accuracy {accuracy:.3f}; largest |add-{alpha:g} - MLE| over "
            f"{estimates['feature_prob'].size} feature probabilities {gap:.4f}"
        )
    print("class prior add-λ vs MLE:")
    prior = pd.DataFrame(
        {
            "count": multinomial["class_count"].values.astype(int),
            "MLE": multinomial["class_prob_mle"].values,
            f"add-{alpha:g}": multinomial["class_prob"].values,
        },
        index=pd.Index(multinomial["class"].values, name="digit"),
    )
    print(prior.T.to_string(float_format="{:.4g}".format))


def run_jobs(jobs: list[Job], args: argparse.Namespace, *, workers: int = 1) -> list[dict]:
    """:func:`fit_compare_report` of every job, in ``workers`` processes; returns the rows
    in the order of ``jobs``.

    Each worker's printed results are collected and printed here in the jobs' order, so the
    output reads as in a run one job at a time; progress lines go to standard error as they
    happen. Workers are spawned, not forked: a fork of a process that holds BLAS and PyMC
    threads can deadlock.
    """
    workers = max(1, min(workers, len(jobs)))
    if workers == 1:
        return [fit_compare_report(job, args) for job in jobs]
    progress = _progress(args)
    progress(f"fitting and reporting {len(jobs)} models, {workers} at a time")
    sys.stdout.flush()
    context = multiprocessing.get_context("spawn")
    rows = []
    with ProcessPoolExecutor(
        max_workers=workers, mp_context=context, initializer=_one_blas_thread
    ) as pool:
        futures = [pool.submit(_fit_compare_report_captured, job, args) for job in jobs]
        for future in futures:
            printed, row = future.result()
            sys.stdout.write(printed)
            sys.stdout.flush()
            rows.append(row)
    return rows


def _one_blas_thread() -> None:
    """In a worker: one BLAS thread, as the workers already use the cores between them."""
    import scipy.linalg  # noqa: F401  (loads SciPy's BLAS, so that the limit reaches it too)
    from threadpoolctl import threadpool_limits

    threadpool_limits(1)  # NumPy's BLAS is loaded with this module


def _fit_compare_report_captured(job: Job, args: argparse.Namespace) -> tuple[str, dict]:
    """:func:`fit_compare_report` in a worker: what it prints, and its row."""
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        row = fit_compare_report(job, args)
    return printed.getvalue(), row


def default_workers(inference: str = "nuts") -> int:
    """Worker processes of the demo: 1 for NUTS; for exact conjugate draws, 2 where the
    machine has 2 cores or more and about one of them is idle (load average below
    cores − 0.5), else 1.

    A NUTS fit already runs its chains in one process per core (PyMC's ``cores``), so a
    second worker only makes more processes than cores. On 2 cores the NUTS demo took, with a
    warm compile cache, 181-192 s with one worker against 218-258 s with two (296-311 against
    422-502 CPU seconds), and cold 345 s against 333-337 s (461 against 643-649 CPU seconds;
    docs/performance.md, "Seventh round"). Conjugate fits sample in the process itself: there
    a second worker halves the demo on an idle machine (47 s against 85 s), and on a busy one
    only adds its start-up (each imports PyMC, ArviZ and matplotlib): measured at load 4,
    175 s with two workers against 145 s with one ("Demo timings").

    Examples
    --------
    >>> from bayesgen.demo import default_workers
    >>> default_workers("nuts")
    1
    """
    cores = os.cpu_count() or 1
    if inference == "nuts" or cores < 2:
        return 1
    try:
        busy = os.getloadavg()[0]
    except OSError:  # no load average on this system
        busy = 0.0
    return 2 if busy < cores - 0.5 else 1


def demo_jobs(args: argparse.Namespace) -> list[Job]:
    """The demo's fits: digits (four event models), wine (GDA, QDA and Gaussian naive
    Bayes), the penguins' mixed columns and a text corpus."""
    common = {
        "inference": args.inference,
        "draws": args.draws,
        "tune": args.tune,
        "random_seed": args.seed,
        # PyMC's bars from worker processes would overwrite one another (and land in the
        # captured results); the workers' progress lines say what runs instead.
        "progressbar": not args.quiet and getattr(args, "workers", 1) == 1,
        "prior_draws": 200,
        # 4 chains (2 at a time on 2 cores): with only 2, an R-hat just above 1.01 turns up
        # by chance among hundreds of parameters.
        "chains": 4,
        "compute_map": not args.no_map,
    }
    digits = load_digits()
    pixels = [f"pixel_{r}_{c}" for r in range(8) for c in range(8)]
    # _split returns (X_train, X_test, y_train, y_test); Job wants X_train, y_train, X_test, y_test.
    dX_train, dX_test, dy_train, dy_test = _split(
        pd.DataFrame(digits.data, columns=pixels), digits.target
    )
    d = (dX_train, dy_train, dX_test, dy_test)
    wine = load_wine(as_frame=True)
    wX_train, wX_test, wy_train, wy_test = _split(wine.data, wine.target_names[wine.target])
    w = (wX_train, wy_train, wX_test, wy_test)
    penguins, species = load_penguins()
    pX_train, pX_test, py_train, py_test = _split(penguins, species)
    p = (pX_train, py_train, pX_test, py_test)
    texts, labels = _text_corpus(args)
    t_train, t_test, l_train, l_test = _split(np.asarray(texts, dtype=object), np.asarray(labels))
    counts = CountVectorizer().fit(t_train)
    words = counts.get_feature_names_out().tolist()
    corpus = "sms-spam" if args.dataset == "sms-spam" else "toy-spam"
    return [
        Job("digits-multinomial", MultinomialNB(alpha=args.alpha, **common), *d),
        Job(
            "digits-bernoulli",
            BernoulliNB(alpha=args.alpha, binarize=7.5, **common),
            *d,
        ),
        Job(
            "digits-categorical",
            CategoricalNB(alpha=args.alpha, n_categories=4, **common),
            dX_train // 5,
            dy_train,
            dX_test // 5,
            dy_test,
        ),
        Job("digits-poisson", PoissonNB(**common), *d),
        Job("wine-gda", GaussianDiscriminantAnalysis(**common), *w),
        Job("wine-qda", QuadraticDiscriminantAnalysis(**common), *w),
        Job("wine-gaussian-nb", GaussianNB(**common), *w),
        # A table of mixed columns: island and sex (categories) beside four measurements.
        Job("penguins-mixed", NaiveBayes(**common), *p),
        Job(
            f"{corpus}-multinomial",
            MultinomialNB(alpha=args.alpha, **common),
            counts.transform(t_train),
            l_train,
            counts.transform(t_test),
            l_test,
            words,
        ),
        Job(
            f"{corpus}-bernoulli",
            BernoulliNB(alpha=args.alpha, **common),
            (counts.transform(t_train) > 0).astype(float),
            l_train,
            (counts.transform(t_test) > 0).astype(float),
            l_test,
            words,
        ),
    ]


def fit_compare_report(job: Job, args: argparse.Namespace) -> dict:
    """Fit one job, save it, compare it, report it; returns its summary row.

    A progress line (``args.progress``, else one made from ``args.quiet``) comes before each
    step, and before a fit that compiles a PyMC graph a line says so.
    """
    progress = _progress(args)
    estimator = job.estimator
    print(f"\n== {job.name}: {type(estimator).__name__} ==")
    if estimator.inference == "nuts":
        # Only NUTS and find_MAP compile; find_MAP runs only where no closed-form mode exists
        # (a hyperprior on λ, GDA's LKJ prior): a conjugate prior's MAP is exact even after NUTS.
        graphs = "the NUTS and MAP graphs" if _optimises_map(estimator) else "the NUTS graph"
        progress.compiling(graphs, job.name)
        progress(
            f"{job.name}: NUTS, {estimator.chains} chains × ({estimator.tune} tuning + "
            f"{estimator.draws} draws)"
        )
    else:
        progress(f"{job.name}: fitting the exact conjugate posterior (nothing to compile)")
    start = time.perf_counter()
    estimator.fit(job.X_train, job.y_train, feature_names=job.feature_names)
    seconds = time.perf_counter() - start
    model_path = Path(args.models_dir) / f"{job.name}.nc"
    progress(f"{job.name}: saving {model_path}")
    estimator.save(model_path)
    progress(f"{job.name}: comparing the posterior with the closed forms")
    # The default threshold is family-wise (1% over all checks of the model), so a correct
    # posterior with hundreds of parameters is not flagged for one |z| > 4 met by chance.
    comparison = checks.compare(estimator)
    print(comparison)
    progress(f"{job.name}: held-out accuracy")
    with _predictions_shared(estimator, job.X_test):
        accuracy = float(np.mean(estimator.predict(job.X_test) == job.y_test))
        row = _report(job, args, estimator, comparison, model_path, seconds, accuracy)
    progress(f"{job.name}: finished")
    return row


def _optimises_map(estimator) -> bool:
    """Whether a NUTS fit of ``estimator`` compiles a find_MAP graph too (the estimator's own
    rule, see its ``compute_map``)."""
    return bool(estimator.compute_map) and estimator._map_by_optimiser()


def _report(job: Job, args, estimator, comparison, model_path: Path, seconds, accuracy) -> dict:
    """The job's summary row, after writing its report unless ``--no-reports``."""
    progress = _progress(args)
    row = {
        "model": job.name,
        "fit seconds": round(seconds, 1),
        "held-out accuracy": round(accuracy, 3),
        "posterior = closed form": "yes" if comparison.ok else "NO",
        "saved": str(model_path),
    }
    if not args.no_reports:
        out_dir = Path(args.reports_dir) / job.name
        progress(f"{job.name}: writing the report in {out_dir}")
        index = reporting.report(
            estimator,
            out_dir,
            X_test=job.X_test,
            y_test=job.y_test,
            progress=lambda message: progress(f"{job.name}: report: {message}"),
            comparison=comparison,
        )
        row["report"] = str(index)
    return row


@contextlib.contextmanager
def _predictions_shared(estimator, X):
    """Within the block, ``estimator.predict_proba(X)`` for this very ``X`` is computed once.

    The held-out accuracy and the report's calibration diagram both need the posterior-mean
    probabilities of the held-out rows, each a pass over every posterior draw (seconds for
    the digits models); each caller gets its own copy. Other inputs go to the estimator's own
    method, which is restored afterwards.
    """
    method = estimator.predict_proba
    cached = []

    def predict_proba(rows):
        if rows is not X:
            return method(rows)
        if not cached:
            cached.append(method(rows))
        return cached[0].copy()

    estimator.predict_proba = predict_proba
    try:
        yield
    finally:
        del estimator.predict_proba


def _progress(args: argparse.Namespace) -> Progress:
    progress = getattr(args, "progress", None)
    return progress if progress is not None else Progress(quiet=getattr(args, "quiet", False))


def export_data(args: argparse.Namespace, *, progress: Progress | None = None) -> list[Path]:
    """Write the demo's data sets as CSV files into ``args.export``; returns their paths.

    ``messages.csv`` and ``new_messages.csv`` (columns ``text``, ``label``) are the text
    corpus's training and held-out messages, the split the demo fits and tests on;
    ``digits.csv`` (64 pixel columns and ``digit``) and ``wine.csv`` (13 measurements and
    ``cultivar``) are scikit-learn's, and ``penguins.csv`` (island, sex, four measurements
    and ``species``) palmerpenguins'. The commands that use them are printed.
    """
    progress = progress if progress is not None else Progress(quiet=True)
    folder = check_output_path(args.export, argument="--export", folder=True)
    texts, labels = _text_corpus(args)
    t_train, t_test, l_train, l_test = _split(np.asarray(texts, dtype=object), np.asarray(labels))
    digits = load_digits(as_frame=True)
    digit_table = digits.data.astype(int)
    digit_table.columns = [f"pixel_{r}_{c}" for r in range(8) for c in range(8)]
    wine = load_wine(as_frame=True)
    tables = {
        "messages.csv": pd.DataFrame({"text": t_train, "label": l_train}),
        "new_messages.csv": pd.DataFrame({"text": t_test, "label": l_test}),
        "digits.csv": digit_table.assign(digit=digits.target),
        "wine.csv": wine.data.assign(cultivar=wine.target_names[wine.target]),
        "penguins.csv": _penguin_table(),
    }
    written = []
    for name, table in tables.items():
        progress(f"writing {folder / name}")
        written.append(write_csv(table, folder / name, index=False))
        print(f"wrote {folder / name} ({len(table)} rows, {table.shape[1]} columns)")
    models = Path("models")
    print(
        "\nTry:\n"
        f"  bayesgen fit multinomial {folder / 'messages.csv'} --target label --text-column text"
        f" --output {models / 'spam.nc'}\n"
        f"  bayesgen predict {models / 'spam.nc'} {folder / 'new_messages.csv'}"
        " --text-column text\n"
        f"  bayesgen fit gda {folder / 'wine.csv'} --target cultivar\n"
        f"  bayesgen fit categorical {folder / 'digits.csv'} --target digit --inference conjugate\n"
        f"  bayesgen fit mixed {folder / 'penguins.csv'} --target species --plan"
    )
    return written


def _penguin_table() -> pd.DataFrame:
    penguins, species = load_penguins()
    return penguins.assign(species=species)


def _text_corpus(args: argparse.Namespace) -> tuple[list[str], list[str]]:
    if args.dataset == "sms-spam":
        return load_sms_spam(args.data_path, download=args.download)
    return load_toy_spam()


def _split(X, y):
    return train_test_split(X, y, test_size=0.25, random_state=0, stratify=y)
