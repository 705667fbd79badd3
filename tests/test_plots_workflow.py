"""The posterior predictive check and PSIS-LOO plots (bayesgen.plotting.workflow) and their report
sections.

Every fit is conjugate without a MAP (nothing compiles). The observed statistics are computed
here from X and y with numpy and pandas, not by bayesgen.
"""

import warnings
from pathlib import Path

import arviz as az
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import DATA, bernoulli_data
from matplotlib.figure import Figure

import bayesgen
from bayesgen.input.data import vectorize_text
from bayesgen.input.datasets import load_toy_spam
from bayesgen.plotting import workflow as plots_workflow
from bayesgen.plotting.report import report

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
OLD_FILE = Path(__file__).parent / "data" / "v0.1.0" / "bernoulli.nc"
ESTIMATORS = {
    "multinomial_nb": bayesgen.MultinomialNB,
    "bernoulli_nb": bayesgen.BernoulliNB,
    "categorical_nb": bayesgen.CategoricalNB,
    "gda": bayesgen.GaussianDiscriminantAnalysis,
    "qda": bayesgen.QuadraticDiscriminantAnalysis,
}
DRAWS, CHAINS = 100, 2


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _data(name):
    return DATA["gda" if name == "qda" else name]()


def _fit(name, X=None, y=None):
    if X is None:
        X, y = _data(name)
    return ESTIMATORS[name](
        inference="conjugate", compute_map=False, draws=DRAWS, chains=CHAINS, random_seed=0
    ).fit(X, y)


@pytest.fixture(scope="module")
def fitted():
    return {name: _fit(name) for name in ESTIMATORS}


def _observed_statistic(name, X, y) -> np.ndarray:
    """What the PPC panel of each model pools, from the definitions."""
    X = np.asarray(X, dtype=float)
    codes = np.unique(np.asarray(y), return_inverse=True)[1]
    if name == "multinomial_nb":  # distinct words per document
        return (X > 0).sum(axis=1)
    if name == "bernoulli_nb":  # features present per row
        return X.sum(axis=1)
    if name == "categorical_nb":  # share of each class's rows in each real category
        widths = X.max(axis=0).astype(int) + 1
        return np.array(
            [
                np.mean(X[codes == k, j] == c)
                for k in range(codes.max() + 1)
                for j in range(X.shape[1])
                for c in range(widths[j])
            ]
        )
    # class means in pooled within-class SDs from each feature's overall mean
    frame = pd.DataFrame(X)
    means = frame.groupby(codes).mean()
    residuals = frame - means.loc[codes].to_numpy()
    sd = np.sqrt((residuals**2).sum() / (len(X) - means.shape[0]))
    return ((means - frame.mean()) / sd).to_numpy().ravel()


# -- plot_ppc ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ESTIMATORS)
def test_ppc_draws_the_ecdf_of_the_observed_statistic_among_the_simulated_ones(fitted, name):
    figure = plots_workflow.plot_ppc(fitted[name])
    assert isinstance(figure, Figure)
    top = figure.axes[0]
    (observed,) = [line for line in top.get_lines() if line.get_label() == "observed"]
    x, ecdf = np.asarray(observed.get_xdata()), np.asarray(observed.get_ydata())
    values = _observed_statistic(name, *_data(name))
    for value in np.unique(values):  # the curve reaches the share of values ≤ v at v
        at = np.isclose(x, value, rtol=1e-12, atol=1e-12)
        assert ecdf[at].max() == pytest.approx(np.mean(values <= value + 1e-12)), value
    assert len(top.get_lines()) == DRAWS + 1  # one ECDF per simulated data set, plus observed


def test_ppc_ecdf_panel_has_a_labelled_y_axis_from_0_to_1(fitted):
    figure = plots_workflow.plot_ppc(fitted["multinomial_nb"])
    figure.draw_without_rendering()
    top = figure.axes[0]
    assert "ECDF" in top.get_ylabel()
    assert top.yaxis.get_visible() and top.spines["left"].get_visible()
    ticks = [t for t in top.get_yticks() if top.get_ylim()[0] <= t <= top.get_ylim()[1]]
    assert min(ticks) == pytest.approx(0.0) and max(ticks) == pytest.approx(1.0)


