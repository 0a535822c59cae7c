"""What the proposal renderer does for speed changes nothing a reader sees
(documents/proposal/render.py; docs/benchmarks.md, sixth round):

- its user-agent stylesheet (WeasyPrint's own as installed, less the bare pseudo-element rules)
  lays out the same pages as WeasyPrint's sheet: the same text on every page, the same pixels,
  the same outline, for the lean proposal and the detailed one (lists, appendix);
- that sheet is WeasyPrint's less exactly the rules render.py says it leaves out;
- the streams deflated at level 6 by the finisher hold the same bytes as pydyf's level-9 ones;
- the element tree built by html.parser (htmltree.py) is tinyhtml5's for every shipped
  proposal, and markup an HTML5 parser would repair is left to tinyhtml5.
"""

from __future__ import annotations

import re
import subprocess
import xml.etree.ElementTree as ET
import zlib
from importlib import resources
from pathlib import Path

import pytest
import tinyhtml5
import weasyprint
from weasyprint import HTML

from llmsizer.documents.proposal import build_context, render_pdf
from llmsizer.documents.proposal import render as proposal
from llmsizer.documents.proposal.appendix import formula_context
from llmsizer.documents.proposal.htmltree import plain_tree
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

ROOT = Path(__file__).resolve().parents[1]


def _run(*cmd: str | Path) -> bytes:
    return subprocess.run([str(c) for c in cmd], check=True, capture_output=True).stdout


def _seen(pdf: Path, tmp: Path) -> tuple[list[bytes], list[bytes], bytes]:
    """What a reader gets: the text of each page (pdftotext -layout), each page's pixels
    (pdftoppm, 40 dpi) and the outline (pdftohtml -xml)."""
    text = _run("pdftotext", "-layout", pdf, "-").split(b"\f")
    prefix = tmp / pdf.stem
    _run("pdftoppm", "-r", "40", pdf, prefix)
    pixels = [p.read_bytes() for p in sorted(tmp.glob(f"{pdf.stem}-*.ppm"))]
    outline = re.findall(rb"<item[^>]*>[^<]*", _run("pdftohtml", "-xml", "-i", "-stdout", pdf))
    return text, pixels, b"\n".join(outline)


@pytest.mark.parametrize("appendix", [False, True], ids=["lean", "detailed"])
def test_ua_sheet_and_tree_lay_out_what_weasyprints_own_do(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, appendix: bool) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    result = size(load(ROOT / "inputs" / "example.yaml"))
    ours, theirs = tmp_path / "ours.pdf", tmp_path / "theirs.pdf"
    render_pdf(result, ours, appendix=appendix)
    with monkeypatch.context() as m:  # WeasyPrint's own sheet and parser
        m.setattr(proposal.ProposalHTML, "_ua_stylesheets", HTML._ua_stylesheets)
        m.setattr(proposal, "plain_tree", lambda html: None)
        proposal._laid_out.cache_clear()  # the appendix pages are cached per process
        render_pdf(result, theirs, appendix=appendix)
    proposal._laid_out.cache_clear()
    text, pixels, outline = _seen(ours, tmp_path)
    assert len(text) >= (14 if appendix else 10) and len(pixels) == len(text) - 1
    assert b"Executive summary" in outline
    assert (text, pixels, outline) == _seen(theirs, tmp_path)


def _rules(css: str) -> list[str]:
    """The style rules of a stylesheet, one per entry, comments and @counter-style gone."""
    css = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    css = re.sub(r"@counter-style[^{]*\{[^}]*\}", "", css)
    at_page = css.index("@page")  # its nested margin rules stay one entry
    body = [r.strip() + "}" for r in css[:at_page].split("}") if r.strip()]
    return [*body, re.sub(r"\s+", " ", css[at_page:]).strip()]


def test_ua_sheet_is_weasyprints_less_the_rules_it_names() -> None:
    ours = proposal.ua_sheet_text()
    assert ours is not None, "the installed WeasyPrint's sheet no longer has the expected rules"
    theirs = _rules(resources.files("weasyprint.css").joinpath("html5_ua.css")
                    .read_text("utf-8"))
    mine = _rules(ours)
    left_out = [r for r in theirs if r not in mine]
    added = [r for r in mine if r not in theirs]
    assert [r.split("{")[0].strip() for r in left_out] == [
        "::marker", "::footnote-call", "::footnote-marker", "::note-call", "::note-marker",
        "::note-callback"]
    assert added == [left_out[0].replace("::marker", "li::marker", 1)]


def _streams(pdf: bytes) -> list[bytes]:
    """Every FlateDecode stream of a PDF but the cross-reference one (the objects' offsets),
    inflated, in file order."""
    out = []
    for m in re.finditer(rb"<<([^\n]*?)>>\nstream\n", pdf):
        if b"/FlateDecode" in m[1] and b"/XRef" not in m[1]:
            length = int(re.search(rb"/Length (\d+)", m[1])[1])  # type: ignore[index]
            out.append(zlib.decompress(pdf[m.end():m.end() + length]))
    return out


