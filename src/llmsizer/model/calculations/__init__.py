"""THE one home of every sizing formula (DESIGN §3).

``INPUTS`` declares every value the formulas read; ``CALCULATIONS`` is the ordered list
of named calculations built from :mod:`llmsizer.model.expr`. The engine evaluates them in
Python; the workbook prints the same trees as Excel formulas. Nothing else in the
package may do sizing arithmetic (``tests/test_one_home.py`` scans for it).

Units: the unit is in each name (``_gb`` = 1e9 bytes, ``_ms``, ``_tb_s`` = 1e12 B/s,
``_tflops`` = 1e12 FLOP/s, ``_gb_s``) and in ``unit``. GB / (TB/s) is a millisecond,
which is why memory-time terms need no conversion factor.

The formulas live in topic modules; this module alone assembles the list, in the order a
calculation may read only inputs and calculations before it: :mod:`.catalog_values`,
:mod:`.memory`, :mod:`.speculative` (what a step costs and yields under speculative
decoding), :mod:`.decode` (split around :mod:`.load` and :mod:`.queueing`: the load becomes a
concurrency after the full replica's step time, before the batch served; its batch limits
are solved three times, :mod:`.first_pass` writing the first and second solves from the rows
themselves and :mod:`.third_solve` finding the batch the third reads the experts at),
:mod:`.replicas`, :mod:`.costs`, :mod:`.rented` (one option as rented in the cloud),
:mod:`.confidence`.
Beside the list: :mod:`.bom` (the plan's bill of materials), :mod:`.debugger` (the
production debugger's and the roofline's figures),
:mod:`.benchmarks` (fidelity figures, benchmark files), :mod:`.scenarios` (what-ifs)
and :mod:`.plan` (the account plan: its stages in :mod:`.plan_pools`,
:mod:`.plan_node_loss` and :mod:`.plan_shares`); :mod:`.core` holds the
building blocks, :mod:`.inputs` the inputs.
"""

from __future__ import annotations

from functools import cache

from ..expr import Program, compile_program
from . import (
    benchmarks,
    catalog_values,
    confidence,
    costs,
    decode,
    load,
    memory,
    queueing,
    rented,
    replicas,
    speculative,
    spread,
)
from .benchmarks import (
    BENCH_GROUP_GPUS,
    BENCH_LENGTH_RATIO,
    BENCH_MEAN,
    BENCH_REPLICAS,
    BENCH_SHORTFALL,
    BENCH_TO_MS,
    BENCH_TOKENS_PER_S_PER_REPLICA,
    BENCH_TOKENS_PER_S_PER_USER,
    Figure,
)
from .bom import (
    BOM_LINE_CALCULATIONS,
    BOM_LINE_FACTS,
    BOM_PARAMETERS,
    BOM_TOTAL_AGGREGATES,
    BOM_TOTAL_CALCULATIONS,
    BOM_TOTAL_LABELS,
    POOL_REPLICA_SPANS_NODES,
    POOL_WEIGHTS_STORED_GB,
)
from .catalog_values import COMPUTE_CODES, TABLE_COLUMNS
from .confidence import CONFIDENCE_DEMAND_REPLICAS, CONFIDENCE_LOAD_REPLICAS
from .core import Calculation, Input, Scope, Sheet
from .costs import (
    DERIVED_TIER_PRICE,
    PRICE_IN_ACCOUNT_CURRENCY,
    TOTAL_COST_PER_MILLION_CLOUD,
    TOTAL_COST_PER_MILLION_ONPREM,
    TOTAL_COST_PER_MILLION_TOTAL_API,
    TOTAL_COST_PER_MILLION_TOTAL_CLOUD,
    TOTAL_COST_PER_MILLION_TOTAL_ONPREM,
    cloud_priced,
    cloud_priced_formula,
    stated_product,
)
from .debugger import (
    DEBUG_LOW_UTILISATION_BATCH,
    DEBUG_MEMORY_LIMIT_USERS,
    DEBUG_OOM_CONTEXT_TOKENS,
    DEBUG_TTFT_LIMIT_USERS,
    LOW_UTILISATION,
    ROOFLINE_ACHIEVED_TFLOPS,
    ROOFLINE_CEILING_TFLOPS,
    ROOFLINE_INTENSITY,
    TTFT_WHEN_NO_TARGET_S,
)
from .disagg import DISAGG_FIGURES, XPYD_CALCULATIONS, XPYD_NODE_CALCULATIONS
from .inputs import INPUTS, LATENCY_DEFINITIONS, PERCENTILE_TARGETS, PERCENTILES
from .plan import (
    GROUP_COST_FIGURES,
    GROUP_COUNTS,
    PLAN_GPUS_RENTED_SAVED,
    PLAN_SAVING,
    PLAN_SAVING_CLOUD,
    PLAN_SAVING_SHARE,
    PLAN_SAVING_SHARE_CLOUD,
    PLAN_STAGES,
    PLAN_TOTALS,
    TOTAL_GPUS_IDLE,
    TOTAL_GPUS_SERVING,
    group_cost_calculations,
)
from .plan_node_loss import (
    GROUP_HEADROOM_AGGREGATES,
    GROUP_NODE_LOSS_AGGREGATES,
    GROUP_NODE_LOSS_CALCULATIONS,
    GROUP_RENTED_LOSS_AGGREGATES,
    GROUP_RENTED_LOSS_CALCULATIONS,
    POOL_HEADROOM_CALCULATIONS,
    POOL_NODE_LOSS_CALCULATIONS,
    POOL_RENTED_LOSS_CALCULATIONS,
)
from .plan_pools import (
    GROUP_LOAD_AGGREGATES,
    GROUP_SIZE_AGGREGATES,
    GROUP_SIZE_CALCULATIONS,
    GROUP_SPARE_CALCULATIONS,
    POOL_AGGREGATES,
    POOL_CALCULATIONS,
    POOL_SPARE_CALCULATIONS,
)
from .plan_shares import WORKLOAD_SHARE_CALCULATIONS, WORKLOAD_SHARE_OF
from .planrows import Aggregate, PlanCalculation, aggregate_expr, fold, fold_values
from .replicas import GROUP_OUTPUT_TOKENS_PER_S, IMPRACTICAL, IMPRACTICAL_FACTOR
from .scenarios import (
    BREAKEVEN_LOADS,
    CLOUD_TIER_CODES,
    SCENARIO_OUTPUTS,
    SCENARIOS,
    Scenario,
    applies,
)

