"""The demo computes each expensive quantity once: the comparison it prints is the one its
report shows, the held-out probabilities serve both the accuracy and the calibration diagram,
and the report's rank plot ranks a thinned subset of draws (and says so)."""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd
import pytest

import bayesgen
from bayesgen import demo
from bayesgen.checks import comparison as checks
from bayesgen.plotting import plots
from bayesgen.plotting import report as reporting

# Two classes over three words; the conjugate posterior and its MAP are closed forms.
_X = np.array([[2, 0, 1], [1, 1, 0], [0, 3, 1], [0, 2, 2], [3, 0, 0], [0, 1, 3]])
_Y = np.array(["spam", "spam", "ham", "ham", "spam", "ham"])


def _fit(draws: int = 100) -> bayesgen.MultinomialNB:
    return bayesgen.MultinomialNB(
        inference="conjugate",
        compute_map=False,
        draws=draws,
        chains=2,
        prior_draws=0,
        random_seed=0,
    ).fit(_X, _Y)


# -- the comparison, once ---------------------------------------------------------------------


def test_report_writes_the_comparison_it_is_given_and_computes_none(tmp_path, monkeypatch):
    est = _fit()
    given = checks.compare(est)

    def no_second_compare(*args, **kwargs):
        raise AssertionError("compare ran again")

    monkeypatch.setattr(checks, "compare", no_second_compare)
    monkeypatch.setattr(reporting, "_plan", lambda *args, **kwargs: iter(()))  # no plots
    index = reporting.report(est, tmp_path / "report", comparison=given)
    written = pd.read_csv(index.parent / "comparison.csv")
    assert set(given.table.columns) <= set(written.columns)
    np.testing.assert_allclose(written["posterior_mean"], given.table["posterior_mean"])


def test_report_refuses_a_comparison_that_is_not_one(tmp_path):
    with pytest.raises(TypeError, match=r"comparison: expected the Comparison .* got dict"):
        reporting.report(_fit(), tmp_path / "report", comparison={"ok": True})
    assert not (tmp_path / "report").exists()


# -- the held-out probabilities, once ---------------------------------------------------------


def test_held_out_probabilities_are_computed_once_for_accuracy_and_calibration(monkeypatch):
    est = _fit()
    expected = est.predict_proba(_X[:4])
    calls = []
    original = type(est).predict_proba

    def counted(self, X):
        calls.append(len(X))
        return original(self, X)

    monkeypatch.setattr(type(est), "predict_proba", counted)
    X_test = _X[:4]
    with demo._predictions_shared(est, X_test):
        labels = est.predict(X_test)
        table = plots.calibration_table(est, X_test, _Y[:4], n_bins=2)
        first = est.predict_proba(X_test)
        first[:] = -1.0  # a caller's copy: changing it changes no one else's
        np.testing.assert_array_equal(est.predict_proba(X_test), expected)
        est.predict_proba(_X[4:])  # other rows: the estimator's own method
    assert calls == [4, 2]
    np.testing.assert_array_equal(labels, est.classes_[expected.argmax(axis=1)])
    assert table["n"].sum() == 4
    assert "predict_proba" not in vars(est)  # the estimator's method again
    est.predict_proba(X_test)
    assert calls == [4, 2, 4]


# -- the rank plot on a thinned subset ---------------------------------------------------------


@pytest.mark.parametrize(
    ("max_draws", "step"), [(None, 1), (100, 1), (500, 1), (30, 4), (25, 4), (24, 5), (1, 100)]
)
def test_rank_thinning_keeps_at_most_max_draws_per_chain(max_draws, step):
    assert plots.rank_thinning(_fit(draws=100), max_draws) == step


@pytest.mark.parametrize("bad", [0, -3, 2.5, "250", True])
def test_rank_thinning_refuses_what_is_not_a_positive_integer(bad):
    with pytest.raises(ValueError, match=r"max_draws: expected a positive integer or None, got"):
        plots.rank_thinning(_fit(), bad)


def test_plot_rank_ranks_every_kth_draw_of_each_chain(monkeypatch):
    import arviz as az

    est = _fit(draws=100)
    seen = {}
    original = az.plot_rank

    def recording(data, **kwargs):
        seen["posterior"] = data["posterior"].to_dataset()
        return original(data, **kwargs)

    monkeypatch.setattr(az, "plot_rank", recording)
    pc = plots.plot_rank(est, max_draws=25)
    pc.viz["figure"].item().clf()
    posterior = seen["posterior"]
    assert posterior.sizes["draw"] == 25 and posterior.sizes["chain"] == 2
    full = est.idata_["posterior"]["class_prob"].values
    np.testing.assert_array_equal(posterior["class_prob"].values, full[:, ::4])


def _rank_caption(est) -> str:
    plan = reporting._plan(est, None, None, max_features=2, top_k=2)
    return next(section.caption for section, _ in plan if section.title == "Rank")


def test_report_rank_caption_says_how_the_draws_were_thinned():
    caption = _rank_caption(_fit(draws=1000))
    assert reporting.RANK_MAX_DRAWS == 250
    assert "one draw in 4 (250 of 1000 per chain, evenly spaced)" in caption
    assert "grey band" in caption and "α = 0.001 over the number of panels" in caption


def test_report_rank_caption_says_nothing_of_thinning_when_none_is_done():
    assert "one draw in" not in _rank_caption(_fit(draws=100))


def test_the_demo_passes_its_comparison_to_the_report(tmp_path, monkeypatch):
    received = {}

    def fake_report(est, out_dir, X_test=None, y_test=None, *, progress=None, comparison=None):
        received["comparison"] = comparison
        received["shared"] = "predict_proba" in vars(est)  # inside the shared block
        return out_dir / "index.html"

    printed = []
    original_compare = checks.compare

    def recorded_compare(est, **kwargs):
        printed.append(original_compare(est, **kwargs))
        return printed[-1]

    monkeypatch.setattr(reporting, "report", fake_report)
    monkeypatch.setattr(checks, "compare", recorded_compare)
    est = bayesgen.MultinomialNB(
        inference="conjugate", draws=50, chains=2, prior_draws=0, random_seed=0
    )
    job = demo.Job("tiny", est, _X, _Y, _X[:2], _Y[:2], ["a", "b", "c"])
    args = argparse.Namespace(
        models_dir=str(tmp_path / "models"),
        reports_dir=str(tmp_path / "reports"),
        no_reports=False,
        quiet=True,
    )
    row = demo.fit_compare_report(job, args)
    assert len(printed) == 1 and received["comparison"] is printed[0]
    assert received["shared"] is True
    assert "predict_proba" not in vars(est)
    assert row["posterior = closed form"] == "yes"


# -- the NUTS demo announces only the graphs it compiles ---------------------------------------


@pytest.mark.parametrize(
    ("estimator", "compiles"),
    [
        (bayesgen.MultinomialNB(), False),  # conjugate Dirichlet prior: exact mode
        (bayesgen.GaussianDiscriminantAnalysis(), False),  # normal-inverse-Wishart: exact mode
        (bayesgen.MultinomialNB(alpha_prior=(2.0, 1.0)), True),  # joint mode with λ: find_MAP
        (bayesgen.GaussianDiscriminantAnalysis(cov_prior="lkj"), True),
        (bayesgen.GaussianDiscriminantAnalysis(cov_prior="lkj", compute_map=False), False),
        (bayesgen.MultinomialNB(compute_map="find_map"), True),  # asked for
    ],
)
def test_a_map_graph_is_announced_only_where_find_map_runs(estimator, compiles):
    assert demo._optimises_map(estimator.set_params(inference="nuts")) is compiles
