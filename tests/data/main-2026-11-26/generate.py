"""Freeze what bayesgen computed at commit 2671bb0 (main on 2026-11-26), before the package
was split into layer folders, so that ``tests/test_frozen_numbers.py`` can prove the
restructure changed no number.

Run it against that commit, not the current code (see README.md)::

    git clone -q <repository> /tmp/frozen && git -C /tmp/frozen checkout -q 2671bb0
    PYTHONPATH=/tmp/frozen python tests/data/main-2026-11-26/generate.py

It uses only the public API that the restructure keeps: the functions of
``bayesgen.closed_form``, the five estimators, ``save``, ``bayesgen.load``, ``predict_proba``,
``idata_`` and ``closed_form_``. The test imports this file for ``CASES`` and the functions
below, so the frozen files and the recomputation are made by the very same calls.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import xarray as xr

HERE = Path(__file__).resolve().parent
#: The commit whose numbers are frozen (main on 2026-11-26, before the layer folders).
COMMIT = "2671bb01665f568f337bc8781be794319792be95"

#: Exact conjugate draws: no NUTS, nothing compiled. compute_map=False and prior_draws=0 keep
#: the fits to what is frozen (the conjugate posterior draws and the predictions).
CONJUGATE = {
    "inference": "conjugate",
    "chains": 2,
    "draws": 50,
    "prior_draws": 0,
    "compute_map": False,
    "random_seed": 20261126,
    "progressbar": False,
}

#: model -> the estimator (a name in ``bayesgen``), its settings, and the keywords of the
#: ``bayesgen.closed_form`` function of the same name (the same prior where it has one).
CASES = {
    "multinomial_nb": {
        "estimator": "MultinomialNB",
        "params": {"alpha": 0.5, "class_alpha": 2.0},
        "closed_form": {"alpha": 0.5, "class_alpha": 2.0},
    },
    # A Gamma(2, 1) hyperprior on λ: the estimator samples λ by quadrature, then θ | λ. The
    # closed-form function has no hyperprior: it is frozen at λ = 1 (the base the hyperprior
    # integrates over); ``closed_form_`` of the fit holds λ's posterior.
    "bernoulli_nb": {
        "estimator": "BernoulliNB",
        "params": {"alpha_prior": (2.0, 1.0)},
        "closed_form": {},
    },
    "categorical_nb": {
        "estimator": "CategoricalNB",
        "params": {"alpha": 1.0, "class_alpha": 1.5},
        "closed_form": {"alpha": 1.0, "class_alpha": 1.5},
    },
    "gda": {
        "estimator": "GaussianDiscriminantAnalysis",
        "params": {},
        "closed_form": {},
    },
    "qda": {
        "estimator": "QuadraticDiscriminantAnalysis",
        "params": {"class_alpha": 2.0},
        "closed_form": {"class_alpha": 2.0},
    },
}

MODELS = tuple(CASES)
#: Rows held out of the fit, predicted by ``predict_proba``.
N_NEW = 6


# -- the data (made once, stored in inputs.npz: the test reads them, never remakes them) ------


def make_data(model: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Rows and string labels of one model, the last ``N_NEW`` rows to predict."""
    if model == "multinomial_nb":  # 48 + 6 rows, 5 words, 3 classes 1 : 1 : 2
        labels = np.array(["eggs", "ham", "spam"])
        code = np.minimum(np.arange(48 + N_NEW) % 4, 2)
        rates = np.array(
            [[3.0, 1.0, 0.5, 0.5, 1.0], [0.5, 3.0, 1.0, 0.5, 0.2], [1.0, 0.5, 2.0, 3.0, 0.1]]
        )
        return rng.poisson(rates[code]).astype(np.int64), labels[code]
    if model == "bernoulli_nb":  # 30 + 6 rows, 6 binary features, 2 classes 1 : 2
        labels = np.array(["no", "yes"])
        code = (np.arange(30 + N_NEW) % 3 > 0).astype(int)
        prob = np.array([[0.8, 0.3, 0.5, 0.1, 0.6, 0.05], [0.2, 0.7, 0.5, 0.4, 0.9, 0.02]])
        return (rng.random((code.size, 6)) < prob[code]).astype(np.int64), labels[code]
    if model == "categorical_nb":  # 45 + 6 rows, 3 features of 2, 3, 4 categories, 3 classes
        labels = np.array(["a", "b", "c"])
        code = np.minimum(np.arange(45 + N_NEW) % 4, 2)
        columns = []
        for width in (2, 3, 4):
            probs = rng.dirichlet(np.full(width, 3.0), size=3)
            columns.append([rng.choice(width, p=probs[k]) for k in code])
        X = np.array(columns, dtype=np.int64).T
        X[:3, [0, 1, 2]] = [1, 2, 3]  # every category seen, so K_n = 2, 3, 4
        return X, labels[code]
    if model == "gda":  # 36 + 6 rows, 3 features, 3 classes, one covariance
        labels = np.array(["left", "middle", "right"])
        code = np.arange(36 + N_NEW) % 3
        means = np.array([[0.0, 0.0, 1.0], [2.0, 1.0, 0.0], [0.5, 3.0, -1.0]])
        cov = np.array([[1.0, 0.3, 0.0], [0.3, 1.0, 0.2], [0.0, 0.2, 0.5]])
        noise = rng.multivariate_normal(np.zeros(3), cov, size=code.size)
        return means[code] + noise, labels[code]
    if model == "qda":  # 40 + 6 rows, 2 features, 2 classes, one covariance each
        labels = np.array(["p", "q"])
        code = (np.arange(40 + N_NEW) % 5 > 1).astype(int)
        means = np.array([[0.0, 1.0], [2.0, -1.0]])
        scales = np.array([[[1.0, 0.6], [0.6, 1.0]], [[0.5, -0.2], [-0.2, 2.0]]])
        noise = np.stack([rng.multivariate_normal(np.zeros(2), scales[k]) for k in code])
        return means[code] + noise, labels[code]
    raise ValueError(model)


