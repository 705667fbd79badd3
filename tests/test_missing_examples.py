"""What the missing-value examples claim, checked on their own functions (issue 23).

examples/penguins_missing.py: keeping the 11 incomplete penguins changes the complete rows'
exact leave-one-out score by a negligible amount (they add 3 % more rows, of species the other
columns tell apart easily), and every incomplete penguin gets a finite prediction from its
observed entries. examples/sms_metadata_missing.py: blanking metadata keeps every row usable,
and dropping the incomplete rows loses against integrating the blanks out.
"""

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import bayesgen
from bayesgen.input.datasets import load_penguins, load_toy_spam

ROOT = Path(__file__).resolve().parents[1]


def load_example(name: str):
    """The example as a module (its ``__main__`` block does not run)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def penguins():
    return load_penguins(dropna=False)


def test_penguins_keeping_incomplete_rows_changes_the_complete_rows_loo_negligibly(penguins):
    example = load_example("penguins_missing")
    X, y = penguins
    table = example.leave_one_out_on_complete_rows(X, y)
    keep, drop = table.loc[example.KEEP], table.loc[example.DROP]
    # Both score the same 333 labels: about -21 nats each; the 11 extra rows move it by
    # well under a nat in all (a NaN read as a value, or a row misaligned, moves it by more).
    assert -30 < drop["elpd_loo"] < -15
    assert abs(keep["elpd_loo"] - drop["elpd_loo"]) < 1.0
    assert max(keep["se_diff"], drop["se_diff"]) < 0.5


def test_penguins_incomplete_rows_get_finite_predictions_of_their_species(penguins):
    example = load_example("penguins_missing")
    X, y = penguins
    table = example.incomplete_predictions(X, y)
    assert len(table) == 11
    proba = table.filter(like=") LOO").to_numpy()
    assert np.isfinite(proba).all() and np.allclose(proba.sum(axis=1), 1.0)
    # The 9 that miss only their sex keep island and measurements: each species is plain.
    sex_only = (table["missing"] == "sex").to_numpy()
    assert sex_only.sum() == 9
    predicted = np.array(["Adelie", "Chinstrap", "Gentoo"])[proba.argmax(axis=1)]
    assert (predicted[sex_only] == table["species"].to_numpy()[sex_only]).all()
    assert (proba[sex_only].max(axis=1) > 0.99).all()


def test_sms_blanks_hit_about_the_share_asked_and_only_metadata():
    example = load_example("sms_metadata_missing")
    texts, _ = load_toy_spam()
    whole = example.with_metadata(list(texts))
    blanked = example.blank(whole, 0.2, seed=0)
    assert blanked["text"].notna().all()
    share = blanked[example.METADATA].isna().to_numpy().mean()
    assert 0.1 < share < 0.3  # 250 entries, each blanked with probability 0.2
    observed = blanked[example.METADATA].notna()
    assert (blanked["length"][observed["length"]] == whole["length"][observed["length"]]).all()


def test_sms_dropping_incomplete_rows_scores_below_integrating_the_blanks_out():
    example = load_example("sms_metadata_missing")
    texts, labels = load_toy_spam()
    y = np.asarray(labels)
    X = example.blank(example.with_metadata(list(texts)), 0.2, seed=0)
    complete = X[example.METADATA].notna().all(axis=1).to_numpy()
    kept = example.fit(example.BLOCKS, X, y)
    dropped = example.fit(example.BLOCKS, X[complete], y[complete])
    on_complete = bayesgen.leave_one_out(kept).pointwise[complete]
    assert np.isfinite(on_complete).all()
    assert on_complete.sum() > bayesgen.leave_one_out(dropped).pointwise.sum()
