"""An account's files carry its name in its own script (sizing/results.py: slugify; web
downloads: web/account.py: content_disposition). ``slugify`` kept only ASCII, so
``日本電気``, ``Сбербанк`` or ``شركة`` wrote ``account.pdf``; Latin names keep the stems they
always had (shipped outputs and snapshots name them)."""

from __future__ import annotations

import json
import subprocess
import sys
import unicodedata
from pathlib import Path
from urllib.parse import unquote, urlencode

import openpyxl
import pytest
import yaml
from fastapi.testclient import TestClient
from helpers import example_dict

from llmsizer.base.atomic import TMP_PREFIX
from llmsizer.runs import batch
from llmsizer.sizing.results import slugify
from llmsizer.web.account import content_disposition

LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]


def _safe(slug: str) -> None:
    """What a file stem may be: letters, digits, combining marks after them, single inner
    hyphens; nothing else (no dot, separator, control, format or private character)."""
    parts = slug.split("-")
    assert all(parts), slug  # not empty, no leading, trailing or doubled hyphen
    for part in parts:
        assert unicodedata.category(part[0])[0] in "LN", slug
        assert all(unicodedata.category(c)[0] in "LNM" for c in part), slug
    assert len(slug.encode()) <= 120 and unicodedata.normalize("NFC", slug) == slug, slug


# Latin names: today's stems, byte for byte (contoso-bank names shipped outputs)
LATIN = [("Contoso Bank", "contoso-bank"), ("Acme Corp", "acme-corp"),
         ("Café Ñandú", "cafe-nandu"), ("Crédit Agricole S.A.", "credit-agricole-s-a"),
         ("Cafe\u0301 Ñandu\u0301", "cafe-nandu"),  # the same, decomposed (macOS)
         ("ＡＣＭＥ Corp", "acme-corp"), ("CON", "con-account"), ("COM¹", "com1-account"),
         ("Acme 🚀 Corp", "acme-corp"), ("Acme\u202eCorp", "acmecorp")]
SCRIPTS = [
    ("日本電気", "日本電気"),  # CJK
    ("株式会社 東京・銀行", "株式会社-東京-銀行"),  # the middle dot separates words
    ("Сбербанк", "сбербанк"),  # Cyrillic, case-folded
    ("Ελληνική Τράπεζα", "ελληνική-τράπεζα"),  # Greek
    ("شركة الاتصالات السعودية", "شركة-الاتصالات-السعودية"),  # Arabic (right to left)
    ("टाटा कंसल्टेंसी सर्विसेज", "टाटा-कंसल्टेंसी-सर्विसेज"),  # Devanagari: marks kept
    ("NEC 日本電気", "nec-日本電気"),
    ("Ørsted", "ørsted"),  # a Latin letter without an ASCII spelling is kept, not dropped
    ("Straße", "strasse"),  # case folding spells ß as ss
]


@pytest.mark.parametrize(("name", "stem"), LATIN + SCRIPTS)
def test_a_stem_keeps_the_name_in_its_own_script(name: str, stem: str) -> None:
    assert slugify(name) == stem
    _safe(stem)


@pytest.mark.parametrize("name", ["🚀🌕", "!!!...///", "..", "\u202e\u200b\u2066", "  -- ",
                                  "\x00\x07\x1b[;", "\ue000\ue001"])  # the last: private use
def test_a_name_without_letters_or_digits_is_account(name: str) -> None:
    assert slugify(name) == "account"


@pytest.mark.parametrize("name", [
    "日本\u202e電気", "日本\u200b電気", "\u2066日本電気\u2069", "日本\u200d電気\ufeff",  # invisible
    "../../日本電気/..\\", "日本電気.pdf", "日本電気\n\r\t", "日本\x00電気", "日本\x1b[31m電気"])
def test_hidden_characters_separators_and_dots_never_reach_a_stem(name: str) -> None:
    slug = slugify(name)
    _safe(slug)
    assert slug.replace("-", "") in ("日本電気", "日本電気pdf", "日本31m電気"), slug


@pytest.mark.parametrize("unit", ["日", "ж", "ε", "क्षि", "ا", "😀a", "é", "a"])
def test_a_stem_is_at_most_60_characters_and_120_bytes_cut_between_letters(unit: str) -> None:
    """CJK and Devanagari take 3 bytes a character: 60 of them would be 180 bytes, and a
    batch's file names add more (see the next test). A cut never strips a letter's marks."""
    for lead in range(4):  # the cut falls at every place inside the unit
        name = "x" * lead + "日" * (lead % 2) + unit * 80
        whole = slugify(name, max_len=10_000)
        slug = slugify(name)
        _safe(slug)
        assert len(slug) <= 60 and len(slug.encode()) <= 120, slug
        assert whole.startswith(slug) and unicodedata.category(whole[len(slug)])[0] != "M"
        after = len(slug) + 1  # the next letter with its marks would pass a bound
        while unicodedata.category(whole[after])[0] == "M":
            after += 1
        assert after > 60 or len(whole[:after].encode()) > 120, slug


def _account(folder: Path, file: str, name: str) -> Path:
    doc = example_dict()
    doc["account"]["name"] = name
    doc["workloads"] = doc["workloads"][:1]
    doc["hardware"]["gpus"] = ["h100-sxm"]
    doc["hardware"]["weight_precisions"] = ["fp8"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / file).write_text(yaml.safe_dump(doc, allow_unicode=True), encoding="utf-8")
    return folder / file


