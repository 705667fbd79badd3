"""A toy block, Poisson naive Bayes, that implements only the abstract methods of
:class:`bayesgen.families.base.Family`, and the generic behaviour it gets from them: fit,
predict, ``partial_fit``, :func:`bayesgen.compare`, save and load, exact leave-one-out
(:func:`bayesgen.loo_proba`) and simulation-based calibration (:func:`bayesgen.sbc`).

The model: π ~ Dirichlet(a), λ_kj ~ Gamma(1, 1) (shape, rate) and x_ij | y_i = k ~
Poisson(λ_kj). The posterior of λ_kj is Gamma(1 + S_kj, 1 + N_k), S_kj the sum of feature j
over the N_k rows of class k; the exact predictive of a count is negative binomial.

What adding it took: this module (the block ``PoissonFamily``: its class attributes and the
fifteen abstract methods, nothing else; and its estimator ``ToyPoissonNB``, a
``GenerativeClassifier`` that names the block, as ``bayesgen/estimators/models.py`` makes the
five) and one registry line, ``register(FAMILY)`` (``poisson_registered`` below; a block inside
the package adds its ``FAMILY`` to the tuple in ``bayesgen/families/registry.py`` instead).
Nothing in bayesgen's inference, estimators, checks, io or plotting changed for it.
``docs/adding-a-block.md`` shows this code, by the ``# [doc:...]`` markers below (a test
checks that every marker the page names is here).

The expected values come from SciPy and from sums over the raw rows written out here, never
from the block's own methods.
"""

from __future__ import annotations

import inspect
import re
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest
import scipy.sparse as sp
import xarray as xr
from scipy import stats
from scipy.special import gammaln, logsumexp

import bayesgen
from bayesgen import closed_form
from bayesgen.estimators.classifier import GenerativeClassifier
from bayesgen.families import roles
from bayesgen.families.base import Family
from bayesgen.families.class_prior import CLASS_PRIOR
from bayesgen.families.expected import Expected, reason_array
from bayesgen.families.naive_bayes import NaiveBayesFamily
from bayesgen.families.presentation import Presentation, TopParameters
from bayesgen.families.registry import FAMILIES, register
from bayesgen.families.results import parameter_coords
from bayesgen.input.alpha import check_smoothing
from bayesgen.input.statistics import check_mergeable, total_weight, training_data
from bayesgen.io import model_files
from bayesgen.maths.counts import class_counts, feature_counts

DOC_PAGE = Path(__file__).resolve().parents[1] / "docs" / "adding-a-block.md"

# [doc:prior]
#: The Gamma(shape, rate) prior of every rate λ_kj.
RATE_SHAPE, RATE_RATE = 1.0, 1.0
# [/doc:prior]


