"""Words as a Dirichlet tree: the multinomial averaged over which words depend on the class.

A multinomial document's word counts share one length, so its words are not conditionally
independent features and the naive Bayes average over feature subsets
(:mod:`bayesgen.maths.feature_relevance`) does not apply to them as they are. It does apply to
the same model written as a chain of binary splits (a Dirichlet tree, or stick-breaking).

Order the vocabulary: by the pooled training count, most frequent first, ties by column index
(:func:`word_order`; fixed and deterministic). Node j of the chain asks of each token "is it
word j, or one of the words after j in the order?", with probability θ_kj in class k. A word's
probability is a stick broken in order, p_k(word i) = θ_ki Π_{j<i} (1 − θ_kj), and a
document x, with x_j tokens of word j and r_j = Σ_{i>j} x_i tokens of the words after it,
has likelihood

    p(x | θ_k) = (multinomial coefficient) · Π_j θ_kj^{x_j} (1 − θ_kj)^{r_j}:

node by node, x_j successes and r_j failures. A Dirichlet(α) over the V words is the same law
as independent θ_j ~ Beta(α_j, Σ_{i>j} α_i) (Connor and Mosimann's neutrality; the last node
is degenerate, θ = 1: a token that is none of the words before the last one is the last one).
So the tree with every node class-dependent *is* the multinomial with its Dirichlet(α_k)
prior, and with every node shared it is the pooled Dirichlet; any other subset of shared nodes
is a generalised Dirichlet prior, and depends on the order.

The likelihood factorises over nodes and the node priors are independent, so "node j depends
on the class" (s_j = 1: one θ_kj per class) against "node j is shared" (s_j = 0: one θ_j) is a
two-model choice per node, exactly like a feature of the other blocks. Node j of class k has
the counts (N_kj, R_kj), R_kj = Σ_{i>j} N_ki, and its evidence is the Beta-binomial sequence
probability B(a + N_kj, b + R_kj) / B(a, b), (a, b) = (α_kj, Σ_{i>j} α_ki); the pooled node
sums the classes' counts under the classes' average α. The predictive of a document at node j
is B(a + N + x_j, b + R + r_j) / B(a + N, b + R), and the feature-averaged naive Bayes is

    p(x, y = k | D) ∝ p(y = k | D) Π_j [P_j p₁(x_j, r_j | k, D) + (1 − P_j) p₀(x_j, r_j | D)],

P_j the node's posterior probability of depending on the class. The multinomial coefficient is
common to every class and every subset and cancels in p(y | x, D). A document's nodes after
its last word in the order have x_j = r_j = 0 and factor 1. Exact leave-one-out takes the
row's (x_ij, r_ij) out of its class's and the pooled node counts, as for any other cell.

:class:`WordTreeCells` has the cells' interface (``log_evidence``, ``log_predictive``,
``loo_log_predictive``, ``pooled``, ``subset``, ``n_classes``), so
:func:`~bayesgen.maths.feature_relevance.averaged_log_likelihood` and
:func:`~bayesgen.maths.feature_relevance.averaged_loo_log_likelihood` average over the nodes.
A node's P_j is about the *conditional* rate of word j among the words from j on, so it reads
as "does word j matter" only for the first node; the per-word relevance table keeps the
order-free word-against-the-rest Bayes factor (:func:`~bayesgen.maths.feature_relevance.
word_split_cells`), and averaging uses the tree, which is exact.

Cost: a document touches the nodes up to its last word in the order, so a chunk of m rows
costs O(m K V), like the other blocks' dense cells.

NumPy and SciPy only.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaln

__all__ = ["WordTreeCells", "word_order"]


def word_order(counts) -> np.ndarray:
    """The tree's order of the words: pooled count (over the classes) descending, ties by
    column index.

    Parameters
    ----------
    counts : array-like of shape (K, V)
        Tokens of word v in class k.

    Returns
    -------
    numpy.ndarray of int, shape (V,)
        The column indices, first node first.

    Examples
    --------
    >>> from bayesgen.maths.word_tree import word_order
    >>> word_order([[1, 5, 0, 2], [1, 0, 3, 0]]).tolist()
    [1, 2, 0, 3]
    """
    pooled = np.asarray(counts, dtype=np.float64).sum(axis=0)
    return np.argsort(-pooled, kind="stable")  # stable: equal counts keep the column order


def _after(values: np.ndarray) -> np.ndarray:
    """Σ_{i>j} of the last axis, for every j, summed from the end (no subtraction, so zeros
    after the last non-zero are exactly zero)."""
    out = np.zeros_like(values)
    out[..., :-1] = np.cumsum(values[..., :0:-1], axis=-1)[..., ::-1]
    return out


def _log_beta_ratio(a, b, x, r, degenerate) -> np.ndarray:
    """log B(a + x, b + r) − log B(a, b): x successes and r failures in order under
    Beta(a, b); 0 at the degenerate node (its b and r are 0)."""
    with np.errstate(invalid="ignore"):  # B(a, 0) is infinite there: replaced by 0
        out = betaln(a + x, b + r) - betaln(a, b)
    return np.where(degenerate, 0.0, out)


class WordTreeCells:
    """A multinomial's words as the nodes of a Dirichlet tree (module docstring), one cell
    per (class, node).

    Parameters
    ----------
    counts : array-like of shape (K, V)
        Tokens of word v in class k, the columns in the vocabulary's order.
    prior : array-like broadcastable to (K, V)
        The Dirichlet pseudo-counts α_kv of the words (one row per class where λ is).
    order : array-like of int of shape (V,), optional
        The words' order in the tree, first node first; by default :func:`word_order` of
        ``counts``. Keep it when the counts change (leaving a row out, say): another order is
        another model.
    pooled_prior : array-like of shape (V,), optional
        The shared model's α; by default ``prior`` averaged over the classes.
    nodes : array-like of int, optional
        The positions in ``order`` of the nodes these cells hold (all V by default; the last is
        degenerate, its factors 1).

    Examples
    --------
    With every node class-dependent the tree is the multinomial with its Dirichlet prior: the
    evidences of the nodes add up to the Dirichlet-multinomial one (the same sequence of
    tokens, no multinomial coefficient).

    >>> import numpy as np
    >>> from scipy.special import gammaln
    >>> from bayesgen.maths.word_tree import WordTreeCells
    >>> counts, alpha = np.array([[3.0, 1.0, 2.0]]), np.array([0.5, 1.0, 2.0])
    >>> dirichlet = gammaln(alpha.sum()) - gammaln(alpha.sum() + counts.sum())
    >>> dirichlet += (gammaln(counts + alpha) - gammaln(alpha)).sum()
    >>> bool(np.isclose(WordTreeCells(counts, alpha).log_evidence().sum(), dirichlet))
    True
    """

    def __init__(self, counts, prior, order=None, pooled_prior=None, nodes=None):
        self.counts = np.asarray(counts, dtype=np.float64)
        self.prior = np.broadcast_to(np.asarray(prior, dtype=np.float64), self.counts.shape)
        vocabulary = self.counts.shape[1]
        self.order = word_order(self.counts) if order is None else np.asarray(order, dtype=int)
        if sorted(self.order.tolist()) != list(range(vocabulary)):
            raise ValueError(
                f"order: expected a permutation of the {vocabulary} word columns; got "
                f"{self.order.tolist()!r}."
            )
        self.pooled_prior = (
            self.prior.mean(axis=0)
            if pooled_prior is None
            else np.broadcast_to(np.asarray(pooled_prior, dtype=np.float64), (vocabulary,))
        )
        self.nodes = np.arange(vocabulary) if nodes is None else np.asarray(nodes, dtype=int)
        self.n_classes = self.counts.shape[0]
        word, rest = self._split(self.counts)
        prior_word, prior_rest = self._split(self.prior)
        # The node's Beta posterior (a, b) per class; the degenerate last node has b = 0.
        self._a, self._b = word + prior_word, rest + prior_rest
        self._degenerate = np.broadcast_to(prior_rest == 0.0, self._a.shape)
        self._prior_a, self._prior_b = prior_word, prior_rest

    def _split(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x_j, r_j) of every node of ``values`` (…, V, columns in the vocabulary's order):
        the word's own value and the sum over the words after it, at ``nodes``."""
        ordered = values[..., self.order]
        return ordered[..., self.nodes], _after(ordered)[..., self.nodes]

    def subset(self, features) -> WordTreeCells:
        """The cells of the nodes ``features`` (indices into these cells' nodes) alone; a
        document's r_j still counts every word after j."""
        return WordTreeCells(
            self.counts, self.prior, self.order, self.pooled_prior, self.nodes[features]
        )

    def pooled(self) -> WordTreeCells:
        """The shared model: every class's tokens in one cell per node, under the pooled α."""
        return WordTreeCells(
            self.counts.sum(axis=0, keepdims=True),
            self.pooled_prior[None],
            self.order,
            self.pooled_prior,
            self.nodes,
        )

    def log_evidence(self) -> np.ndarray:
        """log p(the node's tokens of class k), shape (K, nodes): the Beta-binomial sequence
        probability log B(a + N_kj, b + R_kj) − log B(a, b)."""
        return _log_beta_ratio(
            self._prior_a,
            self._prior_b,
            self._a - self._prior_a,
            self._b - self._prior_b,
            self._degenerate,
        )

    def log_predictive(self, X) -> np.ndarray:
        """log p(x_j, r_j | class k, data) of word-count rows X (n, V), shape (n, K, nodes)."""
        x, r = self._split(np.asarray(X, dtype=np.float64))
        return _log_beta_ratio(
            self._a[None], self._b[None], x[:, None], r[:, None], self._degenerate[None]
        )

    def loo_log_predictive(self, X, y_codes) -> np.ndarray:
        """:meth:`log_predictive` with each row's (x_j, r_j) left out of its own class's
        node counts."""
        x, r = self._split(np.asarray(X, dtype=np.float64))
        y_codes = np.asarray(y_codes, dtype=np.int64)
        out = self.log_predictive(X)
        a, b = self._a[y_codes], self._b[y_codes]
        own = _log_beta_ratio(a - x, b - r, x, r, self._degenerate[y_codes])
        out[np.arange(x.shape[0]), y_codes] = own
        return out
