"""Workbook fuzzing driver (issue 17), run by tests/test_fuzz.py in its own process:

    python tests/support/workbook_fuzz.py WORKDIR CASES SEED

A small account's workbook is written once, then mutated CASES times (seeded): sheet and
shared-string XML (snippets inserted, stretches cut or duplicated, values replaced),
entities and document types in any XML part, zip members (deleted, duplicated, added,
huge, hundreds), the zip bytes themselves (flipped, truncated, sizes that lie) and the
embedded llmsizer data (re-encoded with hostile requirements). Each mutated file goes
through ``read_workbook``. Allowed: a Reread, or an InputError whose message is one line
that names the file and where (a part, a sheet, a cell, the embedded data). Each case runs
under a 10 s alarm, and the process's address space is capped at its size after warm-up
plus 500 MB, so a case that needs more fails with MemoryError (counted, not clean).

The last line printed is a JSON object of counts.
"""

from __future__ import annotations

import copy
import hashlib
import io
import json
import os
import random
import re
import resource
import signal
import sys
import tempfile
import time
import traceback
import zipfile
from pathlib import Path
from typing import Any

import yaml

from llmsizer.base.errors import InputError
from llmsizer.documents import reread, xlsxsafe
from llmsizer.inputs.loader import load
from llmsizer.runs.report import write_outputs
from llmsizer.sizing.engine import size

CASE_SECONDS = 10
CASE_MEGABYTES = 500
MAX_MESSAGE = 1200

ACCOUNT = {
    "schema_version": 1,
    "account": {"name": "Fuzz", "currency": "USD"},
    "workloads": [{"name": "chat", "model": "llama-3.1-8b", "concurrent_users": 40,
                   "prompt_tokens": 500, "output_tokens": 200,
                   "targets": {"tokens_per_s_per_user": 20}}],
    "hardware": {"gpus": ["l40s"], "weight_precisions": ["fp8"], "kv_precisions": ["fp8"]},
}

DTDS = [
    b'<!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>',
    b'<!DOCTYPE x [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">'
    b'<!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;"><!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;">]>',
    b'<!DOCTYPE x [<!ENTITY % p SYSTEM "http://127.0.0.1:9/x.dtd"> %p;]>',
    b'<!DOCTYPE x SYSTEM "file:///dev/zero">',
    b"<!DOCTYPE x>",
    b'<!DOCTYPE x [<!ENTITY e SYSTEM "x.png" NDATA png>]>',
]
SNIPPETS = [
    b"<!-- comment -->", b"&xxe;", b"&amp;", b"&#0;", b"&#x110000;", b"]]>", b"<![CDATA[x]]>",
    b"<x>", b"</row>", b"</sheetData>", b"<?pi x?>", b'<c r="A1"><f>1+1</f></c>',
    b'<c r="XFD1048576"><v>1</v></c>', b'<c r="ZZZZ0"><v>1</v></c>', b'<c r="A1" t="s"><v>99999'
    b"</v></c>", b'<c t="b"><v>7</v></c>', b'<c t="d"><v>x</v></c>', b'<c s="99999"><v>1</v></c>',
    b'<row r="-1"/>', b'<row r="0"><c><v>1</v></c></row>', b"\x00", b"\xff\xfe", b"\xc3\x28",
    b'<definedName name="in_headroom">Inputs!$Z$1</definedName>', b'x="' + b"y" * 5000 + b'"',
    b"<si><t>" + b"z" * 20000 + b"</t></si>", b"\n" * 100, b"<" * 50, b'<c r="A1" t="e"><v>#N/A'
    b"</v></c>",
]
VALUES = [b"0", b"-0", b"-1", b"1e308", b"1e309", b"5e-324", b"NaN", b"inf", b"", b"x",
          b"99999999999999999999999", b"0.5", b"1E-9", b"=1", b"1,000", b"\xe2\x80\xae1"]
NUMBERS = [0, -1, 1e308, 5e-324, 10**30, 2**63, 0.5, "lots", None, [], {}, True, "1e309"]


def build_base(folder: Path) -> Path:
    src = folder / "base.yaml"
    src.write_text(yaml.safe_dump(ACCOUNT, sort_keys=False))
    write_outputs(size(load(src)), folder, formats=("xlsx",))
    return folder / "fuzz.xlsx"


def parts_of(book: Path) -> dict[str, bytes]:
    with zipfile.ZipFile(book) as z:
        return {i.filename: z.read(i) for i in z.infolist()}


