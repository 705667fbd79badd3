"""``python -m bayesgen.cli``: the ``bayesgen`` command."""

import sys

from bayesgen.cli import main

if __name__ == "__main__":  # not when a tool that walks the package imports this module
    sys.exit(main())
