"""What InferenceX's launch scripts set and its rows do not state.

InferenceX publishes a run's results with its framework, image and date, not the server
flags. The flags are in the launch scripts of SemiAnalysisAI/InferenceX
(``benchmarks/dsr1_*.sh``, later ``benchmarks/single_node/dsr1_*.sh``), unchanged over the
runs' dates in the calibration file (2025-11 to 2026-06; every version read at the commits
that touched them):

- **MTP drafts per step**: TensorRT-LLM ``num_nextn_predict_layers`` 1 with attention
  data-parallel, else 3 (the documented default). SGLang on NVIDIA GPUs sets
  ``--speculative-num-steps 2``; read so, its MTP rows came out further from the measured (the
  published acceptance at 2 drafts is above what InferenceX's prompts reach) and the MoE
  throughput p90 rose (docs/calibration.md), so they keep the default until an acceptance
  for those prompts is published. SGLang on AMD and ATOM set 3.
- **SGLang's memory fraction** (``--mem-fraction-static``: weights + KV pool as a share of
  GPU memory, as the product's ``gpu_memory_utilization``) on NVIDIA GPUs: 0.82, except
  DeepSeek-R1 FP4 on B200 without MTP 0.85 and FP8 on four B200 (TP4) 0.95. AMD scripts are
  not read here (their rows keep the product default). A row whose notes cite the launch
  script's ``--mem-fraction-static`` (disaggregated Dynamo-SGLang runs) takes that.
- **MTP acceptance on InferenceX's prompts**: every single-node MTP script sends random token
  ids through the chat template (``--use-chat-template``), content on which DeepSeek's MTP
  module, trained in pre-training and not updated in post-training, accepts less than on the
  published reasoning text. No acceptance length is published for those prompts, so the rows
  take the model's published extra tokens per step scaled by
  ``mtp_random_prompt_acceptance_share``, chosen leaving one source out at a time
  (``benchmarks/mtp_cv.py``).
"""

from __future__ import annotations

import re

from ..inputs.benchdata import BenchPoint
from ..model.catalog import Catalog

_FRAMEWORK = re.compile(r"framework=([\w-]+)")
_MEMORY_FLAG = re.compile(r"--mem-fraction-static\s+(\d*\.\d+)")


def framework(text: str) -> str | None:
    """The InferenceX framework of a row's lower-cased text (``sglang``, ``trt``, ``atom``,
    ...), None for a row of another source."""
    if "inferencex" not in text:
        return None
    found = _FRAMEWORK.search(text)
    return found.group(1) if found else ""


def _nvidia(point: BenchPoint, catalog: Catalog) -> bool:
    return point.gpu is not None and catalog.gpus[point.gpu].vendor.strip().upper() == "NVIDIA"


def mtp_drafts(point: BenchPoint, text: str) -> int | None:
    """Drafted tokens per step the launch script sets; None: not stated there."""
    if framework(text) == "trt":
        return 1 if point.adp > 1 else 3
    return None


def mtp_acceptance(point: BenchPoint, published: float, text: str, catalog: Catalog
                   ) -> float | None:
    """Mean acceptance length a single-node InferenceX MTP run reaches on its random chat
    prompts, from the model's published figure; None elsewhere (the published one). The
    disaggregated runs are driven by another client (srt-slurm recipes), not read here."""
    if framework(text) is None or point.disaggregated:
        return None
    return 1 + catalog.constant("mtp_random_prompt_acceptance_share") * (published - 1)


def sglang_memory_fraction(point: BenchPoint, text: str, catalog: Catalog) -> float | None:
    """``--mem-fraction-static`` of an InferenceX SGLang run on NVIDIA GPUs, or as the row's
    notes cite it from the run's launch script; None elsewhere."""
    stated = _MEMORY_FLAG.search(text)
    if stated and "sglang" in (framework(text) or ""):
        return float(stated.group(1))
    if framework(text) != "sglang" or not _nvidia(point, catalog):
        return None
    if point.gpu == "b200" and point.weight_precision == "fp8" and point.tp == 4:
        return 0.95  # dsr1_fp8_b200.sh, TP4 branch (8k/1k only)
    if point.gpu == "b200" and point.weight_precision == "fp4" and not point.speculative:
        return 0.85  # dsr1_fp4_b200.sh
    return 0.82
