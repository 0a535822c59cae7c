"""The decode step's parts against the measured TPOT, for every MLA model's latency row
(DeepSeek, Kimi): aggregated fixed-concurrency rows and disaggregated decode pools
(issue 23, fifth pass: docs/calibration-history.md, "Fifth pass: MLA attention at large batch").

    python benchmarks/mla_parts.py              # every MLA TPOT / ITL row of both files
    python benchmarks/mla_parts.py --disagg     # disaggregated decode pools only
    python benchmarks/mla_parts.py --summary    # only the table per stack, GPU and layout
    python benchmarks/mla_parts.py --gemm       # FP4 rows by rows per expert GEMM (sixth pass)

Per row, with the catalog's constants: the measured and predicted TPOT, the error, the
sequences a rank decodes (the batch / attention data-parallel ranks), the average context,
and the modelled step's parts at that batch, in ms per step (before the speculative TPOT
factor): weights, fixed communication, step overhead, the sequences' KV read, compute, MLA
attention, per-token communication and (aggregated rows) the amortised prefill. "Left for
attention" is the measured step less every modelled part but attention; "implied" is the
share of the attention peak the decode attention would then run at (`mfu_attention` x the
stack efficiency x modelled / left; "-" where nothing is left: the other parts alone exceed
the measurement).
The summary groups the rows whose modelled attention is at least a fifth of the step by
serving stack, GPU and decode layout. ``--gemm`` (sixth pass: "Sixth pass: expert GEMMs and
all-to-all at large batch") takes the 4-bit rows by the rows each expert GEMM gets (M = the
step's tokens x top-k / experts: a rank's tokens x top-k / its experts under expert
parallelism) and shows what the measurement leaves for the compute (the measured step less
every other modelled part) and the compute efficiency that would take, as a share of the
peak; "-" where the other parts alone exceed the measurement. Nothing is written; nothing is
fitted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import calibration_data  # noqa: E402

from llmsizer.inputs.benchdata import read_points  # noqa: E402
from llmsizer.model.catalog import Catalog, load_catalog  # noqa: E402
from llmsizer.model.expr import Value  # noqa: E402
from llmsizer.sizing.evaluate import Tables, evaluate_choice  # noqa: E402
from llmsizer.sizing.fidelity import (  # noqa: E402
    _REGIMES,
    Case,
    _profile,
    _Row,
    predict,
    prepare,
    tables_for,
)
from llmsizer.sizing.fidelity_disagg import exchange_inputs  # noqa: E402

LATENCY = ("tpot_ms", "itl_ms")
PARTS = ("weights", "comm fixed", "overhead", "draft fixed", "FP4 saving", "KV read", "compute",
         "attention", "comm/token", "prefill")


@dataclass(frozen=True)
class Parts:
    """One row's modelled step at the batch it decodes, and the measurement."""
    case: Case
    predicted: float
    env: Mapping[str, Value]
    batch: float
    parts: dict[str, float]

    @property
    def step(self) -> float:
        return sum(self.parts.values())

    @property
    def measured_step(self) -> float:
        """The measured TPOT as a step (the speculative TPOT factor taken off)."""
        return self.case.point.value / number(self.env, "spec_tpot_factor")

    @property
    def left_for_attention(self) -> float:
        return self.measured_step - (self.step - self.parts["attention"])


def number(env: Mapping[str, Value], name: str) -> float:
    value = env[name]
    assert isinstance(value, float | int)
    return float(value)


def _decode_env(case: Case, catalog: Catalog, tables: Tables, batch: float
                ) -> dict[str, Value]:
    """The disaggregated decode pool at the batch fidelity_disagg settled on (its inputs)."""
    inputs = {**_profile(case, catalog), "max_batch_per_replica": batch, "burstiness": 0.0}
    env = evaluate_choice(case.base, case.choice, tables, case.req, catalog, inputs)
    exchange = exchange_inputs(case.point, env)
    return (evaluate_choice(case.base, case.choice, tables, case.req, catalog,
                            {**inputs, **exchange}) if exchange else env)


