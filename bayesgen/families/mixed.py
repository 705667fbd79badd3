"""The mixed model: the class prior times several blocks, each on its own columns.

p(x, y | π, θ) = π_y · Π_b p(x_b | y, θ_b): a table's numeric columns in a Gaussian block,
its categories in a categorical block, its flags in a Bernoulli block, its counts in a
Poisson block, a text column in a multinomial block, or numeric columns in a GDA/QDA block
with a full covariance. The blocks' priors are independent, so the posterior is π's
Dirichlet times every block's own posterior, and everything the model does is a sum or a
union over its blocks:

* statistics, estimates, draws, modes and marginals are the blocks' own, side by side under
  their block's name (:mod:`bayesgen.families.block_layout`: ``size::mu``), with the class
  prior's held once;
* every log joint (plug-in, exact predictive, per draw, leave-one-out) is the sum of the
  blocks' less the class term each of them also counts, B − 1 times;
* the evidence is the sum of the blocks' less B − 1 times that of the labels.

The rows a mixed model computes with are the columns of the table encoded as numbers
(:mod:`bayesgen.input.columns`: category codes, word counts), every block's side by side in
block order; :meth:`MixedFamily.prediction_features` encodes a table so. The columns, their
encodings and every block's model are stored in the Dataset's ``layout`` attribute (JSON).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
import xarray as xr

import bayesgen.families.block_layout as layout_names
from bayesgen.families.base import Family
from bayesgen.families.class_prior import CLASS_PRIOR
from bayesgen.families.presentation import Presentation, TopParameters
from bayesgen.families.results import DrawIdentity, Marginal, Variable
from bayesgen.input import columns as table_columns
from bayesgen.input.alpha import check_smoothing

if TYPE_CHECKING:
    import pymc as pm

    from bayesgen.families.expected import Expected


@dataclasses.dataclass(frozen=True)
class Block:
    """One block of a fitted mixed model: its name, model and own Dataset."""

    name: str
    model: Family
    estimates: xr.Dataset
    start: int
    stop: int

    def rows(self, X):
        """The block's columns of encoded rows X (dense unless the block is sparse)."""
        return _block_rows(X[:, self.start : self.stop], self.model)


