"""Issue 25, third hardening round, second slice: each failure class found by probing,
reproduced and shown to end as a clean outcome. docs/security.md lists each with its test."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers import EXAMPLE

from llmsizer.base.errors import InputError
from llmsizer.documents.marker import metadata_properties, read_metadata
from llmsizer.documents.workbook import write_workbook
from llmsizer.documents.xlsxsafe import custom_properties, open_workbook
from llmsizer.inputs.loader import load
from llmsizer.sizing.engine import size

openpyxl: Any = importlib.import_module("openpyxl")
LLMSIZER = [sys.executable, "-m", "llmsizer.cli"]


def run(*args: str | Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*LLMSIZER, *map(str, args)], capture_output=True, text=True,
                          timeout=timeout)


def one_clean_line(out: subprocess.CompletedProcess[str]) -> str:
    """Exit 2 and exactly one line on stderr, no traceback."""
    assert out.returncode == 2, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    return lines[0]


@pytest.fixture(scope="module")
def book(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The shipped example's workbook, as `report` writes it."""
    path = tmp_path_factory.mktemp("book") / "acme-corp.xlsx"
    write_workbook(size(load(EXAMPLE)), path)
    return path


def _metadata(path: Path) -> dict[str, Any]:
    wb = open_workbook(path, path.name)
    try:
        return read_metadata(custom_properties(wb), path.name)
    finally:
        wb.close()


def _with_properties(book: Path, out: Path, props: list[tuple[str, str]]) -> Path:
    """``book`` saved as ``out`` with its llmsizer properties replaced by ``props``: what
    anyone who knows the format (it is documented) can write, digest included."""
    from openpyxl.packaging.custom import CustomPropertyList, StringProperty

    wb = openpyxl.load_workbook(book)
    kept = [p for p in wb.custom_doc_props.props if not p.name.startswith("llmsizer")]
    wb.custom_doc_props = CustomPropertyList()
    for p in kept:
        wb.custom_doc_props.append(p)
    for name, value in props:
        wb.custom_doc_props.append(StringProperty(name=name, value=value))
    wb.save(out)
    wb.close()
    return out


# --- F1, F2: the embedded key outputs ------------------------------------------------------


def test_embedded_outputs_of_the_wrong_type_are_one_line(book: Path, tmp_path: Path) -> None:
    """F1: `capex: "abc"` in the embedded outputs, then `--diff`: "ValueError: Unknown
    format code 'f'". The embedded figures are checked when the workbook is read."""
    meta = _metadata(book)
    assert meta["outputs"]["workloads"][0]["capex"] > 0  # llmsizer wrote a number
    for where, bad in (("workloads", "abc"), ("totals", "abc"), ("workloads", True),
                       ("workloads", [1])):
        meta = _metadata(book)
        if where == "workloads":
            meta["outputs"]["workloads"][0]["capex"] = bad
        else:
            meta["outputs"]["totals"]["capex"] = bad
        bad_book = _with_properties(book, tmp_path / "f1.xlsx", metadata_properties(meta))
        line = one_clean_line(run("report", bad_book, "--out", tmp_path / "o", "--diff"))
        assert "f1.xlsx: the llmsizer data in this workbook's document properties is damaged" \
            in line, line
        assert not (tmp_path / "o").exists() or not list((tmp_path / "o").iterdir())


def test_diff_prints_embedded_names_escape_safe(book: Path, tmp_path: Path) -> None:
    """F2: an embedded option id and workload name holding ESC sequences (clear the screen,
    move the cursor) and BEL reached the terminal raw; every printed line is now
    escape-safe: ``\\x1b`` and ``\\x07`` are written out as text."""
    meta = _metadata(book)
    row = meta["outputs"]["workloads"][0]
    row["recommended"] = "\x1b[2J\x1b[H\x07pwned"
    bad_book = _with_properties(book, tmp_path / "f2.xlsx", metadata_properties(meta))
    done = run("report", bad_book, "--out", tmp_path / "o", "--diff")
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr and "\x07" not in done.stdout + done.stderr
    assert "option \\x1b[2J\\x1b[H\\x07pwned -> " in done.stdout, done.stdout


def test_terminal_text_escapes_controls_and_keeps_lines() -> None:
    from llmsizer.base.textsafe import terminal_text

    assert terminal_text("Acme 株式会社\nnext") == "Acme 株式会社\nnext"
    assert terminal_text("a\x1b[31mb\x07\nc\u202e") == "a\\x1b[31mb\\x07\nc\\u202e"
    assert terminal_text("forged\rline") == "forged\\rline"


