"""Every value the formulas read (``INPUTS``), in the order the workbook's Inputs sheet and
docs/calculations.md list them: account-wide policy and costs, then each workload, then each
option (the engine's search choices and the calibrated efficiencies). ``low``/``high`` are
the workbook's validation bounds. ``LATENCY_DEFINITIONS`` says what each latency a target
may name means (docs and the Assumptions sheet print it).
"""

from __future__ import annotations

from .core import Input, Scope

# The latency percentiles a workload may target (issue #21; docs/queueing.md).
PERCENTILES = (50, 90, 95, 99)
# Their names under ``targets`` in the requirements file (the input is ``target_<name>``).
PERCENTILE_TARGETS = (*(f"ttft_p{q}_s" for q in PERCENTILES),
                      *(f"itl_p{q}_ms" for q in PERCENTILES), "e2e_p95_s")

# Each latency a target may name, defined once: docs (docgen) and the Assumptions sheet print
# this table.
LATENCY_DEFINITIONS: tuple[tuple[str, str, str], ...] = (
    ("ttft_s", "Time to first token (mean)",
     "Mean over requests of the time from a request's arrival to its first output token, "
     "waiting for the prompts ahead included."),
    ("ttft_p50_s ... ttft_p99_s", "Time to first token (p50, p90, p95, p99)",
     "The time 50 / 90 / 95 / 99 % of requests get their first token within (a percentile "
     "over requests, waiting included)."),
    ("tokens_per_s_per_user", "Tokens/s per user (mean)",
     "1 / TPOT, where TPOT is the mean time per output token after the first one (the first "
     "token is not counted)."),
    ("itl_p50_ms ... itl_p99_ms", "Inter-token latency (p50, p90, p95, p99)",
     "The time 50 / 90 / 95 / 99 % of output tokens after the first come within of the "
     "previous token (a percentile over tokens; steps that also prefill a new prompt's chunk "
     "included)."),
    ("response_time_s", "Response time (mean)",
     "Output tokens / this time is the mean speed each user needs after the first token; "
     "without ttft_s the mean first token must also come within it. The first token's time "
     "is not taken off (the LLM sizing series' rule: 300 tokens in 10 s = 30 tokens/s), so the whole answer "
     "may end one first token later: e2e_p95_s bounds the whole answer."),
    ("e2e_p95_s", "Whole answer (p95)",
     "The time 95 % of requests get their whole answer within, from arrival to the last "
     "token, waiting included."),
)


def _i(name: str, label: str, unit: str, scope: Scope, note: str, **kw: object) -> Input:
    return Input(name, label, unit, scope, note, **kw)  # type: ignore[arg-type]


