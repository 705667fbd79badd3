"""NUTS on JAX (issue 26): bayesgen's multinomial model under numpyro, beside the textbook
NumPyro model and bayesgen's exact conjugate draws, on one Zipf corpus (``bench_closed_form``).

Three runs, one after the other:

``bayesgen numpyro``
    ``bayesgen.inference.sampling.sample_nuts(nuts_sampler="numpyro")``, the path of
    ``MultinomialNB(inference="nuts", nuts_sampler="numpyro")``: PyMC hands bayesgen's model
    (``generative.multinomial_nb_model``, the Gamma-Poisson form of the Dirichlet on the
    sufficient statistics, with its standardising transforms) to numpyro's NUTS through JAX,
    target_accept 0.9. With fewer JAX devices than chains (one GPU) the chains run vectorised.
``textbook NumPyro``
    numpyro's NUTS (default target_accept 0.8) on the model as it is written in a textbook:
    a Dirichlet over the vocabulary for each class and over the classes, each with a
    Multinomial likelihood of the per-class counts (the same posterior as a Multinomial per
    document, whose coefficients do not involve the parameters). Same chains, same chain
    method, same precision (PyTensor's float64 turns on JAX's x64 for the whole process).
``exact draws``
    ``conjugate_posterior``, bayesgen's exact Dirichlet draws, on the CPU.

Each NUTS run's time includes JAX's compilation (numpyro compiles inside ``MCMC.run``, and
PyMC builds a new function each call, so no run reuses another's); the warm-up line shows a
10 + 10-step run's time, most of it that compilation. Columns as in ``bench_nuts.py``: min bulk
ESS over ``class_prob`` and ``feature_prob``, bulk ESS per second of the run, mean tree depth,
the kept draws' leapfrog steps per chain and the run's seconds per step, divergences, max
R-hat, max |posterior mean - exact| of ``feature_prob`` and that error in MCSEs. Each run
prints the time it starts at first, so that one a ``timeout`` stops still says how far it got;
``--runs`` picks the runs, to put each under a timeout of its own.

Usage::

    .venv/bin/python benchmarks/bench_nuts_jax.py --words 20000 --docs 3000
    .venv/bin/python benchmarks/bench_nuts_jax.py --words 20000 --docs 3000 --runs textbook
    .venv/bin/python benchmarks/bench_nuts_jax.py --words 50000 --classes 20 --docs 20000 \\
        --draws 500 --tune 500 --runs bayesgen,exact --warmup 0

needs ``jax`` and ``numpyro`` (not bayesgen dependencies; docs/large-models.md). Without a GPU,
JAX runs on the CPU; set ``JAX_PLATFORMS=cpu`` where JAX's CUDA plugin is installed on a machine
without one.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pymc.sampling.jax  # noqa: F401  (before JAX starts: it asks XLA for 100 CPU devices)
import xarray as xr
from bench_closed_form import zipf_bag_of_words
from bench_nuts import (
    VAR_NAMES,
    bayesgen_model,
    describe_corpus,
    diagnostics,
    peak_memory_mb,
    sample_exact,
    versions,
)

from bayesgen.closed_form import feature_counts, multinomial_nb
from bayesgen.inference.sampling import chain_method_for, sample_nuts


def textbook_numpyro(
    X, y, n_classes: int, *, draws: int, tune: int, seed: int, chains: int = 2, progress=False
):
    """The textbook NumPyro model sampled by numpyro's NUTS; a DataTree like PyMC's."""
    import jax
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist
    from numpyro.infer import MCMC, NUTS

    word_counts = jnp.asarray(np.rint(feature_counts(X, y, n_classes)))
    class_counts = jnp.asarray(np.bincount(y, minlength=n_classes).astype(np.float64))
    n_words = X.shape[1]

    def model():
        class_prob = numpyro.sample("class_prob", dist.Dirichlet(jnp.ones(n_classes)))
        feature_prob = numpyro.sample(
            "feature_prob", dist.Dirichlet(jnp.ones((n_classes, n_words)))
        )
        numpyro.sample(
            "class_counts",
            dist.Multinomial(total_count=class_counts.sum(), probs=class_prob),
            obs=class_counts,
        )
        numpyro.sample(
            "word_counts",
            dist.Multinomial(total_count=word_counts.sum(axis=1), probs=feature_prob),
            obs=word_counts,
        )

    mcmc = MCMC(
        NUTS(model),
        num_warmup=tune,
        num_samples=draws,
        num_chains=chains,
        chain_method=chain_method_for(chains, jax.local_device_count()),
        progress_bar=progress,
    )
    start = time.perf_counter()
    mcmc.run(jax.random.PRNGKey(seed), extra_fields=("num_steps", "diverging"))
    samples = jax.block_until_ready(mcmc.get_samples(group_by_chain=True))
    sampling_time = time.perf_counter() - start
    extra = mcmc.get_extra_fields(group_by_chain=True)
    n_steps = np.asarray(extra["num_steps"])
    posterior = xr.Dataset(
        {
            "class_prob": (("chain", "draw", "class"), np.asarray(samples["class_prob"])),
            "feature_prob": (
                ("chain", "draw", "class", "feature"),
                np.asarray(samples["feature_prob"]),
            ),
        },
        attrs={"sampling_time": sampling_time},
    )
    sample_stats = xr.Dataset(
        {
            # PyMC's reading of numpyro's leapfrog count (pymc.sampling.jax)
            "tree_depth": (("chain", "draw"), np.log2(n_steps).astype(int) + 1),
            "diverging": (("chain", "draw"), np.asarray(extra["diverging"])),
            "n_steps": (("chain", "draw"), n_steps),
        }
    )
    return xr.DataTree.from_dict({"posterior": posterior, "sample_stats": sample_stats})


def timed(run) -> tuple[float, xr.DataTree]:
    start = time.perf_counter()
    idata = run()
    return time.perf_counter() - start, idata


def jax_versions() -> str:
    import jax
    import numpyro

    devices = jax.devices()
    return (
        f"jax {jax.__version__}, numpyro {numpyro.__version__}; {len(devices)} JAX device(s), "
        f"the first {devices[0].device_kind!r}; chain_method "
        f"{chain_method_for(2, len(devices))!r}; x64 {jax.config.jax_enable_x64}"
    )


def device_peak() -> str:
    import jax

    stats = jax.devices()[0].memory_stats() or {}  # None on the CPU
    if "peak_bytes_in_use" not in stats:
        return "device peak not reported"
    return f"device peak {stats['peak_bytes_in_use'] / 2**20:.0f} MB"


RUNS = ("bayesgen", "textbook", "exact")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=3000)
    parser.add_argument("--words", type=int, default=20_000)
    parser.add_argument("--classes", type=int, default=2)
    parser.add_argument("--draws", type=int, default=1000, help="draws per chain")
    parser.add_argument("--tune", type=int, default=1000, help="tuning steps per chain")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=10, help="draws=tune of the warm-up run")
    parser.add_argument(
        "--runs",
        default=",".join(RUNS),
        help="comma-separated subset of bayesgen,textbook,exact; one per process lets a shell "
        "`timeout` bound each run",
    )
    parser.add_argument(
        "--progress", action="store_true", help="numpyro's progress bar (on stderr)"
    )
    args = parser.parse_args(argv)
    chosen = args.runs.split(",")
    if unknown := set(chosen) - set(RUNS):
        parser.error(f"--runs: expected names from {','.join(RUNS)}, got {sorted(unknown)}")

    X, y = zipf_bag_of_words(args.docs, args.words, args.classes, seed=args.seed)
    stats = multinomial_nb(X, y)
    print(describe_corpus(X, stats))

    def library(draws, tune):
        return sample_nuts(
            bayesgen_model(X, y),
            var_names=VAR_NAMES,
            draws=draws,
            tune=tune,
            chains=2,
            random_seed=args.seed,
            prior_draws=0,
            nuts_sampler="numpyro",
            progressbar=args.progress,
        )

    def textbook(draws, tune):
        return textbook_numpyro(
            X, y, args.classes, draws=draws, tune=tune, seed=args.seed, progress=args.progress
        )

    def exact(draws, tune):
        return sample_exact(stats, draws=draws, seed=args.seed)

    runs = {
        label: run
        for key, label, run in (
            ("bayesgen", "bayesgen numpyro", library),
            ("textbook", "textbook NumPyro", textbook),
            ("exact", "exact draws", exact),
        )
        if key in chosen
    }
    print(versions())
    print(jax_versions())
    print(f"2 chains x ({args.tune} tuning + {args.draws} draws)", flush=True)
    clock = time.perf_counter()
    for name, run in runs.items():
        if args.warmup and name != "exact draws":
            seconds, _ = timed(lambda run=run: run(args.warmup, args.warmup))
            print(f"warm-up {name}: {seconds:.1f} s ({args.warmup}+{args.warmup} steps)")
    print(
        f"{'':<17} {'wall s':>7} {'sample s':>8} {'min ESS':>8} {'ESS/s':>7} {'depth':>5} "
        f"{'leapfrogs':>9} {'ms/leap':>7} {'div':>4} {'max R-hat':>9} {'θ max|err|':>10} "
        f"{'err/MCSE':>8}",
        flush=True,
    )
    for name, run in runs.items():
        # Printed first, so that a run a timeout stops still says what it was and since when.
        print(f"  ({name}: started at {time.perf_counter() - clock:.0f} s)", flush=True)
        wall, idata = timed(lambda run=run: run(args.draws, args.tune))
        sampling = float(idata["posterior"].attrs["sampling_time"])
        row = diagnostics(idata, stats)
        steps = idata["sample_stats"].get("n_steps") if "sample_stats" in idata.children else None
        # Leapfrog steps of the kept draws, per chain; tuning's are not recorded.
        leapfrogs = float(steps.sum()) / steps.sizes["chain"] if steps is not None else np.nan
        print(
            f"{name:<17} {wall:>7.1f} {sampling:>8.1f} {row['min_ess']:>8.0f} "
            f"{row['min_ess'] / sampling:>7.1f} {row['mean_tree_depth']:>5.2f} "
            f"{leapfrogs:>9.0f} {1e3 * sampling / leapfrogs:>7.2f} {row['divergences']:>4} "
            f"{row['max_rhat']:>9.4f} {row['max_err']:>10.2e} {row['max_z']:>8.2f}",
            flush=True,
        )
    own, _ = peak_memory_mb()
    print(
        f"peak memory: host {own:.0f} MB (ru_maxrss), {device_peak()}; load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    print(
        "sample s: the run's time, JAX's compilation included for NUTS; leapfrogs: per chain, "
        "over the kept draws; ms/leap: sample s over those (an upper bound: tuning's steps "
        "are not counted); err/MCSE: max over class_prob and feature_prob of "
        "|posterior mean − exact| / MCSE"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
