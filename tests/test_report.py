"""Plots (bayesgen.plotting.plots) and the HTML report (bayesgen.plotting.report)."""

import dataclasses
import html
import shutil
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from arviz_plots import PlotCollection, PlotMatrix
from conftest import offline_chromium
from matplotlib.figure import Figure

from bayesgen import GaussianDiscriminantAnalysis, MultinomialNB
from bayesgen import closed_form as cf
from bayesgen.plotting import plots
from bayesgen.plotting import predictive as plots_predictive
from bayesgen.plotting.report import report
from bayesgen.plotting.selection import mpl_text

SCRIPT = "<script>alert(1)</script>"
CLASSES = ["ham", "<i>spam</i>"]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _word_counts(rng, n: int) -> tuple[pd.DataFrame, np.ndarray]:
    """Counts over 12 words; SCRIPT is the most frequent word of both classes."""
    rates = rng.gamma(2.0, 0.5, size=(2, 12))
    rates[:, 0] = 4.0
    rates[1, 1:4] *= 3
    codes = np.arange(n) % 2
    X = rng.poisson(rates[codes])
    names = [SCRIPT, *(f"w{j}" for j in range(1, 12))]
    return pd.DataFrame(X, columns=names), np.array(CLASSES)[codes]


@pytest.fixture(scope="module")
def text_data():
    rng = np.random.default_rng(0)
    X, y = _word_counts(rng, 120)
    return X[:80], y[:80], X[80:], y[80:]


@pytest.fixture(scope="module")
def mnb(text_data):
    X, y, _, _ = text_data
    return MultinomialNB(inference="conjugate", compute_map=False, draws=200, random_seed=0).fit(
        X, y
    )


@pytest.fixture(scope="module")
def gda_data():
    rng = np.random.default_rng(1)
    codes = np.arange(120) % 2
    X = rng.normal(size=(120, 2)) + 2.0 * codes[:, None]
    return X[:80], codes[:80], X[80:], codes[80:]


@pytest.fixture(scope="module")
def gda(gda_data):
    X, y, _, _ = gda_data
    return GaussianDiscriminantAnalysis(
        inference="conjugate", compute_map=False, draws=200, random_seed=0
    ).fit(X, y)


@pytest.fixture(scope="module")
def mnb_report(mnb, text_data, tmp_path_factory):
    _, _, X_test, y_test = text_data
    return report(mnb, tmp_path_factory.mktemp("mnb_report"), X_test, y_test)


def _figure(plot) -> Figure:
    return plot if isinstance(plot, Figure) else plot.viz["figure"].item()


def _panels(pc) -> int:
    """Number of plots (axes holding data) in a PlotCollection."""
    return sum(panels.size for panels in pc.viz["plot"].data_vars.values())


def _labelled_lines(figure: Figure, label: str) -> list:
    return [line for ax in figure.axes for line in ax.lines if line.get_label() == label]


# -- choosing what to plot -------------------------------------------------------------------


def test_selected_features_are_the_most_probable_by_the_closed_form(mnb):
    chosen = plots.selected_features(mnb, max_features=3)
    best = mnb.closed_form_["feature_prob"].max("class").to_series()
    assert chosen == list(best.sort_values(ascending=False, kind="stable").index[:3])
    assert chosen[0] == SCRIPT


def test_dollar_signs_are_escaped_for_matplotlib():
    assert mpl_text("$5 $10") == r"\$5 \$10"


# -- MCMC diagnostics -----------------------------------------------------------------------


def test_plot_trace_shows_class_prob_and_the_selected_features(mnb):
    pc = plots.plot_trace(mnb, max_features=2)
    assert isinstance(pc, PlotCollection)
    panels = pc.viz["plot"]
    assert set(panels.data_vars) == {"class_prob", "feature_prob"}
    shown = [mpl_text(f) for f in plots.selected_features(mnb, max_features=2)]
    assert panels["feature_prob"]["feature"].values.tolist() == shown


def test_plot_trace_is_compact_beyond_twelve_scalars(mnb):
    # 2 class_prob + 2 x 6 feature_prob = 14 scalars: one row per variable, density and trace.
    assert _panels(plots.plot_trace(mnb, max_features=6)) == 2 * 2
    assert _panels(plots.plot_trace(mnb, max_features=1)) == 2 * (2 + 2)