# --- duplicate JSON keys --------------------------------------------------------------------


def test_duplicate_keys_in_config_json_and_embedded_data_are_refused(book: Path,
                                                                      tmp_path: Path) -> None:
    """A config.json giving `num_key_value_heads` twice (JSON keeps the last: 8 -> 64 KV
    heads, eight times the KV cache) and a workbook whose embedded JSON gives a key twice
    are refused, as benchmark files and YAML already are."""
    cfg = {"architectures": ["LlamaForCausalLM"], "hidden_size": 8192,
           "intermediate_size": 28672, "num_attention_heads": 64, "num_hidden_layers": 80,
           "num_key_value_heads": 8, "vocab_size": 128256, "max_position_embeddings": 131072,
           "torch_dtype": "bfloat16"}  # Llama-3.1-70B's config.json (Hugging Face)
    text = json.dumps(cfg, indent=1)
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "config.json").write_text(text.replace('"num_key_value_heads": 8',
                                                     '"num_key_value_heads": 8,\n'
                                                     ' "num_key_value_heads": 64'))
    yaml_text = EXAMPLE.read_text()
    first_model = next(line for line in yaml_text.splitlines() if "model:" in line)
    account = tmp_path / "acct.yaml"
    account.write_text(yaml_text.replace(first_model, "    model: m/config.json", 1))
    line = one_clean_line(run("validate", account))
    assert "config file 'm/config.json' gives the key 'num_key_value_heads' twice" in line
    (folder / "config.json").write_text(text)
    assert run("validate", account).returncode == 0  # the same file, once each: valid

    # the embedded data: the packed JSON with "outputs" given twice (the second replacing
    # the figures --diff compares), its digest recomputed
    import base64
    import hashlib
    import zlib

    meta = _metadata(book)
    blob = json.dumps(meta, sort_keys=True, separators=(",", ":"))
    twice = blob[:-1] + ',"outputs":{"workloads":[],"totals":{}}}'
    packed = base64.b64encode(zlib.compress(twice.encode())).decode()
    props = [p for p in metadata_properties(meta) if not p[0].startswith("llmsizer_data_")
             and p[0] not in ("llmsizer_chunks", "llmsizer_sha256")]
    chunks = [packed[i:i + 250] for i in range(0, len(packed), 250)]
    props += [("llmsizer_chunks", str(len(chunks))),
              ("llmsizer_sha256", hashlib.sha256(packed.encode()).hexdigest())]
    props += [(f"llmsizer_data_{i:03d}", c) for i, c in enumerate(chunks)]
    with pytest.raises(InputError, match="damaged or incomplete"):
        _metadata(_with_properties(book, tmp_path / "dup.xlsx", props))


# --- F18: the fidelity CSV -------------------------------------------------------------------


def test_fidelity_refuses_devices_pipes_and_oversized_csvs(tmp_path: Path) -> None:
    """F18: `fidelity /dev/zero` read until a MemoryError (20 s, 6 GB), a FIFO hung, a
    137 MB CSV took 51 s and 2 GB. A regular file is required (checked by name, before it is
    opened), of at most 20 MB and 50,000 rows, read one row at a time."""
    import os
    import time

    from llmsizer.inputs.benchdata import MAX_POINT_BYTES, MAX_POINT_ROWS, read_points

    line = one_clean_line(run("fidelity", "/dev/zero", timeout=30))
    assert line == ("error: /dev/zero: is a device, not a file; give a CSV file of measured "
                    "results")
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    line = one_clean_line(run("fidelity", fifo, timeout=30))  # no writer: it used to hang
    assert "pipe.csv: is a named pipe, not a file" in line
    header = ("source,model,gpu,gpu_count,tp,precision_weights,precision_kv,isl,osl,"
              "concurrency,scenario,metric,value,unit,notes\n")
    big = tmp_path / "big.csv"
    with big.open("w") as f:  # sparse: 137 MB on paper, nothing on disk
        f.write(header)
        f.truncate(137_000_000)
    start = time.monotonic()
    line = one_clean_line(run("fidelity", big, timeout=30))
    assert f"big.csv: is 137,000,000 bytes; a measured-results CSV holds at most " \
           f"{MAX_POINT_BYTES:,} bytes" in line
    many = tmp_path / "many.csv"
    many.write_text(header + ",,,,,,,,,,,,,,\n" * (MAX_POINT_ROWS + 1))  # 0.8 MB, blank rows
    with pytest.raises(InputError, match="holds more than 50,000 rows"):
        read_points(many)
    assert time.monotonic() - start < 20
    many.write_text(header + ",,,,,,,,,,,,,,\n" * MAX_POINT_ROWS)
    points, skipped = read_points(many)
    assert not points and len(skipped) == MAX_POINT_ROWS  # at the cap: read, each row kept


