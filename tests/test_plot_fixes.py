"""What a person sees in the plots and the report (issue 13): every line a legend lists can be
seen, tick labels do not collide, counts are whole numbers, notes say what is left out.

Each test inspects the matplotlib Figure as drawn (window extents after a draw), not the code
that made it. The fits are conjugate (exact draws, nothing compiles).
"""

import copy
import itertools
import re
from html.parser import HTMLParser

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import xarray as xr
from matplotlib.figure import Figure
from matplotlib.patches import Patch
from sklearn.datasets import load_digits

from bayesgen import GaussianDiscriminantAnalysis, MultinomialNB
from bayesgen.checks.sweep import plot_lambda_sweep
from bayesgen.plotting import plots
from bayesgen.plotting import predictive as plots_predictive
from bayesgen.plotting.report import report

#: Smallest font, in points as shown in the report, that a person reads without zooming.
READABLE_PT = 8.0
#: The report saves figures at this many dots per inch (bayesgen.plotting.report).
REPORT_DPI = 100
#: index.html shows images at most as wide as its body: max-width 72rem at 16 px a rem.
REPORT_IMAGE_WIDTH_PX = 72 * 16
NUTS_ONLY = ("tune", "target_accept", "nuts_sampler", "cores")


@pytest.fixture(autouse=True, scope="module")
def _close_figures():
    yield  # the figures of the module's fixtures are read by several tests
    plt.close("all")


@pytest.fixture(scope="module")
def digits():
    """Ten classes and 64 pixels: more classes than the per-parameter plots show."""
    data = load_digits()
    names = [f"pixel_{r}_{c}" for r in range(8) for c in range(8)]
    X = pd.DataFrame(data.data, columns=names)
    return MultinomialNB(
        inference="conjugate", compute_map=False, draws=100, random_seed=0, prior_draws=50
    ).fit(X, data.target)


@pytest.fixture(scope="module")
def digits_plots(digits):
    """Every plot of the ten-class fit, drawn once, by plot function name."""
    data = load_digits()
    X_test = pd.DataFrame(data.data[:60], columns=list(digits.feature_names_in_))
    y_test = data.target[:60]
    figures = {
        plot.__name__: _drawn(_figure(plot(digits)))
        for plot in (
            plots.plot_trace,
            plots.plot_rank,
            plots.plot_ess,
            plots.plot_posterior_vs_closed_form,
            plots.plot_prior_posterior,
            plots.plot_top_features,
        )
    }
    for plot in (plots.plot_calibration, plots.plot_predictive_intervals):
        figures[plot.__name__] = _drawn(plot(digits, X_test, y_test))
    return figures


@pytest.fixture(scope="module")
def map_equals_mle():
    """α = 1 and class α = 1: the posterior mode is the MLE, exactly (closed form)."""
    rng = np.random.default_rng(0)
    y = np.arange(40) % 2
    X = rng.poisson([3.0, 1.0, 2.0], size=(40, 3)) + y[:, None]
    est = MultinomialNB(  # seeded: unseeded draws failed another panel's rank test by chance
        alpha=1.0,
        class_alpha=1.0,
        inference="conjugate",
        compute_map=True,
        draws=100,
        random_seed=0,
    )
    return est.fit(X, y)


@pytest.fixture(scope="module")
def small_report(tmp_path_factory):
    rng = np.random.default_rng(1)
    y = np.arange(60) % 2
    X = pd.DataFrame(rng.poisson(2.0 + 2.0 * y[:, None] * [1, 0, 1], size=(60, 3)))
    X.columns = ["a", "b", "c"]
    est = MultinomialNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    est.fit(X[:40], y[:40])
    index = report(est, tmp_path_factory.mktemp("report"), X[40:], y[40:])
    return index.read_text(encoding="utf-8")


def _figure(plot) -> Figure:
    return plot if isinstance(plot, Figure) else plot.viz["figure"].item()


def _drawn(figure: Figure) -> Figure:
    figure.draw_without_rendering()
    return figure


def _figure_texts(figure: Figure) -> str:
    """Every piece of text a person can read in the figure, legends included."""
    texts = [t.get_text() for t in figure.findobj(plt.Text) if t.get_visible()]
    return "\n".join(texts)


def _legends(figure: Figure) -> list:
    return [legend for legend in figure.findobj(plt.matplotlib.legend.Legend)]


