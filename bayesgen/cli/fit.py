"""``bayesgen fit MODEL DATA``: its options, and the fit that turns them into a saved model.

The command line names a model (``multinomial``, ``gda``, …, or ``mixed`` for
:class:`~bayesgen.NaiveBayes` over a table's mixed columns); this module turns the name into
the estimator class, refuses the options that the model does not take, and fits and saves it.
"""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path
from textwrap import dedent

import numpy as np
import pandas as pd

import bayesgen.estimators as estimator_classes
from bayesgen.cli.arguments import (
    BLOCKS_EXPECTED,
    HelpFormatter,
    block_spec,
    column_models,
    feature_smoothing,
    finite_float,
    gamma_prior,
    non_negative_int,
    normal_inverse_gamma_prior,
    positive_int,
    smoothing,
)
from bayesgen.cli.tables import (
    TEXT_BINARY,
    TEXT_COLUMN,
    add_table_options,
    class_labels,
    feature_matrix,
    read_data,
)
from bayesgen.estimators.mixed import BLOCK_ESTIMATORS, NaiveBayes, auto_blocks
from bayesgen.families import FAMILIES
from bayesgen.input import files as io
from bayesgen.maths.normal_inverse_gamma import NormalInverseGamma

#: ``bayesgen fit MODEL``: the command-line name of each model -> its estimator class
ESTIMATORS = {
    model_family.cli_name: getattr(estimator_classes, model_family.estimator)
    for model_family in FAMILIES.values()
}

#: ``fit`` options that only some models take: the option -> the estimator parameter it sets.
#: Left out (None) they take the estimator's default; given to a model without that parameter
#: they are refused (:func:`_check_model_options`), never dropped without a word.
MODEL_OPTIONS = {
    "--alpha": "alpha",
    "--prior-mean": "prior_mean",
    "--binarize": "binarize",
    "--cov-prior": "cov_prior",
    "--prior": "prior",
    "--rate-prior": "rate_prior",
}


#: Options that build one kind of value (here an example of it), and so apply only to the
#: models whose parameter's rule takes that kind: GDA's and QDA's ``prior`` is a
#: normal-inverse-Wishart, which ``--prior`` does not build. "evidence" goes to those models.
OPTION_VALUES = {"--prior": NormalInverseGamma()}


