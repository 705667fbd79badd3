"""Sphinx configuration for the bayesgen documentation.

Neither the build nor a reader needs a network: no intersphinx inventories are fetched, the
gallery images are drawn locally by ``_scripts/make_gallery.py`` before the pages are read, and
the maths is typeset by the copy of MathJax that the ``sphinx-mathjax-offline`` package ships,
copied into ``_static/mathjax`` of the built site (Sphinx's default would load MathJax from a
CDN, so a reader without internet would see raw ``\\(...\\)`` LaTeX).
``tests/test_docs_render.py`` opens every built page in headless Chromium to check this.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from sphinx.util import logging

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # the checkout's bayesgen, even without an editable install

import bayesgen  # noqa: E402

logger = logging.getLogger(__name__)

# -- Project -------------------------------------------------------------------------------------

project = "bayesgen"
author = "The bayesgen developers"
copyright = "The bayesgen developers"
version = release = bayesgen.__version__

# -- Extensions ----------------------------------------------------------------------------------

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",  # one page per public object, as scikit-learn, PyMC and ArviZ
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # its module name has hyphens: MathJax 3.2.2, no CDN
    "sphinx.ext.viewcode",
    "numpydoc",
    "sphinx_copybutton",
]

# The pages are Markdown; autosummary writes its stub pages (docs/generated/, git-ignored) as
# reStructuredText.
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_build", "_scripts", "_templates", ".gitignore", "Thumbs.db", ".DS_Store"]
templates_path = ["_templates"]

# MyST: $...$ and $$...$$ maths, amsmath environments (align, ...), ::: fences.
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence", "deflist"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

# autodoc / numpydoc. The API page lists every public object in autosummary tables, and
# autosummary writes one page per object into docs/generated/ at each build, from the templates
# in _templates/autosummary/ (a class's page documents its public methods; an estimator's
# also those it inherits from bayesgen's shared classes, not scikit-learn's). numpydoc's own
# tables of class members are off: the class page already documents them.
autodoc_typehints = "none"  # the numpydoc "Parameters" sections already give the types
autodoc_member_order = "bysource"
autosummary_generate = True
autosummary_generate_overwrite = True
# A class page's "On this page" lists its methods as fit(), not MultinomialNB.fit(), which
# the narrow right column cut off.
toc_object_entries_show_parents = "hide"
numpydoc_show_class_members = False
numpydoc_show_inherited_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_use_plots = False

# No network at build time: no inventories to fetch.
intersphinx_mapping: dict = {}

# -- HTML ----------------------------------------------------------------------------------------

html_theme = "pydata_sphinx_theme"
html_title = f"bayesgen {release}"
html_static_path = ["_static"]
html_css_files = ["bayesgen.css"]  # the gallery page takes the whole width
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": ["sphinx-version", "theme-version"],
}
# No left sidebar: the top bar already lists every page, and the theme's empty section
# navigation there took a fifth of the width, squeezing every page's text to ~620 px.
html_sidebars: dict[str, list[str]] = {"**": []}
# Without a default mode the theme's script logs "Got invalid theme mode" on a first visit.
html_context = {"default_mode": "auto"}
html_show_sourcelink = False
copybutton_prompt_text = r"\$ |>>> |\.\.\. "
copybutton_prompt_is_regexp = True

# -- Gallery -------------------------------------------------------------------------------------


def _make_gallery(app, config) -> None:
    """Draw the gallery PNGs into _static/gallery before any page is read.

    Connected to ``config-inited`` ahead of Sphinx's own checks of ``_static`` (where the
    gallery is git-ignored, beside the committed stylesheet).

    Run in a subprocess so that matplotlib and the fits leave no state in the Sphinx process; a
    failure stops the build (the gallery page would otherwise show broken images).
    """
    script = DOCS / "_scripts" / "make_gallery.py"
    out_dir = DOCS / "_static" / "gallery"
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = dict(os.environ, MPLBACKEND="Agg", PYTHONPATH=os.pathsep.join(paths))
    start = time.perf_counter()
    subprocess.run([sys.executable, str(script), str(out_dir)], check=True, env=env, cwd=ROOT)
    logger.info(f"gallery: images drawn in {time.perf_counter() - start:.1f} s")


# The package exports its main names lazily from the modules listed in ``bayesgen._LAZY``
# (``bayesgen.MultinomialNB`` is defined in ``bayesgen.estimators.models``). Docstrings use either
# spelling, so resolve the short one to the documented object.
_SHORT_NAMES = {f"bayesgen.{name}": f"{module}.{name}" for name, module in bayesgen._LAZY.items()}


def _resolve_short_name(app, env, node, contnode):
    target = _SHORT_NAMES.get(node.get("reftarget", ""))
    if node.get("refdomain") != "py" or target is None:
        return None
    return env.get_domain("py").resolve_xref(
        env, node["refdoc"], app.builder, node["reftype"], target, node, contnode
    )


def _skip_scikit_learn_members(app, what, name, obj, skip, options):
    """Leave out the methods scikit-learn defines (``get_metadata_routing``, ``set_fit_request``).

    scikit-learn adds its metadata-routing setters to each estimator class itself, so
    ``:members:`` would document them on every class page, with docstrings that cite
    scikit-learn's own user guide. The estimator pages document bayesgen's methods.
    """
    if (getattr(obj, "__module__", None) or "").startswith("sklearn."):
        return True
    return None


def setup(app):
    # MathJax on every page (served offline, so it costs one cached file), not only on pages
    # Sphinx detects maths on: a fresh CI build once left adding-a-block.html without it.
    app.set_html_assets_policy("always")
    app.connect("config-inited", _make_gallery, priority=100)
    app.connect("autodoc-skip-member", _skip_scikit_learn_members)
    app.connect("missing-reference", _resolve_short_name)
    return {"parallel_read_safe": True}