# [doc:attributes]
class PoissonFamily(Family):
    """Poisson naive Bayes: π ~ Dirichlet(a), λ_kj ~ Gamma(1, 1), x_ij | k ~ Poisson(λ_kj)."""

    name = "toy_poisson_nb"  # closed_form_.attrs["model"], in saved files
    estimator = "ToyPoissonNB"  # the estimator's class name
    cli_name = "toy_poisson"
    feature_kind = "count"  # what bayesgen.input.data checks X against
    parameters: ClassVar[dict] = {"class_prob": ("class",), "feature_rate": ("class", "feature")}
    statistics: ClassVar[dict] = {
        "class_count": ("class",),
        "feature_sum": ("class", "feature"),
        "log_factorial": ("class",),  # Σ_i Σ_j log x_ij! per class, for the evidence
    }
    presentation = Presentation(
        plot_variables=("class_prob", "feature_rate"),
        top_parameter_label="λ (rate of the feature in the class)",
        top_parameter_caption="largest rates",
        variable_symbols={"feature_rate": "λ"},
    )
    # [/doc:attributes]

    # [doc:statistics]
    def sufficient_statistics(
        self, X, y, *, feature_names=None, sample_weight=None, classes=None
    ) -> xr.Dataset:
        data = training_data(
            X,
            y,
            kind=self.feature_kind,
            feature_names=feature_names,
            sample_weight=sample_weight,
            classes=classes,
        )
        n_classes = len(data.classes)
        class_count = class_counts(data.y, n_classes, data.sample_weight)
        feature_sum = feature_counts(data.X, data.y, n_classes, data.sample_weight)
        row_terms = gammaln(_dense(data.X) + 1.0).sum(axis=1)
        if data.sample_weight is not None:
            row_terms = row_terms * data.sample_weight
        variables = {
            "class_count": (("class",), class_count),
            "feature_sum": (("class", "feature"), feature_sum),
            "log_factorial": (("class",), np.bincount(data.y, row_terms, n_classes)),
        }
        attrs = {
            "model": self.name,
            "n_samples": total_weight(class_count),
            "feature_names_given": int(data.names_given),
        }
        coords = {"class": data.classes, "feature": data.feature_names}
        return xr.Dataset(variables, coords=coords, attrs=attrs)

    def merge_statistics(self, first: xr.Dataset, second: xr.Dataset) -> xr.Dataset:
        check_mergeable(first, second)
        merged = first[list(self.statistics)].copy()
        for name in self.statistics:  # plain arrays: the coords were checked equal
            merged[name] = (first[name].dims, first[name].values + second[name].values)
        merged.attrs = dict(first.attrs)
        merged.attrs["n_samples"] = total_weight(merged["class_count"].values)
        return merged

    def from_statistics(self, statistics: xr.Dataset, *, class_alpha: float = 1.0) -> xr.Dataset:
        class_alpha = check_smoothing(class_alpha, "class_alpha")
        count = statistics["class_count"].values
        feature_sum = statistics["feature_sum"].values
        shape, rate = _gamma_posterior(statistics, posterior=True)
        variables = {name: statistics[name] for name in self.statistics}
        variables |= CLASS_PRIOR.estimates(count, class_alpha)
        variables["feature_rate"] = (("class", "feature"), shape / rate)
        with np.errstate(divide="ignore", invalid="ignore"):  # a class without rows: NaN
            mle = feature_sum / count[:, None]
        variables["feature_rate_mle"] = (("class", "feature"), mle)
        attrs = {
            "model": self.name,
            "class_alpha": class_alpha,
            "n_samples": statistics.attrs["n_samples"],
            "feature_names_given": statistics.attrs["feature_names_given"],
        }
        return xr.Dataset(variables, coords=statistics.coords, attrs=attrs)

    # [/doc:statistics]

    # [doc:closed-forms]
    def plug_in_log_joint(self, estimates: xr.Dataset, X):
        rate = estimates["feature_rate"].values
        with np.errstate(divide="ignore"):  # class_alpha = 0 and a class without rows
            log_class = np.log(estimates["class_prob"].values)
        X = _dense(X)
        joint = X @ np.log(rate).T - rate.sum(axis=1) + log_class
        return joint - gammaln(X + 1.0).sum(axis=1)[:, None], None

    def predictive_log_joint(self, estimates: xr.Dataset, X):
        shape, rate = _gamma_posterior(estimates, posterior=True)
        log_class = np.log(estimates["class_prob"].values)
        return log_class + _negative_binomial_log_pmf(_dense(X)[:, None, :], shape, rate)

    def log_evidence(self, estimates: xr.Dataset) -> float:
        labels = CLASS_PRIOR.log_evidence(estimates, estimates.attrs["class_alpha"])
        shape, rate = _gamma_posterior(estimates, posterior=True)
        features = (
            RATE_SHAPE * np.log(RATE_RATE)
            - gammaln(RATE_SHAPE)
            + gammaln(shape)
            - shape * np.log(rate)
        )
        return float(labels + features.sum() - estimates["log_factorial"].values.sum())

    # [/doc:closed-forms]

    # [doc:exact-posterior]
    def conjugate_draws(self, estimates, rng, sample_shape, dtype, *, posterior: bool):
        # π first, then λ: the order of the generator's calls fixes which draws each gets.
        class_prob = CLASS_PRIOR.draws(estimates, rng, sample_shape, dtype, posterior=posterior)
        shape, rate = _gamma_posterior(estimates, posterior=posterior)
        size = (*sample_shape, *shape.shape)
        feature_rate = rng.gamma(shape, 1.0 / rate, size=size).astype(dtype)
        return {"class_prob": class_prob, "feature_rate": (("class", "feature"), feature_rate)}

    def conjugate_mode(self, estimates: xr.Dataset):
        shape, rate = _gamma_posterior(estimates, posterior=True)
        mode = np.where(shape >= 1.0, (shape - 1.0) / rate, np.nan)
        return {
            "class_prob": CLASS_PRIOR.mode(estimates),
            "feature_rate": (("class", "feature"), mode),
        }

    def loo_log_joint(self, estimates: xr.Dataset, X, y_codes, *, options=None):
        # Row i leaves the Gamma posterior of its own class only: S_kj − x_ij and N_k − 1.
        X, y_codes = _dense(X), np.asarray(y_codes)
        shape, rate = _gamma_posterior(estimates, posterior=True)
        joint = _negative_binomial_log_pmf(X[:, None, :], shape, rate)
        rows = np.arange(len(y_codes))
        joint[rows, y_codes] = _negative_binomial_log_pmf(
            X, shape[y_codes] - X, rate[y_codes] - 1.0
        )
        return CLASS_PRIOR.loo_log_prob(estimates, y_codes) + joint

    # [/doc:exact-posterior]

    # [doc:generative]
    def pymc_model(self, estimates: xr.Dataset):
        import pymc as pm  # heavy: PyMC, only when NUTS or find_MAP asks for the model

        count = estimates["class_count"].values
        concentration = CLASS_PRIOR.concentration(estimates, posterior=False)
        with pm.Model(coords=parameter_coords(estimates)) as model:
            class_prob = pm.Dirichlet("class_prob", a=concentration, dims="class")
            pm.Multinomial("class_count", n=count.sum(), p=class_prob, observed=count, dims="class")
            feature_rate = pm.Gamma(
                "feature_rate", alpha=RATE_SHAPE, beta=RATE_RATE, dims=("class", "feature")
            )
            # The sum of N_k Poisson(λ) counts is Poisson(N_k λ): the statistics suffice.
            pm.Poisson(
                "feature_sum",
                mu=count[:, None] * feature_rate,
                observed=estimates["feature_sum"].values,
                dims=("class", "feature"),
            )
        return model

    def draw_log_joint(self, estimates: xr.Dataset, X, draws: xr.Dataset):
        rate = draws["feature_rate"].transpose("draw", "class", "feature").values
        log_class = np.log(draws["class_prob"].transpose("draw", "class").values)
        X = _dense(X)
        joint = np.einsum("nj,dkj->dnk", X, np.log(rate)) - rate.sum(axis=2)[:, None, :]
        return joint + log_class[:, None, :] - gammaln(X + 1.0).sum(axis=1)[None, :, None]

    def simulate_rows(self, estimates: xr.Dataset, X, y_codes, parameters, rng):
        return rng.poisson(parameters["feature_rate"][y_codes]).astype(np.float64)

    # [/doc:generative]

    # [doc:checks]
    def expected(self, estimates, *, alpha, class_alpha, options, map_method):
        shape, rate = _gamma_posterior(estimates, posterior=True)
        rate = np.broadcast_to(rate, shape.shape)
        no_mode = shape < 1.0  # Gamma(a < 1): the density is unbounded at 0
        map_reasons = reason_array(shape.shape)
        map_reasons[no_mode] = "boundary: Gamma(a < 1) has no mode"
        prior = f"Gamma({RATE_SHAPE:g}, {RATE_RATE:g})"
        rates = Expected(
            variable="feature_rate",
            keep=np.ones(shape.shape, dtype=bool),
            closed_form=shape / rate,
            closed_form_sd=np.sqrt(shape) / rate,
            closed_form_kurtosis=3.0 + 6.0 / shape,
            mle=estimates["feature_rate_mle"].values,
            expected_map=np.where(no_mode, np.nan, (shape - 1.0) / rate),
            reasons=(reason_array(shape.shape), reason_array(shape.shape), map_reasons),
            hide_map=no_mode,
            prior=prior,
            mean_identity=f"posterior mean under {prior} = (a₀ + S) / (b₀ + N_k)",
            sd_identity=f"posterior SD under {prior} = √(a₀ + S) / (b₀ + N_k)",
            map_identity=f"MAP under {prior} = (a₀ + S − 1) / (b₀ + N_k)",
            unbounded=no_mode,
        )
        return [CLASS_PRIOR.expected(estimates, class_alpha), rates]

    # [/doc:checks]

    # [doc:presentation]
    def feature_scores(self, estimates: xr.Dataset):
        return estimates["feature_rate"].values.max(axis=0)

    def top_parameters(self, estimates: xr.Dataset, posterior: xr.Dataset):
        return TopParameters(posterior["feature_rate"], estimates["feature_rate"].values)

    # [/doc:presentation]


