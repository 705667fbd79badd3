"""The multinomial averaged over which words depend on the class, on its Dirichlet tree
(bayesgen.maths.word_tree, bayesgen.estimators.feature_relevance).

Every expected value is written out here: the Dirichlet-multinomial predictive from gammaln of
the class counts + α, and a brute-force average over all 2^V node subsets whose evidences and
predictives come from a token-by-token Pólya urn of the tree, not from Beta functions."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from scipy.special import gammaln, logsumexp

import bayesgen
from bayesgen.estimators import feature_relevance as relevance
from bayesgen.maths import feature_relevance as fr
from bayesgen.maths.word_tree import WordTreeCells, word_order

CONJUGATE = {"inference": "conjugate", "compute_map": False, "random_seed": 0}
ALMOST_SURE = np.nextafter(1.0, 0.0)  # every node class-dependent: the multinomial itself
ALMOST_NEVER = 1e-300  # every node shared: one word distribution for all classes


def tiny_corpus(seed=0, n_docs=12, n_classes=3):
    """A few documents of 6 words, class-dependent rates, a tie in the pooled counts and a
    word never seen (so the order's tie rule and the degenerate end are both exercised)."""
    rng = np.random.default_rng(seed)
    y = np.arange(n_docs) % n_classes
    rates = np.array([[2.0, 0.5, 0.5, 1.0, 0.3, 0.0], [0.5, 2.0, 0.5, 1.0, 0.3, 0.0]])
    rates = np.vstack([rates, [[0.5, 0.5, 2.0, 1.0, 0.3, 0.0]]])[:n_classes]
    X = rng.poisson(rates[y]).astype(float)
    return X, y


def order_by_rule(X):
    """Pooled count descending, ties by column index, written out."""
    pooled = X.sum(axis=0)
    return sorted(range(X.shape[1]), key=lambda v: (-pooled[v], v))


def dirichlet_multinomial_log_predictive(x, counts, alpha):
    """log p(x | class) of one document under Dirichlet(counts + α), without the multinomial
    coefficient (the sequence of its tokens), per class: (K,)."""
    a = counts + alpha
    return (
        gammaln(a.sum(axis=1))
        - gammaln(a.sum(axis=1) + x.sum())
        + (gammaln(a + x) - gammaln(a)).sum(axis=1)
    )


# -- the urn: the tree model of one subset, token by token ---------------------------------------


class TreeUrn:
    """The Dirichlet tree with node j class-dependent where ``dependent[j]`` and shared
    otherwise, as a Pólya urn: a token of word w (at position p of the order) passes the nodes
    before p ("not that word") and stops at p; each node's probability of "this word" is
    (a + N) / (a + b + N + R) from its urn's counts so far."""

    def __init__(self, alpha, order, dependent):
        self.order = list(order)
        self.position = {word: p for p, word in enumerate(self.order)}
        ordered = np.asarray(alpha, dtype=float)[:, self.order]
        rest = np.array([[row[p + 1 :].sum() for p in range(row.size)] for row in ordered])
        self.a, self.b = ordered, rest  # (K, V) per class
        self.pooled_a, self.pooled_b = ordered.mean(axis=0), rest.mean(axis=0)
        self.dependent = np.asarray(dependent, dtype=bool)
        n_classes, vocabulary = ordered.shape
        self.hits = np.zeros((n_classes, vocabulary))
        self.passes = np.zeros((n_classes, vocabulary))

    def _node(self, k, j):
        if self.dependent[j]:
            return self.a[k, j], self.b[k, j], self.hits[k, j], self.passes[k, j]
        return self.pooled_a[j], self.pooled_b[j], self.hits[:, j].sum(), self.passes[:, j].sum()

    def token_log_prob(self, k, word):
        p = self.position[word]
        total = 0.0
        for j in range(p + 1):
            if j == len(self.order) - 1:
                break  # the last node is certain: none of the words before it
            a, b, hits, passes = self._node(k, j)
            stop = (a + hits) / (a + b + hits + passes)
            total += np.log(stop if j == p else 1.0 - stop)
        return total

    def add(self, k, word):
        p = self.position[word]
        self.passes[k, :p] += 1.0
        self.hits[k, p] += 1.0

    def document_log_prob(self, k, x, *, keep: bool):
        """log p(x's tokens | class k, what the urn has seen), adding them to it if ``keep``."""
        seen = (self.hits.copy(), self.passes.copy())
        total = 0.0
        for word in np.repeat(np.arange(x.size), x.astype(int)):
            total += self.token_log_prob(k, word)
            self.add(k, word)
        if not keep:
            self.hits, self.passes = seen
        return total


def brute_force_log_likelihood(X, y, alpha, rho, new_rows, order):
    """log Σ_s p(s | D) p(x | k, D, s) of every new row and class, over all 2^V subsets s of
    class-dependent nodes, from the urn; the posterior p(s | D) ∝ ρ^|s| (1 − ρ)^(V − |s|)
    times the evidence of the training documents."""
    n_classes, vocabulary = alpha.shape
    log_weights, predictive = [], []
    for dependent in itertools.product([False, True], repeat=vocabulary):
        urn = TreeUrn(alpha, order, dependent)
        evidence = sum(urn.document_log_prob(k, x, keep=True) for x, k in zip(X, y, strict=True))
        n_dependent = sum(dependent)
        prior = n_dependent * np.log(rho) + (vocabulary - n_dependent) * np.log1p(-rho)
        log_weights.append(prior + evidence)
        predictive.append(
            [[urn.document_log_prob(k, x, keep=False) for k in range(n_classes)] for x in new_rows]
        )
    log_weights = np.array(log_weights)[:, None, None]
    return logsumexp(log_weights + np.array(predictive), axis=0) - logsumexp(log_weights)


# -- (1) the limits: every node dependent is the multinomial, every node shared the pool ----------


def test_every_node_dependent_is_the_dirichlet_multinomial_evidence():
    X, y = tiny_corpus()
    alpha = np.array([[0.5, 1.0, 2.0, 0.7, 1.3, 0.9]] * 3) * np.array([[1.0], [1.5], [0.6]])
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    cells = WordTreeCells(counts, alpha)
    a = counts + alpha
    expected = (
        gammaln(alpha.sum(axis=1))
        - gammaln(a.sum(axis=1))
        + (gammaln(a) - gammaln(alpha)).sum(axis=1)
    )
    np.testing.assert_allclose(cells.log_evidence().sum(axis=1), expected, rtol=1e-12)


def test_averaged_predictive_at_rho_one_is_the_multinomial_posterior_predictive():
    X, y = tiny_corpus()
    est = bayesgen.MultinomialNB(alpha=0.7, **CONJUGATE).fit(X, y)
    new = np.array([[3, 0, 1, 2, 0, 0], [0, 0, 0, 0, 0, 4], [1, 1, 1, 1, 1, 1]], dtype=float)
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    class_prob = (np.bincount(y) + 1.0) / (y.size + 3.0)  # class_alpha = 1
    joint = np.log(class_prob) + np.array(
        [dirichlet_multinomial_log_predictive(x, counts, 0.7) for x in new]
    )
    expected = np.exp(joint - logsumexp(joint, axis=1, keepdims=True))
    got = est.average_features_predict_proba(new, prior_inclusion=ALMOST_SURE)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)


