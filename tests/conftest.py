"""Shared test set-up.

The environment variables are set at import time, before any test module (or plugin) imports
pytensor or pymc, so that every run shares one compile cache and plots never need a display.

Fixtures for the PyMC-backed tests. Every new PyMC graph costs 10-120 s of numba compilation
with a cold cache, so each model is fitted with NUTS *once per session* (``fits.nuts(name)``)
and every test reads that fit. The data sets are tiny (2-3 classes, 3-4 features) and their
expected posterior means are written out here from the textbook formulas, from X and y
directly, without calling bayesgen.
"""

import os
import sys
from dataclasses import dataclass, field
from os.path import expanduser
from pathlib import Path

_PYTENSOR_CACHE = expanduser("~/.cache/bayesgen/pytensor")
# As the Makefile: the generated numba source beside the cache, not a new file in /tmp for
# every compiled function.
os.environ.setdefault(
    "PYTENSOR_FLAGS",
    f"base_compiledir={_PYTENSOR_CACHE},generated_src_dir={_PYTENSOR_CACHE}/generated_src",
)
os.environ.setdefault("MPLBACKEND", "Agg")

import numpy as np  # noqa: E402 - after the environment set-up above
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

MODELS = ("multinomial_nb", "bernoulli_nb", "categorical_nb", "gda")
NB_MODELS = MODELS[:3]

#: NUTS settings shared by the session fits: enough draws that R-hat is reliably <= 1.01.
NUTS = {"draws": 2000, "tune": 1000, "chains": 2, "prior_draws": 100, "compute_map": False}
#: The GDA normal-inverse-Wishart prior of the fits: strong enough (κ₀ = 0.5, 20 rows a class)
#: that a wrong prior term would move the posterior means by many Monte Carlo errors.
GDA_PRIOR = {
    "mean": [0.5, -0.5, 1.0],
    "kappa": 0.5,
    "dof": 6.0,
    "scale": [[2.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 1.5]],
}
CATEGORICAL_WIDTHS = (2, 3, 4)  # categories per feature: the padding to 4 is exercised


@pytest.fixture(autouse=True)
def _close_open_figures():
    """Close the figures a test leaves open after it (a plotting function hands its figure to
    the caller, who owns it), as matplotlib's own tests do: a later test that checks a
    function closes its own figures (``plt.get_fignums() == []``) must not see them. Under
    pytest-xdist which files share a worker varies from run to run."""
    yield
    pyplot = sys.modules.get("matplotlib.pyplot")  # only where a test imported it
    if pyplot is not None:
        pyplot.close("all")


class SampleCalled(Exception):
    """Raised by :func:`sample_call` in place of sampling."""


@pytest.fixture
def sample_call(monkeypatch):
    """The keyword arguments ``pm.sample`` is called with, without sampling: the call raises
    :class:`SampleCalled` once they are recorded in the dict this fixture returns."""
    import pymc as pm

    seen = {}

    def sample(**kwargs):
        seen.update(kwargs)
        raise SampleCalled

    monkeypatch.setattr(pm, "sample", sample)
    return seen


# --------------------------------------------------------------------------------------------
# Data: X, y and the class labels (sorted, as classes_).


def multinomial_data(seed=0, n=36):
    """Word counts as a DataFrame with string labels (feature and class coords are checked).

    Every data set has unbalanced classes, so that the class MAP (the MLE N_k / N) and the
    posterior mean (N_k + 1) / (N + K) differ.
    """
    rng = np.random.default_rng(seed)
    labels = np.array(["eggs", "ham", "spam"])
    code = np.minimum(np.arange(n) % 4, 2)  # unbalanced, 1 : 1 : 2
    rates = np.array([[3.0, 1.0, 0.5, 0.5], [0.5, 3.0, 1.0, 0.5], [1.0, 0.5, 2.0, 3.0]])
    X = rng.poisson(rates[code])
    y = labels[code]
    return pd.DataFrame(X, columns=["cheap", "meeting", "offer", "win"]), y


