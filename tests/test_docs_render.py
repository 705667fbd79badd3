"""The built documentation as a reader sees it: every page opened in headless Chromium, offline.

The site is built once per module with the same command as ``make docs`` (warnings are errors)
into a temporary folder. Chromium runs with every host name unresolvable and the network
emulated as offline, so a page that needs a CDN (MathJax's, by Sphinx's default) shows here what
it shows a reader without internet: raw ``\\(...\\)`` LaTeX. Each page is checked for what a
person sees: a title and a heading, non-empty main text, every image loaded, every formula
typeset by MathJax without a TeX error, no raw TeX or unparsed Markdown link left in the text,
text not squeezed into a narrow column, nothing fetched from outside the site and no error in
the console. The API index must link to one page per public object, the gallery's figures be
shown at a readable size and open at full size, and the landing page show code and a picture.
The last tests show, on small synthetic pages, that each of those checks fails when it should.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import pytest
from conftest import offline_chromium

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
BUILD_TIMEOUT_S = 600  # a guard only: the build takes 30-60 s
MATHJAX_TIMEOUT_S = 30
#: The narrowest main text allowed in the browser's 1280 px window: an empty left sidebar once
#: squeezed every page to ~620 px, with a third of the window blank.
MIN_ARTICLE_WIDTH = 800
#: A gallery figure is shown at least at this fraction of the size it was drawn at (its fonts
#: are then at least ~7 px), and a click opens it at full size.
MIN_FIGURE_SCALE = 0.5
#: The API index lists the objects and links to a page for each: it stays short.
MAX_API_INDEX_HEIGHT = 34_000  # 31,082 px with the DCM and feature-relevance sections

# Facts about the loaded page, gathered in the browser after MathJax (if the page loads it) has
# finished its first typesetting. Text inside code, scripts and MathJax's own output is skipped
# when looking for raw TeX: a code block may show a backslash on purpose.
LOOK_AT_PAGE = r"""
const done = arguments[arguments.length - 1];
function facts(mathjax) {
  const main = document.querySelector("article") || document.querySelector("main");
  const heading = main ? main.querySelector("h1") : null;
  const skip = new Set(["PRE", "CODE", "SCRIPT", "STYLE", "TEXTAREA", "MJX-CONTAINER"]);
  const rawTex = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT, {
    acceptNode(node) {
      for (let el = node.parentElement; el; el = el.parentElement) {
        if (skip.has(el.tagName)) return NodeFilter.FILTER_REJECT;
      }
      return NodeFilter.FILTER_ACCEPT;
    },
  });
  const pattern = /\\[()\[\]]|\\begin\{|\\frac|\$\$/;
  // A Markdown link that was not parsed (written inside reStructuredText, say): [text](page.md)
  const markdownLink = /\[[^\]\n]+\]\([^)\s]+\)/;
  const rawLinks = [];
  while (walker.nextNode()) {
    const text = walker.currentNode.nodeValue;
    if (pattern.test(text)) rawTex.push(text.trim().slice(0, 80));
    const link = text.match(markdownLink);
    if (link) rawLinks.push(link[0]);
  }
  const article = document.querySelector("article") || main;
  const maths = Array.from(document.querySelectorAll(".math"));
  const own = (url) => url.startsWith("file:") || url.startsWith("data:") || url === "";
  const external = performance.getEntriesByType("resource").map((e) => e.name)
    .concat(Array.from(document.querySelectorAll("script[src], link[rel=stylesheet], img"))
      .map((el) => el.src || el.href || ""))
    .filter((url) => !own(url));
  return {
    mathjax: mathjax,
    title: document.title.trim(),
    heading: heading ? heading.innerText.trim() : "",
    main_text: main ? main.innerText.trim().length : 0,
    heading_text: heading ? heading.innerText.trim().length : 0,
    images: Array.from(document.images).map(
      (img) => [img.getAttribute("src"), img.complete && img.naturalWidth > 0]),
    maths: maths.length,
    typeset: maths.filter((el) => el.querySelector("mjx-container")).length,
    tex_errors: Array.from(document.querySelectorAll("mjx-merror"))
      .map((el) => el.getAttribute("data-mjx-error") || el.textContent),
    // MathJax's "noundefined" extension shows an unknown macro as red text; the MathML copy
    // that MathJax keeps for screen readers has it as text.
    undefined_macros: Array.from(document.querySelectorAll("mjx-assistive-mml [mathcolor=red]"))
      .map((el) => el.textContent),
    raw_tex: rawTex,
    raw_links: rawLinks,
    article_width: article ? Math.round(article.getBoundingClientRect().width) : 0,
    window_width: window.innerWidth,
    height: document.documentElement.scrollHeight,
    // Each image: its source, its width as shown and as drawn, and where clicking it leads.
    figures: Array.from(document.images).map((img) => ({
      src: img.getAttribute("src"),
      shown: img.getBoundingClientRect().width,
      natural: img.naturalWidth,
      link: img.closest("a") ? img.closest("a").getAttribute("href") : null,
    })),
    external: Array.from(new Set(external)),
  };
}
// A page can be between documents when the script starts (seen in CI under load: once
// document.body was null, once the deferred MathJax script had not yet run): wait up to 10 s
// for the page asked for to finish loading, by which time its deferred scripts have run.
const wanted = arguments[0];
function whenReady(run, tries) {
  const loaded = document.body && document.readyState === "complete" && location.href === wanted;
  if (loaded || tries <= 0) {
    run();
  } else {
    setTimeout(() => whenReady(run, tries - 1), 100);
  }
}
whenReady(() => {
  const startup = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
  if (startup) {
    startup.then(() => done(facts("typeset")), (error) => done(facts("failed: " + error)));
  } else {
    done(facts("absent"));
  }
}, 100);
"""


def _chromium(profile: Path):
    """The shared offline browser (conftest), waiting long enough for MathJax."""
    driver = offline_chromium(profile)
    driver.set_script_timeout(MATHJAX_TIMEOUT_S)
    return driver


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    driver = _chromium(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The documentation built as ``make docs`` builds it, into a temporary folder."""
    if find_spec("sphinx") is None:
        pytest.skip("needs the docs extra: pip install -e '.[docs]'")
    out = tmp_path_factory.mktemp("docs") / "html"
    command = [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html"]
    start = time.perf_counter()
    result = subprocess.run(
        [*command, str(DOCS), str(out)],
        capture_output=True,
        text=True,
        timeout=BUILD_TIMEOUT_S,
        cwd=ROOT,
    )
    if result.returncode != 0:
        pytest.fail(f"sphinx-build failed (status {result.returncode}):\n{result.stderr[-4000:]}")
    print(f"docs built in {time.perf_counter() - start:.1f} s")
    return out


def look(driver, page: Path) -> dict:
    """Open ``page`` and return what a reader sees, plus the console's messages."""
    driver.get_log("browser")  # drop messages left from the previous page
    driver.get(page.as_uri())
    facts = driver.execute_async_script(LOOK_AT_PAGE, page.as_uri())
    facts["console"] = [
        entry["message"] for entry in driver.get_log("browser") if entry["level"] == "SEVERE"
    ]
    return facts


def problems(facts: dict) -> list[str]:
    """What a reader would notice is wrong, one line each; empty for a page that renders."""
    found = []
    if not facts["title"] or "no title" in facts["title"]:
        found.append(f"no title: {facts['title']!r}")
    if not facts["heading"]:
        found.append("no heading (h1) in the main content")
    if facts["main_text"] <= facts["heading_text"]:
        found.append("the main content is empty apart from its heading")
    found += [f"image did not load: {src}" for src, loaded in facts["images"] if not loaded]
    if facts["maths"] and facts["mathjax"] != "typeset":
        found.append(f"MathJax did not run ({facts['mathjax']}) on {facts['maths']} formulas")
    if facts["typeset"] < facts["maths"]:
        missing = facts["maths"] - facts["typeset"]
        found.append(f"{missing} of {facts['maths']} formulas not typeset")
    found += [f"TeX error in a formula: {error}" for error in facts["tex_errors"]]
    found += [f"undefined TeX macro: {macro}" for macro in facts["undefined_macros"]]
    found += [f"raw TeX shown: {text!r}" for text in facts["raw_tex"]]
    found += [f"raw Markdown link shown: {link}" for link in facts["raw_links"]]
    if facts["article_width"] < MIN_ARTICLE_WIDTH:
        found.append(
            f"text squeezed: the article is {facts['article_width']} px wide in a "
            f"{facts['window_width']} px window (at least {MIN_ARTICLE_WIDTH})"
        )
    found += [f"fetches from outside the site: {url}" for url in facts["external"]]
    found += [f"console error: {message}" for message in facts["console"]]
    return found


def built_pages(site: Path) -> list[Path]:
    return sorted(path for path in site.rglob("*.html") if "_static" not in path.parts)


# -- The built site ------------------------------------------------------------------------------


# Building the site (40 s) and rendering every page (55 s) is the default suite's largest
# test, so rendering every page is left to the slow suite; the build itself, with warnings
# as errors, runs in the default suite (the `site` fixture of the tests below), which is
# what makes CI fail on a broken page.
@pytest.mark.slow
def test_every_built_page_renders_offline(site, browser):
    pages = built_pages(site)
    # Every page of the table of contents is there, and the API's source pages.
    sources = sorted(path.stem for path in DOCS.glob("*.md"))
    assert sorted(path.stem for path in site.glob("*.html")) == sorted(
        [*sources, "genindex", "py-modindex", "search"]
    )
    assert any(path.parent.name == "_modules" or "_modules" in path.parts for path in pages)
    report = {}
    for page in pages:
        if found := problems(look(browser, page)):
            report[str(page.relative_to(site))] = found
    assert report == {}


def test_maths_page_formulas_are_typeset(site, browser):
    page = site / "maths.html"
    # Counted from the HTML that Sphinx wrote, independently of the browser: every inline and
    # display formula is an element of class "math".
    written = len(re.findall(r'class="math notranslate nohighlight"', page.read_text("utf-8")))
    assert written > 50
    facts = look(browser, page)
    assert facts["mathjax"] == "typeset"
    assert facts["maths"] == written
    assert facts["typeset"] == written
    assert facts["tex_errors"] == []
    assert facts["raw_tex"] == []
    assert problems(facts) == []


def test_mathjax_is_shipped_with_the_site_and_no_page_names_a_cdn(site):
    assert (site / "_static" / "mathjax" / "tex-chtml.js").is_file()
    remote = re.compile(r"""<(?:script|link|img)\b[^>]*\b(?:src|href)=["']?(?:https?:)?//""")
    pages = [page for page in built_pages(site) if remote.search(page.read_text("utf-8"))]
    assert pages == []
    assert 'src="_static/mathjax/tex-chtml.js"' in (site / "maths.html").read_text("utf-8")


def test_api_index_links_to_one_page_per_object(site, browser):
    # As in scikit-learn, PyMC and ArviZ: the API page is an index of short tables, and each
    # public object has a page of its own (autosummary's stub pages in generated/).
    from test_doctests import documented_names

    facts = look(browser, site / "api.html")
    assert facts["height"] < MAX_API_INDEX_HEIGHT, facts["height"]
    links = browser.execute_script(
        # The first column names the object; the summaries beside may link elsewhere.
        "return Array.from(document.querySelectorAll("
        "'table.autosummary tr > td:first-child a.reference'))"
        ".map((a) => a.getAttribute('href').split('#')[0]);"
    )
    documented = {f"{module}.{name}" for module, name in documented_names()}
    assert len(set(links)) == len(links) > 100
    assert {link.removeprefix("generated/").removesuffix(".html") for link in links} == documented
    for link in links[:3] + links[-3:]:  # every page is opened by the first test
        page = look(browser, site / link)
        assert page["heading"].startswith(link.removeprefix("generated/").removesuffix(".html"))


def test_estimator_page_documents_its_methods_and_not_scikit_learns(site):
    page = (site / "generated" / "bayesgen.estimators.models.MultinomialNB.html").read_text("utf-8")
    for method in ("fit", "predict_proba", "predict_proba_interval", "save", "pymc_model"):
        assert f'id="bayesgen.estimators.models.MultinomialNB.{method}"' in page
    assert 'id="bayesgen.estimators.models.MultinomialNB.get_params"' not in page


def test_gallery_figures_are_readable_and_open_full_size(site, browser):
    facts = look(browser, site / "gallery.html")
    drawn = re.findall(r"^```\{figure\} (\S+)$", (DOCS / "gallery.md").read_text("utf-8"), re.M)
    # Sphinx copies each image to _images/; the link leads to the PNG the gallery script drew.
    assert [Path(figure["src"]).name for figure in facts["figures"]] == [
        Path(path).name for path in drawn
    ]
    small = [
        f"{figure['src']}: {figure['shown']:.0f} of {figure['natural']} px"
        for figure in facts["figures"]
        if figure["shown"] < MIN_FIGURE_SCALE * figure["natural"]
    ]
    assert small == []
    assert [figure["link"] for figure in facts["figures"]] == drawn


def test_landing_page_shows_code_and_a_picture(site, browser):
    facts = look(browser, site / "index.html")
    assert 'class="highlight-python' in (site / "index.html").read_text("utf-8")
    assert [(figure["src"], figure["link"]) for figure in facts["figures"]] == [
        ("_images/posterior_vs_closed_form.png", "_static/gallery/posterior_vs_closed_form.png")
    ]
    assert problems(facts) == []


# -- The checks catch what they should, on small synthetic pages ---------------------------------

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>{title}</title>{head}</head>
<body><main><article><h1>{heading}</h1>{body}</article></main></body></html>
"""
FORMULA = '<p>Bayes: <span class="math notranslate nohighlight">\\(p(y \\mid x)\\)</span></p>'


def _page(tmp_path: Path, name: str, *, title="Page", heading="Page", head="", body="") -> Path:
    path = tmp_path / name
    path.write_text(
        PAGE.format(title=title, heading=heading, head=head, body=body), encoding="utf-8"
    )
    return path


def _local_mathjax(tmp_path: Path) -> str:
    """A script tag for the MathJax that sphinx-mathjax-offline ships, copied next to the page."""
    spec = find_spec("sphinx-mathjax-offline")
    if spec is None:
        pytest.skip("needs the docs extra: pip install -e '.[docs]'")
    shutil.copytree(Path(spec.origin).parent / "static" / "mathjax", tmp_path / "mathjax")
    return '<script defer src="mathjax/tex-chtml.js"></script>'


def test_a_page_with_local_mathjax_passes(tmp_path, browser):
    # The control for the tests below: the same page, correct, shows no problem.
    page = _page(tmp_path, "good.html", head=_local_mathjax(tmp_path), body=FORMULA)
    facts = look(browser, page)
    assert (facts["maths"], facts["typeset"], facts["mathjax"]) == (1, 1, "typeset")
    assert problems(facts) == []


def test_check_catches_cdn_only_mathjax(tmp_path, browser):
    # Sphinx's default: MathJax from a CDN, which an offline reader cannot reach.
    cdn = '<script defer src="https://cdn.jsdelivr.net/npm/mathjax@4/tex-mml-chtml.js"></script>'
    found = problems(look(browser, _page(tmp_path, "cdn.html", head=cdn, body=FORMULA)))
    assert "MathJax did not run (absent) on 1 formulas" in found
    assert "1 of 1 formulas not typeset" in found
    assert "raw TeX shown: '\\\\(p(y \\\\mid x)\\\\)'" in found
    outside = "fetches from outside the site: https://cdn.jsdelivr.net/npm/mathjax@4/"
    assert any(line.startswith(outside) for line in found), found
    assert any(line.startswith("console error:") for line in found)


def test_check_catches_tex_errors(tmp_path, browser):
    bad = (
        '<p><span class="math notranslate nohighlight">\\(x^1^2\\)</span> and '
        '<span class="math notranslate nohighlight">\\(\\undefinedmacro x\\)</span></p>'
    )
    page = _page(tmp_path, "bad-tex.html", head=_local_mathjax(tmp_path), body=bad)
    assert problems(look(browser, page)) == [
        "TeX error in a formula: Double exponent: use braces to clarify",
        "undefined TeX macro: \\undefinedmacro",
    ]


def test_check_catches_a_broken_image(tmp_path, browser):
    import base64

    png = base64.b64decode(  # a 1x1 PNG, which does load
        "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="
    )
    (tmp_path / "dot.png").write_bytes(png)
    (tmp_path / "broken.png").write_bytes(b"not a png")
    body = '<p>Plots:</p><img src="dot.png"><img src="missing.png"><img src="broken.png">'
    found = problems(look(browser, _page(tmp_path, "images.html", body=body)))
    assert [line for line in found if line.startswith("image")] == [
        "image did not load: missing.png",
        "image did not load: broken.png",
    ]


def test_check_catches_an_empty_page_and_a_missing_title(tmp_path, browser):
    found = problems(look(browser, _page(tmp_path, "empty.html", title="", heading="")))
    assert found == [
        "no title: ''",
        "no heading (h1) in the main content",
        "the main content is empty apart from its heading",
    ]
    found = problems(look(browser, _page(tmp_path, "heading-only.html")))
    assert found == ["the main content is empty apart from its heading"]


def test_check_catches_a_script_error(tmp_path, browser):
    head = "<script>undefined_function();</script>"
    found = problems(look(browser, _page(tmp_path, "script.html", head=head, body="<p>Text</p>")))
    assert len(found) == 1 and found[0].startswith("console error:"), found
    assert "undefined_function" in found[0]


def test_check_catches_squeezed_text(tmp_path, browser):
    head = "<style>article { width: 620px; }</style>"
    found = problems(look(browser, _page(tmp_path, "narrow.html", head=head, body="<p>Text</p>")))
    assert found == [
        f"text squeezed: the article is 620 px wide in a 1280 px window (at least "
        f"{MIN_ARTICLE_WIDTH})"
    ]


def test_check_catches_a_raw_markdown_link(tmp_path, browser):
    body = (
        "<p>See [The Bayesian workflow](workflow.md).</p>"
        "<pre>[a code block](may.md) shows one on purpose</pre>"
    )
    found = problems(look(browser, _page(tmp_path, "link.html", body=body)))
    assert found == ["raw Markdown link shown: [The Bayesian workflow](workflow.md)"]
