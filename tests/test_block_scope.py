"""block_scope: a family's PyMC model as one block of a mixed model that shares one class prior.

Inside ``block_scope(prefix, ...)`` a family's unchanged ``pymc_model`` call declares its
variables in the submodel ``prefix`` (PyMC names them ``prefix::name``), renames every dim but
"class" and "standardisation" to ``prefix::dim``, and reuses the mixed model's class prior.
Outside a scope the builders make the models they made before (the expected names and dims
below were read off the builders at the commit before block_scope existed).

Log densities are evaluated with PyTensor's Python linker: no numba compilation, so the only
compiled graph of this module is the one ``pm.sample`` of the last test.
"""

import numpy as np
import pymc as pm
import pytest
import scipy.stats
from pytensor.compile.mode import Mode

from bayesgen.families import family
from bayesgen.families.hyperprior import with_alpha_prior
from bayesgen.families.shared_pymc import block_scope, class_prob_prior, scoped_dim

PYTHON_LINKER = Mode(linker="py", optimizer="fast_compile")
CLASS_PRIOR = ("class_count_data", "class_alpha", "class_prob", "class_count")
SHARED = ("class", "standardisation")

_rng = np.random.default_rng(7)
Y = np.array(["a", "a", "a", "b", "b", "b", "a", "b"])
COUNTS = _rng.integers(0, 5, size=(8, 4))
BINARY = (_rng.random((8, 4)) < 0.5).astype(int)
CATEGORIES = _rng.integers(0, 3, size=(8, 3))
REAL = _rng.normal(size=(8, 3)) + (Y == "b")[:, None]
REAL_2D = _rng.normal(size=(8, 2)) + 2.0 * (Y == "b")[:, None]


def fitted(name, X, y=Y, **prior):
    return family(name).fit(X, y, **prior)


# The standalone models at git HEAD before block_scope: every named variable and its dims.
FEATURE = ("class", "feature")
SQUARE = ("feature", "feature2")
STANDALONE = {
    "multinomial_nb": {
        "alpha": (),
        "class_alpha": ("class",),
        "class_count": ("class",),
        "class_count_data": ("class",),
        "class_prob": ("class",),
        "feature_count": FEATURE,
        "feature_count_data": FEATURE,
        "feature_prob": FEATURE,
        "feature_rate": FEATURE,
        "feature_rate_standardisation": ("standardisation", *FEATURE),
    },
    "bernoulli_nb": {
        "alpha": (),
        "class_alpha": ("class",),
        "class_count": ("class",),
        "class_count_data": ("class",),
        "class_prob": ("class",),
        "feature_count": FEATURE,
        "feature_count_data": FEATURE,
        "feature_prob": FEATURE,
        "feature_prob_standardisation": ("standardisation", *FEATURE),
    },
    "categorical_nb": {
        "alpha": (),
        "cell_count": ("class", "cell"),
        "cell_count_data": ("class", "cell"),
        "cell_rate": ("class", "cell"),
        "cell_rate_standardisation": ("standardisation", "class", "cell"),
        "class_alpha": ("class",),
        "class_count": ("class",),
        "class_count_data": ("class",),
        "class_prob": ("class",),
        "feature_prob": ("class", "feature", "category"),
    },
    "gaussian_nb": {
        "class_alpha": ("class",),
        "class_count": ("class",),
        "class_count_data": ("class",),
        "class_mean": FEATURE,
        "class_prob": ("class",),
        "mu": FEATURE,
        "prior_kappa": (),
        "prior_mean": ("feature",),
        "prior_scale": ("feature",),
        "prior_shape": (),
        "sum_squares": FEATURE,
        "var": FEATURE,
    },
    "poisson_nb": {
        "class_alpha": ("class",),
        "class_count": ("class",),
        "class_count_data": ("class",),
        "class_prob": ("class",),
        "feature_count": FEATURE,
        "feature_count_data": FEATURE,
        "feature_rate": FEATURE,
        "feature_rate_standardisation": ("standardisation", *FEATURE),
        "rate_prior_rate": (),
        "rate_prior_shape": (),
    },
    "gda": {
        "bartlett_chi2": (),
        "bartlett_normal": (),
        "class_alpha": ("class",),
        "class_count": ("class",),
        "class_count_data": ("class",),
        "class_mean": FEATURE,
        "class_mean_data": FEATURE,
        "class_prob": ("class",),
        "coef": ("feature",),
        "cov": SQUARE,
        "intercept": (),
        "mu": FEATURE,
        "prior_dof": (),
        "prior_kappa": (),
        "prior_mean": ("feature",),
        "prior_precision_chol": SQUARE,
        "scatter": SQUARE,
        "scatter_data": SQUARE,
    },
    "qda": {
        "bartlett_chi2": (),
        "bartlett_normal": (),
        "class_alpha": ("class",),
        "class_count": ("class",),
        "class_count_data": ("class",),
        "class_mean": FEATURE,
        "class_mean_data": FEATURE,
        "class_prob": ("class",),
        "cov": ("class", *SQUARE),
        "mu": FEATURE,
        "prior_dof": (),
        "prior_kappa": (),
        "prior_mean": ("feature",),
        "prior_precision_chol": SQUARE,
        "scatter_0": SQUARE,
        "scatter_0_data": SQUARE,
        "scatter_1": SQUARE,
        "scatter_1_data": SQUARE,
    },
}
STANDALONE_DATA = {
    "multinomial_nb": COUNTS,
    "bernoulli_nb": BINARY,
    "categorical_nb": CATEGORIES,
    "gaussian_nb": REAL,
    "poisson_nb": COUNTS,
    "gda": REAL_2D,
    "qda": REAL_2D,
}

