"""The docs must match the code: generated docs and JSON Schemas (no drift), and what the
hand-written docs name and quote (tests, modules, messages)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers import ROOT

from llmsizer.documents.docgen import generated


def test_generated_docs_do_not_drift() -> None:
    """Regenerate with `python -m llmsizer.documents.docgen` when this fails."""
    for path, text in generated(ROOT).items():
        assert path.read_text(encoding="utf-8") == text, f"{path} is stale"


def test_every_cli_command_has_help_and_is_documented() -> None:
    from click.testing import CliRunner

    from llmsizer.cli import main

    readme = (ROOT / "README.md").read_text()
    runner = CliRunner()
    for name in main.commands:
        result = runner.invoke(main, [name, "--help"])
        assert result.exit_code == 0, name
        assert len(result.output.strip().splitlines()) > 2
        assert f"llmsizer {name}" in readme, f"README does not show `llmsizer {name}`"


def _properties(schema: dict[str, object]) -> list[tuple[str, str, dict[str, object]]]:
    """(model, key, property) for every key of the input schema, nested models included."""
    defs = schema.get("$defs", {})
    assert isinstance(defs, dict)
    models = [("Requirements", schema), *defs.items()]
    out = []
    for name, model in models:
        assert isinstance(model, dict)
        for key, prop in model.get("properties", {}).items():
            out.append((name, key, prop))
    return out


def test_every_input_key_has_a_description_unit_and_example() -> None:
    """The JSON Schema carries the descriptions (editors show them), from the pydantic models."""
    from llmsizer.inputs.schema import json_schema

    props = _properties(json_schema())
    assert len(props) >= 50  # the schema's keys, nested models included
    missing = [f"{m}.{k}" for m, k, p in props if not str(p.get("description", "")).strip()]
    assert not missing, f"keys without a description: {missing}"
    no_example = [f"{m}.{k}" for m, k, p in props if not p.get("example")]
    assert not no_example, f"keys without an example: {no_example}"
    # a key measured in something names its unit
    for model, key, prop in props:
        if key.endswith(("_s", "_gb", "_tokens", "_kwh")) or key.startswith("tokens_per_s"):
            assert prop.get("unit"), f"{model}.{key} has no unit"


def test_requirements_md_documents_every_key() -> None:
    from llmsizer.inputs.schema import json_schema

    text = (ROOT / "docs" / "requirements.md").read_text(encoding="utf-8")
    for model, key, prop in _properties(json_schema()):
        said = str(prop["description"]).split(";")[0][:40]
        rows = [ln for ln in text.splitlines() if ln.startswith(f"| `{key}` |") and said in ln]
        assert rows, f"{model}.{key} is not in docs/requirements.md"
    for heading in ("## `account`", "## `workloads[]`", "## `workloads[].targets`",
                    "## `workloads[].measured`", "## `hardware`", "## `policy`", "## `costs`"):
        assert heading in text


def test_reference_yaml_is_valid_and_uses_every_key() -> None:
    """docs/requirements-reference.yaml loads, validates and sizes; every key appears (the
    benchmark-file keys commented out: they are the alternative to the measured figure)."""
    from llmsizer.inputs.loader import load
    from llmsizer.inputs.schema import json_schema
    from llmsizer.sizing.engine import size

    ref = ROOT / "docs" / "requirements-reference.yaml"
    loaded = load(ref)
    assert loaded.req.account.currency == "EUR" and loaded.req.costs.usd_exchange_rate == 0.92
    assert size(loaded).workloads[0].recommended is not None
    text = ref.read_text(encoding="utf-8")
    for model, key, _prop in _properties(json_schema()):
        assert f" {key}:" in text or f"\n{key}:" in text or f"- {key}:" in text, (model, key)


def test_example_points_to_docs_that_exist() -> None:
    example = (ROOT / "inputs" / "example.yaml").read_text(encoding="utf-8")
    named = re.findall(r"docs/[\w.-]+", example)
    assert named, "inputs/example.yaml should point to the reference docs"
    for path in named:
        assert (ROOT / path).is_file(), path


def test_security_md_names_only_tests_that_exist() -> None:
    """Each `file.py::test_name` in docs/security.md is a test in that file; a bare
    `::test_name` is in the test file named last before it (on its row or above)."""
    text = (ROOT / "docs" / "security.md").read_text(encoding="utf-8")
    current = None
    named = 0
    for number, line in enumerate(text.splitlines(), 1):
        for m in re.finditer(r"(test_\w+\.py)?::(test_\w+)|(test_\w+\.py)", line):
            current = m.group(1) or m.group(3) or current
            assert current and (ROOT / "tests" / current).is_file(), (number, current)
            if m.group(2):
                source = (ROOT / "tests" / current).read_text(encoding="utf-8")
                assert re.search(rf"def {m.group(2)}\b", source), \
                    f"docs/security.md line {number}: {current} has no {m.group(2)}"
                named += 1
    assert named >= 40  # the tables' test column


# docs/security.md quotes these messages from stored bad inputs (tests/bad_inputs/): the
# message each file produces must still hold the quote, and the doc must still show it.
SECURITY_QUOTES = {
    "binary.yaml": "this is a PNG image, not a YAML text file",
    "empty.yaml": "file is empty: expected a mapping such as `schema_version: 1`",
    "top-level-list.yaml": "the top level of the file must be a mapping",
    "yaml11-yes-bool.yaml": "write `survive_node_loss: true` or `survive_node_loss: false`",
    "yaml11-version-float.yaml": 'put it in quotes so it is read as text: `id: "1.10"`',
    "missing-workload-name.yaml": "required key 'name' is missing; add it, e.g. "
                                  "`name: Internal assistant`",
    "missing-output-tokens.yaml": "required key 'output_tokens' is missing: a generating workload "
                                  "(kind: generate, the default) needs it, e.g. `output_tokens: 300`",
    "mistake-concurrent-user.yaml": "unknown key 'concurrent_user' (did you mean "
                                    "concurrent_users?); write it as `concurrent_users: 200`",
    "mistake-gpus-string.yaml": "write a list, e.g. `gpus: [h100-sxm]`",
    "rate-percent-as-number.yaml": "this is a fraction: write 0.1 for 10 %",
    "unknown-gpu.yaml": "unknown GPU 'h100': did you mean h100-sxm (NVIDIA H100 SXM 80GB), "
                        "h100-nvl (NVIDIA H100 NVL) or h100-pcie (NVIDIA H100 PCIe)? "
                        "`llmsizer catalog gpus` lists them all",
    "contradiction-ttft-longer.yaml": "targets.ttft_s (20 s) must be shorter than "
                                      "targets.response_time_s (10 s)",
    "hostile-control-chars.yaml": "contains the control character U+001B; delete it",
    "infeasible-speed.yaml": "No option meets the 2,000 tok/s per-user speed target: the best is "
                             "80.4 tok/s (4 × NVIDIA L4, FP8 weights, FP8 KV cache, one request "
                             "at a time). Relax tokens_per_s_per_user to at most 80 tok/s",
    "infeasible-fit.yaml": "does not fit on any single node tried",
}


@pytest.mark.parametrize("case", sorted(SECURITY_QUOTES))
def test_security_md_quotes_the_messages_the_code_gives(case: str) -> None:
    from llmsizer.base.errors import LlmsizerError
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    quote = SECURITY_QUOTES[case]
    assert quote in (ROOT / "docs" / "security.md").read_text(encoding="utf-8"), quote
    try:
        result = size(load(ROOT / "tests" / "bad_inputs" / case))
        message = " ".join(str(w.advice) for w in result.workloads if w.recommended is None)
    except LlmsizerError as exc:
        message = str(exc)
    assert quote in message


def test_architecture_md_names_every_module_of_each_layer() -> None:
    """tests/test_architecture.py checks the doc names only real paths; this is the other way:
    a module added at a layer's top level (not inside its sub-packages, which the doc describes
    as a whole: `documents/workbook/`, `model/calculations/`...) gets its line in the map."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    src = ROOT / "src" / "llmsizer"
    modules = [f"{p.parent.name}/{p.name}" for p in sorted(src.glob("*/*.py"))
               if p.name != "__init__.py"]
    assert len(modules) > 60
    missing = [m for m in modules if f"`{m}`" not in text]
    assert not missing, f"docs/architecture.md does not name {missing}"