# [doc:helpers]
def _gamma_posterior(estimates: xr.Dataset, *, posterior: bool):
    """(shape (K, D), rate (K, 1)) of every λ_kj: the prior's, plus S_kj and N_k given the
    data."""
    weight = 1.0 if posterior else 0.0
    shape = RATE_SHAPE + weight * estimates["feature_sum"].values
    rate = RATE_RATE + weight * estimates["class_count"].values.astype(np.float64)
    return shape, rate[:, None]


def _negative_binomial_log_pmf(x, shape, rate):
    """Σ_j log p(x_j) of Poisson counts whose rate is Gamma(shape, rate), summed on the last
    axis: log Γ(a + x) − log Γ(a) − log x! + a log(b / (b + 1)) − x log(b + 1)."""
    terms = (
        gammaln(shape + x)
        - gammaln(shape)
        - gammaln(x + 1.0)
        + shape * np.log(rate / (rate + 1.0))
        - x * np.log1p(rate)
    )
    return terms.sum(axis=-1)


def _dense(X) -> np.ndarray:
    return np.asarray(X.toarray() if sp.issparse(X) else X, dtype=np.float64)


FAMILY = PoissonFamily()
# [/doc:helpers]


# [doc:estimator]
class ToyPoissonNB(GenerativeClassifier):
    """Bayesian Poisson naive Bayes (the toy block's estimator)."""

    _family = FAMILY

    def __init__(
        self,
        class_alpha=1.0,
        *,
        inference="nuts",
        draws=1000,
        tune=1000,
        chains=4,
        cores=None,
        random_seed=None,
        nuts_sampler="pymc",
        target_accept=0.9,
        compute_map=True,
        prior_draws=500,
        dtype="float64",
        progressbar="auto",
    ):
        self.class_alpha = class_alpha
        self.inference = inference
        self.draws = draws
        self.tune = tune
        self.chains = chains
        self.cores = cores
        self.random_seed = random_seed
        self.nuts_sampler = nuts_sampler
        self.target_accept = target_accept
        self.compute_map = compute_map
        self.prior_draws = prior_draws
        self.dtype = dtype
        self.progressbar = progressbar

    def _set_point_attributes(self, means: xr.Dataset) -> None:
        self.feature_rate_ = means["feature_rate"].values


