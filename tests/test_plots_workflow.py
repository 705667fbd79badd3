"""The posterior predictive check and PSIS-LOO plots (bayesgen.plots_workflow) and their report
sections.

Every fit is conjugate without a MAP (nothing compiles). The observed statistics are computed
here from X and y with numpy and pandas, not by bayesgen.
"""

import warnings
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from conftest import DATA, bernoulli_data
from matplotlib.figure import Figure

import bayesgen
from bayesgen import plots_workflow
from bayesgen.reporting import report

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
    (ax,) = [ax for ax in figure.axes if ax.get_lines()]
    (observed,) = [line for line in ax.get_lines() if line.get_label() == "observed"]
    x, ecdf = np.asarray(observed.get_xdata()), np.asarray(observed.get_ydata())
    values = _observed_statistic(name, *_data(name))
    np.testing.assert_allclose(x[[0, -1]], [values.min(), values.max()], rtol=1e-12)
    np.testing.assert_allclose(ecdf, (values[None, :] <= x[:, None] + 1e-12).mean(axis=1))
    assert len(ax.get_lines()) == DRAWS + 1  # one ECDF per simulated data set, plus observed


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
        ax = next(ax for ax in figure.axes if ax.get_lines())
        return [np.asarray(line.get_ydata()) for line in ax.get_lines()[:-1]]

    first, again, other = simulated_lines(1), simulated_lines(1), simulated_lines(2)
    assert len(first) == 10
    np.testing.assert_array_equal(np.stack(first), np.stack(again))
    assert not np.array_equal(np.stack(first), np.stack(other))


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
    assert ax.get_title().startswith("PSIS-LOO: elpd_loo = ")


def test_loo_shows_the_pareto_warning_in_the_figure_instead_of_raising_it():
    X, y = _data("gda")
    X = X.copy()
    X.iloc[0] += 40.0  # one row far outside its class: leaving it out moves the posterior
    est = _fit("gda", X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        figure = plots_workflow.plot_loo(est)
    texts = [text.get_text() for text in figure.findobj(plt.Text)]
    assert any(t.startswith("ArviZ: Estimated shape parameter of Pareto") for t in texts)
    assert "0" in texts  # the outlying row is labelled with its index


def test_loo_without_influential_rows_shows_no_warning():
    X, y = _data("multinomial_nb")
    est = bayesgen.MultinomialNB(
        inference="conjugate", compute_map=False, draws=1000, chains=2, random_seed=0
    ).fit(X, y)
    figure = plots_workflow.plot_loo(est)
    title = figure.axes[0].get_title()
    assert title.endswith(f"0 of {len(y)} rows with k > 0.70")  # 2,000 draws: the full 0.7
    assert not any(t.get_text().startswith("ArviZ:") for t in figure.findobj(plt.Text))


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
