"""Semi-supervised multinomial naive Bayes on Dask: millions of documents, a few labelled, EM
with one pass over the chunks per iteration, in bounded memory.

Each task of the graph generates a chunk of synthetic documents inside its worker: the classes
are Dirichlet perturbations of one Zipf law over the vocabulary (as
``bench_smoothing.zipf_corpus``: each class keeps the Zipf shape and has its own rare words),
documents of Poisson(``--length``) + 1 tokens, counted into a CSR chunk; a few documents of
each chunk keep their label, the others are marked -1. The same seed makes the same chunk at
every pass, so the corpus is read again at each EM iteration and never held anywhere: the
client holds statistics of classes × words, each worker about a chunk at a time.

``MultinomialNB(alpha=2, inference="conjugate").fit(X, y, unlabelled_label=-1)`` then runs the
labelled pass, the start and one pass per EM iteration
(:mod:`bayesgen.inference.semi_supervised_dask`). Reported: the wall time and passes, the peak
resident memory (``ru_maxrss``) of the client and of each worker, and the held-out accuracy of
the fit beside that of the labelled documents alone (a held-out chunk of documents, generated
in memory).

    .venv/bin/python benchmarks/bench_semi_supervised_dask.py      # 100,000 documents
    .venv/bin/python benchmarks/bench_semi_supervised_dask.py --documents 3000000 --chunk 50000

The default, 100,000 documents in 4 chunks, took 3.5 minutes on the shared 2-core machine at a
load of 14 (2.6 CPU-minutes: about 1.5 minutes on a quiet one); the figures are in
docs/performance.md. (``--chunk`` documents per task, ``--labelled`` labelled documents in all
(spread over the chunks), ``--classes``, ``--words``, ``--length``, ``--workers``,
``--memory-limit`` per worker.)
"""

from __future__ import annotations

import argparse
import functools
import resource
import time

import numpy as np
import scipy.sparse as sp

#: The seed of the class word distributions (the same in every worker) and of the held-out set.
CORPUS_SEED, TEST_SEED = 1, 2**31 - 1
UNLABELLED = -1


@functools.cache
def class_cdfs(n_classes: int, n_words: int, exponent: float = 1.1) -> np.ndarray:
    """The cumulative word distribution of each class: θ_k ~ Dirichlet(V · Zipf), as
    ``bench_smoothing.zipf_corpus`` draws them."""
    rng = np.random.default_rng(CORPUS_SEED)
    base = 1.0 / np.arange(1, n_words + 1) ** exponent
    theta = rng.dirichlet(n_words * base / base.sum(), size=n_classes)
    return np.cumsum(theta, axis=1)


def generate_chunk(seed: int, n_documents: int, n_labelled: int, args) -> tuple:
    """One chunk: CSR word counts and labels, all but the first ``n_labelled`` set to -1."""
    rng = np.random.default_rng(seed)
    cdfs = class_cdfs(args.classes, args.words)
    labels = rng.integers(args.classes, size=n_documents)
    lengths = rng.poisson(args.length, size=n_documents) + 1
    owner = np.repeat(np.arange(n_documents), lengths)
    words = np.empty(owner.size, dtype=np.int64)
    for k in range(args.classes):
        tokens = np.flatnonzero(labels[owner] == k)
        # Sorted uniforms search the table in one sweep (2.5 times faster than random ones);
        # the tokens of a class are exchangeable, so shuffling the words gives the same law.
        drawn = np.searchsorted(cdfs[k], np.sort(rng.random(tokens.size)), side="right")
        rng.shuffle(drawn)
        words[tokens] = drawn
    words = np.minimum(words, args.words - 1)  # the cumulative sum's rounding at the top
    cells, counts = np.unique(owner * args.words + words, return_counts=True)
    rows, columns = np.divmod(cells, args.words)
    X = sp.csr_matrix((counts.astype(np.float64), (rows, columns)), shape=(n_documents, args.words))
    y = labels.copy()
    y[n_labelled:] = UNLABELLED
    return X, y, labels


