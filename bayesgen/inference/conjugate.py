"""The exact conjugate posterior held as its parameters, draws made only when asked.

A conjugate fit (``inference="conjugate"``) keeps its posterior as the closed-form
statistics it follows from (Dirichlet and Beta concentrations, normal-inverse-Wishart
hyperparameters) in a :class:`ConjugatePosterior`. Means, SDs and equal-tailed or highest-
density intervals come from the exact marginals of each scalar (the family's
:meth:`~bayesgen.families.Family.exact_marginals`):

* a Dirichlet(a) component is Beta(a_j, a0 − a_j) (a0 = Σ a), a Beta-Bernoulli φ its Beta;
* under the normal-inverse-Wishart, μ_kj is Student-t, Σ_jj inverse-gamma, and every Σ_ij
  has its exact mean and SD.

Where a scalar has no standard marginal (Σ's off-diagonal intervals, GDA's ``coef`` and
``intercept``, θ under a hyperprior on λ) the answer comes from :data:`FALLBACK_DRAWS` exact
independent draws of that parameter (seeded, so repeatable); :meth:`ConjugatePosterior.summary`
marks those rows ``exact=False``.

:meth:`ConjugatePosterior.draws` materialises exact draws of only what is asked (some
variables, some features, a number of draws), in the layout of the ``posterior`` group; for
the multinomial model a subset of the vocabulary is drawn with one remainder cell per class
(the Dirichlet aggregation property), so its cost is that of the subset.
"""

from __future__ import annotations

import datetime

import numpy as np
import pandas as pd
import xarray as xr

from bayesgen.families import Family, family
from bayesgen.families.results import Marginal, parameter_coords
from bayesgen.inference import observed as rows_module
from bayesgen.inference import sampling as inference
from bayesgen.inference.observed import DRAW_CHUNK_ELEMENTS
from bayesgen.maths.likelihood import normalize_log_proba

#: Draws used for what has no closed form (intervals of Σ's off-diagonal, GDA's coef).
FALLBACK_DRAWS = 4000
#: Most scalars held at once by :meth:`ConjugatePosterior.draws` (about 160 MB in float64).
DRAW_ELEMENTS = 20_000_000
#: Golden-section steps of the HDI search: the bracket shrinks to 0.618^60 ≈ 3e-13 of (0, 1 −
#: prob), far below what moves a quantile.
_HDI_STEPS = 60