def add_fit_command(commands) -> None:
    """``fit`` among ``commands`` (the parser's subparsers)."""
    fit = commands.add_parser(
        "fit",
        help="fit a model to a CSV/TSV/Parquet file and save it",
        formatter_class=HelpFormatter,
        description=dedent(
            """\
            Fit a Bayesian generative classifier and save it as one NetCDF file.

            The features are a column of raw text (--text-column: its bag of words, or set
            of words for bernoulli) or numeric columns (--features, default all but the
            target). Options that the chosen model does not take are refused: --alpha and
            --prior-mean are for the naive Bayes models (multinomial, bernoulli,
            categorical), --binarize for bernoulli, --cov-prior for gda, --prior for
            gaussian, --rate-prior for poisson, --tune for --inference nuts.

            mixed fits one naive Bayes over columns of several kinds (NaiveBayes): a block
            of columns per model, by default the blocks proposed from each column's values
            (numbers gaussian, counts poisson, 0/1 bernoulli, strings of few distinct
            values categorical, other strings a multinomial text block each). --plan shows
            them without fitting, --override changes a column's model, --blocks gives
            them all, e.g.
              --blocks "size=gaussian:length,depth; where=categorical:island;
                        notes=multinomial:notes"
            (one column of strings in a multinomial or bernoulli block is raw text)."""
        ),
    )
    fit.add_argument("model", choices=sorted(ESTIMATORS), help="which classifier")
    fit.add_argument("data", help="a .csv, .tsv or .parquet file (or any name with --format)")
    fit.add_argument("--target", required=True, help="the column holding the class labels")
    add_table_options(fit)
    fit.add_argument(
        "--alpha",
        type=feature_smoothing,
        default=None,
        help="smoothing λ of the feature probabilities (naive Bayes; default 1.0): a number, "
        "'evidence' to choose it by the evidence, 'evidence_per_class' for one λ per class "
        "where the evidence supports it, or one λ per class label, as in spam=0.5,ham=2",
    )
    fit.add_argument(
        "--prior-mean",
        choices=("uniform", "pooled"),
        default=None,
        help="prior mean of the feature probabilities (naive Bayes; default uniform): uniform "
        "(add-λ) or the class-pooled frequencies of the training data",
    )
    fit.add_argument(
        "--class-alpha",
        type=smoothing,
        default=1.0,
        help="Dirichlet concentration of the class probabilities, or 'evidence' to choose it "
        "by the evidence (naive Bayes)",
    )
    fit.add_argument(
        "--binarize",
        type=finite_float,
        default=None,
        help="threshold above which a count is 1 (bernoulli; default: none, for a text column "
        "or features that are already 0/1)",
    )
    fit.add_argument(
        "--cov-prior",
        choices=["conjugate", "lkj"],
        default=None,
        help="covariance prior (gda; default conjugate): normal-inverse-Wishart, or LKJ "
        "(--inference nuts only)",
    )
    fit.add_argument(
        "--prior",
        type=normal_inverse_gamma_prior,
        default=None,
        help="normal-inverse-gamma prior of every class mean and variance (gaussian): "
        "name=value pairs among mean (m0), kappa (k0 > 0, in rows' worth), shape (a0 > 0) and "
        "scale (b0 > 0), one number each for every feature, e.g. kappa=0.1,shape=2; a name "
        "left out keeps its default (m0 the data's mean, k0 0.01, a0 1.5, b0 (a0 - 1) times "
        "the data's variance); or 'evidence' where the model can choose it by the evidence",
    )
    fit.add_argument(
        "--rate-prior",
        type=gamma_prior,
        default=None,
        help="Gamma(shape, rate) prior of every rate (poisson; default Gamma(1, 1 / the "
        "data's mean count)): SHAPE,RATE or shape=SHAPE,rate=RATE, e.g. 2,0.5 (prior mean "
        "shape / rate); or 'evidence' where the model can choose it by the evidence",
    )
    fit.add_argument(
        "--blocks",
        type=block_spec,
        default=None,
        help=f"the blocks of columns (mixed; default auto, over --features or every column "
        f"but the target): {BLOCKS_EXPECTED}",
    )
    fit.add_argument(
        "--override",
        type=column_models,
        action="append",
        default=None,
        metavar="COLUMN=MODEL",
        help="a model for a column instead of the one auto proposes (mixed), e.g. "
        "eggs=categorical; repeat it, or separate pairs by commas",
    )
    fit.add_argument(
        "--plan",
        action="store_true",
        help="print each column's block, model, encoding and why, and exit without fitting (mixed)",
    )
    fit.add_argument(
        "--inference",
        choices=["nuts", "conjugate"],
        default="nuts",
        help="NUTS in PyMC, or exact draws from the conjugate posterior (nothing compiled)",
    )
    # Left out, these take the estimators' defaults (shown in the help as they are now).
    defaults = _estimator_defaults()
    fit.add_argument(
        "--draws",
        type=positive_int,
        default=None,
        help=f"posterior draws per chain (default {defaults['draws']})",
    )
    fit.add_argument(
        "--tune",
        type=non_negative_int,
        default=None,
        help=f"NUTS tuning steps per chain (--inference nuts; default {defaults['tune']})",
    )
    fit.add_argument(
        "--chains",
        type=positive_int,
        default=None,
        help=f"chains of draws (default {defaults['chains']})",
    )
    fit.add_argument(
        "--seed", type=non_negative_int, default=None, help="random seed (default: fresh)"
    )
    fit.add_argument(
        "--dtype",
        choices=["float64", "float32"],
        default="float64",
        help="floating-point type of the draws (float32 halves their memory)",
    )
    fit.add_argument("--no-map", action="store_true", help="skip the MAP optimisation")
    fit.add_argument(
        "--output",
        help="model file, .nc (default models/<data>-<model>.nc); missing folders are "
        "created, an existing file is replaced only once the new one is complete",
    )
    fit.add_argument("--quiet", action="store_true", help="no progress bars")
    fit.set_defaults(run=_run_fit)


def _estimator_defaults() -> dict:
    """The defaults of the inference parameters that every estimator shares."""
    parameters = inspect.signature(estimator_classes.MultinomialNB).parameters
    return {name: parameters[name].default for name in ("draws", "tune", "chains")}


