"""Per-class feature densities (bayesgen.plotting.feature_densities) and their report section.

The expected predictive densities are computed here from the textbook conjugate updates and
SciPy's laws, not from the package's closed forms."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
import xarray as xr
from scipy import stats

from bayesgen import GaussianDiscriminantAnalysis, GaussianNB, PoissonNB
from bayesgen.maths.normal_inverse_gamma import NormalInverseGamma
from bayesgen.plotting.feature_densities import (
    density_kind,
    plot_block_feature_densities,
    plot_feature_densities,
)
from bayesgen.plotting.report import report

CLASSES = ("a", "b")
#: m₀, κ₀, a₀, b₀ of the Gaussian fits below.
M0, KAPPA0, A0, B0 = 0.5, 1.0, 2.0, 1.0
#: Shape and rate of the Poisson fits' Gamma prior.
GAMMA_SHAPE, GAMMA_RATE = 2.0, 0.5


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def normal_data():
    rng = np.random.default_rng(3)
    codes = np.arange(120) % 2
    X = rng.normal(size=(120, 3)) * np.array([1.0, 0.5, 2.0]) + codes[:, None] * [0.0, 2.0, 1.0]
    return X, np.array(CLASSES)[codes]


@pytest.fixture(scope="module")
def gaussian(normal_data):
    X, y = normal_data
    prior = NormalInverseGamma(mean=M0, kappa=KAPPA0, shape=A0, scale=B0)
    est = GaussianNB(prior=prior, inference="conjugate", compute_map=False, draws=300)
    return est.set_params(random_seed=0).fit(X, y)


@pytest.fixture(scope="module")
def count_data():
    rng = np.random.default_rng(4)
    codes = np.arange(100) % 2
    X = rng.poisson(np.array([[1.0, 6.0], [3.0, 2.0]])[codes])
    return X, np.array(CLASSES)[codes]


@pytest.fixture(scope="module")
def poisson(count_data):
    X, y = count_data
    est = PoissonNB(rate_prior=(GAMMA_SHAPE, GAMMA_RATE), inference="conjugate", draws=300)
    return est.set_params(compute_map=False, random_seed=0).fit(X, y)


def _artist(ax, gid: str):
    found = [a for a in (*ax.lines, *ax.collections) if a.get_gid() == gid]
    assert len(found) == 1, f"expected one artist {gid!r}, found {len(found)}"
    return found[0]


def _panel(figure, feature: str):
    (ax,) = [ax for ax in figure.axes if ax.get_title() == feature]
    return ax


def _student_t(x, column: np.ndarray) -> np.ndarray:
    """The normal–inverse-gamma posterior predictive of one cell, from the textbook update."""
    n, mean = column.size, column.mean()
    squares = np.sum((column - mean) ** 2)
    kappa, shape = KAPPA0 + n, A0 + n / 2
    location = (KAPPA0 * M0 + n * mean) / kappa
    scale = B0 + squares / 2 + KAPPA0 * n * (mean - M0) ** 2 / (2 * kappa)
    spread = np.sqrt(scale * (kappa + 1) / (shape * kappa))
    return stats.t.pdf(x, df=2 * shape, loc=location, scale=spread)


def _band_at(band, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The (low, high) of a filled band at each of the points x, from its outline."""
    vertices = band.get_paths()[0].vertices
    low = np.array([vertices[np.isclose(vertices[:, 0], v), 1].min() for v in x])
    high = np.array([vertices[np.isclose(vertices[:, 0], v), 1].max() for v in x])
    return low, high


# -- the exact predictive ----------------------------------------------------------------------


@pytest.mark.parametrize("label", CLASSES)
def test_gaussian_predictive_curve_is_the_student_t_of_the_conjugate_update(
    gaussian, normal_data, label
):
    X, y = normal_data
    figure = plot_feature_densities(gaussian, features=["x1"])
    line = _artist(_panel(figure, "x1"), f"predictive:{label}")
    x, density = line.get_xdata(), line.get_ydata()
    picks = np.linspace(0, x.size - 1, 7).astype(int)
    expected = _student_t(x[picks], X[y == label, 1])
    np.testing.assert_allclose(density[picks], expected, rtol=1e-9)