def test_streams_deflated_at_level_6_hold_what_pydyf_writes(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    result = size(load(ROOT / "inputs" / "example.yaml"))
    html = proposal.render_html(result)
    roots = proposal._roots(None)
    ours, theirs = tmp_path / "ours.pdf", tmp_path / "theirs.pdf"
    proposal.write_pdf(proposal.render_document(html, roots), ours)
    proposal.render_document(html, roots).write_pdf(
        theirs, full_fonts=not proposal._fast_font_subsetting())
    a, b = ours.read_bytes(), theirs.read_bytes()
    assert len(_streams(a)) >= 12  # a content stream per page at least, and the fonts
    assert _streams(a) == _streams(b)
    assert a != b and len(a) < 1.05 * len(b)
    assert _run("pdftotext", "-layout", ours, "-") == _run("pdftotext", "-layout", theirs, "-")


# ---- the element tree: html.parser's where it equals tinyhtml5's (htmltree.py) ---------------


def _same_tree(a: ET.Element, b: ET.Element) -> bool:
    return (a.tag == b.tag and a.attrib == b.attrib and (a.text or "") == (b.text or "")
            and (a.tail or "") == (b.tail or "") and len(a) == len(b)
            and all(_same_tree(x, y) for x, y in zip(a, b, strict=True)))


def _html5(html: str) -> ET.Element:
    return tinyhtml5.parse(html, namespace_html_elements=False)


def test_plain_tree_is_tinyhtml5s_for_every_shipped_proposal() -> None:
    roots = proposal._roots(None)
    htmls = [proposal._render_template(roots, {**formula_context(), "footer_name": ""},
                                        proposal.APPENDIX_TEMPLATE)]
    for path in sorted((ROOT / "inputs").glob("*.yaml")):
        result = size(load(path))
        htmls += [proposal._render_template(
            roots, {**build_context(result, None, detail=detail), "appendix": detail})
            for detail in (False, True)]
    assert len(htmls) == 27
    for html in htmls:
        tree = plain_tree(html)
        assert tree is not None and _same_tree(tree, _html5(html))


PAGE = ('<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        "<title>T &amp; U</title>\n</head>\n<body>\n{}\n</body>\n</html>\n")


@pytest.mark.parametrize("body", [
    '<p>a &lt;b&gt; &#39;c&#39; &#160;d</p>\n<ul>\n  <li>x<ul><li>y</li></ul></li>\n  <li>z</li>\n</ul>',
    '<table class="t">\n<tr><td class="n">1</td><td><strong>2</strong><br>3</td></tr>\n</table>',
    '<table><colgroup><col style="width: 30%"><col></colgroup>\n<thead><tr><th>h</th></tr></thead>'
    '<tbody>\n<tr><td><span>s</span></td></tr></tbody></table>',
    '<section><h1><span class="num">1</span>T</h1><div><p>p</p><img src="x.svg" alt=""></div></section>',
])
def test_plain_tree_builds_plain_markup_as_tinyhtml5_does(body: str) -> None:
    html = PAGE.format(body)
    tree = plain_tree(html)
    assert tree is not None and _same_tree(tree, _html5(html))


@pytest.mark.parametrize("body", [
    "<p>a<div>b</div></p>",                # a <div> closes the open <p>
    "<p>a<table><tr><td>b</td></tr></table></p>",
    "<ul><li>a<li>b</li></ul>",            # an implied </li>
    "<table><td>a</td></table>",           # an implied <tbody><tr>
    "<table>text<tr><td>a</td></tr></table>",  # text moved out of the table
    "<b><i>a</b></i>",                     # misnested: the adoption agency
    "<p>a",                                # an end tag left out
    "<div/>x",                             # "/" ignored on a non-void element
    "<!-- note --><p>a</p>",
    "<pre>\nx</pre>",                      # the newline after <pre> dropped
    "<p>a < b &copy 2</p>",
    '<p title="a" title="b">x</p>',
    "<svg><text>x</text></svg>",
    "<h1>a<h2>b</h2></h1>",
    "<base href='http://example.com/'><p>a</p>",
])
def test_plain_tree_leaves_repaired_markup_to_tinyhtml5(body: str) -> None:
    html = PAGE.format(body)
    assert plain_tree(html) is None
    # what WeasyPrint then parses, through ProposalHTML, is tinyhtml5's tree
    ours = proposal.ProposalHTML(string=html, base_url="file:///t/",
                                 url_fetcher=proposal.ClosedFetcher(proposal._roots(None)))
    assert _same_tree(ours.etree_element, _html5(html))


# ---- computed styles and used lengths in fewer calls (fastlayout.py) ----------------------------


@pytest.mark.skipif(weasyprint.__version__ != "70.0", reason="written against WeasyPrint 70.0")
@pytest.mark.parametrize(("account", "appendix"), [
    ("example", False), ("frontier-moe-rack", False), ("enterprise-multi", True)])
def test_fast_layout_writes_the_same_pdf_as_weasyprints_own(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, account: str, appendix: bool) -> None:
    from llmsizer.documents.proposal import fastlayout

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    result = size(load(ROOT / "inputs" / f"{account}.yaml"))
    proposal._fast_layout()  # the once-per-process install, before it is switched off here
    pdfs = []
    try:
        for on in (False, True):
            assert fastlayout.install(on) is on
            proposal._laid_out.cache_clear()  # the appendix is laid out again, too
            pdf = tmp_path / f"{on}.pdf"
            render_pdf(result, pdf, appendix=appendix)
            pdfs.append(pdf.read_bytes())
    finally:
        fastlayout.install()
    assert len(_streams(pdfs[0])) >= 12
    assert pdfs[0] == pdfs[1]
