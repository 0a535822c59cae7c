"""Docs that cannot rot: generated from the code, checked by tests.

``python -m llmsizer.documents.docgen`` rewrites docs/calculations.md, the two JSON Schemas, and the
requirements reference (docs/requirements.md, docs/requirements-reference.yaml), which is
written from the input schema: the descriptions, units and examples live on the pydantic
fields in inputs/schema.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..inputs.schema import json_schema
from ..inputs.schema_words import _allowed
from ..model.calculations import CALCULATIONS, INPUTS, LATENCY_DEFINITIONS
from ..model.expr import to_text
from ..sizing.results import results_schema


def calculations_md() -> str:
    lines = [
        "# Calculations",
        "",
        "Generated from `src/llmsizer/model/calculations/` by `python -m llmsizer.documents.docgen` — do not",
        "edit by hand. The workbook shows the same formulas over named cells.",
        "",
        "## Inputs",
        "",
        "| name | scope | unit | meaning |",
        "|---|---|---|---|",
    ]
    lines += [f"| `{i.name}` | {i.scope} | {i.unit} | {i.note} |" for i in INPUTS]
    for sheet in ("KV", "Throughput", "Nodes", "TCO"):
        lines += ["", f"## {sheet}", "", "| name | unit | formula | note |", "|---|---|---|---|"]
        for c in CALCULATIONS:
            if c.sheet == sheet:
                formula = to_text(c.expr).replace("|", "\\|")
                lines.append(f"| `{c.name}` | {c.unit} | `{formula}` | {c.note} |")
    lines += ["", "## Latency targets", "",
              "What each latency a target may name means (the Assumptions sheet prints the "
              "same table).", "", "| target | what it is | definition |", "|---|---|---|"]
    lines += [f"| `{key}` | {label} | {text} |" for key, label, text in LATENCY_DEFINITIONS]
    return "\n".join(lines + plan_md() + bom_md() + retrieval_md()) + "\n"


def bom_md() -> list[str]:
    """The bill of materials (calculations/bom.py): per line, then the account's totals."""
    from ..model.calculations import (
        BOM_LINE_CALCULATIONS,
        BOM_LINE_FACTS,
        BOM_PARAMETERS,
        BOM_TOTAL_AGGREGATES,
        BOM_TOTAL_CALCULATIONS,
        POOL_REPLICA_SPANS_NODES,
        POOL_WEIGHTS_STORED_GB,
    )

    lines = ["", "## Bill of materials", "",
             "One line per node group of the plan and per retrieval workload's nodes "
             "(docs/results.md, `bom`).",
             "Account-wide figures (catalogs/infrastructure.yaml `defaults`; the last is "
             "prices.yaml's software licence price; input cells on the BOM sheet): "
             + ", ".join(f"`{n}`" for n in BOM_PARAMETERS) + ". A line's facts: "
             + ", ".join(f"`{n}`" for n, *_ in BOM_LINE_FACTS) + "; `line_weights_gb` is the "
             f"SUM over its pools of `{to_text(POOL_WEIGHTS_STORED_GB)}`, "
             f"`line_replica_spans_nodes` the MAX of `{to_text(POOL_REPLICA_SPANS_NODES)}`.",
             "", "| scope | name | unit | formula | note |", "|---|---|---|---|---|"]
    for c in BOM_LINE_CALCULATIONS:
        lines.append(f"| line | `{c.name}` | {c.unit} | `{to_text(c.expr)}` | {c.note} |")
    for a in BOM_TOTAL_AGGREGATES:
        lines.append(f"| account | `{a.name}` | {a.unit} | `SUM({to_text(a.member)})` | "
                     f"{a.note} |")
    for c in BOM_TOTAL_CALCULATIONS:
        lines.append(f"| account | `{c.name}` | {c.unit} | `{to_text(c.expr)}` | {c.note} |")
    return lines