@pytest.mark.parametrize("label", CLASSES)
def test_poisson_predictive_is_the_negative_binomial_at_whole_counts(poisson, count_data, label):
    X, y = count_data
    figure = plot_feature_densities(poisson, features=["x1"])
    line = _artist(_panel(figure, "x1"), f"predictive:{label}")
    counts, pmf = line.get_xdata(), line.get_ydata()
    np.testing.assert_array_equal(counts, np.arange(counts[0], counts[-1] + 1))
    rows = X[y == label, 1]
    shape, rate = GAMMA_SHAPE + rows.sum(), GAMMA_RATE + rows.size
    expected = stats.nbinom.pmf(counts, shape, rate / (rate + 1))
    np.testing.assert_allclose(pmf, expected, rtol=1e-9)
    assert counts[0] == 0 and counts[-1] >= rows.max()


# -- the band ----------------------------------------------------------------------------------


@pytest.mark.parametrize("label", CLASSES)
def test_gaussian_band_holds_the_density_at_the_posterior_mean(gaussian, label):
    figure = plot_feature_densities(gaussian, features=["x2"])
    ax = _panel(figure, "x2")
    x = _artist(ax, f"predictive:{label}").get_xdata()[::10]
    low, high = _band_at(_artist(ax, f"band:{label}"), x)
    means = (
        gaussian.idata_["posterior"].sel({"class": label, "feature": "x2"}).mean(("chain", "draw"))
    )
    at_mean = stats.norm.pdf(x, float(means["mu"]), np.sqrt(float(means["var"])))
    assert np.all(low <= at_mean) and np.all(at_mean <= high)
    assert np.all(high - low > 0)  # a band, not a line


@pytest.mark.parametrize("label", CLASSES)
def test_poisson_band_holds_the_pmf_at_the_posterior_mean_rate(poisson, label):
    figure = plot_feature_densities(poisson, features=["x0"])
    ax = _panel(figure, "x0")
    segments = _artist(ax, f"band:{label}").get_segments()
    counts = np.array([segment[0, 0] for segment in segments])
    low = np.array([segment[:, 1].min() for segment in segments])
    high = np.array([segment[:, 1].max() for segment in segments])
    rate = float(
        poisson.idata_["posterior"]["feature_rate"].sel({"class": label, "feature": "x0"}).mean()
    )
    at_mean = stats.poisson.pmf(counts, rate)
    assert np.all(low <= at_mean + 1e-15) and np.all(at_mean <= high + 1e-15)


def test_band_narrows_with_its_probability(gaussian):
    def width(prob):
        ax = _panel(plot_feature_densities(gaussian, features=["x0"], prob=prob), "x0")
        x = _artist(ax, "predictive:a").get_xdata()[::20]
        low, high = _band_at(_artist(ax, "band:a"), x)
        return high - low

    assert np.all(width(0.5) <= width(0.94) + 1e-15)
    assert np.sum(width(0.5)) < np.sum(width(0.94))


# -- what is drawn -----------------------------------------------------------------------------


def test_default_features_are_those_the_model_ranks_first(gaussian):
    # x1's class means lie 2 apart in SDs of 0.5, x2's 1 apart in SDs of 2, x0's not at all.
    figure = plot_feature_densities(gaussian, max_features=2)
    assert [ax.get_title() for ax in figure.axes if ax.get_visible()] == ["x1", "x2"]


def test_histograms_are_densities_of_each_class_rows(gaussian):
    ax = _panel(plot_feature_densities(gaussian, features=["x0"]), "x0")
    for label in CLASSES:
        (patch,) = [p for p in ax.patches if p.get_gid() == f"rows:{label}"]
        outline = patch.get_path().vertices
        # The area under a density histogram's outline is 1 (shoelace formula).
        area = 0.5 * abs(
            np.dot(outline[:-1, 0], outline[1:, 1]) - np.dot(outline[1:, 0], outline[:-1, 1])
        )
        assert area == pytest.approx(1.0, rel=1e-9)