# --- F13, F14: benchmark files bounded in parse memory and in total --------------------------

BENCH = EXAMPLE.parent.parent / "tests" / "data" / "bench"


def _bench_account(tmp_path: Path, files: list[str]) -> Path:
    """seed000.yaml (32 H100s from a vLLM result of 1,000 tok/s) naming ``files``."""
    text = (BENCH / "seed000.yaml").read_text()
    assert "      file: vllm-llama70b-4xh100-c32.json\n" in text
    listed = "".join(f"\n        - {f}" for f in files)
    path = tmp_path / "seed000.yaml"
    path.write_text(text.replace(" vllm-llama70b-4xh100-c32.json\n", listed + "\n"))
    return path


def _peak_mb(*args: str | Path) -> tuple[subprocess.CompletedProcess[str], float, float]:
    """Run the CLI under a resource probe: (result, peak RSS in MB, seconds). The peak is the
    process's own VmHWM: ru_maxrss keeps, across exec, the RSS of the process it was forked
    from (Linux), so under a 500 MB pytest-xdist worker every child read 512 MB."""
    probe = ("import runpy, sys, time\n"
             "sys.argv = ['llmsizer'] + sys.argv[1:]\n"
             "start = time.monotonic()\n"
             "try:\n    runpy.run_module('llmsizer.cli', run_name='__main__')\n"
             "finally:\n"
             "    hwm = next(int(line.split()[1]) for line in open('/proc/self/status')\n"
             "               if line.startswith('VmHWM:'))\n"
             "    print(f'PEAK {hwm / 1024:.0f} {time.monotonic() - start:.2f}', file=sys.stderr)\n")
    done = subprocess.run([sys.executable, "-c", probe, *map(str, args)], capture_output=True,
                          text=True, timeout=300)
    peak = next(line for line in done.stderr.splitlines() if line.startswith("PEAK "))
    stderr = "\n".join(line for line in done.stderr.splitlines() if not line.startswith("PEAK "))
    mb, seconds = map(float, peak.split()[1:])
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout, stderr), mb, seconds


def test_a_benchmark_file_is_bounded_in_parse_memory(tmp_path: Path) -> None:
    """F13: 49 MB of 16 M `{}` decoded to 1.23 GB. The values are counted before decoding
    (objects and lists at most 100,000, values at most 5,000,000): refused in well under a
    second, under 300 MB."""
    (tmp_path / "empty-objects.json").write_bytes(b"[" + b"{}," * 16_000_000 + b"{}]")
    assert (tmp_path / "empty-objects.json").stat().st_size < 50_000_000
    account = _bench_account(tmp_path, ["empty-objects.json"])
    done, mb, seconds = _peak_mb("size", account)
    line = one_clean_line(done)
    assert ("benchmark file 'empty-objects.json': holds 16,000,002 JSON objects and lists; a "
            "benchmark result holds at most 100,000") in line, line
    print(f"F13: 16 M {{}} in 49 MB refused in {seconds:.2f} s, peak {mb:.0f} MB")
    # the whole `llmsizer size` process, imports and sizing included (1.23 GB before)
    assert mb < 600 and seconds < 30, (mb, seconds)
    numbers = b"[" + b"0," * 6_000_000 + b"0]"  # 12 MB of figures: too many values
    (tmp_path / "numbers.json").write_bytes(numbers)
    line = one_clean_line(run("size", _bench_account(tmp_path, ["numbers.json"])))
    assert "holds 6,000,001 JSON values; a benchmark result holds at most 5,000,000" in line