INPUTS: tuple[Input, ...] = (
    # account-wide policy and costs
    _i("headroom", "Headroom policy", "fraction", "account",
       "Extra capacity above peak demand for bursts and growth (“From Users to GPUs”: "
       "20-30 %).", low=0, high=3),
    _i("survive_node_loss", "Survive node loss (N+1)", "flag", "account",
       "1 = add one node's worth of spare replicas (“How fast does it serve?”, check 5).", kind="flag", low=0,
       high=1, integer=True),
    _i("gpu_memory_utilization", "GPU memory utilisation", "fraction", "account",
       "Share of GPU memory the engine may use (vLLM default 0.90; “The KV cache is your real "
       "budget”).", low=0.1, high=1),
    _i("runtime_reserve_gb", "Runtime reserve per GPU", "GB", "account",
       "Memory held back per GPU for activations, CUDA graphs and fragmentation.", low=0,
       high=100),
    _i("storage_read_gb_per_s", "Weight storage read bandwidth", "GB/s", "account",
       "How fast a node reads the model weights when a replica restarts (local NVMe 5-7 "
       "GB/s; network storage less).", low=0.01, high=1000),
    _i("electricity_per_kwh", "Electricity price", "currency/kWh", "account",
       "Tariff for the data centre power.", low=0),  # no top: 31 JPY is usual
    _i("pue", "PUE", "ratio", "account", "Facility power / IT power.", low=1, high=3),
    _i("amortization_years", "Amortisation period", "years", "account",
       "Years over which hardware capex is written off.", low=1, high=10),
    _i("support_rate", "Support and maintenance", "fraction of capex / year", "account",
       "Annual support contract as a share of capex.", low=0, high=1),
    _i("average_load", "Average load", "fraction", "account",
       "Mean demand as a share of peak: scales power and tokens served per year.", low=0.01,
       high=1),
    _i("network_per_node", "Network per node, the account's figure", "currency", "account",
       "The account's own network cost per node (switch ports, optics and cables; NICs are "
       "in the node price), on every node; read only where stated (below).", low=0),
    _i("network_per_node_stated", "Network per node stated", "1 = yes", "account",
       "1 = the account states its network per node (above); 0 = each server's network from "
       "its ports and the prices per port below.", low=0, high=1, integer=True),
    _i("network_per_fabric_port", "GPU-fabric network per port", "currency/port", "account",
       "Leaf and spine switches and optics of the east-west GPU fabric per fabric port (one "
       "per GPU); charged only on platforms built for a GPU fabric.", low=0),
    _i("network_per_frontend_gbps", "Front-end network per Gb/s", "currency/Gb/s",
       "account",
       "Leaf and spine switches and optics of the front-end (north-south) network per Gb/s of "
       "a server's front-end port; every server.", low=0),
    _i("storage_tb_per_node", "Storage per node", "TB", "account",
       "Shared storage for model versions, logs and caches, per node.", low=0),
    _i("storage_per_tb_month", "Storage price", "currency/TB-month", "account",
       "Shared storage per TB and month.", low=0),
    _i("software_per_gpu_year", "Software licence per GPU", "currency/GPU-year", "account",
       "Serving software licence per GPU and year (0 = open-source serving).", low=0),
    _i("colocation_per_kw_month", "Colocation per kW", "currency/kW-month", "account",
       "Rack space, cooling and power capacity per kW of node power and month (0 = own data "
       "centre).", low=0),
    _i("gpu_price_factor", "GPU price multiplier", "x", "account",
       "1 = the GPU prices above. Every capital cost uses it; the Scenarios sheet varies it "
       "(what-if on a negotiated price).",
       low=0.01, high=10),
    # not only a what-if: every cloud cost reads it (finance editing it moves the TCO too)
    _i("cloud_tier_what_if", "Cloud price tier override", "code", "account",
       "0 = the cloud price above; 1 hyperscaler on-demand, 2 committed 1 year, 3 committed "
       "3 years, 4 GPU cloud (catalog prices). Every cloud cost uses it; the Scenarios sheet "
       "varies it.", low=0, high=4,
       integer=True),
    _i("hours_per_year", "Hours per year", "h", "account", "8,760 h: always-on service.",
       low=1, high=8784),
    # the way the plan is run: the engine sets it (renting recommended: 1), not the file
    _i("plan_rented", "Plan rented in the cloud", "flag", "account",
       "1 = the plan is rented as cloud instances (a node down is a rented instance down); "
       "0 = bought. Set by the recommended way of running it.", kind="flag", low=0, high=1,
       integer=True),
    # per workload
    _i("users", "Concurrent users at peak (stated)", "users", "workload",
       "Users generating at the same time (“From Users to GPUs”, step 1); 0 when the load is "
       "a request rate or a user population.", low=0, integer=True),
    _i("requests_per_s", "Peak arrival rate (stated)", "requests/s", "workload",
       "Requests arriving per second at peak; 0 = the load is stated another way.", low=0),
    _i("burstiness", "Burstiness of arrivals", "CV", "workload",
       "Coefficient of variation of the times between arrivals: 1 = random (Poisson) "
       "arrivals, above 1 = bursts.", low=0, high=10),
    _i("fixed_users_per_replica", "Users per replica, replicas fixed", "users", "workload",
       "Users each replica holds when the replica count is given (llmsizer estimate, a "
       "benchmark at a stated concurrency); those beyond the batch wait for a slot. 0 = "
       "sized: the replicas hold every user.", low=0, integer=True),
    _i("named_users", "Users in the population", "users", "workload",
       "People who may use the service; 0 = the load is stated another way.", low=0,
       integer=True),
    _i("requests_per_user_per_hour", "Requests per user per hour", "requests/h", "workload",
       "Average requests one user sends in an hour (population form).", low=0),
    _i("peak_to_average", "Peak-to-average ratio", "x", "workload",
       "Busiest hour's rate / the average hour's (population form).", low=1, high=100),
    _i("prompt_tokens", "Prompt tokens", "tokens", "workload", "Average input per request.",
       low=1, integer=True),
    _i("output_tokens", "Output tokens", "tokens", "workload", "Average output per request.",
       low=1, integer=True),
    _i("max_context_tokens", "KV reserved per request (stated)", "tokens", "workload",
       "Context each request may hold in KV cache; 0 = prompt + output.", low=0,
       integer=True),
    _i("prefix_cache_hit", "Prefix-cache hit rate", "fraction", "workload",
       "Share of prompt tokens served from the prefix cache (no prefill).", low=0, high=0.99),
    _i("target_tokens_per_s_per_user", "Target tokens/s per user", "tok/s", "workload",
       "Streaming speed each user must see; 0 = none.", low=0),
    _i("target_response_time_s", "Target response time", "s", "workload",
       "Output / time = tok/s per user (“From Users to GPUs”); without a TTFT target it "
       "also bounds the mean first token; 0 = none.",
       low=0),
    _i("target_ttft_s", "Target time to first token", "s", "workload", "0 = none.", low=0),
    *(_i(f"target_ttft_p{q}_s", f"Target p{q} time to first token", "s", "workload",
         f"{q} % of requests get their first token within this time; 0 = none.", low=0)
      for q in PERCENTILES),
    *(_i(f"target_itl_p{q}_ms", f"Target p{q} inter-token latency", "ms", "workload",
         f"{q} % of output tokens after the first come within this time of the previous "
         "one; 0 = none.", low=0) for q in PERCENTILES),
    _i("target_e2e_p95_s", "Target p95 whole-answer time", "s", "workload",
       "95 % of requests get their whole answer within this time; 0 = none.", low=0),
    _i("target_system_tokens_per_s", "Target system throughput", "tok/s", "workload",
       "Total output tokens/s for offline jobs; 0 = none.", low=0),
    _i("measured_tokens_per_s_per_replica", "Measured tokens/s per replica", "tok/s",
       "workload", "Customer benchmark; > 0 replaces the modelled throughput (“From Users to GPUs”).",
       low=0),
    _i("params_total", "Parameters (total)", "params", "workload",
       "All weights held in memory (MoE: every expert).", low=1),
    _i("params_active", "Parameters (active per token)", "params", "workload",
       "Weights used per token (MoE: shared + routed experts).", low=1),
    _i("fp4_16bit_params", "Parameters an FP4 checkpoint keeps at 16 bits", "params",
       "workload", "Attention, router, embeddings and lm_head that the published FP4 "
       "checkpoint leaves in BF16 (its quantisation exclude list); 0 = none known.", low=0),
    _i("quantised_16bit_params", "Parameters an FP8, INT8 or INT4 checkpoint keeps at 16 bits",
       "params", "workload", "Embeddings, lm_head, norms and routers that 8- and 4-bit "
       "checkpoints leave in BF16 (DeepSeek's FP8 release; ModelOpt, AWQ and GPTQ exports).",
       low=0),
    _i("layers", "Layers", "layers", "workload", "num_hidden_layers.", low=1, integer=True),
    _i("hidden_size", "Hidden size", "elements", "workload", "Model width.", low=1, integer=True),
    _i("attention_heads", "Attention heads", "heads", "workload", "Query heads.", low=1,
       integer=True),
    _i("kv_heads", "KV heads", "heads", "workload",
       "GQA/MQA key-value heads (“The KV cache is your real budget”).", low=1, integer=True),
    _i("head_dim", "Head dimension", "elements", "workload", "Per-head width.", low=1,
       integer=True),
    _i("experts", "Routed experts", "experts", "workload", "MoE experts per layer; 0 = dense.",
       low=0, integer=True),
    _i("experts_per_token", "Experts per token", "experts", "workload", "MoE top-k; 0 = dense.",
       low=0, integer=True),
    _i("moe_layers", "Mixture-of-experts layers", "layers", "workload",
       "Layers whose MLP is routed experts (config.json: all but first_k_dense_replace, or "
       "every interleave_moe_layer_step-th); the rest are dense. 0 = dense model.", low=0,
       integer=True),
    _i("kv_lora_rank", "MLA latent rank", "elements", "workload",
       "Compressed KV width of MLA models (DeepSeek); 0 = standard attention.", low=0,
       integer=True),
    _i("qk_rope_head_dim", "MLA RoPE key width", "elements", "workload",
       "Decoupled RoPE key stored beside the MLA latent; 0 = standard attention.", low=0,
       integer=True),
    _i("sliding_window", "Sliding window", "tokens", "workload",
       "Tokens a sliding-window layer attends to and keeps in KV (config.json sliding_window); "
       "0 = none.", low=0, integer=True),
    _i("window_layers", "Sliding-window layers", "layers", "workload",
       "Layers that attend only the window (config.json layer_types or "
       "sliding_window_pattern); the rest keep every token.", low=0, integer=True),
    _i("linear_attention_layers", "Linear-attention layers", "layers", "workload",
       "Layers with a fixed recurrent state instead of a KV cache (hybrid models such as "
       "Qwen3-Next); 0 = none.", low=0, integer=True),
    _i("linear_state_elements", "Linear-attention state", "elements", "workload",
       "Recurrent state values per linear-attention layer per request (heads x key dim x "
       "value dim, plus the convolution window).", low=0, integer=True),
    _i("indexer_heads", "Sparse-attention indexer heads", "heads", "workload",
       "Heads of the lightning indexer that picks the tokens each query attends to "
       "(DeepSeek-V3.2 config.json index_n_heads); 0 = dense attention.", low=0, integer=True),
    _i("indexer_head_dim", "Sparse-attention indexer key width", "elements", "workload",
       "Values of the indexer key cached per token per layer, in FP8 (config.json "
       "index_head_dim); 0 = dense attention.", low=0, integer=True),
    _i("indexer_topk", "Tokens each query attends to", "tokens", "workload",
       "Sparse attention: cached tokens the indexer selects for each query (config.json "
       "index_topk); 0 = every cached token.", low=0, integer=True),
    _i("spec_draft_tokens", "Drafted tokens per step", "tokens", "workload",
       "Speculative decoding or MTP: tokens the draft proposes per sequence per step "
       "(0 = off).", low=0, high=16, integer=True),
    _i("spec_acceptance_length", "Mean acceptance length", "tokens/step", "workload",
       "Tokens a step yields on average, the target's own included (1 = off; at most drafted "
       "+ 1). It depends on the content: the user's figure or the model's published one.",
       low=1, high=17),
    _i("spec_draft_layers", "Draft forward in model layers", "layers", "workload",
       "Layers one draft forward runs (an MTP module or EAGLE head: 1; otherwise 0).", low=0,
       high=8),
    _i("spec_draft_cost", "Draft cost per drafted token, stated", "x step", "workload",
       "One draft forward as a share of a target step where stated (a draft model: about its "
       "active parameters / the model's; n-gram lookup: 0).", low=0, high=1),
    _i("api_input_per_million", "Hosted API, input tokens", "currency/M tok", "workload",
       "A hosted API's price for this model per million input tokens (0 = none listed).", low=0),
    _i("api_output_per_million", "Hosted API, output tokens", "currency/M tok", "workload",
       "A hosted API's price for this model per million output tokens (0 = none listed).",
       low=0),
    # per option: the engine's search choices, then efficiencies (calibrated constants)
    _i("gpu", "GPU", "id", "option", "Accelerator (catalog id).", kind="text"),
    _i("platform", "Platform", "id", "option", "Server platform (catalog id).", kind="text"),
    _i("weight_precision", "Weight precision", "id", "option", "Storage format of weights.",
       kind="text"),
    _i("kv_precision", "KV-cache precision", "id", "option", "Storage format of the KV cache.",
       kind="text"),
    _i("tp", "Tensor parallel (GPUs per replica)", "GPUs", "option",
       "GPUs that hold one copy of the model.", low=1, high=72, integer=True),
    _i("pp", "Pipeline stages", "stages", "option",
       "Layer groups on successive TP groups (1 = off): each stage re-reads its weights per "
       "micro-batch, so pipelining adds memory, not speed per token.", low=1, high=16,
       integer=True),
    _i("ep", "Expert parallel (MoE)", "GPUs", "option",
       "Ranks the routed experts are spread over (1 = off; at most TP): an all-to-all per MoE "
       "layer replaces the experts' all-reduce.", low=1, high=72, integer=True),
    _i("adp", "Attention data-parallel ranks (MoE)", "ranks", "option",
       "Ranks that each run attention for their own B / ADP sequences with their own KV cache "
       "(1 = off; divides TP): attention weights are held once per rank.", low=1, high=72,
       integer=True),
    _i("stack_efficiency", "Software-stack efficiency", "fraction", "option",
       "Share of the calibrated NVIDIA efficiencies this GPU family's serving stacks reach "
       "(1 = NVIDIA; AMD CDNA fitted on measured results): scales every bandwidth and compute "
       "efficiency below.", low=0.05, high=2),
    _i("calibration_derating", "Derating of an uncalibrated option", "fraction", "option",
       "Share of the modelled speed credited to an option whose GPU, weight precision or model "
       "class has no calibration rows (1 = calibrated; from cross-validation).", low=0.05,
       high=1),
    _i("mbu_weights", "Bandwidth efficiency, weights", "fraction", "option",
       "Achieved / peak HBM bandwidth streaming weights (calibrated).", low=0.05, high=1),
    _i("mbu_kv", "Bandwidth efficiency, KV cache", "fraction", "option",
       "Achieved / peak HBM bandwidth reading KV (calibrated).", low=0.05, high=1),
    _i("mfu_decode", "Compute efficiency, decode", "fraction", "option",
       "Achieved / peak tensor FLOP/s in decode (calibrated).", low=0.05, high=1),
    _i("mfu_prefill", "Compute efficiency, prefill", "fraction", "option",
       "Achieved / peak tensor FLOP/s in prefill (calibrated).", low=0.05, high=1),
    _i("mfu_attention", "Compute efficiency, decode attention", "fraction", "option",
       "Achieved / peak FLOP/s of decode attention over the KV cache, at the KV precision's "
       "rate (FP8 or BF16, never FP4) (calibrated).", low=0.05, high=1),
    _i("step_overhead_ms", "Per-step overhead", "ms", "option",
       "Scheduler, sampling and kernel-launch time per decode step (calibrated).", low=0,
       high=100),
    _i("draft_forward_ms", "Draft forward fixed cost", "ms", "option",
       "Fixed work of one MTP or EAGLE draft forward beyond its layer: the shared head over "
       "the vocabulary, sampling, kernel launches (published step times).", low=0, high=100),
    _i("allreduce_latency_us", "All-reduce latency", "µs", "option",
       "Fixed cost of one TP all-reduce (calibrated).", low=0, high=1000),
    _i("link_efficiency", "All-reduce link efficiency", "fraction", "option",
       "Achieved / peak one-direction link bandwidth in TP all-reduce (calibrated).", low=0.05,
       high=1),
    _i("scaleout_efficiency", "Network link efficiency", "fraction", "option",
       "Achieved / peak one-direction network bandwidth of an all-to-all across nodes "
       "(measured by DeepEP, not fitted).", low=0.05, high=1),
    _i("alltoall_overlap", "All-to-all across nodes overlapped", "yes/no", "option",
       "1 where the engine overlaps the network part of expert parallelism with compute "
       "(two-batch overlap, as the published deployments run it); 0 where it waits for it.",
       low=0, high=1),
    _i("alltoall_dispatch_bytes", "All-to-all dispatch bytes per value", "B", "option",
       "Bytes a token's hidden value takes in the expert dispatch: 2 (BF16) unless the engine "
       "quantises the tokens first (TensorRT-LLM sends an NVFP4 checkpoint's tokens in FP4 "
       "with their scales); the combine returns 2-byte outputs.", low=0.25, high=4),
    _i("alltoall_latency_us", "All-to-all latency", "µs", "option",
       "Fixed cost of one expert-parallel dispatch or combine (calibrated).", low=0, high=1000),
    _i("fp4_layer_saving_us", "FP4 small-batch saving per layer", "µs", "option",
       "Per-layer time an FP4 checkpoint of an MLA model saves on NVIDIA GPUs at 1-16 tokens "
       "per attention rank (its BF16 projections run min-latency kernels); 0 otherwise "
       "(calibrated).",
       low=0, high=1000),
    _i("moe_compute_factor", "MoE compute factor", "x", "option",
       "Extra compute time of routed-expert GEMMs vs dense (calibrated).", low=1, high=5),
    _i("expert_slot_overhead", "Expert overhead width", "columns", "option",
       "Fixed work per token per routed expert per layer, as extra expert-GEMM columns "
       "(calibrated).", low=0, high=100000),
    _i("prefill_chunk_tokens", "Prefill chunk", "tokens", "option",
       "Prompt tokens processed per step when prefill shares steps with decode (calibrated).",
       low=16, integer=False),
    _i("ttft_overhead_ms", "TTFT overhead", "ms", "option",
       "Fixed request overhead before the first token (calibrated).", low=0, high=1000),
    _i("scheduler_steps", "Engine steps before the first token", "steps", "option",
       "Whole engine steps a new request spends in the serving engine's request path "
       "(tokeniser, scheduler, detokeniser hand-offs) before its first token; 0 for a "
       "compiled runtime (calibrated).", low=0, high=1000),
    _i("closed_loop_round_share", "Round share of a closed loop", "fraction", "option",
       "Concurrent users' prompts arrive in rounds; a prompt waits this share x (users in "
       "flight - 1) engine steps for the round's others (calibrated).", low=0, high=1),
    _i("kv_cache_fraction", "KV share of free memory", "fraction", "option",
       "Share of the memory left after weights that the engine gives the KV cache.",
       low=0.1, high=1),
    _i("kv_output_occupancy", "Share of the output held in KV", "fraction", "option",
       "1 = prompt + output reserved per request; below 1 where an engine's offline runs "
       "show requests holding less on average.", low=0, high=1),
    _i("window_kv_cut", "Cache holds only the window", "0/1", "option",
       "1 = a sliding-window layer's KV cache keeps only its window (vLLM); 0 = the whole "
       "context, attention still reading only the window (TensorRT-LLM's default).",
       low=0, high=1, integer=True),
    _i("max_batch_per_replica", "Engine max batch", "sequences", "option",
       "Runtime cap on sequences per replica (e.g. vLLM max_num_seqs).", low=1,
       integer=True),
    _i("disagg_prefill_gpus", "GPUs per prefill replica (disaggregated)", "GPUs", "option",
       "Disaggregated serving: the GPUs of one prefill replica; 0 = prefill and decode share "
       "the replicas.", low=0, integer=True),
    _i("disagg_prefill_ms_per_token", "Prefill time per prompt token, prefill replicas", "ms",
       "option", "The prefill replicas' layout evaluated by this list (disaggregated only).",
       low=0),
    _i("disagg_prefill_ms", "Prefill of one prompt, prefill replicas", "ms", "option",
       "The prefill replicas' layout evaluated by this list (disaggregated only).", low=0),
    _i("disagg_prefill_time_factor", "Disaggregated prefill factor", "x", "option",
       "Prefill replicas' time per prompt token under load relative to the model's "
       "prefill time: their prompt rate (fitted on published disaggregated "
       "benchmarks).", low=0.5, high=10),
    _i("disagg_kv_link_gb_s", "Link a prompt's cache moves over", "GB/s", "option",
       "Per prefill GPU: the scale-up link when a prefill and a decode replica share an "
       "NVLink domain, else the platform's network (disaggregated only).", low=0),
    _i("disagg_kv_link_efficiency", "Efficiency of that link", "fraction", "option",
       "Calibrated link or network efficiency (disaggregated only).", low=0.01, high=1),
    _i("confidence_p10", "Model error, 10th percentile", "fraction", "option",
       "Cross-validated predicted / measured throughput - 1 of this option's group "
       "on published benchmarks: the model's low end.", low=-0.9, high=5),
    _i("confidence_p90", "Model error, 90th percentile", "fraction", "option",
       "Cross-validated predicted / measured throughput - 1 of this option's group: the "
       "model's high end (throughput over-predicted).", low=-0.9, high=5),
)