def retrieval_md() -> list[str]:
    """Embed and rerank workloads (calculations/retrieval.py): their own inputs and list."""
    from ..model.calculations.retrieval import (
        RAG_INPUTS,
        RAG_TTFT,
        RETRIEVAL_CALCULATIONS,
        RETRIEVAL_COST_CALCULATIONS,
        RETRIEVAL_COST_INPUTS,
        RETRIEVAL_INPUTS,
    )

    lines = ["", "## Retrieval", "",
             "Embed and rerank workloads: one forward pass per request on one GPU per replica.",
             "", "| input | scope | unit | meaning |", "|---|---|---|---|"]
    lines += [f"| `{i.name}` | {i.scope} | {i.unit} | {i.note} |"
              for i in (*RETRIEVAL_INPUTS, *RETRIEVAL_COST_INPUTS, *RAG_INPUTS)]
    lines += ["", "| name | unit | formula | note |", "|---|---|---|---|"]
    for c in (*RETRIEVAL_CALCULATIONS, *RETRIEVAL_COST_CALCULATIONS, RAG_TTFT):
        formula = to_text(c.expr).replace("|", "\\|")
        lines.append(f"| `{c.name}` | {c.unit} | `{formula}` | {c.note} |")
    return lines


def plan_md() -> list[str]:
    """The account plan's stages (calculations/plan.py), in evaluation order."""
    from ..model.calculations import GROUP_COST_CALCULATIONS, PLAN_STAGES, Aggregate

    lines = ["", "## Plan", "",
             "The account plan (docs/results.md, `plan`): stages evaluated in this order. An",
             "aggregate is SUM, MIN or MAX over the rows of a pool's members (over a group's",
             "pools for `group_` names) of the expression shown. The group's cost lines are the",
             "TCO calculations above, read with the group's counts: "
             + ", ".join(f"`{c.name}`" for c in GROUP_COST_CALCULATIONS) + ".",
             "",
             "**Node loss and N+1.** With the node that hurts a pool most down, the replicas",
             "that still run are those not on that node plus those restarted on free capacity,",
             "and free capacity counts only whole slots: a replica's GPUs (TP x pipeline stages)",
             "free inside one node (a rack-scale platform's node is its NVLink domain); a",
             "replica wider than a node restarts on its surviving nodes + one whole free node.",
             "Free GPUs scattered",
             "over nodes host nothing. A pool alone in its node group spreads its replicas",
             "evenly and runs its N+1 spares: on a PCIe server bought part full (session 23)",
             "the replicas of its fullest node for the load (`group_fullest_node_gpus`: what",
             "one node down takes), on a baseboard sold full a node's worth; pools sharing a",
             "group are packed node by node,",
             "the largest replicas first, and keep the group's one node's worth of spare GPUs",
             "together as a standby node. `pool_headroom_after_node_loss` is the result: N+1",
             "holds when it is 0 or more. Where N+1 is asked and a pool still falls short, the",
             "group gets one whole spare node",
             "(`group_spare_nodes_added`), bought and costed like the others. A restarted",
             "replica first reloads its weights (`restart_s`: weights / storage read bandwidth).",
             "", "| stage | name | unit | formula | note |", "|---|---|---|---|---|"]
    for stage, items in PLAN_STAGES:
        for c in items:
            text = to_text(c.member if isinstance(c, Aggregate) else c.expr)
            formula = f"{c.fn}({text})" if isinstance(c, Aggregate) else text
            formula = formula.replace("|", "\\|")
            lines.append(f"| {stage} | `{c.name}` | {c.unit} | `{formula}` | {c.note} |")
    return lines


# ---- the requirements reference ------------------------------------------------------------

Node = dict[str, Any]


def _settle(node: Node, defs: dict[str, Node]) -> Node:
    """The node with ``$ref`` resolved and the ``| None`` branch of an optional key removed."""
    for _ in range(10):
        if "$ref" in node:
            node = defs[str(node["$ref"]).rsplit("/", 1)[-1]]
        elif "anyOf" in node:
            options = [o for o in node["anyOf"] if o.get("type") != "null"]
            node = options[0] if len(options) == 1 else {"anyOf": options}
        else:
            break
    return node


def _ref_name(node: Node) -> str | None:
    """The model a key holds (directly, optionally or as list items), if any."""
    for cand in (node, *node.get("anyOf", ()), node.get("items") or {}):
        if "$ref" in cand:
            return str(cand["$ref"]).rsplit("/", 1)[-1]
        if cand.get("items", {}).get("$ref"):
            return str(cand["items"]["$ref"]).rsplit("/", 1)[-1]
    return None