# the benchmark figures ``llmsizer fidelity`` reproduces: aggregated serving (.benchmarks)
# and disaggregated prefill/decode (.disagg)
FIGURES: tuple[Figure, ...] = benchmarks.FIGURES + DISAGG_FIGURES
FIGURE_EXPRS = {f.name: f.expr for f in FIGURES}
assert len(FIGURE_EXPRS) == len(FIGURES), "a figure name is defined twice"

__all__ = [
    "BENCH_GROUP_GPUS",
    "BENCH_LENGTH_RATIO",
    "BENCH_MEAN",
    "BENCH_REPLICAS",
    "BENCH_SHORTFALL",
    "BENCH_TOKENS_PER_S_PER_REPLICA",
    "BENCH_TOKENS_PER_S_PER_USER",
    "BENCH_TO_MS",
    "BOM_LINE_CALCULATIONS",
    "BOM_LINE_FACTS",
    "BOM_PARAMETERS",
    "BOM_TOTAL_AGGREGATES",
    "BOM_TOTAL_CALCULATIONS",
    "BOM_TOTAL_LABELS",
    "BREAKEVEN_LOADS",
    "CALCULATIONS",
    "CALCULATION_NAMES",
    "CLOUD_TIER_CODES",
    "COMPUTE_CODES",
    "CONFIDENCE_DEMAND_REPLICAS",
    "CONFIDENCE_LOAD_REPLICAS",
    "DEBUG_LOW_UTILISATION_BATCH",
    "DEBUG_MEMORY_LIMIT_USERS",
    "DEBUG_OOM_CONTEXT_TOKENS",
    "DEBUG_TTFT_LIMIT_USERS",
    "DERIVED_TIER_PRICE",
    "FIGURES",
    "FIGURE_EXPRS",
    "GROUP_COST_CALCULATIONS",
    "GROUP_COST_FIGURES",
    "GROUP_COUNTS",
    "GROUP_HEADROOM_AGGREGATES",
    "GROUP_LOAD_AGGREGATES",
    "GROUP_NODE_LOSS_AGGREGATES",
    "GROUP_NODE_LOSS_CALCULATIONS",
    "GROUP_OUTPUT_TOKENS_PER_S",
    "GROUP_RENTED_LOSS_AGGREGATES",
    "GROUP_RENTED_LOSS_CALCULATIONS",
    "GROUP_SIZE_AGGREGATES",
    "GROUP_SIZE_CALCULATIONS",
    "GROUP_SPARE_CALCULATIONS",
    "IMPRACTICAL",
    "IMPRACTICAL_FACTOR",
    "INPUTS",
    "INPUT_NAMES",
    "LATENCY_DEFINITIONS",
    "LOW_UTILISATION",
    "PERCENTILES",
    "PERCENTILE_TARGETS",
    "PLAN_GPUS_RENTED_SAVED",
    "PLAN_SAVING",
    "PLAN_SAVING_CLOUD",
    "PLAN_SAVING_SHARE",
    "PLAN_SAVING_SHARE_CLOUD",
    "PLAN_STAGES",
    "PLAN_TOTALS",
    "POOL_AGGREGATES",
    "POOL_CALCULATIONS",
    "POOL_HEADROOM_CALCULATIONS",
    "POOL_NODE_LOSS_CALCULATIONS",
    "POOL_RENTED_LOSS_CALCULATIONS",
    "POOL_REPLICA_SPANS_NODES",
    "POOL_SPARE_CALCULATIONS",
    "POOL_WEIGHTS_STORED_GB",
    "PRICE_IN_ACCOUNT_CURRENCY",
    "ROOFLINE_ACHIEVED_TFLOPS",
    "ROOFLINE_CEILING_TFLOPS",
    "ROOFLINE_INTENSITY",
    "SCENARIOS",
    "SCENARIO_OUTPUTS",
    "TABLE_COLUMNS",
    "TOTAL_COST_PER_MILLION_CLOUD",
    "TOTAL_COST_PER_MILLION_ONPREM",
    "TOTAL_COST_PER_MILLION_TOTAL_API",
    "TOTAL_COST_PER_MILLION_TOTAL_CLOUD",
    "TOTAL_COST_PER_MILLION_TOTAL_ONPREM",
    "TOTAL_GPUS_IDLE",
    "TOTAL_GPUS_SERVING",
    "TTFT_WHEN_NO_TARGET_S",
    "UNITS",
    "WORKLOAD_SHARE_CALCULATIONS",
    "WORKLOAD_SHARE_OF",
    "Aggregate",
    "Calculation",
    "Figure",
    "Input",
    "PlanCalculation",
    "Scenario",
    "Scope",
    "Sheet",
    "aggregate_expr",
    "applies",
    "cloud_priced",
    "cloud_priced_formula",
    "fold",
    "fold_values",
    "program",
    "stated_product",
]

