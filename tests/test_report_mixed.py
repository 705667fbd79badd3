"""The HTML report of a mixed model (bayesgen.NaiveBayes): a section per block.

The expected predictive density is computed here from the textbook normal–inverse-gamma update
and SciPy's Student-t, not from the package's closed forms; the expected rows of
comparison.csv from the blocks' own shapes."""

import re

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from scipy import stats

from bayesgen import GaussianNB, NaiveBayes, PoissonNB
from bayesgen.maths.normal_inverse_gamma import NormalInverseGamma
from bayesgen.plotting import report as report_module

CLASSES = ("a", "b")
#: m₀, κ₀, a₀, b₀ of the Gaussian block.
M0, KAPPA0, A0, B0 = 0.5, 1.0, 2.0, 1.0
#: The blocks: (name, estimator shown in the section's title, file of its plot).
BLOCKS = (
    ("size", "GaussianNB", "block1_feature_densities.png"),
    ("where", "CategoricalNB", "block2_top_features.png"),
    ("eggs", "PoissonNB", "block3_feature_densities.png"),
)


@pytest.fixture(scope="module")
def table():
    rng = np.random.default_rng(5)
    codes = np.arange(40) % 2
    frame = pd.DataFrame(
        {
            "mass": rng.normal(3.0, 0.5, 40) + 1.2 * codes,
            "length": rng.normal(9.0, 1.0, 40) + 2.0 * codes,
            "island": rng.choice(["Biscoe", "Dream", "Torgersen"], 40),
            "eggs": rng.poisson(1.0 + 2.0 * codes),
        }
    )
    return frame, np.array(CLASSES)[codes]


@pytest.fixture(scope="module")
def mixed(table):
    X, y = table
    prior = NormalInverseGamma(mean=M0, kappa=KAPPA0, shape=A0, scale=B0)
    blocks = [
        ("size", GaussianNB(prior=prior), ["mass", "length"]),
        ("where", "categorical", ["island"]),
        ("eggs", PoissonNB(rate_prior=(2.0, 0.5)), ["eggs"]),
    ]
    est = NaiveBayes(blocks=blocks, inference="conjugate", compute_map=False, draws=100)
    return est.set_params(prior_draws=100, random_seed=0).fit(X, y)


@pytest.fixture(scope="module")
def written(mixed, tmp_path_factory):
    """The report's folder, and each figure's panels as drawn: {file: {title: {gid: (x, y)}}}."""
    drawn = {}
    save = report_module._save

    def recording_save(plot, path):
        if isinstance(plot, plt.Figure):
            drawn[path.name] = {
                ax.get_title(): {
                    line.get_gid(): (line.get_xdata(), line.get_ydata()) for line in ax.lines
                }
                for ax in plot.axes
            }
        save(plot, path)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(report_module, "_save", recording_save)
        index = report_module.report(mixed, tmp_path_factory.mktemp("mixed") / "report")
    return index, drawn


def _figures(index) -> dict[str, str]:
    """{section title: PNG file} of the drawn sections of index.html."""
    text = index.read_text(encoding="utf-8")
    return dict(re.findall(r'<figure id="[^"]*"><h2>([^<]*)</h2><img src="([^"]*)"', text))


def test_every_block_has_a_section_titled_with_its_name_and_model(written):
    index, _ = written
    figures = _figures(index)
    for name, estimator, file in BLOCKS:
        assert figures.get(f"Block {name} ({estimator})") == file
        assert (index.parent / file).read_bytes()[:4] == b"\x89PNG"
    assert plt.get_fignums() == []


def test_the_whole_model_has_no_top_features_plot(written):
    index, _ = written
    assert not (index.parent / "top_features.png").exists()
    assert "Top features</b>: Not drawn for the whole model" in index.read_text(encoding="utf-8")


def test_generic_diagnostics_are_drawn(written):
    index, _ = written
    for file in ("trace.png", "rank.png", "ess.png", "posterior_vs_closed_form.png"):
        assert (index.parent / file).read_bytes()[:4] == b"\x89PNG"


def test_comparison_and_summary_hold_the_block_variables(written):
    index, _ = written
    comparison = pd.read_csv(index.parent / "comparison.csv")
    mu = comparison[comparison["variable"] == "size::mu"]
    assert len(mu) == len(CLASSES) * 2  # class × the block's two columns
    assert mu["agrees"].all()
    summary = pd.read_csv(index.parent / "summary.csv", index_col=0)
    assert any(str(name).startswith("size::mu") for name in summary.index)


@pytest.mark.parametrize("label", CLASSES)
def test_gaussian_block_predictive_is_the_student_t_of_the_conjugate_update(written, table, label):
    _, drawn = written
    X, y = table
    x, density = drawn["block1_feature_densities.png"]["length"][f"predictive:{label}"]
    column = X["length"].to_numpy()[y == label]
    n, mean = column.size, column.mean()
    squares = np.sum((column - mean) ** 2)
    kappa, shape = KAPPA0 + n, A0 + n / 2
    location = (KAPPA0 * M0 + n * mean) / kappa
    scale = B0 + squares / 2 + KAPPA0 * n * (mean - M0) ** 2 / (2 * kappa)
    spread = np.sqrt(scale * (kappa + 1) / (shape * kappa))
    picks = np.linspace(0, x.size - 1, 5).astype(int)
    expected = stats.t.pdf(x[picks], df=2 * shape, loc=location, scale=spread)
    np.testing.assert_allclose(density[picks], expected, rtol=1e-9)


def test_poisson_block_panel_is_drawn_at_whole_counts(written):
    _, drawn = written
    x, _ = drawn["block3_feature_densities.png"]["eggs"]["predictive:a"]
    np.testing.assert_array_equal(x, np.round(x))