def _bursty_text(seed: int = 0):
    """Documents that repeat a few words many times (burstiness): far fewer distinct words
    than a multinomial of the same length draws, the misfit the PPC caption describes."""
    rng = np.random.default_rng(seed)
    y = np.arange(120) % 2
    X = np.zeros((120, 40), dtype=int)
    for i in range(120):
        words = rng.choice(np.arange(20) + 20 * y[i], size=3, replace=False)
        X[i, words] = rng.integers(3, 8, size=3)
    return X, y


def test_ppc_difference_panel_shows_the_burstiness_misfit_above_the_band():
    X, y = _bursty_text()
    est = _fit("multinomial_nb", X, y)
    figure = plots_workflow.plot_ppc(est)
    top, bottom = figure.axes[:2]
    # The black ECDF is left of the blue ones: at 3 distinct words (every document has
    # exactly 3) all observed values are counted, while simulated documents have more.
    (observed,) = [line for line in top.get_lines() if line.get_label() == "observed"]
    assert np.asarray(observed.get_ydata())[np.asarray(observed.get_xdata()) == 3].max() == 1.0
    simulated = [line for line in top.get_lines() if line.get_label() != "observed"]
    at_three = [np.asarray(s.get_ydata())[np.asarray(s.get_xdata()) == 3] for s in simulated]
    assert max(values.max() if values.size else 0.0 for values in at_three) < 0.5
    # Below, the difference from the simulated median lies above the simulated band.
    (band,) = [c for c in bottom.collections if c.get_gid() == "simulated band"]
    band_top = max(path.vertices[:, 1].max() for path in band.get_paths())
    (difference,) = [line for line in bottom.get_lines() if line.get_label() == "observed"]
    assert np.max(difference.get_ydata()) > 0.5 > band_top


def test_ppc_x_axis_stops_at_the_quantiles_when_a_few_values_are_extreme():
    X, y = _bursty_text(1)
    X[0] = 1  # one document uses all 40 words, every other one 3
    est = _fit("multinomial_nb", X, y)
    bottom = plots_workflow.plot_ppc(est).axes[1]
    assert bottom.get_xlim()[1] < 40
    assert "axis cut at the 0.5 % and 99.5 % quantiles" in bottom.get_xlabel()
    assert "to 40" in bottom.get_xlabel()  # the full range is named


def test_ppc_x_axis_shows_every_value_without_extremes(fitted):
    bottom = plots_workflow.plot_ppc(fitted["multinomial_nb"]).axes[1]
    values = _observed_statistic("multinomial_nb", *_data("multinomial_nb"))
    low, high = bottom.get_xlim()
    assert low < values.min() and high > values.max()
    assert "cut" not in bottom.get_xlabel()


@pytest.mark.parametrize("prob", [0, 1, "0.9", None])
def test_ppc_rejects_a_band_mass_outside_0_1(fitted, prob):
    with pytest.raises(ValueError, match="prob: expected a number strictly between 0 and 1"):
        plots_workflow.plot_ppc(fitted["multinomial_nb"], prob=prob)


def test_ppc_leaves_the_fit_as_it_was(fitted):
    est = fitted["multinomial_nb"]
    groups = {name: set(est.idata_[name].data_vars) for name in est.idata_.children}
    observed = est.idata_["observed_data"].to_dataset().copy(deep=True)
    plots_workflow.plot_ppc(est)
    assert {name: set(est.idata_[name].data_vars) for name in est.idata_.children} == groups
    assert "posterior_predictive" not in est.idata_.children
    assert est.idata_["observed_data"].to_dataset().identical(observed)


def test_ppc_of_the_same_seed_is_the_same_figure(fitted):
    def simulated_lines(seed):
        figure = plots_workflow.plot_ppc(fitted["bernoulli_nb"], draws=10, random_seed=seed)
        ax = figure.axes[0]  # the ECDFs: the simulated ones, then the observed one
        return [np.column_stack(line.get_data()) for line in ax.get_lines()[:-1]]

    def same(lines, others):
        return len(lines) == len(others) and all(
            np.array_equal(a, b) for a, b in zip(lines, others, strict=True)
        )

    first, again, other = simulated_lines(1), simulated_lines(1), simulated_lines(2)
    assert len(first) == 10
    assert same(first, again)
    assert not same(first, other)


