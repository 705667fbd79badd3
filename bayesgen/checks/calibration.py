"""Simulation-based calibration (SBC): is the fitted posterior the posterior of the model?

For each simulation, :func:`sbc` draws parameters θ* from the estimator's prior (the family's
exact conjugate prior draws), simulates a data set of the estimator's shape from the
generative model, fits a clone of the estimator to it, and records the rank of θ* among L
posterior draws, for a fixed random subset of the scalar parameters of every variable. If the
inference is right, θ* is one more draw from each simulated posterior, so every rank is
uniform on 0, …, L (Talts et al. 2018, *Validating Bayesian inference algorithms with
simulation-based calibration*, arXiv:1804.06788). A sampler that is too narrow piles ranks at
both ends, one that is biased at one end, and a prior other than the fit's (``prior_alpha``)
shows the same way: that is how SBC proves a check able to fail. SBC sees a prior only as
far as it moves the posterior. On 30 rows, drawing λ 25 times smaller than the fit's (sparse
probabilities, which the fit's λ keeps away from 0) fails at p < 1e-60, while 25 times larger
(probabilities near uniform, which 30 rows pin down whatever the prior) passes; likewise
covariances drawn with Ψ₀ / 25 fail for GDA and QDA.

What a simulated data set is
    The labels y_i ~ Categorical(π*) for as many rows as the estimator's training data, then
    x_i ~ p(x | y_i, θ*) by the family's ``simulate_rows``. The multinomial model does not
    model a document's length; the lengths are those of the training rows, shuffled (a random
    permutation, drawn anew each simulation, so they are independent of the new labels).

Data sets the estimator refuses
    A data set where a class has no row cannot be fitted with the estimator's classes, and the
    estimator may refuse others (a QDA class too small for its covariance). Such a draw of
    (θ*, data set) is rejected *as a pair* and drawn again, at most ``max_retries`` times in
    all (counted in :attr:`SBCResult.rejected`). Rejection depends on the data set alone, so
    given the data the posterior is unchanged and the ranks stay exactly uniform; what changes
    is that θ* is drawn from the prior conditioned on data sets the estimator accepts (π
    slightly away from the corners), so the ranks test the posterior over that part of the
    prior only. Redrawing the data alone, keeping θ*, would bias the ranks.

Hyperparameters that the fit derives from the data
    The clone is fitted with the estimator's hyperparameters, except those the fit would
    derive from the data, which are frozen at their values in the estimator's fit, so the
    prior does not change with each simulated data set (a data-dependent prior breaks SBC):
    ``n_categories`` (the categorical model's categories), ``prior`` (GDA's and QDA's
    normal-inverse-Wishart prior, whose default is centred on the training data) and an
    ``alpha="evidence"`` (frozen at the λ the estimator chose). A hyperprior on λ
    (``alpha_prior``) is refused: the families' prior draws hold λ fixed. The clone
    also skips the MAP and the prior group (``compute_map=False, prior_draws=0``); with
    conjugate inference it draws exactly L posterior draws (``draws=L, chains=1``), with NUTS
    it keeps its settings and its draws are thinned evenly to L.

The uniformity test
    For each scalar parameter, the ranks of all the simulations are binned into ``n_bins``
    bins of consecutive ranks and compared with their uniform expectation by Pearson's
    chi-square test (n_bins − 1 degrees of freedom; it needs about 5 simulations a bin, so
    :attr:`SBCResult.ok` asks for ``n_simulations >= 5 * n_bins``). The parameters of one
    variable are not independent (two class probabilities sum to 1, so their ranks mirror each
    other), so the p-value of a variable is the smallest p-value of its parameters times their
    number (Bonferroni), not a test of their pooled ranks, whose dependence would make it
    falsely significant. The result is calibrated when no variable's p-value is below
    ``level / n_variables``: a family-wise error rate of ``level``.

Why not ``simuk``
    simuk (0.3) runs SBC on a ``pymc.Model``: it draws from the model's prior predictive and
    refits with ``pm.sample``. Here that would (1) sample every simulation with NUTS, where
    the conjugate path takes milliseconds and is what most users fit; (2) rank the PyMC
    models' free variables, which for the naive Bayes models are the Gamma rates of the
    Gamma–Poisson form of each Dirichlet, not ``feature_prob``; (3) simulate the observed
    sufficient statistics rather than rows, so the families' ``simulate_rows`` (document
    lengths, sparse text) would not be used; and (4) have no way to reject the data sets the
    estimator refuses, to freeze data-dependent hyperparameters, or to simulate from a prior
    other than the fit's. The loop below is short and uses only the families' interface, so
    it does the job better without a new dependency.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr
from scipy import stats as scipy_stats
from sklearn.base import clone

from bayesgen.input.params import is_integer, is_real
from bayesgen.maths.gaussian import NormalInverseWishart

#: How many times the band's null distribution is simulated (fixed seed: the plot is stable).
_BAND_SIMULATIONS = 4000
_BAND_SEED = 20240611


@dataclass(frozen=True)
class SBCResult:
    """What :func:`sbc` returns.

    Attributes
    ----------
    ranks : pandas.DataFrame
        One row per simulation, one column per ranked parameter: the number of the ``n_draws``
        posterior draws below θ*, 0 … ``n_draws``. The columns are a MultiIndex (variable,
        parameter), so ``ranks["feature_prob"]`` holds one variable's parameters.
    n_draws : int
        L, the posterior draws each rank is taken among.
    n_bins : int
        Bins of the chi-square test.
    parameter_p_values : pandas.Series
        The chi-square p-value of each parameter (index as the columns of ``ranks``).
    p_values : pandas.Series
        Per variable: the smallest p-value of its parameters times their number (Bonferroni),
        at most 1.
    level : float
        The family-wise error rate of :attr:`ok`.
    rejected : int
        Simulated data sets the estimator refused (or that left a class without rows), drawn
        again (see the module docstring).
    model : str
        The estimator's class name.
    inference : str
        The clone's inference ("conjugate" or "nuts").
    prior_alpha : float or None
        The λ the parameters were drawn with, when not the fit's.

    Examples
    --------
    >>> from bayesgen import BernoulliNB, sbc
    >>> X = [[1, 0, 1], [1, 1, 0], [0, 1, 1], [0, 0, 1], [1, 1, 1], [0, 1, 0]]
    >>> est = BernoulliNB(inference="conjugate", compute_map=False, random_seed=0)
    >>> result = sbc(est.fit(X, [0, 0, 0, 1, 1, 1]), n_simulations=20, n_draws=19, n_bins=4,
    ...              random_seed=1)
    >>> type(result).__name__, result.ranks.shape, result.model
    ('SBCResult', (20, 8), 'BernoulliNB')
    >>> sorted(result.p_values.index)
    ['class_prob', 'feature_prob']
    """

    ranks: pd.DataFrame
    n_draws: int
    n_bins: int
    parameter_p_values: pd.Series
    p_values: pd.Series
    level: float
    rejected: int
    model: str
    inference: str
    prior_alpha: float | None = None

    @property
    def n_simulations(self) -> int:
        return len(self.ranks)

    @property
    def threshold(self) -> float:
        """The p-value below which a variable fails: ``level`` / number of variables."""
        return self.level / max(1, len(self.p_values))

    @property
    def enough_simulations(self) -> bool:
        """At least 5 simulations a bin, so the chi-square approximation holds."""
        return self.n_simulations >= 5 * self.n_bins

    @property
    def ok(self) -> bool:
        """Enough simulations, and no variable's p-value below :attr:`threshold`."""
        return self.enough_simulations and bool((self.p_values >= self.threshold).all())

    def __str__(self) -> str:
        lines = [
            f"SBC of {self.model} ({self.inference}): {self.n_simulations} simulations, ranks "
            f"among {self.n_draws} draws, chi-square on {self.n_bins} bins"
            + (
                f", parameters drawn with prior_alpha={self.prior_alpha:g}"
                if self.prior_alpha
                else ""
            )
            + f"; {self.rejected} data sets redrawn.",
            f"{'variable':<14}{'parameters':>11}{'p-value':>12}  verdict",
        ]
        for name, p_value in self.p_values.items():
            verdict = "uniform" if p_value >= self.threshold else "NOT uniform"
            count = self.ranks[name].shape[1]
            lines.append(f"{name:<14}{count:>11}{p_value:>12.3g}  {verdict}")
        if not self.enough_simulations:
            lines.append(
                f"Too few simulations: {self.n_simulations} < 5 x {self.n_bins} bins; not ok."
            )
        verdict = "calibrated" if self.ok else "NOT calibrated"
        lines.append(f"{verdict} (family-wise level {self.level:g}: p >= {self.threshold:.3g})")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<SBCResult ok={self.ok}>\n{self}"

    def plot(self, *, prob: float = 0.95):
        """The ECDF of each parameter's fractional ranks minus the uniform CDF, one axis a
        variable, with a simultaneous ``prob`` band.

        The ECDF is evaluated at the rank boundaries z = j / (L + 1), where a uniform rank
        has P(rank < j) = z exactly. The band is ± c √(z (1 − z) / S) for S simulations, with c
        the ``prob`` quantile of the largest standardised deviation of uniform ranks,
        simulated with a fixed seed: a parameter whose curve leaves it anywhere is not uniform
        at level 1 − ``prob`` (the band holds for each curve, not for all of them at once).

        Returns
        -------
        matplotlib.figure.Figure
        """
        import matplotlib.pyplot as plt  # heavy: matplotlib
        from matplotlib.lines import Line2D  # heavy: matplotlib
        from matplotlib.patches import Patch  # heavy: matplotlib

        names = list(self.p_values.index)
        n_steps = self.n_draws + 1
        z = np.arange(n_steps + 1) / n_steps
        half_width = _band(self.n_simulations, n_steps, prob) * np.sqrt(
            z * (1 - z) / self.n_simulations
        )
        columns = min(3, len(names))
        rows = -(-len(names) // columns)
        fig, axes = plt.subplots(
            rows, columns, figsize=(4.2 * columns, 3.2 * rows), squeeze=False, layout="constrained"
        )
        for ax, name in zip(axes.flat, names, strict=False):
            ax.fill_between(z, -half_width, half_width, color="C0", alpha=0.2, lw=0)
            ax.axhline(0, color="k", lw=0.6)
            for _, ranks in self.ranks[name].items():
                ecdf = _ecdf_at_boundaries(ranks.to_numpy(), n_steps)
                ax.step(z, ecdf - z, where="post", color="C1", lw=0.9, alpha=0.7)
            ax.set_title(f"{name}  (p = {self.p_values[name]:.2g})", fontsize=10)
            ax.set_xlabel("fractional rank")
            ax.set_ylabel("ECDF − uniform")
        for ax in axes.flat[len(names) :]:
            ax.remove()
        fig.suptitle(f"SBC of {self.model}: {self.n_simulations} simulations", fontsize=11)
        # Below the panels: the suptitle holds the top, and the layout stacks no legend on it.
        handles = [
            Patch(color="C0", alpha=0.2, lw=0, label=f"{prob:.0%} band of uniform ranks"),
            Line2D([], [], color="C1", lw=0.9, label="one parameter's ranks"),
        ]
        fig.legend(
            handles=handles,
            loc="outside lower center",
            ncols=2,
            fontsize="small",
            title="p: chi-square test of uniform ranks, per variable (Bonferroni)",
            title_fontsize="small",
        )
        return fig


def sbc(
    estimator,
    *,
    n_simulations: int = 200,
    random_seed=None,
    prior_alpha: float | None = None,
    simulation_prior=None,
    n_draws: int = 99,
    n_bins: int = 10,
    max_cells: int = 8,
    level: float = 0.001,
    max_retries: int | None = None,
) -> SBCResult:
    """Simulation-based calibration of a fitted estimator's inference.

    See the module docstring for the procedure, the test and what is held fixed.

    Parameters
    ----------
    estimator : fitted bayesgen estimator
        Its prior, hyperparameters, inference, number of rows and (text) document lengths
        define the simulations; it is not modified.
    n_simulations : int, default 200
        Simulated data sets (each one fit).
    random_seed : int, optional
        Seeds everything: the parameters, the data, the subset of parameters and each fit.
    prior_alpha : float, optional
        Draw the parameters with λ = ``prior_alpha`` instead of the estimator's ``alpha``
        (naive Bayes models only), while the fits keep theirs: a prior mismatch, which a
        working check must catch.
    simulation_prior : bayesgen.NormalInverseWishart, optional
        The same for GDA and QDA: draw (μ, Σ) from this normal-inverse-Wishart prior,
        resolved on the estimator's training rows as ``fit`` resolves its prior.
    n_draws : int, default 99
        L: posterior draws each rank is taken among (ranks 0 … L).
    n_bins : int, default 10
        Bins of consecutive ranks for the chi-square test; at most L + 1.
    max_cells : int, default 8
        Parameters ranked per variable: a random subset, the same in every simulation, of
        those that vary (the categorical model's padding never does; a covariance's upper
        triangle only). Variables computed from others in every draw (GDA's ``coef`` and
        ``intercept``) are not ranked.
    level : float, default 0.001
        Family-wise error rate of :attr:`SBCResult.ok`.
    max_retries : int, optional
        Rejected data sets allowed in all; default ``n_simulations``.

    Returns
    -------
    SBCResult

    Raises
    ------
    sklearn.exceptions.NotFittedError
        For an estimator that is not fitted.
    TypeError, ValueError
        For an argument of the wrong type or value (the message names it), a prior option that
        does not apply to the model, or more than ``max_retries`` rejected data sets.

    Examples
    --------
    >>> from bayesgen import BernoulliNB, sbc
    >>> X = [[1, 0, 1], [1, 1, 0], [0, 1, 1], [0, 0, 1], [1, 1, 1], [0, 1, 0]]
    >>> est = BernoulliNB(inference="conjugate", compute_map=False, random_seed=0)
    >>> result = sbc(est.fit(X, [0, 0, 0, 1, 1, 1]), n_simulations=60, random_seed=1)
    >>> result.ok
    True
    """
    estimator.check_fitted()
    n_simulations = _check_integer("n_simulations", n_simulations, 1)
    n_draws = _check_integer("n_draws", n_draws, 1)
    n_bins = _check_integer("n_bins", n_bins, 2)
    if n_bins > n_draws + 1:
        raise ValueError(f"n_bins: expected at most n_draws + 1 = {n_draws + 1}; got {n_bins}.")
    max_cells = _check_integer("max_cells", max_cells, 1)
    if not is_real(level) or not 0 < level < 1:
        raise ValueError(f"level: expected a number in (0, 1); got {level!r}.")
    max_retries = n_simulations if max_retries is None else max_retries
    max_retries = _check_integer("max_retries", max_retries, 0)

    fitted = estimator.closed_form_
    model_family = estimator.model_
    X_train, _ = estimator.training_rows()
    simulation = _simulation_estimates(
        estimator, model_family, fitted, X_train, prior_alpha, simulation_prior
    )
    if estimator.inference == "nuts":
        total = estimator.draws * estimator.chains
        if total < n_draws:
            raise ValueError(
                f"n_draws: expected at most the estimator's draws x chains = {total}; got "
                f"{n_draws}."
            )
        overrides = {}
    else:
        overrides = {"draws": n_draws, "chains": 1}
    template = clone(estimator).set_params(
        compute_map=False, prior_draws=0, **overrides, **_frozen_hyperparameters(estimator)
    )

    rng = np.random.default_rng(random_seed)
    cells = _ranked_cells(model_family, fitted, rng, max_cells)
    classes = estimator.classes_
    n_classes, n_rows = len(classes), X_train.shape[0]
    ranks = np.empty((n_simulations, sum(len(index) for _, index, _ in cells)), dtype=np.int64)
    rejected, last_refusal = 0, "a class without rows"
    for simulation_index in range(n_simulations):
        while True:
            draw = model_family.conjugate_draws(simulation, rng, (1,), np.float64, posterior=False)
            truth = {name: values[0] for name, (_, values) in draw.items()}
            y_codes = rng.choice(n_classes, size=n_rows, p=truth["class_prob"])
            posterior = None
            if np.bincount(y_codes, minlength=n_classes).min() > 0:
                shape_rows = X_train[rng.permutation(n_rows)]
                X_sim = model_family.simulate_rows(fitted, shape_rows, y_codes, truth, rng)
                fit = clone(template).set_params(random_seed=int(rng.integers(2**31)))
                try:
                    fit.fit(X_sim, classes[y_codes])
                    posterior = fit.idata_["posterior"].to_dataset()
                except ValueError as error:
                    last_refusal = str(error)
            else:
                last_refusal = "a class without rows"
            if posterior is not None:
                break
            rejected += 1
            if rejected > max_retries:
                raise ValueError(
                    f"max_retries: more than {max_retries} simulated data sets were refused "
                    f"(last: {last_refusal}); use more rows per class, or raise max_retries."
                )
        ranks[simulation_index] = _ranks(posterior, truth, cells, n_draws, rng)

    columns = pd.MultiIndex.from_tuples(
        [(name, label) for name, _, labels in cells for label in labels],
        names=["variable", "parameter"],
    )
    frame = pd.DataFrame(ranks, columns=columns)
    frame.index.name = "simulation"
    parameter_p = pd.Series(
        [_chi_square_p(frame[column].to_numpy(), n_draws, n_bins) for column in columns],
        index=columns,
    )
    variable_p = pd.Series(
        {name: min(1.0, len(labels) * parameter_p[name].min()) for name, _, labels in cells}
    )
    return SBCResult(
        ranks=frame,
        n_draws=n_draws,
        n_bins=n_bins,
        parameter_p_values=parameter_p,
        p_values=variable_p,
        level=float(level),
        rejected=rejected,
        model=type(estimator).__name__,
        inference=estimator.inference,
        prior_alpha=None if prior_alpha is None else float(prior_alpha),
    )


# -- the prior to simulate from ----------------------------------------------------------


def _simulation_estimates(
    estimator, model_family, fitted, X_train, prior_alpha, simulation_prior
) -> xr.Dataset:
    """The fit's closed form with the prior the parameters are drawn from."""
    problem = model_family.prior_draws_problem(fitted, estimator.get_params())
    if problem is not None:
        raise ValueError(f"estimator: {problem}")
    if estimator.get_params().get("alpha_prior") is not None:
        raise ValueError(
            "estimator: SBC draws θ from the prior at a fixed λ; this estimator has a "
            f"hyperprior on λ (alpha_prior={estimator.alpha_prior!r}), whose draws it does not "
            "make. Use alpha_prior=None."
        )
    simulation = fitted.copy()
    if prior_alpha is not None:
        if not model_family.smoothing:
            raise ValueError(
                f"prior_alpha: defined for the naive Bayes models, whose prior has a λ; "
                f"{type(estimator).__name__} has none (use simulation_prior)."
            )
        if not is_real(prior_alpha) or not 0 < prior_alpha < math.inf:
            raise ValueError(f"prior_alpha: expected a positive number; got {prior_alpha!r}.")
        simulation.attrs["alpha"] = float(prior_alpha)
    if simulation_prior is not None:
        if "prior_mean" not in fitted:
            raise ValueError(
                f"simulation_prior: defined for GDA and QDA (a normal-inverse-Wishart prior); "
                f"{type(estimator).__name__} has none (use prior_alpha)."
            )
        if not isinstance(simulation_prior, NormalInverseWishart):
            raise TypeError(
                "simulation_prior: expected a bayesgen.NormalInverseWishart; got "
                f"{type(simulation_prior).__name__}."
            )
        resolved = simulation_prior.resolve(
            np.asarray(X_train, dtype=np.float64), fitted["feature"].values
        )
        simulation["prior_mean"] = (("feature",), resolved["mean"])
        simulation["prior_scale"] = (("feature", "feature2"), resolved["scale"])
        simulation.attrs.update(prior_kappa=resolved["kappa"], prior_dof=resolved["dof"])
    return simulation


def _frozen_hyperparameters(estimator) -> dict:
    """The hyperparameters the fit derives from the data, at their values in this fit
    (:meth:`~bayesgen.estimators.classifier.GenerativeClassifier.fitted_hyperparameters`)."""
    return estimator.fitted_hyperparameters()


# -- which parameters, and their ranks ---------------------------------------------------


def _ranked_cells(model_family, fitted, rng, max_cells):
    """[(variable, flat indices, labels)]: a random subset of each variable's parameters
    that vary under the prior, excluding variables derived from others in every draw."""
    draws = model_family.conjugate_draws(
        fitted, np.random.default_rng(0), (2,), np.float64, posterior=False
    )
    derived = set()
    sample = xr.Dataset({name: (("draw", *dims), values) for name, (dims, values) in draws.items()})
    for identity in model_family.draw_identities(sample.expand_dims(chain=1)):
        derived.update(identity.statements)
    cells = []
    for name, (dims, values) in draws.items():
        if name in derived:
            continue
        varies = values[0] != values[1]
        square = [d for d in dims if d.split("::")[-1] in ("feature", "feature2")]
        if len(square) == 2:  # a symmetric matrix (a block's own, in a mixed model): one triangle
            row, col = dims.index(square[0]), dims.index(square[1])
            index = np.indices(varies.shape)
            varies &= index[row] <= index[col]
        candidates = np.flatnonzero(varies)
        chosen = np.sort(
            rng.choice(candidates, size=min(max_cells, candidates.size), replace=False)
        )
        coords = [fitted[dim].values for dim in dims]
        labels = (
            [
                f"{name}[{', '.join(str(c[i]) for c, i in zip(coords, multi, strict=True))}]"
                for multi in zip(*np.unravel_index(chosen, varies.shape), strict=True)
            ]
            if dims
            else [name] * len(chosen)
        )
        cells.append((name, chosen, labels))
    return cells


def _ranks(posterior: xr.Dataset, truth: dict, cells, n_draws: int, rng) -> np.ndarray:
    """Rank of θ* among ``n_draws`` posterior draws, spread evenly over the chains; ties
    (float32 draws) are broken at random, so the ranks stay uniform."""
    out = []
    for name, index, _ in cells:
        values = posterior[name].values
        flat = values.reshape(-1, int(np.prod(values.shape[2:], dtype=np.int64)))
        keep = np.linspace(0, flat.shape[0] - 1, n_draws).round().astype(np.int64)
        draws = flat[keep][:, index]
        target = np.asarray(truth[name]).reshape(-1)[index].astype(draws.dtype)
        below = (draws < target).sum(axis=0)
        ties = (draws == target).sum(axis=0)
        out.append(below + rng.integers(0, ties + 1))
    return np.concatenate(out)


def _chi_square_p(ranks: np.ndarray, n_draws: int, n_bins: int) -> float:
    """Pearson's chi-square p-value of ranks 0 … n_draws against the discrete uniform."""
    n_values = n_draws + 1
    bins = ranks * n_bins // n_values
    observed = np.bincount(bins, minlength=n_bins)
    width = np.bincount(np.arange(n_values) * n_bins // n_values, minlength=n_bins)
    expected = len(ranks) * width / n_values
    return float(scipy_stats.chisquare(observed, expected).pvalue)


# -- the plot's band ---------------------------------------------------------------------


def _ecdf_at_boundaries(ranks: np.ndarray, n_steps: int) -> np.ndarray:
    """The share of ranks below j, for j = 0 … n_steps (n_steps = L + 1 rank values)."""
    counts = np.bincount(ranks, minlength=n_steps)
    return np.concatenate(([0.0], np.cumsum(counts))) / len(ranks)


def _band(n_simulations: int, n_steps: int, prob: float) -> float:
    """c such that uniform ranks keep |ECDF − z| ≤ c √(z (1 − z) / S) at every inner
    boundary with probability ``prob`` (simulated)."""
    rng = np.random.default_rng(_BAND_SEED)
    counts = rng.multinomial(n_simulations, np.full(n_steps, 1 / n_steps), _BAND_SIMULATIONS)
    z = np.arange(1, n_steps) / n_steps
    ecdf = np.cumsum(counts, axis=1)[:, :-1] / n_simulations
    deviation = np.abs(ecdf - z) / np.sqrt(z * (1 - z) / n_simulations)
    return float(np.quantile(deviation.max(axis=1), prob))


def _check_integer(name: str, value, low: int) -> int:
    if not is_integer(value):
        raise TypeError(f"{name}: expected an integer >= {low}; got {value!r}.")
    if value < low:
        raise ValueError(f"{name}: expected an integer >= {low}; got {value!r}.")
    return int(value)


__all__ = ["SBCResult", "sbc"]