def _overlapping_pairs(ax) -> list[tuple[str, str]]:
    """Pairs of neighbouring x tick labels whose drawn boxes overlap, among those drawn
    within the axes' width."""
    boxes = [
        (label.get_window_extent(), label.get_text())
        for label in ax.get_xticklabels()
        if label.get_visible() and label.get_text()
    ]
    inside = [
        box for box in boxes if ax.bbox.x0 - 1 <= (box[0].x0 + box[0].x1) / 2 <= ax.bbox.x1 + 1
    ]
    boxes = sorted(inside, key=lambda box: box[0].x0)
    return [
        (left[1], right[1]) for left, right in itertools.pairwise(boxes) if right[0].x0 < left[0].x1
    ]


def _crowded_axes(figure: Figure) -> list:
    _drawn(figure)
    return [
        (ax.get_title(), pairs)
        for ax in figure.axes
        if ax.get_visible() and (pairs := _overlapping_pairs(ax))
    ]


def _points_px(line) -> np.ndarray:
    return line.get_transform().transform(np.column_stack(line.get_data()))


# -- posterior against the closed forms: MAP = MLE with α = 1 ---------------------------------


def test_every_reference_line_in_the_legend_can_be_seen_when_map_equals_mle(map_equals_mle):
    est = map_equals_mle
    np.testing.assert_array_equal(  # the case of the issue: the two estimates are equal
        est.map_["feature_prob"].values, est.closed_form_["feature_prob_mle"].values
    )
    figure = _drawn(_figure(plots.plot_posterior_vs_closed_form(est)))
    (legend,) = figure.legends
    # An entry may add that it equals another ("MAP (= MLE)"); it starts with the line's label.
    labels = [text.get_text().split(" (")[0] for text in legend.get_texts()]
    assert {"MLE", "MAP"} <= set(labels)
    for handle in legend.legend_handles:
        assert handle.get_visible()
    for ax in figure.axes:
        lines = {
            label: [line for line in ax.lines if line.get_label() == label] for label in labels
        }
        for label, own in lines.items():
            assert own, f"{label!r} is in the legend but not drawn in {ax.get_title()!r}"
            others = np.concatenate(
                [
                    _points_px(line)
                    for other, drawn in lines.items()
                    if other != label
                    for line in drawn
                ]
            )
            # Some point of the line lies where no other reference line is drawn.
            gaps = [
                np.min(np.linalg.norm(others - point, axis=1))
                for line in own
                for point in _points_px(line)
            ]
            assert max(gaps) >= 4.0, f"{label!r} is hidden under another line in {ax.get_title()!r}"


# -- calibration ------------------------------------------------------------------------------


def _calibration_table(*args, **kwargs):
    """A point at the top left (confident in the wrong bins is the usual place) and bins of
    one example each."""
    return pd.DataFrame(
        {
            "lower_edge": [0.5, 0.7, 0.9],
            "upper_edge": [0.55, 0.75, 0.95],
            "n": [1, 1, 1],
            "confidence": [0.52, 0.72, 0.93],
            "accuracy": [1.0, 0.5, 1.0],
            "accuracy_lower": [0.4, 0.1, 0.5],
            "accuracy_upper": [1.0, 0.9, 1.0],
        }
    )


def test_calibration_legend_covers_no_point(map_equals_mle, monkeypatch):
    monkeypatch.setattr(plots_predictive, "calibration_table", _calibration_table)
    figure = _drawn(plots.plot_calibration(map_equals_mle, None, None))
    ax = figure.axes[0]
    (points,) = [line for line in ax.lines if line.get_marker() == "o"]
    radius = points.get_markersize() * figure.dpi / 72 / 2
    legends = _legends(figure)
    assert legends
    for legend in legends:
        box = legend.get_window_extent()
        for x, y in _points_px(points):
            inside_x = box.x0 - radius < x < box.x1 + radius
            covered = inside_x and box.y0 - radius < y < box.y1 + radius
            assert not covered, f"the legend covers the point at {(x, y)}"


