"""The charts' SVG text drawn one line at a time (documents/proposal/svgtext.py) lands where
WeasyPrint's letter-by-letter drawer puts it: same words, same places (to 0.05 pt, the
rounding of one letter's position against a whole line's), in a shipped proposal and in
a small SVG that uses what the charts use (text-anchor end and middle, no-break spaces,
font sizes). Text the one-line drawer does not handle (per-letter lists, letter-spacing)
is left to WeasyPrint."""

from __future__ import annotations

import base64
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from weasyprint import HTML

from llmsizer.documents.proposal import render_pdf, svgtext
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

ROOT = Path(__file__).resolve().parents[1]
WORD = re.compile(r'<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">'
                  r"([^<]*)</word>")


def _words(pdf: Path) -> list[tuple[str, tuple[float, ...]]]:
    out = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], check=True,
                         capture_output=True, text=True).stdout
    return [(m[4], tuple(float(v) for v in m[:4])) for m in WORD.findall(out)]


def _same_places(a: list[tuple[str, tuple[float, ...]]],
                 b: list[tuple[str, tuple[float, ...]]]) -> float:
    assert [w for w, _ in a] == [w for w, _ in b]
    return max(abs(p - q) for (_, x), (_, y) in zip(a, b, strict=True)
               for p, q in zip(x, y, strict=True))


@pytest.fixture
def drawers() -> Iterator[None]:
    yield
    svgtext.install()  # the state every other test renders in


def _svg_page(tmp: Path, body: str) -> Path:
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="300" height="120" '
           f'viewBox="0 0 300 120">{body}</svg>')
    src = base64.b64encode(svg.encode()).decode()
    pdf = tmp / "svg.pdf"
    HTML(string=f'<p>Before</p><img src="data:image/svg+xml;base64,{src}"><p>After</p>'
         ).write_pdf(pdf)
    return pdf


CHART_TEXT = (
    '<text x="10" y="20" font-family="DejaVu Sans" font-size="12" fill="#123">'
    "Tokens/s per user 1,500 tok/s AV To</text>"
    '<text x="290" y="50" font-size="10" text-anchor="end">  USD\u00a0266\u00a0k</text>'
    '<text x="150" y="80" font-size="9" text-anchor="middle" font-weight="bold">'
    "Batch (sequences per replica)</text>")


def test_installed_on_the_weasyprint_it_was_written_for(drawers: None) -> None:
    import weasyprint

    assert svgtext.install() is (weasyprint.__version__ == "70.0")


@pytest.mark.skipif(not svgtext.install(), reason="WeasyPrint's own drawer in use")
def test_chart_like_text_lands_where_weasyprint_puts_it(tmp_path: Path, drawers: None) -> None:
    svgtext.uninstall()
    before = _words(_svg_page(tmp_path, CHART_TEXT))
    svgtext.install()
    after = _words(_svg_page(tmp_path, CHART_TEXT))
    assert "266" in [w for w, _ in after] and "Batch" in [w for w, _ in after]
    assert _same_places(before, after) < 0.05


@pytest.mark.skipif(not svgtext.install(), reason="WeasyPrint's own drawer in use")
def test_per_letter_text_is_left_to_weasyprint(tmp_path: Path, drawers: None) -> None:
    body = ('<text x="10 30 50" y="20" font-size="12">abc</text>'
            '<text x="10" y="60" dx="0 4 4" font-size="12">def</text>'
            '<text x="10" y="100" letter-spacing="3" font-size="12">ghi</text>')
    svgtext.uninstall()
    before = _words(_svg_page(tmp_path, body))
    svgtext.install()
    after = _words(_svg_page(tmp_path, body))
    assert before == after  # the same drawer drew them


@pytest.mark.skipif(not svgtext.install(), reason="WeasyPrint's own drawer in use")
def test_a_shipped_proposal_reads_and_sits_the_same(tmp_path: Path, drawers: None,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from llmsizer.documents.proposal import render

    result = size(load(ROOT / "inputs" / "example.yaml"))
    with monkeypatch.context() as m:
        m.setattr(render, "_one_line_svg_text", lambda: False)
        svgtext.uninstall()
        # the detailed PDF (report --appendix): every chart kind, the what-if tornado included
        render_pdf(result, tmp_path / "letters.pdf", appendix=True)
        assert not svgtext.installed()
    render_pdf(result, tmp_path / "lines.pdf", appendix=True)
    assert svgtext.installed()
    before, after = _words(tmp_path / "letters.pdf"), _words(tmp_path / "lines.pdf")
    assert len(before) > 8000  # every page's words, the charts' included
    assert _same_places(before, after) < 0.05
