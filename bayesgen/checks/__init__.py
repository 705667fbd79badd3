"""The checks of a fitted estimator: the posterior against its closed forms (:func:`compare`),
exact leave-one-out, the predictions compared, the λ sweep and simulation-based calibration.

Modules here import the estimators and the layers below them, never plotting, the demo or the
CLI.
"""