def test_a_file_list_is_bounded_in_total(tmp_path: Path) -> None:
    """F14: one 49 MB file listed 50 times took 76 s and 2.3 GB; 50 files of 200 records,
    87 s and 1.7 GB. A file named twice is read once; the list holds at most 100 MB (checked
    before reading) and 1,000 records in all."""
    import shutil

    result = (BENCH / "vllm-llama70b-4xh100-c32.json").read_text()
    big = json.loads(result)
    big["itls"] = [0.01] * 4_000_000  # a --save-detailed list: 24 MB, under every per-file cap
    (tmp_path / "detailed.json").write_text(json.dumps(big))
    account = _bench_account(tmp_path, ["detailed.json"] * 50)
    done, mb, seconds = _peak_mb("size", account)
    assert done.returncode == 0, done.stderr  # read once, sized: 8 replicas as from one file
    print(f"F14: a 24 MB file listed 50 times sized in {seconds:.2f} s, peak {mb:.0f} MB")
    assert "32" in done.stdout and seconds < 90 and mb < 700, (mb, seconds)
    for i in range(5):  # five distinct 24 MB files: 120 MB listed
        shutil.copy(tmp_path / "detailed.json", tmp_path / f"d{i}.json")
    line = one_clean_line(run("size", _bench_account(tmp_path, [f"d{i}.json" for i in range(5)])))
    assert "the benchmark files listed hold 1" in line and "at most 100,000,000 bytes" in line
    assert "seed000.yaml:18:7: workloads[0].measured.file" in line
    record = json.loads(result)
    for i in range(50):
        (tmp_path / f"r{i}.json").write_text("\n".join([json.dumps(record)] * 200))
    done, mb, seconds = _peak_mb("size", _bench_account(tmp_path, [f"r{i}.json" for i in range(50)]))
    line = one_clean_line(done)
    assert ("the benchmark files listed hold more than 1,000 records together (at 'r5.json'); "
            "a file: list takes at most 1,000") in line, line
    print(f"F14: 50 files x 200 records refused in {seconds:.2f} s, peak {mb:.0f} MB")
    assert seconds < 45 and mb < 500, (mb, seconds)


# --- F21: an edited workbook carrying content llmsizer did not write ------------------------


def test_an_edited_workbook_with_added_content_is_not_overwritten(book: Path,
                                                                  tmp_path: Path) -> None:
    """F21: finance adds a sheet, then `report book.xlsx --out <its own folder>`: the sheet
    was silently destroyed. It is now refused (one line, exit 2, nothing written) unless
    --overwrite-edited says so; written elsewhere it is kept, and an edit of the input cells
    alone is written over as before (tests/test_reread.py)."""
    out = tmp_path / "same"
    out.mkdir()
    wb = openpyxl.load_workbook(book)
    wb.create_sheet("Finance notes")["A1"] = "approved by CFO, 3 May"
    wb.save(out / "acme-corp.xlsx")
    wb.close()
    edited = out / "acme-corp.xlsx"
    before = edited.read_bytes()
    line = one_clean_line(run("report", edited, "--out", out))
    assert line.endswith("acme-corp.xlsx: carries content llmsizer did not write (sheet "
                         "'Finance notes'); writing the new workbook over it would destroy "
                         "that: give another --out folder, or --overwrite-edited to replace "
                         "it anyway"), line
    assert edited.read_bytes() == before
    assert sorted(p.name for p in out.iterdir()) == ["acme-corp.xlsx"]  # nothing written

    # a note typed into a cell llmsizer left empty counts too
    wb = openpyxl.load_workbook(book)
    wb["Summary"]["Z99"] = "check with procurement"
    wb.save(edited)
    wb.close()
    line = one_clean_line(run("report", edited, "--out", out))
    assert "(cell Summary!Z99)" in line, line

    done = run("report", edited, "--out", tmp_path / "elsewhere")  # not over itself: fine
    assert done.returncode == 0, done.stderr
    done = run("report", edited, "--out", out, "--overwrite-edited")
    assert done.returncode == 0, done.stderr
    assert edited.read_bytes() != before
    assert "Finance notes" not in openpyxl.load_workbook(edited, read_only=True).sheetnames


# --- suggestions that are valid fixes ---------------------------------------------------------


def _costs_line(tmp_path: Path, lines: str) -> str:
    text = EXAMPLE.read_text()
    assert "\ncosts:\n" in text
    path = tmp_path / "s.yaml"
    path.write_text(text.replace("\ncosts:\n", "\ncosts:\n" + lines, 1))
    with pytest.raises(InputError) as exc:
        load(path)
    return str(exc.value)


