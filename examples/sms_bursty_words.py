"""Bursty words on SMS text: does the Dirichlet compound multinomial fix the multinomial's misfit,
and which words matter?

Three questions, on one CountVectorizer vocabulary (words in at least --min-df messages):

1. Posterior predictive check of distinct words per message. A multinomial draws every token
   independently, so it repeats words less than people do and simulates too many distinct
   words per message. The Dirichlet compound multinomial (DirichletMultinomialNB, by NUTS)
   draws each message its own word distribution θ ~ Dirichlet(s m_k), so a word once used is
   likelier again. Each check prints the observed mean, the simulated data sets' mean and 94%
   interval, and whether the observed mean lies inside it.
2. Leave-one-out log score of the labels (bayesgen.compare_models): multinomial and Bernoulli
   exactly; the DCM with its point fit refitted without each message ("plug-in": exact given
   that fit, its (s, m) not integrated out) and, as "dcm by psis", by Pareto-smoothed
   importance sampling on its NUTS draws (it has no conjugate posterior); and the multinomial
   and the Bernoulli models averaged over all subsets of words that depend on the class (Dash
   and Cooper; exact leave-one-out). A
   message's word counts share its length, so the multinomial is averaged over the 2^V nodes
   of its Dirichlet tree (word j against the words after it, most frequent first).
3. The most relevant words: P(the word's rate depends on the class) from the multinomial's
   word-against-the-rest Bayes factor, the spam-against-ham log-odds of the word with its 94%
   interval, and the exact P(relevant) of the word's presence under the Bernoulli model.

Uses the SMS Spam Collection when a path is given, else the bundled toy corpus (50 messages;
there nothing need fail or pass).

Run: python examples/sms_bursty_words.py [--data-path SMSSpamCollection.tsv] [--min-df 5]
     [--draws 500] [--tune 500] [--chains 2] [--ppc-draws 100] [--top 20] [--skip-dcm]
"""

import argparse
import time
import warnings

import numpy as np
import pandas as pd
from sklearn.feature_extraction.text import CountVectorizer

import bayesgen
from bayesgen.checks.loo import LeaveOneOut
from bayesgen.input.datasets import load_sms_spam, load_toy_spam

#: The interval of the predictive check.
PROB = 0.94


def predictive_check(name: str, est, ppc_draws: int) -> tuple[float, float, float, float]:
    """Print and return the observed mean distinct words per message, the simulated data
    sets' mean and their ``PROB`` interval."""
    tree = est.sample_posterior_predictive(random_seed=1, draws=ppc_draws, keep_rows=False)
    observed = float(tree["constant_data"]["distinct_words"].values.mean())
    simulated = tree["posterior_predictive_rows"]["distinct_words"].mean("obs").values.ravel()
    low, high = np.quantile(simulated, [(1 - PROB) / 2, (1 + PROB) / 2])
    if low <= observed <= high:
        verdict = "passes"
    else:
        gap = min(abs(observed - low), abs(observed - high))
        verdict = f"fails: the observed mean is {gap:.2f} outside the interval"
    print(
        f"{name}: distinct words per message, observed {observed:.2f}; simulated "
        f"{simulated.mean():.2f} ({PROB:.0%} interval {low:.2f} to {high:.2f}); {verdict}"
    )
    return observed, float(simulated.mean()), float(low), float(high)


def averaged_loo(est) -> LeaveOneOut:
    """The exact leave-one-out of ``est`` averaged over all feature subsets, as a
    :class:`~bayesgen.checks.loo.LeaveOneOut`."""
    proba = est.average_features_loo_proba()
    _, y_codes = est.training_rows()
    codes = np.asarray(y_codes, dtype=np.int64)
    with np.errstate(divide="ignore"):
        return LeaveOneOut(np.log(proba), codes, "exact", np.full(codes.size, np.nan))


def with_row(table: pd.DataFrame, models: dict, name: str, extra: LeaveOneOut) -> pd.DataFrame:
    """``table`` (of :func:`bayesgen.compare_models` on ``models``) with a row for ``extra``, a
    leave-one-out of the same labels, ranked and differenced as compare_models does."""
    return with_rows(table, models, {name: extra})


def with_rows(table: pd.DataFrame, models: dict, extras: dict[str, LeaveOneOut]) -> pd.DataFrame:
    """``table`` (of :func:`bayesgen.compare_models` on ``models``) with a row for each of
    ``extras`` (name -> leave-one-out of the same labels), ranked and differenced as
    compare_models does.

    Only the best model's leave-one-out is recomputed, unless an extra beats it (then all)."""
    best = table.index[0]
    with warnings.catch_warnings():  # compare_models has already warned of these rows
        warnings.simplefilter("ignore", UserWarning)
        pointwise = {best: bayesgen.leave_one_out(models[best]).pointwise}
        if max(extra.elpd for extra in extras.values()) > pointwise[best].sum():
            pointwise |= {key: bayesgen.leave_one_out(models[key]).pointwise for key in table.index}
    rows = table.copy()
    for name, extra in extras.items():
        pointwise[name] = extra.pointwise
        rows.loc[name] = {
            "elpd_loo": extra.elpd,
            "se": extra.se,
            "accuracy_loo": extra.accuracy,
            "method": extra.method,
            "pareto_k_max": extra.pareto_k_max,
        }
    leader = max(pointwise, key=lambda key: pointwise[key].sum())
    for key, values in pointwise.items():
        difference = pointwise[leader] - values
        rows.loc[key, "elpd_diff"] = difference.sum()
        rows.loc[key, "se_diff"] = np.sqrt(difference.size * difference.var())
    return rows.sort_values("elpd_loo", ascending=False)


