"""The class block every model shares: π ~ Dirichlet(a), y_i | π ~ Categorical(π).

Every model is this class prior times conditionally independent feature blocks, so what the
labels contribute is the same everywhere and lives here once, in :class:`ClassPrior`: the
estimates of π, its exact posterior (draws, mode, marginals), the comparison's block and joint
statistic, the evidence of the labels and π's leave-one-out term. A block calls
:data:`CLASS_PRIOR`'s methods for the ``class_prob`` part of its own and adds its features'.

The module-level functions (:func:`class_concentration`, :func:`class_marginal`,
:func:`class_statistic`, :func:`class_log_evidence`, :func:`loo_class_log_prob`) are the same
methods under the names the blocks have long called them by.

The concentration is ``estimates.attrs["class_alpha"]`` (a) and the counts are
``estimates["class_count"]`` (N_k, weighted): the posterior is Dirichlet(N_k + a).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from bayesgen.families.expected import Expected, class_expected
from bayesgen.families.results import Marginal, Variable, dirichlet_marginal
from bayesgen.maths.dirichlet import add_lambda, dirichlet_draws, log_prob_terms, mode_of
from bayesgen.maths.evidence import DirichletEvidence
from bayesgen.maths.joint_statistics import JointStatistic, fixed_statistic

#: The posterior variable of the class block and its dims.
CLASS_VARIABLE = "class_prob"
CLASS_DIMS = ("class",)


class ClassPrior:
    """π ~ Dirichlet(a) over the classes, given the class counts N_k of a fit.

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.families.class_prior import CLASS_PRIOR
    >>> est = closed_form.multinomial_nb([[1, 0], [0, 1], [1, 1]], [0, 1, 1], class_alpha=0.5)
    >>> CLASS_PRIOR.concentration(est, posterior=True).tolist()
    [1.5, 2.5]
    >>> CLASS_PRIOR.marginal(est).mean.tolist()
    [0.375, 0.625]
    """

    # -- closed forms ---------------------------------------------------------------------

    def estimates(self, class_count: np.ndarray, class_alpha: float) -> dict[str, Variable]:
        """``class_prob`` = (N_k + a) / (N + K a), the posterior mean, and ``class_prob_mle`` =
        N_k / N, for a block's ``from_statistics``."""
        n_classes, n_samples = class_count.size, class_count.sum()
        return {
            "class_prob": (CLASS_DIMS, add_lambda(class_count, n_samples, class_alpha, n_classes)),
            "class_prob_mle": (CLASS_DIMS, class_count / n_samples),
        }

    def log_terms(self, estimates: xr.Dataset) -> tuple[np.ndarray, np.ndarray]:
        """(order, finite part) of log π_k at the estimates (see
        :func:`bayesgen.maths.dirichlet.log_prob_terms`): a = 0 leaves a class without rows a
        zero probability, which the order keeps."""
        return log_prob_terms(
            estimates["class_count"].values,
            estimates.attrs["n_samples"],
            estimates.attrs["class_alpha"],
            estimates.sizes["class"],
        )

    # -- the exact posterior --------------------------------------------------------------

    def concentration(self, estimates: xr.Dataset, *, posterior: bool) -> np.ndarray:
        """Dirichlet concentration of π: a (+ the class counts for the posterior)."""
        weight = 1.0 if posterior else 0.0
        return estimates.attrs["class_alpha"] + weight * estimates["class_count"].values

    def draws(
        self, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior: bool
    ) -> Variable:
        """Exact draws of π, shape ``sample_shape + (K,)``; a block draws them before its own
        parameters, so that the seeded draws of each stay where they were."""
        concentration = self.concentration(estimates, posterior=posterior)
        return CLASS_DIMS, dirichlet_draws(rng, concentration, sample_shape, dtype)

    def mode(self, estimates: xr.Dataset) -> Variable:
        """π's posterior mode (N_k + a − 1) / (N + K (a − 1)); NaN where none exists."""
        return CLASS_DIMS, mode_of(self.concentration(estimates, posterior=True))

    def marginal(self, estimates: xr.Dataset) -> Marginal:
        """π's exact marginals: Beta(N_k + a, N + K a − N_k − a) for every class."""
        return dirichlet_marginal(CLASS_DIMS, self.concentration(estimates, posterior=True))

    # -- the comparison -------------------------------------------------------------------

    def expected(self, estimates: xr.Dataset, class_alpha: float) -> Expected:
        """What π's posterior summaries must equal under a = ``class_alpha`` (see
        :func:`bayesgen.families.expected.class_expected`)."""
        return class_expected(estimates, class_alpha)

    def statistic(
        self, estimates: xr.Dataset, posterior: xr.Dataset, class_alpha: float
    ) -> JointStatistic:
        """Σ log π of each draw under its exact Dirichlet(class_alpha + N_k) law."""
        concentration = class_alpha + estimates["class_count"].values.astype(np.float64)
        return fixed_statistic(
            "Σ log class_prob", CLASS_VARIABLE, posterior[CLASS_VARIABLE].values, concentration
        )

    # -- the evidence and leave-one-out ---------------------------------------------------

    def log_evidence(self, estimates: xr.Dataset, class_alpha) -> np.ndarray:
        """log p(y | a) of the training labels in their order, π integrated out:

            lnΓ(K a) − lnΓ(N + K a) + Σ_k [lnΓ(N_k + a) − lnΓ(a)]

        (no multinomial coefficient: adding log(N! / Π_k N_k!) gives that of the class
        counts). ``class_alpha`` may have any shape; so has the result.
        """
        counts = estimates["class_count"].values[None, :]
        return DirichletEvidence(counts, name="class_alpha")(class_alpha)

    def loo_log_prob(self, estimates: xr.Dataset, y_codes: np.ndarray) -> np.ndarray:
        """log E[π_k | D without row i] = log((N_k − [k = y_i] + a) / (N − 1 + K a)), shape
        (n_samples, n_classes): the class term of every model's exact leave-one-out joint.

        −inf where a class loses its only row under a = ``class_alpha`` = 0.
        """
        count = estimates["class_count"].values.astype(np.float64)
        class_alpha = estimates.attrs["class_alpha"]
        n_classes = count.size
        own = np.arange(n_classes)[None, :] == np.asarray(y_codes)[:, None]
        with np.errstate(divide="ignore"):
            return np.log(count[None, :] - own + class_alpha) - np.log(
                count.sum() - 1.0 + n_classes * class_alpha
            )


