"""Stream text shards through HashingVectorizer into a fit on a Dask LocalCluster.

The recipe for a corpus too large for one machine's memory: the messages lie in shard files;
each worker reads a shard, hashes its words into a sparse count matrix (``HashingVectorizer``
needs no vocabulary, so every shard hashes alike, and ``alternate_sign=False`` keeps the
counts non-negative), and reduces it to the model's sufficient statistics; the statistics merge
in a tree and only they come back (:mod:`bayesgen.input.distributed`). The shard sizes need not be
known in advance. The fit keeps no training rows (out of core); its posterior is the same as
an in-memory fit's on the same hashed matrix, which this example checks.

Uses the SMS Spam Collection when a path is given, else the bundled toy corpus, cut into
shards written to a temporary folder.

Run: python examples/dask_text_shards.py [--data-path SMSSpamCollection.tsv] [--shards 8]
"""

import argparse
import tempfile
from pathlib import Path

import dask
import dask.array as da
import numpy as np
import pandas as pd
import scipy.sparse as sp
from distributed import Client, LocalCluster
from sklearn.feature_extraction.text import HashingVectorizer

from bayesgen import MultinomialNB
from bayesgen.input.datasets import load_sms_spam, load_toy_spam

#: 2^16 hashed features: few collisions for an SMS vocabulary, and the posterior draws of two
#: classes stay small.
VECTORIZER = HashingVectorizer(n_features=2**16, alternate_sign=False, norm=None)


def write_shards(texts, labels, folder: Path, n_shards: int) -> list[Path]:
    """The corpus cut into ``n_shards`` TSV files (as a crawler or a log would leave it)."""
    frame = pd.DataFrame({"label": labels, "text": texts})
    paths = []
    for index, rows in enumerate(np.array_split(np.arange(len(frame)), n_shards)):
        path = folder / f"shard-{index:03d}.tsv"
        frame.iloc[rows].to_csv(path, sep="\t", index=False)
        paths.append(path)
    return paths


def read_shard(path: Path):
    """One shard, hashed: (sparse counts, labels). Runs in a worker."""
    frame = pd.read_csv(path, sep="\t", keep_default_na=False)
    return VECTORIZER.transform(frame["text"]), frame["label"].to_numpy(dtype=str)


def hashed_corpus(paths: list[Path]):
    """Dask X (one sparse chunk per shard, sizes unknown until read) and y."""
    X_parts, y_parts = [], []
    for path in paths:
        counts, labels = dask.delayed(read_shard, nout=2)(path)
        meta = sp.csr_matrix((0, VECTORIZER.n_features))
        X_parts.append(
            da.from_delayed(counts, shape=(np.nan, VECTORIZER.n_features), dtype=float, meta=meta)
        )
        y_parts.append(da.from_delayed(labels, shape=(np.nan,), dtype=object))
    return da.concatenate(X_parts), da.concatenate(y_parts)


def main(data_path: str | None, n_shards: int, draws: int) -> None:
    texts, labels = load_sms_spam(data_path) if data_path else load_toy_spam()
    options = {
        "inference": "conjugate",
        "draws": draws,
        "chains": 1,
        "prior_draws": 0,
        "compute_map": False,
        "dtype": "float32",
        "random_seed": 0,
    }
    with tempfile.TemporaryDirectory() as folder:
        paths = write_shards(texts, labels, Path(folder), n_shards)
        cluster = LocalCluster(n_workers=2, threads_per_worker=1, dashboard_address=":0")
        with cluster, Client(cluster):
            X, y = hashed_corpus(paths)
            model = MultinomialNB(**options).fit(X, y)  # reduced on the cluster
    print(
        f"{int(model.class_count_.sum())} messages in {n_shards} shards, "
        f"{model.closed_form_.attrs['dask_chunks']} chunks reduced on 2 workers; classes "
        f"{model.classes_.tolist()} with {model.class_count_.astype(int).tolist()} messages"
    )

    # The same hashed matrix in memory gives the same closed form and, seeded, the same draws.
    in_memory = MultinomialNB(**options).fit(VECTORIZER.transform(texts), np.asarray(labels))
    gap = np.abs(model.feature_log_prob_ - in_memory.feature_log_prob_).max()
    print(f"posterior mean log P(word | class): max |dask - in memory| = {gap:.1e}")

    new = ["WINNER! Claim your free prize now, text WIN to 80082", "see you at lunch tomorrow"]
    lower, upper = model.predict_proba_interval(VECTORIZER.transform(new))
    spam = list(model.classes_).index("spam")
    for message, low, high in zip(new, lower[:, spam], upper[:, spam], strict=True):
        print(f"P(spam | {message!r}): 94% interval [{low:.3f}, {high:.3f}]")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--data-path",
        default=None,
        help="the SMS Spam Collection's tab-separated file (label, message) (default: none, "
        "the bundled toy corpus)",
    )
    parser.add_argument(
        "--shards",
        type=int,
        default=8,
        help="files the corpus is cut into, one chunk each (default: %(default)s)",
    )
    parser.add_argument(
        "--draws",
        type=int,
        default=200,
        help="exact posterior draws of the fit, one chain (default: %(default)s)",
    )
    args = parser.parse_args()
    main(args.data_path, args.shards, args.draws)
