"""Plots of a fitted estimator and the HTML report. Models say which plots they have by name;
:mod:`bayesgen.plotting.plots` maps the names to functions. This layer imports the checks and
the layers below them.
"""