# Three mixed models of two blocks each: (block name, family name, X, pymc_model options).
PAIRS = {
    "gaussian_nb+categorical": [
        ("num", "gaussian_nb", REAL, {}),
        ("cat", "categorical_nb", CATEGORIES, {}),
    ],
    "multinomial+poisson_nb": [
        ("words", "multinomial_nb", COUNTS, {}),
        ("rates", "poisson_nb", COUNTS[:, :3], {}),
    ],
    "gda+bernoulli": [
        ("num", "gda", REAL_2D, {"cov_prior": "conjugate"}),
        ("bin", "bernoulli_nb", BINARY, {}),
    ],
}


def blocks_of(pair):
    return [
        (name, family(model), fitted(model, X), options) for name, model, X, options in PAIRS[pair]
    ]


def mixed_model(blocks):
    """The mixed model as the lead's mixed family builds it: one class prior, then each block's
    own builder inside its scope."""
    first = blocks[0][2]
    with pm.Model(coords={"class": first.indexes["class"]}) as model:
        class_count, class_prob = class_prob_prior(first, float(first.attrs["class_alpha"]))
        for name, block_family, estimates, options in blocks:
            with block_scope(name, class_count=class_count, class_prob=class_prob):
                block_family.pymc_model(estimates, **options)
    return model


def renamed(prefix, dims):
    """The rule written out: "class" and "standardisation" kept, every other dim prefixed."""
    return tuple(dim if dim in SHARED else f"{prefix}::{dim}" for dim in dims)


def named_dims(model):
    return {name: tuple(model.named_vars_to_dims.get(name, ())) for name in model.named_vars}


# --------------------------------------------------------------------------------------------
# Alone: unchanged.


@pytest.mark.parametrize("model", sorted(STANDALONE))
def test_standalone_builder_is_unchanged(model):
    built = family(model).pymc_model(fitted(model, STANDALONE_DATA[model]))
    assert built.isroot
    assert named_dims(built) == STANDALONE[model]
    dims_used = {dim for dims in STANDALONE[model].values() for dim in dims}
    assert set(built.coords) == dims_used


def test_scoped_dim_keeps_class_and_standardisation_and_prefixes_the_rest():
    assert scoped_dim("num", "class") == "class"
    assert scoped_dim("num", "standardisation") == "standardisation"
    assert scoped_dim("num", "feature") == "num::feature"
    assert scoped_dim("cat", "observed_class") == "cat::observed_class"