INPUT_NAMES = frozenset(i.name for i in INPUTS)

# The one ordered list: each calculation reads only inputs and the calculations before it.
CALCULATIONS: tuple[Calculation, ...] = (
    catalog_values.CALCULATIONS
    + memory.CALCULATIONS
    + load.RATE_CALCULATIONS
    + speculative.CALCULATIONS
    + decode.CALCULATIONS
    + load.LOAD_CALCULATIONS
    + replicas.STREAM_CALCULATIONS
    + decode.SERVED_STEP_CALCULATIONS
    + queueing.WAIT_CALCULATIONS
    + XPYD_CALCULATIONS
    + decode.SERVED_CALCULATIONS
    + XPYD_NODE_CALCULATIONS
    + spread.UNIT_COST_CALCULATIONS
    + replicas.CALCULATIONS
    + costs.CALCULATIONS
    + rented.CALCULATIONS
    + confidence.CALCULATIONS
)

CALCULATION_NAMES = tuple(c.name for c in CALCULATIONS)
UNITS: dict[str, str] = {i.name: i.unit for i in INPUTS} | {c.name: c.unit for c in CALCULATIONS}

# A node group of the account plan is costed by the list's own TCO lines (plan.py says which).
GROUP_COST_CALCULATIONS: tuple[Calculation, ...] = group_cost_calculations(CALCULATIONS)


@cache
def program() -> Program:
    """The whole list compiled once: what the engine, costs and fidelity evaluate."""
    return compile_program([(c.name, c.expr) for c in CALCULATIONS])
