"""The ``bayesgen`` command: fit, predict, compare, report and demo.

Every command prints ``--help``; bad input ends with a one-line error on stderr and exit status
2 (1 for ``compare`` when the posterior and the closed forms disagree).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from bayesgen import __version__

MODELS = {
    "multinomial": "MultinomialNB",
    "bernoulli": "BernoulliNB",
    "categorical": "CategoricalNB",
    "gda": "GaussianDiscriminantAnalysis",
}


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``bayesgen`` console script; returns the exit status."""
    parser = _parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return args.run(args)
    except BrokenPipeError:  # e.g. `bayesgen compare m.nc | head`: the reader left early
        sys.stderr.close()
        return 0
    except (ValueError, TypeError, FileNotFoundError, KeyError) as error:
        message = error.args[0] if isinstance(error, KeyError) and error.args else error
        print(f"bayesgen {args.command}: error: {message}", file=sys.stderr)
        return 2


# -- argument parsing --------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="bayesgen",
        description="Bayesian generative classifiers checked against their closed forms.",
    )
    parser.add_argument("--version", action="version", version=f"bayesgen {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    fit = commands.add_parser(
        "fit",
        help="fit a model to a CSV/TSV/Parquet file and save it",
        description="Fit a Bayesian generative classifier and save it as one NetCDF file.",
    )
    fit.add_argument("model", choices=sorted(MODELS), help="which classifier")
    fit.add_argument("data", help="a .csv, .tsv or .parquet file")
    fit.add_argument("--target", required=True, help="the column holding the class labels")
    _add_feature_options(fit)
    fit.add_argument("--alpha", type=float, default=1.0, help="smoothing λ (naive Bayes)")
    fit.add_argument("--class-alpha", type=float, default=1.0, help="class prior concentration")
    fit.add_argument("--binarize", type=float, default=None, help="threshold (Bernoulli)")
    fit.add_argument(
        "--cov-prior",
        choices=["conjugate", "lkj"],
        default="conjugate",
        help="covariance prior (GDA)",
    )
    fit.add_argument("--inference", choices=["nuts", "conjugate"], default="nuts")
    fit.add_argument("--draws", type=int, default=1000, help="posterior draws per chain")
    fit.add_argument("--tune", type=int, default=1000, help="NUTS tuning steps per chain")
    fit.add_argument("--chains", type=int, default=2)
    fit.add_argument("--seed", type=int, default=None, help="random seed")
    fit.add_argument("--dtype", choices=["float64", "float32"], default="float64")
    fit.add_argument("--no-map", action="store_true", help="skip the MAP optimisation")
    fit.add_argument("--output", help="model file (default models/<data>-<model>.nc)")
    fit.add_argument("--quiet", action="store_true", help="no progress bars")
    fit.set_defaults(run=_run_fit)

    predict = commands.add_parser(
        "predict",
        help="class probabilities with credible intervals, as CSV",
        description="Predict with a saved model: the class, p(class | x) (posterior mean) and "
        "its equal-tailed credible interval for each row.",
    )
    predict.add_argument("model_file", help="a saved model (.nc)")
    predict.add_argument("data", help="a .csv, .tsv or .parquet file")
    _add_feature_options(predict)
    predict.add_argument("--prob", type=float, default=0.94, help="interval mass (0.94)")
    predict.add_argument("--output", help="CSV file to write (default: standard output)")
    predict.set_defaults(run=_run_predict)

    compare = commands.add_parser(
        "compare",
        help="compare a saved model's posterior with its closed forms",
        description="Print the posterior-vs-closed-form comparison of a saved model; exit "
        "status 1 when some parameter disagrees or the diagnostics are not clean.",
    )
    compare.add_argument("model_file", help="a saved model (.nc)")
    compare.set_defaults(run=_run_compare)

    report = commands.add_parser(
        "report",
        help="write an HTML report with ArviZ plots",
        description="Write summary.csv, comparison.csv, PNG plots and index.html for a saved "
        "model; with --data and --target also calibration and predictive-interval plots.",
    )
    report.add_argument("model_file", help="a saved model (.nc)")
    report.add_argument("--output-dir", help="folder (default reports/<model file stem>)")
    report.add_argument("--data", help="held-out data (.csv/.tsv/.parquet)")
    report.add_argument("--target", help="the class column of --data")
    _add_feature_options(report)
    report.set_defaults(run=_run_report)

    demo = commands.add_parser(
        "demo",
        help="run every model on bundled data: comparisons, reports and saved models",
        description="Print the closed forms of the lecture example, then fit every model "
        "(digits counts: multinomial; binarized digits: Bernoulli; binned digits: categorical; "
        "wine: GDA; a bundled text corpus: multinomial and Bernoulli), print each comparison "
        "verdict, and write reports under reports/ and models under models/.",
    )
    demo.add_argument(
        "--dataset",
        choices=["builtin", "sms-spam"],
        default="builtin",
        help="text corpus for the text models (default: the bundled one)",
    )
    demo.add_argument("--data-path", help="local SMS Spam Collection file (label<TAB>text)")
    demo.add_argument(
        "--download",
        action="store_true",
        help="download the SMS Spam Collection when no --data-path is given",
    )
    demo.add_argument("--inference", choices=["nuts", "conjugate"], default="nuts")
    demo.add_argument("--draws", type=int, default=1000, help="posterior draws per chain")
    demo.add_argument("--tune", type=int, default=500, help="NUTS tuning steps per chain")
    demo.add_argument("--seed", type=int, default=0)
    demo.add_argument("--alpha", type=float, default=1.0, help="smoothing λ")
    demo.add_argument("--models-dir", default="models")
    demo.add_argument("--reports-dir", default="reports")
    demo.add_argument("--no-reports", action="store_true", help="skip the HTML reports")
    demo.add_argument("--no-map", action="store_true", help="skip the MAP optimisations")
    demo.add_argument("--quiet", action="store_true", help="no progress bars")
    demo.set_defaults(run=_run_demo)
    return parser


