"""The report's feature-relevance section (bayesgen.plotting.model_sections): drawn for naive
Bayes fits from the relevance table, the reason given where it is not."""

import matplotlib.pyplot as plt
import numpy as np
import pytest

import bayesgen
from bayesgen.plotting.model_sections import RELEVANCE_FEATURES, model_sections
from bayesgen.plotting.report import report

CONJUGATE = {"inference": "conjugate", "compute_map": False, "random_seed": 0, "draws": 50}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


@pytest.fixture(scope="module")
def words():
    """30 words over 200 messages; words 0-2 are three times likelier in class "b"."""
    rng = np.random.default_rng(4)
    y = np.array(["a", "b"])[np.arange(200) % 2]
    rates = np.full((2, 30), 0.3)
    rates[1, :3] = 0.9
    X = rng.poisson(rates[(y == "b").astype(int)])
    return X, y


def relevance_section(est):
    found = [(s, draw) for s, draw in model_sections(est, None, None) if s.title.startswith("Fea")]
    assert len(found) == 1
    return found[0]


def test_naive_bayes_fit_draws_the_most_relevant_features(words):
    X, y = words
    est = bayesgen.MultinomialNB(**CONJUGATE).fit(X, y)
    section, draw = relevance_section(est)
    assert section.file == "feature_relevance.png"
    assert "P(relevant | data)" in section.caption and "rest of the vocabulary" in section.caption
    figure = draw()
    ticks = figure.axes[0].get_yticklabels()
    # The panel lists the top features, the most relevant at the top.
    labels = [tick.get_text() for tick in sorted(ticks, key=lambda tick: -tick.get_position()[1])]
    expected = est.feature_relevance(top=RELEVANCE_FEATURES)["feature"].tolist()
    assert labels == expected
    assert len(labels) == min(RELEVANCE_FEATURES, X.shape[1])
    assert set(expected[:3]) == {"x0", "x1", "x2"}  # the words made relevant


def test_a_model_without_per_feature_relevance_says_why():
    rng = np.random.default_rng(0)
    codes = np.arange(60) % 2
    gda = bayesgen.GaussianDiscriminantAnalysis(**CONJUGATE)
    gda.fit(rng.normal(size=(60, 2)) + codes[:, None], codes)
    section, draw = relevance_section(gda)
    assert draw is None and section.file is None
    assert section.caption.startswith("Not drawn: est: feature relevance needs a naive Bayes")


def test_a_hyperprior_on_alpha_says_why(words):
    X, y = words
    est = bayesgen.MultinomialNB(alpha_prior=(1.0, 1.0), **CONJUGATE).fit(X, y)
    section, draw = relevance_section(est)
    assert draw is None
    assert section.caption.startswith("Not drawn: alpha_prior: feature relevance needs a fixed")


def test_mixed_model_draws_its_naive_bayes_blocks_features():
    rng = np.random.default_rng(2)
    codes = np.arange(80) % 2
    X = np.column_stack([rng.normal(size=80) + 2.0 * codes, rng.poisson(1.0 + 2.0 * codes)])
    blocks = [("size", "gaussian", [0]), ("eggs", "poisson", [1])]
    est = bayesgen.NaiveBayes(blocks=blocks, **CONJUGATE).fit(X, codes)
    _, draw = relevance_section(est)
    labels = {tick.get_text() for tick in draw().axes[0].get_yticklabels()}
    assert labels == {"size: 0", "eggs: 1"}  # columns named by their index


def test_report_writes_the_section_image(words, tmp_path):
    X, y = words
    est = bayesgen.BernoulliNB(binarize=0.0, **CONJUGATE).fit(X, y)
    index = report(est, tmp_path, max_features=1)
    assert (tmp_path / "feature_relevance.png").read_bytes()[:8] == PNG_MAGIC
    assert "<h2>Feature relevance</h2>" in index.read_text(encoding="utf-8")
