"""Cost (seeds 003, 004): the bill of materials per node, on-prem cost per year against
renting the same GPUs in the cloud or buying the tokens from a hosted API, cost per million
tokens and the break-even points; the account totals' cost per million tokens.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from ..expr import AND, IF, MAX, MIN, OR, ROUNDDOWN, ROUNDUP, Expr, eq, evaluate, ge, gt, le, lt, ref
from .core import Calculation, _c, r

# An offer sold by the GPU (review round 22): its own size is one GPU. With no other size
# listed, an instance holds any count of one machine's GPUs (a RunPod pod holds 1..8): a
# replica rents an instance of its own GPUs (up to a node's: a wider replica spans whole
# nodes' instances), so a TP4 replica is one 4-GPU instance, never four 1-GPU ones. With
# other sizes listed (session 23: AWS G6 is sold as 1-, 4- and 8-GPU instances only) the
# instances are of the smallest listed size that holds the widest replica, replicas packed
# into them. Either way N+1 rents one spare instance for the group, as wide as its widest
# replica's instance (a bought group keeps one spare node, not one per pool), and the load
# is rented without the bought plan's spares.
BY_GPU = gt(r("cloud_sold_by_gpu"), 0)
LISTED = gt(r("cloud_sizes_listed"), 0)
_N1 = gt(r("survive_node_loss"), 0)
_BY_GPU_LOAD = gt(r("load_gpus"), 0)


def replica_instance_gpus(replica_gpus: Expr) -> Expr:
    """The GPUs of the instance a replica of ``replica_gpus`` rents from an offer sold by the
    GPU (a node's GPUs at most): its own count when no other size is listed; else the
    smallest listed size that holds it (the offer's own 1 GPU, then the other sizes, fewest
    GPUs first); when none does, the offer's own single GPUs, the replica spanning them, as
    an offer of fixed sizes does (session 24: such a replica cannot run there,
    ``cloud_holds_replica`` = 0, and the offer gives it no price)."""
    t = MIN(replica_gpus, r("gpus_per_node"))
    s1, s2 = r("cloud_size1_gpus"), r("cloud_size2_gpus")
    return IF(LISTED,
              IF(le(t, 1), 1, IF(ge(s1, t), s1, IF(AND(gt(s2, 0), ge(s2, t)), s2, 1))),
              t)


def _instances(size: Expr) -> Expr:
    """Whole instances of ``size`` GPUs for the GPUs in use (spares included), ROUNDDOWN(size /
    the largest replica) replicas to an instance. With N+1 asked, at least one instance more
    than the load needs: one instance down then leaves the load's replicas running, as a
    bought plan keeps its load with a node down. The spare is this size's own (a whole
    instance), so each size is costed without reading the size picked."""
    per = MAX(1, ROUNDDOWN(size / r("cloud_replica_gpus"), 0) * r("cloud_replica_gpus"))
    spare = IF(gt(r("survive_node_loss"), 0),
               IF(gt(r("load_gpus"), 0), ROUNDUP(r("load_gpus") / per, 0) + 1, 0), 0)
    return MAX(ROUNDUP(r("gpus") / per, 0), spare)


CALCULATIONS: tuple[Calculation, ...] = (
    _c("capex_platforms", "Capex: platforms without GPUs", "currency", "TCO",
       r("nodes") * r("node_base_price"), "Nodes x node price without GPUs."),
    _c("capex_gpus", "Capex: GPUs", "currency", "TCO", r("gpus_purchased") * r("gpu_price"),
       "GPUs purchased x GPU price."),
    # network_per_node_used: calculations/spread.py (a node's cost a year reads it first)
    _c("capex_network", "Capex: network", "currency", "TCO",
       r("nodes") * r("network_per_node_used"), "Nodes x network per node."),
    _c("capex", "Capital cost", "currency", "TCO",
       r("capex_platforms") + r("capex_gpus") + r("capex_network"),
       "Platforms + GPUs + network (the bill of materials per node)."),
    _c("annual_capex", "Capex per year", "currency/yr", "TCO",
       r("capex") / r("amortization_years"), "Straight-line amortisation."),
    _c("annual_power_full_load", "Power per year at full load", "currency/yr", "TCO",
       r("nodes") * r("node_power_kw") * r("pue") * r("hours_per_year")
       * r("electricity_per_kwh"),
       "Node kW x PUE x hours x tariff, every node at full load."),
    _c("annual_power_cost", "Power per year", "currency/yr", "TCO",
       r("annual_power_full_load") * r("average_load"),
       "Node kW x PUE x hours x tariff x average load."),
    _c("annual_colocation", "Colocation per year", "currency/yr", "TCO",
       r("nodes") * r("node_power_kw") * r("colocation_per_kw_month") * 12,
       "Nodes x node kW x price per kW-month x 12: rack space and power capacity are contracted "
       "for the full load."),
    _c("annual_storage", "Storage per year", "currency/yr", "TCO",
       r("nodes") * r("storage_tb_per_node") * r("storage_per_tb_month") * 12,
       "Nodes x TB per node x price per TB-month x 12 (on-prem; the cloud pays for the "
       "storage its instances carry: annual_cloud_storage)."),
    _c("annual_software", "Software licences per year", "currency/yr", "TCO",
       r("gpus_purchased") * r("software_per_gpu_year"), "GPUs purchased x licence per GPU-year."),
    _c("annual_support", "Support per year", "currency/yr", "TCO",
       r("capex") * r("support_rate"), "Support rate x capex."),
    _c("annual_fixed_onprem", "On-prem cost per year, load-independent", "currency/yr", "TCO",
       r("annual_capex") + r("annual_colocation") + r("annual_support") + r("annual_storage")
       + r("annual_software"),
       "Everything but power: amortised capex, colocation, support, storage, licences."),
    _c("annual_facility", "Power and colocation per year", "currency/yr", "TCO",
       r("annual_power_cost") + r("annual_colocation"), "Power + colocation."),
    _c("annual_services", "Support, storage and licences per year", "currency/yr", "TCO",
       r("annual_support") + r("annual_storage") + r("annual_software"),
       "Support + storage + licences."),
    _c("annual_cost_onprem", "On-prem cost per year", "currency/yr", "TCO",
       r("annual_capex") + r("annual_facility") + r("annual_services"),
       "Amortised capex + power and colocation + support, storage and licences."),
    # Cloud instances come in sizes (catalog prices.yaml, an offer's sizes): a replica's GPUs
    # share NVLink, so a replica never spans instances while a size holds it; replicas pack
    # ROUNDDOWN(size / replica) to an instance. The plan rents the cheapest single size that
    # holds its largest replica; the offer's own size, spanning instances, when none does.
    _c("cloud_replica_gpus", "GPUs of the largest replica", "GPUs", "TCO",
       MAX(1, r("gpus_per_replica"), r("disagg_prefill_gpus")),
       "GPUs per replica (a disaggregated prefill replica when wider): what one cloud instance "
       "must hold."),
    # the counts an offer sold by the GPU rents (a node group's: the sums over its pools,
    # plan_node_loss.py; a retrieval group's: its one-GPU replicas)
    _c("cloud_load_instances", "Cloud instances for the load, one per replica", "instances",
       "TCO",
       r("replicas_for_load") * ROUNDUP(r("gpus_per_replica") / r("gpus_per_node"), 0)
       + IF(gt(r("disagg_prefill_gpus"), 0),
            r("disagg_prefill_gpus_for_load") / r("disagg_prefill_gpus")
            * ROUNDUP(r("disagg_prefill_gpus") / r("gpus_per_node"), 0), 0),
       "Replicas for peak + headroom (and prefill replicas) x the instances one spans: an "
       "instance of a replica's own GPUs, a node's at most (offers sold by the GPU)."),
    _c("cloud_sizes_listed", "Cloud offer sold in listed sizes only", "1 = yes", "TCO",
       IF(OR(gt(r("cloud_size1_gpus"), 0), gt(r("cloud_fixed_sizes"), 0)), 1, 0),
       "1 = the provider sells the offer in the instance sizes the price list gives (its own "
       "and its other sizes; a single-GPU offer may list none: 1-GPU instances only): an "
       "instance is one of them, never a replica's own count."),
    _c("cloud_replica_instance_gpus", "GPUs per instance holding the largest replica",
       "GPUs", "TCO", replica_instance_gpus(r("cloud_replica_gpus")),
       "Sold by the GPU: the largest replica's own GPUs (a node's at most) when the offer "
       "lists no other size; else the smallest listed size that holds it (the offer's own "
       "single GPUs, spanning, when none does)."),
    _c("cloud_spare_gpus", "GPUs of the N+1 spare instance", "GPUs", "TCO",
       IF(_BY_GPU_LOAD, r("cloud_replica_instance_gpus"), 0),
       "An instance of the largest replica (a node group: the widest of its pools'): one "
       "instance down loses the replicas on it, which the spare takes over (offers sold by "
       "the GPU)."),
    _c("cloud_spare_instances", "Spare instances for N+1", "instances", "TCO",
       IF(_BY_GPU_LOAD, 1, 0),
       "One spare instance (a node group: one for all its pools, one failure at a time; "
       "offers sold by the GPU)."),
    _c("cloud_sold_by_gpu", "Cloud offer sold by the GPU", "1 = yes", "TCO",
       # a number, not TRUE/FALSE: a spreadsheet ranks FALSE above every number (FALSE>0)
       IF(eq(r("cloud_gpus_per_instance"), 1), 1, 0),
       "1 = the offer's own instance is one GPU: the plan rents the load's replicas and one "
       "spare instance with N+1, not the bought plan's spares; with no other size listed an "
       "instance holds one replica's GPUs (up to a node's), as a GPU cloud's pod of 1 to 8 "
       "GPUs of one machine; with other sizes listed, instances of the listed sizes only. "
       "0 = whole instances of several GPUs (8-GPU instances)."),
    # Session 24: an offer sold in 1-GPU instances only (Lambda's H100 PCIe, A10, GH200: no
    # 2x size in SkyPilot catalog v8 lambda/vms.csv) cannot hold a 2-GPU replica: two virtual
    # machines are not one tensor-parallel group (no NVLink or PCIe peer link between them),
    # so the replica cannot run there and the offer gives it no rent (it was priced as two
    # 1-GPU instances). The same holds for any offer sold by the GPU whose listed sizes are all
    # narrower than the replica (a node's GPUs at most: a wider replica spans whole nodes).
    # Session 25: the same holds for an offer of fixed whole instances of several GPUs
    # (cloud_gpus_per_instance > 1): no size it sells holds the replica (a node's GPUs at
    # most) when the instance rented is narrower, and the rent below would count the replica
    # spanning instances. A replica wider than a node spans node-wide instances, as the
    # bought plan spans nodes over the scale-out network.
    _c("cloud_holds_replica", "Cloud offer holds the largest replica", "1 = yes", "TCO",
       # (no offer: 0 GPUs per instance, held: cloud_price_known says why)
       IF(AND(gt(r("cloud_gpus_per_instance"), 0),
              lt(IF(BY_GPU, r("cloud_replica_instance_gpus"),
                    MAX(r("cloud_gpus_per_instance"), r("cloud_size1_gpus"),
                        r("cloud_size2_gpus"))),
                 MIN(r("cloud_replica_gpus"), r("gpus_per_node")))), 0, 1),
       "1 = an instance the offer sells holds the largest replica's GPUs (a node's at most: "
       "a wider replica spans node-wide instances, as the bought plan spans nodes); 0 = every "
       "size sold is narrower (sold by the GPU in 1-GPU instances only and a 2-GPU replica, or "
       "whole 4-GPU instances and an 8-GPU replica): instances are not one tensor-parallel "
       "group, so the replica cannot run on this offer and it has no cloud price."),
    _c("cloud_price_known", "Cloud price known", "1 = yes", "TCO",
       IF(AND(gt(r("cloud_gpu_hour"), 0), gt(r("cloud_holds_replica"), 0)), 1, 0),
       "1 = the offer has a price per GPU-hour and holds the largest replica; 0 = no cloud "
       "price (none listed, or the offer cannot hold a replica): the cloud figures are 0."),
    _c("cloud_listed_load_instances", "Cloud instances of the listed size for the load",
       "instances", "TCO",
       IF(ge(r("cloud_replica_instance_gpus"), r("cloud_replica_gpus")),
          ROUNDUP(r("load_gpus") / (MAX(1, ROUNDDOWN(r("cloud_replica_instance_gpus")
                                                   / r("cloud_replica_gpus"), 0))
                                    * r("cloud_replica_gpus")), 0),
          # no listed size holds the replica: counted as spanning the offer's own 1-GPU
          # instances (replica_instance_gpus), one per GPU; no price (cloud_holds_replica = 0)
          ROUNDUP(r("load_gpus") / r("cloud_replica_instance_gpus"), 0)),
       "GPUs for peak + headroom in instances of the listed size, ROUNDDOWN(size / the largest "
       "replica) replicas to an instance (when no listed size holds a replica, it spans the "
       "offer's own 1-GPU instances: one per GPU): offers sold by the GPU in listed sizes."),
    _c("cloud_gpus_by_gpu", "GPUs rented by the GPU", "GPUs", "TCO",
       IF(_BY_GPU_LOAD,
          IF(LISTED, r("cloud_listed_load_instances") * r("cloud_replica_instance_gpus"),
             r("load_gpus")) + IF(_N1, r("cloud_spare_gpus"), 0),
          IF(LISTED, ROUNDUP(r("gpus") / r("cloud_replica_instance_gpus"), 0)
             * r("cloud_replica_instance_gpus"), r("gpus"))),
       "GPUs for peak + headroom (in listed sizes: their instances' GPUs) + with N+1 the spare "
       "instance's GPUs (GPUs in use where the load is carried elsewhere): no bought spare "
       "node is rented (offers sold by the GPU)."),
    *(_c(f"cloud_rent_hour_{name}", f"Cloud rent per hour in {words}", "currency/h", "TCO",
         (IF(BY_GPU, IF(OR(le(r("cloud_sizes_listed"), 0),
                           eq(r("cloud_replica_instance_gpus"), size)),
                        r("cloud_gpus_by_gpu") * price, 0),
             IF(AND(gt(size, 0), ge(size, r("cloud_replica_gpus"))),
                _instances(size) * size * price,
                ROUNDUP(r("gpus") / MAX(1, size), 0) * size * price))
          if name == "offer" else
          IF(BY_GPU, IF(AND(gt(size, 0), eq(r("cloud_replica_instance_gpus"), size)),
                        r("cloud_gpus_by_gpu") * price, 0),
             IF(AND(gt(size, 0), ge(size, r("cloud_replica_gpus"))),
                _instances(size) * size * price, 0))),
         f"Whole instances of {words} x their GPUs x price per GPU-hour, replicas packed; "
         "with N+1, one instance more than the load needs "
         + ("(spanning instances when a replica is wider)." if name == "offer"
            else "(0 = this size cannot hold a replica, or there is none).")
         + " Sold by the GPU: the GPUs rented by the GPU x price where this is the size rented "
         "(0 otherwise).")
      for name, words, size, price in (
          ("offer", "the offer's own size", r("cloud_gpus_per_instance"), r("cloud_gpu_hour")),
          ("size1", "other size 1", r("cloud_size1_gpus"), r("cloud_size1_gpu_hour")),
          ("size2", "other size 2", r("cloud_size2_gpus"), r("cloud_size2_gpu_hour")))),
    _c("cloud_size_picked",
       "Cloud instance size rented (0 = the offer's own, 1 or 2 = its other listed sizes)",
       "code", "TCO",
       IF(BY_GPU,
          IF(AND(LISTED, eq(r("cloud_replica_instance_gpus"), r("cloud_size2_gpus"))), 2,
             IF(AND(LISTED, eq(r("cloud_replica_instance_gpus"), r("cloud_size1_gpus"))), 1, 0)),
       IF(AND(gt(r("cloud_rent_hour_size2"), 0),
              OR(lt(r("cloud_gpus_per_instance"), r("cloud_replica_gpus")),
                 lt(r("cloud_rent_hour_size2"), r("cloud_rent_hour_offer"))),
              OR(le(r("cloud_rent_hour_size1"), 0),
                 le(r("cloud_rent_hour_size2"), r("cloud_rent_hour_size1")))), 2,
          IF(AND(gt(r("cloud_rent_hour_size1"), 0),
                 OR(lt(r("cloud_gpus_per_instance"), r("cloud_replica_gpus")),
                    lt(r("cloud_rent_hour_size1"), r("cloud_rent_hour_offer")))), 1, 0))),
       "0 = the offer's own size; 1 or 2 = another size that holds the largest replica and "
       "rents for less (or the offer's size cannot hold it); a tie keeps the larger size. "
       "Sold by the GPU: the listed size its instances are (0 = the offer's own or, with no "
       "size listed, a replica's own count at the offer's price)."),
    _c("cloud_instance_gpus", "GPUs per cloud instance rented", "GPUs", "TCO",
       IF(BY_GPU, r("cloud_replica_instance_gpus"),
          IF(eq(r("cloud_size_picked"), 2), r("cloud_size2_gpus"),
             IF(eq(r("cloud_size_picked"), 1), r("cloud_size1_gpus"),
                r("cloud_gpus_per_instance")))),
       "The size picked; sold by the GPU: the instance of the largest replica (its own GPUs, "
       "a node's at most, each replica's instance holding its own; or the listed size)."),
    _c("cloud_instance_gpu_hour", "Cloud price per GPU-hour paid", "currency/h", "TCO",
       IF(eq(r("cloud_size_picked"), 2), r("cloud_size2_gpu_hour"),
          IF(eq(r("cloud_size_picked"), 1), r("cloud_size1_gpu_hour"), r("cloud_gpu_hour"))),
       "The price of the size picked."),
    _c("cloud_instances", "Cloud instances", "instances", "TCO",
       IF(BY_GPU,
          IF(_BY_GPU_LOAD,
             IF(LISTED, r("cloud_listed_load_instances"), r("cloud_load_instances"))
             + IF(_N1, r("cloud_spare_instances"), 0),
             ROUNDUP(r("gpus") / MAX(1, r("cloud_instance_gpus")), 0)),
          IF(ge(r("cloud_instance_gpus"), r("cloud_replica_gpus")),
             _instances(r("cloud_instance_gpus")),
             ROUNDUP(r("gpus") / r("cloud_instance_gpus"), 0))),
       "Whole instances for the GPUs in use (spares included), ROUNDDOWN(size / replica) "
       "replicas to an instance: the cloud sells instances. With N+1, at least ROUNDUP(GPUs "
       "for the load / an instance's replica GPUs) + 1, so that one instance down leaves the "
       "load running. Sold by the GPU: one instance per replica for the load (listed sizes: "
       "the instances of that size for the load) + with N+1 the spare instance."),
    _c("cloud_gpus_rented", "GPUs rented", "GPUs", "TCO",
       IF(BY_GPU, r("cloud_gpus_by_gpu"), r("cloud_instances") * r("cloud_instance_gpus")),
       "Instances x GPUs per instance: the same capacity as on-prem, rounded to what is sold; "
       "sold by the GPU: the GPUs rented by the GPU."),
    _c("annual_cloud_rent", "Cloud rent per year", "currency/yr", "TCO",
       r("cloud_gpus_rented") * r("cloud_instance_gpu_hour") * r("hours_per_year"),
       "GPUs rented x the size's price per GPU-hour x hours, always on."),
    # Session 24: storage rented is what the instances rented carry, not the servers a
    # purchase needs. storage_tb_per_node is a server's shared storage (model versions, logs)
    # for its GPUs; an instance of k GPUs is k / (a node's GPUs) of such a server, so the
    # cloud pays the TB per node x GPUs rented / GPUs per node (summed over the instances:
    # instances x their GPUs = the GPUs rented). Per instance, whole, would charge each 1-GPU
    # instance a server's storage (the insurer's 7 instances: 7 servers' worth for 10 GPUs);
    # per server bought charged a rented plan for the spare node it does not rent.
    _c("cloud_storage_tb", "Cloud storage rented", "TB", "TCO",
       r("cloud_gpus_rented") / r("gpus_per_node") * r("storage_tb_per_node"),
       "GPUs rented / GPUs per node x TB per node: each instance carries its GPUs' share of a "
       "server's storage."),
    _c("annual_cloud_storage", "Cloud storage per year", "currency/yr", "TCO",
       r("cloud_storage_tb") * r("storage_per_tb_month") * 12,
       "Cloud storage rented x price per TB-month x 12."),
    _c("annual_cloud_extras", "Cloud storage and licences per year", "currency/yr", "TCO",
       r("annual_cloud_storage") + r("cloud_gpus_rented") * r("software_per_gpu_year"),
       "The storage the instances rented carry + per-GPU licences for the GPUs rented."),
    _c("annual_cost_cloud", "Cloud cost per year", "currency/yr", "TCO",
       IF(gt(r("cloud_price_known"), 0), r("annual_cloud_rent") + r("annual_cloud_extras"), 0),
       "Rent + storage + licences (0 = no price listed, or the offer cannot hold a replica: "
       "storage alone is not a cloud cost)."),
    _c("million_tokens_per_year", "Output tokens served per year", "M tokens", "TCO",
       IF(gt(r("peak_request_rate_per_s"), 0),
          r("peak_request_rate_per_s") * r("output_tokens"), r("required_system_tokens_per_s"))
       * r("average_load") * 3600 * r("hours_per_year") / 1e6,
       "Peak demand x average load x seconds per year. A load stated as a rate asks for "
       "rate x output tokens, whatever the latency targets (users x the speed each must see "
       "counted a request's tokens again for every user Little's law rounds up)."),
    _c("million_input_tokens_per_year", "Input tokens served per year", "M tokens", "TCO",
       r("million_tokens_per_year") * r("prompt_tokens") / r("output_tokens"),
       "Output tokens x prompt / output length: each request carries its prompt."),
    _c("million_total_tokens_per_year", "Input + output tokens per year", "M tokens", "TCO",
       r("million_tokens_per_year") + r("million_input_tokens_per_year"), "Input + output."),
    _c("cost_per_million_tokens_onprem", "On-prem cost per million output tokens",
       "currency/M tok", "TCO",
       IF(gt(r("million_tokens_per_year"), 0),
          r("annual_cost_onprem") / r("million_tokens_per_year"), 0),
       "Annual on-prem cost / output tokens served."),
    _c("cost_per_million_tokens_cloud", "Cloud cost per million output tokens",
       "currency/M tok", "TCO",
       IF(gt(r("million_tokens_per_year"), 0),
          r("annual_cost_cloud") / r("million_tokens_per_year"), 0),
       "Annual cloud cost / output tokens served."),
    _c("cost_per_million_total_tokens_onprem", "On-prem cost per million tokens (in + out)",
       "currency/M tok", "TCO",
       IF(gt(r("million_total_tokens_per_year"), 0),
          r("annual_cost_onprem") / r("million_total_tokens_per_year"), 0),
       "Annual on-prem cost / input + output tokens: comparable with an API's blended price."),
    _c("cost_per_million_total_tokens_cloud", "Cloud cost per million tokens (in + out)",
       "currency/M tok", "TCO",
       IF(gt(r("million_total_tokens_per_year"), 0),
          r("annual_cost_cloud") / r("million_total_tokens_per_year"), 0),
       "Annual cloud cost / input + output tokens."),
    _c("annual_cost_api", "Hosted API cost per year", "currency/yr", "TCO",
       r("million_input_tokens_per_year") * r("api_input_per_million")
       + r("million_tokens_per_year") * r("api_output_per_million"),
       "The same tokens bought from a hosted API at its list price (0 = no price listed)."),
    _c("cost_per_million_total_tokens_api", "Hosted API cost per million tokens (in + out)",
       "currency/M tok", "TCO",
       IF(gt(r("million_total_tokens_per_year"), 0),
          r("annual_cost_api") / r("million_total_tokens_per_year"), 0),
       "The API's blended price for this workload's prompt / output mix."),
    _c("breakeven_months", "Buy-vs-rent break-even", "months", "TCO",
       IF(gt(r("annual_cost_cloud"), r("annual_cost_onprem") - r("annual_capex")),
          r("capex") / ((r("annual_cost_cloud") - r("annual_cost_onprem") + r("annual_capex"))
                        / 12), 0),
       "Capex / monthly saving of owning over renting (running costs without amortisation); "
       "0 (the workbook shows —) = renting stays cheaper, or no cloud price listed."),
    # a break-even past the write-off (Litware read "buying beats renting after 214 months"
    # on a 3-year write-off) is no case for buying: the proposal says it does not pay back
    _c("breakeven_in_writeoff", "Buying pays back within the amortisation period", "flag",
       "TCO", AND(gt(r("breakeven_months"), 0),
                  le(r("breakeven_months"), r("amortization_years") * 12)),
       "1 when the break-even comes within the amortisation period (years x 12 months); "
       "0 = renting stays cheaper over it, or no cloud price listed."),
    _c("breakeven_load_vs_cloud", "Average load above which buying beats renting by the hour",
       "fraction", "TCO",
       IF(gt(r("annual_cloud_rent"), r("annual_power_full_load")),
          (r("annual_fixed_onprem") - r("annual_cloud_extras"))
          / (r("annual_cloud_rent") - r("annual_power_full_load")), 0),
       "Owning costs fixed + power x load; renting only the GPU-hours used costs rent x load + "
       "extras: equal at this load (above 1 or 0 = renting stays cheaper, or no cloud price "
       "listed)."),
    _c("breakeven_load_vs_api", "Average load above which buying beats the hosted API",
       "fraction", "TCO",
       IF(gt(r("annual_cost_api") / r("average_load"), r("annual_power_full_load")),
          r("annual_fixed_onprem")
          / (r("annual_cost_api") / r("average_load") - r("annual_power_full_load")), 0),
       "The API's cost grows with tokens (with load); owning costs fixed + power x load: equal "
       "at this load (above 1 or 0 = the API stays cheaper)."),
)

# Account totals across workloads (each workload's recommended option, summed by the
# engine): cost per million tokens of the whole account.
TOTAL_COST_PER_MILLION_ONPREM = IF(gt(ref("million_tokens_per_year"), 0),
                                   ref("annual_cost_onprem") / ref("million_tokens_per_year"), 0)
TOTAL_COST_PER_MILLION_CLOUD = IF(gt(ref("million_tokens_per_year"), 0),
                                  ref("annual_cost_cloud") / ref("million_tokens_per_year"), 0)

TOTAL_COST_PER_MILLION_TOTAL_ONPREM = IF(
    gt(ref("million_total_tokens_per_year"), 0),
    ref("annual_cost_onprem") / ref("million_total_tokens_per_year"), 0)
TOTAL_COST_PER_MILLION_TOTAL_CLOUD = IF(
    gt(ref("million_total_tokens_per_year"), 0),
    ref("annual_cost_cloud") / ref("million_total_tokens_per_year"), 0)
TOTAL_COST_PER_MILLION_TOTAL_API = IF(
    gt(ref("million_total_tokens_per_year"), 0),
    ref("annual_cost_api") / ref("million_total_tokens_per_year"), 0)

# Catalog prices are in US dollars; accounts in another currency give an exchange rate.
PRICE_IN_ACCOUNT_CURRENCY = ref("usd_price") * ref("usd_exchange_rate")
# A GPU without a dated offer in the account's cloud tier is priced from another tier's offer
# by the catalog's documented ratio between the two tiers (prices.yaml, tier_ratios), so that
# every option of a comparison is rented in one tier.
DERIVED_TIER_PRICE = ref("other_tier_price") * ref("tier_ratio")


def _digits(x: float) -> int:
    """Significant digits of ``x`` as written (its shortest decimal: 0.6642 has 4)."""
    mantissa = repr(abs(x)).lower().split("e")[0].replace(".", "")
    return max(1, len(mantissa.strip("0")))


def stated_product(expr: Expr, env: Mapping[str, float]) -> float:
    """``expr``, a product of the stated numbers ``env`` (a USD price x the exchange rate,
    an offer x a tier ratio: PRICE_IN_ACCOUNT_CURRENCY, DERIVED_TIER_PRICE), as the decimal
    they state. A product of numbers of m and n significant digits has at most m + n; binary
    floats miss it in the last bit (1.29 x 0.6642 = 0.8568180000000001, not 0.856818), which
    the workbook then wrote as a long constant in its Inputs and Catalog cells. The product
    is rounded to m + n digits when that moves it by float noise alone (a few units in the
    last place); otherwise, or at 16 digits and more, it is the float product."""
    value = float(evaluate(expr, env))
    digits = sum(_digits(x) for x in env.values())
    if value == 0 or not math.isfinite(value) or digits >= 16:
        return value
    short = float(f"{value:.{digits}g}")
    return short if abs(short - value) <= 4 * math.ulp(value) else value

# The account's cloud total holds only when every part of it (node group, retrieval group or,
# alone, option) that runs GPUs has a cloud price: a part's annual_cost_cloud is 0 when its
# GPU has none (above), and summing the priced parts alone understated the cloud by the
# unpriced parts' whole rent. The engine (cloud_priced) and the workbook's total cells
# (cloud_priced_formula) read the same rule from here.


def cloud_priced(parts: Iterable[tuple[float, float]]) -> bool:
    """Whether every (cloud cost per year, GPUs in use) part is priced in the cloud."""
    return all(cost > 0 or gpus == 0 for cost, gpus in parts)


def cloud_priced_formula(costs: Sequence[str], gpus: Sequence[str]) -> str:
    """The same test as a spreadsheet condition over the parts' cells."""
    if len(costs) != len(gpus):
        raise ValueError("one GPU count per cloud cost")
    if not costs:
        return "TRUE()"
    return "AND(" + ",".join(f"OR({c}>0,{g}=0)" for c, g in zip(costs, gpus, strict=True)) + ")"
