"""BOM: the bill of materials of the account plan (issue 22, item 6).

One *line* per node group of the plan (and per retrieval workload's own nodes): its servers,
GPUs, rack space, power and network ports, read from the plan's counts and the platform's
rack and network facts (catalogs/infrastructure.yaml). The account's totals add the lines and
turn them into racks, PDUs, switches and storage. llmsizer.sizing.bom evaluates these with the
expression machinery; the workbook's BOM sheet prints the same trees as formulas over the Plan
sheet, so a finance analyst can change any count or figure and the totals follow.

Racks: a node never straddles two racks, so each line fits as many whole nodes in a rack as
both its power budget and its usable height allow (at least one: a rack-scale system is its
own rack); each node then takes 1 / that share of a rack, and the account's racks are the
lines' shares summed and rounded up (small servers of several lines share a rack). With one
kind of server this is MAX(ROUNDUP(kW / kW per rack), ROUNDUP(RU / RU per rack)) in whole
servers.

Switches: a standard two-tier fat tree, non-blocking. Up to one switch's ports, one leaf
switch and no spine; beyond, each leaf gives half its ports to nodes and half to the spines,
so leaves = ROUNDUP(ports / (switch ports / 2)) and spines = ROUNDUP(leaf uplinks / switch
ports). The GPU fabric is needed only where a replica (TP x PP GPUs) spans nodes; a replica
inside one node talks over NVLink (or PCIe) and the fabric line reads none.
"""

from __future__ import annotations

from ..expr import IF, MAX, MIN, ROUNDDOWN, ROUNDUP, Expr, gt, le, ref
from .planrows import Aggregate, PlanCalculation

__all__ = ["BOM_LINE_CALCULATIONS", "BOM_LINE_FACTS", "BOM_PARAMETERS", "BOM_TOTAL_AGGREGATES",
           "BOM_TOTAL_CALCULATIONS", "BOM_TOTAL_LABELS", "POOL_REPLICA_SPANS_NODES",
           "POOL_WEIGHTS_STORED_GB"]

r = ref

# Account-wide figures the lines read: infrastructure.yaml ``defaults`` (an input cell each on
# the BOM sheet). ``pue`` is the account's cost input.
# NVIDIA AI Enterprise's published price is in the account's currency (catalog USD x rate).
BOM_PARAMETERS = ("kw_per_rack", "rack_units_per_rack", "pdus_per_rack", "fabric_switch_ports",
                  "frontend_switch_ports", "model_versions_kept", "logs_tb",
                  "nvidia_ai_enterprise_per_gpu_year")

# What each line states, from the plan (counts, costs) and the platform's facts: name, label,
# unit. Every one is a value cell on the BOM sheet (a formula over the Plan sheet for counts
# and costs).
BOM_LINE_FACTS: tuple[tuple[str, str, str], ...] = (
    ("line_nodes", "Servers", "nodes"),
    ("line_gpus", "GPUs", "GPUs"),
    ("line_node_power_kw", "Power per server", "kW"),
    ("line_rack_units_per_node", "Height per server", "RU"),
    ("line_frontend_nics_per_node", "Front-end ports per server", "ports"),
    ("line_frontend_gbps", "Front-end port speed", "Gb/s"),
    ("line_fabric_nics_per_node", "GPU-fabric NICs per server", "NICs"),
    ("line_fabric_gbps", "GPU-fabric NIC speed", "Gb/s"),
    ("line_replica_spans_nodes", "A replica spans servers", "flag"),
    ("line_weights_gb", "Model weights loaded", "GB"),
    ("line_capex", "Capital cost", "currency"),
    ("line_annual_software", "Software licences per year", "currency/yr"),
    ("line_annual_support", "Support per year", "currency/yr"),
)

# Per pool of a line (read on the pool's option): the checkpoint it loads, and whether one
# replica needs more GPUs than a server holds. A line's facts are their SUM and MAX.
POOL_WEIGHTS_STORED_GB = (r("expert_weights_gb") + r("shared_weights_gb")
                          + r("unstreamed_16bit_gb"))
POOL_REPLICA_SPANS_NODES = IF(gt(r("gpus_per_replica"), r("gpus_per_node")), 1, 0)

_nodes = r("line_nodes")
BOM_LINE_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation("line_power_kw", "IT power", "kW", _nodes * r("line_node_power_kw"),
                    "Servers x power per server (the platform's full-load figure)."),
    PlanCalculation("line_rack_units", "Rack units", "RU",
                    _nodes * r("line_rack_units_per_node"), "Servers x height per server."),
    PlanCalculation(
        "line_nodes_per_rack", "Servers per rack", "nodes",
        MAX(1, MIN(ROUNDDOWN(r("kw_per_rack") / r("line_node_power_kw"), 0),
                   ROUNDDOWN(r("rack_units_per_rack") / r("line_rack_units_per_node"), 0))),
        "Whole servers within the rack's power budget and usable height (at least 1)."),
    PlanCalculation("line_rack_share", "Racks taken", "racks",
                    _nodes / r("line_nodes_per_rack"),
                    "Servers / servers per rack (the account rounds the sum up)."),
    PlanCalculation("line_frontend_ports", "Front-end ports", "ports",
                    _nodes * r("line_frontend_nics_per_node"),
                    "Servers x front-end ports per server."),
    PlanCalculation("line_fabric_ports", "GPU-fabric ports", "ports",
                    IF(gt(r("line_replica_spans_nodes"), 0),
                       _nodes * r("line_fabric_nics_per_node"), 0),
                    "Servers x fabric NICs where a replica spans servers; else none."),
)