class ConjugatePosterior:
    """An exact conjugate posterior, kept as the closed form it follows from.

    Parameters
    ----------
    estimates : xarray.Dataset
        The family's closed-form fit (``est.closed_form_``); its attrs name the model and
        prior.
    random_seed : int, optional
        Seed of :meth:`idata`, of the fallback draws and of :meth:`draws` when none is
        given; None draws one from fresh entropy, kept so that repeated calls agree.
    chains, draws : int, default 2 and 1000
        The fit's draws: those :meth:`idata` materialises, and as many as predictions
        average over. Where the family has an aggregated shortcut (the multinomial model,
        :meth:`predict_proba_draws`) predictions draw their own, of the cells each document
        needs: the same law, not the same numbers as :meth:`idata`'s.
    prior_draws : int, default 500
    dtype : {"float64", "float32"}, default "float64"
        As the estimator's parameters of the same names.
    observed : xarray.Dataset, optional
        The ``observed_data`` group (the training rows), for :meth:`idata`.
    model_family : Family, optional
        The model ``estimates`` belongs to, as the estimators hand it in; None looks it up by
        ``estimates.attrs["model"]`` (:func:`bayesgen.families.family`), for a closed-form Dataset
        on its own.

    Examples
    --------
    >>> from bayesgen import MultinomialNB
    >>> X = [[2, 1, 0], [3, 0, 1], [0, 2, 3], [1, 0, 4]]
    >>> est = MultinomialNB(inference="conjugate", random_seed=0).fit(X, [0, 0, 1, 1])
    >>> est.posterior_.mean()["feature_prob"].values.round(3).tolist()  # (N_kw + 1) / (N_k + 3)
    [[0.6, 0.2, 0.2], [0.154, 0.231, 0.615]]
    >>> est.posterior_.summary(var_names=["class_prob"]).round(3)
                   mean     sd  eti94_lb  eti94_ub  exact
    class_prob[0]   0.5  0.189     0.157     0.843   True
    class_prob[1]   0.5  0.189     0.157     0.843   True
    """

    def __init__(
        self,
        estimates: xr.Dataset,
        *,
        random_seed: int | None = None,
        chains: int = 2,
        draws: int = 1000,
        prior_draws: int = 500,
        dtype: str = "float64",
        observed: xr.Dataset | None = None,
        created_at: str | None = None,
        model_family: Family | None = None,
    ):
        self.estimates = estimates
        # When the posterior was made (the fit), stamped on its draws whenever they are drawn.
        self.created_at = created_at or datetime.datetime.now(datetime.UTC).isoformat()
        self.family = model_family or family(estimates)
        if random_seed is None:
            random_seed = int(np.random.SeedSequence().generate_state(1, np.uint64)[0] >> 1)
        self.random_seed = int(random_seed)
        self.chains, self.draws_per_chain = int(chains), int(draws)
        self.prior_draws = int(prior_draws)
        self.dtype = dtype
        self.observed = observed
        self._marginals: dict[str, Marginal] | None = None
        self._fallback: xr.Dataset | None = None

    # -- what it holds -----------------------------------------------------------------------

    @property
    def variables(self) -> dict[str, tuple[str, ...]]:
        """The posterior variables and their dims (those of the ``posterior`` group)."""
        return self.family.parameter_dims(self.estimates)

    @property
    def marginals(self) -> dict[str, Marginal]:
        """The family's exact marginals (computed once)."""
        if self._marginals is None:
            self._marginals = self.family.exact_marginals(self.estimates)
        return self._marginals

    def is_exact(self, var_names=None, *, intervals: bool = False) -> bool:
        """Whether the means and SDs (and with ``intervals`` the intervals) of ``var_names``
        (default all) are exact, not from the fallback draws."""
        for name in self._names(var_names):
            marginal = self.marginals.get(name)
            if marginal is None:
                return False
            if intervals and (
                marginal.distribution is None
                or (marginal.has_interval is not None and not marginal.has_interval.all())
            ):
                return False
        return True

    # -- exact summaries ---------------------------------------------------------------------

    def mean(self, var_names=None) -> xr.Dataset:
        """Posterior mean of every scalar (float64), exact where :meth:`is_exact`."""
        return self._dataset({name: self._moment(name, "mean") for name in self._names(var_names)})

    def sd(self, var_names=None) -> xr.Dataset:
        """Posterior SD of every scalar (float64), exact where :meth:`is_exact`."""
        return self._dataset({name: self._moment(name, "sd") for name in self._names(var_names)})

    def interval(self, prob: float = 0.94, *, kind: str = "eti", var_names=None) -> xr.Dataset:
        """Credible interval of every scalar, with a ``bound`` dim (``lower``, ``upper``).

        Parameters
        ----------
        prob : float, default 0.94
            The probability inside, in (0, 1).
        kind : {"eti", "hdi"}
            Equal-tailed (the ``(1 − prob) / 2`` and ``(1 + prob) / 2`` quantiles of the exact
            marginal) or highest-density (the shortest interval holding ``prob``, found by a
            golden-section search over its lower tail mass; every marginal here is unimodal,
            so the shortest interval is the HDI). The HDI costs about 120 quantile
            evaluations per scalar, the ETI two: for a million scalars, prefer the ETI or
            ``var_names``.
        var_names : list of str, optional
        """
        _check_prob(prob)
        if kind not in ("eti", "hdi"):
            raise ValueError(f"kind: expected 'eti' or 'hdi'; got {kind!r}.")
        out = {}
        for name in self._names(var_names):
            lower, upper = self._interval(name, prob, kind)
            out[name] = (("bound", *self.variables[name]), np.stack([lower, upper]))
        return self._dataset(out, bound=["lower", "upper"])

    def summary(self, var_names=None, *, prob: float = 0.94, kind: str = "eti") -> pd.DataFrame:
        """One row per scalar: ``mean``, ``sd``, the interval's ``{kind}{percent}_lb`` and
        ``_ub`` (ArviZ 1.x's column names), and ``exact`` (False where the row comes from the
        fallback draws). The index is ``variable[coords]`` as in ``arviz.summary``."""
        names = self._names(var_names)
        means, sds = self.mean(names), self.sd(names)
        bounds = self.interval(prob, kind=kind, var_names=names)
        label = f"{kind}{round(100 * prob):g}"
        frames = []
        for name in names:
            dims = self.variables[name]
            exact = self._exact_mask(name, kind)
            frames.append(
                pd.DataFrame(
                    {
                        "mean": means[name].values.ravel(),
                        "sd": sds[name].values.ravel(),
                        f"{label}_lb": bounds[name].values[0].ravel(),
                        f"{label}_ub": bounds[name].values[1].ravel(),
                        "exact": np.broadcast_to(exact, means[name].shape).ravel(),
                    },
                    index=_labels(name, means[name], dims),
                )
            )
        return pd.concat(frames)

    # -- draws on demand -----------------------------------------------------------------------

    def idata(self) -> xr.DataTree:
        """What a fit that draws at once holds as ``idata_``: ``chains`` x ``draws`` exact
        draws of every parameter (seeded by ``random_seed``: the same draws), the prior's,
        the statistics, and with ``observed`` the training rows and their pointwise
        log-likelihood. Gigabytes for a large vocabulary: ask :meth:`draws` for less."""
        tree = inference.conjugate_posterior(
            self.estimates,
            draws=self.draws_per_chain,
            chains=self.chains,
            random_seed=self.random_seed,
            prior_draws=self.prior_draws,
            dtype=self.dtype,
            model_family=self.family,
        )
        for group in ("posterior", "prior"):
            if group in tree.children:
                tree[group].attrs["created_at"] = self.created_at
        if self.observed is not None:
            rows_module.add_training_data(tree, self.observed)
            X, y_codes = rows_module.training_rows(tree)
            tree["log_likelihood"] = rows_module.log_likelihood(
                self.family, self.estimates, X, y_codes, tree["posterior"].to_dataset()
            )
        return tree

    def draws(
        self,
        n_draws: int = 1000,
        *,
        chains: int = 1,
        random_seed: int | None = None,
        var_names=None,
        features=None,
        dtype: str = "float64",
    ) -> xr.Dataset:
        """Exact independent draws of only what is asked, in the ``posterior`` group's layout.

        Parameters
        ----------
        n_draws : int, default 1000
            Draws per chain (thinning is asking for fewer).
        chains : int, default 1
        random_seed : int, optional
            Default: the posterior's own seed.
        var_names : list of str, optional
            The variables (default all).
        features : sequence, optional
            Labels of the ``feature`` coordinate to keep. For the multinomial model only
            those words are drawn, with one remainder cell per class (Dirichlet
            aggregation): their joint distribution is exact and the cost is that of the
            subset, not of the vocabulary.
        dtype : {"float64", "float32"}

        Raises
        ------
        ValueError
            When the draws would hold more than :data:`DRAW_ELEMENTS` scalars (ask for fewer
            draws, variables or features), or for an unknown variable or feature.
        """
        if isinstance(n_draws, bool) or not isinstance(n_draws, int | np.integer) or n_draws < 1:
            raise ValueError(f"n_draws: expected a positive integer; got {n_draws!r}.")
        if isinstance(chains, bool) or not isinstance(chains, int | np.integer) or chains < 1:
            raise ValueError(f"chains: expected a positive integer; got {chains!r}.")
        if dtype not in ("float64", "float32"):
            raise ValueError(f"dtype: expected 'float64' or 'float32'; got {dtype!r}.")
        names = self._names(var_names)
        labels = self._feature_labels(features)
        estimates = self.estimates
        if labels is not None:
            estimates = self.family.feature_subset(estimates, labels)
        sizes = estimates.sizes
        per_draw = sum(int(np.prod([sizes[d] for d in self.variables[n]])) for n in names)
        total = per_draw * n_draws * chains
        if total > DRAW_ELEMENTS:
            raise ValueError(
                f"n_draws: {chains} x {n_draws} draws of {per_draw:,} scalars would hold "
                f"{total:,} values, more than {DRAW_ELEMENTS:,}; ask for fewer draws, "
                "var_names or features."
            )
        seed = self.random_seed if random_seed is None else random_seed
        rng = np.random.default_rng(seed)
        variables = self.family.conjugate_draws(
            estimates, rng, (chains, n_draws), dtype, posterior=True
        )
        coords = parameter_coords(estimates)
        coords |= {"chain": np.arange(chains), "draw": np.arange(n_draws)}
        data = {
            name: (("chain", "draw", *dims), values)
            for name, (dims, values) in variables.items()
            if name in names
        }
        result = xr.Dataset(data, coords=coords)
        if labels is not None:
            result = result.sel(
                {dim: labels for dim in ("feature", "feature2") if dim in result.dims}
            )
        return result

    def predict_log_joint(self, X, n_draws: int) -> np.ndarray | None:
        """log p(x, y = k | θ) of checked rows X for ``n_draws`` exact draws drawing only the
        cells X needs (the family's ``aggregated_log_joint``); None where the family has no
        such shortcut. Shape (n_draws, n_samples, n_classes)."""
        return self.family.aggregated_log_joint(self.estimates, X, n_draws, self.random_seed)

    def predict_proba_draws(self, X, classes) -> xr.DataArray | None:
        """p(y = k | x, θ) of checked rows X for the fit's chains x draws, from
        :meth:`predict_log_joint` in blocks of documents (each document's draws exactly
        distributed; nothing of the vocabulary's size is drawn). None where the family has no
        such shortcut. Dims (chain, draw, obs, class)."""
        n_chains, n_draws, n_classes = self.chains, self.draws_per_chain, len(classes)
        n_samples = n_chains * n_draws
        step = max(1, DRAW_CHUNK_ELEMENTS // (n_samples * n_classes))
        if step >= X.shape[0]:  # one block: its softmax, made in place, is the answer
            proba = self.predict_log_joint(X, n_samples)
            if proba is None:
                return None
            proba = _softmax(proba)
        else:
            proba = np.empty((n_samples, X.shape[0], n_classes))
        for start in range(0, X.shape[0] if step < X.shape[0] else 0, step):
            rows = slice(start, min(start + step, X.shape[0]))
            joint = self.predict_log_joint(X[rows], n_samples)
            if joint is None:
                return None
            proba[:, rows] = _softmax(joint)
        return xr.DataArray(
            proba.reshape(n_chains, n_draws, X.shape[0], n_classes),
            dims=("chain", "draw", "obs", "class"),
            coords={
                "chain": np.arange(n_chains),
                "draw": np.arange(n_draws),
                "obs": np.arange(X.shape[0]),
                "class": classes,
            },
            name="proba",
        )

    # -- private ----------------------------------------------------------------------------

    def _names(self, var_names) -> list[str]:
        if var_names is None:
            return list(self.variables)
        names = [var_names] if isinstance(var_names, str) else list(var_names)
        unknown = [name for name in names if name not in self.variables]
        if unknown:
            raise ValueError(
                f"var_names: expected names among {list(self.variables)}; got {unknown!r}."
            )
        return names

    def _dataset(self, variables: dict, **extra_coords) -> xr.Dataset:
        data = {
            name: value if isinstance(value, tuple) else (self.variables[name], value)
            for name, value in variables.items()
        }
        return xr.Dataset(data, coords={**parameter_coords(self.estimates), **extra_coords})

    def _moment(self, name: str, which: str) -> np.ndarray:
        marginal = self.marginals.get(name)
        if marginal is not None:
            return np.asarray(getattr(marginal, which), dtype=np.float64)
        draws = self._fallback_draws()[name]
        axes = ("chain", "draw")
        if which == "mean":
            return draws.mean(axes, dtype="float64").values
        return draws.std(axes, ddof=1, dtype="float64").values

    def _interval(self, name: str, prob: float, kind: str) -> tuple[np.ndarray, np.ndarray]:
        marginal = self.marginals.get(name)
        from_draws = marginal is None or marginal.distribution is None
        if marginal is not None and marginal.has_interval is not None:
            from_draws = from_draws or not marginal.has_interval.all()
        if from_draws:
            values = self._fallback_draws()[name].values
            values = values.reshape(-1, *values.shape[2:]).astype(np.float64)
            lower, upper = _sample_interval(values, prob, kind)
        if marginal is not None and marginal.distribution is not None:
            exact_lower, exact_upper = _distribution_interval(marginal.distribution, prob, kind)
            if marginal.has_interval is None:
                lower, upper = exact_lower, exact_upper
            else:
                lower = np.where(marginal.has_interval, exact_lower, lower)
                upper = np.where(marginal.has_interval, exact_upper, upper)
            if marginal.point_mass is not None:
                lower = np.where(marginal.point_mass, marginal.mean, lower)
                upper = np.where(marginal.point_mass, marginal.mean, upper)
        shape = tuple(self.estimates.sizes[d] for d in self.variables[name])
        return np.broadcast_to(lower, shape).copy(), np.broadcast_to(upper, shape).copy()

    def _exact_mask(self, name: str, kind: str) -> np.ndarray:
        marginal = self.marginals.get(name)
        if marginal is None or marginal.distribution is None:
            return np.asarray(False)
        return np.asarray(True) if marginal.has_interval is None else marginal.has_interval

    def _fallback_draws(self) -> xr.Dataset:
        """:data:`FALLBACK_DRAWS` exact draws of every variable, made once (bounded: fewer
        where a draw is large)."""
        if self._fallback is None:
            per_draw = sum(
                int(np.prod([self.estimates.sizes[d] for d in dims]))
                for dims in self.variables.values()
            )
            n_draws = int(min(FALLBACK_DRAWS, max(100, DRAW_ELEMENTS // max(per_draw, 1))))
            self._fallback = self.draws(n_draws, random_seed=self.random_seed + 1)
        return self._fallback

    def _feature_labels(self, features) -> np.ndarray | None:
        if features is None:
            return None
        labels = np.atleast_1d(np.asarray(features))
        known = self.estimates["feature"].values
        missing = labels[~np.isin(labels, known)]
        if missing.size or labels.size == 0:
            raise ValueError(
                "features: expected one or more labels of the feature coordinate; got "
                f"{missing[:5].tolist() if missing.size else 'none'}."
            )
        return labels


class Lazy:
    """A value made by ``make(*args)`` on first use, then kept: a conjugate fit's ``idata_``
    (:meth:`ConjugatePosterior.idata`, gigabytes for a large vocabulary) and ``map_``
    (:func:`bayesgen.inference.sampling.conjugate_map`, a pass over every cell) until someone asks.

    An object of its own, so that making the value changes what it holds, not the estimator's
    ``__dict__`` (scikit-learn checks that predicting leaves that unchanged).
    """

    def __init__(self, make, *args):
        self._make, self._args = make, args
        self._value = None

    def value(self):
        if self._value is None:
            self._value = self._make(*self._args)
            self._make, self._args = None, ()  # what made it is no longer needed
        return self._value

    @property
    def made(self):
        """The value if it has been made (and perhaps changed since), else None."""
        return self._value


def _softmax(joint: np.ndarray) -> np.ndarray:
    """:func:`bayesgen.closed_form.normalize_log_proba` of ``joint``, in place: SciPy's
    logsumexp takes seconds on a 1,000 x 1,000 x 20 block of draws. Non-finite rows go to
    ``normalize_log_proba``, which names them."""
    best = joint.max(axis=-1, keepdims=True)
    if not np.all(np.isfinite(best)):
        return normalize_log_proba(joint)
    joint -= best
    np.exp(joint, out=joint)
    joint /= joint.sum(axis=-1, keepdims=True)
    return joint


def _check_prob(prob) -> None:
    if not 0 < prob < 1:
        raise ValueError(f"prob: expected a probability in (0, 1); got {prob}.")


def _distribution_interval(distribution, prob: float, kind: str):
    """ETI or HDI of a frozen SciPy distribution with array parameters."""
    if kind == "eti":
        tail = (1.0 - prob) / 2.0
        return distribution.ppf(tail), distribution.ppf(1.0 - tail)
    # The width ppf(p + prob) − ppf(p) of a unimodal density is smallest at the HDI's lower
    # tail mass p; a golden-section search over p in [0, 1 − prob], all scalars at once.
    ratio = (np.sqrt(5.0) - 1.0) / 2.0
    shape = np.broadcast(*distribution.args, *distribution.kwds.values()).shape
    low, high = np.zeros(shape), np.full(shape, 1.0 - prob)

    def width(p):
        return distribution.ppf(p + prob) - distribution.ppf(p)

    left, right = high - ratio * (high - low), low + ratio * (high - low)
    width_left, width_right = width(left), width(right)
    for _ in range(_HDI_STEPS):
        # The minimum lies in [low, right] where width(left) is the smaller, else in
        # [left, high]; one new point per scalar and step.
        smaller = width_left < width_right
        high = np.where(smaller, right, high)
        low = np.where(smaller, low, left)
        point = np.where(smaller, high - ratio * (high - low), low + ratio * (high - low))
        width_point = width(point)
        left, right, width_left, width_right = (
            np.where(smaller, point, right),
            np.where(smaller, left, point),
            np.where(smaller, width_point, width_right),
            np.where(smaller, width_left, width_point),
        )
    best = (low + high) / 2.0
    # The ends are candidates too (a density unbounded at 0 puts the HDI at p = 0).
    candidates = np.stack([np.zeros(shape), best, np.full(shape, 1.0 - prob)])
    widths = np.stack([width(c) for c in candidates])
    p = np.take_along_axis(candidates, np.nanargmin(widths, axis=0)[None], axis=0)[0]
    return distribution.ppf(p), distribution.ppf(p + prob)


def _sample_interval(values: np.ndarray, prob: float, kind: str):
    """ETI or HDI of draws along the first axis (ArviZ's shortest-interval HDI)."""
    if kind == "eti":
        tail = (1.0 - prob) / 2.0
        return np.quantile(values, tail, axis=0), np.quantile(values, 1.0 - tail, axis=0)
    ordered = np.sort(values, axis=0)
    n = ordered.shape[0]
    inside = int(np.floor(prob * n))
    widths = ordered[inside:] - ordered[: n - inside]
    start = np.argmin(widths, axis=0)[None]
    return (
        np.take_along_axis(ordered, start, axis=0)[0],
        np.take_along_axis(ordered, start + inside, axis=0)[0],
    )


def _labels(name: str, values: xr.DataArray, dims) -> list[str]:
    if not dims:
        return [name]
    grids = np.meshgrid(*[values[d].values.astype(str) for d in dims], indexing="ij")
    return [
        f"{name}[{', '.join(parts)}]" for parts in zip(*(g.ravel() for g in grids), strict=True)
    ]
