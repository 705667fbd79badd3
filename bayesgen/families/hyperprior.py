"""Full-Bayes smoothing: a Gamma(shape, rate) hyperprior on the naive Bayes λ (``alpha_prior``).

With ``alpha_prior=(shape, rate)`` the concentration λ of the feature probabilities θ is a
random variable, λ ~ Gamma(shape, rate) (``rate`` an inverse scale: E[λ] = shape / rate a
priori), and θ | λ ~ Dirichlet(λ) (Beta(λ, λ) for Bernoulli features) as before. θ integrates
out exactly, so λ has the one-dimensional *collapsed* posterior

    p(λ | D) ∝ p(X | y, λ) · Gamma(λ; shape, rate),

p(X | y, λ) being the family's feature evidence
(:meth:`bayesgen.families.naive_bayes.NaiveBayesFamily.feature_evidence`; the class term does
not involve λ). :func:`bayesgen.maths.alpha_posterior.alpha_posterior` puts that density on a
fine grid in u = log λ:

* the mode u* solves d/du log p(u | D) = 0 (Brent's method on the evidence's digamma
  derivative), and the curvature there gives the posterior's scale s in u;
* the grid runs from u* outwards, in steps of s, until the log density is 50 below its maximum
  *and* the tail beyond the edge, bounded by p(edge) over the absolute slope of log p in u there
  (a bound for a log-concave tail), carries less than 1e-12 of the mass; then equally spaced
  points cover that range, at least :data:`~bayesgen.maths.alpha_posterior.GRID_POINTS` and at
  most s / 50 apart;
* expectations E[f(λ) | D] (λ's mean and SD, θ's posterior moments as mixtures over λ) are
  trapezoid sums on that grid, exponentially accurate for a smooth density decaying at both ends
  (tests: agreement with ``scipy.integrate.quad`` to 1e-6 relative and better);
* the same sum, before it is normalised, is the evidence with λ integrated out, p(X | y) = ∫ p(X
  | y, λ) Gamma(λ; shape, rate) dλ (:attr:`AlphaPosterior.log_evidence`,
  :func:`feature_log_evidence`; tests: ``quad`` to 1e-9 in the log);
* draws: the log density is interpolated by a cubic spline through the grid onto a grid
  :data:`~bayesgen.maths.alpha_posterior.REFINE` times finer, and each draw picks a fine cell by
  its mass and inverts the CDF of the cell's exponential (log-linear) density exactly. The draws
  therefore follow that interpolant, whose density differs from p(λ | D) by far less than 1e-6
  relative (spline and log-linear errors at cells of 1/800 of the posterior's width): a
  difference no Monte Carlo check of feasible size can see. Then θ | λ, D ~ Dirichlet(n + λ) for
  each draw's own λ.

The estimators' ``alpha`` must stay at its default when ``alpha_prior`` is given (λ is then
learned, not set); the closed-form Dataset records the hyperprior (attrs ``alpha_prior_shape``,
``alpha_prior_rate``), λ's posterior mean as the representative ``alpha`` for what needs one
number (the plug-in probabilities of ``bayesgen.closed_form``, the sweeps and plots; the exact
posterior predictive integrates λ out over p(λ | D) instead, and leave-one-out over p(λ | D
without row i), by the same quadrature), its posterior SD (``alpha_sd``), the variable ``alpha``
(its posterior mean, the closed-form estimate of the posterior variable ``alpha``), and
``feature_prob`` = E_λ[add-λ | D], θ's posterior mean."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import xarray as xr

from bayesgen.families.class_prior import class_concentration, loo_class_log_prob
from bayesgen.families.expected import Expected, class_expected, reason_array
from bayesgen.input.alpha import ALPHA_PRIOR_EXPECTED as ALPHA_PRIOR_EXPECTED
from bayesgen.input.alpha import check_alpha_prior
from bayesgen.maths.alpha_posterior import AlphaPosterior, alpha_posterior
from bayesgen.maths.dirichlet import dirichlet_draws, mode_of

if TYPE_CHECKING:
    from bayesgen.families.naive_bayes import NaiveBayesFamily


def has_alpha_prior(estimates: xr.Dataset) -> bool:
    """Whether a closed-form Dataset was fitted with a hyperprior on λ."""
    return "alpha_prior_shape" in estimates.attrs


def fitted_alpha_prior(estimates: xr.Dataset) -> tuple[float, float] | None:
    """The (shape, rate) a closed-form Dataset was fitted with, or None."""
    if not has_alpha_prior(estimates):
        return None
    attrs = estimates.attrs
    return float(attrs["alpha_prior_shape"]), float(attrs["alpha_prior_rate"])


def posterior_of(
    model_family: NaiveBayesFamily, estimates: xr.Dataset, alpha_prior
) -> AlphaPosterior:
    """p(λ | D) for the counts of a naive Bayes fit under the hyperprior ``alpha_prior``."""
    shape, rate = check_alpha_prior(alpha_prior)
    return alpha_posterior(model_family.feature_evidence(estimates), shape, rate)


def feature_log_evidence(model_family: NaiveBayesFamily, estimates: xr.Dataset) -> float:
    """log p(X | y): the evidence of a naive Bayes fit's feature counts with θ integrated out
    and λ too, over the fit's hyperprior λ ~ Gamma(shape, rate).

    ``log ∫ p(X | y, λ) Gamma(λ; shape, rate) dλ``, by the quadrature of p(λ | D)
    (:attr:`AlphaPosterior.log_evidence`): to about 1e-12 in the log, the grid's tails
    holding less than 1e-12 of the mass. It is not the evidence at λ's posterior mean
    ``estimates.attrs["alpha"]``, which is larger whenever p(λ | D) has any spread.

    Parameters
    ----------
    estimates : xarray.Dataset
        A fit with a hyperprior on λ (:func:`with_alpha_prior`).

    Returns
    -------
    float
        In nats, the tokens of each document in order (as
        :func:`bayesgen.closed_form.log_evidence`).

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.families.hyperprior import feature_log_evidence, with_alpha_prior
    >>> X = [[3, 0, 1], [4, 1, 0], [0, 3, 2], [1, 4, 3]]
    >>> model = family("multinomial_nb")
    >>> fit = closed_form.multinomial_nb(X, ["a", "a", "b", "b"])
    >>> est = with_alpha_prior(model, fit, (2.0, 1.0))
    >>> round(feature_log_evidence(model, est), 3)
    -22.335
    >>> at_the_mean = family(est).feature_log_evidence(est, est.attrs["alpha"])
    >>> bool(at_the_mean > feature_log_evidence(model, est))
    True
    """
    prior = fitted_alpha_prior(estimates)
    if prior is None:
        raise ValueError(
            "feature_log_evidence: expected estimates fitted with a hyperprior on λ "
            "(alpha_prior=(shape, rate)); these have a fixed alpha "
            f"{estimates.attrs.get('alpha')!r}."
        )
    return posterior_of(model_family, estimates, prior).log_evidence


def fitted_alpha(
    model_family: NaiveBayesFamily, estimates: xr.Dataset
) -> float | np.ndarray | AlphaPosterior:
    """What a fit's closed forms use for λ: the fixed ``alpha`` (a number, or an array of one
    λ per class), or p(λ | D) under its hyperprior.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.families.hyperprior import fitted_alpha, with_alpha_prior
    >>> est = closed_form.multinomial_nb([[3, 0], [4, 1], [0, 3], [1, 4]], [0, 0, 1, 1], alpha=0.5)
    >>> model = family("multinomial_nb")
    >>> fitted_alpha(model, est)
    0.5
    >>> type(fitted_alpha(model, with_alpha_prior(model, est, (2.0, 1.0)))).__name__
    'AlphaPosterior'
    """
    prior = fitted_alpha_prior(estimates)
    if prior is not None:
        return posterior_of(model_family, estimates, prior)
    alpha = estimates.attrs["alpha"]  # a number, or one λ per class
    return float(alpha) if np.ndim(alpha) == 0 else np.asarray(alpha, dtype=np.float64)


# -- the closed forms ---------------------------------------------------------------------------


def with_alpha_prior(
    model_family: NaiveBayesFamily, estimates: xr.Dataset, alpha_prior
) -> xr.Dataset:
    """A naive Bayes fit (any λ) redone under the hyperprior ``alpha_prior`` on λ.

    Returns a new Dataset: ``feature_prob`` becomes θ's posterior mean E_λ[add-λ | D], the
    variable ``alpha`` holds E[λ | D], and attrs ``alpha`` (E[λ | D], the representative λ of
    what needs one number), ``alpha_sd``, ``alpha_prior_shape`` and ``alpha_prior_rate``.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.families.hyperprior import with_alpha_prior
    >>> X = [[3, 0, 1], [4, 1, 0], [0, 3, 2], [1, 4, 3]]
    >>> est = closed_form.multinomial_nb(X, ["a", "a", "b", "b"])
    >>> under_prior = with_alpha_prior(family("multinomial_nb"), est, (2.0, 1.0))
    >>> round(under_prior.attrs["alpha"], 3), under_prior.attrs["alpha_prior_shape"]
    (1.976, 2.0)
    >>> under_prior["feature_prob"].sel({"class": "a"}).values.round(3).tolist()
    [0.614, 0.193, 0.193]
    """
    shape, rate = check_alpha_prior(alpha_prior)
    posterior = posterior_of(model_family, estimates, (shape, rate))
    moments = feature_mixture(model_family, estimates, posterior)
    out = estimates.copy()
    out["feature_prob"] = (estimates["feature_prob"].dims, moments["mean"])
    out["alpha"] = ((), posterior.mean)
    out.attrs.update(
        alpha=posterior.mean,
        alpha_sd=posterior.sd,
        alpha_prior_shape=shape,
        alpha_prior_rate=rate,
    )
    return out


def _concentration_parts(
    model_family: NaiveBayesFamily, estimates: xr.Dataset
) -> tuple[tuple, np.ndarray, np.ndarray, bool]:
    """(dims, c0, c1, beta): the posterior concentration of ``feature_prob`` at λ is
    c0 + λ c1 (c1 is 1 on the real outcomes, 0 on the categorical model's padding)."""
    dims, c0, beta = model_family.concentrations(estimates.assign_attrs(alpha=0.0), posterior=True)
    _, c1, _ = model_family.concentrations(estimates.assign_attrs(alpha=1.0), posterior=False)
    return dims, c0, c1, beta


def feature_mixture(
    model_family: NaiveBayesFamily, estimates: xr.Dataset, posterior: AlphaPosterior
) -> dict[str, np.ndarray]:
    """θ's posterior mean, SD and kurtosis, mixtures over p(λ | D) of its Beta marginals.

    θ | λ, D has Beta(a, b) marginals (a = n + λ); with m, c2, c3, c4 their mean and
    central moments, E[θ] = Σ_g w_g m_g, and about that mean d_g = m_g − E[θ]:
    Var = Σ w (c2 + d²), E[(θ − E θ)⁴] = Σ w (c4 + 4 c3 d + 6 c2 d² + d⁴). Padding cells
    are NaN.
    """
    _, c0, c1, beta = _concentration_parts(model_family, estimates)
    lambdas, weights = posterior.nodes()

    def beta_parts(lam):
        concentration = c0 + lam * c1
        if beta:
            return concentration[..., 0], concentration[..., 1]
        a = concentration
        return a, concentration.sum(axis=-1, keepdims=True) - a

    shape = c0.shape[:-1] if beta else c0.shape
    mean = np.zeros(shape)
    with np.errstate(invalid="ignore", divide="ignore"):
        for lam, w in zip(lambdas, weights, strict=True):
            a, b = beta_parts(lam)
            mean += w * a / (a + b)
        second, fourth = np.zeros(shape), np.zeros(shape)
        for lam, w in zip(lambdas, weights, strict=True):
            a, b = beta_parts(lam)
            total = a + b
            m = a / total
            c2 = a * b / (total**2 * (total + 1.0))
            c3 = 2.0 * (b - a) * a * b / (total**3 * (total + 1.0) * (total + 2.0))
            excess = (
                6.0
                * ((a - b) ** 2 * (total + 1.0) - a * b * (total + 2.0))
                / (a * b * (total + 2.0) * (total + 3.0))
            )
            c4 = (3.0 + excess) * c2**2
            d = m - mean
            second += w * (c2 + d**2)
            fourth += w * (c4 + 4.0 * c3 * d + 6.0 * c2 * d**2 + d**4)
        real = (c1[..., 0] if beta else c1) > 0
        return {
            "mean": np.where(real, mean, 0.0),
            "sd": np.where(real, np.sqrt(second), np.nan),
            "kurtosis": np.where(real, fourth / second**2, np.nan),
        }


# -- exact draws -------------------------------------------------------------------------------


def conjugate_draws(
    model_family: NaiveBayesFamily, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior
) -> dict:
    """Exact draws of π, θ and λ: λ from p(λ | D) (or its Gamma prior), then for each draw
    θ | λ, D ~ Dirichlet(n + λ) (Beta for Bernoulli features) with that draw's own λ."""
    shape, rate = fitted_alpha_prior(estimates)
    concentration = class_concentration(estimates, posterior=posterior)
    variables = {
        "class_prob": (("class",), dirichlet_draws(rng, concentration, sample_shape, dtype))
    }
    if posterior:
        lambdas = posterior_of(model_family, estimates, (shape, rate)).sample(rng, sample_shape)
    else:
        lambdas = rng.gamma(shape, 1.0 / rate, size=sample_shape)
    dims, c0, c1, beta = _concentration_parts(model_family, estimates)
    if not posterior:
        c0 = np.zeros_like(c0)
    inactive = c1 <= 0
    theta = np.empty((*sample_shape, *c0.shape), dtype=dtype)
    # One draw at a time, each with its own concentration: no (draws × cells) temporary.
    for index in np.ndindex(*sample_shape):
        concentration = np.where(inactive, 0.0, c0 + lambdas[index] * c1)
        theta[index] = dirichlet_draws(rng, concentration, (), np.float64, tiny_shapes=True)
    variables["feature_prob"] = (dims, theta[..., 0] if beta else theta)
    variables["alpha"] = ((), lambdas.astype(dtype))
    return variables


def conjugate_mode(model_family: NaiveBayesFamily, estimates: xr.Dataset) -> dict:
    """The MAP point with a hyperprior: λ at the mode of its collapsed posterior p(λ | D), and
    π, θ at their modes given that λ. The joint mode of (λ, θ) has no closed form; this is the
    conditional mode at λ's marginal mode."""
    lam = posterior_of(model_family, estimates, fitted_alpha_prior(estimates)).mode
    variables = {
        "class_prob": (("class",), mode_of(class_concentration(estimates, posterior=True)))
    }
    dims, c0, c1, beta = _concentration_parts(model_family, estimates)
    mode = mode_of(c0 + lam * c1)
    variables["feature_prob"] = (dims, mode[..., 0] if beta else mode)
    variables["alpha"] = ((), np.float64(lam))
    return variables


# -- prediction ---------------------------------------------------------------------------------


def predictive_log_joint(model_family: NaiveBayesFamily, estimates: xr.Dataset, X) -> np.ndarray:
    """log p(x, y = k | D) with θ and λ integrated out: log Σ_g w_g p(x, y = k | D, λ_g),
    the family's exact predictive at each λ_g of a thinned quadrature grid of p(λ | D).

    Parameters
    ----------
    model_family : NaiveBayesFamily
    estimates : xarray.Dataset
        A fit with a hyperprior on λ (:func:`with_alpha_prior`).
    X : array-like of shape (n_samples, n_features)
        Checked rows (:func:`bayesgen.closed_form.prediction_features`).

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_classes)

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.families.hyperprior import predictive_log_joint, with_alpha_prior
    >>> X = np.array([[3, 0, 1], [4, 1, 0], [0, 3, 2], [1, 4, 3]])
    >>> fit = closed_form.multinomial_nb(X, [0, 0, 1, 1])
    >>> est = with_alpha_prior(family("multinomial_nb"), fit, (2.0, 1.0))
    >>> joint = predictive_log_joint(family(est), est, X[:1])
    >>> (np.exp(joint) / np.exp(joint).sum()).round(3).tolist()  # p(y | x, D)
    [[0.946, 0.054]]
    """
    from scipy.special import logsumexp

    posterior = posterior_of(model_family, estimates, fitted_alpha_prior(estimates))
    lambdas, weights = posterior.nodes()
    joints = [
        model_family.integrated_log_joint(estimates.assign_attrs(alpha=float(lam)), X)
        for lam in lambdas
    ]
    return logsumexp(np.stack(joints) + np.log(weights)[:, None, None], axis=0)


def loo_log_joint(
    model_family: NaiveBayesFamily, estimates: xr.Dataset, X, y_codes: np.ndarray
) -> np.ndarray:
    """log p(x_i, y = k | D without row i) with θ and λ integrated out, for every row.

    Leaving row i out moves λ's posterior too, by the chain rule
    p(D | λ) = p(D_{-i} | λ) p(x_i, y_i | D_{-i}, λ):

        p(λ | D_{-i}) ∝ p(λ | D) / p(x_i, y_i | D_{-i}, λ),

    a one-dimensional reweighting. On the nodes λ_g of p(λ | D) (weights w_g, see
    :meth:`AlphaPosterior.nodes`), with L_g[i, k] = log p(x_i, y = k | D_{-i}, λ_g) the
    family's exact leave-one-out at a fixed λ,

        log p(x_i, y = k | D_{-i}) = logsumexp_g (log w_g − L_g[i, y_i] + L_g[i, k])
                                     − logsumexp_g (log w_g − L_g[i, y_i]).

    No draws and no Pareto k: only the quadrature in λ, as in :func:`predictive_log_joint`
    (tests: refits without each row, whose exact predictive integrates λ over p(λ | D_{-i})).

    Parameters
    ----------
    model_family : NaiveBayesFamily
    estimates : xarray.Dataset
        A fit with a hyperprior on λ (:func:`with_alpha_prior`).
    X : array-like of shape (n_samples, n_features)
        The training rows, checked.
    y_codes : numpy.ndarray of shape (n_samples,)
        Their class codes.

    Returns
    -------
    numpy.ndarray of shape (n_samples, n_classes)

    Examples
    --------
    Row 0 left out, predicted from the other three:

    >>> import numpy as np
    >>> from bayesgen import closed_form
    >>> from bayesgen.families import family
    >>> from bayesgen.families.hyperprior import loo_log_joint, with_alpha_prior
    >>> X = np.array([[3, 0, 1], [4, 1, 0], [0, 3, 2], [1, 4, 3]])
    >>> y = np.array([0, 0, 1, 1])
    >>> fit = closed_form.multinomial_nb(X, y)
    >>> est = with_alpha_prior(family("multinomial_nb"), fit, (2.0, 1.0))
    >>> joint = loo_log_joint(family(est), est, X, y)
    >>> (np.exp(joint[0]) / np.exp(joint[0]).sum()).round(3).tolist()
    [0.883, 0.117]
    """
    from scipy.special import logsumexp

    posterior = posterior_of(model_family, estimates, fitted_alpha_prior(estimates))
    lambdas, weights = posterior.nodes()
    rows = np.arange(y_codes.size)
    class_term = loo_class_log_prob(estimates, y_codes)  # does not depend on λ
    joints = np.stack(
        [
            class_term
            + model_family.loo_feature_log_likelihood(
                estimates.assign_attrs(alpha=float(lam)), X, y_codes
            )
            for lam in lambdas
        ]
    )  # (node, row, class)
    # p(λ_g | D_{-i}) on the nodes, normalised over them for each row
    log_weights = np.log(weights)[:, None] - joints[:, rows, y_codes]
    log_weights -= logsumexp(log_weights, axis=0, keepdims=True)
    return logsumexp(joints + log_weights[:, :, None], axis=0)


# -- the PyMC model -------------------------------------------------------------------------------


# -- the comparison (bayesgen.checks.comparison) ---------------------------------------------------

NO_JOINT_MODE = (
    "MAP not compared: with a Gamma hyperprior on λ the joint mode of (λ, θ) has no closed form"
)


def expected_blocks(
    model_family: NaiveBayesFamily,
    estimates: xr.Dataset,
    posterior: AlphaPosterior,
    class_alpha: float,
) -> list:
    """The :class:`~bayesgen.families.expected.Expected` blocks of a naive Bayes posterior under
    a hyperprior: π as without one, θ's mean, SD and kurtosis as mixtures over p(λ | D)
    (:func:`feature_mixture`), and λ's own mean and SD by the same quadrature."""
    moments = feature_mixture(model_family, estimates, posterior)
    keep = np.isfinite(moments["sd"])
    *_, beta = _concentration_parts(model_family, estimates)
    kind = "Beta(λ, λ)" if beta else "Dirichlet(λ)"
    shape = keep.shape
    feature = Expected(
        variable="feature_prob",
        keep=keep,
        closed_form=np.where(keep, moments["mean"], np.nan),
        closed_form_sd=moments["sd"],
        closed_form_kurtosis=moments["kurtosis"],
        mle=estimates["feature_prob_mle"].values.astype(np.float64),
        expected_map=np.full(shape, np.nan),
        reasons=(reason_array(shape), reason_array(shape), reason_array(shape, NO_JOINT_MODE)),
        hide_map=np.zeros(shape, dtype=bool),
        prior=f"{kind}, {posterior.prior}",
        mean_identity=f"posterior mean under {kind}, λ ~ Gamma = E_λ[add-λ | D] (quadrature)",
        sd_identity="posterior SD = SD of the Beta marginals mixed over p(λ | D) (quadrature)",
        map_identity=None,
    )
    scalar = ()
    alpha = Expected(
        variable="alpha",
        keep=np.ones(scalar, dtype=bool),
        closed_form=np.asarray(posterior.mean),
        closed_form_sd=np.asarray(posterior.sd),
        closed_form_kurtosis=np.asarray(posterior.kurtosis),
        mle=np.asarray(np.nan),
        expected_map=np.asarray(np.nan),
        reasons=(reason_array(scalar), reason_array(scalar), reason_array(scalar, NO_JOINT_MODE)),
        hide_map=np.zeros(scalar, dtype=bool),
        prior=posterior.prior,
        mean_identity="posterior mean of λ = ∫ λ p(λ | D) dλ (quadrature)",
        sd_identity="posterior SD of λ (quadrature)",
        map_identity=None,
    )
    return [class_expected(estimates, class_alpha), feature, alpha]
