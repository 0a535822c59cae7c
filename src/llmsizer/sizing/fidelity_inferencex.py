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
  the GPU memory the driver reports, so the product's ``gpu_memory_utilization`` is it x
  ``driver_memory_ratio``, in ``fidelity._profile``) on NVIDIA GPUs: 0.82, except
  DeepSeek-R1 FP4 on B200 without MTP 0.85 and FP8 on four B200 (TP4) 0.95. AMD scripts are
  not read here (their rows keep the product default). A row whose notes cite the launch
  script's ``--mem-fraction-static`` (disaggregated Dynamo-SGLang runs) takes that.
- **SGLang's prefill chunk** (``--chunked-prefill-size``): 8,192 to 196,608 tokens in every
  DeepSeek-R1 script, never below the longest prompt (8,192), and SGLang runs a prefill batch
  on its own, decode paused, unless ``--enable-mixed-chunk`` (off by default; no script sets
  it): a prompt is prefilled in one forward, not spread over decode steps as the product's
  default engine's chunks are.
- **MTP acceptance on InferenceX's prompts**: every single-node MTP script sends random token
  ids through the chat template (``--use-chat-template``), content on which DeepSeek's MTP
  module, trained in pre-training and not updated in post-training, accepts less than on the
  published reasoning text. No acceptance length is published for those prompts, so the rows
  take the model's published extra tokens per step scaled by
  ``mtp_random_prompt_acceptance_share``, chosen leaving one source out at a time
  (``benchmarks/mtp_cv.py``). The disaggregated SGLang runs send the same prompts to the same
  drafting and take it too.
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


def disagg_sglang_on_random_chat_prompts(point: BenchPoint, text: str) -> bool:
    """A disaggregated InferenceX SGLang MTP run (Dynamo-SGLang, MoRI-SGLang) sends the
    single-node runs' prompts to the same drafting: random token ids through the chat template
    (srt-slurm's sa-bench ``--use-chat-template`` from csahithi/srt-slurm@5569876, 2026-01-21;
    InferenceX ``benchmarks/multi_node/amd_utils/bench.sh`` with MTP), EAGLE / NEXTN with
    top-k 1 (the recipes, ``amd_utils/models.yaml``). Every such row is dated 2026-02 or
    later. Dynamo-TensorRT-LLM rows keep the published figure (docs/calibration-history.md, "Fourth
    pass")."""
    return bool(point.disaggregated) and "sglang" in (framework(text) or "")


def mtp_acceptance(point: BenchPoint, published: float, text: str, catalog: Catalog
                   ) -> float | None:
    """Mean acceptance length an InferenceX MTP run reaches on its random chat prompts, from
    the model's published figure; None elsewhere (the published one): single-node runs, and
    the disaggregated SGLang runs whose client and drafting are the same."""
    if framework(text) is None or (point.disaggregated
                                   and not disagg_sglang_on_random_chat_prompts(point, text)):
        return None
    return 1 + catalog.constant("mtp_random_prompt_acceptance_share") * (published - 1)


def sglang_chunked_prefill_tokens(point: BenchPoint, text: str) -> float | None:
    """``--chunked-prefill-size`` of a single-node InferenceX SGLang DeepSeek-R1 run, as its
    launch script (``benchmarks/single_node/fixed_seq_len/dsr1_*.sh``, read at every commit
    that changed it between the rows' dates, 2025-10 to 2026-06) sets it; None elsewhere (the
    engine profile's own chunk)."""
    if framework(text) != "sglang" or point.disaggregated:
        return None
    fp4 = point.weight_precision == "fp4"
    if point.gpu == "mi355x":  # dsr1_fp{4,8}_mi355x{,_mtp}.sh: FP4 8k/1k above CONC 32 32,768
        long_busy = fp4 and point.isl > 4096 and (point.concurrency or 0) > 32
        return 32768.0 if long_busy else 196608.0
    if point.gpu in ("mi300x", "mi325x"):
        return 131072.0  # dsr1_fp8_mi3{0,2}5x{,_mtp}.sh (196,608 before 2026-01-22)
    if point.gpu == "h200-sxm":
        return 32768.0  # dsr1_fp8_h200{,_mtp}.sh
    if point.gpu == "b200":
        if fp4 or point.speculative:
            return 16384.0  # dsr1_fp4_b200{,_mtp}.sh, dsr1_fp8_b200_mtp.sh
        return 8192.0 if point.tp == 4 else 32768.0  # dsr1_fp8_b200.sh, TP4 / TP8 branch
    return None


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


def sglang_memory_utilization(point: BenchPoint, text: str, catalog: Catalog) -> float | None:
    """The stated ``--mem-fraction-static`` as the product's ``gpu_memory_utilization``, a
    share of the marketed GB: SGLang's pool (``profile_max_num_token``) is the memory free
    after the weights less (1 - fraction) x the memory free before them, in the bytes the
    driver reports (a B200 "180 GB" shows 183,359 MiB), so the fraction x
    ``driver_memory_ratio``; None where no fraction is read."""
    stated = sglang_memory_fraction(point, text, catalog)
    return None if stated is None else stated * catalog.constant("driver_memory_ratio")


# the non-MTP scripts' floor of 8,192 tokens came with commit b0c4ed21b (2026-01-22)
_TOKEN_FLOOR_FROM = "2026-01-22"


def _date(text: str) -> str:
    found = re.search(r"date=(\d{4}-\d{2}-\d{2})", text)
    return found.group(1) if found else ""


def trtllm_max_num_tokens(point: BenchPoint, text: str, catalog: Catalog) -> float | None:
    """``--max_num_tokens`` of an InferenceX TensorRT-LLM run (its token budget per
    iteration), as the launch script computes it; None elsewhere. The scripts leave
    ``enable_chunked_prefill`` off and size the budget to hold the whole nominal prompt ``L``
    beside the running batch's decode tokens, so a prompt rides one iteration, mixed with the
    decodes (TensorRT-LLM's in-flight batching): without MTP
    ``round_up_64(C + L + 127)``, at least 8,192 from 2026-01-22 (commit b0c4ed21b); with MTP
    ``round_up_64((drafts + 1) x max batch + L + 127)``, max batch C (C / 8 with attention
    DP). ``L`` is the row's mean length read back (lengths U[f L, L])."""
    if framework(text) != "trt" or point.isl is None:
        return None
    k = catalog.constant
    spread = point.random_lengths if point.random_lengths is not None else 1.0
    nominal = round(point.isl / ((1 + spread) / 2))
    users = point.concurrency or 1
    if point.speculative:
        drafts = mtp_drafts(point, text) or 3
        batch = users if point.adp <= 1 or users < 8 else users // 8
        return float(-(-((drafts + 1) * batch + nominal + 127) // 64) * 64)
    budget = float(-(-(users + nominal + 127) // 64) * 64)
    if _date(text) >= _TOKEN_FLOOR_FROM:  # ISO dates compare as text
        budget = max(budget, k("trtllm_inferencex_min_num_tokens"))
    return budget
