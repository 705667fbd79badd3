"""The coordinates NUTS samples the Dirichlet compound multinomial in: log s_k and log-ratio
coordinates of m_k (:class:`StandardisedLogRatio`), each centred near the mode of the density
NUTS samples and scaled by the inverse square root of the curvature there, so that NUTS sees
roughly N(0, 1), nearly uncorrelated coordinates from its first step.

The model keeps its random variables s and m and their priors; only their transforms
change (with exact log-Jacobians), so the posterior and ``find_MAP`` stay what they were.

The curvatures come from the point fit α̂ = ŝ m̂ and the count histograms (Minka 2000,
"Estimating a Dirichlet distribution"): with D_kw = Σ_c h(c) [ψ(α + c) − ψ(α)] and
Q_kw = Σ_c h(c) [ψ'(α) − ψ'(α + c)] > 0 the digamma and trigamma sums of a word's levels
(h its histogram), the posterior of m_k is close to a Dirichlet(a_w + α_w D_w), whose log
coordinates have the curvature a_w + α_w² Q_w (a the Dirichlet prior; the likelihood's own
curvature α D − α² Q cancels the Lagrange term α D of the simplex); log s_k, m_k held fixed,
has the curvature Σ_w α_w² Q_w − s² Z + shape − 1 at the mode, Z = Σ_n g(n)
[ψ'(s) − ψ'(s + n)] the lengths' trigamma sum (g their histogram).
"""

from __future__ import annotations

import numpy as np
import pytensor.tensor as pt
from pymc.logprob.transforms import Transform
from scipy import special

from bayesgen.families.gamma_transforms_pymc import all_positive
from bayesgen.maths.dirichlet_multinomial import CountHistograms

#: The least curvature a coordinate is scaled by (a posterior SD of at most 1 on the log
#: scale): where the data barely inform a coordinate its curvature can be tiny or, off the
#: mode's basin, negative, and NUTS's mass-matrix adaptation handles wide coordinates well.
_LEAST_CURVATURE = 1.0


def curvature_sums(histograms: CountHistograms, concentration: np.ndarray, mean: np.ndarray):
    """The digamma and trigamma sums of the histograms at α = s m.

    Parameters
    ----------
    histograms : CountHistograms
    concentration : numpy.ndarray
        s, (class,).
    mean : numpy.ndarray
        m, (class, feature), positive.

    Returns
    -------
    word_first, word_second : numpy.ndarray
        D and Q (class, feature): Σ_c h(c) [ψ(α + c) − ψ(α)] and Σ_c h(c) [ψ'(α) − ψ'(α + c)].
    length_first, length_second : numpy.ndarray
        B and Z (class,): Σ_n g(n) [ψ(s + n) − ψ(s)] and Σ_n g(n) [ψ'(s) − ψ'(s + n)].
    """
    n_classes, n_features = mean.shape
    cell = histograms.word_class * n_features + histograms.word_feature
    alpha = (concentration[:, None] * mean).ravel()[cell]
    level, weight = histograms.word_level, histograms.word_weight
    first = weight * (special.digamma(alpha + level) - special.digamma(alpha))
    second = weight * (special.polygamma(1, alpha) - special.polygamma(1, alpha + level))
    size = n_classes * n_features
    word_first = np.bincount(cell, first, minlength=size).reshape(n_classes, n_features)
    word_second = np.bincount(cell, second, minlength=size).reshape(n_classes, n_features)
    total = concentration[histograms.length_class]
    level = histograms.length_level
    weight, length_class = histograms.length_weight, histograms.length_class
    first = weight * (special.digamma(total + level) - special.digamma(total))
    second = weight * (special.polygamma(1, total) - special.polygamma(1, total + level))
    length_first = np.bincount(length_class, first, minlength=n_classes)
    length_second = np.bincount(length_class, second, minlength=n_classes)
    return word_first, word_second, length_first, length_second


