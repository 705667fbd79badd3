"""Unlabelled rows in a block's PyMC model: each row's likelihood the mixture over the classes,
its label marginalised, so that NUTS samples the semi-supervised posterior.

A row whose label is missing has the likelihood p(x_i | θ) = Σ_k π_k p(x_i | y = k, θ), whose
logarithm is

    log p(x_i | θ) = logsumexp_k (log π_k + log p(x_i | y = k, θ)),

and the semi-supervised posterior is p(θ | X, y_L) ∝ p(θ) Π_L p(x_i, y_i | θ) Π_U p(x_i | θ).
The block's own PyMC model (its ``pymc_model``) observes the labelled rows' sufficient
statistics; :func:`add_unlabelled_rows` adds the unlabelled rows' term to it as the potential
``unlabelled_loglik``, Σ_U w_i log p(x_i | θ), with each row's weight w_i.

Why a potential and not an observed variable: the rows' mixture has no PyMC distribution
(``pm.Mixture`` needs one component distribution per class over the whole row, which the
blocks' models do not declare), a ``pm.CustomDist`` would observe the rows densely (a text
model's rows are sparse) and could not be simulated either, and the fit's ``log_likelihood``
group is that of the labelled rows' p(x_i, y_i | θ), which ``az.loo`` reads; the unlabelled
rows' pointwise log-likelihood is not stored. Each row's class probabilities per draw, which
the estimator averages (``posterior_label_distributions_``), come from the block's NumPy
``draw_log_joint``, as for the Gibbs sampler.

What a block supplies: :func:`class_log_likelihood`, the symbolic log p(x_i | y = k, θ) of
given rows for every class from the variables of the block's model, up to its
``row_log_constant`` (the terms free of θ that its ``draw_log_joint`` leaves out). It is a
:func:`functools.singledispatch` function on the block's class: each block's form is a small
function of its own ``*_pymc`` module, registered here; a block without one (a block of one's
own that registers none) has no mixture form, and its unlabelled rows cannot be fitted by NUTS
(:func:`has_mixture_form`). Each form reads the model through :class:`RowTerms`: the model's
variables by name (the block's own names inside a mixed model) and the product of constant,
possibly sparse rows with a tensor.

Examples
--------
Two labelled rows and three unlabelled ones of a two-word multinomial model; the potential is
added to the labelled rows' model:

>>> import numpy as np
>>> from bayesgen.families import family
>>> model_family = family("multinomial_nb")
>>> labelled = model_family.fit(np.array([[5, 0], [0, 5]]), ["a", "b"], alpha=2.0)
>>> model = model_family.pymc_model(labelled)
>>> has_mixture_form(model_family)
True
>>> _ = add_unlabelled_rows(model, model_family, labelled, np.array([[4, 1], [3, 0], [0, 3]]))
>>> [potential.name for potential in model.potentials]
['unlabelled_loglik']
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import singledispatch

import numpy as np
import pymc as pm
import pytensor.sparse as ps
import pytensor.tensor as pt
import scipy.sparse as sp
import xarray as xr

from bayesgen.families.base import Family
from bayesgen.families.bernoulli import BernoulliFamily
from bayesgen.families.bernoulli_pymc import bernoulli_class_log_likelihood
from bayesgen.families.block_layout import scoped
from bayesgen.families.categorical import CategoricalFamily
from bayesgen.families.categorical_pymc import categorical_class_log_likelihood
from bayesgen.families.gaussian_nb import GaussianNaiveBayesFamily
from bayesgen.families.gaussian_nb_pymc import gaussian_nb_class_log_likelihood
from bayesgen.families.gda import GaussianFamily
from bayesgen.families.gda_pymc import gda_class_log_likelihood
from bayesgen.families.mixed import MixedFamily
from bayesgen.families.mixed_pymc import mixed_class_log_likelihood
from bayesgen.families.multinomial import MultinomialFamily
from bayesgen.families.multinomial_pymc import multinomial_class_log_likelihood
from bayesgen.families.poisson_nb import PoissonFamily
from bayesgen.families.poisson_nb_pymc import poisson_nb_class_log_likelihood
from bayesgen.families.qda import QuadraticFamily
from bayesgen.families.qda_pymc import qda_class_log_likelihood

__all__ = [
    "UNLABELLED_POTENTIAL",
    "RowTerms",
    "add_unlabelled_rows",
    "class_log_likelihood",
    "has_mixture_form",
]

#: The name of the potential of the unlabelled rows.
UNLABELLED_POTENTIAL = "unlabelled_loglik"


@dataclass(frozen=True)
class RowTerms:
    """What a block's per-class log-likelihood is built from: the variables of the PyMC model
    being extended, by the names the block's builder gave them, and products of constant rows
    with them.

    Parameters
    ----------
    model : pymc.Model
        The model (a mixed model's whole model for its blocks).
    block : str, optional
        The block whose variables are read, in a mixed model: ``variable("mu")`` is then
        the model's ``"{block}::mu"``.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> fit = family("multinomial_nb").fit(np.array([[2, 1], [0, 3]]), ["a", "b"])
    >>> terms = RowTerms(family("multinomial_nb").pymc_model(fit))
    >>> terms.variable("feature_prob").name
    'feature_prob'
    >>> terms.of_block("words").has("feature_prob")  # a mixed model's would be words::...
    False
    """

    model: pm.Model
    block: str | None = None

    def variable(self, name: str) -> pt.TensorVariable:
        """The model's variable ``name`` (of the block, in a mixed model).

        Raises
        ------
        KeyError
            Where the model has no such variable.
        """
        return self.model[name if self.block is None else scoped(self.block, name)]

    def has(self, name: str) -> bool:
        """Whether the model has the variable ``name`` (of the block, in a mixed model)."""
        return (name if self.block is None else scoped(self.block, name)) in self.model

    def of_block(self, block: str) -> RowTerms:
        """The terms of one block of a mixed model."""
        return RowTerms(self.model, block)

    @staticmethod
    def rows_times(rows, matrix) -> pt.TensorVariable:
        """``rows @ matrix`` for constant rows (n_rows, n_features), dense or sparse, and a
        tensor of shape (n_features, m): a sparse product, at the cost of the rows' nonzero
        entries (a text model's rows are mostly zeros), whose gradient reaches ``matrix``."""
        csr = sp.csr_matrix(rows, dtype=np.float64)  # PyTensor takes scipy's matrices
        return ps.structured_dot(ps.as_sparse_variable(csr), matrix)


#: A block's form: ``(model_family, estimates, rows, terms)`` → log p(x_i | y = k, θ) up to
#: the block's ``row_log_constant``, shape (n_rows, n_classes).
ClassLogLikelihood = Callable[[Family, xr.Dataset, object, RowTerms], pt.TensorVariable]


@singledispatch
def class_log_likelihood(model_family: Family, estimates: xr.Dataset, rows, terms: RowTerms):
    """log p(x_i | y = k, θ) of ``rows`` for every class, from the variables of the block's
    PyMC model (``model_family.pymc_model(estimates, ...)``), up to the block's
    ``row_log_constant``: a tensor of shape (n_rows, n_classes); None (this default) where the
    block has no such form.

    Parameters
    ----------
    model_family : Family
        The block: the form is its class's (dispatched on it; register a block of one's own
        with ``class_log_likelihood.register(MyFamily, function)``).
    estimates : xarray.Dataset
        The closed form the model was built from.
    rows : numpy.ndarray or scipy.sparse.csr_array
        The rows as the block checks them (``training_features``).
    terms : RowTerms
        The model's variables.

    Examples
    --------
    >>> import numpy as np
    >>> from bayesgen.families import family
    >>> model_family = family("bernoulli_nb")
    >>> fit = model_family.fit(np.array([[1, 0], [0, 1]]), ["a", "b"])
    >>> per_class = class_log_likelihood(
    ...     model_family, fit, np.array([[1, 1]]), RowTerms(model_family.pymc_model(fit)))
    >>> per_class.ndim
    2
    """
    return None


def has_mixture_form(model_family: Family) -> bool:
    """Whether :func:`class_log_likelihood` has a form for the block's class (so that its
    unlabelled rows can be fitted by NUTS).

    Examples
    --------
    >>> from bayesgen.families import family
    >>> has_mixture_form(family("gda")), has_mixture_form(object())
    (True, False)
    """
    default = class_log_likelihood.dispatch(object)
    return class_log_likelihood.dispatch(type(model_family)) is not default


def add_unlabelled_rows(
    model: pm.Model,
    model_family: Family,
    estimates: xr.Dataset,
    rows,
    *,
    weights: np.ndarray | None = None,
) -> pt.TensorVariable | None:
    """Add the unlabelled rows' likelihood to ``model`` (in place), their labels marginalised:
    the potential ``unlabelled_loglik`` = Σ_i w_i log Σ_k π_k p(x_i | y = k, θ).

    Parameters
    ----------
    model : pymc.Model
        The block's model (``model_family.pymc_model(estimates, ...)``), whose ``class_prob``
        is π.
    model_family : Family
    estimates : xarray.Dataset
        The closed form the model was built from (its classes, features and categories).
    rows : numpy.ndarray or scipy.sparse.csr_array
        The unlabelled rows as the block checks them (``training_features``).
    weights : numpy.ndarray, optional
        w_i ≥ 0 per row (default 1): whole numbers count a row as w_i rows, each with its own
        latent label; λ_u w_i tempers the rows (EM-λ's objective). Rows of weight 0 are left
        out; where no row has a positive weight, nothing is added.

    Returns
    -------
    pytensor.tensor.TensorVariable or None
        log p(x_i | θ) of every row of positive weight, in full (with the block's
        ``row_log_constant``), shape (n_rows,); None where nothing was added.

    Raises
    ------
    ValueError
        Naming ``inference``, where the block has no mixture form (:func:`has_mixture_form`).
    """
    weights = np.ones(rows.shape[0]) if weights is None else np.asarray(weights, np.float64)
    keep = np.flatnonzero(weights > 0)
    if keep.size == 0:  # λ_u = 0: the labelled rows' posterior
        return None
    if keep.size < rows.shape[0]:
        rows, weights = rows[keep], weights[keep]
    with model:
        per_class = class_log_likelihood(model_family, estimates, rows, RowTerms(model))
        if per_class is None:
            raise ValueError(
                f"inference: the {model_family.name!r} model has no mixture form for its PyMC "
                "model (the per-class log-likelihood of a row from its variables), so "
                "inference='nuts' cannot marginalise the labels of unlabelled rows; use "
                "inference='conjugate' (EM, then the full posterior by Gibbs sampling)."
            )
        constant = model_family.row_log_constant(rows)
        log_class = pt.log(model["class_prob"])
        marginal = pt.logsumexp(per_class + log_class[None, :], axis=1) + constant
        pm.Potential(UNLABELLED_POTENTIAL, pt.sum(weights * marginal))
    return marginal


# -- the blocks' forms, each from its own *_pymc module ----------------------------------------


@class_log_likelihood.register
def _multinomial(model_family: MultinomialFamily, estimates, rows, terms):
    return multinomial_class_log_likelihood(estimates, rows, terms)


@class_log_likelihood.register
def _bernoulli(model_family: BernoulliFamily, estimates, rows, terms):
    return bernoulli_class_log_likelihood(estimates, rows, terms)


@class_log_likelihood.register
def _categorical(model_family: CategoricalFamily, estimates, rows, terms):
    return categorical_class_log_likelihood(estimates, rows, terms)


@class_log_likelihood.register
def _gaussian_nb(model_family: GaussianNaiveBayesFamily, estimates, rows, terms):
    return gaussian_nb_class_log_likelihood(estimates, rows, terms)


@class_log_likelihood.register
def _poisson_nb(model_family: PoissonFamily, estimates, rows, terms):
    return poisson_nb_class_log_likelihood(estimates, rows, terms)


@class_log_likelihood.register
def _gda(model_family: GaussianFamily, estimates, rows, terms):
    return gda_class_log_likelihood(estimates, rows, terms)


@class_log_likelihood.register
def _qda(model_family: QuadraticFamily, estimates, rows, terms):
    return qda_class_log_likelihood(estimates, rows, terms)


@class_log_likelihood.register
def _mixed(model_family: MixedFamily, estimates, rows, terms):
    # Each block's form on its own columns and variables, summed.
    return mixed_class_log_likelihood(model_family, estimates, rows, terms, class_log_likelihood)