def _type(node: Node) -> str:
    if "anyOf" in node:
        return " or ".join(_type(o) for o in node["anyOf"])
    kind = node.get("type")
    if "enum" in node or "const" in node:
        values = node.get("enum", [node.get("const")])
        if all(isinstance(e, str) for e in values):
            return "text"
        return "whole number" if all(isinstance(e, int) for e in values) else "number"
    if kind == "array":
        item = _type(node.get("items") or {})
        return "list of mappings" if item == "mapping" else f"list of {item}"
    if kind == "object":
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            return f"mapping of id to {_type(extra)}"
        return "mapping"
    return {"string": "text", "number": "number", "integer": "whole number",
            "boolean": "true/false"}.get(str(kind), "mapping")


def _default(prop: Node, required: bool) -> str:
    if required:
        return "required"
    if "default" not in prop or prop["default"] is None:
        return "—"
    value = prop["default"]
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict) and value:
        return "each key's own"
    return f"`{json.dumps(value, ensure_ascii=False)}`".replace('"', "")


def _allowed_words(node: Node, defs: dict[str, Node]) -> str:
    if "anyOf" in node:
        return "; or ".join(_allowed_words(_settle(o, defs), defs) for o in node["anyOf"])
    if node.get("type") == "object" and isinstance(node.get("additionalProperties"), dict):
        return f"catalog ids, each {_allowed(_settle(node['additionalProperties'], defs))}"
    if node.get("type") == "object" or "properties" in node:
        return "see its section"
    if node.get("type") == "array" and "$ref" in (node.get("items") or {}):
        return "a list of mappings: see its section"
    return _allowed(node)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _sections(schema: Node) -> list[tuple[str, str, Node]]:
    """(path, model name, model schema) for the top level and every nested model, in
    file order."""
    defs: dict[str, Node] = schema.get("$defs", {})
    out: list[tuple[str, str, Node]] = []

    def walk(path: str, name: str, node: Node) -> None:
        out.append((path, name, node))
        for key, prop in node.get("properties", {}).items():
            ref = _ref_name(prop)
            if ref is not None:
                sep = "[]" if _settle(prop, defs).get("type") == "array" else ""
                walk(f"{path}.{key}{sep}" if path else f"{key}{sep}", ref, defs[ref])

    walk("", str(schema.get("title", "Requirements")), schema)
    return out


def requirements_md() -> str:
    schema = json_schema()
    defs: dict[str, Node] = schema.get("$defs", {})
    lines = [
        "# Requirements file reference",
        "",
        "Generated from `src/llmsizer/inputs/schema.py` by `python -m llmsizer.documents.docgen` — do not",
        "edit by hand. One YAML file per account (`inputs/<account>.yaml`); every key below, with",
        "its type, default, unit, allowed values and an example. `inputs/example.yaml` is a",
        "commented example, `docs/requirements-reference.yaml` a valid file that uses every key,",
        "and `docs/requirements.schema.json` the same rules as a JSON Schema (for editors).",
        "Check a file with `llmsizer validate FILE`.",
    ]
    for path, name, node in _sections(schema):
        title = f"`{path}`" if path else "Top level"
        lines += ["", f"## {title}", ""]
        if node.get("description"):
            lines += [_cell(str(node["description"])).replace("\\|", "|"), ""]
        lines += ["| key | type | default | unit | allowed | example | meaning |",
                  "|---|---|---|---|---|---|---|"]
        required = set(node.get("required", []))
        for key, prop in node.get("properties", {}).items():
            settled = _settle(prop, defs)
            example = prop.get("example", "")
            lines.append("| " + " | ".join(_cell(c) for c in (
                f"`{key}`", _type(settled), _default(prop, key in required),
                str(prop.get("unit", "")), _allowed_words(settled, defs),
                f"`{example}`" if example else "", str(prop.get("description", "")),
            )) + " |")
        del name
    return "\n".join(lines) + "\n"


