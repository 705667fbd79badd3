"""Columns of a table for the blocks of a mixed model: which block takes which columns, how
each column becomes numbers, and the plan ``blocks="auto"`` proposes.

A mixed model (:class:`bayesgen.NaiveBayes`) gives each block some columns, as scikit-learn's
``ColumnTransformer`` gives each transformer some: by DataFrame column names, or by integer
positions (a list, a ``range`` or a ``slice``) of an array or sparse matrix. A column is
encoded as

* ``"numeric"``: its values as they are (numbers, flags, counts);
* ``"categorical"``: each value its index into the column's categories, which are the
  pandas ``category`` dtype's categories where the column has that dtype (unseen ones
  included, so a later chunk may hold them), else the sorted distinct values seen at fit;
* ``"text"``: one raw-text column, turned into word counts by a ``CountVectorizer`` fitted
  at fit (its vocabulary becomes the block's features; ``binary=True`` for a Bernoulli block).

The encodings learned at fit (categories, vocabulary) form a :class:`ColumnLayout`, which a
model file stores as JSON, so predictions encode new rows exactly as the training rows were.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

#: How a column becomes numbers.
ENCODINGS = ("numeric", "categorical", "text")
#: The CountVectorizer parameters a model file can store (plain values only).
_VECTORIZER_VALUES = (str, int, float, bool, type(None), tuple, list)
#: Mean below which whole numbers ≥ 0 without a 0 are taken as counts by ``blocks="auto"``.
AUTO_MAX_COUNT_MEAN = 10.0
#: Distinct string values up to which ``blocks="auto"`` calls a column categorical, not text.
AUTO_MAX_CATEGORIES = 50


@dataclass
class BlockColumns:
    """One block's columns and how they are encoded, learned at fit.

    Attributes
    ----------
    name : str
        The block's name (its variables are ``name::mu``, …).
    model : str
        The block's model (a family name, e.g. ``"gaussian_nb"``).
    columns : list
        Column names of a DataFrame, or integer positions.
    encoding : {"numeric", "categorical", "text"}
    categories : list of list, optional
        For ``"categorical"``: each column's categories, in code order.
    vectorizer : dict, optional
        For ``"text"``: the CountVectorizer's parameters, its vocabulary included.
    handle_unknown : {"error", "ignore"}
        For ``"categorical"``: a category the fit did not have, at prediction, is an error
        or a missing entry (the block's ``handle_unknown``).
    """

    name: str
    model: str
    columns: list
    encoding: str
    categories: list = field(default_factory=list)
    vectorizer: dict = field(default_factory=dict)
    handle_unknown: str = "error"


@dataclass
class ColumnLayout:
    """Every block's columns, in block order; :meth:`to_json` / :meth:`from_json` store it.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesgen.input.columns import ColumnLayout, encode, learn_block
    >>> table = pd.DataFrame({"mass": [3.1, 4.2, 3.9], "island": ["Dream", "Biscoe", "Dream"]})
    >>> layout = ColumnLayout(
    ...     [
    ...         learn_block(table, "size", "gaussian_nb", ["mass"], "numeric"),
    ...         learn_block(table, "where", "categorical_nb", ["island"], "categorical"),
    ...     ],
    ...     by_name=True,
    ... )
    >>> layout.blocks[1].categories
    [['Biscoe', 'Dream']]
    >>> encode(table, ColumnLayout.from_json(layout.to_json()))[0].tolist()
    [[3.1, 1.0], [4.2, 0.0], [3.9, 1.0]]
    """

    blocks: list[BlockColumns]
    by_name: bool

    def to_json(self) -> str:
        return json.dumps(
            {"by_name": self.by_name, "blocks": [asdict(b) for b in self.blocks]},
            default=_json_default,
        )

    @classmethod
    def from_json(cls, text: str) -> ColumnLayout:
        stored = json.loads(text)
        return cls([BlockColumns(**b) for b in stored["blocks"]], bool(stored["by_name"]))

    @property
    def input_columns(self) -> list:
        """Every column the blocks take, in block order (what ``feature_names_in_`` lists)."""
        return [column for block in self.blocks for column in block.columns]


def _json_default(value):
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    raise TypeError(f"cannot store {value!r} ({type(value).__name__}) in a model file")


def as_table(X, name: str = "X"):
    """X as a DataFrame (kept as it is), a CSR sparse matrix, or a 2-D NumPy array (object
    dtype where it holds text); never a copy of a DataFrame."""
    if isinstance(X, pd.Series):
        X = X.to_frame()
    if isinstance(X, pd.DataFrame):
        _check_not_empty(X.shape, name)
        return X
    if sp.issparse(X):
        _check_not_empty(X.shape, name)
        return sp.csr_array(X)
    array = np.asarray(X) if hasattr(X, "__array__") else _list_array(X, name)
    if array.ndim != 2:
        # scikit-learn's words ("Reshape your data"), which its estimator checks look for.
        raise ValueError(
            f"{name}: expected a 2-D table (rows x columns); got an array of shape "
            f"{array.shape}. Reshape your data with X.reshape(-1, 1) for one column or "
            "X.reshape(1, -1) for one row."
        )
    if array.dtype.kind == "c":
        raise ValueError(f"{name}: Complex data not supported; got {array.dtype} values.")
    _check_not_empty(array.shape, name)
    return array


def _check_not_empty(shape: tuple, name: str) -> None:
    # scikit-learn's words, which its estimator checks look for.
    if shape[0] == 0:
        raise ValueError(
            f"{name}: Found array with 0 sample(s) (shape={shape}) while a minimum of 1 is "
            "required."
        )
    if shape[1] == 0:
        raise ValueError(
            f"{name}: Found array with 0 feature(s) (shape={shape}) while a minimum of 1 is "
            "required."
        )


def _list_array(X, name: str) -> np.ndarray:
    try:
        array = np.asarray(X)
    except ValueError as error:
        raise ValueError(f"{name}: expected rows of equal length; {error}") from None
    if array.dtype.kind in "USO":
        return np.asarray(X, dtype=object)
    return array


def column_names(table) -> list:
    """The columns of a table: a DataFrame's names, else positions 0 … n − 1."""
    if isinstance(table, pd.DataFrame):
        return list(table.columns)
    return list(range(table.shape[1]))


def resolve_columns(table, columns, *, name: str) -> list:
    """A block's ``columns`` (a name, a list of names, a list/range of positions or a
    slice) as a list of the table's columns; raises naming the block otherwise."""
    available = column_names(table)
    if isinstance(columns, slice):
        chosen = available[columns]
    elif isinstance(columns, str | int | np.integer):
        chosen = [columns]
    else:
        try:
            chosen = list(columns)
        except TypeError:
            raise TypeError(
                f"blocks: block {name!r} columns: expected a column name, a list of names or "
                f"positions, a range or a slice; got {columns!r}."
            ) from None
    if not chosen:
        raise ValueError(f"blocks: block {name!r} takes no columns; got {columns!r}.")
    by_name = isinstance(table, pd.DataFrame)
    for column in chosen:
        if by_name and column not in available:
            raise ValueError(
                f"blocks: block {name!r} names the column {column!r}, which X does not have; "
                f"its columns are {[str(c) for c in available][:20]}."
            )
        if not by_name:
            if not isinstance(column, int | np.integer) or not 0 <= column < len(available):
                raise ValueError(
                    f"blocks: block {name!r} column {column!r}: X has no column names, so "
                    f"expected positions 0 … {len(available) - 1}."
                )
    return [column.item() if isinstance(column, np.generic) else column for column in chosen]


def learn_block(
    table,
    name: str,
    model: str,
    columns: list,
    encoding: str,
    vectorizer=None,
    handle_unknown: str = "error",
):
    """The :class:`BlockColumns` of one block, its categories or vocabulary learned from the
    training ``table``."""
    if encoding not in ENCODINGS:
        raise ValueError(f"blocks: block {name!r} encoding: expected one of {ENCODINGS}.")
    block = BlockColumns(name, model, list(columns), encoding, handle_unknown=handle_unknown)
    if encoding == "categorical":
        block.categories = [_categories(_column(table, c), name, c) for c in columns]
    elif encoding == "text":
        if len(columns) != 1:
            raise ValueError(
                f"blocks: block {name!r} is a text block and takes one column of raw text; "
                f"got {len(columns)} columns {columns!r}."
            )
        block.vectorizer = _vectorizer_params(vectorizer, name)
        texts = _texts(_column(table, columns[0]), name, columns[0])
        fitted = _count_vectorizer(block.vectorizer).fit(texts)
        vocabulary = fitted.get_feature_names_out().tolist()
        if not vocabulary:
            raise ValueError(f"blocks: block {name!r}: the text column has no words.")
        block.vectorizer["vocabulary"] = vocabulary
    return block


def check_learnable_from_dtypes(table, name: str, columns: list, encoding: str, vectorizer):
    """Refuse a block whose encoding needs the rows themselves (Dask input, whose rows are
    not at hand when the encoding is fixed): a categorical column without a pandas
    ``category`` dtype, a text column whose vectorizer has no ``vocabulary``."""
    if encoding == "categorical":
        for column in columns:
            if not isinstance(_column(table, column).dtype, pd.CategoricalDtype):
                raise ValueError(
                    f"X: column {column!r} of block {name!r} needs its categories before the "
                    "chunks are read; give it a category dtype with known categories (e.g. "
                    "X = X.categorize(columns=[...]) for a dask DataFrame)."
                )
    if encoding == "text":
        vocabulary = (
            vectorizer.get("vocabulary")
            if isinstance(vectorizer, dict)
            else getattr(vectorizer, "vocabulary", None)
        )
        if vocabulary is None:
            raise ValueError(
                f"blocks: text block {name!r} needs its vocabulary before the chunks are read; "
                "give a CountVectorizer(vocabulary=[...])."
            )


def encode(table, layout: ColumnLayout, name: str = "X"):
    """The numbers of every block's columns, side by side in block order: a float64 array,
    or a CSR matrix where a block is text (or X was sparse).

    Returns
    -------
    matrix : numpy.ndarray or scipy.sparse.csr_array of shape (n_samples, n_encoded)
    widths : list of int
        The number of encoded columns of each block.
    """
    if isinstance(table, pd.DataFrame) != layout.by_name:
        expected = "a DataFrame with the fit's column names" if layout.by_name else "an array"
        raise ValueError(f"{name}: the model was fitted on {expected}; got {type(table).__name__}.")
    parts = [_encode_block(table, block, name) for block in layout.blocks]
    widths = [part.shape[1] for part in parts]
    if any(sp.issparse(part) for part in parts):
        return sp.csr_array(sp.hstack([sp.csr_array(part) for part in parts], format="csr")), widths
    return np.hstack(parts), widths


def _encode_block(table, block: BlockColumns, name: str):
    if block.encoding == "text":
        column = block.columns[0]
        texts = _texts(_column(table, column), block.name, column)
        return sp.csr_array(_count_vectorizer(block.vectorizer).transform(texts), dtype=np.float64)
    if block.encoding == "categorical":
        codes = [
            _codes(_column(table, column), categories, block.name, column, block.handle_unknown)
            for column, categories in zip(block.columns, block.categories, strict=True)
        ]
        return np.column_stack(codes)
    if sp.issparse(table):
        return table[:, block.columns]
    values = [
        _numeric(_column(table, column), block.name, column, name) for column in block.columns
    ]
    return np.column_stack(values)


def _column(table, column) -> np.ndarray:
    if isinstance(table, pd.DataFrame):
        return table[column]
    if sp.issparse(table):
        return table[:, [column]].toarray().ravel()
    return table[:, column]


def _numeric(values, block: str, column, name: str) -> np.ndarray:
    series = pd.Series(values) if not isinstance(values, pd.Series) else values
    if isinstance(series.dtype, pd.CategoricalDtype) or not (
        pd.api.types.is_numeric_dtype(series.dtype) or pd.api.types.is_bool_dtype(series.dtype)
    ):
        try:
            return series.to_numpy(dtype=np.float64)
        except (TypeError, ValueError):
            raise ValueError(
                f"{name}: column {column!r} of block {block!r} must hold numbers; got "
                f"{series.dtype} values such as {series.iloc[0]!r}. Give it to a categorical "
                "or text block."
            ) from None
    return series.to_numpy(dtype=np.float64, na_value=np.nan)


def _categories(values, block: str, column) -> list:
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    if isinstance(series.dtype, pd.CategoricalDtype):
        categories = list(series.cat.categories)
    else:
        present = series.dropna()  # a missing entry is no category: its block decides
        try:
            categories = sorted(present.unique().tolist())
        except TypeError:  # mixed types: sort by their text
            categories = sorted(present.unique().tolist(), key=str)
    return [c.item() if isinstance(c, np.generic) else c for c in categories]


def _codes(values, categories: list, block: str, column, unknown: str = "error") -> np.ndarray:
    """Each value's index into ``categories``: NaN for a missing value (the block takes it as
    missing, or refuses it), and for a category the fit did not have where ``unknown`` is
    "ignore" (else an error)."""
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    codes = pd.Index(categories, dtype=object).get_indexer(series.astype(object))
    codes = codes.astype(np.float64)
    missing = series.isna().to_numpy()
    codes[missing] = np.nan
    unseen = np.flatnonzero((codes < 0) & ~missing)
    if unseen.size and unknown != "ignore":
        value = series.iloc[unseen[0]]
        raise ValueError(
            f"X: column {column!r} of block {block!r} has the category {value!r} at row "
            f"{unseen[0]}, which the fit did not have (its categories: {categories[:20]}). "
            "Give the column a pandas Categorical dtype with every category before fitting, "
            "or handle_unknown='ignore' to take it as missing."
        )
    codes[unseen] = np.nan
    return codes


def _texts(values, block: str, column) -> list:
    texts = list(values.tolist() if hasattr(values, "tolist") else values)
    bad = [i for i, text in enumerate(texts) if not isinstance(text, str)]
    if bad and pd.isna(texts[bad[0]]):
        raise ValueError(
            f"X: column {column!r} of text block {block!r} has a missing text at row {bad[0]}: "
            "a document whose words are unknown has no known length, which the bag of words "
            "needs; give an empty string for a message with no words, or drop the row."
        )
    if bad:
        raise ValueError(
            f"X: column {column!r} of text block {block!r} must hold strings; row {bad[0]} "
            f"holds {texts[bad[0]]!r}."
        )
    return texts


def _vectorizer_params(vectorizer, block: str) -> dict:
    from sklearn.feature_extraction.text import CountVectorizer  # heavy: scikit-learn text

    if vectorizer is None:
        vectorizer = CountVectorizer()
    if isinstance(vectorizer, dict):
        vectorizer = CountVectorizer(**vectorizer)
    if not isinstance(vectorizer, CountVectorizer):
        raise TypeError(
            f"blocks: block {block!r} vectorizer: expected a scikit-learn CountVectorizer (or "
            f"its parameters as a dict); got {type(vectorizer).__name__}."
        )
    params = {
        key: list(value) if isinstance(value, tuple) else value
        for key, value in vectorizer.get_params().items()
        if key not in ("dtype", "vocabulary")
    }
    for key, value in params.items():
        if not isinstance(value, _VECTORIZER_VALUES):
            raise ValueError(
                f"blocks: block {block!r} vectorizer: {key}={value!r} cannot be stored in a "
                "model file; use CountVectorizer's plain options (strings, numbers, lists)."
            )
    return params


def _count_vectorizer(params: dict):
    from sklearn.feature_extraction.text import CountVectorizer  # heavy: scikit-learn text

    params = dict(params)
    if "ngram_range" in params:
        params["ngram_range"] = tuple(params["ngram_range"])
    return CountVectorizer(dtype=np.float64, **params)


def propose_encoding(values) -> tuple[str, str, str]:
    """What ``blocks="auto"`` makes of one column: (model, encoding, reason).

    * bool, or numbers that are all 0 or 1 → ``bernoulli``;
    * pandas ``category``, or strings with at most :data:`AUTO_MAX_CATEGORIES` distinct values
      and no spaces in most → ``categorical``;
    * other strings → ``multinomial`` text (one block per text column);
    * whole numbers ≥ 0 with a 0 among them or a mean below :data:`AUTO_MAX_COUNT_MEAN`
      → ``poisson`` (counts); whole-number measurements far from 0 (a length in mm, a mass
      in g) are not counts;
    * other numbers → ``gaussian``.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesgen.input.columns import propose_encoding
    >>> propose_encoding(pd.Series([1.5, 2.0, 0.3]))[0]
    'gaussian'
    >>> propose_encoding(pd.Series(["Biscoe", "Dream", "Biscoe"]))[0]
    'categorical'
    """
    series = values if isinstance(values, pd.Series) else pd.Series(values)
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical", "categorical", "pandas category dtype"
    if pd.api.types.is_bool_dtype(dtype):
        return "bernoulli", "numeric", "bool values"
    if pd.api.types.is_numeric_dtype(dtype):
        present = series.dropna().to_numpy(dtype=np.float64)
        if present.size and np.isin(present, (0.0, 1.0)).all():
            return "bernoulli", "numeric", "only 0 and 1"
        whole = present.size and (present >= 0).all() and (present == np.round(present)).all()
        # Measurements in whole units (mm, g) are whole numbers too, far from 0 and spread
        # far wider or narrower than a Poisson: a count column holds a 0 or small numbers.
        if whole and (present.min() == 0 or present.mean() < AUTO_MAX_COUNT_MEAN):
            return "poisson", "numeric", "counts: whole numbers >= 0 with a 0 or a small mean"
        if whole:
            return "gaussian", "numeric", "whole-number measurements (no 0, mean >= 10)"
        return "gaussian", "numeric", "real numbers"
    present = series.dropna()
    texts = present.astype(str)
    n_distinct = texts.nunique()
    spaced = texts.str.contains(r"\s").mean() if len(texts) else 0.0
    if n_distinct <= AUTO_MAX_CATEGORIES and spaced < 0.5:
        return "categorical", "categorical", f"{n_distinct} distinct values"
    return "multinomial", "text", f"text: {n_distinct} distinct values, words"


#: The blocks' models by the names ``blocks`` and the command line give them.
MODELS = ("gaussian", "poisson", "bernoulli", "categorical", "multinomial", "gda", "qda", "dcm")
#: Models whose one raw-text column a CountVectorizer turns into words.
TEXT_MODELS = ("multinomial", "bernoulli", "dcm")


def auto_blocks(X, overrides=None) -> list[tuple]:
    """The blocks ``blocks="auto"`` proposes for a table: one per model, holding every column
    that model suits (:func:`propose_encoding`), and one per text column, named after the
    column.

    Parameters
    ----------
    X : DataFrame or array-like of shape (n_samples, n_columns)
    overrides : mapping of column to model name, optional
        A model of :data:`MODELS` for some columns instead of the proposed one
        (``{"year": "categorical"}``).

    Returns
    -------
    list of tuple
        ``(name, model, columns)`` per block, ready for ``NaiveBayes(blocks=...)``, to edit
        or to pass as it is.

    Examples
    --------
    >>> import pandas as pd
    >>> from bayesgen.input.columns import auto_blocks
    >>> table = pd.DataFrame({"mass": [3.1, 4.2], "island": ["Dream", "Biscoe"], "eggs": [2, 0]})
    >>> for block in auto_blocks(table):
    ...     print(block)
    ('gaussian', 'gaussian', ['mass'])
    ('categorical', 'categorical', ['island'])
    ('poisson', 'poisson', ['eggs'])
    >>> auto_blocks(table, overrides={"eggs": "categorical"})[1]
    ('categorical', 'categorical', ['island', 'eggs'])
    """
    plan = auto_plan(as_table(X), overrides or {})
    blocks: dict[str, tuple] = {}
    for column, model, encoding, _ in plan:
        if encoding == "text":
            blocks[str(column)] = (str(column), model, column)
        else:
            blocks.setdefault(model, (model, model, []))[2].append(column)
    return list(blocks.values())


def auto_plan(table, overrides) -> list[tuple]:
    """(column, model, encoding, reason) of every column of a table (:func:`auto_blocks`)."""
    unknown = sorted(set(overrides) - set(column_names(table)), key=str)
    if unknown:
        raise ValueError(f"overrides: X has no columns {unknown}.")
    plan = []
    for column in column_names(table):
        values = _column(table, column)
        model, encoding, reason = propose_encoding(values)
        if column in overrides:
            model = check_model_name(overrides[column], f"overrides[{column!r}]")
            if model == "categorical":
                encoding = "categorical"
            elif (encoding == "text" and model not in TEXT_MODELS) or encoding == "categorical":
                encoding = "numeric"
            reason = "overridden"
        plan.append((column, model, encoding, reason))
    return plan


def check_model_name(model, name: str) -> str:
    """``model`` if it is one of :data:`MODELS`; else a ValueError naming ``name``."""
    if not isinstance(model, str) or model not in MODELS:
        raise ValueError(f"{name}: expected one of {list(MODELS)}; got {model!r}.")
    return model


def block_encoding(table, model: str, columns, *, name: str) -> str:
    """How a block of ``model`` encodes its ``columns`` of ``table`` (None: not known yet):

    * a categorical block: its categories' codes where every column holds numbers (integer
      codes, taken as they are, as ``CategoricalNB`` takes them), else encoded
      (``"categorical"``: strings, pandas categories);
    * a multinomial or Bernoulli block given one column name of strings: ``"text"``;
    * otherwise the numbers as they are (``"numeric"``).
    """
    if model == "categorical":
        return "numeric" if _holds_codes(table, columns, name) else "categorical"
    if model in TEXT_MODELS and isinstance(columns, str) and _holds_text(table, columns):
        return "text"
    return "numeric"


def _holds_codes(table, columns, name: str) -> bool:
    """Whether every column of a categorical block holds numbers (category codes)."""
    if table is None:
        return False
    chosen = resolve_columns(table, columns, name=name)
    if not isinstance(table, pd.DataFrame):
        return table.dtype.kind in "biuf" if hasattr(table, "dtype") else False
    return all(
        pd.api.types.is_numeric_dtype(table[c].dtype)
        and not isinstance(table[c].dtype, pd.CategoricalDtype)
        for c in chosen
    )


def _holds_text(table, column) -> bool:
    if not isinstance(table, pd.DataFrame) or column not in table.columns:
        return False
    values = table[column]
    return values.dtype == object or pd.api.types.is_string_dtype(values.dtype)


__all__ = [
    "AUTO_MAX_CATEGORIES",
    "AUTO_MAX_COUNT_MEAN",
    "ENCODINGS",
    "MODELS",
    "TEXT_MODELS",
    "BlockColumns",
    "ColumnLayout",
    "as_table",
    "auto_blocks",
    "auto_plan",
    "block_encoding",
    "check_learnable_from_dtypes",
    "check_model_name",
    "column_names",
    "encode",
    "learn_block",
    "propose_encoding",
    "resolve_columns",
]