def _run_fit(args: argparse.Namespace) -> int:
    estimator_class = ESTIMATORS[args.model]
    names_taken = estimator_class().get_params(deep=False)
    _check_model_options(args, names_taken)
    if args.plan:
        table = read_data(args, args.data)
        plan = _mixed_plan(table, args)
        print(plan.to_string(index=False))
        return 0
    output = Path(args.output or Path("models") / f"{Path(args.data).stem}-{args.model}.nc")
    io.check_output_path(output, argument="--output")  # before a fit that may take minutes
    if output.suffix != ".nc":
        raise ValueError(f"--output: expected a .nc file name; got {str(output)!r}.")
    table = read_data(args, args.data)
    y = class_labels(table, args.target, args.data)
    options = _fit_options(args)
    if estimator_class is NaiveBayes:
        X, blocks = _mixed_columns(table, args)
        estimator = NaiveBayes(blocks, **options).fit(X, y)
        estimator.save(output)
        print(
            f"saved {output} (NaiveBayes, {len(y)} rows, {len(estimator.classes_)} classes, "
            f"{estimator.n_features_in_} columns in blocks {_block_models(estimator)})"
        )
        return 0
    # A set-of-words model takes presence (0/1) of each word, the others its count.
    binary = "binarize" in names_taken
    X, names = feature_matrix(table, args, exclude=args.target, binary=binary)
    if isinstance(options.get("alpha"), dict):
        options["alpha"] = per_class_alpha(options["alpha"], y, args.target)
    estimator = estimator_class(**options)
    estimator.fit(X, y, feature_names=names)
    if args.text_column:
        # Saved with the model, so that predict maps new texts onto this vocabulary (the
        # feature names) the same way; a refit replaces closed_form_ and forgets it.
        estimator.closed_form_.attrs[TEXT_COLUMN] = args.text_column
        estimator.closed_form_.attrs[TEXT_BINARY] = int(binary)
    estimator.save(output)
    print(
        f"saved {output} ({estimator_class.__name__}, {len(y)} rows, "
        f"{len(estimator.classes_)} classes, {estimator.n_features_in_} features)"
    )
    return 0


def _fit_options(args: argparse.Namespace) -> dict:
    """The estimator's parameters that the options set (those left out take its defaults)."""
    options = {
        "inference": args.inference,
        "random_seed": args.seed,
        "dtype": args.dtype,
        "compute_map": not args.no_map,
        "progressbar": not args.quiet,
        "class_alpha": args.class_alpha,
    }
    for name in ("draws", "tune", "chains"):  # left out: the estimator's default
        if getattr(args, name) is not None:
            options[name] = getattr(args, name)
    for name in MODEL_OPTIONS.values():
        value = getattr(args, name)
        if value is not None:
            options[name] = value
    return options


def _mixed_columns(table, args: argparse.Namespace):
    """The columns a mixed model is fitted with, as read (strings stay strings: NaiveBayes
    encodes them), and its blocks: those of --blocks (only their columns), or those auto
    proposes for --features or every column but the target, as --override changes them."""
    if args.text_column:
        raise ValueError(
            "--text-column does not apply to mixed: a column of text gets a multinomial block "
            "of its own (--plan shows it), or name it in --blocks, as in notes=multinomial:notes."
        )
    if args.blocks not in (None, "auto"):
        if args.features is not None:
            raise ValueError("--features: with --blocks, the blocks name the columns; pass one.")
        if args.override:
            raise ValueError(
                "--override: it changes the auto blocks; with --blocks, change the block."
            )
        given = {column for _, _, columns in args.blocks for column in columns}
        missing = [column for column in sorted(given) if column not in table.columns]
        if missing:
            raise ValueError(
                f"--blocks: columns {missing} are not in the data; columns are "
                f"{list(table.columns)[:10]}."
            )
        if args.target in given:
            raise ValueError(f"--blocks: {args.target!r} is the --target column.")
        # In the table's order, and only the columns the blocks use: predict needs no other.
        X = table[[column for column in table.columns if column in given]]
        return X, [_mixed_block(table, *block) for block in args.blocks]
    X = _auto_columns(table, args)
    overrides = {}
    for pairs in args.override or ():
        again = sorted(set(overrides) & set(pairs))
        if again:
            raise ValueError(f"--override: column {again[0]!r} is given twice.")
        overrides.update(pairs)
    missing = [column for column in overrides if column not in X.columns]
    if missing:
        raise ValueError(
            f"--override: columns {missing} are not among the feature columns "
            f"{list(X.columns)[:10]}."
        )
    return X, auto_blocks(X, overrides=overrides) if overrides else "auto"


def _auto_columns(table, args: argparse.Namespace):
    """--features, or every column but the target, as read."""
    if args.features is None:
        columns = [column for column in table.columns if column != args.target]
        if not columns:
            raise ValueError("data: no feature columns besides the --target column.")
        return table[columns]
    columns = [column.strip() for column in args.features.split(",") if column.strip()]
    repeated = sorted({column for column in columns if columns.count(column) > 1})
    missing = [column for column in columns if column not in table.columns]
    if not columns or repeated or missing:
        problem = f"{repeated} repeated" if repeated else f"{missing} not in the data"
        raise ValueError(
            f"--features: expected comma-separated column names, each once; got "
            f"{args.features!r}{': ' + problem if columns else ''}."
        )
    if args.target in columns:
        raise ValueError(f"--features: {args.target!r} is the --target column.")
    return table[columns]


