"""Catalog values for one option: live lookups into the Catalog sheet (GPU memory, bandwidth,
link, peak FLOP/s, platform, prices, the what-if cloud tier), the precisions' bytes, the
parallel layout's GPU counts and the context a request reserves. ``TABLE_COLUMNS`` names
every lookup column the formulas read.
"""

from __future__ import annotations

from ..expr import AND, IF, Expr, eq, gt, lookup
from .core import Calculation, _c, r, tp


def _tier_column(prefix: str) -> Expr:
    """The catalog column of the what-if cloud tier (1-4): ``<prefix>_on_demand`` etc."""
    return IF(eq(r("cloud_tier_what_if"), 1), lookup("gpus", "gpu", f"{prefix}_on_demand"),
              IF(eq(r("cloud_tier_what_if"), 2), lookup("gpus", "gpu", f"{prefix}_1yr"),
                 IF(eq(r("cloud_tier_what_if"), 3), lookup("gpus", "gpu", f"{prefix}_3yr"),
                    lookup("gpus", "gpu", f"{prefix}_gpu_cloud"))))


CALCULATIONS: tuple[Calculation, ...] = (
    _c("gpu_memory_gb", "GPU memory", "GB", "KV", lookup("gpus", "gpu", "memory_gb"),
       "Per GPU, as marketed (GB = 1e9 bytes)."),
    _c("gpu_bandwidth_tb_s", "GPU memory bandwidth", "TB/s", "Throughput",
       lookup("gpus", "gpu", "bandwidth_tb_s"), "Peak HBM/GDDR bandwidth per GPU."),
    _c("gpu_link_gb_s", "Scale-up link", "GB/s", "Throughput",
       lookup("gpus", "gpu", "link_gb_s"), "GPU-to-GPU bandwidth, one direction."),
    _c("weight_bytes_per_param", "Bytes per weight", "B", "KV",
       lookup("precisions", "weight_precision", "bytes_per_param")
       * (1 + lookup("precisions", "weight_precision", "scale_overhead")),
       "Storage bytes per parameter incl. quantisation scales (“The KV cache is your real budget”)."),
    _c("kv_bytes_per_element", "Bytes per KV element", "B", "KV",
       lookup("precisions", "kv_precision", "bytes_per_param"), "KV-cache storage format."),
    _c("gpus_per_replica", "GPUs per replica", "GPUs", "KV", tp * r("pp"),
       "TP x pipeline stages: the GPUs that hold one copy of the model."),
    _c("attention_tp", "Attention tensor-parallel degree", "GPUs", "KV", tp / r("adp"),
       "TP / attention data-parallel ranks: with ADP each rank runs attention for its own "
       "sequences on TP / ADP GPUs."),
    _c("expert_tp", "Expert tensor-parallel degree", "GPUs", "KV", tp / r("ep"),
       "TP / expert-parallel ranks: GPUs that split one expert (or a dense MLP) by tensor "
       "parallelism."),
    _c("peak_tflops", "Peak tensor throughput used", "TFLOP/s", "Throughput",
       IF(eq(lookup("precisions", "weight_precision", "compute_code"), 4),
          IF(gt(lookup("gpus", "gpu", "fp4_tflops"), 0), lookup("gpus", "gpu", "fp4_tflops"),
             lookup("gpus", "gpu", "bf16_tflops")),
          IF(eq(lookup("precisions", "weight_precision", "compute_code"), 2),
             IF(gt(lookup("gpus", "gpu", "fp8_tflops"), 0),
                lookup("gpus", "gpu", "fp8_tflops"), lookup("gpus", "gpu", "bf16_tflops")),
             IF(eq(lookup("precisions", "weight_precision", "compute_code"), 3),
                IF(gt(lookup("gpus", "gpu", "int8_tops"), 0),
                   lookup("gpus", "gpu", "int8_tops"), lookup("gpus", "gpu", "bf16_tflops")),
                lookup("gpus", "gpu", "bf16_tflops")))),
       "Dense peak for the compute path: native FP8/FP4 where the GPU has it, else weights "
       "are dequantised to BF16 (“How fast does it serve?”)."),
    _c("efficiency_scale", "Efficiency scale", "fraction", "Throughput",
       r("stack_efficiency") * r("calibration_derating"),
       "Software-stack efficiency x derating of an uncalibrated option: scales every step-time "
       "term, so t(B) stays linear in B."),
    _c("attention_peak_tflops", "Peak throughput of attention", "TFLOP/s", "Throughput",
       IF(AND(eq(lookup("precisions", "kv_precision", "compute_code"), 2),
              gt(lookup("gpus", "gpu", "fp8_tflops"), 0)),
          lookup("gpus", "gpu", "fp8_tflops"), lookup("gpus", "gpu", "bf16_tflops")),
       "Attention runs at the KV cache's precision: FP8 where the KV is FP8 and the GPU has "
       "FP8, else BF16 (FP4 weights do not make attention FP4)."),
    _c("ridge_point_flop_per_byte", "Ridge point", "FLOP/B", "Throughput",
       r("peak_tflops") / r("gpu_bandwidth_tb_s"),
       "Peak FLOP/s / bandwidth: below this arithmetic intensity a kernel is memory-bound "
       "(“GPU Inference vs Training Requirements”: H100 989 / 3.35 = 295)."),
    _c("gpus_per_node", "GPUs per node", "GPUs", "Nodes",
       lookup("platforms", "platform", "gpus_per_node"), "Platform's GPU count."),
    _c("scaleout_gb_s", "Network link between nodes", "GB/s", "Throughput",
       lookup("platforms", "platform", "scaleout_gb_s"),
       "RDMA network per GPU between nodes, one direction (0 = not stated)."),
    _c("platform_sold_full", "Bought with all GPUs", "1 = yes", "Nodes",
       lookup("platforms", "platform", "sold_full"),
       "1 for fixed baseboards (HGX/DGX/OAM): a node is bought with every GPU slot filled."),
    _c("node_power_kw", "Node power", "kW", "TCO",
       lookup("platforms", "platform", "node_power_kw"), "Whole node at full GPU load."),
    _c("node_base_price", "Node price without GPUs", "currency", "TCO",
       lookup("platforms", "platform", "base_price"), "Chassis, CPUs, memory, NICs."),
    _c("gpu_price", "GPU price", "currency", "TCO",
       lookup("gpus", "gpu", "price") * r("gpu_price_factor"),
       "Catalog estimate or the account's override, x the what-if multiplier (1 normally)."),
    _c("cloud_gpu_hour", "Cloud price per GPU-hour", "currency/h", "TCO",
       IF(gt(r("cloud_tier_what_if"), 0), _tier_column("cloud"),
          lookup("gpus", "gpu", "cloud_gpu_hour")),
       "The account's cloud tier (the dated price list) or its override; a what-if tier code "
       "picks that tier's catalog price."),
    _c("cloud_gpus_per_instance", "GPUs per cloud instance", "GPUs", "TCO",
       IF(gt(r("cloud_tier_what_if"), 0), _tier_column("cloud_gpus"),
          lookup("gpus", "gpu", "cloud_gpus_per_instance")),
       "How the offer is sold: whole instances of this many GPUs (1 = single GPUs)."),
    _c("cloud_fixed_sizes", "Cloud offer sold in its listed sizes only", "1 = yes", "TCO",
       IF(gt(r("cloud_tier_what_if"), 0), _tier_column("cloud_fixed"),
          lookup("gpus", "gpu", "cloud_fixed_sizes")),
       "1 = the provider sells the offer in its own size and the other sizes listed only (a "
       "single-GPU offer listing no other size: 1-GPU instances only); 0 = a single-GPU offer "
       "is sold in any count of one machine's GPUs."),
    *(c for k in (1, 2) for c in (
        _c(f"cloud_size{k}_gpus", f"GPUs per cloud instance, other size {k}", "GPUs", "TCO",
           IF(gt(r("cloud_tier_what_if"), 0), _tier_column(f"cloud_size{k}_gpus"),
              lookup("gpus", "gpu", f"cloud_size{k}_gpus")),
           "Another instance size the same offer is sold in (fewest GPUs first; 0 = none)."),
        _c(f"cloud_size{k}_gpu_hour", f"Cloud price per GPU-hour, other size {k}", "currency/h",
           "TCO", IF(gt(r("cloud_tier_what_if"), 0), _tier_column(f"cloud_size{k}"),
                     lookup("gpus", "gpu", f"cloud_size{k}_gpu_hour")),
           "That size's own price per GPU-hour (0 = no such size)."))),
    _c("context_tokens", "KV reserved per request", "tokens", "KV",
       IF(gt(r("max_context_tokens"), 0), r("max_context_tokens"),
          r("prompt_tokens") + r("kv_output_occupancy") * r("output_tokens")),
       "Stated maximum context, else prompt + the held share of the output."),
    _c("mla_kv_dim", "MLA latent width", "elements", "KV",
       IF(gt(r("kv_lora_rank"), 0), r("kv_lora_rank") + r("qk_rope_head_dim"), 0),
       "kv_lora_rank + qk_rope_head_dim for MLA models; 0 = standard attention."),
)

