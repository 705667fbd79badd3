"""False-alarm rate and power of compare()'s verdict at default settings.

Correct posteriors:

* Markov chains of known law (stationary AR(1), N(0, 1) marginals, ρ per parameter drawn
  uniformly in [0, 0.6]) at the default 4 chains × 1,000 draws, judged by the R-hat and ESS
  limits alone (``checks.thresholds.diagnostic_limits``);
* exact conjugate draws of real models (the README's 40 messages, SMS Spam with 500 words),
  judged by the whole of ``compare()``;
* with ``--nuts-seeds N``, NUTS fits at default settings of the README data and SMS-500.

Wrong ones (power): a chain stuck 3 SD away, one chain half an SD off in one parameter, ESS
4 times below 400, and draws of a multinomial posterior with every concentration × 1.1.

    python benchmarks/bench_verdict.py --fits 1000 --seeds 50 --nuts-seeds 5
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.signal import lfilter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bayesgen import MultinomialNB, compare  # noqa: E402
from bayesgen.checks.thresholds import diagnostic_limits  # noqa: E402
from bayesgen.input.data import vectorize_text  # noqa: E402
from bayesgen.maths.diagnostics import ess_within, mc_diagnostics  # noqa: E402

SMS = ROOT.parent / "shared/data/sms_spam/SMSSpamCollection.tsv"


def ar1(rng, n_parameters, chains, draws, rho):
    rho = np.broadcast_to(np.asarray(rho, dtype=float), (n_parameters,))
    noise = rng.normal(size=(n_parameters, chains, draws))
    noise[..., 1:] *= np.sqrt(1.0 - rho[:, None, None] ** 2)
    return np.stack(
        [lfilter([1.0], [1.0, -r], x, axis=-1) for r, x in zip(rho, noise, strict=True)]
    )


def fails(draws):
    _, ess, r_hat = mc_diagnostics(draws)
    table = pd.DataFrame({"r_hat": r_hat, "ess_bulk": ess, "ess_within": ess_within(draws)})
    status = diagnostic_limits(table, chains=draws.shape[1], draws=draws.shape[2]).status
    return bool((status == "fail").any()), bool((r_hat > 1.01).any())


def chains_rates(rng, n_fits, n_parameters):
    alarms = fixed = 0
    for _ in range(n_fits):
        draws = ar1(rng, n_parameters, 4, 1000, rng.uniform(0.0, 0.6, n_parameters))
        fail, over = fails(draws)
        alarms += fail
        fixed += over
    power = {}
    for name, make in {
        "chain stuck 3 SD away": lambda d: d.__setitem__((slice(None), 2), 3 + 0.01 * d[:, 2]),
        "one chain 0.5 SD off (one parameter)": lambda d: d.__setitem__((0, 1), d[0, 1] + 0.5),
    }.items():
        hits = 0
        for _ in range(n_fits // 5):
            draws = ar1(rng, n_parameters, 4, 1000, 0.3)
            make(draws)
            hits += fails(draws)[0]
        power[name] = hits / (n_fits // 5)
    hits = 0
    rho = (4000 - 100) / (4000 + 100)  # true ESS 100
    for _ in range(n_fits // 5):
        hits += fails(ar1(rng, n_parameters, 4, 1000, rho))[0]
    power["ESS 4x below 400"] = hits / (n_fits // 5)
    return alarms / n_fits, fixed / n_fits, power


def data_sets():
    table = pd.read_csv(ROOT / "examples/messages.csv")
    X, _ = vectorize_text(table["text"])
    out = {"README messages": (X, table["label"].to_numpy())}
    if SMS.exists():
        from sklearn.feature_extraction.text import CountVectorizer

        from bayesgen.input.datasets import load_sms_spam

        texts, labels = load_sms_spam(SMS)
        out["SMS Spam, 500 words"] = (
            CountVectorizer(max_features=500).fit_transform(texts),
            np.asarray(labels),
        )
    return out


def conjugate_rates(X, y, seeds):
    alarms = 0
    for seed in seeds:
        est = MultinomialNB(inference="conjugate", random_seed=seed, compute_map=False)
        alarms += not compare(est.fit(X, y)).ok
    # power: every concentration x 1.1 (means kept, spreads 5 % narrower)
    hits = 0
    for seed in seeds[: max(1, len(seeds) // 5)]:
        est = MultinomialNB(inference="conjugate", random_seed=seed, compute_map=False).fit(X, y)
        counts = est.closed_form_["feature_count"].values + 1.0
        rng = np.random.default_rng(seed)
        posterior = est.idata_["posterior"].to_dataset()
        shape = posterior["feature_prob"].shape
        wrong = np.stack(
            [rng.dirichlet(1.1 * row, size=shape[:2]) for row in counts], axis=2
        ).astype(posterior["feature_prob"].dtype)
        tree = est.idata_.copy()
        tree["posterior"] = posterior.assign(feature_prob=(posterior["feature_prob"].dims, wrong))
        est.idata_ = tree
        hits += not compare(est).ok
    return alarms / len(seeds), hits / max(1, len(seeds) // 5)


def nuts_rates(X, y, seeds):
    ok = 0
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = MultinomialNB(random_seed=seed, compute_map=False, prior_draws=0).fit(X, y)
        result = compare(est)
        ok += result.ok
        print(
            f"    NUTS seed {seed}: ok={result.ok} max R-hat "
            f"{result.table['r_hat'].max():.4f} (limit {result.settings['rhat_max']:.4f}), "
            f"borderline={len(result.borderline)}",
            flush=True,
        )
    return ok


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--fits", type=int, default=1000, help="AR(1) fits (default 1000)")
    parser.add_argument("--parameters", type=int, default=50, help="per AR(1) fit (50)")
    parser.add_argument("--seeds", type=int, default=50, help="conjugate fits per data (50)")
    parser.add_argument("--nuts-seeds", type=int, default=0, help="NUTS fits per data (0)")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(20261126)
    start = time.perf_counter()
    alarm, fixed, power = chains_rates(rng, args.fits, args.parameters)
    print(
        f"AR(1) chains, 4 x 1,000 draws, {args.parameters} parameters, {args.fits} fits: "
        f"false alarms {alarm:.2%} (a fixed R-hat 1.01 would flag {fixed:.1%})"
    )
    for name, rate in power.items():
        print(f"  power, {name}: {rate:.0%}")
    for name, (X, y) in data_sets().items():
        seeds = list(range(args.seeds))
        alarm, power_scaled = conjugate_rates(X, y, seeds)
        print(
            f"{name}, exact conjugate draws, {len(seeds)} seeds: false alarms {alarm:.1%}; "
            f"power against concentrations x 1.1: {power_scaled:.0%}"
        )
        if args.nuts_seeds:
            ok = nuts_rates(X, y, list(range(args.nuts_seeds)))
            print(f"{name}, NUTS at default settings: OK {ok} of {args.nuts_seeds}")
    print(f"({time.perf_counter() - start:.0f} s)")


if __name__ == "__main__":
    main()
