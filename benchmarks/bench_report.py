"""Where the seconds of a report on SMS Spam go: ``bayesgen.report`` timed step by step.

Issue 26 asks for a report on SMS Spam (NUTS, 500 features) in at most 5 s. The benchmark fits
``MultinomialNB(inference=...)`` on a stratified 80 / 20 split of the collection
(``CountVectorizer(max_features=500)``, ``random_state=0``), then writes the report with the
held-out 20 % and times each of its progress lines: the time from one line to the next is the
step's. The fit is timed too but is not the report's. ``--repeats`` writes the report again
into a fresh folder; the first report of a process pays for matplotlib's and ArviZ's first
figure, so each repeat is listed.

Run (from the project root)::

    .venv/bin/python benchmarks/bench_report.py --data ../shared/data/sms_spam/SMSSpamCollection.tsv
    .venv/bin/python benchmarks/bench_report.py --data ... --inference conjugate --repeats 2
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from datetime import date
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import bayesgen  # after the backend is chosen
from bayesgen.input.datasets import load_sms_spam


class StepClock:
    """A ``progress`` callable that records (message, seconds since the previous message)."""

    def __init__(self) -> None:
        self.steps: list[tuple[str, float]] = []
        self._current: str | None = None
        self._since = time.perf_counter()

    def __call__(self, message: str) -> None:
        self._close()
        self._current = message

    def _close(self) -> None:
        now = time.perf_counter()
        if self._current is not None:
            self.steps.append((self._current, now - self._since))
        self._since = now

    def finish(self) -> list[tuple[str, float]]:
        self._close()
        self._current = None
        return self.steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="SMSSpamCollection.tsv")
    parser.add_argument("--inference", default="nuts", choices=["nuts", "conjugate"])
    parser.add_argument("--features", type=int, default=500)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--loo-rounds", type=int, default=0)
    args = parser.parse_args()

    from sklearn.feature_extraction.text import CountVectorizer
    from sklearn.model_selection import train_test_split

    texts, labels = load_sms_spam(args.data)
    train_texts, test_texts, y_train, y_test = train_test_split(
        texts, labels, test_size=0.2, stratify=labels, random_state=0
    )
    vectorizer = CountVectorizer(max_features=args.features)
    X_train = vectorizer.fit_transform(train_texts)
    X_test = vectorizer.transform(test_texts)
    print(
        f"{date.today()}  load {os.getloadavg()[0]:.2f}  SMS Spam: {X_train.shape[0]:,} training "
        f"and {X_test.shape[0]:,} held-out messages, {X_train.shape[1]} features; "
        f"inference={args.inference}"
    )
    start = time.perf_counter()
    est = bayesgen.MultinomialNB(inference=args.inference, random_seed=0).fit(X_train, y_train)
    print(f"fit: {time.perf_counter() - start:.1f} s")

    if args.loo_rounds:
        compare_loo(est, args.loo_rounds)
    for repeat in range(args.repeats):
        clock = StepClock()
        with tempfile.TemporaryDirectory() as folder:
            start = time.perf_counter()
            bayesgen.report(est, Path(folder) / "report", X_test, y_test, progress=clock)
            total = time.perf_counter() - start
            steps = clock.finish()
        print(f"\nreport {repeat + 1}: {total:.2f} s")
        for message, seconds in steps:
            print(f"  {seconds:6.2f} s  {message}")


def compare_loo(est, rounds: int) -> None:
    """``arviz.loo`` against ``joint_loo`` on the fit's rows, alternately; min and median."""
    import warnings

    import arviz as az
    import numpy as np

    from bayesgen.checks.loo import joint_loo

    def arviz_loo():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return az.loo(est.idata_, var_name="y", pointwise=True)

    times = {"arviz.loo": [], "joint_loo": []}
    last = {}
    for _ in range(rounds):
        for name, function in (("arviz.loo", arviz_loo), ("joint_loo", lambda: joint_loo(est))):
            start = time.perf_counter()
            last[name] = function()
            times[name].append(time.perf_counter() - start)
    ours, theirs = last["joint_loo"], last["arviz.loo"]
    k_diff = np.nanmax(np.abs(ours.pareto_k.values - theirs.pareto_k.values))
    print(f"PSIS-LOO of {ours.n_data_points:,} rows x {ours.n_samples:,} draws, {rounds} rounds:")
    for name, values in times.items():
        median = sorted(values)[len(values) // 2]
        print(f"  {name:10s} min {min(values):.2f} s  median {median:.2f} s")
    print(f"  elpd {ours.elpd:.6f} vs {theirs.elpd:.6f}; max |k difference| {k_diff:.1e}")


if __name__ == "__main__":
    main()
