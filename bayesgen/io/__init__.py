"""Model files: saving and loading fitted estimators, and the checks a file must pass before
anything is computed from it. This layer imports inference and the layers below it.
"""