def test_averaged_loo_at_rho_one_is_the_multinomial_leave_one_out():
    X, y = tiny_corpus()
    est = bayesgen.MultinomialNB(alpha=0.7, **CONJUGATE).fit(X, y)
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    expected = []
    for i, (x, c) in enumerate(zip(X, y, strict=True)):
        held = counts.copy()
        held[c] -= x
        class_count = np.bincount(np.delete(y, i), minlength=3)
        joint = np.log((class_count + 1.0) / (y.size - 1 + 3.0))
        joint = joint + dirichlet_multinomial_log_predictive(x, held, 0.7)
        expected.append(np.exp(joint - logsumexp(joint)))
    got = est.average_features_loo_proba(prior_inclusion=ALMOST_SURE)
    np.testing.assert_allclose(got, np.array(expected), rtol=0, atol=1e-10)


def test_at_rho_zero_every_class_has_one_likelihood_so_only_the_class_prior_is_left():
    X, y = tiny_corpus()
    est = bayesgen.MultinomialNB(**CONJUGATE).fit(X, y)
    class_count = np.bincount(y, minlength=3)
    got = est.average_features_predict_proba(X[:4], prior_inclusion=ALMOST_NEVER)
    expected = (class_count + 1.0) / (y.size + 3.0)
    np.testing.assert_allclose(got, np.tile(expected, (4, 1)), rtol=0, atol=1e-10)
    loo = est.average_features_loo_proba(prior_inclusion=ALMOST_NEVER)
    held = class_count[None, :] - np.eye(3)[y]
    np.testing.assert_allclose(loo, (held + 1.0) / (y.size - 1 + 3.0), rtol=0, atol=1e-10)