def test_a_fit_without_rows_is_drawn_without_histograms(normal_data):
    X, y = normal_data
    est = GaussianNB(inference="conjugate", compute_map=False, draws=100, random_seed=0)
    est.partial_fit(X, y, classes=list(CLASSES))
    figure = plot_feature_densities(est, features=["x0"])
    assert not [p for p in figure.axes[0].patches if str(p.get_gid()).startswith("rows:")]
    assert _artist(figure.axes[0], "predictive:a") is not None


def test_block_pieces_draw_the_same_curves_as_the_estimator(gaussian):
    # What a model of several blocks does: hand in one block's model, closed form, posterior
    # (only its own variables) and rows; no histograms without rows.
    posterior = gaussian.idata_["posterior"].to_dataset()[["mu", "var"]]
    figure = plot_block_feature_densities(
        gaussian.model_,
        gaussian.closed_form_,
        posterior,
        None,
        None,
        gaussian.classes_,
        gaussian.closed_form_["feature"].values,
        features=["x1"],
    )
    whole = plot_feature_densities(gaussian, features=["x1"])
    for label in CLASSES:
        block_line = _artist(figure.axes[0], f"predictive:{label}")
        np.testing.assert_allclose(
            block_line.get_ydata(), _artist(whole.axes[0], f"predictive:{label}").get_ydata()
        )
    assert not figure.axes[0].patches


def test_kind_is_chosen_by_the_posterior_variables_not_the_model(gaussian, poisson):
    assert density_kind(gaussian.idata_["posterior"]).discrete is False
    assert density_kind(poisson.idata_["posterior"]).discrete is True
    cell = (("class", "feature"), np.ones((2, 2)))
    assert density_kind(xr.Dataset({"mu": cell, "cov": cell})) is None


def test_a_posterior_of_no_kind_is_refused(gaussian):
    posterior = gaussian.idata_["posterior"].to_dataset()[["class_prob"]]
    with pytest.raises(ValueError, match="plot_feature_densities: expected a posterior"):
        plot_block_feature_densities(
            gaussian.model_, gaussian.closed_form_, posterior, None, None, CLASSES, ["x0"]
        )


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"features": ["nope"]}, "features: expected names among"),
        ({"prob": 1.0}, r"prob: expected a number in \(0, 1\)"),
        ({"max_features": 0}, "max_features: expected an integer >= 1"),
    ],
)
def test_bad_options_are_refused_naming_them(gaussian, options, message):
    with pytest.raises(ValueError, match=message):
        plot_feature_densities(gaussian, **options)


def test_pieces_of_different_sizes_are_refused(gaussian):
    with pytest.raises(ValueError, match="X_rows: expected 3 columns"):
        plot_block_feature_densities(
            gaussian.model_,
            gaussian.closed_form_,
            gaussian.idata_["posterior"].to_dataset(),
            np.zeros((4, 2)),
            np.zeros(4, dtype=int),
            gaussian.classes_,
            gaussian.closed_form_["feature"].values,
        )


# -- the report --------------------------------------------------------------------------------


@pytest.mark.parametrize("fit", ["gaussian", "poisson"])
def test_report_holds_the_feature_densities_and_their_caption(fit, request, tmp_path):
    est = request.getfixturevalue(fit)
    index = report(est, tmp_path / "report", max_features=2)
    assert (index.parent / "feature_densities.png").read_bytes()[:4] == b"\x89PNG"
    text = index.read_text(encoding="utf-8")
    assert '<img src="feature_densities.png"' in text
    predictive = "Student-t" if fit == "gaussian" else "negative binomial"
    assert f"exact posterior predictive ({predictive}, line)" in text
    assert plt.get_fignums() == []


def test_report_of_gda_has_no_feature_densities(tmp_path):
    rng = np.random.default_rng(0)
    codes = np.arange(40) % 2
    est = GaussianDiscriminantAnalysis(inference="conjugate", compute_map=False, draws=50)
    est = est.set_params(random_seed=0).fit(rng.normal(size=(40, 2)) + codes[:, None], codes)
    index = report(est, tmp_path / "report", max_features=1)
    assert not (index.parent / "feature_densities.png").exists()
    assert "Feature densities" not in index.read_text(encoding="utf-8")
