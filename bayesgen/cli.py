"""Command-line interface: ``bayesgen demo`` and ``bayesgen compare MODEL.nc``."""

from __future__ import annotations

import argparse
import sys

import numpy as np

from bayesgen import __version__

# Seed 000 of the lecture notes: four e-mails over the words a, b, c; y = 1 is spam.
SEED_EMAILS = [["a", "b"], ["b", "a"], ["a", "c", "b"], ["c", "c", "c"]]
SEED_LABELS = [1, 0, 0, 1]


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayesgen`` console script; returns the exit code."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.run(args)
    except (ValueError, TypeError, FileNotFoundError) as error:
        print(f"bayesgen {args.command}: error: {error}", file=sys.stderr)
        return 2


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesgen",
        description="Bayesian generative classifiers checked against their closed forms.",
    )
    parser.add_argument("--version", action="version", version=f"bayesgen {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    demo = commands.add_parser(
        "demo",
        help="closed-form MLE and add-λ estimates on the lecture example and the digits data",
        description="Print the closed-form MLE and add-λ estimates for the lecture notes' "
        "four-e-mail example and for scikit-learn's bundled digits data.",
    )
    demo.add_argument("--alpha", type=float, default=1.0, help="smoothing λ (default 1)")
    demo.set_defaults(run=_run_demo)

    compare = commands.add_parser(
        "compare",
        help="compare a saved model's posterior with its closed forms",
        description="Print the posterior-vs-closed-form comparison of a saved model; exit "
        "status 1 when some parameter disagrees or the diagnostics are not clean.",
    )
    compare.add_argument("model", help="a model file written by est.save() (.nc)")
    compare.set_defaults(run=_run_compare)
    return parser


def _run_demo(args: argparse.Namespace) -> int:
    import pandas as pd
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    from bayesgen import closed_form as cf
    from bayesgen.data import vectorize_text

    print("== Seed 000: four e-mails over the vocabulary a, b, c (multinomial event model) ==")
    X, vectorizer = vectorize_text(SEED_EMAILS)
    words = vectorizer.get_feature_names_out()
    mle = cf.multinomial_nb(X, SEED_LABELS, alpha=0, class_alpha=0)
    laplace = cf.multinomial_nb(X, SEED_LABELS, alpha=args.alpha, class_alpha=args.alpha)
    table = pd.DataFrame(
        {
            "MLE, y=1": mle["feature_prob"].sel({"class": 1}).values,
            "MLE, y=0": mle["feature_prob"].sel({"class": 0}).values,
            f"add-{args.alpha:g}, y=1": laplace["feature_prob"].sel({"class": 1}).values,
            f"add-{args.alpha:g}, y=0": laplace["feature_prob"].sel({"class": 0}).values,
        },
        index=pd.Index(words, name="word"),
    )
    print(table.round(4).to_string())
    query = vectorizer.transform([["b", "c"]])
    print(f"P(y=1 | 'b c'):  MLE {cf.predict_proba(mle, query)[0, 1]:.4f} (the notes: 0.6)   "
          f"add-{args.alpha:g} {cf.predict_proba(laplace, query)[0, 1]:.4f}")

    print("\n== scikit-learn digits: 8x8 pixel intensities 0-16 as counts ==")
    digits = load_digits()
    X_train, X_test, y_train, y_test = train_test_split(
        digits.data, digits.target, test_size=0.25, random_state=0, stratify=digits.target
    )
    multinomial = cf.multinomial_nb(X_train, y_train, alpha=args.alpha)
    bernoulli = cf.bernoulli_nb(X_train, y_train, alpha=args.alpha, binarize=7.5)
    for name, estimates in (("multinomial", multinomial), ("Bernoulli (x > 7.5)", bernoulli)):
        accuracy = np.mean(cf.predict(estimates, X_test) == y_test)
        gap = np.abs(estimates["feature_prob"] - estimates["feature_prob_mle"]).max().item()
        print(f"{name:>20}: held-out accuracy {accuracy:.3f}; "
              f"largest |add-{args.alpha:g} - MLE| over {estimates['feature_prob'].size} "
              f"feature probabilities {gap:.4f}")
    print("class prior add-λ vs MLE:")
    print(
        pd.DataFrame(
            {
                "count": multinomial["class_count"].values.astype(int),
                "MLE": multinomial["class_prob_mle"].values,
                f"add-{args.alpha:g}": multinomial["class_prob"].values,
            },
            index=pd.Index(multinomial["class"].values, name="digit"),
        ).T.to_string(float_format="{:.4g}".format)
    )
    return 0


def _run_compare(args: argparse.Namespace) -> int:
    from bayesgen.io import load

    estimator = load(args.model)
    from bayesgen.compare import compare

    comparison = compare(estimator)
    print(comparison)
    return 0 if comparison.ok else 1


if __name__ == "__main__":
    sys.exit(main())
