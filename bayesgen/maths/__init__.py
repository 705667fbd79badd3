"""The maths layer: arrays in, arrays out.

Counts, Dirichlet, Beta and normal-inverse-Wishart moments, modes and draws, evidence kernels,
quadrature, likelihood kernels and numba kernels. Modules here depend only on NumPy, SciPy and
numba (and each other), never on another bayesgen layer, pandas, xarray's models, PyMC or ArviZ;
an import-linter contract in ``pyproject.toml`` keeps it so.
"""