# [/doc:estimator]


# [doc:register]
@pytest.fixture(autouse=True)
def poisson_registered():
    """The registry line, for the tests of this module only."""
    register(FAMILY)
    yield
    del FAMILIES[FAMILY.name]


# [/doc:register]

CONJUGATE = {"inference": "conjugate", "random_seed": 0}


@pytest.fixture(scope="module")
def data():
    """Two classes of five-feature counts: class "b" has larger rates on the last features."""
    rng = np.random.default_rng(7)
    rates = np.array([[4.0, 3.0, 1.0, 0.5, 0.2], [0.5, 1.0, 2.0, 4.0, 6.0]])
    y = np.repeat([0, 1], [14, 10])
    X = rng.poisson(rates[y]).astype(float)
    return X, np.array(["a", "b"])[y]


def posterior_parameters(X, y, classes):
    """(shape, rate) of each class's Gamma posterior, summed here from the raw rows."""
    shape = np.array([RATE_SHAPE + X[y == label].sum(axis=0) for label in classes])
    rate = np.array([RATE_RATE + np.sum(y == label) for label in classes])
    return shape, rate


def scipy_predictive(x, X, y, classes, class_alpha=1.0):
    """log p(x, y = k | X, y) from scipy's negative binomial and the Dirichlet's mean."""
    shape, rate = posterior_parameters(X, y, classes)
    counts = np.array([np.sum(y == label) for label in classes])
    class_term = np.log((counts + class_alpha) / (counts.sum() + len(classes) * class_alpha))
    features = stats.nbinom.logpmf(x[None, :], shape, (rate / (rate + 1.0))[:, None])
    return class_term + features.sum(axis=1)