LONG = "東京海上日動火災保険株式会社" * 5  # 70 characters: cut to 40 (120 bytes)


def test_a_batch_writes_and_lists_each_account_under_its_own_name(tmp_path: Path) -> None:
    """Eight accounts: four in other scripts; two with the same 70-character Japanese name
    (one 120-byte stem, so each gets its input file's name appended, at most 60 bytes, and
    then a counter: the longest names a run writes, its temp and manifest files included,
    stay under the 255-byte limit); one of emoji and one of punctuation (both `account`:
    told apart by their files)."""
    src = tmp_path / "in"
    names = {"nec.yaml": "日本電気", "sber.yaml": "Сбербанк", "greek.yaml": "Ελληνική Τράπεζα",
             "tata.yaml": "टाटा कंसल्टेंसी", f"{LONG}-a.yaml": LONG, f"{LONG}-b.yaml": LONG,
             "rocket.yaml": "🚀🌕", "dots.yaml": "...!!!"}
    for file, name in names.items():
        _account(src, file, name)
    files = sorted(src.iterdir())
    stems = batch.stems(files)
    by_file = dict(zip((f.name for f in files), stems, strict=True))
    assert by_file["nec.yaml"] == "日本電気" and by_file["sber.yaml"] == "сбербанк"
    assert by_file["greek.yaml"] == "ελληνική-τράπεζα"
    assert by_file["tata.yaml"] == "टाटा-कंसल्टेंसी"
    assert by_file["rocket.yaml"] == "account--rocket" and by_file["dots.yaml"] == "account--dots"
    long_a, long_b = by_file[f"{LONG}-a.yaml"], by_file[f"{LONG}-b.yaml"]
    assert long_a != long_b and long_a.startswith(LONG[:40] + "--")
    longest = max(len(s.encode()) for s in stems)
    assert longest > 160  # the case that needs the byte bound
    out = tmp_path / "out"
    proc = subprocess.run([*LLMSIZER, "report", str(src), "--out", str(out), "--jobs", "2"],
                          capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads((out / "batch.json").read_text(encoding="utf-8"))
    listed = {Path(a["file"]).name: a for a in doc["accounts"]}
    assert {f: a["stem"] for f, a in listed.items()} == by_file
    written = {p.name for p in out.iterdir()}
    for file, a in listed.items():
        assert a["status"] == "ok" and sorted(a["outputs"]) == sorted(
            f"{by_file[file]}.{x}" for x in ("json", "pdf", "xlsx")), a
        assert set(a["outputs"]) <= written
        result = json.loads((out / f"{by_file[file]}.json").read_text(encoding="utf-8"))
        assert result["account"]["name"] == names[file]
    assert not any(n.startswith(TMP_PREFIX) for n in written)
    # the summary links each account's files by their names
    ws = openpyxl.load_workbook(out / "summary.xlsx").active
    links = {c.hyperlink.target.replace("%20", " ") for row in ws.iter_rows() for c in row
             if c.hyperlink is not None}
    assert {f"{by_file['nec.yaml']}.pdf", f"{long_b}.xlsx"} <= {unquote(t) for t in links}


@pytest.mark.parametrize(("name", "header"), [
    ("acme-corp.pdf", 'attachment; filename="acme-corp.pdf"'),  # as it was
    ("日本電気.pdf", "attachment; filename=\"account.pdf\"; "
                  "filename*=UTF-8''%E6%97%A5%E6%9C%AC%E9%9B%BB%E6%B0%97.pdf"),
    ("nec-日本.xlsx", "attachment; filename=\"nec.xlsx\"; "
                     "filename*=UTF-8''nec-%E6%97%A5%E6%9C%AC.xlsx"),
    ('a"b\r\nX-Evil: 1;c.pdf', "attachment; filename=\"a-b-X-Evil-1-c.pdf\"; "
                                "filename*=UTF-8''a%22b%0D%0AX-Evil%3A%201%3Bc.pdf"),
])
def test_a_download_header_is_ascii_with_the_name_in_utf8(name: str, header: str) -> None:
    assert content_disposition(name) == header
    assert header.isascii() and "\r" not in header and "\n" not in header
    if "filename*" in header:
        assert unquote(header.split("''", 1)[1]) == name  # what the browser saves it as


@pytest.mark.parametrize("name", ["日本電気", "Сбербанк", "شركة الاتصالات", "टाटा", "🚀"])
def test_the_web_app_names_a_download_after_the_account(name: str) -> None:
    from test_web_pages import chat_form

    from llmsizer.web.app import create_app

    form = [(k, name if k == "account.name" else v) for k, v in chat_form()]
    with TestClient(create_app()) as client:
        r = client.post("/download/yaml", content=urlencode(form),
                        headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 200
    raw = r.headers.raw  # type: ignore[attr-defined]
    [value] = [v for k, v in raw if k.lower() == b"content-disposition"]
    assert value.isascii()
    text = value.decode()
    stem = slugify(name)
    if stem == "account":
        assert text == 'attachment; filename="account.yaml"'
    else:
        assert unquote(text.split("filename*=UTF-8''", 1)[1]) == f"{stem}.yaml"
        assert 'filename="account.yaml"' in text