@pytest.mark.parametrize("plot", [plots.plot_rank, plots.plot_ess])
def test_rank_and_ess_plots_have_one_panel_per_scalar(mnb, plot):
    pc = plot(mnb, max_features=2)
    assert isinstance(pc, PlotCollection)
    assert _panels(pc) == 2 + 2 * 2


def test_unknown_var_names_are_rejected(mnb):
    with pytest.raises(ValueError, match="not in the posterior"):
        plots.plot_rank(mnb, var_names=["theta"])


def test_plot_energy_explains_that_conjugate_fits_have_no_energy(mnb):
    assert not plots.has_energy(mnb)
    with pytest.raises(ValueError, match="conjugate"):
        plots.plot_energy(mnb)


# -- posterior against closed forms and prior -------------------------------------------------


def test_reference_lines_sit_at_add_lambda_and_mle(mnb):
    pc = plots.plot_posterior_vs_closed_form(mnb, max_features=2)
    figure = _figure(pc)
    n_scalars = 2 + 2 * 2
    assert _panels(pc) == n_scalars
    chosen = plots.selected_features(mnb, max_features=2)
    stats = mnb.closed_form_.sel(feature=chosen)
    for label, name in (("add-λ", "feature_prob"), ("MLE", "feature_prob_mle")):
        assert len(_labelled_lines(figure, label)) == n_scalars
        lines = pc.viz[label]["feature_prob"]
        for c in range(len(mnb.classes_)):
            for j in range(len(chosen)):
                x = lines.isel({"class": c, "feature": j}).item().get_xdata()[0]
                assert x == pytest.approx(stats[name].values[c, j], rel=1e-12)
    assert not _labelled_lines(figure, "MAP")  # compute_map=False


def test_map_line_sits_at_the_closed_form_posterior_mode(text_data):
    X, y, _, _ = text_data
    # alpha = 2 keeps the Dirichlet mode interior: (n + 1) / (N + V).
    est = MultinomialNB(alpha=2.0, inference="conjugate", draws=100, random_seed=0).fit(X, y)
    pc = plots.plot_posterior_vs_closed_form(est, var_names=["feature_prob"], max_features=3)
    chosen = plots.selected_features(est, max_features=3)
    mode = cf.dirichlet_mode(est.closed_form_["feature_count"].values, 2.0)
    columns = [list(est.closed_form_["feature"].values).index(f) for f in chosen]
    lines = pc.viz["MAP"]["feature_prob"]
    drawn = np.vectorize(lambda line: line.get_xdata()[0])(lines.values)
    np.testing.assert_allclose(drawn, mode[:, columns], atol=1e-4)


def test_prior_posterior_draws_both_densities(mnb):
    pc = plots.plot_prior_posterior(mnb, max_features=1)
    assert isinstance(pc, PlotCollection)
    for panel in pc.viz["plot"]["feature_prob"].values.flat:
        assert len(panel.lines) == 2  # prior and posterior


def test_top_features_lists_the_k_most_probable_words_per_class(mnb):
    figure = plots.plot_top_features(mnb, k=5)
    assert len(figure.axes) == len(mnb.classes_)
    for ax, cls in zip(figure.axes, mnb.classes_, strict=True):
        probs = mnb.closed_form_["feature_prob"].sel({"class": cls}).to_series()
        expected = list(probs.sort_values(ascending=False, kind="stable").index[:5])
        ticks = sorted(ax.get_yticklabels(), key=lambda t: -t.get_position()[1])
        shown = [t.get_text() for t in ticks]  # top row first
        assert shown == expected
        assert len(ax.collections) == 2  # thin (94 %) and thick (50 %) interval lines