def _yaml_comment(prop: Node) -> list[str]:
    unit = f" [{prop['unit']}]" if prop.get("unit") else ""
    text = f"{prop.get('description', '')}{unit}"
    import textwrap

    return [f"# {line}" for line in textwrap.wrap(text, 86)]


# Keys shown commented out in the reference file: they are alternatives to a key it uses.
_MEASURED_ALT = "# Instead of tokens_per_s_per_replica (one or the other):"
_LOAD_ALT = "# Instead of concurrent_users (state the load exactly one way):"
_RETRIEVAL_ALT = "# kind: embed or kind: rerank workloads only:"
_ALTERNATIVES = {("Measured", "file"): _MEASURED_ALT, ("Measured", "format"): _MEASURED_ALT,
                 ("Measured", "gpu_count"): _MEASURED_ALT,
                 ("Workload", "requests_per_s"): _LOAD_ALT, ("Workload", "burstiness"): _LOAD_ALT,
                 ("Workload", "named_users"): _LOAD_ALT,
                 ("Workload", "requests_per_user_per_hour"): _LOAD_ALT,
                 ("Workload", "peak_to_average"): _LOAD_ALT,
                 **{("Workload", k): _RETRIEVAL_ALT for k in (
                     "tokens_per_request", "corpus_tokens", "reindex_within_hours",
                     "search_latency_s", "engine", "candidates_per_request",
                     "tokens_per_pair")},
                 ("Targets", "latency_p95_s"): _RETRIEVAL_ALT}


def requirements_reference_yaml() -> str:
    """A valid requirements file that uses every key, each with its description."""
    schema = json_schema()
    defs: dict[str, Node] = schema.get("$defs", {})
    out = ["# Every key of a requirements file, with what it means (generated from",
           "# src/llmsizer/inputs/schema.py by `python -m llmsizer.documents.docgen`; docs/requirements.md",
           "# has the types, defaults and allowed values). A valid file: `llmsizer validate` it."]

    def block(name: str, node: Node, indent: str, item: bool = False) -> None:
        """The keys of one model at ``indent``; ``item``: the first key opens a list item
        (``- key: value``, its comments at the dash)."""
        for n, (key, prop) in enumerate(node.get("properties", {}).items()):
            ref = _ref_name(prop)
            settled = _settle(prop, defs)
            off = (name, key) in _ALTERNATIVES
            comment = _yaml_comment(prop)
            if off:
                comment = [_ALTERNATIVES[(name, key)], *comment]
            dash = item and n == 0
            at = indent[:-2] if dash else indent
            out.extend(f"{at}{line}" for line in comment)
            lead = (at + "- ") if dash else indent
            hash_ = "# " if off else ""
            if ref is not None and settled.get("type") == "array":
                out.append(f"{lead}{hash_}{key}:")
                block(ref, defs[ref], indent + "    ", item=True)
            elif ref is not None:
                out.append(f"{lead}{hash_}{key}:")
                block(ref, defs[ref], indent + "  ")
            else:
                out.append(f"{lead}{hash_}{key}: {prop.get('example', '')}")

    block("Requirements", schema, "")
    return "\n".join(out) + "\n"


def schema_json(schema: dict[str, object]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def generated(root: Path) -> dict[Path, str]:
    docs = root / "docs"
    return {
        docs / "calculations.md": calculations_md(),
        docs / "requirements.schema.json": schema_json(json_schema()),
        docs / "results.schema.json": schema_json(results_schema()),
        docs / "requirements.md": requirements_md(),
        docs / "requirements-reference.yaml": requirements_reference_yaml(),
    }


def main() -> None:
    """``python -m llmsizer.documents.docgen [ROOT]``: ROOT is the repository (default: here)."""
    if sys.argv[1:2] in (["-h"], ["--help"]):
        print(f"usage: python -m llmsizer.documents.docgen [ROOT]\n\n{__doc__}")
        return
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    if not (root / "docs").is_dir():  # else an option or a typo is a root: a traceback
        sys.exit(f"error: {root} has no docs/ folder; give the repository's root (default: here)")
    for path, text in generated(root).items():
        path.write_text(text, encoding="utf-8")
        print(path)


if __name__ == "__main__":
    main()
