"""Issue 17: change detection reads references only through the loader's checks; benchmark
figures have physical ranges; the results JSON refuses NaN and infinity; hostile workbooks
are refused before openpyxl parses them (docs/security.md)."""

from __future__ import annotations

import copy
import io
import json
import math
import os
import re
import time
import zipfile
from pathlib import Path

import pytest
import yaml
from helpers import DATA
from test_batch import small_account

from llmsizer.base.errors import InputError
from llmsizer.documents.reread import read_workbook
from llmsizer.documents.xlsxsafe import MAX_PART_BYTES, MAX_UNPACKED_BYTES
from llmsizer.inputs.benchpoints import RANGES, BenchPoint
from llmsizer.inputs.loader import load
from llmsizer.runs import batch
from llmsizer.runs.outcome import Outcome
from llmsizer.runs.report import write_outputs
from llmsizer.sizing.engine import size

BENCH = DATA / "bench"


# --- change detection ---------------------------------------------------------------------


def test_fingerprint_reads_no_link_named_like_a_catalog_model(tmp_path: Path) -> None:
    """A link called like the catalog model (the loader reads a catalog id, never a file of
    that name) and links out of the folder or to a 3 GB file are not read by the batch's
    change detection: it finishes at once (it used to read the 3 GB in full)."""
    big = tmp_path / "elsewhere" / "big"
    big.parent.mkdir()
    with open(big, "wb") as fh:  # sparse: 3 GB that take no disk
        fh.truncate(3 * 10**9)
    src = tmp_path / "in"
    src.mkdir()
    doc = small_account(1)
    model = doc["workloads"][0]["model"]
    (src / model).symlink_to(big)
    (src / "inside.json").symlink_to(big)  # the config.json form, but 3 GB
    (src / "out.json").symlink_to(tmp_path / "elsewhere" / "x.json")
    (tmp_path / "elsewhere" / "x.json").write_text("{}")
    for name, rel in (("b", "inside.json"), ("c", "out.json")):  # no shared objects: no
        doc["workloads"].append({**copy.deepcopy(doc["workloads"][0]), "name": name,  # aliases
                                 "model": rel})
    path = src / "a.yaml"
    path.write_text(yaml.safe_dump(doc))
    assert batch._referenced_files(path) == sorted([("inside.json", 1_000_000),
                                                    ("out.json", 1_000_000)])
    assert batch._reference_bytes(src, "inside.json", 1_000_000) is None  # too big
    assert batch._reference_bytes(src, "out.json", 1_000_000) is None  # outside the folder
    assert batch._reference_bytes(src, model, 10**10) is None  # outside too
    t0 = time.perf_counter()
    first = batch.fingerprint(path, None)
    assert time.perf_counter() - t0 < 5
    (tmp_path / "elsewhere" / "x.json").write_text('{"changed": 1}')
    assert batch.fingerprint(path, None) == first  # a file outside is not part of it


def test_fingerprint_still_sees_a_changed_benchmark_file(tmp_path: Path) -> None:
    src = tmp_path / "in"
    src.mkdir()
    raw = json.loads((BENCH / "vllm-llama70b-4xh100-c32.json").read_text())
    (src / "b.json").write_text(json.dumps(raw))
    doc = small_account(1)
    doc["workloads"][0]["measured"] = {"file": "b.json", "gpu": "h100-sxm",
                                       "gpus_per_replica": 4}
    path = src / "a.yaml"
    path.write_text(yaml.safe_dump(doc))
    before = batch.fingerprint(path, None)
    raw["output_throughput"] += 1
    (src / "b.json").write_text(json.dumps(raw))
    assert batch.fingerprint(path, None) != before


# --- benchmark figures ----------------------------------------------------------------------


def _seed_with(tmp_path: Path, key: str, value: float) -> Path:
    raw = json.loads((BENCH / "vllm-llama70b-4xh100-c32.json").read_text())
    raw[key] = value
    (tmp_path / "vllm-llama70b-4xh100-c32.json").write_text(json.dumps(raw))
    yaml_path = tmp_path / "seed000.yaml"
    yaml_path.write_text((BENCH / "seed000.yaml").read_text())
    return yaml_path


@pytest.mark.parametrize(("key", "value", "unit"), [
    ("median_tpot_ms", 5e-324, "ms"), ("median_tpot_ms", 1e-6, "ms"),
    ("p99_ttft_ms", 1e12, "ms"), ("output_throughput", 5e-324, "tokens/s"),
    ("max_concurrency", 5e-324, "requests in flight")])
