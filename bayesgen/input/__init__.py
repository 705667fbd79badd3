"""The input layer: what comes in, checked.

User X and y, class labels, text, sample weights and merged sufficient statistics, Dask
chunks, bundled data sets, estimator parameters, and writing a file so that a failed write
leaves the old one whole. Modules here import only :mod:`bayesgen.maths` and each other.
"""