# --------------------------------------------------------------------------------------------
# Side by side: names, dims, coords.


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_block_variables_are_prefixed_and_dims_renamed(pair):
    blocks = blocks_of(pair)
    model = mixed_model(blocks)
    expected = {name: ("class",) for name in CLASS_PRIOR}  # one class prior, unprefixed
    for name, block_family, estimates, _ in blocks:
        for variable, dims in STANDALONE[block_family.name].items():
            if variable not in CLASS_PRIOR:
                expected[f"{name}::{variable}"] = renamed(name, dims)
        for dim in ("feature", "feature2", "category"):
            if dim in estimates.coords:
                labels = tuple(estimates[dim].values)
                assert model.coords[f"{name}::{dim}"] == labels
    assert named_dims(model) == expected
    assert "feature" not in model.coords


@pytest.mark.parametrize("pair", sorted(PAIRS))
def test_mixed_logp_is_the_blocks_logps_less_one_class_prior(pair):
    blocks = blocks_of(pair)
    (
        (first, first_family, first_est, first_opts),
        (second, second_family, second_est, second_opts),
    ) = blocks
    alone_first = first_family.pymc_model(first_est, **first_opts)
    alone_second = second_family.pymc_model(second_est, **second_opts)
    model = mixed_model(blocks)

    rng = np.random.default_rng(3)

    def moved(point):  # away from the start, where a wrong term would still be visible
        return {
            name: value + 0.4 * rng.normal(size=np.shape(value)) for name, value in point.items()
        }

    point_first = moved(alone_first.initial_point())
    point_second = moved(alone_second.initial_point())
    class_value = [name for name in point_first if name.startswith("class_prob")]
    assert len(class_value) == 1
    point_second[class_value[0]] = point_first[class_value[0]]  # one π for both blocks
    mixed_point = {class_value[0]: point_first[class_value[0]]}
    for prefix, point in ((first, point_first), (second, point_second)):
        mixed_point |= {f"{prefix}::{name}": value for name, value in point.items()}
    del mixed_point[f"{first}::{class_value[0]}"], mixed_point[f"{second}::{class_value[0]}"]
    assert set(mixed_point) == set(model.initial_point())

    def logp(built, point, **kwargs):
        return float(built.compile_logp(jacobian=False, mode=PYTHON_LINKER, **kwargs)(point))

    class_terms = logp(
        alone_first, point_first, vars=[alone_first["class_prob"], alone_first["class_count"]]
    )
    # The class prior's terms, independently: Dirichlet(a) at π and Multinomial(N_k | π).
    constrained = {value.name: value for value in alone_first.unobserved_value_vars}
    class_prob = alone_first.compile_fn(
        constrained["class_prob"],
        inputs=alone_first.value_vars,
        on_unused_input="ignore",
        mode=PYTHON_LINKER,
    )(point_first)
    counts = first_est["class_count"].values
    concentration = np.full(counts.size, float(first_est.attrs["class_alpha"]))
    expected_class_terms = scipy.stats.dirichlet.logpdf(
        class_prob, concentration
    ) + scipy.stats.multinomial.logpmf(counts, counts.sum(), class_prob)
    assert class_terms == pytest.approx(expected_class_terms, rel=1e-10)

    mixed = logp(model, mixed_point)
    both_alone = logp(alone_first, point_first) + logp(alone_second, point_second)
    assert abs(class_terms) > 1.0  # counting it twice would show
    assert mixed == pytest.approx(both_alone - class_terms, rel=1e-12, abs=1e-9)


# --------------------------------------------------------------------------------------------
# The variants: classes without rows (partial_fit) and λ under a hyperprior.