def test_ppc_draws_any_statistic_asked_for(fitted):
    figure = plots_workflow.plot_ppc(fitted["bernoulli_nb"], var_names=["class_feature_freq"])
    titles = [ax.get_title() for ax in figure.axes]
    assert "class_feature_freq" in titles


def test_ppc_rejects_a_name_that_is_not_a_statistic(fitted):
    with pytest.raises(ValueError, match=r"var_names: expected statistics .* got \['X'\]"):
        plots_workflow.plot_ppc(fitted["gda"], var_names=["X"])


def test_ppc_rejects_draws_that_are_not_a_positive_integer(fitted):
    with pytest.raises(ValueError, match="draws: expected a positive integer"):
        plots_workflow.plot_ppc(fitted["gda"], draws=0)


def test_ppc_and_loo_of_a_model_file_without_rows_say_to_refit():
    est = bayesgen.load(OLD_FILE)
    with pytest.raises(ValueError, match=r"holds no observed_data group.*Refit"):
        plots_workflow.plot_ppc(est)
    with pytest.raises(ValueError, match=r"plot_loo: this fit holds no log_likelihood.*Refit"):
        plots_workflow.plot_loo(est)


# -- plot_loo ------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ESTIMATORS)
def test_loo_shows_the_pareto_k_of_every_row_and_the_threshold(fitted, name):
    figure = plots_workflow.plot_loo(fitted[name])
    assert isinstance(figure, Figure)
    (ax,) = figure.axes
    n_rows = len(_data(name)[1])
    assert sum(len(c.get_offsets()) for c in ax.collections) == n_rows
    good_k = min(1 - 1 / np.log10(DRAWS * CHAINS), 0.7)  # ArviZ's threshold for S draws
    levels = [line.get_ydata()[0] for line in ax.get_lines()]
    assert np.isclose(levels, good_k).any()
    # It names what it scores: the joint density of each row, not the label alone.
    assert ax.get_title().startswith("PSIS-LOO of the rows' log p(x, y): elpd_loo = ")


def _labelled_rows(figure) -> list[int]:
    return [int(t.get_text()) for t in figure.axes[0].texts if t.get_gid() == "worst row"]


def test_loo_labels_only_the_ten_rows_with_the_largest_k():
    texts, y = load_toy_spam()
    X, _ = vectorize_text(texts)  # 50 short messages, 230 words: most k are large
    est = _fit("multinomial_nb", X, y)
    figure = plots_workflow.plot_loo(est)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pareto_k = az.loo(est.idata_, pointwise=True).pareto_k.values
    good_k = min(1 - 1 / np.log10(DRAWS * CHAINS), 0.7)
    assert np.count_nonzero(pareto_k > good_k) > 10  # more rows above it than labels
    expected = list(np.argsort(-pareto_k, kind="stable")[:10])
    assert _labelled_rows(figure) == expected
    assert "(10 largest labelled)" in figure.axes[0].get_title()
    assert _labelled_rows(plots_workflow.plot_loo(est, max_labels=3)) == expected[:3]
    assert _labelled_rows(plots_workflow.plot_loo(est, max_labels=0)) == []