def read_inputs(folder: Path = HERE) -> dict[str, dict[str, np.ndarray]]:
    """model -> {"X", "y", "X_new"} from ``inputs.npz``."""
    with np.load(folder / "inputs.npz") as stored:
        return {m: {k: stored[f"{m}.{k}"] for k in ("X", "y", "X_new")} for m in MODELS}


# -- what is frozen: each a call of the public API ----------------------------------------------


def closed_form(model: str, X, y) -> xr.Dataset:
    """``bayesgen.closed_form.<model>(X, y, ...)``."""
    from bayesgen import closed_form as cf

    return getattr(cf, model)(X, y, **CASES[model]["closed_form"])


def conjugate_fit(model: str, X, y):
    """The estimator fitted with exact conjugate draws, for the fixed seed."""
    import bayesgen

    cls = getattr(bayesgen, CASES[model]["estimator"])
    return cls(**CASES[model]["params"], **CONJUGATE).fit(X, y)


def log_evidences(model: str, X, y) -> dict[str, float]:
    """``log_evidence`` of the closed-form Dataset and of the fit's ``closed_form_`` (under
    ``alpha_prior`` the latter integrates λ out)."""
    from bayesgen import closed_form as cf

    return {
        "closed_form": float(cf.log_evidence(closed_form(model, X, y))),
        "fit": float(cf.log_evidence(conjugate_fit(model, X, y).closed_form_)),
    }


def fit_closed_form_file(model: str) -> str:
    """The file holding the fit's ``closed_form_``: its own under a hyperprior on λ, else the
    closed-form function's, which it equals."""
    if "alpha_prior" in CASES[model]["params"]:
        return f"{model}-fit-closed-form.nc"
    return f"{model}-closed-form.nc"


def posterior_arrays(est) -> dict[str, np.ndarray]:
    """The posterior draws, variable by variable, each of dims (chain, draw, ...)."""
    posterior = est.idata_["posterior"]
    return {name: posterior[name].values for name in posterior.data_vars}


# -- writing -------------------------------------------------------------------------------------


def check_source() -> None:
    """Refuse to write unless ``bayesgen`` is imported from a clean checkout of ``COMMIT``."""
    import subprocess

    import bayesgen

    root = Path(bayesgen.__file__).resolve().parents[1]
    git = ["git", "-C", str(root)]
    head = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True).stdout
    changes = subprocess.run(
        [*git, "status", "--porcelain", "--", "bayesgen"], capture_output=True, text=True
    ).stdout
    if head.strip() != COMMIT or changes:
        sys.exit(
            f"bayesgen is imported from {root} (commit {head.strip() or '?'}"
            f"{', with local changes' if changes else ''}); run this from a clean checkout of "
            f"{COMMIT[:7]}: PYTHONPATH=<that checkout> python {Path(__file__).name}"
        )
    print(f"bayesgen from {bayesgen.__file__} at {COMMIT[:7]}", file=sys.stderr)


def main() -> None:
    check_source()
    rng = np.random.default_rng(2026_11_26)
    inputs = {}
    for model in MODELS:
        X, y = make_data(model, rng)
        inputs |= {f"{model}.X": X[:-N_NEW], f"{model}.y": y[:-N_NEW]}
        inputs |= {f"{model}.X_new": X[-N_NEW:]}
    np.savez(HERE / "inputs.npz", **inputs)
    data = read_inputs()

    evidence = {}
    for model in MODELS:
        X, y, X_new = data[model]["X"], data[model]["y"], data[model]["X_new"]
        estimates = closed_form(model, X, y)
        estimates.to_netcdf(HERE / f"{model}-closed-form.nc", engine="netcdf4")
        est = conjugate_fit(model, X, y)
        # Saved before idata_ is read: where the fit has not drawn yet (multinomial,
        # categorical, QDA) the file holds the closed form, seed and layout, and bayesgen.load
        # redraws; the hyperprior and GDA fits draw at fit, and their files hold the draws.
        est.save(HERE / f"{model}-model.nc")
        if fit_closed_form_file(model) == f"{model}-closed-form.nc":
            assert est.closed_form_.identical(estimates), model
        else:
            est.closed_form_.to_netcdf(HERE / fit_closed_form_file(model), engine="netcdf4")
        np.save(HERE / f"{model}-proba.npy", est.predict_proba(X_new))
        np.savez_compressed(HERE / f"{model}-posterior.npz", **posterior_arrays(est))
        evidence[model] = log_evidences(model, X, y)
    # json writes repr(float), the shortest string that reads back as the same float64.
    (HERE / "log-evidence.json").write_text(json.dumps(evidence, indent=2) + "\n")


if __name__ == "__main__":
    main()
