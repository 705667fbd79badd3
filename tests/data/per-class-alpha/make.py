"""Writes the model file of this folder with bayesgen as it was before issue 20, when the
estimators took one λ per class as an array in the order of ``classes_`` (commit 34d479a):

    git archive 34d479a bayesgen | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old python tests/data/per-class-alpha/make.py

tests/test_alpha_meaning.py loads it with today's bayesgen: the saved list becomes the mapping
{class label: λ}, and the predictions are those saved beside it.
"""

from pathlib import Path

import numpy as np

import bayesgen

HERE = Path(__file__).resolve().parent
X = np.array([[3, 0, 1], [0, 2, 2], [1, 1, 0], [0, 4, 1], [2, 0, 3], [5, 1, 0]])
Y = np.array(["spam", "ham", "spam", "ham", "spam", "ham"])

if __name__ == "__main__":
    est = bayesgen.MultinomialNB(
        alpha=np.array([0.1, 5.0]),  # ham, spam: classes_ order
        inference="conjugate",
        compute_map=False,
        draws=50,
        chains=2,
        prior_draws=0,
        random_seed=0,
    ).fit(X, Y)
    est.save(HERE / "multinomial-array-alpha.nc")
    np.save(HERE / "multinomial-array-alpha-proba.npy", est.predict_proba(X))
