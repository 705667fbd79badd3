"""Out-of-core multinomial naive Bayes on Dask: millions of documents generated in the workers.

Each task of the graph writes a chunk of synthetic documents (words drawn from one of a few
class-specific Zipf distributions over a 50,000-word vocabulary), hashes them with
``HashingVectorizer(n_features=2**18, alternate_sign=False)`` into a sparse chunk, and reduces
it to its sufficient statistics (:mod:`bayesgen.input.distributed`); the statistics merge in a tree.
The documents never exist on the client, nor all at once anywhere: as a dense float64 matrix
5 million × 2^18 would take 10 PB, and even the sparse one far more than the workers' memory
limit. Reports documents per second per worker, and each worker's peak resident memory.

    .venv/bin/python benchmarks/bench_dask.py --documents 5000000 --workers 2

(``--chunk`` documents per task; ``--memory-limit`` per worker; ``--draws`` posterior draws of
the conjugate fit made from the statistics at the end, on the client.)
"""

from __future__ import annotations

import argparse
import functools
import itertools
import resource
import time

import numpy as np
import scipy.sparse as sp

VOCABULARY = 50_000
N_FEATURES = 2**18
MEAN_WORDS = 30


@functools.cache
def word_probabilities(n_classes: int) -> np.ndarray:
    """One Zipf(1) distribution over the vocabulary per class, the words ranked differently
    in each (the same in every worker: fixed seed)."""
    rng = np.random.default_rng(2024)
    zipf = 1.0 / np.arange(1, VOCABULARY + 1)
    probs = np.stack([zipf[rng.permutation(VOCABULARY)] for _ in range(n_classes)])
    return np.cumsum(probs / probs.sum(axis=1, keepdims=True), axis=1)


@functools.cache
def words() -> np.ndarray:
    return np.array([f"w{index}" for index in range(VOCABULARY)], dtype=object)


def generate_chunk(seed: int, n_documents: int, n_classes: int):
    """``n_documents`` hashed synthetic documents (CSR counts) and their classes."""
    from sklearn.feature_extraction.text import HashingVectorizer

    rng = np.random.default_rng(seed)
    labels = rng.integers(n_classes, size=n_documents)
    lengths = rng.poisson(MEAN_WORDS, size=n_documents) + 1
    owner = np.repeat(labels, lengths)
    cumulative = word_probabilities(n_classes)
    tokens = np.empty(owner.size, dtype=np.int64)
    for k in range(n_classes):
        rows = np.flatnonzero(owner == k)
        tokens[rows] = np.searchsorted(cumulative[k], rng.random(rows.size), side="right")
    tokens = np.minimum(tokens, VOCABULARY - 1)  # cumsum rounding at the top end
    bounds = np.concatenate([[0], np.cumsum(lengths)])
    names = words()[tokens]
    texts = [" ".join(names[start:stop]) for start, stop in itertools.pairwise(bounds)]
    vectorizer = HashingVectorizer(n_features=N_FEATURES, alternate_sign=False, norm=None)
    return vectorizer.transform(texts).astype(np.float64), labels


def documents(n_documents: int, chunk: int, n_classes: int):
    """Dask X (sparse chunks) and y, made inside the workers chunk by chunk."""
    import dask
    import dask.array as da

    sizes = [chunk] * (n_documents // chunk) + (
        [n_documents % chunk] if n_documents % chunk else []
    )
    X_parts, y_parts = [], []
    for index, size in enumerate(sizes):
        X_chunk, y_chunk = dask.delayed(generate_chunk, nout=2)(index, size, n_classes)
        X_parts.append(
            da.from_delayed(
                X_chunk, shape=(size, N_FEATURES), dtype=np.float64, meta=sp.csr_matrix((0, 0))
            )
        )
        y_parts.append(da.from_delayed(y_chunk, shape=(size,), dtype=np.int64))
    return da.concatenate(X_parts), da.concatenate(y_parts)


def peak_memory_mib() -> float:
    """This process's peak resident memory (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=5_000_000)
    parser.add_argument("--chunk", type=int, default=50_000)
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="1GiB")
    parser.add_argument("--draws", type=int, default=100)
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    from bayesgen import closed_form as cf
    from bayesgen.inference import sampling as inference

    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=args.memory_limit,
        dashboard_address=":0",
    )
    with cluster, Client(cluster) as client:
        # Warm the workers (imports) so that the timing is the documents'.
        warm_X, warm_y = documents(2_000, 1_000, args.classes)
        cf.multinomial_nb(warm_X, warm_y)
        baseline = client.run(peak_memory_mib)
        X, y = documents(args.documents, args.chunk, args.classes)
        start = time.perf_counter()
        estimates = cf.multinomial_nb(X, y)
        seconds = time.perf_counter() - start
        peaks = client.run(peak_memory_mib)
        start = time.perf_counter()
        # The posterior step of fit, unchanged: exact draws from the merged statistics.
        inference.conjugate_posterior(
            estimates, draws=args.draws, chains=1, random_seed=0, prior_draws=0, dtype="float32"
        )
        posterior = time.perf_counter() - start

    n_tokens = float(estimates["feature_count"].sum())
    rate = args.documents / seconds
    print(
        f"{args.documents:,} documents ({n_tokens:,.0f} tokens) x 2^18 hashed features, "
        f"{args.classes} classes, {estimates.attrs['dask_chunks']} chunks of {args.chunk:,}, "
        f"{args.workers} workers (1 thread, memory_limit {args.memory_limit} each)"
    )
    print(f"statistics reduced in {seconds:.1f} s: {rate:,.0f} documents/s, "
          f"{rate / args.workers:,.0f} documents/s per worker")  # fmt: skip
    for address, peak in sorted(peaks.items()):
        warm = baseline[address]
        print(f"  worker {address}: peak RSS {peak:,.0f} MiB (after warm-up {warm:,.0f} MiB)")
    print(f"posterior step on the client: {posterior:.1f} s")


if __name__ == "__main__":
    main()