# Columns of the lookup tables the formulas read (the engine and the workbook's Catalog
# sheet provide exactly these).
TABLE_COLUMNS: dict[str, tuple[str, ...]] = {
    "gpus": ("memory_gb", "bandwidth_tb_s", "bf16_tflops", "fp8_tflops", "int8_tops",
             "fp4_tflops", "link_gb_s", "price", "cloud_gpu_hour", "cloud_gpus_per_instance",
             "cloud_on_demand", "cloud_gpus_on_demand", "cloud_1yr", "cloud_gpus_1yr",
             "cloud_3yr", "cloud_gpus_3yr", "cloud_gpu_cloud", "cloud_gpus_gpu_cloud",
             # whether each tier's offer is sold in its listed sizes only (1 = yes)
             "cloud_fixed_sizes", "cloud_fixed_on_demand", "cloud_fixed_1yr", "cloud_fixed_3yr",
             "cloud_fixed_gpu_cloud",
             # the offers' other instance sizes (catalog MAX_OTHER_SIZES), account tier first
             *(f"cloud_size{k}_{c}" for k in (1, 2)
               for c in ("gpus", "gpu_hour", "gpus_on_demand", "on_demand", "gpus_1yr", "1yr",
                         "gpus_3yr", "3yr", "gpus_gpu_cloud", "gpu_cloud"))),
    "platforms": ("gpus_per_node", "sold_full", "node_power_kw", "base_price", "scaleout_gb_s",
                  "gpu_fabric", "fabric_ports", "frontend_ports", "frontend_gbps"),
    "precisions": ("bytes_per_param", "scale_overhead", "compute_code"),
}
# The precisions table's compute_code: the tensor path peak_tflops reads (FP8, INT8, FP4 or
# else BF16).
COMPUTE_CODES = {"bf16": 1, "fp8": 2, "int8": 3, "fp4": 4}