def bernoulli_data(seed=1, n=40):
    rng = np.random.default_rng(seed)
    y = (np.arange(n) % 3 > 0).astype(int)  # unbalanced, 1 : 2
    prob = np.array([[0.8, 0.3, 0.5, 0.1, 0.6], [0.2, 0.7, 0.5, 0.4, 0.9]])
    return (rng.random((n, 5)) < prob[y]).astype(float), y


def categorical_data(seed=2, n=45):
    rng = np.random.default_rng(seed)
    y = np.minimum(np.arange(n) % 4, 2)  # unbalanced, 1 : 1 : 2
    columns = []
    for width in CATEGORICAL_WIDTHS:
        probs = rng.dirichlet(np.full(width, 3.0), size=3)
        columns.append([rng.choice(width, p=probs[k]) for k in y])
    X = np.array(columns, dtype=float).T
    X[: len(CATEGORICAL_WIDTHS), range(len(CATEGORICAL_WIDTHS))] = np.array(CATEGORICAL_WIDTHS) - 1
    return X, y


def gaussian_data(seed=3, n=40):
    """Two classes in three correlated dimensions, as a DataFrame with string labels."""
    rng = np.random.default_rng(seed)
    labels = np.array(["setosa", "virginica"])
    code = (np.arange(n) % 3 > 0).astype(int)  # unbalanced, 1 : 2
    means = np.array([[0.0, 0.0, 1.0], [1.5, -1.0, 2.0]])
    root = np.array([[1.0, 0.0, 0.0], [0.5, 0.8, 0.0], [-0.3, 0.2, 0.6]])
    X = means[code] + rng.normal(size=(n, 3)) @ root.T
    return pd.DataFrame(X, columns=["length", "width", "depth"]), labels[code]


DATA = {
    "multinomial_nb": multinomial_data,
    "bernoulli_nb": bernoulli_data,
    "categorical_nb": categorical_data,
    "gda": gaussian_data,
}


# --------------------------------------------------------------------------------------------
# Expected posterior means and sufficient statistics, from the formulas (numpy only).


