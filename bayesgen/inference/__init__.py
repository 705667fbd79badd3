"""The inference layer: NUTS through PyMC, exact conjugate draws, the MAP point, the observed
rows and their log-likelihood, simulation, empirical-Bayes smoothing and progress lines.

Modules here are handed a model family and never look one up by name. They import
:mod:`bayesgen.families` and the layers below it; :mod:`bayesgen.closed_form` and
:mod:`bayesgen.generative` are this layer's public front ends.
"""
