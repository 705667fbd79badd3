"""NUTS benchmarks for bayesgen's multinomial naive Bayes model (PyMC, ``nuts_sampler="pymc"``).

Three modes, each on a synthetic Zipf bag-of-words corpus (see ``bench_closed_form.py``):

``--compare-naive``
    bayesgen's ``generative.multinomial_nb_model(closed_form.multinomial_nb(X, y))`` (the
    Gamma-Poisson form of the Dirichlet, on sufficient statistics) against the textbook PyMC
    formulation: ``pm.Dirichlet`` over the vocabulary for each class with ``pm.Multinomial`` on the
    per-class word counts, and ``pm.Dirichlet`` + ``pm.Multinomial`` for the class counts. Both are
    sampled by the same ``pm.sample`` call. Each model runs once, briefly, to warm the compile
    cache; then naive, bayesgen, naive, bayesgen, ... (``--pairs`` pairs). Reported per run: the
    sampling time (``posterior.attrs["sampling_time"]``), the wall time (data reduction, model
    building, compilation with a warm cache and sampling), min ESS_bulk, max R-hat and the largest
    |posterior mean - closed-form add-λ|. Goal: a median speed-up naive / bayesgen of the sampling
    time of at least 10 at the same accuracy.

``--scaling``
    bayesgen's model fitted to N = ``--small`` and N = ``--large`` documents of the same
    vocabulary, interleaved (small, large, small, ...). The timed fit is the data reduction
    (``closed_form.multinomial_nb``), the model building and ``pm.sample``. Goal: median
    t(large) / t(small) of at most 1.5, since the model sees only the sufficient statistics.

Without a mode
    side by side on one corpus: bayesgen's model through
    ``bayesgen.inference.sampling.sample_nuts`` (the path of ``fit(inference="nuts")``, which
    limits BLAS to one thread per chain), the textbook PyMC model (up to ``--naive-max``
    parameters) and bayesgen's exact conjugate draws (``conjugate_posterior``), e.g.
    ``--words 20000 --docs 3000`` or ``--words 50000 --classes 20 --docs 20000``: wall and
    sampling time, min ESS_bulk, bulk ESS per sampling second, mean tree depth, divergences,
    max R-hat, the largest |posterior mean - exact| and that error in MCSEs, and the peak
    memory. Up to ``--ideal-max`` parameters, a fourth row samples the ideal target of the same
    dimension the same way: ``pm.Normal("z", 0, 1, shape=d)``, every coordinate exactly a
    standard normal and the gradient almost free, which no reparameterisation of the model can
    beat on PyMC's NUTS (issue 26, part 0). ``--transform cube_root`` samples the rates in the
    Wilson-Hilferty coordinates (issue 26); ``--tune`` sets every NUTS run's tuning steps
    (1,000, as the estimators), ``--target-accept`` bayesgen's run's and the ideal target's
    (0.9, as the estimators) and ``--sampler nutpie`` bayesgen's run's back end.

The first two modes call ``pm.sample`` directly, for both models under the same limit of one
BLAS thread per chain (``threadpoolctl``), as ``sample_nuts`` does.

Usage::

    PYTENSOR_FLAGS=base_compiledir=$HOME/.cache/bayesgen/pytensor \\
        .venv/bin/python benchmarks/bench_nuts.py --compare-naive [--pairs 2] [--docs 300]
    PYTENSOR_FLAGS=... .venv/bin/python benchmarks/bench_nuts.py --scaling [--pairs 5]
    PYTENSOR_FLAGS=... .venv/bin/python benchmarks/bench_nuts.py --words 20000 --docs 3000
    PYTENSOR_FLAGS=... .venv/bin/python benchmarks/bench_nuts.py --words 50000 --classes 20 \\
        --docs 20000 [--draws 300 --tune 300]

The machine this was written on has 2 shared, noisy cores: read the ratios of runs made side by
side, not the seconds.
"""