def documents(args):
    """Dask X (CSR chunks) and y, each chunk made in its task by :func:`generate_chunk`."""
    import dask
    import dask.array as da

    n_chunks = -(-args.documents // args.chunk)
    sizes = [min(args.chunk, args.documents - index * args.chunk) for index in range(n_chunks)]
    per_chunk = max(1, round(args.labelled / n_chunks))
    X_parts, y_parts = [], []
    for index, size in enumerate(sizes):
        made = dask.delayed(generate_chunk, nout=3, pure=True)(index, size, per_chunk, args)
        X_parts.append(
            da.from_delayed(
                made[0], shape=(size, args.words), dtype=np.float64, meta=sp.csr_matrix((0, 0))
            )
        )
        y_parts.append(da.from_delayed(made[1], shape=(size,), dtype=np.int64))
    return da.concatenate(X_parts), da.concatenate(y_parts), per_chunk * n_chunks


def labelled_documents(args, n_labelled: int):
    """The labelled documents alone (the first rows of each chunk), made again one chunk at a
    time."""
    n_chunks = -(-args.documents // args.chunk)
    per_chunk = n_labelled // n_chunks
    X_parts, y_parts = [], []
    for index in range(n_chunks):
        size = min(args.chunk, args.documents - index * args.chunk)
        X, y, _ = generate_chunk(index, size, per_chunk, args)
        X_parts.append(X[:per_chunk])
        y_parts.append(y[:per_chunk])
    return sp.vstack(X_parts, format="csr"), np.concatenate(y_parts)


def peak_memory_mib() -> float:
    """This process's peak resident memory (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--documents", type=int, default=100_000)
    parser.add_argument("--chunk", type=int, default=25_000)
    parser.add_argument("--labelled", type=int, default=1_000, help="labelled documents in all")
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--words", type=int, default=10_000)
    parser.add_argument("--length", type=float, default=30.0, help="mean tokens a document")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="1GiB")
    args = parser.parse_args()

    from distributed import Client, LocalCluster

    from bayesgen import MultinomialNB

    def estimator():
        return MultinomialNB(
            alpha=2.0, inference="conjugate", draws=100, chains=1, prior_draws=0, random_seed=0
        )

    cluster = LocalCluster(
        n_workers=args.workers,
        threads_per_worker=1,
        processes=True,
        memory_limit=args.memory_limit,
        dashboard_address=":0",
    )
    with cluster, Client(cluster) as client:
        warm = argparse.Namespace(**{**vars(args), "documents": 2_000, "chunk": 1_000})
        estimator().fit(*documents(warm)[:2], unlabelled_label=UNLABELLED)  # imports, caches
        baseline = client.run(peak_memory_mib)
        X, y, n_labelled = documents(args)
        start = time.perf_counter()
        est = estimator().fit(X, y, unlabelled_label=UNLABELLED)
        seconds = time.perf_counter() - start
        peaks = client.run(peak_memory_mib)

    attrs = est.closed_form_.attrs
    X_test, _, y_test = generate_chunk(TEST_SEED, 20_000, 0, args)
    accuracy = float(np.mean(est.predict(X_test) == y_test))
    supervised = estimator().fit(*labelled_documents(args, n_labelled))
    supervised_accuracy = float(np.mean(supervised.predict(X_test) == y_test))
    n_tokens = float(est.closed_form_["feature_count"].sum())
    print(
        f"{args.documents:,} documents ({n_tokens:,.0f} tokens) x {args.words:,} words, "
        f"{args.classes} classes, {n_labelled:,} labelled; {attrs['dask_chunks']} chunks of "
        f"{args.chunk:,}; {args.workers} workers (1 thread, memory_limit {args.memory_limit})"
    )
    print(
        f"fit: {seconds:.1f} s, {attrs['em_iterations']} EM iterations "
        f"(converged {bool(attrs['em_converged'])}), {attrs['em_dask_passes']} passes over the "
        f"chunks, {seconds / attrs['em_dask_passes']:.1f} s a pass, "
        f"{args.documents * attrs['em_dask_passes'] / seconds:,.0f} documents/s"
    )
    print(f"client: peak RSS {peak_memory_mib():,.0f} MiB")
    for address, peak in sorted(peaks.items()):
        print(
            f"worker {address}: peak RSS {peak:,.0f} MiB (after warm-up {baseline[address]:,.0f})"
        )
    print(
        f"held-out accuracy (20,000 documents): {accuracy:.3f} semi-supervised, "
        f"{supervised_accuracy:.3f} the {n_labelled:,} labelled documents alone"
    )


if __name__ == "__main__":
    main()