def test_calibration_counts_axis_has_whole_numbers(map_equals_mle, monkeypatch):
    monkeypatch.setattr(plots_predictive, "calibration_table", _calibration_table)
    figure = _drawn(plots.plot_calibration(map_equals_mle, None, None))
    counts = figure.axes[1]
    ticks = [
        float(label.get_text().replace("\N{MINUS SIGN}", "-"))
        for label in counts.get_yticklabels()
        if label.get_visible() and label.get_text()
    ]
    lower, upper = counts.get_ylim()
    shown = [tick for tick in ticks if lower <= tick <= upper]
    assert len(shown) >= 2
    assert all(tick == int(tick) for tick in shown), shown


# -- rank plot --------------------------------------------------------------------------------


def test_rank_plot_draws_the_envelope_in_every_panel_and_lists_it(digits_plots):
    figure = digits_plots["plot_rank"]
    panels = [ax for ax in figure.axes if ax.get_visible() and ax.lines]
    assert len(panels) == 4 + 4 * 4  # class_prob of 4 classes, feature_prob of 4 × 4
    for ax in panels:
        envelopes = [patch for patch in ax.patches if patch.get_gid() == "envelope"]
        assert len(envelopes) == 1, ax.get_title()
        # The envelope is inside the visible y range, around zero.
        box = envelopes[0].get_window_extent()
        assert box.height > 2 and box.y0 >= ax.bbox.y0 - 1 and box.y1 <= ax.bbox.y1 + 1
    handles = [h for legend in _legends(figure) for h in legend.legend_handles]
    texts = [t.get_text() for legend in _legends(figure) for t in legend.get_texts()]
    assert any(isinstance(h, Patch) for h in handles)
    assert any("envelope" in text for text in texts)


def _rank_test_labels(figure: Figure) -> dict[str, str]:
    """Panel title -> the label of a failed rank test in that panel."""
    return {
        ax.get_title(): text.get_text()
        for ax in figure.axes
        for text in ax.texts
        if text.get_gid() == "rank test failed"
    }


def test_rank_plot_prints_no_p_values_when_the_chains_agree(digits_plots):
    text = _figure_texts(digits_plots["plot_rank"])
    assert "p=" not in text and "α=" not in text  # ArviZ's "p=1.00(α=0.01)" in every panel
    assert _rank_test_labels(digits_plots["plot_rank"]) == {}
    # 4 classes of class_prob and 4 × 4 feature_prob panels: each tested at 0.001 / 20.
    assert re.search(r"red p < α = 0\.001 / 20 panels.*uniformity", text, flags=re.S), text


def _first_cell_draws(est) -> np.ndarray:
    """The (chain, draw) draws of ``feature_prob`` of the first class and feature."""
    return est.idata_["posterior"]["feature_prob"].values[:, :, 0, 0]


def _with_first_cell(est, draws: np.ndarray):
    """A copy of ``est`` whose first class and feature have ``draws`` (chain, draw)."""
    est = copy.deepcopy(est)
    tree = est.idata_.copy()
    posterior = tree["posterior"].to_dataset()
    values = posterior["feature_prob"].values.copy()
    values[:, :, 0, 0] = draws
    posterior["feature_prob"] = (posterior["feature_prob"].dims, values)
    tree["posterior"] = posterior
    est.idata_ = tree
    return est


def _p_value(draws: np.ndarray) -> float:
    """ArviZ's multi-chain rank uniformity test of (chain, draw) draws, computed here."""
    ranks = xr.DataArray(draws, dims=("chain", "draw")).azstats.compute_ranks(
        dim=["chain", "draw"], relative=True
    )
    return float(ranks.azstats.mchain_uniformity_test(dim=["chain", "draw"])[0])


def test_rank_plot_marks_only_the_panels_whose_chains_differ(map_equals_mle):
    shifted = _first_cell_draws(map_equals_mle).copy()
    shifted[1] *= 1.3  # chain 1 of one parameter sits elsewhere
    est = _with_first_cell(map_equals_mle, shifted)
    labels = _rank_test_labels(_drawn(_figure(plots.plot_rank(est))))
    # ArviZ's own test on the same draws, computed here.
    assert _p_value(shifted) < 0.001 / 8  # 2 class_prob and 2 × 3 feature_prob panels
    (title,) = labels  # one panel: the shifted parameter
    assert title.startswith("feature_prob") and title.endswith(
        f"{est.classes_[0]}, {est.closed_form_['feature'].values[0]}"
    )
    assert labels[title].endswith("chains differ")