def _add_feature_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--text-column", help="a column of raw text (bag/set of words)")
    parser.add_argument(
        "--features", help="comma-separated feature columns (default: all but the target)"
    )


# -- commands ----------------------------------------------------------------------------------


def _run_fit(args: argparse.Namespace) -> int:
    import bayesgen
    from bayesgen.datasets import read_table

    table = read_table(args.data)
    if args.target not in table.columns:
        raise ValueError(
            f"--target: no column {args.target!r} in {args.data}; columns are "
            f"{list(table.columns)[:10]}."
        )
    y = table[args.target].to_numpy()
    X, names = _features(table, args, exclude=args.target, binary=args.model == "bernoulli")
    options = {
        "inference": args.inference,
        "draws": args.draws,
        "tune": args.tune,
        "chains": args.chains,
        "random_seed": args.seed,
        "dtype": args.dtype,
        "compute_map": not args.no_map,
        "progressbar": not args.quiet,
    }
    if args.model == "gda":
        options.update(class_alpha=args.class_alpha, cov_prior=args.cov_prior)
    else:
        options.update(alpha=args.alpha, class_alpha=args.class_alpha)
        if args.model == "bernoulli":
            options["binarize"] = args.binarize
    estimator = getattr(bayesgen, MODELS[args.model])(**options)
    estimator.fit(X, y, feature_names=names)
    output = Path(args.output or Path("models") / f"{Path(args.data).stem}-{args.model}.nc")
    estimator.save(output)
    print(
        f"saved {output} ({MODELS[args.model]}, {len(y)} rows, {len(estimator.classes_)} "
        f"classes, {estimator.n_features_in_} features)"
    )
    return 0


def _run_predict(args: argparse.Namespace) -> int:
    import pandas as pd

    from bayesgen.datasets import read_table
    from bayesgen.io import load

    estimator = load(args.model_file)
    table = read_table(args.data)
    X, _ = _features(table, args, exclude=None, estimator=estimator)
    mean = estimator.predict_proba(X)
    lower, upper = estimator.predict_proba_interval(X, prob=args.prob)
    columns = {"predicted": estimator.classes_[np.argmax(mean, axis=1)]}
    for k, name in enumerate(estimator.classes_):
        columns[f"p_{name}"] = mean[:, k]
        columns[f"p_{name}_lower"] = lower[:, k]
        columns[f"p_{name}_upper"] = upper[:, k]
    frame = pd.DataFrame(columns)
    if args.output:
        frame.to_csv(args.output, index=False)
        print(f"wrote {args.output} ({len(frame)} rows)")
    else:
        frame.to_csv(sys.stdout, index=False)
    return 0


def _run_compare(args: argparse.Namespace) -> int:
    from bayesgen.io import load

    estimator = load(args.model_file)
    from bayesgen.compare import compare

    comparison = compare(estimator)
    print(comparison)
    return 0 if comparison.ok else 1


def _run_report(args: argparse.Namespace) -> int:
    from bayesgen.io import load

    estimator = load(args.model_file)
    from bayesgen.report import report

    X_test = y_test = None
    if args.data:
        from bayesgen.datasets import read_table

        if not args.target:
            raise ValueError("--target: required with --data (the class column).")
        table = read_table(args.data)
        y_test = table[args.target].to_numpy()
        X_test, _ = _features(table, args, exclude=args.target, estimator=estimator)
    out_dir = Path(args.output_dir or Path("reports") / Path(args.model_file).stem)
    index = report(estimator, out_dir, X_test=X_test, y_test=y_test)
    print(f"wrote {index}")
    return 0


def _features(table, args, *, exclude, binary: bool = False, estimator=None):
    """The feature matrix of a table: a vectorized text column or numeric columns.

    Returns the matrix and the feature names to fit with (None when the table's own column
    names serve).
    """
    if args.text_column:
        from sklearn.feature_extraction.text import CountVectorizer

        if args.text_column not in table.columns:
            raise ValueError(f"--text-column: no column {args.text_column!r} in the data.")
        texts = table[args.text_column].fillna("").astype(str)
        if estimator is None:
            vectorizer = CountVectorizer(binary=binary)
            return vectorizer.fit_transform(texts), vectorizer.get_feature_names_out()
        # At prediction the vocabulary is the model's feature names, in the fitted order.
        binary = type(estimator).__name__ == "BernoulliNB"
        vocabulary = {w: j for j, w in enumerate(estimator.closed_form_["feature"].values)}
        vectorizer = CountVectorizer(binary=binary, vocabulary=vocabulary)
        return vectorizer.transform(texts), None
    if args.features:
        columns = [c.strip() for c in args.features.split(",") if c.strip()]
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise ValueError(f"--features: columns {missing} are not in the data.")
    elif estimator is not None and getattr(estimator, "feature_names_in_", None) is not None:
        columns = [str(c) for c in estimator.feature_names_in_]
        missing = [c for c in columns if c not in table.columns]
        if missing:
            raise ValueError(f"data: the model needs feature columns {missing[:10]}.")
    else:
        columns = [c for c in table.columns if c != exclude]
    return table[columns], None


def _run_demo(args: argparse.Namespace) -> int:
    from bayesgen import demo

    return demo.run(args)


if __name__ == "__main__":
    sys.exit(main())
