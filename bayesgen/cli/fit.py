"""``bayesgen fit MODEL DATA``: its options, and the fit that turns them into a saved model.

The command line names a model (``multinomial``, ``gda``, …); this module turns the name into
the estimator class, refuses the options that the model does not take, and fits and saves it.
"""

from __future__ import annotations

import argparse
import inspect
from pathlib import Path
from textwrap import dedent

import numpy as np

import bayesgen.estimators as estimator_classes
from bayesgen.cli.arguments import (
    HelpFormatter,
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
            gaussian, --rate-prior for poisson, --tune for --inference nuts."""
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
    output = Path(args.output or Path("models") / f"{Path(args.data).stem}-{args.model}.nc")
    io.check_output_path(output, argument="--output")  # before a fit that may take minutes
    if output.suffix != ".nc":
        raise ValueError(f"--output: expected a .nc file name; got {str(output)!r}.")
    table = read_data(args, args.data)
    y = class_labels(table, args.target, args.data)
    # A set-of-words model takes presence (0/1) of each word, the others its count.
    binary = "binarize" in names_taken
    X, names = feature_matrix(table, args, exclude=args.target, binary=binary)
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
