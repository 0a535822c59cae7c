"""Docs that cannot rot: generated from the code, checked by tests.

``python -m llmsizer.docgen`` rewrites docs/calculations.md and the two JSON Schemas.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .calculations import CALCULATIONS, INPUTS
from .expr import to_text
from .requirements import json_schema
from .results import results_schema


def calculations_md() -> str:
    lines = [
        "# Calculations",
        "",
        "Generated from `src/llmsizer/calculations.py` by `python -m llmsizer.docgen` — do not",
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
    return "\n".join(lines + plan_md()) + "\n"


def plan_md() -> list[str]:
    """The account plan's stages (calculations.py, PLAN section), in evaluation order."""
    from .calculations import GROUP_COST_CALCULATIONS, PLAN_STAGES, Aggregate

    lines = ["", "## Plan", "",
             "The account plan (docs/results.md, `plan`): stages evaluated in this order. An",
             "aggregate is SUM, MIN or MAX over the rows of a pool's members (over a group's",
             "pools for `group_` names) of the expression shown. The group's cost lines are the",
             "TCO calculations above, read with the group's counts: "
             + ", ".join(f"`{c.name}`" for c in GROUP_COST_CALCULATIONS) + ".",
             "", "| stage | name | unit | formula | note |", "|---|---|---|---|---|"]
    for stage, items in PLAN_STAGES:
        for c in items:
            text = to_text(c.member if isinstance(c, Aggregate) else c.expr)
            formula = f"{c.fn}({text})" if isinstance(c, Aggregate) else text
            formula = formula.replace("|", "\\|")
            lines.append(f"| {stage} | `{c.name}` | {c.unit} | `{formula}` | {c.note} |")
    return lines


def schema_json(schema: dict[str, object]) -> str:
    return json.dumps(schema, indent=2, sort_keys=True) + "\n"


def generated(root: Path) -> dict[Path, str]:
    docs = root / "docs"
    return {
        docs / "calculations.md": calculations_md(),
        docs / "requirements.schema.json": schema_json(json_schema()),
        docs / "results.schema.json": schema_json(results_schema()),
    }


def main() -> None:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path.cwd()
    for path, text in generated(root).items():
        path.write_text(text, encoding="utf-8")
        print(path)


if __name__ == "__main__":
    main()