# -- (2) against the brute-force average over every subset of nodes ------------------------------


def test_the_order_is_pooled_count_descending_ties_by_column():
    X, y = tiny_corpus()
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    assert word_order(counts).tolist() == order_by_rule(X)
    assert word_order([[2, 1, 2, 0], [0, 2, 0, 0]]).tolist() == [1, 0, 2, 3]


@pytest.mark.parametrize("rho", [0.5, 0.2])
def test_averaged_predictive_equals_brute_force_over_all_node_subsets(rho):
    X, y = tiny_corpus()
    alpha = np.array([[0.5, 1.0, 2.0, 0.7, 1.3, 0.9]] * 3) * np.array([[1.0], [1.5], [0.6]])
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    new = np.array([[3, 0, 1, 2, 0, 0], [0, 0, 0, 0, 0, 2], [1, 1, 1, 0, 1, 1], [0] * 6], float)
    expected = brute_force_log_likelihood(X, y, alpha, rho, new, order_by_rule(X))
    got = fr.averaged_log_likelihood(WordTreeCells(counts, alpha), new, rho)
    np.testing.assert_allclose(got, expected, rtol=0, atol=1e-10)


def test_averaged_leave_one_out_equals_brute_force_without_the_row():
    X, y = tiny_corpus(seed=1, n_docs=9)
    alpha = np.array([[0.5, 1.0, 2.0, 0.7, 1.3, 0.9]] * 3)
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    order = order_by_rule(X)  # the full data's order, kept when a row is left out
    got = fr.averaged_loo_log_likelihood(WordTreeCells(counts, alpha), X, y, 0.4)
    for i in (0, 4, 8):
        keep = np.arange(X.shape[0]) != i
        expected = brute_force_log_likelihood(X[keep], y[keep], alpha, 0.4, X[i : i + 1], order)
        np.testing.assert_allclose(got[i], expected[0], rtol=0, atol=1e-10)


# -- (3) leave-one-out is the refit without the row ---------------------------------------------


def test_leave_one_out_equals_the_cells_refitted_without_the_row():
    X, y = tiny_corpus(seed=2, n_docs=30)
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    cells = WordTreeCells(counts, 0.8)
    loo = fr.averaged_loo_log_likelihood(cells, X, y, 0.3)
    for i in (0, 7, 29):
        held = counts.copy()
        held[y[i]] -= X[i]
        refit = WordTreeCells(held, 0.8, order=cells.order)
        np.testing.assert_allclose(
            loo[i], fr.averaged_log_likelihood(refit, X[i : i + 1], 0.3)[0], rtol=1e-12
        )


def test_estimator_leave_one_out_equals_refitting_the_estimator_without_the_row():
    # Pooled counts far apart, so leaving one document out keeps the order of the words.
    rng = np.random.default_rng(3)
    y = np.arange(40) % 2
    X = rng.poisson(np.where(y[:, None] == 1, [6.0, 3.0, 1.5, 0.6], [6.0, 1.0, 3.0, 0.2]))
    est = bayesgen.MultinomialNB(**CONJUGATE).fit(X, y)
    loo = est.average_features_loo_proba(prior_inclusion=0.3)
    for i in (0, 13, 38):
        keep = np.arange(40) != i
        assert order_by_rule(X[keep]) == order_by_rule(X)
        refit = bayesgen.MultinomialNB(**CONJUGATE).fit(X[keep], y[keep])
        again = refit.average_features_predict_proba(X[i : i + 1], prior_inclusion=0.3)
        np.testing.assert_allclose(loo[i], again[0], rtol=1e-10)


# -- (4) the estimators ---------------------------------------------------------------------------


def test_sparse_rows_are_read_a_chunk_at_a_time_with_the_dense_answer(monkeypatch):
    X, y = tiny_corpus(seed=4, n_docs=30)
    dense = bayesgen.MultinomialNB(**CONJUGATE).fit(X, y)
    expected = dense.average_features_predict_proba(X), dense.average_features_loo_proba()
    monkeypatch.setattr(fr, "_CHUNK", 3 * 6 * 4)  # 4 rows a chunk
    sparse = bayesgen.MultinomialNB(**CONJUGATE).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.average_features_predict_proba(sp.csr_matrix(X)), expected[0])
    np.testing.assert_allclose(sparse.average_features_loo_proba(), expected[1])