from __future__ import annotations

import argparse
import functools
import os
import platform
import resource
import statistics
import time
import warnings
from os.path import expanduser

# Before pytensor is imported: one shared compile cache and its generated source (the
# Makefile sets the same default).
os.environ.setdefault(
    "PYTENSOR_FLAGS",
    "base_compiledir={0},generated_src_dir={0}/generated_src".format(
        expanduser("~/.cache/bayesgen/pytensor")
    ),
)

import arviz as az
import numpy as np
import pymc as pm
import pytensor
from bench_closed_form import zipf_bag_of_words
from threadpoolctl import threadpool_limits

from bayesgen.closed_form import feature_counts, multinomial_nb
from bayesgen.families import shared_pymc
from bayesgen.generative import TRACE_VARS, multinomial_nb_model
from bayesgen.inference.sampling import conjugate_posterior, sample_nuts
from bayesgen.maths.diagnostics import mc_diagnostics

GOAL_SPEEDUP = 10.0
GOAL_SCALING = 1.5
#: "Same accuracy": bayesgen's largest feature_prob error (vs the closed form) at most this
#: multiple of the naive model's, and R-hat < 1.05.
ACCURACY_TOLERANCE = 1.5
VAR_NAMES = TRACE_VARS["multinomial_nb"]  # class_prob, feature_prob

warnings.filterwarnings("ignore", message="This process .* is multi-threaded, use of fork")
warnings.filterwarnings("ignore", message="PyTensor could not link to a BLAS")


def naive_model(X, y, n_classes: int, *, alpha: float = 1.0, class_alpha: float = 1.0):
    """Textbook PyMC multinomial NB: batched Dirichlet simplex + Multinomial likelihoods."""
    n_words = X.shape[1]
    word_counts = np.rint(feature_counts(X, y, n_classes)).astype(np.int64)
    class_counts = np.bincount(y, minlength=n_classes)
    with pm.Model(coords={"class": np.arange(n_classes), "feature": np.arange(n_words)}) as model:
        class_prob = pm.Dirichlet("class_prob", a=class_alpha * np.ones(n_classes), dims="class")
        feature_prob = pm.Dirichlet(
            "feature_prob", a=alpha * np.ones((n_classes, n_words)), dims=("class", "feature")
        )
        pm.Multinomial("class_counts", n=class_counts.sum(), p=class_prob, observed=class_counts)
        pm.Multinomial(
            "word_counts", n=word_counts.sum(axis=1), p=feature_prob, observed=word_counts
        )
    return model


def bayesgen_model(X, y):
    stats = multinomial_nb(X, y)
    return multinomial_nb_model(stats)


def sample(model, *, draws: int, tune: int, seed: int):
    # One BLAS thread per chain, as sample_nuts sets it (the forked chains inherit it).
    with model, threadpool_limits(limits=1, user_api="blas"):
        return pm.sample(
            draws=draws,
            tune=tune,
            chains=2,
            cores=2,
            nuts_sampler="pymc",
            random_seed=seed,
            var_names=VAR_NAMES,
            quiet=True,
            compute_convergence_checks=False,
        )


def sample_library(
    model,
    *,
    draws: int,
    tune: int,
    seed: int,
    nuts_sampler: str = "pymc",
    target_accept: float = 0.9,
    var_names: list[str] = VAR_NAMES,
):
    """``bayesgen.inference.sampling.sample_nuts``, as ``fit(inference="nuts")`` calls it;
    ``nuts_sampler`` "nutpie" (``--sampler``) runs the Rust NUTS on the numba-compiled model
    (nutpie is not a bayesgen dependency); ``var_names`` ``["z"]`` for :func:`ideal_model`."""
    return sample_nuts(
        model,
        var_names=var_names,
        draws=draws,
        tune=tune,
        chains=2,
        cores=2,
        random_seed=seed,
        prior_draws=0,
        nuts_sampler=nuts_sampler,
        target_accept=target_accept,
    )


