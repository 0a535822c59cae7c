"""Speculative decoding and multi-token prediction (MTP): what a decode step costs and yields
when a draft proposes k tokens per sequence and the target model verifies them in one step.

A step then (1) runs the target on 1 + k tokens of every sequence: the per-token terms of
t(B) (compute, attention, all-reduce and all-to-all transfer) and the experts a batch touches
scale with 1 + k, the weight and KV reads do not; (2) adds k draft forwards, each a stated
share of a target step (an MTP module or EAGLE head is one layer: 1 / layers) plus, for such a
one-layer draft, the fixed work of its own forward (the shared head over the vocabulary,
sampling, launches: ``draft_forward_ms``); and (3) yields the mean acceptance length tau
(accepted drafts + the target's own token, 1 <= tau <= 1 + k).
Time per output token = (step x (1 + k x draft share) + k x draft forward) / tau. tau depends
on the content (code and reasoning accept more than free chat): it is the user's figure, or the
model catalog's published one. Off (k = 0, tau = 1) every factor is 1.
"""

from __future__ import annotations

from ..expr import IF, gt
from .core import Calculation, _c, r

CALCULATIONS: tuple[Calculation, ...] = (
    _c("spec_tokens_per_step", "Tokens verified per sequence per step", "tokens", "Throughput",
       1 + r("spec_draft_tokens"),
       "The target's own token + the k drafted ones, verified in one forward (1 = no "
       "speculation): the per-token work of a step scales with it."),
    _c("spec_draft_share", "Draft forward per drafted token", "x step", "Throughput",
       r("spec_draft_layers") / r("layers") + r("spec_draft_cost"),
       "An MTP module or EAGLE head is one layer of the model's: 1 / layers of a step; or the "
       "stated share (a draft model)."),
    # the draft's fixed work rides in the step's a (decode.py), scaled so that the factor
    # below multiplies it back to k x draft_forward_ms: one home for the formula above
    _c("spec_draft_fixed_ms", "Draft forwards' fixed work per step", "ms", "Throughput",
       r("spec_draft_tokens") * IF(gt(r("spec_draft_layers"), 0), r("draft_forward_ms"), 0)
       / (1 + r("spec_draft_tokens") * r("spec_draft_share")),
       "k one-layer draft forwards each add a fixed cost beyond their layer: the shared head "
       "over the vocabulary, sampling and launches (TensorRT-LLM's DeepSeek-R1 latency blog, "
       "8 x B200 at batch 1: each MTP draft adds about 0.75 ms to the step, its layer about "
       "0.15); / (1 + k x draft share), as the TPOT factor multiplies the step by it."),
    _c("spec_tpot_factor", "Time per output token / step time", "x", "Throughput",
       (1 + r("spec_draft_tokens") * r("spec_draft_share")) / r("spec_acceptance_length"),
       "(1 + k x draft cost per drafted token) / mean acceptance length: the draft forwards "
       "lengthen the step, the accepted tokens shorten the time per token (1 = no "
       "speculation; TensorRT-LLM's DeepSeek-R1 latency blog: 3 MTP drafts accept 2.82 "
       "tokens a step)."),
)