class MixedFamily(Family):
    """The class prior times several blocks (see the module docstring).

    Parameters
    ----------
    families : mapping of str to Family
        The blocks a mixed model may hold, by their ``name`` (the registry hands them in).

    Examples
    --------
    The registry holds the one mixed model; without a plan it fits a table by the blocks
    ``blocks="auto"`` proposes:

    >>> import pandas as pd
    >>> from bayesgen.families import family
    >>> table = pd.DataFrame({"mass": [3.1, 3.4, 4.6, 4.9], "island": ["A", "A", "B", "B"]})
    >>> mixed = family("mixed_nb")
    >>> fit = mixed.fit(table, ["x", "x", "y", "y"])
    >>> [(block.name, block.model.name) for block in mixed.blocks(fit)]
    [('gaussian', 'gaussian_nb'), ('categorical', 'categorical_nb')]
    >>> fit["gaussian::mu"].dims
    ('class', 'gaussian::feature')
    """

    name = "mixed_nb"
    estimator = "NaiveBayes"
    cli_name = "mixed"
    feature_kind = "real"
    parameters: ClassVar[dict[str, tuple[str, ...]]] = {"class_prob": ("class",)}
    statistics: ClassVar[dict[str, tuple[str, ...]]] = {"class_count": ("class",)}
    #: Each block takes or refuses a missing entry by its own rule (its ``missing_values``).
    missing_values = True
    presentation = Presentation(
        plot_variables=("class_prob",),
        top_parameter_label="block parameter",
        top_parameter_caption="each block's own parameters are in its section",
        report_plots=(),
        linear_boundaries=False,
    )

    def __init__(self, families: Mapping[str, Family]) -> None:
        super().__init__()
        self._families = families

    # -- the blocks ------------------------------------------------------------------------

    def layout(self, estimates: xr.Dataset) -> table_columns.ColumnLayout:
        """The columns and encodings of a fit (its ``layout`` attribute)."""
        return table_columns.ColumnLayout.from_json(estimates.attrs["layout"])

    def input_columns(self, estimates: xr.Dataset) -> list[str]:
        """Every column of X at fit, in order (used by a block or not)."""
        return json.loads(estimates.attrs["input_columns"])

    def blocks(self, estimates: xr.Dataset) -> list[Block]:
        """Every block of a fit, in order, with its own Dataset and encoded columns."""
        out, start = [], 0
        for block in self.layout(estimates).blocks:
            own = layout_names.block_dataset(block.name, estimates)
            model = self._families[block.model]
            stop = start + own.sizes["feature"]
            out.append(Block(block.name, model, own, start, stop))
            start = stop
        return out

    def _repeats(self, estimates: xr.Dataset) -> int:
        """How many times the blocks' sums count the class term beyond once: B − 1."""
        return len(self.layout(estimates).blocks) - 1

    def parameter_dims(self, estimates: xr.Dataset) -> dict[str, tuple[str, ...]]:
        dims = dict(self.parameters)
        for block in self.blocks(estimates):
            own = block.model.parameter_dims(block.estimates)
            dims |= {
                layout_names.scoped(block.name, name): layout_names.scoped_dims(block.name, d)
                for name, d in own.items()
                if name not in layout_names.SHARED_VARIABLES
            }
        return dims

    def has_exact_predictive(self, options: Mapping | None = None) -> bool:
        """Whether every block has its exact predictive (see the base class)."""
        blocks = (options or {}).get("blocks")
        if not isinstance(blocks, list | tuple):
            return True
        return all(
            model is None or self._families[model].has_exact_predictive(params)
            for model, params in block_options(blocks).values()
        )

    # -- statistics and closed forms -------------------------------------------------------

    def sufficient_statistics(
        self,
        X,
        y,
        *,
        feature_names=None,
        sample_weight=None,
        classes=None,
        plan=None,
        layout: str | None = None,
    ) -> xr.Dataset:
        """Every block's statistics of its columns of X.

        Parameters
        ----------
        plan : list of dict, optional
            Without ``layout``: each block's ``name``, ``model`` (a family name),
            ``columns``, ``encoding``, ``vectorizer`` and ``data_options`` (the block
            estimator's, e.g. ``binarize``); categories and vocabularies are learned from X.
            Default: :meth:`auto_plan`.
        layout : str, optional
            The ``layout`` attribute of an earlier fit (``partial_fit``): X is encoded as
            it was.
        """
        if feature_names is not None:
            raise ValueError(
                "feature_names: a mixed model names its columns by its blocks; pass X as a "
                "DataFrame to name them."
            )
        table = table_columns.as_table(X)
        if plan is None and layout is None:
            plan = self.auto_plan(table)
        options = {spec["name"]: dict(spec.get("data_options", {})) for spec in plan or ()}
        if layout is None:
            columns = self.learn_layout(table, plan)
        else:
            columns = table_columns.ColumnLayout.from_json(layout)
        for block in columns.blocks:
            if block.encoding == "categorical":  # every category of the column, seen or not
                options.setdefault(block.name, {})["n_categories"] = [
                    len(categories) for categories in block.categories
                ]
        matrix, widths = table_columns.encode(table, columns)
        parts, start = {}, 0
        for block, width in zip(columns.blocks, widths, strict=True):
            model = self._families[block.model]
            rows = _block_rows(matrix[:, start : start + width], model)
            parts[block.name] = model.sufficient_statistics(
                rows,
                y,
                feature_names=_encoded_names(block),
                sample_weight=sample_weight,
                classes=classes,
                **options.get(block.name, {}),
            )
            start += width
        names = table_columns.column_names(table)
        return self._combine(parts, columns, input_columns=[str(name) for name in names])

    def auto_plan(self, table) -> list[dict]:
        """The plan of :func:`bayesgen.input.columns.auto_blocks`, every block at its model's
        defaults (what :meth:`sufficient_statistics` fits without a plan)."""
        by_cli_name = {model.cli_name: model for model in self._families.values()}
        return [
            {
                "name": name,
                "model": by_cli_name[model].name,
                "columns": columns,
                "encoding": table_columns.block_encoding(table, model, columns, name=name),
            }
            for name, model, columns in table_columns.auto_blocks(table)
        ]

    def learn_layout(self, table, plan, *, from_dtypes: bool = False):
        """The columns of every block of ``plan`` and their encodings, learned from ``table``
        (categories, vocabularies): a :class:`~bayesgen.input.columns.ColumnLayout`.

        ``from_dtypes``: learn categories from the columns' pandas ``category`` dtypes only
        (a Dask DataFrame's, whose rows are not at hand), refusing a categorical column of
        another dtype and a text column whose vectorizer has no vocabulary.
        """
        if not plan:
            raise ValueError("blocks: a mixed model needs at least one block.")
        learned = []
        for spec in plan:
            columns = table_columns.resolve_columns(table, spec["columns"], name=spec["name"])
            if from_dtypes:
                table_columns.check_learnable_from_dtypes(
                    table, spec["name"], columns, spec["encoding"], spec.get("vectorizer")
                )
            learned.append(
                table_columns.learn_block(
                    table,
                    spec["name"],
                    spec["model"],
                    columns,
                    spec["encoding"],
                    spec.get("vectorizer"),
                    spec.get("handle_unknown", "error"),
                )
            )
        return table_columns.ColumnLayout(learned, by_name=_has_names(table))

    def _combine(
        self, parts: Mapping[str, xr.Dataset], columns, *, input_columns: list | None
    ) -> xr.Dataset:
        """One Dataset of the blocks' own (statistics or estimates) and the layout."""
        first = next(iter(parts.values()))
        shared_names = [n for n in layout_names.SHARED_VARIABLES if n in first.data_vars]
        shared = first[shared_names]
        shared.attrs = {k: first.attrs[k] for k in layout_names.SHARED_ATTRS if k in first.attrs}
        own = {}
        for name, part in parts.items():
            part = part.copy()
            part.attrs = {**part.attrs, "feature_names_given": 0}
            own[name] = part
        merged = layout_names.merge_blocks(shared, own)
        features = [
            layout_names.scoped(name, str(feature))
            for name, part in parts.items()
            for feature in part["feature"].values
        ]
        merged = merged.assign_coords(feature=np.array(features, dtype=object))
        merged.attrs |= {
            "model": self.name,
            "layout": columns.to_json() if not isinstance(columns, str) else columns,
            "feature_names_given": int(columns.by_name) if not isinstance(columns, str) else 0,
        }
        if input_columns is not None:
            # Every column of X at fit, used or not (scikit-learn's feature_names_in_).
            merged.attrs["input_columns"] = json.dumps(input_columns)
        return merged

    def _recombine(self, estimates: xr.Dataset, parts: Mapping[str, xr.Dataset]) -> xr.Dataset:
        """:meth:`_combine` with the layout and attrs of an earlier Dataset."""
        merged = self._combine(parts, estimates.attrs["layout"], input_columns=None)
        for key in ("feature_names_given", "input_columns", "partial_fit_calls"):
            if key in estimates.attrs:
                merged.attrs[key] = estimates.attrs[key]
        return merged

    def statistics_of(self, estimates: xr.Dataset) -> xr.Dataset:
        """The statistics of a fit, ready for :meth:`merge_statistics` (``partial_fit``)."""
        parts = {}
        for block in self.blocks(estimates):
            parts[block.name] = block.model.statistics_of(block.estimates)
        return self._recombine(estimates, parts)

    def merge_statistics(self, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
        """Every block's statistics merged by the block (counts add; means and sums of
        squares by Chan's update)."""
        if first.attrs.get("layout") != second.attrs.get("layout"):
            raise ValueError(
                "partial_fit: the chunks' columns are encoded differently (another block plan, "
                "other categories or words); keep the plan of the first call."
            )
        parts = {}
        for one, other in zip(self.blocks(first), self.blocks(second), strict=True):
            parts[one.name] = one.model.merge_statistics(one.estimates, other.estimates)
        return self._recombine(first, parts)

    def from_statistics(
        self, statistics: xr.Dataset, *, class_alpha: float = 1.0, blocks=None
    ) -> xr.Dataset:
        """The closed form of every block from its statistics, at the class prior
        ``class_alpha`` and each block's own prior ``blocks[name]`` (keyword arguments of the
        block's ``from_statistics``; default its defaults)."""
        class_alpha = check_smoothing(class_alpha, "class_alpha")
        priors = blocks or {}
        parts = {
            block.name: block.model.from_statistics(
                block.estimates, class_alpha=class_alpha, **priors.get(block.name, {})
            )
            for block in self.blocks(statistics)
        }
        return self.assemble(statistics, parts)

    def assemble(self, statistics: xr.Dataset, parts: Mapping[str, xr.Dataset]) -> xr.Dataset:
        """The mixed closed form of the blocks' own closed forms ``parts`` (by block name),
        fitted to the blocks of ``statistics``."""
        merged = self._recombine(statistics, parts)
        merged.attrs["class_alpha"] = next(iter(parts.values())).attrs["class_alpha"]
        return merged

    def prediction_features(self, estimates: xr.Dataset, X):
        """A table encoded as at fit (:func:`bayesgen.input.columns.encode`), each block's
        columns then checked by its block."""
        matrix, _ = table_columns.encode(table_columns.as_table(X), self.layout(estimates))
        parts = [
            block.model.prediction_features(block.estimates, block.rows(matrix))
            for block in self.blocks(estimates)
        ]
        return _side_by_side(parts)

    def training_features(self, estimates: xr.Dataset, X):
        """The training table as the model saw it: encoded, each block's columns checked."""
        matrix, _ = table_columns.encode(table_columns.as_table(X), self.layout(estimates))
        parts = [
            block.model.training_features(block.estimates, block.rows(matrix))
            for block in self.blocks(estimates)
        ]
        return _side_by_side(parts)

    # -- sums over the blocks --------------------------------------------------------------

    def plug_in_log_joint(self, estimates: xr.Dataset, X) -> tuple[np.ndarray, np.ndarray | None]:
        class_order, class_finite = CLASS_PRIOR.log_terms(estimates)
        repeats = self._repeats(estimates)
        joint = -repeats * class_finite[None, :]
        order = -repeats * class_order[None, :]
        for block in self.blocks(estimates):
            part, part_order = block.model.plug_in_log_joint(block.estimates, block.rows(X))
            joint = joint + part
            if part_order is not None:
                order = order + part_order
        return joint, (order if np.any(order) else None)

    def predictive_log_joint(self, estimates: xr.Dataset, X) -> np.ndarray:
        log_class = np.log(estimates["class_prob"].values)[None, :]
        return self._sum(
            estimates, log_class, lambda b: b.model.predictive_log_joint(b.estimates, b.rows(X))
        )

    def log_evidence(self, estimates: xr.Dataset) -> float:
        labels = float(CLASS_PRIOR.log_evidence(estimates, estimates.attrs["class_alpha"]))
        total = -self._repeats(estimates) * labels
        for block in self.blocks(estimates):
            total += block.model.log_evidence(block.estimates)
        return float(total)

    def prior_draws_problem(self, estimates: xr.Dataset, options: Mapping | None = None):
        """The first block's problem drawing from its prior (see the base class), named."""
        params = block_options((options or {}).get("blocks") or [])
        for block in self.blocks(estimates):
            problem = block.model.prior_draws_problem(
                block.estimates, params.get(block.name, (None, {}))[1]
            )
            if problem is not None:
                return f"block {block.name!r}: {problem}"
        return None

    def loo_kind(self, estimates: xr.Dataset) -> str:
        """The kind "plug-in" where some block's leave-one-out is (a point fit refitted
        without row i), else "exact"."""
        kinds = {block.model.loo_kind(block.estimates) for block in self.blocks(estimates)}
        return "plug-in" if "plug-in" in kinds else "exact"

    def loo_log_joint(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, *, options: dict | None = None
    ) -> np.ndarray:
        params = block_options((options or {}).get("blocks") or [])
        class_term = CLASS_PRIOR.loo_log_prob(estimates, np.asarray(y_codes))
        return self._sum(
            estimates,
            class_term,
            lambda b: b.model.loo_log_joint(
                b.estimates, b.rows(X), y_codes, options=params.get(b.name, (None, {}))[1]
            ),
        )

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset) -> np.ndarray:
        log_class = _draw_log_class(draws)[:, None, :]
        return self._sum(
            estimates,
            log_class,
            lambda b: b.model.draw_log_joint(
                b.estimates, b.rows(X), layout_names.block_posterior(b.name, draws)
            ),
        )

    def row_log_likelihood(
        self, estimates: xr.Dataset, X, y_codes: np.ndarray, draws: xr.Dataset
    ) -> np.ndarray:
        log_class = _draw_log_class(draws)[:, np.asarray(y_codes)]
        return self._sum(
            estimates,
            log_class,
            lambda b: b.model.row_log_likelihood(
                b.estimates, b.rows(X), y_codes, layout_names.block_posterior(b.name, draws)
            ),
        )

    def _sum(self, estimates: xr.Dataset, class_term, block_term) -> np.ndarray:
        """Σ_b block_term(b) − (B − 1) · class_term: every block counts the class term once."""
        total = -self._repeats(estimates) * class_term
        for block in self.blocks(estimates):
            total = total + block_term(block)
        return total

    # -- the exact conjugate posterior -----------------------------------------------------

    def conjugate_draws(
        self, estimates: xr.Dataset, rng, sample_shape, dtype, *, posterior: bool
    ) -> dict[str, Variable]:
        """π from its Dirichlet, then every block's own parameters in block order (each
        block's own draw of π is discarded: the blocks are independent given the data)."""
        out = {
            "class_prob": CLASS_PRIOR.draws(
                estimates, rng, sample_shape, dtype, posterior=posterior
            )
        }
        for block in self.blocks(estimates):
            own = block.model.conjugate_draws(
                block.estimates, rng, sample_shape, dtype, posterior=posterior
            )
            out |= layout_names.scope_variables(block.name, own)
        return out

    def conjugate_mode(self, estimates: xr.Dataset) -> dict[str, Variable]:
        out = {"class_prob": CLASS_PRIOR.mode(estimates)}
        for block in self.blocks(estimates):
            own = block.model.conjugate_mode(block.estimates)
            out |= layout_names.scope_variables(block.name, own)
        return out

    def exact_marginals(self, estimates: xr.Dataset) -> dict[str, Marginal]:
        out = {"class_prob": CLASS_PRIOR.marginal(estimates)}
        for block in self.blocks(estimates):
            for name, marginal in block.model.exact_marginals(block.estimates).items():
                if name in layout_names.SHARED_VARIABLES:
                    continue
                dims = layout_names.scoped_dims(block.name, marginal.dims)
                out[layout_names.scoped(block.name, name)] = dataclasses.replace(
                    marginal, dims=dims
                )
        return out

    # -- the generative model --------------------------------------------------------------

    def pymc_model(self, estimates: xr.Dataset, **options) -> pm.Model:
        """One PyMC model: π once, every block's own model as a named sub-model beside it
        (:func:`bayesgen.families.mixed_pymc.mixed_pymc_model`)."""
        from bayesgen.families.mixed_pymc import mixed_pymc_model  # heavy: PyMC

        return mixed_pymc_model(self, estimates, options.get("blocks") or {})

    def simulate_rows(self, estimates: xr.Dataset, X, y_codes, parameters, rng):
        """Every block's rows for its own parameters, side by side."""
        parts = []
        for block in self.blocks(estimates):
            own = _block_parameters(block.name, parameters)
            parts.append(
                block.model.simulate_rows(block.estimates, block.rows(X), y_codes, own, rng)
            )
        return _side_by_side(parts)

    def predictive_statistics(self, estimates: xr.Dataset, X, y_codes) -> dict[str, Variable]:
        out = {}
        for block in self.blocks(estimates):
            own = block.model.predictive_statistics(block.estimates, block.rows(X), y_codes)
            out |= layout_names.scope_variables(block.name, own)
        return out

    # -- the comparison --------------------------------------------------------------------

    def expected(
        self,
        estimates: xr.Dataset,
        *,
        alpha: float | None,
        class_alpha: float,
        options: dict,
        map_method: str | None,
    ) -> list[Expected]:
        """π's block at ``class_alpha``, then every block's own variables at the block's
        fitted prior (``alpha`` must be None: each block has its own λ, if any)."""
        params = block_options((options or {}).get("blocks") or [])
        out = [CLASS_PRIOR.expected(estimates, class_alpha)]
        for block in self.blocks(estimates):
            own_alpha = block.estimates.attrs.get("alpha") if block.model.smoothing else None
            for expected in block.model.expected(
                block.estimates,
                alpha=own_alpha,
                class_alpha=class_alpha,
                options=params.get(block.name, (None, {}))[1],
                map_method=map_method,
            ):
                if expected.variable in layout_names.SHARED_VARIABLES:
                    continue
                scoped = layout_names.scoped(block.name, expected.variable)
                out.append(dataclasses.replace(expected, variable=scoped))
        return out

    def draw_identities(self, posterior: xr.Dataset) -> list[DrawIdentity]:
        """None: a block's identities between its own variables (GDA's ``coef``) are not
        checked in a mixed model, whose posterior alone does not say which block is GDA."""
        return []

    def joint_statistics(
        self, estimates, posterior, *, alpha, class_alpha: float, options: dict | None = None
    ) -> list:
        """π's Σ log π statistic and every block's own, under the block's name."""
        params = block_options((options or {}).get("blocks") or [])
        out = [CLASS_PRIOR.statistic(estimates, posterior, class_alpha)]
        for block in self.blocks(estimates):
            own_alpha = block.estimates.attrs.get("alpha") if block.model.smoothing else None
            for statistic in block.model.joint_statistics(
                block.estimates,
                layout_names.block_posterior(block.name, posterior),
                alpha=own_alpha,
                class_alpha=class_alpha,
                options=params.get(block.name, (None, {}))[1],
            ):
                if statistic.variable in layout_names.SHARED_VARIABLES:
                    continue
                out.append(
                    dataclasses.replace(
                        statistic,
                        name=f"{block.name}: {statistic.name}",
                        variable=layout_names.scoped(block.name, statistic.variable),
                    )
                )
        return out

    # -- presentation ----------------------------------------------------------------------

    def feature_scores(self, estimates: xr.Dataset) -> np.ndarray:
        """Every block's feature scores side by side (a cell score: its feature's largest)."""
        scores = []
        for block in self.blocks(estimates):
            own = np.asarray(block.model.feature_scores(block.estimates), dtype=np.float64)
            scores.append(own.reshape(own.shape[0], -1).max(axis=1) if own.ndim > 1 else own)
        return np.concatenate(scores)

    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset) -> TopParameters:
        """The first block's (each block's are in its own report section)."""
        block = self.blocks(estimates)[0]
        return block.model.top_parameters(
            block.estimates, layout_names.block_posterior(block.name, posterior)
        )


