"""The MoE backend each TensorRT-LLM disaggregated recipe's decode worker runs, for
``llmsizer fidelity`` (docs/calibration-history.md, "Ninth pass: TensorRT-LLM's MoE exchange by
fabric").

Read from the recipes the rows' notes name (``recipes/trtllm/...yaml``, srt-slurm;
csahithi/srt-slurm@7df077b, each file's ``backend.trtllm_config.decode.moe_config.backend``;
the Blackwell ones unchanged since 75f6e32, 2026-01-27, before every run). TensorRT-LLM picks
the expert exchange by this backend, not by the fabric: CUTLASS and TRTLLM-gen (and WIDEEP)
run an all-to-all under attention data-parallel, CUTEDSL and DEEPGEMM all-gather the tokens
and reduce-scatter the outputs (``select_alltoall_method_type`` in
tensorrt_llm/_torch/modules/fused_moe/, 1.2.0rc6 as the rows' Dynamo 0.8.1 images ship).
"""

from __future__ import annotations

import re

# recipe (under recipes/trtllm/, without .yaml) -> its decode worker's MoE backend
DECODE_MOE_BACKEND: dict[str, str] = {
    "b200-fp4/1k1k/mtp/ctx1_gen2_dep8_batch64_eplb0_mtp2": "cutlass",
    "b200-fp4/1k1k/mtp/ctx1_gen5_tep8_batch1_eplb0_mtp3": "trtllm",
    "b200-fp4/1k1k/mtp/ctx3_gen5_dep4_batch512_eplb0_mtp1": "cutlass",
    "b200-fp4/1k1k/stp/ctx1_gen5_tep8_batch32_eplb0_mtp0": "trtllm",
    "b200-fp4/8k1k/mtp/ctx1_gen3_tep8_batch16_eplb0_mtp3": "trtllm",
    "b200-fp4/8k1k/mtp/ctx1_gen5_tep8_batch1_eplb0_mtp3": "trtllm",
    "b200-fp4/8k1k/mtp/ctx5_gen2_dep8_batch32_eplb0_mtp3": "cutlass",
    "b200-fp4/8k1k/stp/ctx1_gen5_tep8_batch8_eplb0_mtp0": "trtllm",
    "b200-fp4/8k1k/stp/ctx7_gen2_dep8_batch128_eplb0_mtp0": "cutlass",
    "b200-fp8/1k1k/mtp/ctx1_gen2_dep8_batch768_eplb0_mtp2_1600": "deepgemm",
    "b200-fp8/1k1k/mtp/ctx1_gen7_dep8_batch128_eplb0_mtp3_896": "deepgemm",
    "b200-fp8/1k1k/stp/ctx1_gen3_tp8_batch1024_eplb0_mtp0_32": "trtllm",
    "b200-fp8/1k1k/stp/ctx1_gen3_tp8_batch1024_eplb0_mtp0_4": "trtllm",
    "b200-fp8/1k1k/stp/ctx2_gen5_dep8_batch128_eplb0_mtp0_5152": "deepgemm",
    "b200-fp8/8k1k/mtp/ctx4_gen1_dep8_batch128_eplb0_mtp2_1088": "deepgemm",
    "b200-fp8/8k1k/stp/ctx1_gen1_dep8_batch256_eplb0_mtp0_256": "trtllm",
    "b200-fp8/8k1k/stp/ctx1_gen1_tp8_batch1_eplb0_mtp0_1": "trtllm",
    "b200-fp8/8k1k/stp/ctx1_gen4_tp8_batch32_eplb0_mtp0_128": "trtllm",
    "b200-fp8/8k1k/stp/ctx1_gen4_tp8_batch32_eplb0_mtp0_32": "trtllm",
    "gb200-fp4/1k1k/mtp/ctx3_gen5_dep4_batch768_eplb0_mtp1": "cutlass",
    "gb200-fp4/1k1k/stp/ctx1_gen4_tep8_batch32_eplb0_mtp0": "trtllm",
    "gb200-fp4/1k8k/mtp/ctx1_gen7_tep8_batch1_eplb0_mtp3": "trtllm",
    "gb200-fp4/1k8k/stp/ctx1_gen15_tep4_batch4_eplb0_mtp0": "trtllm",
    "gb200-fp4/1k8k/stp/ctx1_gen1_dep32_batch128_eplb288_mtp0": "cutedsl",
    "gb200-fp4/1k8k/stp/ctx1_gen1_dep32_batch16_eplb0_mtp0": "cutedsl",
    "gb200-fp4/1k8k/stp/ctx1_gen1_dep32_batch256_eplb288_mtp0": "cutedsl",
    "gb200-fp4/8k1k/mtp/ctx11_gen1_dep16_batch256_eplb256_mtp1": "cutedsl",
    "gb200-fp4/8k1k/stp/ctx1_gen4_tep8_batch16_eplb0_mtp0": "trtllm",
    "gb200-fp8/1k1k/stp/ctx1_gen1_dep16_batch128_eplb0_mtp0_2151": "deepgemm",
    "gb200-fp8/1k1k/stp/ctx1_gen1_dep32_batch32_eplb0_mtp0_1127": "deepgemm",
    "gb200-fp8/1k1k/stp/ctx1_gen1_dep8_batch768_eplb0_mtp0_6144": "deepgemm",
    "gb200-fp8/1k1k/stp/ctx1_gen3_tep8_batch1_eplb0_mtp0_3": "trtllm",
    "gb200-fp8/1k1k/stp/ctx1_gen3_tep8_batch8_eplb0_mtp0_27": "trtllm",
    "gb200-fp8/1k8k/mtp/ctx1_gen2_dep16_batch64_eplb0_mtp1_2152": "deepgemm",
    "gb200-fp8/1k8k/mtp/ctx1_gen4_tep8_batch2_eplb0_mtp3_8": "trtllm",
    "gb200-fp8/1k8k/stp/ctx1_gen1_dep32_batch16_eplb0_mtp0_564": "deepgemm",
    "gb200-fp8/1k8k/stp/ctx1_gen2_dep16_batch256_eplb0_mtp0_8192": "deepgemm",
    "gb200-fp8/1k8k/stp/ctx1_gen4_tep8_batch8_eplb0_mtp0_36": "trtllm",
    "gb200-fp8/8k1k/mtp/ctx5_gen1_dep16_batch32_eplb0_mtp3_666": "deepgemm",
    "gb200-fp8/8k1k/stp/ctx1_gen3_tep8_batch1_eplb0_mtp0_6": "trtllm",
    "gb200-fp8/8k1k/stp/ctx1_gen3_tep8_batch4_eplb0_mtp0_18": "trtllm",
    "gb200-fp8/8k1k/stp/ctx2_gen1_dep32_batch8_eplb0_mtp0_333": "deepgemm",
    "gb200-fp8/8k1k/stp/ctx5_gen1_dep16_batch64_eplb0_mtp0_1229": "deepgemm",
    "h100-fp8/1k1k/mtp/ctx1_gen1_dep16_batch32_eplb0_mtp2": "wideep",
    "h100-fp8/1k1k/mtp/ctx1_gen3_dep16_batch4_eplb0_mtp3": "wideep",
    "h100-fp8/1k1k/stp/ctx1_gen3_tep16_batch1_eplb0_mtp0": "cutlass",
    "h100-fp8/1k1k/stp/ctx1_gen3_tep16_batch8_eplb0_mtp0": "cutlass",
    "h100-fp8/1k1k/stp/ctx2_gen1_dep16_batch256_eplb0_mtp0": "wideep",
    "h100-fp8/8k1k/mtp/ctx1_gen3_tep16_batch8_eplb0_mtp3": "cutlass",
    "h100-fp8/8k1k/stp/ctx1_gen2_tep16_batch64_eplb0_mtp0": "cutlass",
    "h100-fp8/8k1k/stp/ctx1_gen3_tep16_batch1_eplb0_mtp0": "cutlass",
    "h100-fp8/8k1k/stp/ctx1_gen3_tep16_batch2_eplb0_mtp0": "cutlass",
    "h100-fp8/8k1k/stp/ctx2_gen1_dep16_batch16_eplb0_mtp0": "wideep",
    "h200/8k1k/mtp/c128_ctx2_gen1_dep8_batch32_eplb0_mtp2": "cutlass",
    "h200/8k1k/mtp/c256_ctx3_gen1_dep8_batch32_eplb0_mtp2": "cutlass",
}
# backends whose exchange under attention DP is an all-to-all that sends an NVFP4
# checkpoint's tokens quantised: CutlassFusedMoE's forward quantises with post_quant_comm
# = run_post_quant_allgather or enable_alltoall (fp4_quantize, one FP8 scale per 16 values)
# before the dispatch; the combine returns BF16 (FP8 combine in the one-sided all-to-all came
# with NVIDIA/TensorRT-LLM PR 11844, March 2026, after 1.2.0rc6)
QUANTISED_DISPATCH = frozenset({"cutlass", "trtllm", "wideep"})
_RECIPE = re.compile(r"recipes/trtllm/([^\s;,)]+)\.yaml")


def decode_moe_backend(notes: str) -> str | None:
    """The MoE backend of the decode worker of the recipe a row's notes name, else None."""
    found = _RECIPE.search(notes)
    return DECODE_MOE_BACKEND.get(found.group(1)) if found else None
