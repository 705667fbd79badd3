"""Gibbs sampling of a semi-supervised fit: SMS Spam, 1,000 labelled + 4,574 unlabelled messages.

Multinomial naive Bayes (word counts of scikit-learn's ``CountVectorizer``), the labels of all
but the first ``--labelled`` messages hidden. Prints the seconds of the fit (EM, then
``chains`` x (``tune`` + ``draws``) sweeps) and the smallest bulk ESS and largest R-hat of the
class probabilities. The goal (issue 24): ESS >= 400 for every class probability in under
60 s on 2 cores.

Run: ``python benchmarks/bench_semi_supervised_gibbs.py [--chains 2] [--tune 50] [--draws 600]``.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import arviz as az
import numpy as np
from sklearn.feature_extraction.text import CountVectorizer

from bayesgen import MultinomialNB
from bayesgen.input.datasets import load_sms_spam

DATA = (
    Path(__file__).resolve().parents[2] / "shared" / "data" / "sms_spam" / "SMSSpamCollection.tsv"
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--labelled", type=int, default=1000)
    parser.add_argument("--chains", type=int, default=2)
    parser.add_argument("--tune", type=int, default=50)
    parser.add_argument("--draws", type=int, default=600)
    parser.add_argument("--alpha", type=float, default=2.0)
    args = parser.parse_args()
    texts, labels = load_sms_spam(args.data)
    X = CountVectorizer().fit_transform(texts)
    hidden = np.array(labels, dtype=object)
    hidden[args.labelled :] = None
    estimator = MultinomialNB(
        alpha=args.alpha,
        inference="conjugate",
        chains=args.chains,
        tune=args.tune,
        draws=args.draws,
        prior_draws=0,
        random_seed=0,
    )
    start = time.perf_counter()
    estimator.fit(X, hidden)
    seconds = time.perf_counter() - start
    posterior = estimator.idata_["posterior"]
    sampling = posterior.attrs["sampling_time"]
    summary = az.summary(posterior.dataset[["class_prob"]], kind="diagnostics", round_to="none")
    agree = np.mean(estimator.transduction_[args.labelled :] == np.array(labels)[args.labelled :])
    print(
        f"SMS Spam, {args.labelled} labelled + {X.shape[0] - args.labelled} unlabelled messages "
        f"x {X.shape[1]} words, multinomial NB alpha={args.alpha}, {args.chains} chains x "
        f"({args.tune} tune + {args.draws} draws)"
    )
    print(
        f"fit {seconds:.1f} s (EM {estimator.closed_form_.attrs['em_iterations']} iterations, "
        f"Gibbs {sampling:.1f} s, {sampling / (args.chains * (args.tune + args.draws)) * 1e3:.1f} "
        "ms per sweep)"
    )
    print(
        f"class_prob: min bulk ESS {summary['ess_bulk'].min():.0f}, min tail ESS "
        f"{summary['ess_tail'].min():.0f}, max R-hat {summary['r_hat'].max():.3f}; posterior "
        f"mean {posterior['class_prob'].mean(('chain', 'draw')).values.round(4).tolist()}"
    )
    print(f"transduction agrees with the hidden labels on {agree:.1%} of the unlabelled rows")


if __name__ == "__main__":
    main()