def softmax(log_joint):
    return np.exp(log_joint - logsumexp(log_joint, axis=-1, keepdims=True))


# -- the interface -------------------------------------------------------------------------

#: What every block must supply: the spec of the ABC.
ABSTRACT_METHODS = {
    "sufficient_statistics",
    "merge_statistics",
    "from_statistics",
    "plug_in_log_joint",
    "predictive_log_joint",
    "log_evidence",
    "conjugate_draws",
    "conjugate_mode",
    "loo_log_joint",
    "pymc_model",
    "draw_log_joint",
    "simulate_rows",
    "expected",
    "feature_scores",
    "top_parameters",
}


def test_family_declares_what_every_block_must_supply_as_abstract_methods():
    assert Family.__abstractmethods__ == ABSTRACT_METHODS


def test_the_toy_block_defines_the_abstract_methods_and_nothing_else():
    defined = {
        name
        for name, value in vars(PoissonFamily).items()
        if inspect.isfunction(value) and not name.startswith("__")
    }
    assert defined == ABSTRACT_METHODS


def test_a_block_without_an_abstract_method_cannot_be_made():
    class Unfinished(PoissonFamily):
        simulate_rows = Family.simulate_rows

    with pytest.raises(TypeError, match="simulate_rows"):
        Unfinished()


def test_a_block_without_a_required_class_attribute_cannot_be_made():
    namespace = {
        name: value
        for name, value in vars(PoissonFamily).items()
        if not name.startswith("_") and name != "presentation"
    }
    Unpresented = type(Family)("Unpresented", (Family,), namespace)
    with pytest.raises(TypeError, match=r"missing \['presentation'\]"):
        Unpresented()


def test_naive_bayes_subclasses_supply_the_hooks_its_docstring_lists():
    hooks = {
        "feature_statistics",
        "smoothing_terms",
        "feature_simplices",
        "concentrations",
        "plug_in_log_joint",
        "draw_log_joint",
        "loo_feature_log_likelihood",
        "pymc_model",
        "simulate_rows",
        "feature_moments",
    }
    assert NaiveBayesFamily.__abstractmethods__ == hooks
    for hook in (*hooks, "predictive_statistics"):
        assert f":meth:`{hook}`" in NaiveBayesFamily.__doc__


@pytest.mark.parametrize(
    "role",
    [roles.ClosedForm, roles.ExactPosterior, roles.Generative, roles.Checks, roles.Presentable],
)
def test_every_role_lists_only_what_a_family_has(role):
    members = {name for name in vars(role) if not name.startswith("_")}
    members |= set(getattr(role, "__annotations__", {}))
    assert members, role
    for member in members:
        assert hasattr(FAMILY, member), f"{role.__name__}.{member}"