def test_partial_fit_and_hyperprior_blocks_are_scoped():
    gda = family("gda")
    partial = gda.from_statistics(gda.sufficient_statistics(REAL_2D, Y, classes=["a", "b", "c"]))
    multinomial = family("multinomial_nb")
    partial_counts = multinomial.from_statistics(
        multinomial.sufficient_statistics(COUNTS, Y, classes=["a", "b", "c"])
    )
    hyper = with_alpha_prior(multinomial, partial_counts, (2.0, 1.0))
    model = mixed_model(
        [
            ("num", gda, partial, {"cov_prior": "lkj"}),
            ("words", multinomial, hyper, {}),
        ]
    )
    assert model.coords["class"] == ("a", "b", "c")
    assert model.coords["num::observed_class"] == ("a", "b")
    assert model.named_vars_to_dims["num::class_mean"] == ("num::observed_class", "num::feature")
    assert {"num::cov_chol", "num::cov_chol_corr", "num::cov_chol_stds"} <= set(model.named_vars)
    assert model["words::alpha"] in model.free_RVs  # λ a random variable of its block
    assert "words::feature_total_correction" in model.named_vars
    assert [rv.name for rv in model.observed_RVs].count("class_count") == 1


# --------------------------------------------------------------------------------------------
# The scope's own rules.


def test_block_scope_needs_the_mixed_models_context():
    with pytest.raises(RuntimeError, match="context"):
        with block_scope("num", class_count=None, class_prob=None):
            pass


def test_blocks_do_not_nest():
    with pm.Model():
        with block_scope("num", class_count=None, class_prob=None):
            with pytest.raises(RuntimeError, match="do not nest"):
                with block_scope("inner", class_count=None, class_prob=None):
                    pass


@pytest.mark.parametrize("prefix", ["", "a::b", "a/b", "a:"])
def test_block_scope_refuses_a_bad_name(prefix):
    with pm.Model(), pytest.raises(ValueError, match="prefix"):
        with block_scope(prefix, class_count=None, class_prob=None):
            pass


def test_a_block_of_other_rows_is_refused():
    estimates = fitted("bernoulli_nb", BINARY)
    other_rows = fitted("bernoulli_nb", BINARY[:6], Y[:6])
    with pm.Model(coords={"class": estimates.indexes["class"]}):
        class_count, class_prob = class_prob_prior(estimates, 1.0)
        with block_scope("bin", class_count=class_count, class_prob=class_prob):
            with pytest.raises(ValueError, match="class counts"):
                family("bernoulli_nb").pymc_model(other_rows)


def test_outside_a_scope_the_class_prior_is_declared_again():
    estimates = fitted("bernoulli_nb", BINARY)
    with pm.Model(coords={"class": estimates.indexes["class"]}):
        class_count, class_prob = class_prob_prior(estimates, 1.0)
        with block_scope("bin", class_count=class_count, class_prob=class_prob):
            pass
        with pm.Model(name="after"):
            assert class_prob_prior(estimates, 1.0)[1] is not class_prob


# --------------------------------------------------------------------------------------------
# NUTS on a mixed model.


def test_mixed_model_samples_with_the_renamed_dims():
    blocks = blocks_of("gaussian_nb+categorical")
    with mixed_model(blocks):
        trace = pm.sample(
            draws=50,
            tune=50,
            chains=1,
            cores=1,
            random_seed=0,
            nuts_sampler="pymc",
            progressbar=False,
            compute_convergence_checks=False,
        )
    posterior = trace.posterior
    assert posterior["num::mu"].dims == ("chain", "draw", "class", "num::feature")
    assert posterior["cat::feature_prob"].dims == (
        "chain",
        "draw",
        "class",
        "cat::feature",
        "cat::category",
    )
    assert posterior["class_prob"].dims == ("chain", "draw", "class")
    assert list(posterior["num::feature"].values) == list(blocks[0][2]["feature"].values)
    assert np.all(np.isfinite(posterior["num::mu"].values))
    # Each draw's θ is a distribution over a feature's real categories.
    totals = posterior["cat::feature_prob"].sum("cat::category").values
    np.testing.assert_allclose(totals, 1.0, rtol=1e-9)