def parts_of(case: Case, catalog: Catalog, tables: Tables) -> Parts:
    """The step's parts at the batch the row's prediction decodes."""
    predicted, batch = predict(case, catalog, tables)
    if case.point.disaggregated:
        env: Mapping[str, Value] = _decode_env(case, catalog, tables, batch)
    else:
        _, env = _REGIMES[case.point.regime](_Row(case, catalog, tables))
    served = number(env, "batch_served")
    spec = number(env, "spec_tokens_per_step")
    per_token = sum(number(env, n) for n in (
        "allreduce_ms_per_token", "alltoall_ms_per_token", "allreduce_scaleout_ms_per_token",
        "alltoall_exposed_ms_per_token"))
    prefill = 0.0 if case.point.disaggregated else number(env, "prefill_ms_per_seq_step")
    values = (number(env, "decode_weights_ms"), number(env, "comm_fixed_ms"),
              number(env, "step_overhead_ms"), number(env, "spec_draft_fixed_ms"),
              -number(env, "fp4_small_batch_saving_ms"), served * number(env, "decode_kv_ms_per_seq"),
              served * spec * number(env, "decode_compute_ms_per_seq"),
              served * spec * number(env, "decode_attention_ms_per_seq"),
              served * spec * per_token, served * prefill)
    return Parts(case, predicted, env, served, dict(zip(PARTS, values, strict=True)))


def mla_latency_rows(catalog: Catalog, disagg_only: bool = False) -> list[Case]:
    cases: list[Case] = []
    for path in (calibration_data.DATA, calibration_data.NEW_DATA):
        points, _ = read_points(path, catalog)
        cases += prepare(points, catalog)[0]
    return [c for c in cases
            if c.point.metric in LATENCY and c.point.regime == "concurrency"
            and float(c.base.get("kv_lora_rank", 0) or 0) > 0
            and (c.point.disaggregated or not disagg_only)]


def stack(case: Case) -> str:
    notes = case.point.raw.get("notes", "")
    return notes.split("framework=")[1].split(";")[0] if "framework=" in notes else (
        calibration_data.source_of(case.point))


def layout(case: Case) -> str:
    p = case.point
    if p.disaggregated:
        label = p.raw.get("tp", "")
        return "decode " + label.split("D:")[-1].split("(")[-1].rstrip(")") if "D:" in label \
            else "?"
    return f"TP{p.tp}" + (f" EP{p.ep}" if p.ep > 1 else "") + (" ADP" if p.adp > 1 else "")


def implied(row: Parts) -> float | None:
    """Share of the attention peak the measured step leaves the attention at (None: none
    left)."""
    left = row.left_for_attention
    if left <= 0 or row.parts["attention"] <= 0:
        return None
    return (number(row.env, "mfu_attention") * number(row.env, "efficiency_scale")
            * row.parts["attention"] / left)


def gemm_rows(row: Parts) -> float:
    """Rows per expert GEMM: the step's tokens (sequences x tokens verified) x top-k / experts."""
    return (row.batch * number(row.env, "spec_tokens_per_step")
            * number(row.env, "experts_per_token") / number(row.env, "experts"))


def left_for_compute(row: Parts) -> float:
    return row.measured_step - (row.step - row.parts["compute"])


def implied_compute(row: Parts) -> float | None:
    """Share of the peak the decode compute would run at for the step to match (None: no
    time left for it)."""
    left = left_for_compute(row)
    if left <= 0 or row.parts["compute"] <= 0:
        return None
    return number(row.env, "mfu_decode") * row.parts["compute"] / left


GEMM_BINS = (0.0, 4.0, 16.0, 64.0, 128.0)