def expected_statistics(name, X, y, *, alpha=1.0, class_alpha=1.0):
    """Sufficient statistics and conjugate posterior means for ``name`` fitted to X, y.

    Returns a dict with ``classes``, ``class_count`` and ``class_prob`` (N_k + a) / (N + K a);
    for naive Bayes ``feature_count`` and ``feature_prob`` (add-λ); for GDA ``class_mean``,
    ``scatter``, ``mu`` = m_k and ``cov`` = Ψ_N / (ν_N - D - 1) under :data:`GDA_PRIOR`;
    ``sd`` holds the posterior standard deviations of the same parameters.
    """
    X = np.asarray(X, dtype=float)
    classes, codes = np.unique(np.asarray(y), return_inverse=True)
    K, N = len(classes), len(codes)
    class_count = np.array([np.sum(codes == k) for k in range(K)], dtype=float)
    out = {
        "classes": classes,
        "class_count": class_count,
        "class_prob": (class_count + class_alpha) / (N + K * class_alpha),
    }
    sd = {"class_prob": _dirichlet_sd(class_count + class_alpha)}
    out["sd"] = sd
    rows = [X[codes == k] for k in range(K)]
    if name in ("multinomial_nb", "bernoulli_nb"):
        counts = np.array([r.sum(axis=0) for r in rows])
        if name == "multinomial_nb":
            total, n_outcomes = counts.sum(axis=1, keepdims=True), X.shape[1]
        else:
            total, n_outcomes = class_count[:, None], 2
        out["feature_count"] = counts
        out["feature_prob"] = (counts + alpha) / (total + n_outcomes * alpha)
        if name == "multinomial_nb":
            sd["feature_prob"] = _dirichlet_sd(counts + alpha)
        else:  # Beta(n + λ, N_k - n + λ)
            pair = np.stack([counts + alpha, class_count[:, None] - counts + alpha], axis=-1)
            sd["feature_prob"] = _dirichlet_sd(pair)[..., 0]
    elif name == "categorical_nb":
        widths = X.max(axis=0).astype(int) + 1
        counts = np.zeros((K, X.shape[1], widths.max()))
        for k, r in enumerate(rows):
            for j in range(X.shape[1]):
                for c in range(widths[j]):
                    counts[k, j, c] = np.sum(r[:, j] == c)
        prob = (counts + alpha) / (class_count[:, None, None] + widths[None, :, None] * alpha)
        mask = np.arange(widths.max())[None, :] < widths[:, None]
        out.update(feature_count=counts, feature_prob=np.where(mask, prob, 0.0), mask=mask)
        sd["feature_prob"] = _dirichlet_sd(np.where(mask, counts + alpha, 0.0))
    else:
        D = X.shape[1]
        m0, k0 = np.asarray(GDA_PRIOR["mean"]), GDA_PRIOR["kappa"]
        nu0, psi0 = GDA_PRIOR["dof"], np.asarray(GDA_PRIOR["scale"])
        xbar = np.array([r.mean(axis=0) for r in rows])
        scatter = sum((r - r.mean(axis=0)).T @ (r - r.mean(axis=0)) for r in rows)
        kappa = k0 + class_count
        psi = psi0 + scatter
        for k in range(K):
            d = xbar[k] - m0
            psi = psi + k0 * class_count[k] / kappa[k] * np.outer(d, d)
        nu = nu0 + N
        cov = psi / (nu - D - 1)
        out.update(
            class_mean=xbar,
            scatter=scatter,
            mu=(k0 * m0 + class_count[:, None] * xbar) / kappa[:, None],
            cov=cov,
        )
        # μ_k | Σ ~ N(m_k, Σ / κ_k), so Var(μ_k) = E[Σ] / κ_k; Σ ~ inverse-Wishart(ν, Ψ).
        sd["mu"] = np.sqrt(np.diag(cov)[None, :] / kappa[:, None])
        diag = np.diag(psi)
        var_cov = ((nu - D + 1) * psi**2 + (nu - D - 1) * np.outer(diag, diag)) / (
            (nu - D) * (nu - D - 1) ** 2 * (nu - D - 3)
        )
        sd["cov"] = np.sqrt(var_cov)
    return out


def _dirichlet_sd(concentration):
    """Standard deviations of Dirichlet(a) components along the last axis (0 where a = 0)."""
    a0 = concentration.sum(axis=-1, keepdims=True)
    return np.sqrt(concentration * (a0 - concentration) / (a0**2 * (a0 + 1)))


def curvature_range(log_density, z):
    """min and max of −d² log p(z) / dz² (central differences on the even grid ``z``) where
    z holds all but 1e-5 of each tail's mass: how far a transformed density is from the unit
    curvature of N(0, 1), where NUTS's step size is set."""
    values = log_density(z)
    mass = np.exp(values - values.max())
    cumulative = np.cumsum(mass) / mass.sum()
    inside = (cumulative > 1e-5) & (cumulative < 1 - 1e-5)
    step = z[1] - z[0]
    curvature = -(values[2:] - 2 * values[1:-1] + values[:-2]) / step**2
    curvature = curvature[inside[1:-1]]
    return curvature.min(), curvature.max()


# --------------------------------------------------------------------------------------------
# Fitted estimators, one per model and kind, cached for the whole session.


@dataclass
class Case:
    name: str
    X: object
    y: np.ndarray
    expected: dict
    est: object = None
    extra: dict = field(default_factory=dict)

    @property
    def parameters(self):
        return ["class_prob", "mu", "cov"] if self.name == "gda" else ["class_prob", "feature_prob"]


