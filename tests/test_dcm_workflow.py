"""The Dirichlet compound multinomial in the workflow around a fit: ``bayesgen fit dcm`` on a
text column, ``bayesgen predict`` from the saved file, ``bayesgen.load``, and the HTML report.

One tiny NUTS fit (30 messages of 20 words, 2 chains x 50 draws) made by the command line
serves every test.
"""

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import bayesgen
from bayesgen import DirichletMultinomialNB
from bayesgen.cli import main
from bayesgen.families.dcm import FAMILY

SPAM = "win cash now free prize call claim txt urgent reply".split()
HAM = "lunch at noon see you meeting home later dinner ok".split()


def bursty_messages(n_messages=30, seed=0) -> pd.DataFrame:
    """Messages that repeat their words: each draws its own word probabilities."""
    rng = np.random.default_rng(seed)
    texts, labels = [], []
    for i in range(n_messages):
        words, label = (SPAM, "spam") if i % 2 else (HAM, "ham")
        probabilities = rng.dirichlet(np.full(len(words), 0.5))
        texts.append(" ".join(rng.choice(words, size=rng.integers(4, 12), p=probabilities)))
        labels.append(label)
    return pd.DataFrame({"text": texts, "label": labels})


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    folder = tmp_path_factory.mktemp("dcm_cli")
    data = folder / "messages.csv"
    bursty_messages().to_csv(data, index=False)
    model = folder / "messages-dcm.nc"
    arguments = ["fit", "dcm", str(data), "--target", "label", "--text-column", "text"]
    sampling = ["--draws", "50", "--tune", "100", "--chains", "2", "--seed", "1", "--no-map"]
    with pytest.warns(UserWarning):  # NUTS this short warns
        assert main([*arguments, *sampling, "--quiet", "--output", str(model)]) == 0
    return data, model


def test_fit_dcm_saves_a_model_that_bayesgen_load_reads(saved):
    _, model = saved
    est = bayesgen.load(model)
    assert isinstance(est, DirichletMultinomialNB)
    assert set(est.feature_names_in_) == set(SPAM + HAM)
    assert est.idata_["posterior"].sizes["draw"] == 50


def test_predict_from_the_saved_dcm_gives_each_rows_posterior_mean_probabilities(saved, tmp_path):
    data, model = saved
    out = tmp_path / "predictions.csv"
    assert (
        main(["predict", str(model), str(data), "--text-column", "text", "--output", str(out)]) == 0
    )
    predictions = pd.read_csv(out)
    labels = bursty_messages()["label"]
    assert (predictions["predicted"] == labels).mean() > 0.9
    # p(spam | x) averaged over the draws, each the DirMult pmf (SciPy) at that draw's (s, m).
    est = bayesgen.load(model)
    posterior = est.idata_["posterior"].to_dataset().stack(sample=("chain", "draw"))
    columns = list(est.feature_names_in_)
    counts = pd.Series(bursty_messages()["text"][0].split()).value_counts()
    x = counts.reindex(columns, fill_value=0).to_numpy(dtype=float)
    p_spam = []
    for sample in range(posterior.sizes["sample"]):
        at = posterior.isel(sample=sample)
        joint = [
            np.log(at["class_prob"].values[k])
            + stats.dirichlet_multinomial.logpmf(
                x, at["concentration"].values[k] * at["feature_mean"].values[k], x.sum()
            )
            for k in range(2)
        ]
        p_spam.append(np.exp(joint[1] - np.logaddexp(*joint)))
    assert predictions["p_spam"][0] == pytest.approx(np.mean(p_spam), rel=1e-5, abs=1e-6)


def test_fit_dcm_refuses_conjugate_inference_naming_it(saved, capsys, tmp_path):
    data, _ = saved
    arguments = ["fit", "dcm", str(data), "--target", "label", "--text-column", "text"]
    output = ["--output", str(tmp_path / "never.nc")]
    assert main([*arguments, "--inference", "conjugate", *output]) == 2
    assert "inference='nuts'" in capsys.readouterr().err


def test_report_of_a_dcm_fit_writes_its_sections(saved, tmp_path):
    _, model = saved
    est = bayesgen.load(model)
    index = bayesgen.report(est, tmp_path / "report")
    page = index.read_text(encoding="utf-8")
    assert "DirichletMultinomialNB" in page
    # The DCM's own presentation: its predictive check of distinct words, its m panel.
    assert "distinct_words" in page
    assert "mean word probabilities" in page
    for plot in ("trace.png", "ppc.png", "top_features.png", "posterior_vs_closed_form.png"):
        assert (index.parent / plot).stat().st_size > 0, plot


# -- a DCM block in a mixed model ------------------------------------------------------------


def word_counts_and_size(n_rows=40, seed=1):
    """Bursty word counts (six columns) and a numeric column, both depending on the class."""
    rng = np.random.default_rng(seed)
    alpha = np.array([[2.0, 2.0, 0.3, 0.3, 0.5, 0.5], [0.3, 0.3, 2.0, 2.0, 0.5, 0.5]])
    labels = np.where(np.arange(n_rows) % 2, "spam", "ham")
    codes = (labels == "spam").astype(int)
    counts = np.array(
        [rng.multinomial(rng.integers(5, 25), rng.dirichlet(alpha[k])) for k in codes]
    )
    table = pd.DataFrame(counts, columns=[f"w{j}" for j in range(6)])
    table["size"] = rng.normal(size=n_rows) + 2.0 * codes
    return table, labels


def test_a_mixed_model_with_a_dcm_block_refuses_conjugate_inference():
    table, labels = word_counts_and_size()
    blocks = [("words", "dcm", [f"w{j}" for j in range(6)]), ("num", "gaussian", ["size"])]
    with pytest.raises(ValueError, match="inference='nuts'"):
        bayesgen.NaiveBayes(blocks=blocks, inference="conjugate").fit(table, labels)


@pytest.mark.slow  # its own graph (the DCM beside a Gaussian block): about 2 min cold
def test_a_mixed_model_samples_a_dcm_block_beside_a_gaussian_one():
    table, labels = word_counts_and_size()
    words = [f"w{j}" for j in range(6)]
    est = bayesgen.NaiveBayes(
        blocks=[("words", "dcm", words), ("num", "gaussian", ["size"])],
        draws=200,
        tune=300,
        chains=2,
        random_seed=0,
        prior_draws=0,
        progressbar=False,
    )
    est.fit(table, labels)
    alone = FAMILY.fit(table[words].to_numpy(dtype=float), labels)
    for name in ("concentration", "feature_mean"):
        np.testing.assert_allclose(
            est.closed_form_[f"words::{name}"].values, alone[name].values, rtol=1e-12
        )
    assert {"words::concentration", "words::feature_mean", "num::mu"} <= set(
        est.idata_["posterior"].data_vars
    )
    assert (est.predict(table) == labels).mean() > 0.9
    assert bayesgen.compare(est).ok


def test_blocks_option_makes_a_string_column_a_dcm_text_block(tmp_path, capsys):
    table = bursty_messages()
    table["size"] = np.arange(len(table)) % 7 + 0.5
    data = tmp_path / "mixed.csv"
    table.to_csv(data, index=False)
    blocks = "text=dcm:text; size=gaussian:size"
    assert main(["fit", "mixed", str(data), "--target", "label", "--blocks", blocks, "--plan"]) == 0
    rows = [line.split() for line in capsys.readouterr().out.splitlines()]
    assert rows[1] == ["text", "text", "dcm", "text", "given"]