def test_unknown_key_suggestions_are_valid_fixes(tmp_path: Path) -> None:
    """`power_price: 0.15` was told "write it as `node_prices: 0.15`" (a mapping of node
    prices: the fix fails too). Now: the word's meaning (electricity_per_kwh), and a key of
    another shape is named with its shape, never as a one-line fix. Every scalar costs field
    misspelt (an extra s) is offered a fix naming it, at the right place."""
    from llmsizer.inputs.schema import Costs

    msg = _costs_line(tmp_path, "  power_price: 0.15\n")
    # round 24: inputs/example.yaml has `electricity_per_kwh: 0.12`; "write it as
    # `electricity_per_kwh: 0.15`" made a second one, which the loader refuses
    assert "unknown key 'power_price' (did you mean electricity_per_kwh?); this block already " \
           "has `electricity_per_kwh:`: keep one of the two; allowed here: " in msg, msg
    text = EXAMPLE.read_text().replace("  electricity_per_kwh: 0.12\n", "  power_price: 0.15\n")
    (tmp_path / "p.yaml").write_text(text)
    with pytest.raises(InputError) as exc:
        load(tmp_path / "p.yaml")
    assert "unknown key 'power_price' (did you mean electricity_per_kwh?); write it as " \
           "`electricity_per_kwh: 0.15`" in str(exc.value), str(exc.value)
    msg = _costs_line(tmp_path, "  gpu_price: 30000\n")
    assert "`gpu_prices:` takes a mapping (`key: value` lines indented under it), not a " \
           "single value" in msg and "write it as" not in msg, msg
    msg = _costs_line(tmp_path, "  gpu_price:\n    h100-sxm: 30000\n")
    assert "rename it to `gpu_prices:`" in msg, msg
    text = EXAMPLE.read_text()
    checked = 0
    for name, f in Costs.model_fields.items():
        example = (f.json_schema_extra or {}).get("example") if isinstance(
            f.json_schema_extra, dict) else None
        if example is None or f"\n  {name}:" in text:
            continue
        msg = _costs_line(tmp_path, f"  {name}s: {example}\n")
        if str(example).startswith("{"):  # a mapping: renamed, its lines kept
            assert f"rename it to `{name}:`" in msg, msg
            continue
        fix = msg.split("write it as `", 1)[1].split("`", 1)[0]
        assert fix == f"{name}: {example}", msg
        fixed = tmp_path / "fixed.yaml"
        fixed.write_text(text.replace("\ncosts:\n", f"\ncosts:\n  {fix}\n", 1))
        try:
            load(fixed)  # the fix as given is a known key of the right shape
        except InputError as exc:  # only a cross-field rule may still object
            assert "unknown key" not in str(exc) and "Input should be" not in str(exc), exc
        checked += 1
    assert checked >= 6


# --- reserved device names ----------------------------------------------------------------


def test_windows_device_names_are_stemmed_safely(tmp_path: Path) -> None:
    """Accounts named CON, NUL, AUX, COM1, LPT9 wrote `con.pdf`, `nul.json`: names Windows
    reserves for devices (with any extension), which a Windows share cannot hold."""
    from llmsizer.sizing.results import slugify

    for name, stem in (("CON", "con-account"), ("Nul", "nul-account"), ("aux", "aux-account"),
                       ("PRN", "prn-account"), ("COM1", "com1-account"),
                       ("LPT9", "lpt9-account"), ("COM¹", "com1-account"),
                       ("Con Edison", "con-edison"), ("COM10", "com10"), ("nullify", "nullify")):
        assert slugify(name) == stem, name
    text = EXAMPLE.read_text()
    assert "  name: Acme Corp\n" in text
    (tmp_path / "con.yaml").write_text(text.replace("  name: Acme Corp\n", "  name: CON\n", 1))
    done = run("report", tmp_path / "con.yaml", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if not p.name.startswith(".")) \
        == ["con-account.json", "con-account.pdf", "con-account.xlsx"]


# --- CJK names in the PDF ---------------------------------------------------------------------


def test_cjk_account_names_embed_a_cjk_font(tmp_path: Path) -> None:
    """CJK names rendered as empty boxes: DejaVu Sans has no CJK glyphs. Noto Sans CJK
    (Debian's fonts-noto-cjk, installed by scripts/setup.sh) is next in the PDF's font stack:
    the PDF embeds it, and its text holds the name."""
    name = "株式会社アクメ 東京"
    text = EXAMPLE.read_text()
    (tmp_path / "cjk.yaml").write_text(text.replace("  name: Acme Corp\n", f"  name: {name}\n", 1),
                                       encoding="utf-8")
    done = run("report", tmp_path / "cjk.yaml", "--out", tmp_path / "out")
    assert done.returncode == 0, done.stderr
    pdf = next((tmp_path / "out").glob("*.pdf"))
    fonts = subprocess.run(["pdffonts", pdf], capture_output=True, text=True, check=True).stdout
    cjk = [line for line in fonts.splitlines() if "Noto-Sans-CJK" in line]
    assert cjk and all(" yes " in line for line in cjk), fonts  # embedded (subset)
    words = subprocess.run(["pdftotext", pdf, "-"], capture_output=True, text=True,
                           check=True).stdout
    assert name in words
