"""Text to a document-term matrix: bag-of-words counts or set-of-words presence."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import scipy.sparse as sp


def _identity_analyzer(tokens: Sequence[str]) -> Sequence[str]:
    return tokens


def vectorize_text(
    documents: Sequence[str] | Sequence[Sequence[str]],
    *,
    binary: bool = False,
    **count_vectorizer_options,
):
    """Turn raw texts or token lists into a sparse document-term matrix.

    Uses scikit-learn's ``CountVectorizer``: ``binary=False`` gives the bag-of-words counts of
    the multinomial event model, ``binary=True`` the set-of-words 0/1 matrix of the
    multivariate Bernoulli model.

    Parameters
    ----------
    documents : sequence of str, or sequence of token sequences
        Raw texts (tokenized by ``CountVectorizer``) or documents already split into tokens,
        which are used as they are (no lower-casing).
    binary : bool, default False
        Record presence (1) instead of counts.
    **count_vectorizer_options
        Passed to ``CountVectorizer`` (``min_df``, ``stop_words``, ``vocabulary``, ...).

    Returns
    -------
    X : scipy.sparse.csr_array of shape (n_documents, n_words)
    vectorizer : sklearn.feature_extraction.text.CountVectorizer
        The fitted vectorizer; ``vectorizer.get_feature_names_out()`` is the vocabulary, and
        ``vectorizer.transform`` maps new documents onto it.

    Examples
    --------
    >>> X, vec = vectorize_text([["my", "dog"], ["stupid", "dog"]], binary=True)
    >>> vec.get_feature_names_out().tolist()
    ['dog', 'my', 'stupid']
    """
    from sklearn.feature_extraction.text import CountVectorizer

    documents = list(documents)
    if not documents:
        raise ValueError("documents: expected at least one document; got none.")
    tokenized = not isinstance(documents[0], str)
    if tokenized and any(isinstance(d, str) for d in documents):
        raise TypeError("documents: expected all raw strings or all token lists; got a mix.")
    if tokenized:
        count_vectorizer_options.setdefault("analyzer", _identity_analyzer)
    vectorizer = CountVectorizer(binary=binary, **count_vectorizer_options)
    X = vectorizer.fit_transform(documents)
    return sp.csr_array(X, dtype=np.float64), vectorizer