def test_workbook_md_names_every_sheet_module() -> None:
    text = (ROOT / "docs" / "workbook.md").read_text(encoding="utf-8")
    folder = ROOT / "src" / "llmsizer" / "documents" / "workbook"
    modules = [p.name for p in sorted(folder.glob("*.py")) if p.name != "__init__.py"]
    missing = [m for m in modules if f"`{m}`" not in text]
    assert not missing, f"docs/workbook.md (Code layout) does not name {missing}"


def test_docgen_help_and_a_wrong_root_write_nothing(tmp_path: Path) -> None:
    """`python -m llmsizer.documents.docgen --help` took '--help' for the repository root and
    ended in a FileNotFoundError traceback; a root without docs/ is now one line, exit 1."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-m", "llmsizer.documents.docgen"]
    shown = subprocess.run([*cmd, "--help"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, check=False)
    assert shown.returncode == 0 and shown.stdout.startswith("usage: "), shown.stderr
    assert "docs/calculations.md" in shown.stdout
    wrong = subprocess.run([*cmd, str(tmp_path / "nowhere")], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=False)
    assert wrong.returncode == 1
    assert wrong.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'nowhere'} has no docs/ folder; give the repository's root "
        "(default: here)"]
    assert list(tmp_path.iterdir()) == []


# Sentences the docs quote from a shipped account's proposal, as the proposal words them now
# (the HTML the PDF is laid out from: no WeasyPrint needed).
PROPOSAL_QUOTES = {
    ("queueing.md", "helpdesk-population.yaml"): [
        "each request lasts about 14.7 s",
        "147 users are served at the same time",
        "busy prefilling, 1 request in 20 waits more than 121 ms for its turn",
        "At 36.2 %",
    ],
    ("proposal.md", "example.yaml"): [
        # session 24: the heading names both batches (limit 158, 111 at peak in the pool)
        "20 GPUs = 5 replicas × TP4 in Pool 1, shared; 158 sequences per replica (its limit "
        "alone); 111 at peak in its pool; 163,840 bytes of KV per token",
        "Range: 20 GPUs bought; 16–20 GPUs if throughput is off by the model's p90 error",
        "NVIDIA L40S would need 144 GPUs",
    ],
}


def _plain(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("\u00a0", " ").replace("\u202f", " "))


@pytest.mark.parametrize("doc,account", sorted(PROPOSAL_QUOTES))
def test_docs_quote_the_proposal_as_it_reads(doc: str, account: str) -> None:
    import html

    from llmsizer.documents.proposal.render import render_html
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    shown = _plain((ROOT / "docs" / doc).read_text(encoding="utf-8"))
    page = _plain(html.unescape(re.sub(r"<[^>]+>", " ", render_html(size(load(
        ROOT / "inputs" / account))))))
    for quote in PROPOSAL_QUOTES[doc, account]:
        assert quote in shown, f"docs/{doc} no longer quotes {quote!r}"
        assert quote in page, f"the proposal of inputs/{account} no longer says {quote!r}"


def test_proposal_md_names_every_template_variable() -> None:
    """build_context says its variables are documented in docs/proposal.md ("Variables")."""
    from llmsizer.documents.proposal.context import build_context
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    text = (ROOT / "docs" / "proposal.md").read_text(encoding="utf-8")
    section = text[text.index("- Variables:"):text.index("- Fonts:")]
    keys: set[str] = set()
    for account in ("example.yaml", "code-assistant-alternatives.yaml", "rag-knowledge-base.yaml"):
        keys |= set(build_context(size(load(ROOT / "inputs" / account))))
    assert len(keys) > 50
    missing = sorted(k for k in keys if f"`{k}`" not in section)
    assert not missing, f"docs/proposal.md's Variables do not name {missing}"


def _json_keys(doc: object, path: str = "") -> set[str]:
    """Dotted paths of a results document's keys, not descending into the by-name maps
    (`values`, `units`, `inputs`, ...), whose keys are calculation and input names."""
    by_name = ("values", "units", "inputs", "account_inputs", "tables", "source")
    out: set[str] = set()
    if isinstance(doc, dict):
        for key, value in doc.items():
            out.add(f"{path}.{key}")
            if key not in by_name:
                out |= _json_keys(value, f"{path}.{key}")
    elif isinstance(doc, list):
        for item in doc:
            out |= _json_keys(item, f"{path}[]")
    return out


def test_results_md_names_every_field_of_the_results_json() -> None:
    """Each key the results JSON holds is named in docs/results.md (in backticks, alone or as
    the last part of a path; a measured point's in docs/measured.md, where results.md points);
    families documented by pattern (`bom_*` totals, the `plan_*` shares, `..._low` / `_high`)
    by their prefix or suffix."""
    from llmsizer.inputs.loader import load
    from llmsizer.sizing.engine import size

    def ticked(doc: str) -> set[str]:
        doc = re.sub(r"```.*?```", "", doc, flags=re.S)  # code blocks hold no field names
        return {part for tick in re.findall(r"`([^`]+)`", doc)
                for part in re.split(r"[.\[\]]+", tick) if part}

    text = (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
    named = ticked(text)
    point_named = ticked((ROOT / "docs" / "measured.md").read_text(encoding="utf-8"))
    keys: set[str] = set()
    for path in ("inputs/example.yaml", "inputs/rag-knowledge-base.yaml",
                 "inputs/code-assistant-alternatives.yaml", "inputs/frontier-moe-rack.yaml",
                 "tests/data/bench/seed000.yaml"):
        keys |= _json_keys(size(load(ROOT / path)).model_dump(mode="json"))
    assert len(keys) > 150

    def documented(key: str) -> bool:
        last = key.rsplit(".", 1)[1]
        if ".measured_points[]." in key:
            return last in point_named
        return (last in named or (last.startswith("bom_") and "bom_*" in text)
                or (".shares[]." in key and last.startswith("plan_"))
                or (last.endswith(("_low", "_high")) and f"`_{last.rsplit('_', 1)[1]}`" in text))

    missing = sorted(k for k in keys if not documented(k))
    assert not missing, f"docs/results.md does not name {missing}"


def test_fidelity_help_says_what_it_does_with_a_disaggregated_row(tmp_path: Path) -> None:
    """`fidelity --help` said DISAGG rows are "read and skipped (not modelled)" while the
    command predicts them (docs/measured.md): the help and a real row now agree."""
    import json

    from click.testing import CliRunner

    from llmsizer.cli import main

    runner = CliRunner()
    shown = " ".join(runner.invoke(main, ["fidelity", "--help"]).output.split())
    assert "DISAGG P:1x(TP8) D:2x(TP8): the prefill and decode pools, predicted" in shown
    source = (ROOT / "tests" / "data" / "measured_blackwell_moe.csv").read_text(encoding="utf-8")
    header, *rows = source.splitlines()
    row = next(r for r in rows if "DISAGG" in r and "MTP" not in r)
    (tmp_path / "one.csv").write_text(f"{header}\n{row}\n", encoding="utf-8")
    result = runner.invoke(main, ["fidelity", str(tmp_path / "one.csv"), "--json"])
    doc = json.loads(result.output)
    assert len(doc["rows"]) == 1 and not doc["skipped"], doc["skipped"]
    assert doc["rows"][0]["predicted"] > 0


HAND_WRITTEN = ("README.md", "docs/architecture.md", "docs/libreoffice-findings.md",
                "docs/measured.md", "docs/proposal.md", "docs/queueing.md", "docs/results.md",
                "docs/scale.md", "docs/security.md", "docs/workbook.md")


FILE_TYPES = {"py", "json", "xlsx", "pdf", "yaml", "md", "csv", "j2", "css", "txt"}


@pytest.mark.parametrize("doc", HAND_WRITTEN)
def test_docs_name_only_real_module_attributes(doc: str) -> None:
    """`module.NAME` in a hand-written doc (a limit, a function, a class) is an attribute of a
    package module of that name (`benchfiles.RANGES` in security.md had moved to benchpoints;
    where several modules share the name, one of them)."""
    import importlib

    from llmsizer.inputs.schema import json_schema
    from llmsizer.sizing.results import Result

    text = (ROOT / doc).read_text(encoding="utf-8")
    src = ROOT / "src" / "llmsizer"
    modules: dict[str, list[str]] = {}
    for path in src.rglob("*.py"):
        parts = path.relative_to(src).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts:
            modules.setdefault(parts[-1], []).append(".".join(("llmsizer", *parts)))
    # `costs.usd_exchange_rate`, `measured.file` are requirement keys, not module attributes
    # (and `plan.pools[]`, `results.sensitivity` results fields)
    sections = {k for _m, k, _p in _properties(json_schema())} | set(Result.model_fields) | {"results"}
    for stem, name in re.findall(r"`(?:\w+/)?(\w+)\.([A-Za-z_]\w*)`", text):
        if stem not in modules or stem in sections or name in FILE_TYPES:
            continue
        assert any(hasattr(importlib.import_module(m), name) for m in modules[stem]), \
            f"{doc}: none of {modules[stem]} has {name}"