#: The class block of every model.
CLASS_PRIOR = ClassPrior()


def class_concentration(estimates: xr.Dataset, *, posterior: bool) -> np.ndarray:
    """Dirichlet concentration of π: class_alpha (+ the class counts for the posterior).

    Examples
    --------
    >>> from bayesgen import closed_form
    >>> from bayesgen.families.class_prior import class_concentration
    >>> est = closed_form.multinomial_nb([[1, 0], [0, 1], [1, 1]], [0, 1, 1], class_alpha=0.5)
    >>> class_concentration(est, posterior=False).tolist()
    [0.5, 0.5]
    >>> class_concentration(est, posterior=True).tolist()
    [1.5, 2.5]
    """
    return CLASS_PRIOR.concentration(estimates, posterior=posterior)


def class_marginal(estimates: xr.Dataset) -> Marginal:
    """π's exact marginals (:meth:`ClassPrior.marginal`)."""
    return CLASS_PRIOR.marginal(estimates)


def class_statistic(
    estimates: xr.Dataset, posterior: xr.Dataset, class_alpha: float
) -> JointStatistic:
    """Σ log π of each draw under its exact law (:meth:`ClassPrior.statistic`)."""
    return CLASS_PRIOR.statistic(estimates, posterior, class_alpha)


def class_log_evidence(estimates: xr.Dataset, class_alpha) -> np.ndarray:
    """log p(y | a) of the training labels in their order (:meth:`ClassPrior.log_evidence`).

    Parameters
    ----------
    estimates : xarray.Dataset
        A fit, for its ``class_count``.
    class_alpha : float or array-like
        a > 0, any shape.

    Returns
    -------
    numpy.ndarray of shape ``np.shape(class_alpha)``
    """
    return CLASS_PRIOR.log_evidence(estimates, class_alpha)


def loo_class_log_prob(estimates: xr.Dataset, y_codes: np.ndarray) -> np.ndarray:
    """π's leave-one-out term, shape (n_samples, n_classes) (:meth:`ClassPrior.loo_log_prob`)."""
    return CLASS_PRIOR.loo_log_prob(estimates, y_codes)


__all__ = [
    "CLASS_PRIOR",
    "ClassPrior",
    "class_concentration",
    "class_log_evidence",
    "class_marginal",
    "class_statistic",
    "loo_class_log_prob",
]