def pack(parts: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", method) as z:
        for name, data in parts.items():
            z.writestr(name, data)
    return buf.getvalue()


def lie_about_size(data: bytes, rng: random.Random) -> bytes:
    """Rewrite one member's uncompressed size in the central directory."""
    raw = bytearray(data)
    starts = [m.start() for m in re.finditer(b"PK\x01\x02", data)]
    if not starts:
        return data
    at = rng.choice(starts)
    size = rng.choice([0, 1, 100, 10**6, 2**31 - 1, 2**32 - 1])
    raw[at + 24:at + 28] = size.to_bytes(4, "little")
    return bytes(raw)


def custom_xml(props: list[tuple[str, str]]) -> bytes:
    body = "".join(f'<property fmtid="{{D5CDD505-2E9C-101B-9397-08002B2CF9AE}}" pid="{i + 2}" '
                   f'name="{n}"><vt:lpwstr>{v}</vt:lpwstr></property>'
                   for i, (n, v) in enumerate(props))
    return ('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Properties xmlns='
            '"http://schemas.openxmlformats.org/officeDocument/2006/custom-properties" '
            'xmlns:vt="http://schemas.openxmlformats.org/officeDocument/2006/docPropsVTypes">'
            f"{body}</Properties>").encode()


def paths(node: Any, pre: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [pre] if pre else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, (*pre, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths(v, (*pre, i))
    return out


def mutate_meta(meta: dict[str, Any], rng: random.Random) -> list[tuple[str, str]]:
    """The embedded data re-encoded after a hostile change (so the checks past the
    marker run: the embedded requirements, models, points and the value count)."""
    meta = copy.deepcopy(meta)
    how = rng.randrange(5)
    if how == 0:  # a value of the requirements
        req = meta["source"]["requirements"]
        locs = paths(req)
        loc = rng.choice(locs)
        cur = req
        for p in loc[:-1]:
            cur = cur[p]
        cur[loc[-1]] = copy.deepcopy(rng.choice(NUMBERS))
    elif how == 1:  # many values
        meta["source"]["requirements"]["notes"] = [0] * rng.choice([10, 300_000])
    elif how == 2:  # a hostile benchmark point
        meta["source"]["bench"] = {"0": [{"file": "b.json", "format": "vllm",
                                          "output_tokens_per_s": rng.choice(NUMBERS),
                                          "tpot_ms": {"median": 5e-324}}]}
    elif how == 3:  # a hostile embedded model
        meta["source"]["models"] = {"m.json": {"id": "x", "params": rng.choice(NUMBERS)}}
    else:  # another structure digest, or the outputs for --diff
        meta[rng.choice(["structure", "outputs", "inputs", "prices"])] = rng.choice(NUMBERS)
    return reread.metadata_properties(meta)


def mutate(parts: dict[str, bytes], meta: dict[str, Any], rng: random.Random,
           big: bytes) -> tuple[str, bytes]:
    """One mutation: (what was done, the workbook's bytes)."""
    parts = dict(parts)
    xml = [n for n in parts if n.endswith((".xml", ".rels"))]
    kind = rng.choice(["insert", "insert", "cut", "dup", "value", "dtd", "dtd", "member",
                       "zipbytes", "meta", "meta", "edit"])
    name = rng.choice(xml)
    data = parts[name]
    at = rng.randrange(len(data) + 1)
    what = f"{kind} {name}"
    if kind == "insert":
        parts[name] = data[:at] + rng.choice(SNIPPETS) + data[at:]
    elif kind == "cut":
        parts[name] = data[:at] + data[at + rng.randint(1, 400):]
    elif kind == "dup":
        parts[name] = data[:at] + data[at:at + rng.randint(1, 2000)] + data[at:]
    elif kind in ("value", "edit"):
        sheet = rng.choice([n for n in xml if "worksheets/sheet" in n])
        text = parts[sheet]
        hits = list(re.finditer(rb"<v>([^<]*)</v>", text))
        if hits:
            m = rng.choice(hits)
            new = rng.choice(VALUES) if kind == "value" else str(rng.choice(
                [1, 2, 10, 64, 0.3, 1.5, 500])).encode()
            parts[sheet] = text[:m.start(1)] + new + text[m.end(1):]
        what = f"{kind} {sheet}"
    elif kind == "dtd":
        head, sep, rest = data.partition(b"?>")
        dtd = rng.choice(DTDS)
        parts[name] = head + sep + dtd + rest if sep else dtd + data
    elif kind == "member":
        op = rng.randrange(6)
        if op == 0:
            del parts[name]
        elif op == 1:
            parts[f"xl/worksheets/sheet{rng.randint(9, 99)}.xml"] = data
        elif op == 2:
            parts["xl/media/image1.png"] = os.urandom(rng.randint(0, 5000))
        elif op == 3:
            parts[name] = big  # 30 MB of XML comments (zlib makes it ~30 KB)
        elif op == 4:
            for i in range(rng.choice([50, 600])):
                parts[f"xl/extra/p{i}.xml"] = b"<x/>"
        else:
            parts[name] = os.urandom(rng.randint(0, 3000))
        what = f"member op {op} {name}"
    elif kind == "meta":
        parts["docProps/custom.xml"] = custom_xml(mutate_meta(meta, rng))
        what = "meta"
    packed = pack(parts, rng.choice([zipfile.ZIP_DEFLATED] * 5 + [zipfile.ZIP_STORED]))
    if kind == "zipbytes":
        op = rng.randrange(3)
        raw = bytearray(packed)
        if op == 0:
            for _ in range(rng.randint(1, 8)):
                raw[rng.randrange(len(raw))] = rng.randrange(256)
            packed = bytes(raw)
        elif op == 1:
            packed = packed[:rng.randrange(len(packed))]
        else:
            packed = lie_about_size(packed, rng)
        what = f"zipbytes op {op}"
    return what, packed


class Hang(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise Hang


WHERE = re.compile(r"part '|'\[Content_Types\]\.xml'|\.xml'|sheet '|![A-Z]+\d+|Inputs|cell|"
                   r"llmsizer data|llmsizer marker|embedded in this workbook|written by "
                   r"llmsizer|catalog|zip archive|is larger than|unpacks|parts|sheet")


def main() -> None:
    workdir, cases, seed = Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
    base = build_base(workdir)
    base_digest = hashlib.sha256(base.read_bytes()).hexdigest()
    parts = parts_of(base)
    wb = xlsxsafe.open_workbook(base, "base")
    meta = reread.read_metadata(xlsxsafe.custom_properties(wb), "base")
    wb.close()
    big = b'<?xml version="1.0"?><x><!--' + b"x" * 30_000_000 + b"--></x>"
    # The original workbook is rebuilt from the embedded requirements (trusted code, not
    # what is fuzzed): once per distinct embedded data, not once per case.
    rebuild = reread._original
    cache: dict[str, Any] = {}

    def memo(source: Any, filename: str, cat: Any) -> Any:
        key = json.dumps(source, sort_keys=True)
        if key not in cache:
            if len(cache) > 20:
                cache.clear()
            cache[key] = rebuild(source, filename, cat)
        return cache[key]

    reread._original = memo  # type: ignore[assignment]
    reread.read_workbook(base)  # warm: imports, catalog, the original
    temps_before = set(Path(tempfile.gettempdir()).glob("llmsizer-reread-*"))
    files_before = {p.name for p in workdir.iterdir()} | {"case.xlsx"}
    with open("/proc/self/statm") as fh:
        vm = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    resource.setrlimit(resource.RLIMIT_AS, (vm + CASE_MEGABYTES * 2**20, resource.RLIM_INFINITY))
    signal.signal(signal.SIGALRM, _alarm)
    rng = random.Random(seed)
    counts = {"tried": 0, "clean errors": 0, "valid": 0, "tracebacks": 0, "hangs": 0,
              "out of memory": 0, "unclear messages": 0, "leaks or corruptions": 0}
    slowest, failures = 0.0, []
    target = workdir / "case.xlsx"
    for n in range(cases):
        what, data = mutate(parts, meta, rng, big)
        target.write_bytes(data)
        counts["tried"] += 1
        t0 = time.perf_counter()
        signal.alarm(CASE_SECONDS)
        try:
            reread.read_workbook(target)
            counts["valid"] += 1
        except InputError as exc:
            msg = str(exc)
            if ("\n" in msg or not msg.startswith(str(target)) or len(msg) > MAX_MESSAGE
                    or not WHERE.search(msg)):
                counts["unclear messages"] += 1
                failures.append(f"case {n} ({what}): unclear message {msg[:300]!r}")
            else:
                counts["clean errors"] += 1
        except Hang:
            counts["hangs"] += 1
            failures.append(f"case {n} ({what}): over {CASE_SECONDS} s")
        except MemoryError:
            counts["out of memory"] += 1
            failures.append(f"case {n} ({what}): over {CASE_MEGABYTES} MB")
        except BaseException:
            counts["tracebacks"] += 1
            failures.append(f"case {n} ({what}): {traceback.format_exc()[-1500:]}")
        finally:
            signal.alarm(0)
        slowest = max(slowest, time.perf_counter() - t0)
    leaked = set(Path(tempfile.gettempdir()).glob("llmsizer-reread-*")) - temps_before
    strays = [p.name for p in workdir.iterdir() if p.name not in files_before]
    corrupted = hashlib.sha256(base.read_bytes()).hexdigest() != base_digest
    counts["leaks or corruptions"] = len(leaked) + len(strays) + int(corrupted)
    for f in failures[:5]:
        print(f)
    # this process's own high-water mark (ru_maxrss keeps the forking parent's across exec)
    status = Path("/proc/self/status").read_text().splitlines()
    peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024
    print(json.dumps({**counts, "slowest_s": round(slowest, 2), "peak_rss_mb": round(peak)}))


if __name__ == "__main__":
    sys.exit(main())