def test_averaging_moves_towards_the_model_of_the_informative_words_alone():
    # Word 0 decides the class; words 1-4 are noise with the same rate in both classes.
    rng = np.random.default_rng(5)
    y = np.arange(200) % 2
    X = np.column_stack([rng.poisson(np.where(y == 1, 4.0, 1.0)), rng.poisson(2.0, size=(200, 4))])
    est = bayesgen.MultinomialNB(**CONJUGATE).fit(X, y)
    averaged = est.average_features_predict_proba(X)
    full = est.posterior_predictive_proba(X)
    # Only word 0 against all the other words pooled: the model without the noise nodes.
    lumped = np.column_stack([X[:, 0], X[:, 1:].sum(axis=1)])
    informative = bayesgen.MultinomialNB(**CONJUGATE).fit(lumped, y)
    informative = informative.posterior_predictive_proba(lumped)
    assert np.abs(averaged - informative).mean() < np.abs(full - informative).mean()


def test_mixed_model_averages_its_text_block_with_the_others():
    rng = np.random.default_rng(6)
    y = np.repeat(["ham", "spam"], 20)
    words = {"ham": ["see", "you", "later", "ok"], "spam": ["free", "prize", "call", "ok"]}
    text = [" ".join(rng.choice(words[label], size=rng.integers(2, 7))) for label in y]
    table = pd.DataFrame({"mass": rng.normal(size=40) + (y == "spam"), "text": text})
    blocks = [("size", "gaussian", ["mass"]), ("words", "multinomial", "text")]
    est = bayesgen.NaiveBayes(blocks=blocks, **CONJUGATE).fit(table, y)
    np.testing.assert_allclose(
        relevance.average_features_predict_proba(est, table, prior_inclusion=ALMOST_SURE),
        est.posterior_predictive_proba(table),
        rtol=0,
        atol=1e-10,
    )
    np.testing.assert_allclose(
        relevance.average_features_loo_proba(est, prior_inclusion=ALMOST_SURE),
        bayesgen.loo_proba(est),
        rtol=0,
        atol=1e-10,
    )
    shared = relevance.average_features_predict_proba(est, table, prior_inclusion=ALMOST_NEVER)
    np.testing.assert_allclose(shared, np.full((40, 2), 0.5), rtol=0, atol=1e-10)


def test_the_relevance_table_keeps_the_order_free_word_against_the_rest():
    X, y = tiny_corpus()
    est = bayesgen.MultinomialNB(**CONJUGATE).fit(X, y)
    table = est.feature_relevance().set_index("feature")
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    split = fr.log_bayes_factor(fr.word_split_cells(counts, 1.0))
    np.testing.assert_allclose(table.loc[[f"x{v}" for v in range(6)], "log_bayes_factor"], split)


def test_a_hyperprior_on_lambda_is_still_refused():
    X, y = tiny_corpus()
    est = bayesgen.MultinomialNB(alpha_prior=(2.0, 1.0), **CONJUGATE).fit(X, y)
    with pytest.raises(ValueError, match="alpha_prior"):
        est.average_features_predict_proba(X)


def test_an_order_that_is_not_a_permutation_is_refused():
    with pytest.raises(ValueError, match="order"):
        WordTreeCells([[1.0, 2.0, 3.0]], 1.0, order=[0, 0, 2])


def test_a_subset_of_nodes_keeps_every_later_word_in_its_failures():
    X, y = tiny_corpus()
    counts = np.array([X[y == k].sum(axis=0) for k in range(3)])
    cells = WordTreeCells(counts, 0.9)
    nodes = [0, 2, 4]
    part = cells.subset(nodes)
    np.testing.assert_array_equal(fr.log_bayes_factor(part), fr.log_bayes_factor(cells)[nodes])
    np.testing.assert_array_equal(part.log_predictive(X), cells.log_predictive(X)[..., nodes])
    np.testing.assert_array_equal(
        part.loo_log_predictive(X, y), cells.loo_log_predictive(X, y)[..., nodes]
    )
