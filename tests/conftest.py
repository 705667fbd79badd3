"""Shared test set-up.

The environment variables are set at import time, before any test module (or plugin) imports
pytensor or pymc, so that every run shares one compile cache and plots never need a display.
"""

import os
from os.path import expanduser

_PYTENSOR_CACHE = expanduser("~/.cache/bayesgen/pytensor")
os.environ.setdefault("PYTENSOR_FLAGS", "base_compiledir=" + _PYTENSOR_CACHE)
os.environ.setdefault("MPLBACKEND", "Agg")