def relevant_words(multinomial, bernoulli, top: int) -> pd.DataFrame:
    """The ``top`` words by the multinomial's relevance, with the Bernoulli's P(relevant)."""
    table = multinomial.feature_relevance(top=top)
    presence = bernoulli.feature_relevance().set_index("feature")["p_relevant"]
    spam = [c for c in table.columns if c.startswith("effect[")][-1][len("effect[") : -1]
    return pd.DataFrame(
        {
            "word": table["feature"],
            "log_BF": table["log_bayes_factor"].round(1),
            "P(relevant)": table["p_relevant"].map("{:.4f}".format),
            f"log-odds {spam}": table[f"effect[{spam}]"].round(2),
            "94% interval": [
                f"{low:.2f} to {high:.2f}"
                for low, high in zip(
                    table[f"effect_lower[{spam}]"], table[f"effect_upper[{spam}]"], strict=True
                )
            ],
            "P(presence relevant)": table["feature"].map(presence).map("{:.4f}".format),
        }
    )


def fit_dcm(X, labels, vocabulary, options: argparse.Namespace):
    """The Dirichlet compound multinomial by NUTS, its time and concentrations printed."""
    fitting = time.perf_counter()
    dcm = bayesgen.DirichletMultinomialNB(
        draws=options.draws,
        tune=options.tune,
        chains=options.chains,
        cores=options.chains,
        compute_map=False,
        prior_draws=0,
        random_seed=0,
        progressbar=False,
    ).fit(X, labels, feature_names=vocabulary)
    pairs = zip(dcm.classes_, dcm.concentration_, strict=True)
    concentration = ", ".join(f"{label} {value:.0f}" for label, value in pairs)
    print(
        f"DCM by NUTS: {options.chains} x {options.draws} draws in "
        f"{time.perf_counter() - fitting:.0f} s; posterior mean concentration s: {concentration}"
    )
    return dcm


def main(options: argparse.Namespace) -> None:
    start = time.perf_counter()
    texts, labels = load_sms_spam(options.data_path) if options.data_path else load_toy_spam()
    vectorizer = CountVectorizer(min_df=options.min_df)
    X = vectorizer.fit_transform(texts)
    vocabulary = vectorizer.get_feature_names_out()
    print(f"{X.shape[0]} messages, {X.shape[1]} words in at least {options.min_df} messages")
    exact = {"inference": "conjugate", "compute_map": False, "random_seed": 0, "draws": 500}
    multinomial = bayesgen.MultinomialNB(**exact).fit(X, labels, feature_names=vocabulary)
    bernoulli = bayesgen.BernoulliNB(binarize=0.0, **exact)
    bernoulli.fit(X, labels, feature_names=vocabulary)
    models = {"multinomial": multinomial, "bernoulli": bernoulli}
    if not options.skip_dcm:
        models["dcm"] = fit_dcm(X, labels, vocabulary, options)

    print("\n1. Posterior predictive check")
    predictive_check("multinomial", multinomial, options.ppc_draws)
    if "dcm" in models:
        predictive_check("DCM", models["dcm"], options.ppc_draws)

    print("\n2. Leave-one-out log score of the labels")
    table = bayesgen.compare_models(models)
    averaged = {
        "multinomial averaged over words": averaged_loo(multinomial),
        "bernoulli averaged over words": averaged_loo(bernoulli),
    }
    if "dcm" in models:  # its warning says how many rows PSIS cannot estimate reliably
        averaged["dcm by psis"] = bayesgen.leave_one_out(models["dcm"], method="psis")
    table = with_rows(table, models, averaged)
    with pd.option_context("display.width", 120, "display.max_columns", None):
        print(table.round(3))

    print(f"\n3. The {options.top} most relevant words")
    with pd.option_context("display.width", 120, "display.max_columns", None):
        print(relevant_words(multinomial, bernoulli, options.top).to_string(index=False))
    print(f"({time.perf_counter() - start:.0f} s)")


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a whole number >= 1; got {text}")
    return value


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data-path",
        default=None,
        help="the SMS Spam Collection's tab-separated file (label, message) (default: none, "
        "the bundled toy corpus)",
    )
    parser.add_argument(
        "--min-df",
        type=positive_int,
        default=1,
        help="keep the words in at least this many messages; 5 keeps NUTS to minutes on SMS "
        "Spam (default: %(default)s)",
    )
    parser.add_argument(
        "--draws",
        type=positive_int,
        default=300,
        help="NUTS draws per chain (default: %(default)s)",
    )
    parser.add_argument(
        "--tune",
        type=positive_int,
        default=300,
        help="NUTS tuning steps per chain (default: %(default)s)",
    )
    parser.add_argument(
        "--chains", type=positive_int, default=2, help="NUTS chains (default: %(default)s)"
    )
    parser.add_argument(
        "--ppc-draws",
        type=positive_int,
        default=100,
        help="posterior predictive data sets to simulate (default: %(default)s)",
    )
    parser.add_argument(
        "--top", type=positive_int, default=20, help="words to list (default: %(default)s)"
    )
    parser.add_argument(
        "--skip-dcm",
        action="store_true",
        help="leave out the DCM (NUTS, minutes on SMS Spam): the exact models only (default: "
        "%(default)s)",
    )
    main(parser.parse_args())