def print_gemm(rows: list[Parts]) -> None:
    fp4 = sorted((r for r in rows if r.case.choice.weight_precision in ("fp4", "nvfp4", "mxfp4")),
                 key=gemm_rows)
    print("| row | stack | GPU | layout | C | ISL/OSL | M | error | compute | left for compute "
          "| implied share |\n|---|---|---|---|---|---|---:|---:|---:|---:|---:|")
    for r in (r for r in fp4 if gemm_rows(r) >= GEMM_BINS[-2]):
        p, share = r.case.point, implied_compute(r)
        print(f"| {p.row} | {stack(r.case)} | {p.gpu} | {layout(r.case)} | {p.concurrency} | "
              f"{p.isl}/{p.osl} | {gemm_rows(r):.0f} | {(r.predicted / p.value - 1) * 100:+.0f} % "
              f"| {r.parts['compute']:.1f} | {left_for_compute(r):.1f} | "
              + ("-" if share is None else f"{share:.2f}") + " |")
    print("\n| M (rows per expert GEMM) | rows | median error | nothing left for compute | "
          "median implied share |\n|---|---:|---:|---:|---:|")
    for low, high in zip(GEMM_BINS, (*GEMM_BINS[1:], float("inf")), strict=True):
        members = [r for r in fp4 if low <= gemm_rows(r) < high]
        if not members:
            continue
        shares = [s for s in map(implied_compute, members) if s is not None]
        error = statistics.median(r.predicted / r.case.point.value - 1 for r in members)
        print(f"| {low:.0f}-{high:.0f} | {len(members)} | {error * 100:+.0f} % | "
              f"{len(members) - len(shares)} | "
              + (f"{statistics.median(shares):.2f}" if shares else "-") + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--disagg", action="store_true", help="disaggregated decode pools only")
    parser.add_argument("--summary", action="store_true", help="only the grouped table")
    parser.add_argument("--gemm", action="store_true",
                        help="4-bit rows by rows per expert GEMM, what is left for the compute")
    args = parser.parse_args()
    catalog = load_catalog()
    tables = tables_for(catalog)
    rows = [parts_of(c, catalog, tables) for c in mla_latency_rows(catalog, args.disagg)]
    if args.gemm:
        print_gemm(rows)
        return
    rows.sort(key=lambda r: (stack(r.case), str(r.case.point.gpu), r.batch))
    if not args.summary:
        print("| row | stack | GPU | layout | C | ISL/OSL | seqs per rank | context | measured | "
              "predicted | error | " + " | ".join(PARTS) + " | left for attention | implied |")
        print("|---" * (13 + len(PARTS)) + "|")
        for row in rows:
            p = row.case.point
            share = implied(row)
            print(f"| {p.row} | {stack(row.case)} | {p.gpu} | {layout(row.case)} | "
                  f"{p.concurrency} | {p.isl}/{p.osl} | "
                  f"{row.batch / number(row.env, 'adp'):.0f} | "
                  f"{number(row.env, 'avg_context_tokens'):.0f} | {p.value:.2f} | "
                  f"{row.predicted:.2f} | {(row.predicted / p.value - 1) * 100:+.0f} % | "
                  + " | ".join(f"{v:.1f}" for v in row.parts.values())
                  + f" | {row.left_for_attention:.1f} | "
                  + ("-" if share is None else f"{share:.2f}") + " |")
        print()
    groups: dict[tuple[str, str, str], list[Parts]] = {}
    for row in rows:
        if row.parts["attention"] >= 0.2 * row.step:
            key = (stack(row.case), str(row.case.point.gpu), layout(row.case))
            groups.setdefault(key, []).append(row)
    print("| stack | GPU | layout | rows | median error | implied shares of the attention "
          "peak |\n|---|---|---|---:|---:|---|")
    for (st, gpu, lay), members in sorted(groups.items()):
        shares = sorted(implied(r) or float("inf") for r in members)
        text = ", ".join("-" if s == float("inf") else f"{s:.2f}" for s in shares)
        error = statistics.median(r.predicted / r.case.point.value - 1 for r in members)
        print(f"| {st} | {gpu} | {lay} | {len(members)} | {error * 100:+.0f} % | {text} |")


if __name__ == "__main__":
    main()