def test_top_features_shorten_long_feature_names(tmp_path):
    rng = np.random.default_rng(3)
    X, y = _word_counts(rng, 60)
    X.columns = [f"a rather long feature name number {j}, as a vectorizer makes" for j in range(12)]
    est = MultinomialNB(inference="conjugate", compute_map=False, draws=50, random_seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # e.g. "constrained_layout not applied"
        figure = plots.plot_top_features(est.fit(X, y), k=3)
        figure.draw_without_rendering()
    shown = [t.get_text() for ax in figure.axes for t in ax.get_yticklabels()]
    assert shown and all(len(text) == 30 and text.endswith("…") for text in shown)
    assert all(X.columns[0].startswith(text[:-1]) for text in shown)


# -- GDA ------------------------------------------------------------------------------------------


def test_mu_pair_plot_is_a_plot_matrix(gda):
    assert isinstance(plots.plot_mu_pair(gda), PlotMatrix)


def test_top_features_of_two_class_gda_are_the_log_odds_weights(gda):
    (ax,) = plots.plot_top_features(gda, k=2).axes
    assert ax.get_title() == "log-odds of class 1"
    assert len(ax.get_yticklabels()) == 2


def test_decision_boundary_draws_one_line_per_posterior_draw(gda, gda_data):
    _, _, X_test, y_test = gda_data
    figure = plots.plot_decision_boundary(gda, X_test, y_test, n_boundaries=30)
    (ax,) = figure.axes
    gids = [c.get_gid() for c in ax.collections]
    assert gids.count("posterior draw") == 30
    assert gids.count("posterior mean") == 1


def test_discriminant_plane_of_two_features_is_the_feature_plane(gda, gda_data):
    plane = plots.discriminant_plane(gda, gda_data[0])
    np.testing.assert_array_equal(plane.basis, np.eye(2))
    assert plane.axis_labels == ("x0", "x1")


def test_more_features_are_projected_on_the_discriminant_directions():
    rng = np.random.default_rng(2)
    codes = np.arange(150) % 3
    X = rng.normal(size=(150, 4)) + 3.0 * np.eye(4)[codes]
    est = GaussianDiscriminantAnalysis(
        inference="conjugate", compute_map=False, draws=50, random_seed=0
    ).fit(X, codes)
    plane = plots.discriminant_plane(est, X)
    # The plane is spanned by Σ⁻¹-orthonormal directions: basisᵀ Σ⁻¹ basis = I.
    precision = np.linalg.inv(est.closed_form_["cov"].values)
    np.testing.assert_allclose(plane.basis.T @ precision @ plane.basis, np.eye(2), atol=1e-10)
    figure = plots.plot_decision_boundary(est, X, codes, n_boundaries=5)
    assert figure.axes[0].get_xlabel() == "discriminant direction 1"


def test_gda_plots_refuse_naive_bayes(mnb, text_data):
    with pytest.raises(ValueError, match="GaussianDiscriminantAnalysis"):
        plots.plot_mu_pair(mnb)
    with pytest.raises(ValueError, match="GaussianDiscriminantAnalysis"):
        plots.plot_decision_boundary(mnb, text_data[2], text_data[3])


def test_gda_reference_line_is_the_closed_form_posterior_mean(gda):
    pc = plots.plot_posterior_vs_closed_form(gda, var_names=["mu"], max_features=1)
    legend = [t.get_text() for t in _figure(pc).legends[0].get_texts()]
    assert legend == ["closed form", "MLE"]  # GDA has no λ: no "add-λ" line
    (feature,) = plots.selected_features(gda, max_features=1)
    lines = pc.viz["closed form"]["mu"]
    for c in range(len(gda.classes_)):
        x = lines.isel({"class": c}).item().get_xdata()[0]
        expected = gda.closed_form_["mu"].sel(feature=feature).values[c]
        assert x == pytest.approx(expected, rel=1e-12)


def test_plots_take_their_labels_and_ranking_from_the_model_family(mnb, monkeypatch):
    from bayesgen.families.multinomial import MultinomialFamily

    class Renamed(MultinomialFamily):
        mean_label = "smoothed"
        top_parameter_label = "θ of the test"

        def ranked_probabilities(self, estimates):
            return -estimates["feature_prob"].values  # the least probable first

    # The plots ask the estimator for its model (model_), never the registry.
    monkeypatch.setattr(mnb, "_family", Renamed(), raising=False)
    pc = plots.plot_posterior_vs_closed_form(mnb, max_features=1)
    assert [t.get_text() for t in _figure(pc).legends[0].get_texts()] == ["smoothed", "MLE"]
    least = mnb.closed_form_["feature_prob"].min("class").to_series().idxmin()
    assert plots.selected_features(mnb, max_features=1) == [least]
    figure = plots.plot_top_features(mnb, k=2)
    assert {ax.get_xlabel() for ax in figure.axes} == {"θ of the test"}


def test_report_captions_of_gda_name_its_variables(gda, tmp_path):
    text = report(gda, tmp_path, max_features=1).read_text(encoding="utf-8")
    assert "for class_prob and μ of 1 features" in text
    assert "the closed-form posterior mean (black dashed)" in text
    assert "The 10 discriminant weights θ in standard units" in text


# -- held-out data -------------------------------------------------------------------------------


def test_calibration_table_bins_every_example_once(mnb, text_data):
    _, _, X_test, y_test = text_data
    table = plots.calibration_table(mnb, X_test, y_test, n_bins=5)
    assert table["n"].sum() == len(y_test)
    assert ((table["accuracy_lower"] <= table["accuracy"]) | (table["accuracy"] == 1)).all()
    assert table["accuracy"].between(0, 1).all()
    figure = plots.plot_calibration(mnb, X_test, y_test)
    assert len(figure.axes) == 2


def test_predictive_intervals_show_one_interval_per_example(mnb, text_data):
    _, _, X_test, y_test = text_data
    figure = plots.plot_predictive_intervals(mnb, X_test, y_test, max_examples=10)
    (ax,) = figure.axes
    points = sum(len(line.get_xdata()) for line in ax.lines if line.get_marker() == "o")
    assert points == 10


def _flipped(y, rows):
    """Labels with the given rows swapped to the other class: misclassified on purpose."""
    y = np.array(y, dtype=object)
    y[rows] = np.where(y[rows] == CLASSES[0], CLASSES[1], CLASSES[0])
    return y


def test_predictive_intervals_show_every_misclassified_and_the_least_confident(mnb, text_data):
    _, _, X_test, y_test = text_data
    y = _flipped(y_test, [3, 17, 29, 33])
    wrong = np.flatnonzero(mnb.predict(X_test) != y)  # by predict, not by the plot's code
    assert 4 <= wrong.size < 10
    chosen = plots_predictive.interval_rows(mnb, X_test, y, max_examples=10)
    assert len(chosen.rows) == 10 and len(set(chosen.rows)) == 10
    assert set(wrong) <= set(chosen.rows)
    right = np.setdiff1d(np.arange(len(y)), wrong)
    confidence = mnb.predict_proba(X_test).max(axis=1)
    n_doubtful = -(-(10 - wrong.size) // 2)
    doubtful = right[np.argsort(confidence[right], kind="stable")[:n_doubtful]]
    assert set(doubtful) <= set(chosen.rows)
    assert (chosen.misclassified, chosen.least_confident) == (wrong.size, n_doubtful)
    figure = plots.plot_predictive_intervals(mnb, X_test, y, max_examples=10)
    (ax,) = figure.axes
    red = [line for line in ax.lines if line.get_label() == "misclassified"]
    assert sum(len(line.get_xdata()) for line in red) == wrong.size
    assert f"all {wrong.size} misclassified" in ax.get_xlabel()


def test_predictive_intervals_keep_the_most_confidently_wrong_when_too_many(mnb, text_data):
    _, _, X_test, y_test = text_data
    y = _flipped(y_test, np.arange(len(y_test)))  # nearly every row misclassified
    wrong = np.flatnonzero(mnb.predict(X_test) != y)
    assert wrong.size > 5
    true_prob = mnb.predict_proba(X_test)[np.arange(len(y)), np.searchsorted(mnb.classes_, y)]
    expected = wrong[np.argsort(true_prob[wrong], kind="stable")[:5]]
    chosen = plots_predictive.interval_rows(mnb, X_test, y, max_examples=5)
    assert chosen.rows.tolist() == expected.tolist()
    assert chosen.n_misclassified == wrong.size
    figure = plots.plot_predictive_intervals(mnb, X_test, y, max_examples=5)
    assert f"the 5 most confidently wrong of {wrong.size}" in figure.axes[0].get_xlabel()


@pytest.mark.parametrize("max_examples", [0, -3, 2.5, True])
def test_predictive_intervals_reject_a_count_that_is_not_positive(mnb, text_data, max_examples):
    _, _, X_test, y_test = text_data
    with pytest.raises(ValueError, match="max_examples: expected a positive integer"):
        plots.plot_predictive_intervals(mnb, X_test, y_test, max_examples=max_examples)


def test_held_out_plots_reject_probabilities_of_another_shape(mnb, text_data):
    _, _, X_test, y_test = text_data
    with pytest.raises(ValueError, match=r"proba: expected est.predict_proba\(X\)"):
        plots.plot_calibration(mnb, X_test, y_test, proba=np.ones((3, 2)))
    with pytest.raises(ValueError, match="X, y: expected one label per row; got 40 rows"):
        plots.plot_predictive_intervals(mnb, X_test, y_test[:5])


def test_unknown_labels_are_rejected(mnb, text_data):
    with pytest.raises(ValueError, match="not among the fitted classes_"):
        plots.plot_calibration(mnb, text_data[2], ["eggs"] * len(text_data[3]))


# -- the report --------------------------------------------------------------------------------


def test_report_writes_the_tables_the_plots_and_index_html(mnb_report):
    folder = mnb_report.parent
    assert mnb_report.name == "index.html"
    pngs = {p.name for p in folder.glob("*.png")}
    assert pngs == {
        "trace.png",
        "rank.png",
        "ess.png",
        "top_features.png",
        "posterior_vs_closed_form.png",
        "prior_posterior.png",
        "ppc.png",
        "loo.png",
        "calibration.png",
        "predictive_intervals.png",
        "feature_relevance.png",
    }
    for name in pngs:
        assert (folder / name).read_bytes()[:8] == PNG_MAGIC
    summary = pd.read_csv(folder / "summary.csv", index_col=0)
    assert {"mean", "sd", "ess_bulk", "r_hat"} <= set(summary.columns)
    assert any(label.startswith("class_prob[") for label in summary.index)
    assert len(pd.read_csv(folder / "comparison.csv")) > 0


def test_report_escapes_class_and_feature_names(mnb_report):
    text = mnb_report.read_text(encoding="utf-8")
    assert html.escape(SCRIPT) in text
    assert html.escape(CLASSES[1]) in text
    assert "<script" not in text.lower()
    assert "<i>" not in text


def test_report_states_the_fitted_smoothing(mnb_report, text_data, tmp_path):
    assert "<th>fitted λ (alpha_)</th><td>1</td>" in mnb_report.read_text(encoding="utf-8")
    X, y, X_test, y_test = text_data
    classes = np.unique(y)
    per_class = MultinomialNB(
        alpha={classes[1]: 4.0, classes[0]: 0.25},  # by class label
        inference="conjugate",
        compute_map=False,
        draws=50,
        random_seed=0,
    ).fit(X, y)
    text = report(per_class, tmp_path, X_test, y_test).read_text(encoding="utf-8")
    expected = html.escape(f"{classes[0]}: 0.25, {classes[1]}: 4")
    assert f"<th>fitted λ (alpha_)</th><td>{expected}</td>" in text


def test_report_links_only_files_next_to_it(mnb_report):
    text = mnb_report.read_text(encoding="utf-8")
    for attribute in ("src", "href"):
        for target in text.split(f'{attribute}="')[1:]:
            target = target.split('"')[0]
            assert "/" not in target and ":" not in target
            assert (mnb_report.parent / target).is_file()
    assert "<link" not in text


def test_report_headline_is_the_exact_leave_one_out_score_of_the_labels(mnb, mnb_report):
    import bayesgen

    text = mnb_report.read_text(encoding="utf-8")
    proba = bayesgen.loo_proba(mnb)  # exact p(y_i | x_i, data without row i)
    codes = mnb.idata_["observed_data"]["y"].values  # each row's class, as an index
    log_score = np.log(proba[np.arange(len(codes)), codes])
    expected = f"elpd_loo = {log_score.sum():,.1f} ± {np.sqrt(len(codes) * log_score.var()):,.1f}"
    accuracy = np.mean(proba.argmax(axis=1) == codes)
    headline = text.split('<p class="headline">')[1].split("</p>")[0]
    assert "training labels" in headline and expected in headline
    assert f"accuracy {accuracy:.1%}" in headline
    assert "log p(yᵢ | xᵢ, training data without row i)" in text
    # The PSIS figure is named for what it scores: whole rows, features and label.
    loo_caption = text.split('<figure id="loo">')[1].split("</figure>")[0]
    assert "log p(x_i, y_i)" in loo_caption and "label score at the top" in loo_caption


def test_report_says_why_the_label_score_is_missing(text_data, tmp_path):
    X, y, _, _ = text_data
    weighted = MultinomialNB(inference="conjugate", compute_map=False, draws=50, random_seed=0)
    weighted.fit(X, y, sample_weight=np.full(len(y), 2.0))
    text = report(weighted, tmp_path, max_features=1).read_text(encoding="utf-8")
    headline = text.split('<p class="headline">')[1].split("</p>")[0]
    assert "not available" in headline and "sample_weight" in headline


def test_report_of_one_chain_says_why_there_is_no_rank_plot(text_data, tmp_path):
    # ArviZ's rank plot needs two chains: the report failed on a one-chain fit.
    X, y, _, _ = text_data
    one = MultinomialNB(inference="conjugate", compute_map=False, draws=50, chains=1)
    text = report(one.fit(X, y), tmp_path, max_features=1).read_text(encoding="utf-8")
    assert "Not drawn: the fit has one chain" in text
    assert not (tmp_path / "rank.png").exists() and (tmp_path / "trace.png").exists()


def _verdict(text: str) -> tuple[str, str]:
    start = text.index("<h2>Posterior against the closed forms</h2>")
    paragraph = text[start:].split('<p class="', 1)[1]
    level, rest = paragraph.split('">', 1)
    return level, html.unescape(rest.split("</p>", 1)[0])


def test_report_verdict_tells_a_failed_diagnostic_from_a_wrong_posterior(mnb, tmp_path):
    from bayesgen.checks.comparison import compare

    comparison = compare(mnb)
    tripped = dataclasses.replace(comparison, diagnostics_ok=False, ok=False)
    level, sentence = _verdict(report(mnb, tmp_path / "a", comparison=tripped).read_text())
    assert level == "fail"
    assert "every row agrees" in sentence and "does not agree" not in sentence
    borderline = dataclasses.replace(comparison, borderline=["R-hat 1.0102 at x (borderline)"])
    text = report(mnb, tmp_path / "b", comparison=borderline).read_text(encoding="utf-8")
    assert _verdict(text)[0] == "warn"
    assert "<li>R-hat 1.0102 at x (borderline)</li>" in text
    # A row that disagrees: the posterior is wrong.
    disagree = comparison.table.assign(agrees=comparison.table.index != 0)
    wrong = dataclasses.replace(comparison, table=disagree, agrees=False, ok=False)
    level, sentence = _verdict(report(mnb, tmp_path / "c", comparison=wrong).read_text())
    assert level == "fail" and "does not agree" in sentence


def test_report_shows_the_worst_rows_in_the_comparisons_own_order(mnb, tmp_path, monkeypatch):
    from bayesgen.checks.comparison import Comparison, compare

    comparison = compare(mnb)
    assert len(comparison.table) > 10
    order = [7, 0, 25, 3, 19, 11, 2, 24, 5, 13]  # no sort of any column gives this order
    monkeypatch.setattr(Comparison, "worst", lambda self, k=10: self.table.iloc[order[:k]])
    text = report(mnb, tmp_path, comparison=comparison).read_text(encoding="utf-8")
    table = text.split('<table class="comparison">')[1].split("</table>")[0]
    shown = [
        html.unescape(row.split('<td class="coords">')[1].split("</td>")[0])
        for row in table.split("<tr>")[2:]
    ]
    assert shown == comparison.table["coords"].iloc[order].tolist()
    # Columns with nothing to show are left out: no MAP (compute_map=False), no diagnostic.
    assert not mnb.compute_map and "<th>MAP</th>" not in table
    assert (comparison.table["diagnostic"] == "").all() and "<th>diagnostic</th>" not in table


def test_report_table_holds_the_rows_that_tripped_a_diagnostic(mnb, tmp_path):
    from bayesgen.checks.comparison import compare

    comparison = compare(mnb)
    table = comparison.table.copy()
    worst_z = np.fmax(np.abs(table["z"]), np.abs(table["z_sd"]))
    tripped = int(np.argmin(worst_z))  # the row a ranking by |z| would show last
    table.loc[table.index[tripped], ["r_hat", "diagnostic"]] = [1.2, "fail"]
    failed = dataclasses.replace(comparison, table=table, diagnostics_ok=False, ok=False)
    text = report(mnb, tmp_path, comparison=failed).read_text(encoding="utf-8")
    shown = text.split('<table class="comparison">')[1].split("</table>")[0]
    assert f'<td class="coords">{html.escape(table["coords"].iloc[tripped])}</td>' in shown
    assert "<td>fail</td>" in shown and '<td class="number">1.2000</td>' in shown


def test_report_states_the_data_the_fit_date_and_the_versions(mnb, mnb_report, text_data):
    from importlib.metadata import version

    text = html.unescape(mnb_report.read_text(encoding="utf-8"))
    _, y, _, _ = text_data
    per_class = ", ".join(f"{label}: {np.sum(y == label)}" for label in sorted(CLASSES))
    assert f"80 training rows × 12 features; 2 classes (rows per class: {per_class})" in text
    created = mnb.idata_["posterior"].attrs["created_at"]  # ISO 8601, in UTC
    assert f"<th>fitted</th><td>{created[:10]} {created[11:16]} UTC</td>" in text
    for package, label in (("bayesgen", "bayesgen"), ("pymc", "PyMC"), ("arviz", "ArviZ")):
        assert f"{label} {version(package)}" in text


def test_report_says_why_energy_is_missing(mnb_report):
    text = mnb_report.read_text(encoding="utf-8")
    assert "Energy</b>: Not drawn" in text
    assert "inference=&#x27;conjugate&#x27;" in text


def test_report_of_gda_adds_the_mean_pairs_and_the_boundary(gda, gda_data, tmp_path):
    _, _, X_test, y_test = gda_data
    index = report(gda, tmp_path, X_test, y_test, max_features=2)
    names = {p.name for p in tmp_path.glob("*.png")}
    assert {"mu_pair.png", "decision_boundary.png", "calibration.png"} <= names
    assert plt.get_fignums() == []  # the report closes every figure it draws
    assert index.read_text(encoding="utf-8").count("<img ") == len(names)


def test_report_without_held_out_data_lists_those_plots_as_skipped(gda, tmp_path):
    text = report(gda, tmp_path, max_features=1).read_text(encoding="utf-8")
    assert text.count("needs held-out data") == 2
    assert "Decision boundary</b>: Not drawn: needs data" in text


@pytest.mark.slow
def test_report_of_a_nuts_fit_has_the_energy_plot(text_data, tmp_path):
    X, y, _, _ = text_data
    est = MultinomialNB(
        inference="nuts",
        compute_map=False,
        draws=200,
        tune=200,
        chains=2,
        random_seed=0,
        prior_draws=0,
    ).fit(X, y)
    assert isinstance(plots.plot_energy(est), PlotCollection)
    report(est, tmp_path)
    assert (tmp_path / "energy.png").read_bytes()[:8] == PNG_MAGIC


def _chromium(tmp_path):
    return offline_chromium(tmp_path / "chromium-profile")


def test_index_html_renders_every_image_in_headless_chromium(mnb_report, tmp_path):
    from selenium.common.exceptions import NoAlertPresentException
    from selenium.webdriver.common.by import By

    # A copy in a new place shows that the folder is self-contained.
    folder = shutil.copytree(mnb_report.parent, tmp_path / "copied")
    driver = _chromium(tmp_path)
    try:
        driver.get((folder / "index.html").as_uri())
        images = driver.execute_script(
            "return Array.from(document.images).map("
            "img => [img.getAttribute('src'), img.complete && img.naturalWidth > 0])"
        )
        assert len(images) == len(list(folder.glob("*.png")))
        assert all(loaded for _, loaded in images), images
        assert driver.find_elements(By.TAG_NAME, "script") == []
        with pytest.raises(NoAlertPresentException):
            driver.switch_to.alert.text  # noqa: B018
        body = driver.find_element(By.TAG_NAME, "body").text
        assert SCRIPT in body and CLASSES[1] in body  # shown as text, not markup
    finally:
        driver.quit()


def test_index_html_shows_every_section_readably_in_headless_chromium(mnb_report, tmp_path):
    """What a person sees on a laptop screen: every section's heading, its plot at no less
    than 70 % of its size (smaller, its labels shrink below readable) and a caption."""
    driver = _chromium(tmp_path)
    try:
        driver.set_window_size(1280, 1000)
        driver.get(mnb_report.as_uri())
        headings = driver.execute_script(
            "return Array.from(document.querySelectorAll('h2'))"
            ".filter(h => h.offsetHeight > 0).map(h => h.textContent)"
        )
        expected = ["Trace", "Rank", "Effective sample size", "Top features"]
        expected += ["Posterior and closed forms", "Prior and posterior", "Calibration"]
        expected += ["Predictive intervals", "Hyperparameters", "Not shown"]
        assert set(expected) <= set(headings), headings
        figures = driver.execute_script(
            "return Array.from(document.querySelectorAll('figure')).map(f => {"
            " const img = f.querySelector('img');"
            " return [f.id, f.querySelector('h2').textContent,"
            "  img.complete && img.naturalWidth > 0, img.clientWidth / img.naturalWidth,"
            "  f.querySelector('figcaption').innerText.trim().length]; })"
        )
        assert len(figures) == len(list(mnb_report.parent.glob("*.png")))
        for name, heading, loaded, scale, caption in figures:
            assert heading and loaded and caption > 40, name
            assert scale >= 0.7, f"{name} is shown at {scale:.0%} of its size"
        settings = driver.execute_script(
            "const h = Array.from(document.querySelectorAll('h2'))"
            ".find(h => h.textContent === 'Hyperparameters');"
            "return Array.from(h.nextElementSibling.querySelectorAll('th'))"
            ".map(th => th.textContent)"
        )
        assert "alpha" in settings and "tune" not in settings  # a conjugate fit: no NUTS settings
        assert "progressbar" not in settings  # it changes what a fit prints, not what it fits
    finally:
        driver.quit()


@pytest.mark.parametrize("width", [1280, 900])
def test_comparison_table_fits_the_page_in_headless_chromium(tmp_path, width):
    rng = np.random.default_rng(3)
    X, y = _word_counts(rng, 60)
    X.columns = [f"a rather long feature name number {j}, as a vectorizer makes" for j in range(12)]
    est = MultinomialNB(alpha=2.0, inference="conjugate", draws=100, random_seed=0).fit(X, y)
    index = report(est, tmp_path / "report", max_features=1)
    driver = _chromium(tmp_path)
    try:
        driver.set_window_size(width, 1000)
        driver.get(index.as_uri())
        widths = driver.execute_script(
            "const t = document.querySelector('table.comparison');"
            "return [t.scrollWidth, t.parentElement.clientWidth,"
            " document.documentElement.scrollWidth, document.documentElement.clientWidth,"
            " t.querySelectorAll('th').length]"
        )
        table, container, page, window, columns = widths
        assert columns >= 12  # MAP and mode included: α = 2 has an interior mode
        if width >= 1280:  # a laptop screen shows the whole table
            assert table <= container, f"the table is {table} px wide in {container} px"
        # Narrower, the table scrolls in its own box: the page never scrolls sideways.
        assert page <= window, f"the page scrolls sideways: {page} px in {window} px"
    finally:
        driver.quit()


def test_discriminant_plane_puts_points_where_the_classifier_sees_them():
    # Wine's features differ in scale by 1000x (proline): a Euclidean projection onto the
    # plane would misplace the points. In the plane's coordinates, the posterior-mean scores
    # at the projected point must pick the same class as at the point itself.
    from sklearn.datasets import load_wine

    from bayesgen import GaussianDiscriminantAnalysis
    from bayesgen.plotting.plots import discriminant_plane

    X, y = load_wine(return_X_y=True)
    est = GaussianDiscriminantAnalysis(
        inference="conjugate", draws=200, compute_map=False, prior_draws=0, random_seed=0
    ).fit(X, y)
    plane = discriminant_plane(est, X)
    on_plane = plane.origin + plane.coordinates(X) @ plane.basis.T
    scores_full = X @ est.coef_.T + est.intercept_
    scores_plane = on_plane @ est.coef_.T + est.intercept_
    np.testing.assert_array_equal(scores_plane.argmax(axis=1), scores_full.argmax(axis=1))


# -- summary.csv: arviz.summary's table, its diagnostics vectorised -----------------------------


@pytest.mark.parametrize("chains", [1, 4])
def test_summary_table_equals_arviz_summary(chains):
    import arviz as az
    import xarray as xr

    from bayesgen.plotting.report import summary_table

    rng = np.random.default_rng(7)
    draws = rng.normal(size=(chains, 400, 2, 3))
    draws[..., 1, :] = np.round(draws[..., 1, :])  # ties
    draws[:, 1:, 0, 0] += 0.9 * draws[:, :-1, 0, 0]  # autocorrelated
    posterior = xr.Dataset(
        {
            "feature_prob": (("chain", "draw", "class", "feature"), draws),
            "class_prob": (("chain", "draw", "class"), rng.dirichlet([3, 5], size=(chains, 400))),
            "padding": (("chain", "draw", "category"), np.ones((chains, 400, 2))),  # constant
        },
        coords={"class": ["ham", "spam"], "feature": ["a", "b", "c"]},
    )
    ours = summary_table(posterior)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        expected = pd.DataFrame(
            az.summary(xr.DataTree.from_dict({"posterior": posterior}), ci_prob=0.94)
        )
    assert list(ours.index) == list(expected.index)
    assert list(ours.columns) == list(expected.columns)
    np.testing.assert_allclose(ours.to_numpy(), expected.to_numpy(), rtol=1e-10, equal_nan=True)
    assert ours["r_hat"].isna().sum() == (2 if chains > 1 else ours.shape[0])  # constant cells