def test_rank_plot_leaves_a_chance_failure_of_one_panel_unlabelled(map_equals_mle):
    """Chains that sample the same distribution fail ArviZ's test at 0.01 one panel in a
    hundred; tested one by one, a figure of eight panels would cry wolf one time in
    thirteen. The labels are family-wise: such a panel carries none."""
    draws = _first_cell_draws(map_equals_mle)
    # Exchangeable chains: the pooled draws dealt to the chains at random, until one deal
    # fails the test at 0.01 but not at 0.001 / 8 (about one deal in a hundred).
    for seed in range(3000):
        dealt = np.random.default_rng(seed).permutation(draws.ravel()).reshape(draws.shape)
        if 0.001 / 8 < _p_value(dealt) < 0.01:
            break
    else:
        pytest.fail("no deal of the draws failed the test at 0.01 alone")
    figure = _drawn(_figure(plots.plot_rank(_with_first_cell(map_equals_mle, dealt))))
    assert _rank_test_labels(figure) == {}
    # ArviZ's marks of the ranks behind a failure are family-wise too: none are drawn.
    marks = [len(points.get_offsets()) for ax in figure.axes for points in ax.collections]
    assert sum(marks) == 0, marks


def test_report_rank_caption_explains_the_envelope_and_the_red_labels(small_report):
    caption = re.search(r'<figure id="rank">.*?<figcaption>(.*?)</figcaption>', small_report, re.S)
    assert caption is not None
    assert "grey band" in caption.group(1) and "α = 0.001 over the number of panels" in (
        caption.group(1)
    )
    assert "in red" in caption.group(1)


# -- classes left out -------------------------------------------------------------------------


PER_PARAMETER_PLOTS = (
    "plot_trace",
    "plot_rank",
    "plot_ess",
    "plot_posterior_vs_closed_form",
    "plot_prior_posterior",
)


@pytest.mark.parametrize("plot", PER_PARAMETER_PLOTS)
def test_plots_of_ten_classes_say_that_four_are_shown(digits_plots, plot):
    assert "4 of 10 classes" in _figure_texts(digits_plots[plot])


def test_plots_of_few_classes_have_no_note(map_equals_mle):
    figure = _figure(plots.plot_trace(map_equals_mle))
    assert "classes" not in _figure_texts(figure)


# -- top features -----------------------------------------------------------------------------


def test_top_features_tick_labels_do_not_overlap(digits_plots):
    assert _crowded_axes(digits_plots["plot_top_features"]) == []


def test_posterior_density_tick_labels_do_not_overlap(digits_plots):
    assert _crowded_axes(digits_plots["plot_posterior_vs_closed_form"]) == []


def test_gda_top_features_rank_by_the_standardised_weights_like_the_selection():
    # "strong" separates the classes by 3 within-class SDs in large units (SD 1000), so its
    # raw weight is small (3 / 1000); "weak" separates them by 0.3 SDs in small units (SD
    # 0.01), so its raw weight is large (0.3 / 0.01 = 30). Standardised: 3 against 0.3.
    rng = np.random.default_rng(2)
    y = np.arange(200) % 2
    X = pd.DataFrame(
        {
            "weak": 0.01 * (rng.normal(size=200) + 0.3 * y),
            "strong": 1000.0 * (rng.normal(size=200) + 3.0 * y),
        }
    )
    est = GaussianDiscriminantAnalysis(inference="conjugate", compute_map=False, draws=100)
    est.fit(X, y)
    assert plots.selected_features(est, max_features=2) == ["strong", "weak"]
    figure = plots.plot_top_features(est, k=2)
    ax = figure.axes[0]
    labels = [label.get_text() for label in ax.get_yticklabels()]
    rows = dict(zip(labels, ax.get_yticks(), strict=True))
    assert rows["strong"] > rows["weak"]  # the top row is the largest
    assert "standardised" in ax.get_xlabel()


# -- λ sweep ----------------------------------------------------------------------------------


def _sweep(map_values) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "lambda": [0.5, 1.0],
            "variable": "feature_prob",
            "coords": ["a, x", "a, x"],
            "add_lambda": [0.2, 0.25],
            "posterior_mean": [0.21, 0.25],
            "posterior_mcse": 0.01,
            "z": 0.0,
            "map_alpha_plus_1": map_values,
        }
    )