def make_estimator(name, **params):
    import bayesgen

    if name == "gda":
        from bayesgen import NormalInverseWishart

        prior = NormalInverseWishart(
            mean=np.asarray(GDA_PRIOR["mean"]),
            kappa=GDA_PRIOR["kappa"],
            dof=GDA_PRIOR["dof"],
            scale=np.asarray(GDA_PRIOR["scale"]),
        )
        return bayesgen.GaussianDiscriminantAnalysis(prior=prior, cov_prior="conjugate", **params)
    cls = {
        "multinomial_nb": bayesgen.MultinomialNB,
        "bernoulli_nb": bayesgen.BernoulliNB,
        "categorical_nb": bayesgen.CategoricalNB,
    }[name]
    return cls(**params)


class Fits:
    """Lazily fitted estimators, each fitted at most once per session."""

    def __init__(self):
        self._cache = {}

    def _get(self, key, build):
        if key not in self._cache:
            self._cache[key] = build()
        return self._cache[key]

    def nuts(self, name) -> Case:
        """NUTS fit of the model's data set (the expensive one: one PyMC graph per model).

        The multinomial model samples its chains in parallel (the default ``cores``), the
        others one after the other, which is faster for a tiny model on 2 cores.
        """

        def build():
            X, y = DATA[name]()
            cores = None if name == "multinomial_nb" else 1
            est = make_estimator(name, random_seed=20240, cores=cores, **NUTS).fit(X, y)
            return Case(name, X, y, expected_statistics(name, X, y), est)

        return self._get(("nuts", name), build)

    def conjugate(self, name, draws=2000, dtype="float64") -> Case:
        """Exact conjugate draws for the same data (no compilation)."""

        def build():
            X, y = DATA[name]()
            est = make_estimator(
                name,
                inference="conjugate",
                draws=draws,
                chains=2,
                random_seed=7,
                prior_draws=100,
                compute_map=False,
                dtype=dtype,
            ).fit(X, y)
            return Case(name, X, y, expected_statistics(name, X, y), est)

        return self._get(("conjugate", name, draws, dtype), build)

    def map(self, name, lam=0.5, method="closed_form") -> Case:
        """Conjugate draws plus the MAP with α = λ + 1.

        ``method="closed_form"`` is what ``inference="conjugate"`` computes (nothing compiles);
        ``"find_MAP"`` runs PyMC's optimiser on the model, as a NUTS fit does (one find_MAP
        graph per model).
        """

        def build():
            from bayesgen import generative
            from bayesgen.inference import sampling as inference

            X, y = DATA[name]()
            est = make_estimator(
                name,
                alpha=lam + 1.0,
                inference="conjugate",
                draws=100,
                prior_draws=0,
                random_seed=3,
                compute_map=True,
            ).fit(X, y)
            if method == "find_MAP":
                est.map_ = inference.find_map(
                    generative.model_for(est.closed_form_),
                    var_names=generative.TRACE_VARS[name],
                )
            case = Case(name, X, y, expected_statistics(name, X, y, alpha=lam), est)
            case.extra["lam"] = lam
            return case

        return self._get(("map", name, lam, method), build)


@pytest.fixture(scope="session")
def fits():
    return Fits()


@pytest.fixture(params=MODELS)
def nuts_case(request, fits):
    return fits.nuts(request.param)


@pytest.fixture(params=MODELS)
def conjugate_case(request, fits):
    return fits.conjugate(request.param)


# -- headless Chromium ---------------------------------------------------------------------------

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


def offline_chromium(profile: Path):
    """Headless Debian Chromium (driven by selenium) that cannot reach any host: the report
    and the docs must render from their own files. Skips where Chromium is not installed
    (``.ci/run`` installs it, so CI always runs these tests)."""
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip(
            "needs Debian's chromium and chromium-driver (/usr/bin/chromium, "
            "/usr/bin/chromedriver); .ci/run installs them"
        )
    webdriver = pytest.importorskip("selenium.webdriver")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--window-size=1280,1024",
        # No host name resolves, so nothing outside the site can load (IP literals go through
        # the unreachable proxy instead).
        "--host-resolver-rules=MAP * ~NOTFOUND",
        "--proxy-server=http://127.0.0.1:9",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_network_conditions(
        offline=True, latency=0, download_throughput=0, upload_throughput=0
    )
    return driver