def _mixed_block(table, name: str, model: str, columns: list[str]) -> tuple:
    """A block of --blocks for NaiveBayes: one column of strings in a multinomial,
    bernoulli or dcm block is given as its name alone, which makes it a text block."""
    if model in ("multinomial", "bernoulli", "dcm") and len(columns) == 1:
        (column,) = columns
        if not pd.api.types.is_numeric_dtype(table[column].dtype):
            return (name, model, column)
    return (name, model, columns)


def _mixed_plan(table, args: argparse.Namespace) -> pd.DataFrame:
    """``NaiveBayes(blocks).plan(X)`` for the blocks of the options; a column that
    --override moved says so, the others keep auto's reason."""
    X, blocks = _mixed_columns(table, args)
    plan = NaiveBayes(blocks).plan(X)
    if args.blocks in (None, "auto") and not isinstance(blocks, str):
        reasons = NaiveBayes().plan(X).set_index("column")["reason"]
        overridden = {column for pairs in args.override for column in pairs}
        plan["reason"] = [
            "--override" if column in overridden else reasons[column] for column in plan["column"]
        ]
    return plan


def _block_models(estimator: NaiveBayes) -> str:
    """Each fitted block of a mixed model with its model's command-line name."""
    names = {cls: name for name, cls in BLOCK_ESTIMATORS.items()}
    return ", ".join(f"{name} ({names[type(model)]})" for name, model, _ in estimator.blocks_)


def _check_model_options(args: argparse.Namespace, names_taken) -> None:
    """Refuse the options given that the model of ``args.model`` (or its ``--inference``) does
    not take: the fit would otherwise run without them, and the user believe them applied."""

    def models_taking(option: str, name: str) -> str:
        return ", ".join(
            model
            for model, estimator_class in sorted(ESTIMATORS.items())
            if _takes(estimator_class, option, name)
        )

    estimator_class = ESTIMATORS[args.model]
    refused = [
        (option, args.model, models_taking(option, name))
        for option, name in MODEL_OPTIONS.items()
        if getattr(args, name) is not None and not _takes(estimator_class, option, name)
    ]
    if args.class_alpha == "evidence" and "alpha" not in names_taken:
        refused.append(("--class-alpha evidence", args.model, models_taking("--alpha", "alpha")))
    if args.tune is not None and args.inference == "conjugate":
        refused.append(("--tune", "--inference conjugate", "--inference nuts"))
    if estimator_class is not NaiveBayes:
        given = {"--blocks": args.blocks, "--override": args.override, "--plan": args.plan}
        refused += [(option, args.model, "mixed") for option, value in given.items() if value]
    if refused:
        (option, target, takers), *others = refused
        nor = "".join(f"; nor does {other[0]} apply to {other[1]}" for other in others)
        raise ValueError(
            f"{option} does not apply to {target} (only to {takers}){nor}. Leave out what "
            "does not apply."
        )


def _takes(estimator_class, option: str, name: str) -> bool:
    """Whether ``option`` applies to the model of ``estimator_class``: it has the parameter
    ``name`` and, for an option of :data:`OPTION_VALUES`, the parameter's rule takes the
    option's kind of value."""
    if name not in estimator_class().get_params(deep=False):
        return False
    if option not in OPTION_VALUES:
        return True
    rule = estimator_class.parameter_rules().get(name)
    return rule is None or rule.error(OPTION_VALUES[option]) is None


def per_class_alpha(per_class: dict[str, float], labels: np.ndarray, target: str) -> dict:
    """``--alpha label=λ,...`` as the estimator takes it: {class label: λ}, each label of the
    target column's own type (an integer for a column of integers), every class given."""
    classes = {}
    for label in labels:
        classes.setdefault(str(label), label.item() if isinstance(label, np.generic) else label)
    unknown = [label for label in per_class if label not in classes]
    missing = [label for label in classes if label not in per_class]
    if unknown or missing:
        problem = f"no class {unknown} in column {target!r}" if unknown else ""
        if missing:
            problem += f"{'; ' if problem else ''}no λ for class {missing}"
        raise ValueError(
            f"--alpha: expected one λ per class label of column {target!r} "
            f"({', '.join(sorted(classes))}); {problem}."
        )
    return {classes[label]: value for label, value in per_class.items()}