def test_a_figure_outside_its_physical_range_names_key_and_range(
        tmp_path: Path, key: str, value: float, unit: str) -> None:
    with pytest.raises(InputError) as info:
        load(_seed_with(tmp_path, key, value))
    msg = str(info.value)
    assert "\n" not in msg and unit in msg and "allowed:" in msg, msg
    assert key in msg or key.replace("max_", "") in msg, msg


def test_subnormal_tpot_never_reaches_the_json_or_the_pdf(tmp_path: Path) -> None:
    """The issue's case: TPOT 5e-324 gave 1000 / TPOT = inf ("Infinity" in the JSON, "inf
    tok/s" in the PDF). Now a clean error; and the smallest allowed TPOT stays finite."""
    with pytest.raises(InputError, match=r"'median_tpot_ms' is 5e-324 ms; allowed: 0\.001"):
        load(_seed_with(tmp_path, "median_tpot_ms", 5e-324))
    lo = RANGES["latency"][0]
    result = size(load(_seed_with(tmp_path, "median_tpot_ms", lo)))
    text = result.to_json()
    assert "Infinity" not in text and "NaN" not in text
    point = result.workloads[0].measured_points[0]
    assert point.tokens_per_s_per_user == pytest.approx(1000 / lo)  # 1000 / TPOT (ms)


def test_embedded_points_are_bounded_too() -> None:
    """A workbook's embedded points are validated by the same model."""
    ok = {"file": "b.json", "format": "vllm", "output_tokens_per_s": 1000.0}
    BenchPoint.model_validate(ok)
    with pytest.raises(ValueError, match=r"greater than or equal to 0\.001"):
        BenchPoint.model_validate({**ok, "tpot_ms": {"median": 5e-324}})


# --- strict JSON ------------------------------------------------------------------------------


def test_results_json_refuses_nan_and_infinity() -> None:
    result = size(load(BENCH / "seed000.yaml"))
    clean = result.to_json()
    json.loads(clean)
    for bad in (math.inf, -math.inf, math.nan):
        broken = result.model_copy(update={"usd_exchange_rate": bad})
        with pytest.raises(ValueError, match="non-finite number"):
            broken.to_json()
    named = result.model_copy(update={"account": result.account.model_copy(
        update={"name": "Infinity NaN"})})
    assert '"Infinity NaN"' in named.to_json()  # the words inside a string are fine
    with pytest.raises(ValueError):
        batch.batch_json([Outcome(file="a", stem="a", capex=math.inf)])


# --- hostile workbooks ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("book")
    src = folder / "a.yaml"
    src.write_text(yaml.safe_dump(small_account(1)))
    write_outputs(size(load(src)), folder, formats=("xlsx",))
    return next(folder.glob("*.xlsx"))


def _rebuilt(book: Path, dest: Path, change: dict[str, bytes | None]) -> Path:
    with zipfile.ZipFile(book) as z:
        parts = {i.filename: z.read(i) for i in z.infolist()}
    parts.update(change)
    with zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in parts.items():
            if data is not None:
                z.writestr(name, data)
    return dest


def _refusal(path: Path) -> tuple[str, float]:
    t0 = time.perf_counter()
    with pytest.raises(InputError) as info:
        read_workbook(path)
    msg = str(info.value)
    assert "\n" not in msg and msg.startswith(str(path)), msg
    return msg, time.perf_counter() - t0


XXE = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
       b'<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>&xxe;'
       b'</t></si></sst>')
LAUGHS = (b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaaaaaaaa">'
          + b"".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">'.encode()
                     for i in range(9))
          + b']><x>&j;</x>')


@pytest.mark.parametrize("part", ["xl/sharedStrings.xml", "xl/worksheets/sheet1.xml",
                                  "docProps/custom.xml"])
@pytest.mark.parametrize("payload", [XXE, LAUGHS], ids=["external-entity", "billion-laughs"])
def test_entities_are_refused_naming_the_part(book: Path, tmp_path: Path, part: str,
                                              payload: bytes) -> None:
    msg, seconds = _refusal(_rebuilt(book, tmp_path / "e.xlsx", {part: payload}))
    assert f"part '{part}' declares a document type" in msg and seconds < 10


