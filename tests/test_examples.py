"""Every script in examples/ runs, with small draws, in a fresh process."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SMS_SPAM = ROOT.parent / "shared" / "data" / "sms_spam" / "SMSSpamCollection.tsv"


def run_example(name: str, *args: str, cwd: Path) -> str:
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=os.environ | {"MPLBACKEND": "Agg"},
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_fit_posterior_prints_intervals_and_flags_spam(tmp_path):
    out = run_example(
        "fit_posterior.py", "--draws", "200", "--inference", "conjugate", cwd=tmp_path
    )
    assert "P('now' | spam)" in out or "| spam) =" in out
    spam_line = next(line for line in out.splitlines() if "claim your free cash" in line)
    ham_line = next(line for line in out.splitlines() if "lunch tomorrow" in line)
    p_spam = float(spam_line.split("=")[1].split()[0])
    p_ham_message = float(ham_line.split("=")[1].split()[0])
    assert p_spam > 0.5 > p_ham_message


def test_map_vs_smoothing_shows_both_identities(tmp_path):
    out = run_example("map_vs_smoothing.py", "--draws", "2000", cwd=tmp_path)
    lines = [line for line in out.splitlines() if "max |diff|" in line]
    assert len(lines) == 2
    mean_gap, map_gap = (float(line.split("=")[1].split()[0]) for line in lines)
    assert mean_gap < 5e-3  # Monte Carlo error of 4,000 draws
    assert map_gap < 1e-3  # L-BFGS-B tolerance


def test_diagnostic_plots_writes_images_and_report(tmp_path):
    run_example("diagnostic_plots.py", "--draws", "200", "--out", str(tmp_path / "d"), cwd=tmp_path)
    for name in ("trace.png", "rank.png", "ess.png", "energy.png", "report/index.html"):
        assert (tmp_path / "d" / name).stat().st_size > 0


def test_gda_beats_logistic_on_gaussian_and_loses_on_poisson_with_many_rows(tmp_path):
    out = run_example("gda_vs_logistic.py", "--draws", "100", "--repeats", "3", cwd=tmp_path)
    assert "Gaussian x | y, 20 training rows: lower held-out log loss with GDA" in out
    assert (
        "Poisson x | y, 2000 training rows: lower held-out log loss with logistic regression"
    ) in out


def test_spam_pipeline_on_the_bundled_corpus(tmp_path):
    out = run_example("spam_pipeline.py", "--draws", "100", cwd=tmp_path)
    assert "best alpha" in out
    accuracy = float(next(line for line in out.splitlines() if "accuracy" in line).split()[2])
    assert accuracy >= 0.75


@pytest.mark.skipif(not SMS_SPAM.exists(), reason=f"no SMS Spam Collection at {SMS_SPAM}")
def test_spam_pipeline_on_sms_spam_is_accurate(tmp_path):
    out = run_example(
        "spam_pipeline.py", "--draws", "100", "--data-path", str(SMS_SPAM), cwd=tmp_path
    )
    accuracy = float(next(line for line in out.splitlines() if "accuracy" in line).split()[2])
    assert accuracy >= 0.95


@pytest.mark.skipif(not SMS_SPAM.exists(), reason=f"no SMS Spam Collection at {SMS_SPAM}")
def test_sms_predictive_checks_find_what_each_event_model_misses(tmp_path):
    """Both checks must flag their model: real messages have fewer distinct words than a
    multinomial simulates (burstiness) and fewer present words than add-1 Bernoulli does."""
    out = run_example(
        "sms_predictive_checks.py", "--draws", "20", "--data", str(SMS_SPAM), cwd=tmp_path
    )
    for model, statistic in (("multinomial", "distinct_words"), ("Bernoulli", "present_features")):
        line = next(line for line in out.splitlines() if line.startswith(f"{model}: {statistic}"))
        observed = float(line.split("observed mean ")[1].split(";")[0])
        high = float(line.split(" to ")[1].split(")")[0])
        low = float(line.split("interval ")[1].split(" to ")[0])
        assert observed < low < high


def test_sms_event_models_prints_the_comparison(tmp_path):
    out = run_example("sms_event_models.py", cwd=tmp_path)
    assert "elpd_loo" in out and "accuracy_loo" in out


@pytest.mark.skipif(not SMS_SPAM.exists(), reason=f"no SMS Spam Collection at {SMS_SPAM}")
def test_sms_event_models_prefers_the_multinomial_model_on_sms_spam(tmp_path):
    out = run_example("sms_event_models.py", "--data-path", str(SMS_SPAM), cwd=tmp_path)
    assert "The multinomial event model suits this text better" in out


def test_dask_text_shards_fits_on_a_local_cluster_as_in_memory(tmp_path):
    pytest.importorskip("distributed")
    out = run_example("dask_text_shards.py", "--draws", "20", "--shards", "5", cwd=tmp_path)
    assert "50 messages in 5 shards, 5 chunks reduced on 2 workers" in out
    assert "max |dask - in memory| = 0.0e+00" in out


def test_choose_smoothing_reports_each_choice_and_ranks_them_exactly(tmp_path):
    import numpy as np
    from sklearn.feature_extraction.text import CountVectorizer

    from bayesgen import closed_form
    from bayesgen.datasets import load_toy_spam
    from bayesgen.smoothing import evidence_alpha

    out = run_example("choose_smoothing.py", cwd=tmp_path)
    texts, labels = load_toy_spam()
    counts = CountVectorizer().fit_transform(texts)
    lam = evidence_alpha(closed_form.multinomial_nb(counts, labels))
    assert f'alpha="evidence": λ = {lam:.3g}' in out
    per_class = next(line for line in out.splitlines() if '"evidence_per_class": λ' in line)
    assert "ham:" in per_class and "spam:" in per_class and "log Bayes factor" in per_class
    assert "alpha_prior=(1, 1): λ | D = " in out
    table = [line for line in out.splitlines() if " exact " in line or " psis " in line]
    assert len(table) == 5
    assert all(" exact " in line for line in table)  # the hyperprior's too: no PSIS
    elpd = [float(line.split()[-7]) for line in table]
    assert elpd == sorted(elpd, reverse=True)
    best = table[0].split("  ")[0]
    assert f"Best by the leave-one-out log score of the labels: {best}" in out
    assert np.isfinite(elpd).all()