def test_loo_draws_a_leave_one_out_computed_before_as_it_draws_its_own():
    texts, y = load_toy_spam()
    X, _ = vectorize_text(texts)
    est = _fit("multinomial_nb", X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # ArviZ's warning about large k
        arviz_loo = az.loo(est.idata_, var_name="y", pointwise=True)
    own = plots_workflow.plot_loo(est)
    given = plots_workflow.plot_loo(est, loo=arviz_loo)
    assert given.axes[0].get_title() == own.axes[0].get_title()
    assert _labelled_rows(given) == _labelled_rows(own) != []
    points = [
        np.concatenate([c.get_offsets() for c in f.axes[0].collections]) for f in (own, given)
    ]
    np.testing.assert_allclose(points[0], points[1], rtol=0, atol=1e-10)


def test_loo_refuses_a_leave_one_out_of_other_rows(fitted):
    X, y = _data("gda")
    other = _fit("gda", X[: len(y) // 2], y[: len(y) // 2])  # half of the rows
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other_loo = az.loo(other.idata_, var_name="y", pointwise=True)
    n_rows = len(_data("gda")[1])
    assert other_loo.n_data_points != n_rows
    with pytest.raises(ValueError, match=rf"loo: expected .* this fit's {n_rows} training rows"):
        plots_workflow.plot_loo(fitted["gda"], loo=other_loo)
    with pytest.raises(ValueError, match=r"loo: expected .*, got dict"):
        plots_workflow.plot_loo(fitted["gda"], loo={"elpd": 1.0})


@pytest.mark.parametrize("max_labels", [-1, 2.5, True, "10"])
def test_loo_rejects_a_label_count_that_is_not_a_whole_number(fitted, max_labels):
    with pytest.raises(ValueError, match="max_labels: expected a non-negative integer"):
        plots_workflow.plot_loo(fitted["gda"], max_labels=max_labels)


def test_loo_shows_the_pareto_warning_in_the_figure_instead_of_raising_it():
    X, y = _data("gda")
    X = X.copy()
    X.iloc[0] += 40.0  # one row far outside its class: leaving it out moves the posterior
    est = _fit("gda", X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = plots_workflow.plot_loo(est)
    texts = [text.get_text() for text in figure.findobj(plt.Text)]
    assert any(t.startswith("PSIS: Estimated shape parameter of Pareto") for t in texts)
    assert "0" in texts  # the outlying row is labelled with its index


def test_loo_without_influential_rows_shows_no_warning():
    X, y = _data("multinomial_nb")
    est = bayesgen.MultinomialNB(
        inference="conjugate", compute_map=False, draws=1000, chains=2, random_seed=0
    ).fit(X, y)
    figure = plots_workflow.plot_loo(est)
    title = figure.axes[0].get_title()
    assert title.endswith(f"0 of {len(y)} rows with k > 0.70")  # 2,000 draws: the full 0.7
    assert not any(t.get_text().startswith("PSIS:") for t in figure.findobj(plt.Text))


# -- the report ----------------------------------------------------------------------------------


def test_report_of_a_fit_shows_the_ppc_and_loo(fitted, tmp_path):
    text = report(fitted["categorical_nb"], tmp_path, max_features=1).read_text(encoding="utf-8")
    for title, png in (
        ("Posterior predictive check", "ppc.png"),
        ("Leave-one-out (PSIS)", "loo.png"),
    ):
        assert f'<h2>{title}</h2><img src="{png}"' in text
        assert (tmp_path / png).read_bytes()[:8] == PNG_MAGIC
    assert "class_category_freq" in text
    assert plt.get_fignums() == []


def test_report_of_a_0_1_0_model_file_lists_ppc_and_loo_as_skipped(tmp_path):
    text = report(bayesgen.load(OLD_FILE), tmp_path, max_features=1).read_text(encoding="utf-8")
    assert "<b>Posterior predictive check</b>: Not drawn: this fit holds no training rows" in text
    assert "<b>Leave-one-out (PSIS)</b>: Not drawn: this fit holds no pointwise" in text
    assert text.count("Refit the model to get it") == 2
    assert not (tmp_path / "ppc.png").exists()
    assert not (tmp_path / "loo.png").exists()


def test_report_of_a_partial_fit_says_partial_fit_keeps_no_rows(tmp_path):
    X, y = bernoulli_data()
    est = bayesgen.BernoulliNB(inference="conjugate", compute_map=False, draws=50, random_seed=0)
    est.partial_fit(X[:20], y[:20], classes=[0, 1]).partial_fit(X[20:], y[20:])
    text = report(est, tmp_path, max_features=1).read_text(encoding="utf-8")
    assert text.count("partial_fit keeps no rows. Fit on all rows at once to get it.") == 2
