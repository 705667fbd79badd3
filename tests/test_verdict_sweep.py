"""Correct NUTS fits at default settings are judged OK, seed after seed (slow suite).

The issue that brought the family-wise R-hat and ESS limits: with a fixed R-hat of 1.01 the
README's own ``bayesgen fit`` + ``bayesgen compare`` and SMS Spam fits were NOT OK for many
seeds although every row agreed with its closed form. Each case below fits with the
estimator's defaults (4 chains × 1,000 draws after 1,000 tuning steps) and a new seed, and
``compare()`` must say OK every time.

Run with ``make test-slow`` (or ``pytest -m slow tests/test_verdict_sweep.py``); the SMS cases
need the shared data (``../shared/data/sms_spam``) and take about a minute a seed.
"""

from pathlib import Path

import pandas as pd
import pytest
from sklearn.feature_extraction.text import CountVectorizer

from bayesgen import MultinomialNB, compare
from bayesgen.input.data import vectorize_text
from bayesgen.input.datasets import load_sms_spam

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
SMS_SPAM = ROOT.parent / "shared/data/sms_spam/SMSSpamCollection.tsv"
SEEDS = range(20)


def readme_data():
    """What ``bayesgen fit multinomial examples/messages.csv --target label --text-column
    text`` fits: the shipped messages as word counts."""
    table = pd.read_csv(ROOT / "examples/messages.csv")
    X, _ = vectorize_text(table["text"])
    return X, table["label"].to_numpy()


def sms_data(max_features):
    if not SMS_SPAM.exists():
        pytest.skip(f"the shared SMS Spam data is not at {SMS_SPAM}")
    texts, labels = load_sms_spam(SMS_SPAM)
    X = CountVectorizer(max_features=max_features).fit_transform(texts)
    return X, labels


CASES = {
    "readme": readme_data,
    "sms-500": lambda: sms_data(500),
    "sms-full": lambda: sms_data(None),
}


@pytest.fixture(scope="module", params=list(CASES))
def data(request):
    return request.param, CASES[request.param]()


@pytest.mark.parametrize("seed", SEEDS)
def test_a_correct_nuts_fit_is_ok_at_default_settings(data, seed):
    name, (X, y) = data
    est = MultinomialNB(random_seed=seed, compute_map=False, prior_draws=0).fit(X, y)
    result = compare(est)
    assert result.agrees, f"{name}, seed {seed}: a row disagrees\n{result}"
    assert result.ok, f"{name}, seed {seed}: NOT OK\n{result}"