BOM_TOTAL_AGGREGATES: tuple[Aggregate, ...] = tuple(
    Aggregate(f"bom_{name}", label, unit, "SUM", r(f"line_{name}"), "All lines.")
    for name, label, unit in (
        ("nodes", "Servers", "nodes"), ("gpus", "GPUs", "GPUs"),
        ("power_kw", "IT power", "kW"), ("rack_units", "Rack units", "RU"),
        ("rack_share", "Racks taken, before rounding", "racks"),
        ("frontend_ports", "Front-end ports", "ports"), ("fabric_ports", "GPU-fabric ports", "ports"),
        ("weights_gb", "Model weights loaded", "GB"), ("capex", "Capital cost", "currency"),
        ("annual_software", "Software licences per year", "currency/yr"),
        ("annual_support", "Support per year", "currency/yr")))


def leaf_switches(ports: Expr, switch_ports: Expr) -> Expr:
    """Leaf switches of a non-blocking two-tier fat tree for ``ports`` end points."""
    return IF(gt(ports, 0), IF(le(ports, switch_ports), 1,
                               ROUNDUP(ports / (switch_ports / 2), 0)), 0)


def spine_switches(leaves: Expr, switch_ports: Expr) -> Expr:
    """Spines for ``leaves`` leaf switches, each with half its ports as uplinks."""
    return IF(gt(leaves, 1), ROUNDUP(leaves * (switch_ports / 2) / switch_ports, 0), 0)


_FE, _FAB = r("frontend_switch_ports"), r("fabric_switch_ports")
BOM_TOTAL_CALCULATIONS: tuple[PlanCalculation, ...] = (
    PlanCalculation("bom_racks", "Racks", "racks", ROUNDUP(r("bom_rack_share"), 0),
                    "The lines' racks taken, summed, rounded up to whole racks."),
    PlanCalculation("bom_facility_power_kw", "Facility power", "kW",
                    r("bom_power_kw") * r("pue"), "IT power x PUE (cooling and losses)."),
    PlanCalculation("bom_kw_per_rack_used", "Power per rack (average)", "kW",
                    IF(gt(r("bom_racks"), 0), r("bom_power_kw") / r("bom_racks"), 0),
                    "IT power / racks."),
    PlanCalculation("bom_pdus", "PDUs", "PDUs", r("bom_racks") * r("pdus_per_rack"),
                    "Racks x PDUs per rack."),
    PlanCalculation("bom_frontend_leaf_switches", "Front-end leaf switches", "switches",
                    leaf_switches(r("bom_frontend_ports"), _FE),
                    "One switch up to its port count; beyond, half of each leaf's ports "
                    "face the servers."),
    PlanCalculation("bom_frontend_spine_switches", "Front-end spine switches", "switches",
                    spine_switches(r("bom_frontend_leaf_switches"), _FE),
                    "With more than one leaf: leaves x half their ports / switch ports."),
    PlanCalculation("bom_fabric_leaf_switches", "GPU-fabric leaf switches", "switches",
                    leaf_switches(r("bom_fabric_ports"), _FAB),
                    "As the front end, for the GPU-fabric ports (none when no replica spans "
                    "servers)."),
    PlanCalculation("bom_fabric_spine_switches", "GPU-fabric spine switches", "switches",
                    spine_switches(r("bom_fabric_leaf_switches"), _FAB),
                    "With more than one leaf: leaves x half their ports / switch ports."),
    PlanCalculation("bom_model_repository_tb", "Model repository", "TB",
                    r("bom_weights_gb") * r("model_versions_kept") / 1000,
                    "Weights of every model loaded x versions kept (1 TB = 1,000 GB)."),
    PlanCalculation("bom_storage_tb", "Storage needed", "TB",
                    r("bom_model_repository_tb") + r("logs_tb"), "Model repository + logs."),
    PlanCalculation("bom_storage_tb_costed", "Storage in the costs", "TB",
                    r("bom_nodes") * r("storage_tb_per_node"),
                    "Servers x storage per server: what the cost table prices (it should hold "
                    "the storage needed)."),
    PlanCalculation("bom_nvidia_ai_enterprise_per_year", "NVIDIA AI Enterprise, if added",
                    "currency/yr", r("bom_gpus") * r("nvidia_ai_enterprise_per_gpu_year"),
                    "GPUs x the published price per GPU-year: not in the costs unless the "
                    "software licence per GPU-year is set."),
)

# The totals in the order the BOM sheet and the proposal list them.
_TOTALS: tuple[Aggregate | PlanCalculation, ...] = (*BOM_TOTAL_AGGREGATES,
                                                    *BOM_TOTAL_CALCULATIONS)
BOM_TOTAL_LABELS = {c.name: (c.label, c.unit) for c in _TOTALS}