def block_options(blocks) -> dict[str, tuple[str | None, dict]]:
    """Per block name, (its family name, the block estimator's ``get_params()``), from the
    mixed estimator's ``blocks``: a list of ``(name, estimator or model name, columns, …)``;
    a block given by a model name has (None, {}): its defaults."""
    out = {}
    for spec in blocks if isinstance(blocks, list | tuple) else ():
        name, model = spec[0], spec[1]
        if hasattr(model, "get_params") and hasattr(model, "model_"):
            out[name] = (model.model_.name, model.get_params())
        else:
            out[name] = (None, {})
    return out


def _block_parameters(block: str, parameters: Mapping) -> dict:
    prefix = layout_names.scoped(block, "")
    own = {k.removeprefix(prefix): v for k, v in parameters.items() if k.startswith(prefix)}
    own["class_prob"] = parameters["class_prob"]
    return own


def _draw_log_class(draws: xr.Dataset) -> np.ndarray:
    prob = draws["class_prob"].transpose("draw", "class").values.astype(np.float64)
    return np.log(np.maximum(prob, np.finfo(np.float64).tiny))


def _side_by_side(parts: list):
    if any(sp.issparse(part) for part in parts):
        return sp.csr_array(sp.hstack([sp.csr_array(part) for part in parts], format="csr"))
    return np.hstack([np.asarray(part, dtype=np.float64) for part in parts])


def _encoded_names(block: table_columns.BlockColumns) -> list[str]:
    if block.encoding == "text":
        return list(block.vectorizer["vocabulary"])
    return [str(column) for column in block.columns]


def _has_names(table) -> bool:
    return isinstance(table, pd.DataFrame)


def _block_rows(part, model: Family):
    """A block's columns as it takes them: sparse for word counts and flags, else dense,
    and dense where they hold a missing entry (a sparse matrix's unstored entries are zeros,
    so a block takes NaN only in a dense one)."""
    if sp.issparse(part) and (
        model.feature_kind not in ("count", "binary") or np.isnan(part.data).any()
    ):
        return part.toarray()
    return part


__all__ = ["Block", "MixedFamily", "block_options"]