def test_900_mb_of_comments_is_refused_quickly(book: Path, tmp_path: Path) -> None:
    """The issue's 900 MB of XML comments: refused from the declared size, and, with the
    zip header lying about it, while inflating, at the limit (25 MB), not after 900 MB."""
    with zipfile.ZipFile(book) as z:
        sheet = z.read("xl/worksheets/sheet3.xml")
    comment = b"<!--" + b"x" * (MAX_PART_BYTES + 1_000_000) + b"-->"
    fat = sheet.replace(b"<sheetData>", b"<sheetData>" + comment, 1)
    path = _rebuilt(book, tmp_path / "c.xlsx", {"xl/worksheets/sheet3.xml": fat})
    msg, seconds = _refusal(path)
    assert "part 'xl/worksheets/sheet3.xml' unpacks to" in msg and seconds < 10
    lying = tmp_path / "lying.xlsx"
    lying.write_bytes(_lie_about_sizes(path.read_bytes(), "xl/worksheets/sheet3.xml", 1000))
    msg, seconds = _refusal(lying)
    assert "part 'xl/worksheets/sheet3.xml'" in msg and seconds < 10, msg


def _lie_about_sizes(data: bytes, name: str, size: int) -> bytes:
    """Rewrite the uncompressed size of ``name`` in the central directory."""
    raw = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        info = z.getinfo(name)
    cd = raw.find(b"PK\x01\x02" + raw[info.header_offset + 4:info.header_offset + 6])
    while cd != -1:
        name_len = int.from_bytes(raw[cd + 28:cd + 30], "little")
        if raw[cd + 46:cd + 46 + name_len] == name.encode():
            raw[cd + 24:cd + 28] = size.to_bytes(4, "little")
            break
        cd = raw.find(b"PK\x01\x02", cd + 4)
    return bytes(raw)


def test_total_unpacked_size_and_many_parts_are_bounded(book: Path, tmp_path: Path) -> None:
    chunk = b"<x>" + b"y" * (MAX_PART_BYTES - 100) + b"</x>"
    parts = {f"xl/media/pad{i}.xml": chunk for i in range(MAX_UNPACKED_BYTES // MAX_PART_BYTES
                                                           + 1)}
    msg, seconds = _refusal(_rebuilt(book, tmp_path / "t.xlsx", parts))  # type: ignore[arg-type]
    assert "unpacks to more than" in msg and seconds < 10
    many = {f"xl/pad{i}.xml": b"<x/>" for i in range(600)}
    msg, _ = _refusal(_rebuilt(book, tmp_path / "m.xlsx", many))  # type: ignore[arg-type]
    assert "parts (at most 500 are read)" in msg


def test_cells_are_bounded_and_sheets_never_padded(book: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(book) as z:
        sheet = z.read("xl/worksheets/sheet2.xml")
    cells = b"".join(b'<row r="%d"><c r="XFD%d"><f>1+1</f></c></row>' % (r, r)
                     for r in range(5000, 5100))
    far = sheet.replace(b"</sheetData>", cells + b"</sheetData>", 1)
    far = re.sub(rb'<dimension ref="[^"]*"', b'<dimension ref="A1:XFD1048576"', far, count=1)
    msg, seconds = _refusal(_rebuilt(book, tmp_path / "f.xlsx", {"xl/worksheets/sheet2.xml":
                                                                  far}))
    # read cell by cell (17 billion cells if padded to the stated dimension), then compared
    assert seconds < 10 and "XFD5000 holds a formula llmsizer did not write" in msg, msg
    many = b"".join(b'<c r="A%d"><v>1</v></c>' % r for r in range(210_000))
    dense = sheet.replace(b"</sheetData>", b'<row r="9">' + many + b"</row></sheetData>", 1)
    msg, seconds = _refusal(_rebuilt(book, tmp_path / "d.xlsx", {"xl/worksheets/sheet2.xml":
                                                                  dense}))
    assert "cells" in msg and "xl/worksheets/sheet2.xml" in msg and seconds < 10


def test_malformed_parts_are_named(book: Path, tmp_path: Path) -> None:
    for part in ("xl/workbook.xml", "[Content_Types].xml", "xl/styles.xml",
                 "xl/_rels/workbook.xml.rels"):
        with zipfile.ZipFile(book) as z:
            data = z.read(part)
        msg, _ = _refusal(_rebuilt(book, tmp_path / "x.xlsx", {part: data[: len(data) // 2]}))
        assert f"part '{part}' is not well-formed XML" in msg, msg
    raw = bytearray(book.read_bytes())
    at = raw.find(b"xl/styles.xml") + 200  # inside the compressed stream of a part
    raw[at:at + 40] = os.urandom(40)
    damaged = tmp_path / "d.xlsx"
    damaged.write_bytes(bytes(raw))
    msg, _ = _refusal(damaged)
    assert "part '" in msg or "zip archive" in msg, msg