def test_capabilities_are_declared_not_probed():
    assert FAMILY.smoothing_parameters == () and FAMILY.smoothing is False
    assert FAMILY.has_exact_predictive({}) is True
    assert bayesgen.MultinomialNB().model_.smoothing_parameters == ("alpha",)
    gda = bayesgen.GaussianDiscriminantAnalysis().model_
    assert gda.has_exact_predictive({"cov_prior": "lkj"}) is False


def test_presentation_is_read_through_the_block():
    assert FAMILY.plot_variables == ("class_prob", "feature_rate")
    assert FAMILY.mean_label == "closed form" and FAMILY.report_plots == ()


# -- fit and predict -----------------------------------------------------------------------


def test_fit_gives_the_gamma_posterior_mean_of_every_rate(data):
    X, y = data
    est = ToyPoissonNB(**CONJUGATE).fit(X, y)
    shape, rate = posterior_parameters(X, y, est.classes_)
    np.testing.assert_allclose(est.closed_form_["feature_rate"], shape / rate[:, None], rtol=1e-12)
    # No exact marginals declared: the fitted attributes are the mean of the exact draws.
    np.testing.assert_allclose(est.feature_rate_, shape / rate[:, None], rtol=0.05)
    assert est.model_ is FAMILY


ROWS = np.array([[3.0, 3.0, 1.0, 1.0, 0.0], [1.0, 1.0, 2.0, 3.0, 5.0], [2.0, 2.0, 2.0, 2.0, 2.0]])


def test_predict_proba_is_the_posterior_mean_of_p_y_given_x(data):
    X, y = data
    est = ToyPoissonNB(inference="conjugate", draws=300, chains=2, random_seed=1).fit(X, y)
    posterior = est.idata_["posterior"]
    rate = posterior["feature_rate"].transpose("chain", "draw", "class", "feature").values
    class_prob = posterior["class_prob"].transpose("chain", "draw", "class").values
    rate, class_prob = rate.reshape(-1, *rate.shape[2:]), class_prob.reshape(-1, 2)
    joint = np.log(class_prob)[:, None, :] + stats.poisson.logpmf(
        ROWS[None, :, None, :], rate[:, None, :, :]
    ).sum(axis=-1)
    np.testing.assert_allclose(est.predict_proba(ROWS), softmax(joint).mean(axis=0), rtol=1e-9)
    assert est.predict(ROWS[:2]).tolist() == ["a", "b"]


def test_the_exact_predictive_is_negative_binomial(data):
    X, y = data
    estimates = ToyPoissonNB(**CONJUGATE, draws=50).fit(X, y).closed_form_
    expected = softmax(np.stack([scipy_predictive(x, X, y, np.array(["a", "b"])) for x in ROWS]))
    np.testing.assert_allclose(
        closed_form.posterior_predictive_proba(estimates, ROWS), expected, rtol=1e-10
    )


def test_partial_fit_on_two_chunks_equals_one_fit(data):
    X, y = data
    whole = ToyPoissonNB(**CONJUGATE).fit(X, y)
    chunks = ToyPoissonNB(**CONJUGATE)
    chunks.partial_fit(X[::2], y[::2], classes=["a", "b"]).partial_fit(X[1::2], y[1::2])
    xr.testing.assert_allclose(
        chunks.closed_form_[["feature_sum", "feature_rate"]],
        whole.closed_form_[["feature_sum", "feature_rate"]],
    )


# -- compare, save and load, leave-one-out, SBC, the evidence ---------------------------------


def test_compare_finds_the_exact_draws_agree_with_the_closed_forms(data):
    X, y = data
    result = bayesgen.compare(ToyPoissonNB(**CONJUGATE).fit(X, y))
    assert result.ok, str(result)
    assert set(result.table["variable"]) == {"class_prob", "feature_rate"}