def concentration_standardisation(
    histograms: CountHistograms, concentration, mean, *, shape: float, rate: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The constants of :class:`~bayesgen.families.shared_pymc.StandardisedLog` for log s
    (class,) under a Gamma(``shape``, ``rate``) prior ((1, 0) for the flat one), from
    (``concentration``, ``mean``) near the mode.

    With m held fixed, the scale is the inverse square root of the curvature of the density
    NUTS samples in u = log s (log-Jacobian included), −d²/du² = Σ_w α_w² Q_w − Σ_w α_w D_w
    + s B − s² Z + rate s, and the location is one Newton step from log s with its gradient
    Σ_w α_w D_w − s B + shape − rate s. (At the point fit with m = m̂ the gradient is 1, the
    log-Jacobian's, and the curvature Σ α² Q − s² Z + shape − 1.)
    """
    concentration = np.asarray(concentration, dtype=np.float64)
    mean = np.asarray(mean, dtype=np.float64)
    word_first, word_second, length_first, length_second = curvature_sums(
        histograms, concentration, mean
    )
    alpha = concentration[:, None] * mean
    counts = (alpha * word_first).sum(axis=1) - concentration * length_first
    gradient = counts + shape - rate * concentration
    curvature = (alpha**2 * word_second).sum(axis=1) - concentration**2 * length_second
    curvature = np.maximum(curvature - counts + rate * concentration, _LEAST_CURVATURE)
    log_scale = -0.5 * np.log(curvature)
    return np.log(concentration) + gradient / curvature, np.exp(log_scale), log_scale


def _mean_counts(histograms: CountHistograms, concentration, mean, prior, pooled: bool):
    """c_w = a_w + α_w D_w, the counts of the Dirichlet m_k is taken as (its mode), and
    a_w + α_w² Q_w, its curvature in log coordinates (see the module's docstring)."""
    concentration = np.asarray(concentration, dtype=np.float64)
    mean = np.asarray(mean, dtype=np.float64)
    word_first, word_second, _, _ = curvature_sums(histograms, concentration, mean)
    alpha = concentration[:, None] * mean
    counts, information = alpha * word_first, alpha**2 * word_second
    if pooled:
        counts, information = counts.sum(axis=0), information.sum(axis=0)
    return prior + counts, np.maximum(prior + information, _LEAST_CURVATURE)


def mean_standardisation(
    histograms: CountHistograms, concentration, mean, *, prior: np.ndarray, pooled: bool
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The constants of :class:`StandardisedLogRatio` for m (class, feature), or for the one
    shared mean (feature,) where ``pooled``, at the point fit (``concentration``, ``mean``)
    under the Dirichlet(``prior``) prior.

    m_k is taken as Dirichlet(c̃) with c̃_w = a_w + α_w D_w for its mode and curvature
    c_w = a_w + α_w² Q_w in log coordinates (see the module's docstring), that is as the
    normalisation of independent G_w whose logs have their modes at log c̃_w and variances
    1 / c_w. The weights are w = c / Σ c, so the reference Σ w log m has the least variance
    (1 / Σ c); u_j = log m_j − Σ w log m then has its mode at log c̃_j − Σ w log c̃, and the
    scale is 1 / √c_w (the transform accounts for the covariance −1 / Σ c of the u's).

    Returns
    -------
    location, scale, log_scale, weight : numpy.ndarray
        Each of m's shape; the reference word's column (where the weights summed over the
        classes are largest) is not used but the weight's.
    """
    counts, curvature = _mean_counts(histograms, concentration, mean, prior, pooled)
    weight = curvature / curvature.sum(axis=-1, keepdims=True)
    log_counts = np.log(counts)
    location = log_counts - np.sum(weight * log_counts, axis=-1, keepdims=True)
    log_scale = -0.5 * np.log(curvature)
    return location, np.exp(log_scale), log_scale, weight


def sampling_start_mean(
    histograms: CountHistograms, concentration, mean, *, prior: np.ndarray, pooled: bool
) -> np.ndarray:
    """Where NUTS starts m: c / Σ c, c_w = a_w + α_w D_w (z = 0 in :class:`StandardisedLogRatio`).

    The mode of the density NUTS samples, which carries the simplex's log-Jacobian Σ log m,
    rather than the point fit m̂ (the mode without it): both are about n_w / N for a frequent
    word, but a word the prior leaves at m̂ = 0 (a_w = 1, never seen) has its sampled mode at
    about 1 / Σ c: started at m̂ (moved inside the simplex to 10⁻⁸), such a word would be
    many standard deviations from its mode.
    """
    counts, _ = _mean_counts(histograms, concentration, mean, prior, pooled)
    return counts / counts.sum(axis=-1, keepdims=True)


class StandardisedLogRatio(Transform):
    """m = softmax(u): u_j = log m_j − Σ_i w_i log m_i (Σ w = 1), whose coordinate at the
    reference word r, the largest weight (summed over any leading axes), is implied by
    Σ w u = 0 and left out; the others are sampled as standardised coordinates z.

    The sampled coordinates z map to u by u = location + scale ⊙ (I − γ q qᵀ) z, q = √w
    (free words), γ = 1 / (1 + √w_r): under independent log G_j of variances 1 / c_j,
    u − location has the covariance diag(1 / c) − 11ᵀ / Σ c, which this square root of a
    rank-one update whitens (scale = 1 / √c); scaled by the marginal SDs alone, the one
    direction where every frequent word moves against the reference kept a curvature of
    1 / w_r (16 for 2 x 2,000 words).

    PyMC's simplex transform is the case of equal weights, r the last word and no scaling.
    With words of very different counts it is badly conditioned: the implied coordinate is
    −Σ_j y_j, so moving every coordinate by one standard deviation moves the last word's by
    Σ_j σ_j, and a rare last word makes that one direction stiff (posterior curvature about
    Σ_j 1 / c_j, 1,260 for 2 x 2,000 words, against 1 elsewhere): NUTS needed steps of 0.015
    and trees of depth 8 whatever the scaling. Weighted by the curvature, the reference is
    precise and the implied coordinate moves by at most w_j / w_r ≤ 1 of each other's.

    The log-Jacobian of (m_j)_{j ≠ r} in u is Σ_i log m_i − log w_r (equal weights: PyMC's
    Σ log m + log K), plus Σ log scale + log √w_r for the linear map (1 − γ |q|² = √w_r).
    The constants (:func:`mean_standardisation`) are tensors free of random variables
    (``pm.Data``), so one compiled graph serves every corpus of the same shape.
    """

    name = "standardised_log_ratio"
    ndim_supp = 1

    def __init__(self, location, scale, log_scale, weight):
        self.weight = pt.as_tensor_variable(weight)
        leading = tuple(range(self.weight.ndim - 1))
        pooled_weight = pt.sum(self.weight, axis=leading) if leading else self.weight
        self.reference = pt.argmax(pooled_weight)
        self.location = self._free(pt.as_tensor_variable(location))
        self.scale = self._free(pt.as_tensor_variable(scale))
        self.log_scale = self._free(pt.as_tensor_variable(log_scale))

    def contains(self, value) -> bool:
        """Whether the word probabilities ``value`` (NumPy) have a finite image: all > 0."""
        return all_positive(value)

    def _free(self, full):
        """``full`` without the reference word's column (the last axis)."""
        r = self.reference
        return pt.concatenate([full[..., :r], full[..., r + 1 :]], axis=-1)

    def _shrinkage(self):
        """√w of the free words, and γ = 1 / (1 + √w_r) and the reference's log weight."""
        log_reference_weight = pt.log(self.weight[..., self.reference])[..., None]
        root_reference = pt.exp(0.5 * log_reference_weight)
        return pt.sqrt(self._free(self.weight)), 1.0 / (1.0 + root_reference), log_reference_weight

    def _log_ratio(self, value):
        """u, every word's, from the sampled coordinates ``value``."""
        r = self.reference
        root_weight, gamma, _ = self._shrinkage()
        shrunk = value - gamma * root_weight * pt.sum(root_weight * value, axis=-1, keepdims=True)
        free = self.location + self.scale * shrunk
        implied = -pt.sum(self._free(self.weight) * free, axis=-1, keepdims=True)
        implied = implied / self.weight[..., r : r + 1]
        return pt.concatenate([free[..., :r], implied, free[..., r:]], axis=-1)

    def forward(self, value, *inputs):
        log_value = pt.log(value)
        ratio = log_value - pt.sum(self.weight * log_value, axis=-1, keepdims=True)
        scaled = (self._free(ratio) - self.location) / self.scale
        root_weight, gamma, log_reference_weight = self._shrinkage()
        # (I − γ q qᵀ)⁻¹ = I + δ q qᵀ, δ = γ / √w_r.
        delta = gamma * pt.exp(-0.5 * log_reference_weight)
        return scaled + delta * root_weight * pt.sum(root_weight * scaled, axis=-1, keepdims=True)

    def backward(self, value, *inputs):
        return pt.special.softmax(self._log_ratio(value), axis=-1)

    def log_jac_det(self, value, *inputs):
        ratio = self._log_ratio(value)
        log_value = ratio - pt.logsumexp(ratio, axis=-1, keepdims=True)
        _, _, log_reference_weight = self._shrinkage()
        return (
            pt.sum(self.log_scale, axis=-1)
            + pt.sum(log_value, axis=-1)
            - 0.5 * log_reference_weight[..., 0]
        )
