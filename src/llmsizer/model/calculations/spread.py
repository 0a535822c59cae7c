"""Session 25 (hunt seed 71): where N+1 runs on PCIe servers bought part full, the spare holds
what the fullest server runs, so spreading the load over one server more shrinks the spare.
Packed on the fewest servers or spread over one more: the layout is the one that costs less a
year, by the plan's own prices (a node's and a GPU's part of the on-prem cost per year, read
here before the counts are known). 8 RTX PRO 6000 replicas on 8-slot XE7745s: 2 servers of 8
(16 GPUs) or 3 of 4 (12 GPUs): one server's USD 32,197.25 against four GPUs' 34,260 bought.

The option's rows (replicas.py) and the plan's (plan_pools.py) both cost the two layouts with
:func:`layout_cost`, the one home of that sum.
"""

from __future__ import annotations

from ..expr import IF, Expr, gt, lookup
from .core import Calculation, _c, r

# What capital costs a year: amortised, plus support on it (costs.py annual_capex and
# annual_support, per currency unit of capex).
_CAPEX_A_YEAR = 1 / r("amortization_years") + r("support_rate")

UNIT_COST_CALCULATIONS: tuple[Calculation, ...] = (
    # The network a server carries (brief F, session 23): the east-west GPU fabric's share
    # per fabric port only on a platform built for it (platforms.yaml gpu_fabric: HGX/DGX/OAM,
    # NVL72; replicas span nodes only there), and every server's front-end ports at their
    # speed. Per server, never per group size (tests/test_money_round14.py item 3).
    _c("network_per_node_used", "Network per node", "currency", "TCO",
       IF(gt(r("network_per_node_stated"), 0), r("network_per_node"),
          lookup("platforms", "platform", "gpu_fabric")
          * lookup("platforms", "platform", "fabric_ports") * r("network_per_fabric_port")
          + lookup("platforms", "platform", "frontend_ports")
          * lookup("platforms", "platform", "frontend_gbps") * r("network_per_frontend_gbps")),
       "The account's network per node where it states one; else, where the platform is "
       "built for a GPU fabric (1 = yes), its fabric ports x price per fabric port, plus "
       "front-end ports x their Gb/s x price per Gb/s (a PCIe server: the front-end alone)."),
    _c("node_cost_per_year", "A node's cost per year, without its GPUs", "currency/yr", "TCO",
       (r("node_base_price") + r("network_per_node_used")) * _CAPEX_A_YEAR
       + r("node_power_kw") * r("pue") * r("hours_per_year") * r("electricity_per_kwh")
       * r("average_load")
       + r("node_power_kw") * r("colocation_per_kw_month") * 12
       + r("storage_tb_per_node") * r("storage_per_tb_month") * 12,
       "(Node price + network per node) x (1 / amortisation years + support rate) + power at "
       "the average load + colocation + storage: what one node more adds to the on-prem cost "
       "per year. Picks the cheaper N+1 layout on PCIe servers bought part full."),
    _c("gpu_cost_per_year", "A GPU's cost per year", "currency/yr", "TCO",
       r("gpu_price") * _CAPEX_A_YEAR + r("software_per_gpu_year"),
       "GPU price x (1 / amortisation years + support rate) + licence per GPU-year: what one "
       "GPU more adds to the on-prem cost per year."),
)


def layout_cost(nodes: Expr, gpus: Expr) -> Expr:
    """The on-prem cost per year of ``nodes`` servers holding ``gpus`` GPUs bought."""
    return nodes * r("node_cost_per_year") + gpus * r("gpu_cost_per_year")