def test_compare_fails_under_another_class_prior(data):
    X, y = data
    result = bayesgen.compare(ToyPoissonNB(**CONJUGATE).fit(X, y), class_alpha=30.0)
    assert not result.agrees


def test_a_saved_toy_model_loads_and_predicts_the_same(data, tmp_path):
    X, y = data
    est = ToyPoissonNB(**CONJUGATE, draws=200).fit(X, y)
    # bayesgen.load reads the five public estimators; the io layer reads any it is handed.
    loaded = model_files.load(est.save(tmp_path / "poisson.nc"), [ToyPoissonNB])
    assert type(loaded) is ToyPoissonNB and loaded.model_ is FAMILY
    np.testing.assert_array_equal(loaded.predict_proba(X), est.predict_proba(X))


def test_exact_leave_one_out_equals_refitting_without_each_row(data):
    X, y = data
    est = ToyPoissonNB(**CONJUGATE, draws=50).fit(X, y)
    loo = bayesgen.loo_proba(est)
    refits = []
    for i in range(len(y)):
        keep = np.arange(len(y)) != i
        refits.append(softmax(scipy_predictive(X[i], X[keep], y[keep], est.classes_)))
    np.testing.assert_allclose(loo, np.stack(refits), rtol=1e-10)


def test_the_evidence_is_the_product_of_the_sequential_predictives(data):
    X, y = data
    est = ToyPoissonNB(**CONJUGATE, draws=50).fit(X, y)
    classes = est.classes_
    terms = [scipy_predictive(X[0], X[:0], y[:0], classes)[classes.tolist().index(y[0])]]
    for i in range(1, len(y)):
        joint = scipy_predictive(X[i], X[:i], y[:i], classes)
        terms.append(joint[classes.tolist().index(y[i])])
    assert closed_form.log_evidence(est.closed_form_) == pytest.approx(sum(terms), rel=1e-10)


def test_sbc_finds_the_conjugate_posterior_calibrated(data):
    X, y = data
    est = ToyPoissonNB(**CONJUGATE, draws=50).fit(X, y)
    result = bayesgen.sbc(est, n_simulations=40, n_draws=19, n_bins=5, random_seed=3)
    assert result.ok, str(result)
    assert set(result.p_values.index) == {"class_prob", "feature_rate"}


def test_sbc_fails_a_block_whose_posterior_draws_are_off(data, monkeypatch):
    X, y = data
    exact = PoissonFamily.conjugate_draws

    def too_large(self, estimates, rng, sample_shape, dtype, *, posterior):
        draws = exact(self, estimates, rng, sample_shape, dtype, posterior=posterior)
        if posterior:  # the prior's draws (the truth) stay right
            dims, rates = draws["feature_rate"]
            draws["feature_rate"] = (dims, rates * 1.5)
        return draws

    monkeypatch.setattr(PoissonFamily, "conjugate_draws", too_large)
    est = ToyPoissonNB(**CONJUGATE, draws=50).fit(X, y)
    result = bayesgen.sbc(est, n_simulations=40, n_draws=19, n_bins=5, random_seed=3)
    assert not result.ok
    assert result.p_values["feature_rate"] < result.level < result.p_values["class_prob"]


@pytest.mark.slow
def test_nuts_on_the_pymc_model_agrees_with_the_closed_forms(data):
    X, y = data
    est = ToyPoissonNB(draws=500, tune=500, chains=2, random_seed=0, progressbar=False).fit(X, y)
    result = bayesgen.compare(est)
    assert result.ok, str(result)


# -- the page that walks through this block --------------------------------------------------


def test_the_page_includes_this_module_by_markers_that_are_here():
    page = DOC_PAGE.read_text(encoding="utf-8")
    markers = re.findall(r'^:(?:start-after|end-before): "(.+)"$', page, re.MULTILINE)
    assert len(markers) >= 16, "the page includes fewer pieces of this module than it shows"
    source = Path(__file__).read_text(encoding="utf-8")
    for marker in markers:
        assert source.count(f"# {marker}\n") == 1, marker