def ideal_model(dimension: int):
    """N(0, I) of ``dimension`` coordinates: the posterior every standardising transform aims
    at, with a gradient that costs next to nothing."""
    with pm.Model() as model:
        pm.Normal("z", 0.0, 1.0, shape=dimension)
    return model


def timed_fit(build, *, draws: int, tune: int, seed: int, sampler=sample) -> dict:
    """Build the model (data reduction included) and sample it; time both."""
    start = time.perf_counter()
    model = build()
    idata = sampler(model, draws=draws, tune=tune, seed=seed)
    wall = time.perf_counter() - start
    return {"wall": wall, "sampling": float(idata.posterior.attrs["sampling_time"]), "idata": idata}


def diagnostics(idata, stats) -> dict:
    """min ESS_bulk and max R-hat over class_prob and feature_prob; the largest
    |posterior mean - closed-form add-λ| of feature_prob (``max_err``) and of class_prob
    (``class_err``), and the largest of either in units of its Monte Carlo standard error.

    ``bayesgen.maths.diagnostics.mc_diagnostics`` computes ArviZ's bulk ESS, R-hat and MCSE
    (tests/test_diagnostics.py checks them equal), over all parameters at once: ArviZ's own
    loop takes 7 ms a parameter, hours for a million."""
    posterior = idata["posterior"].to_dataset()[VAR_NAMES]
    errors, blocks = {}, []
    for name in VAR_NAMES:
        errors[name], block = _worst(posterior[name], stats[name].values)
        blocks.append(block)
    return {
        "min_ess": float(min(b["min_ess"] for b in blocks)),
        "max_rhat": float(max(b["max_rhat"] for b in blocks)),
        "max_err": float(errors["feature_prob"]),
        "class_err": float(errors["class_prob"]),
        "max_z": float(max(b["max_z"] for b in blocks)),
        **_sampler_statistics(idata),
    }


def ideal_diagnostics(idata) -> dict:
    """:func:`diagnostics` for :func:`ideal_model`'s draws, whose exact mean is 0."""
    max_err, worst = _worst(idata["posterior"]["z"], 0.0)
    return {"max_err": float(max_err), **worst, **_sampler_statistics(idata)}