def test_lambda_sweep_without_map_lists_no_map_marker():
    figure = _drawn(plot_lambda_sweep(_sweep([np.nan, np.nan])))
    legend_texts = [t.get_text() for legend in _legends(figure) for t in legend.get_texts()]
    assert legend_texts and not any("MAP" in text for text in legend_texts)
    assert "MAP" not in figure.axes[0].get_title()


def test_lambda_sweep_with_map_lists_the_map_marker():
    figure = _drawn(plot_lambda_sweep(_sweep([0.2, 0.25])))
    legend_texts = [t.get_text() for legend in _legends(figure) for t in legend.get_texts()]
    assert "MAP, α = λ + 1" in legend_texts


# -- pair plot --------------------------------------------------------------------------------


def test_pair_plot_labels_are_readable_in_the_report():
    rng = np.random.default_rng(3)
    y = np.arange(60) % 3
    X = rng.normal(size=(60, 3)) + y[:, None]
    est = GaussianDiscriminantAnalysis(
        inference="conjugate", compute_map=False, draws=100, prior_draws=0
    )
    figure = _drawn(_figure(plots.plot_mu_pair(est.fit(X, y))))
    # The report shows the PNG at most REPORT_IMAGE_WIDTH_PX wide: a wider one is shrunk.
    shrink = min(1.0, REPORT_IMAGE_WIDTH_PX / (figure.get_figwidth() * REPORT_DPI))
    texts = [
        text
        for ax in figure.axes
        if ax.get_visible()
        for text in (*ax.get_xticklabels(), *ax.get_yticklabels(), ax.xaxis.label, ax.yaxis.label)
        if text.get_visible() and text.get_text()
    ]
    assert texts
    smallest = min(text.get_fontsize() for text in texts) * shrink
    assert smallest >= READABLE_PT, f"{smallest:.1f} pt as shown in the report"


# -- the report's settings --------------------------------------------------------------------


class _Rows(HTMLParser):
    """The header cells (<th>) of the report's tables."""

    def __init__(self):
        super().__init__()
        self.headers, self._in_th = [], False

    def handle_starttag(self, tag, attrs):
        self._in_th = tag == "th"

    def handle_endtag(self, tag):
        self._in_th = False

    def handle_data(self, data):
        if self._in_th:
            self.headers.append(data.strip())


def _settings(report_text: str) -> list[str]:
    start = report_text.index("<h2>Hyperparameters</h2>")
    table = report_text[start : report_text.index("</table>", start)]
    parser = _Rows()
    parser.feed(table)
    return parser.headers


def test_report_of_a_conjugate_fit_lists_no_nuts_settings(small_report):
    settings = _settings(small_report)
    assert "alpha" in settings and "draws" in settings
    assert not set(NUTS_ONLY) & set(settings), settings


def test_report_lists_no_display_only_settings(small_report):
    assert "progressbar" not in _settings(small_report)


# -- no empty panels --------------------------------------------------------------------------


def test_no_plot_of_a_ten_class_fit_has_an_empty_panel(digits_plots):
    for name, figure in digits_plots.items():
        for ax in figure.axes:
            if ax.get_visible():
                drawn = [*ax.lines, *ax.collections, *ax.patches, *ax.images]
                assert drawn, f"{name}: the panel {ax.get_title()!r} is empty"


# -- simulation-based calibration -------------------------------------------------------------


def test_sbc_plot_says_what_its_band_curves_and_p_are():
    from bayesgen.checks.calibration import SBCResult

    rng = np.random.default_rng(4)
    columns = pd.MultiIndex.from_tuples([("class_prob", "0"), ("class_prob", "1")])
    result = SBCResult(
        ranks=pd.DataFrame(rng.integers(0, 21, size=(50, 2)), columns=columns),
        n_draws=20,
        n_bins=5,
        parameter_p_values=pd.Series([0.5, 0.5], index=columns),
        p_values=pd.Series({"class_prob": 0.5}),
        level=0.01,
        rejected=0,
        model="MultinomialNB",
        inference="conjugate",
    )
    figure = _drawn(result.plot())
    (legend,) = figure.legends
    texts = [text.get_text() for text in legend.get_texts()]
    assert texts == ["95% band of uniform ranks", "one parameter's ranks"]
    assert all(handle.get_visible() for handle in legend.legend_handles)
    assert "chi-square" in legend.get_title().get_text()