def _worst(draws, exact) -> tuple[float, dict]:
    """The largest |posterior mean − ``exact``| of one variable's draws, and its min bulk ESS,
    max R-hat and largest error in MCSEs, computed in blocks of about 2**24 draws, so that a
    million parameters fit in memory (the FFTs behind the ESS hold several times the draws)."""
    flat = draws.values.reshape(draws.sizes["chain"], draws.sizes["draw"], -1)
    err = np.abs(draws.mean(("chain", "draw")).values - exact).ravel()
    z_scores, ess, rhat = [], [], []
    step = max(1, 2**24 // (flat.shape[0] * flat.shape[1]))
    for start in range(0, flat.shape[2], step):
        block = slice(start, start + step)
        mcse, ess_bulk, r_hat = mc_diagnostics(np.moveaxis(flat[:, :, block], -1, 0))
        z_scores.append((err[block] / mcse).max())
        ess.append(ess_bulk.min())
        rhat.append(r_hat.max())
    return err.max(), {"min_ess": min(ess), "max_rhat": max(rhat), "max_z": max(z_scores)}


def _sampler_statistics(idata) -> dict:
    """Divergences and mean tree depth of a NUTS run (0 and NaN for exact draws)."""
    if "sample_stats" not in idata.children:
        return {"divergences": 0, "mean_tree_depth": np.nan}
    sample_stats = idata["sample_stats"]
    depth = "tree_depth" if "tree_depth" in sample_stats else "depth"  # nutpie's name
    return {
        "divergences": int(sample_stats["diverging"].values.sum()),
        "mean_tree_depth": float(sample_stats[depth].values.mean()),
    }


def describe_corpus(X, stats) -> str:
    n_classes, n_words = stats["feature_count"].shape
    return (
        f"corpus: {X.shape[0]} docs x {n_words} words, {n_classes} classes, {int(X.sum())} "
        f"tokens, {int((stats['feature_count'].values == 0).sum())} of {n_classes * n_words} "
        f"(class, word) counts are 0"
    )


def versions() -> str:
    return (
        f"python {platform.python_version()}, pymc {pm.__version__}, pytensor "
        f"{pytensor.__version__}, arviz {az.__version__}, numpy {np.__version__}; "
        f"{os.cpu_count()} CPUs; PYTENSOR_FLAGS={os.environ['PYTENSOR_FLAGS']}"
    )


def compare_naive(args) -> int:
    X, y = zipf_bag_of_words(args.docs, args.words, args.classes, seed=args.seed)
    stats = multinomial_nb(X, y)
    print(describe_corpus(X, stats))
    print(versions())
    print(
        f"pm.sample(draws={args.draws}, tune={args.tune}, chains=2, cores=2, "
        f'nuts_sampler="pymc", quiet=True, compute_convergence_checks=False), '
        f"{args.pairs} interleaved pairs after a warm-up of each"
    )
    builders = {
        "naive": lambda: naive_model(X, y, args.classes),
        "bayesgen": lambda: bayesgen_model(X, y),
    }
    # Warm the compile cache (and this process) with a short run of each.
    for name, build in builders.items():
        warm = timed_fit(build, draws=args.warmup, tune=args.warmup, seed=args.seed)
        print(f"warm-up {name:<8}: {warm['wall']:.1f} s wall ({args.warmup}+{args.warmup} steps)")

    rows = {name: [] for name in builders}
    header = (
        f"{'pair':>4} {'model':<9} {'sampling s':>10} {'wall s':>8} {'min ESS':>8} "
        f"{'ESS/s':>7} {'max R-hat':>9} {'θ max|err|':>10} {'π max|err|':>10} "
        f"{'max err/MCSE':>12} "
        f"{'div':>4} {'depth':>5}"
    )
    print(header)
    for pair in range(args.pairs):
        seed = args.seed + pair
        for name, build in builders.items():
            fit = timed_fit(build, draws=args.draws, tune=args.tune, seed=seed)
            row = fit | diagnostics(fit.pop("idata"), stats)
            row["ess_per_s"] = row["min_ess"] / row["sampling"]
            rows[name].append(row)
            print(
                f"{pair + 1:>4} {name:<9} {row['sampling']:>10.1f} {row['wall']:>8.1f} "
                f"{row['min_ess']:>8.0f} {row['ess_per_s']:>7.1f} {row['max_rhat']:>9.4f} "
                f"{row['max_err']:>10.2e} {row['class_err']:>10.2e} {row['max_z']:>12.2f} "
                f"{row['divergences']:>4} "
                f"{row['mean_tree_depth']:>5.2f}",
                flush=True,
            )

    def ratios(key, invert=False):
        pairs = zip(rows["naive"], rows["bayesgen"], strict=True)
        return [(b[key] / a[key]) if invert else (a[key] / b[key]) for a, b in pairs]

    def med(name, key):
        return statistics.median(r[key] for r in rows[name])

    print()
    print(
        f"{'median':<10} {'sampling s':>10} {'wall s':>8} {'min ESS':>8} {'ESS/s':>7} "
        f"{'max R-hat':>9} {'θ max|err|':>10} {'π max|err|':>10}"
    )
    for name in builders:
        print(
            f"{name:<10} {med(name, 'sampling'):>10.1f} {med(name, 'wall'):>8.1f} "
            f"{med(name, 'min_ess'):>8.0f} {med(name, 'ess_per_s'):>7.1f} "
            f"{med(name, 'max_rhat'):>9.4f} {med(name, 'max_err'):>10.2e} "
            f"{med(name, 'class_err'):>10.2e}"
        )
    speedups = {
        "sampling time (naive / bayesgen)": ratios("sampling"),
        "wall time (naive / bayesgen)": ratios("wall"),
        "min ESS_bulk per sampling second (bayesgen / naive)": ratios("ess_per_s", invert=True),
        "feature_prob max |err| (bayesgen / naive)": ratios("max_err", invert=True),
    }
    for label, values in speedups.items():
        print(
            f"{label:<52} median {statistics.median(values):6.2f} "
            f"(pairs: {', '.join(f'{v:.2f}' for v in values)})"
        )
    speedup = statistics.median(speedups["sampling time (naive / bayesgen)"])
    err_ratio = statistics.median(speedups["feature_prob max |err| (bayesgen / naive)"])
    rhat = med("bayesgen", "max_rhat")
    fast = speedup >= GOAL_SPEEDUP
    accurate = err_ratio <= ACCURACY_TOLERANCE and rhat < 1.05
    print(
        f"verdict: {'MEETS' if fast and accurate else 'MISSES'} the goal (>= {GOAL_SPEEDUP:g}x "
        f"faster sampling at the same accuracy): speed-up {speedup:.1f}x "
        f"({'ok' if fast else 'below goal'}); accuracy {'ok' if accurate else 'NOT matched'} "
        f"(feature_prob max |err| ratio {err_ratio:.2f} <= {ACCURACY_TOLERANCE:g} needed, "
        f"bayesgen max R-hat "
        f"{rhat:.3f} < 1.05 needed)"
    )
    return 0


def scaling(args) -> int:
    sizes = {"small": args.small, "large": args.large}
    data = {
        name: zipf_bag_of_words(n, args.words, args.classes, seed=args.seed)
        for name, n in sizes.items()
    }
    for name, (X, _) in data.items():
        print(
            f"{name}: {X.shape[0]} docs x {X.shape[1]} words, {args.classes} classes, "
            f"{int(X.sum())} tokens, {X.nnz} non-zeros"
        )
    print(versions())
    print(
        f"timed: multinomial_nb(X, y) + multinomial_nb_model + pm.sample(draws={args.draws}, "
        f"tune={args.tune}, chains=2, cores=2, nuts_sampler='pymc'); {args.pairs} interleaved "
        "pairs after a warm-up of each"
    )
    builders = {name: (lambda X=X, y=y: bayesgen_model(X, y)) for name, (X, y) in data.items()}
    for name, build in builders.items():
        warm = timed_fit(build, draws=args.warmup, tune=args.warmup, seed=args.seed)
        print(f"warm-up {name:<5}: {warm['wall']:.1f} s wall")
    rows = {name: [] for name in builders}
    print(
        f"{'pair':>4} {'N':>7} {'fit s':>7} {'sampling s':>10} {'min ESS':>8} {'max R-hat':>9} "
        f"{'θ max|err|':>10} {'div':>4} {'depth':>5}"
    )
    for pair in range(args.pairs):
        for name, build in builders.items():
            fit = timed_fit(build, draws=args.draws, tune=args.tune, seed=args.seed + pair)
            X, y = data[name]
            row = fit | diagnostics(fit.pop("idata"), multinomial_nb(X, y))
            rows[name].append(row)
            print(
                f"{pair + 1:>4} {sizes[name]:>7} {row['wall']:>7.2f} {row['sampling']:>10.2f} "
                f"{row['min_ess']:>8.0f} {row['max_rhat']:>9.4f} {row['max_err']:>10.2e} "
                f"{row['divergences']:>4} {row['mean_tree_depth']:>5.2f}",
                flush=True,
            )
    fit_ratios = [b["wall"] / a["wall"] for a, b in zip(rows["small"], rows["large"], strict=True)]
    sampling_ratios = [
        b["sampling"] / a["sampling"] for a, b in zip(rows["small"], rows["large"], strict=True)
    ]
    print()
    for name in builders:
        fit_s = statistics.median(r["wall"] for r in rows[name])
        sampling_s = statistics.median(r["sampling"] for r in rows[name])
        print(f"N={sizes[name]:<7} median fit {fit_s:.2f} s, median sampling {sampling_s:.2f} s")
    ratio = statistics.median(fit_ratios)
    print(
        f"fit time t({args.large}) / t({args.small}): median {ratio:.2f} "
        f"(pairs: {', '.join(f'{v:.2f}' for v in fit_ratios)})"
    )
    print(
        f"sampling time only: median {statistics.median(sampling_ratios):.2f} "
        f"(pairs: {', '.join(f'{v:.2f}' for v in sampling_ratios)})"
    )
    verdict = "MEETS" if ratio <= GOAL_SCALING else "MISSES"
    print(f"verdict: {verdict} the goal t({args.large}) / t({args.small}) <= {GOAL_SCALING}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--compare-naive", action="store_true", help="naive PyMC vs bayesgen")
    mode.add_argument("--scaling", action="store_true", help="fit time at two corpus sizes")
    parser.add_argument("--docs", type=int, default=300, help="documents (--compare-naive)")
    parser.add_argument("--small", type=int, default=500, help="documents, small (--scaling)")
    parser.add_argument("--large", type=int, default=50_000, help="documents, large (--scaling)")
    parser.add_argument(
        "--words", type=int, default=None, help="vocabulary (default 2000 / 500 for --scaling)"
    )
    parser.add_argument("--classes", type=int, default=2)
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain")
    parser.add_argument("--tune", type=int, default=1000, help="tuning steps per chain")
    parser.add_argument("--pairs", type=int, default=None, help="timed pairs (default 2 / 5)")
    parser.add_argument("--warmup", type=int, default=20, help="draws=tune of the warm-up run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--naive-max",
        type=int,
        default=10_000,
        help="largest classes x words for which the default mode runs the textbook model",
    )
    parser.add_argument(
        "--ideal-max",
        type=int,
        default=100_000,
        help="largest classes x words for which the default mode samples the ideal N(0, I)",
    )
    parser.add_argument(
        "--transform",
        choices=["standardised_log", "cube_root"],
        default=None,
        help="the Gamma rates' transform (bayesgen.families.shared_pymc.GAMMA_RATE_TRANSFORM)",
    )
    parser.add_argument(
        "--sampler",
        choices=["pymc", "nutpie"],
        default="pymc",
        help="nuts_sampler of bayesgen's NUTS run in the default mode (nutpie must be installed)",
    )
    parser.add_argument(
        "--target-accept",
        type=float,
        default=0.9,
        help="target_accept of bayesgen's NUTS run in the default mode (the estimators' 0.9)",
    )
    args = parser.parse_args(argv)
    if args.words is None:
        args.words = 500 if args.scaling else 2000
    if args.pairs is None:
        args.pairs = 5 if args.scaling else 2
    if args.scaling:
        return scaling(args)
    if args.transform:
        shared_pymc.GAMMA_RATE_TRANSFORM = args.transform
    return compare_naive(args) if args.compare_naive else side_by_side(args)


def peak_memory_mb() -> tuple[float, float]:
    """Peak resident memory of this process and of its largest finished child (the forked
    chains), in MB (``resource.getrusage``; Linux reports kB)."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return own, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def sample_exact(stats, *, draws: int, seed: int):
    """bayesgen's exact conjugate draws (``inference="conjugate"``), timed like NUTS."""
    start = time.perf_counter()
    idata = conjugate_posterior(stats, draws=draws, chains=2, random_seed=seed, prior_draws=0)
    idata["posterior"].attrs["sampling_time"] = time.perf_counter() - start
    return idata


def side_by_side(args) -> int:
    """bayesgen's NUTS (``sample_nuts``, as ``fit(inference="nuts")``), the textbook PyMC model
    (up to ``--naive-max`` parameters) and bayesgen's exact conjugate draws, on one corpus."""
    X, y = zipf_bag_of_words(args.docs, args.words, args.classes, seed=args.seed)
    stats = multinomial_nb(X, y)
    n_params = args.classes * args.words
    print(describe_corpus(X, stats))
    print(versions())
    print(
        f"2 chains x ({args.tune} tuning + {args.draws} draws), cores=2, target_accept "
        f"{args.target_accept} "
        f"(sample_nuts, nuts_sampler={args.sampler!r}) / 0.8 (textbook, pm.sample's "
        f"default); rate transform "
        f"{shared_pymc.GAMMA_RATE_TRANSFORM!r}"
    )
    print(f"load average before: {' '.join(f'{v:.2f}' for v in os.getloadavg())}")
    library = functools.partial(
        sample_library, nuts_sampler=args.sampler, target_accept=args.target_accept
    )
    # Each run: how to build its model, how to sample it, and how to judge the draws.
    judge = functools.partial(diagnostics, stats=stats)
    runs = {"bayesgen NUTS": (lambda: bayesgen_model(X, y), library, judge)}
    if n_params <= args.naive_max:
        runs["textbook PyMC"] = (lambda: naive_model(X, y, args.classes), sample, judge)
    runs["exact draws"] = (
        lambda: stats,
        lambda s, draws, tune, seed: sample_exact(s, draws=draws, seed=seed),
        judge,
    )
    if n_params <= args.ideal_max:
        # class_prob's free coordinates and the rates: the model's dimension.
        dimension = n_params + args.classes - 1
        runs["ideal N(0, I)"] = (
            lambda: ideal_model(dimension),
            functools.partial(sample_library, target_accept=args.target_accept, var_names=["z"]),
            ideal_diagnostics,
        )
    if args.warmup:
        for name, (build, sampler, _) in runs.items():
            if name != "exact draws":
                warm = timed_fit(
                    build, draws=args.warmup, tune=args.warmup, seed=0, sampler=sampler
                )
                print(
                    f"warm-up {name}: {warm['wall']:.1f} s wall ({args.warmup}+{args.warmup} steps)"
                )
    print(
        f"{'':<14} {'wall s':>7} {'sample s':>8} {'min ESS':>8} {'ESS/s':>7} {'depth':>5} "
        f"{'div':>4} {'max R-hat':>9} {'θ max|err|':>10} {'err/MCSE':>8}"
    )
    for name, (build, sampler, judge) in runs.items():
        fit = timed_fit(build, draws=args.draws, tune=args.tune, seed=args.seed, sampler=sampler)
        row = fit | judge(fit.pop("idata"))
        print(
            f"{name:<14} {row['wall']:>7.1f} {row['sampling']:>8.1f} {row['min_ess']:>8.0f} "
            f"{row['min_ess'] / row['sampling']:>7.1f} {row['mean_tree_depth']:>5.2f} "
            f"{row['divergences']:>4} {row['max_rhat']:>9.4f} {row['max_err']:>10.2e} "
            f"{row['max_z']:>8.2f}",
            flush=True,
        )
    own, child = peak_memory_mb()
    print(
        f"peak memory (getrusage ru_maxrss): this process {own:.0f} MB, largest child "
        f"(a chain) {child:.0f} MB; load average after: "
        f"{' '.join(f'{v:.2f}' for v in os.getloadavg())}"
    )
    print(
        "err/MCSE: max over class_prob and feature_prob of |posterior mean − exact| / MCSE; "
        "the exact mean is the closed-form add-λ (compare() allows the family-wise threshold, "
        "4 to 5.4 here), and 0 for the ideal N(0, I) of the model's dimension"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
