"""The budget model: the bytes a worker keeps for its KV cache after weights, activations and CUDA graphs."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Mapping

from generator.engine.geometry import (
    GEMMA4_TYPES,
    NO_CACHE,
    Geometry,
)
from generator.engine.vllm.versions import LATEST_VERSION
from generator.engine.vllm_releases import (
    batch_defaults_for,
)
from generator.units import GIB, MIB


@dataclass(frozen=True)
class BudgetAssumptions:
    """Every constant of the empirical budget model, with where it comes from.

    vLLM measures these terms on the GPU; a calculator has to estimate them. The values are
    fitted to real startup logs (data/evidence/vllm_real_logs.yaml) and pages must say so (without that path).
    """

    non_torch_bytes: int = round(0.13 * GIB)
    non_torch_source: str = (
        "Non-torch growth after vLLM's start snapshot at TP=1: vLLM's own V1 non-torch line reads 0.13-0.14 GiB "
        "(median 0.13; H100, 0.11.0, llm-d/llm-d-benchmark). An earlier fit of requested - weights - available KV - "
        "activation term to the RTX 3090 0.17.1 and A100 0.10.1.1 logs gave 0.28 GiB while the sampler term counted "
        "8 B per logit on their Triton and FlashInfer paths; the code at those tags holds 14 B "
        "(vllm_releases.SAMPLER_BYTES_PER_LOGIT), and with it the same logs leave 0.02-0.14 GiB. On vLLM's V2 model "
        "runner (every model from 0.29) the term also holds the sampler's penalty buffers, max_num_seqs x vocabulary x "
        "4 bytes, which the budget counts from 0.27 "
        "(https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/worker/gpu/sample/penalties.py#L48); the T4 0.30 and "
        "A100 0.31 logs print them."
    )
    unified_memory_gpus: str = r"\b(gb10|dgx[ -]spark|jetson|thor)\b"
    unified_memory_bytes: int = round(1.37 * GIB)
    unified_memory_source: str = (
        "Empirical, unified memory (DGX Spark GB10, Jetson Orin and Thor): vLLM's MemorySnapshot takes the free memory "
        "from the host's available RAM (psutil.virtual_memory().available) on these GPUs, so the non-torch term is the "
        "growth of total - available - torch reserved from the worker's start to the end of profiling, and host memory "
        "the processes take meanwhile is charged to the KV budget "
        "(https://github.com/vllm-project/vllm/blob/a6d5c39009eb73797b276cc557ca9659c396ca14/vllm/utils/mem_utils.py, "
        "MemorySnapshot.measure). No log line prints that growth, so this adds 1.37 GiB, the mean of what the discrete-GPU "
        "model over-predicts on the three GB10 startup logs at hand (1.78, 1.25 and 1.10 GiB; vLLM 0.13 and a 0.26 "
        "nightly). Fitted on two and measured on the third it misses by +0.60, -0.19 and -0.41 GiB; Jetson is untested."
    )
    non_torch_bytes_v0: int = round(0.10 * GIB)
    non_torch_v0_source: str = (
        "V0 'non_torch_memory takes' lines: 0.01-0.35 GiB (vllm issue #10517 and others). The 1.79 and 3.58 GiB that "
        "vllm pull request #10511 printed on 2024-12-14 (TP 1 and 2, H100) are that branch's accounting before it was "
        "merged, not a release's: released 0.6.5 and 0.6.6 print 0.10-0.28 GiB."
    )
    non_torch_extra_bytes_tp: int = round(0.15 * GIB)
    non_torch_tp_source: str = (
        "Custom all-reduce / NCCL buffers with TP>1 on one node: +0.12 GiB for TP=2 on A100 "
        "(0.10.1.1: 0.68 against 0.55 GiB of non-KV memory), +0.41 GiB on H100 (0.11.0 non-torch "
        "0.54 against 0.13 GiB), 0.20 GiB total in a TP=4 0.8.5 log. Across nodes (Ray, no custom "
        "all-reduce) a TP=2 A100 log needs about 0.9 GiB more, which this term does not cover."
    )
    nccl_init_bytes_per_rank_hopper: int = round(1.86 * GIB)
    nccl_init_source: str = (
        "Empirical. NCCL and custom all-reduce buffers at TP > 1 on Hopper (H100, H200, H800, H20), counted only by the "
        "releases whose start snapshot precedes the distributed init (V1 0.8-0.10.x: "
        "https://github.com/vllm-project/vllm/blob/v0.10.2/vllm/v1/worker/gpu_worker.py#L175; from 0.11.0 the distributed "
        "init comes first and they sit outside the budget, vllm pull request #25359; and the V0 worker of every release, "
        "https://github.com/vllm-project/vllm/blob/v0.6.5/vllm/worker/worker.py#L143, where no released V0 Hopper TP log "
        "checks the size). vLLM's code sizes none of these "
        "buffers. One figure a rank, whatever the TP: NCCL's ring and tree connect each rank to fixed neighbours a channel, "
        "not to every peer, and its NVLS buffer, the one that grows with the ranks, is 32 MiB a rank and off at two GPUs "
        "(https://github.com/NVIDIA/nccl/blob/v2.26.2-1/src/transport/nvls.cc#L144). 1.86 GiB is the mean of what four "
        "Hopper starts of those releases leave per rank over the 0.13 GiB base and the 0.15 GiB TP term: the printed "
        "non-torch line of an H200 TP 4 start (2.04 GiB: 1.76) and the end-to-end residue of an H100 TP 4 start (vllm "
        "issue #21348: 2.05) and two H100 TP 8 starts (1.81, 1.82). Fitted on any three, each misses the fourth's printed "
        "KV memory by 0.31 GiB or less; a fifth start, H200 TP 2 with NCCL's NVLS off, whose log has no public address, "
        "prints 1.38 GiB of non-torch memory and is missed by -0.98 GiB (2 %). Pre-0.11 A100 and L40S TP starts land "
        "within 0.3 GiB without it, so it is not applied off Hopper; no Blackwell log of those releases is at hand."
    )
    activation_intermediate_factor: int = 3
    activation_hidden_factor: int = 3
    activation_source: str = (
        "Activation peak of the dummy batch = max_num_batched_tokens x (3 x intermediate/TP + "
        "3 x hidden) x 2 bytes: V0 logs of Llama-3.1-8B at 20,000 and 29,000 tokens (2.07 and "
        "2.99 GiB, vllm issue #10517) and Qwen2.5-1.5B at 32,768 tokens (2.02 GiB) fit it within 5%. "
        "It is a warm start's: a first start that compiles without a torch.compile cache keeps Inductor's "
        "workspace in the profiled peak, about 1 GiB more on an RTX 4090 with Qwen3-8B (0.27.1: 1.18 against 0.19 GiB)."
    )
    sampler_bytes_per_logit: int = 14
    sampler_source: str = (
        "The sampler warm-up runs max_num_seqs x vocab logits through top-k/top-p; its bytes per logit depend on the "
        "release's path (vllm/v1/sample/ at each tag): about 40 B on the PyTorch sort path (V0's own sampler and V1's "
        "default in 0.8-0.16; H100 logs at 1,024 sequences print 37-40 B); 14 B on the FlashInfer (0.9-0.11 when "
        "installed, 0.21+) and Triton (0.17-0.20) paths: the model-dtype logits the dummy run keeps, their fp32 copy, "
        "and two more fp32 tensors (FlashInfer's masked logits and softmax; or the softmax and the sampling noise); "
        "2-6 B on the V2 model runner, whose dummy requests skip top-k/top-p. This constant is the fallback for "
        "callers that pass no release."
    )
    cudagraph_bytes_per_size_per_layer: int = round(0.45 * MIB)
    cudagraph_source: str = (
        "CUDA-graph estimate = capture sizes x layers x 0.45 MiB: 'Estimated CUDA graph memory' "
        "lines 0.37 GiB (Qwen2.5-7B, 35 sizes, 28 layers) and 0.84 GiB (Llama-3.1-8B, 51 sizes, 32 layers). On 0.18-0.19 at "
        "TP > 1 on Hopper the same estimate stands for the profiling capture the custom all-reduce keeps in use, counted "
        "as non-torch memory (vllm pull request #46515); the two 0.19.0 H200 TP 4 starts it was checked on land at +0.35 "
        "and +0.37 GiB."
    )
    quantized_scale_bits_per_weight_x1000: int = 160
    weights_source: str = (
        "Weights = checkpoint bytes of the variant when known; otherwise parameters from config.json "
        "x bits (16-bit embeddings and lm_head; 4-bit group-128 formats add 0.16 bit of scales)."
    )


ASSUMPTIONS = BudgetAssumptions()

# The real-log rows (data/evidence/vllm_real_logs.yaml ids) an empirical term is fitted on, by the term's key (the
# `*_source` field's stem); the accuracy page links them beside the term and marks them as not blind.
FITTED_ON: dict[str, tuple[str, ...]] = {
    "nccl_init": ("h200-tp4-qwen3-235b-a22b-fp8-0.5-v0.10-dev-h11",
                  "h100-qwen3-235b-a22b-fp8-tp4-lmcache-v0.9", "8xh100-tp8-ep-qwen3-235b-a22b-fp8-kvfp8-32k-v0.10.0-h12",
                  "8xh100-tp8-qwen3-32b-kvfp8-32k-v0.10.0-h12"),
}


def unified_memory_gpu(gpu_name: str, assumptions: BudgetAssumptions = ASSUMPTIONS) -> bool:
    """Whether the GPU shares the host's RAM (vLLM's list: compute capability 8.7, 11.0, 12.1), by the name CUDA reports."""
    return _matches(assumptions.unified_memory_gpus, gpu_name)


@lru_cache(maxsize=1024, typed=True)
def _matches(pattern: str, gpu_name: str) -> bool:
    # Every plan asks this of one of a few GPU names; the answer depends on the two strings alone.
    return bool(re.search(pattern, gpu_name.lower()))


@dataclass(frozen=True)
class Breakdown:
    requested_bytes: int
    weights_bytes: int
    non_torch_bytes: int
    activation_peak_bytes: int
    cudagraph_bytes: int

    @property
    def available_bytes(self) -> int:
        return (
            self.requested_bytes - self.weights_bytes - self.non_torch_bytes
            - self.activation_peak_bytes - self.cudagraph_bytes
        )


def requested_bytes(total_bytes: int, gpu_memory_utilization: float) -> int:
    # vllm/v1/worker/utils.py request_memory
    return math.ceil(total_bytes * gpu_memory_utilization)


def batch_defaults(gpu_total_bytes: int, gpu_name: str = "", version: tuple[int, int, int] = LATEST_VERSION,
                   max_model_len: int = 2048) -> tuple[int, int]:
    """(max_num_seqs, max_num_batched_tokens) for `vllm serve` (EngineArgs.get_batch_defaults), by release."""
    return batch_defaults_for(version, gpu_total_bytes, gpu_name, max_model_len)


# Every budget-model plan needs this list's length and a catalog has a handful of (seqs, tokens)
# pairs; a bounded memo (the result is an immutable tuple) spares rebuilding it per plan.
@lru_cache(maxsize=256, typed=True)
def cudagraph_capture_sizes(max_num_seqs: int, max_num_batched_tokens: int) -> tuple[int, ...]:
    """VllmConfig._set_cudagraph_sizes defaults (non-Blackwell, no spec decode)."""
    largest = min(max_num_seqs * 2, 512)
    sizes = [1, 2, 4] + list(range(8, 256, 8)) + list(range(256, largest + 1, 16))
    sizes = [s for s in sizes if s <= largest]
    if max_num_batched_tokens <= largest and max_num_batched_tokens not in sizes:
        sizes.append(max_num_batched_tokens)
    return tuple(sorted(sizes))


def _as_int(cfg: Mapping[str, Any], *keys: str) -> int | None:
    for key in keys:
        value = cfg.get(key)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def text_config_of(hf_config: Mapping[str, Any]) -> Mapping[str, Any]:
    inner = hf_config.get("text_config")
    return inner if isinstance(inner, Mapping) else hf_config


def moe_shape(cfg: Mapping[str, Any]) -> tuple[int, int, int, int]:
    """(experts, experts per token, expert intermediate, shared-expert intermediate); zeros if dense."""
    experts = _as_int(cfg, "num_local_experts", "num_experts", "n_routed_experts") or 0
    if experts <= 1:
        return 0, 0, 0, 0
    top_k = _as_int(cfg, "num_experts_per_tok", "moe_topk", "top_k", "top_k_experts") or 2  # top_k_experts: Gemma 4
    expert_inter = _as_int(cfg, "moe_intermediate_size", "intermediate_size") or 0
    shared = _as_int(cfg, "shared_expert_intermediate_size") or 0
    if not shared and _as_int(cfg, "n_shared_experts"):
        shared = cfg["n_shared_experts"] * expert_inter
    return experts, top_k, expert_inter, shared


def _quant_millibits(hf_config: Mapping[str, Any], geometry: Geometry) -> tuple[int, int]:
    """(millibits per dense linear weight, millibits per MoE expert weight) of the checkpoint."""
    dense = geometry.dtype_bytes * 8000
    qc = hf_config.get("quantization_config")
    if not isinstance(qc, Mapping):
        return dense, dense
    method = str(qc.get("quant_method") or "").lower()
    if method in ("mxfp4", "gpt_oss_mxfp4"):
        return dense, 4250  # experts only; 4-bit values + one 8-bit scale per 32
    if method in ("fp8", "fbgemm_fp8", "modelopt"):
        return 8000, 8000
    bits = _as_int(qc, "bits", "w_bit", "num_bits")
    if bits is None and method == "compressed-tensors":
        for group in (qc.get("config_groups") or {}).values():
            weights = group.get("weights") if isinstance(group, Mapping) else None
            if isinstance(weights, Mapping) and isinstance(weights.get("num_bits"), int):
                bits = weights["num_bits"]
                break
    if method == "bitsandbytes":
        bits = 4 if qc.get("load_in_4bit") else 8
    if bits is None:
        return dense, dense
    scaled = bits * 1000 + (ASSUMPTIONS.quantized_scale_bits_per_weight_x1000 if bits < 8 else 0)
    return scaled, scaled


@dataclass(frozen=True)
class WeightShape:
    """Parameters by where they live: the embedding (first stage), lm_head (last stage), layers."""

    embedding_params: int
    lm_head_params: int
    layer_params: int  # one decoder layer, dense linears
    layer_expert_params: int  # one decoder layer, routed + shared experts
    dense_millibits: int
    expert_millibits: int

    def stage_bytes(self, layers: int, first: bool, last: bool) -> int:
        millibits = layers * (self.layer_params * self.dense_millibits + self.layer_expert_params * self.expert_millibits)
        millibits += (self.embedding_params if first else 0) * 16000 + (self.lm_head_params if last else 0) * 16000
        return millibits // 8000

    def total_bytes(self, num_layers: int) -> int:
        return self.stage_bytes(num_layers, True, True)


def weight_shape(hf_config: Mapping[str, Any], geometry: Geometry) -> WeightShape:
    cfg = text_config_of(hf_config)
    hidden, heads, kv_heads, head_dim = geometry.hidden_size, geometry.num_attention_heads, geometry.num_kv_heads, geometry.head_dim
    if geometry.mla is not None:
        q_rank = _as_int(cfg, "q_lora_rank") or 0
        nope = _as_int(cfg, "qk_nope_head_dim") or head_dim
        v_dim = _as_int(cfg, "v_head_dim") or head_dim
        rope = geometry.mla.qk_rope_head_dim
        q = hidden * q_rank + q_rank * heads * (nope + rope) if q_rank else hidden * heads * (nope + rope)
        attention = q + hidden * (geometry.mla.kv_lora_rank + rope) + geometry.mla.kv_lora_rank * heads * (nope + v_dim) + heads * v_dim * hidden
    elif geometry.has_global_shape:
        # Gemma 4: full layers' q/k/v/o use their own head size and KV heads (vLLM loads K into the V slot
        # too for attention_k_eq_v, so V keeps its weights); the layers' mean, as layer_params is one number.
        attention = sum(hidden * hd * (2 * heads + 2 * kv) for kv, hd in map(geometry.layer_shape, geometry.layer_kinds)) // geometry.num_layers
    else:
        attention = hidden * head_dim * (2 * heads + 2 * kv_heads)
    experts, _top_k, expert_inter, shared = moe_shape(cfg)
    inter = geometry.intermediate_size or 4 * hidden
    if experts:
        dense_layers = _as_int(cfg, "first_k_dense_replace") or 0
        moe_layers = geometry.num_layers - dense_layers
        expert_params = (experts * expert_inter + shared) * 3 * hidden
        # Spread the dense-MLP layers of DeepSeek-style models evenly; it only moves stage totals.
        expert_avg = expert_params * moe_layers // geometry.num_layers
        mlp = 3 * hidden * inter * dense_layers // geometry.num_layers + hidden * experts
        if cfg.get("enable_moe_block"):
            # Gemma 4 26B-A4B: every layer runs its dense MLP beside the experts (gemma4.py Gemma4DecoderLayer).
            mlp += 3 * hidden * inter
    else:
        expert_avg = 0
        mlp = 3 * hidden * inter
    dense_mb, expert_mb = _quant_millibits(hf_config, geometry)
    embedding = geometry.vocab_size * hidden
    ple_embedding, ple_layer = _gemma4_extras(cfg, geometry, hidden, inter) if geometry.model_type in GEMMA4_TYPES else (0, 0)
    return WeightShape(
        embedding_params=embedding + ple_embedding,
        lm_head_params=embedding,  # tied embeddings still load an lm_head on the last stage under PP
        layer_params=attention + mlp + ple_layer,
        layer_expert_params=expert_avg,
        dense_millibits=dense_mb,
        expert_millibits=expert_mb,
    ) if not geometry.tie_word_embeddings else WeightShape(embedding + ple_embedding, 0, attention + mlp + ple_layer, expert_avg, dense_mb, expert_mb)


def _gemma4_extras(cfg: Mapping[str, Any], geometry: Geometry, hidden: int, inter: int) -> tuple[int, int]:
    """(first-stage parameters, mean parameters a layer) Gemma 4 adds (gemma4.py Gemma4Model, Gemma4DecoderLayer):
    per-layer embeddings (PLE: a vocab_size_per_layer_input x layers x hidden_size_per_layer_input table and a
    hidden -> layers x ple projection, counted with the embedding; a gate and a projection of hidden x ple in each
    layer) and, with use_double_wide_mlp, an MLP twice as wide in the KV-shared layers."""
    layers = geometry.num_layers
    ple = _as_int(cfg, "hidden_size_per_layer_input") or 0
    first = ((_as_int(cfg, "vocab_size_per_layer_input") or geometry.vocab_size) + hidden) * layers * ple
    per_layers = 2 * hidden * ple * layers
    if cfg.get("use_double_wide_mlp"):
        per_layers += 3 * hidden * inter * geometry.count(NO_CACHE)  # NO_CACHE: the KV-shared layers
    return first, per_layers // layers


def _gemma4_vision_params(vision: Mapping[str, Any], text_hidden: int) -> int:
    """Gemma4VisionModel + embed_vision: per layer q (heads x head_dim), k and v (kv heads x head_dim), o, and a gated
    MLP; the patch embedder (3 x patch^2 -> hidden and a 2 x position_embedding_size x hidden table); the
    embedder's hidden -> text hidden projection. Defaults are Gemma4VisionConfig's."""
    hidden, inter = _as_int(vision, "hidden_size") or 768, _as_int(vision, "intermediate_size") or 3072
    heads, head_dim = _as_int(vision, "num_attention_heads") or 12, _as_int(vision, "head_dim") or 64
    kv = _as_int(vision, "num_key_value_heads") or heads
    layer = hidden * head_dim * (2 * heads + 2 * kv) + 3 * hidden * inter
    patch, positions = _as_int(vision, "patch_size") or 16, _as_int(vision, "position_embedding_size") or 10240
    return (_as_int(vision, "num_hidden_layers") or 16) * layer + 3 * patch * patch * hidden + 2 * positions * hidden + hidden * text_hidden


def _gemma4_audio_params(audio: Mapping[str, Any], text_hidden: int) -> int:
    """Gemma4AudioModel + embed_audio: per conformer layer two feed-forwards (hidden -> 4 hidden -> hidden), q, k, v,
    post and relative_k projections, the light conv (hidden -> 2 hidden, hidden -> hidden, a depthwise kernel); the
    two-conv subsampler and its projection; the hidden -> output_proj_dims projection and the embedder's
    output_proj_dims -> text hidden projection. Defaults are Gemma4AudioConfig's."""
    hidden, kernel = _as_int(audio, "hidden_size") or 1024, _as_int(audio, "conv_kernel_size") or 5
    channels = audio.get("subsampling_conv_channels") or (128, 32)
    first, second = int(channels[0]), int(channels[1])
    out = _as_int(audio, "output_proj_dims") or 1536
    layer = 24 * hidden * hidden + kernel * hidden
    subsample = 9 * first + 9 * first * second + (first // 4) * second * hidden
    return (_as_int(audio, "num_hidden_layers") or 12) * layer + subsample + hidden * out + out * text_hidden


def gemma4_multimodal_bytes(hf_config: Mapping[str, Any], geometry: Geometry, max_num_batched_tokens: int,
                            modalities_off: tuple[str, ...] | list[str] = ()) -> int:
    """What Gemma4ForConditionalGeneration loads beside the language model, in the model dtype (vllm_releases.GEMMA4_MM_SOURCE):
    0 for a text-only config (no vision_config). The towers count whole on every rank (their TP split is not modelled)."""
    vision = hf_config.get("vision_config")
    if geometry.model_type not in GEMMA4_TYPES or not isinstance(vision, Mapping):
        return 0
    off = set(modalities_off)
    params = 0 if {"image", "video"} <= off else _gemma4_vision_params(vision, geometry.hidden_size)
    audio = hf_config.get("audio_config")
    if isinstance(audio, Mapping) and "audio" not in off:
        params += _gemma4_audio_params(audio, geometry.hidden_size)
    ple = _as_int(text_config_of(hf_config), "hidden_size_per_layer_input") or 0
    buffer = max_num_batched_tokens * geometry.num_layers * ple
    return (params + buffer) * geometry.dtype_bytes


def activation_peak_bytes(geometry: Geometry, hf_config: Mapping[str, Any], tensor_parallel_size: int, max_num_batched_tokens: int, max_num_seqs: int, assumptions: BudgetAssumptions = ASSUMPTIONS, sampler_bytes: int | None = None) -> int:  # noqa: E501
    moe = moe_shape(text_config_of(hf_config))
    return estimate_activation_peak(geometry, moe, tensor_parallel_size, max_num_batched_tokens, max_num_seqs, assumptions, sampler_bytes)


def estimate_activation_peak(geometry: Geometry, moe: tuple[int, int, int, int], tensor_parallel_size: int, max_num_batched_tokens: int, max_num_seqs: int, assumptions: BudgetAssumptions, sampler_bytes: int | None = None) -> int:  # noqa: E501
    experts, top_k, expert_inter, shared = moe
    inter = top_k * expert_inter + shared if experts else (geometry.intermediate_size or 4 * geometry.hidden_size)
    per_token = (assumptions.activation_intermediate_factor * inter // tensor_parallel_size
                 + assumptions.activation_hidden_factor * geometry.hidden_size) * geometry.dtype_bytes
    forward = max_num_batched_tokens * per_token
    # The sampler rows are the dummy requests: min(max_num_seqs, max_num_batched_tokens).
    rows = min(max_num_seqs, max_num_batched_tokens)
    sampler = rows * geometry.vocab_size * (assumptions.sampler_bytes_per_logit if sampler_bytes is None else sampler_bytes)
    return max(forward, sampler)


def encoder_output_width(hf_config: Mapping[str, Any], geometry: Geometry) -> int:
    """Values per token of a multimodal encoder's output, as the encoder cache holds it: the projector's width
    (vision_config.out_hidden_size, else the language model's hidden size), times 1 + the DeepStack levels for
    Qwen3-VL, whose vision tower concatenates the features of each deepstack_visual_indexes layer to its output
    ("[seq_len, hidden_size * (1 + depth_of_deepstack)]", Qwen3_VisionTransformer.forward in
    https://github.com/vllm-project/vllm/blob/002d7b939754b844a3832dd7fbf9e5fd0c0e9f1b/vllm/model_executor/models/qwen3_vl.py)."""
    vision = hf_config.get("vision_config")
    vision = vision if isinstance(vision, Mapping) else {}
    width = _as_int(vision, "out_hidden_size") or geometry.hidden_size
    deepstack = vision.get("deepstack_visual_indexes")
    return width * (1 + (len(deepstack) if isinstance(deepstack, (list, tuple)) else 0))


def encoder_cache_bytes(hf_config: Mapping[str, Any], geometry: Geometry, encoder_cache_tokens: int) -> int:
    """What V1's profile run keeps of the encoder while it measures the peak: profile_run runs the encoder on
    dummy items of the largest feature size, keeps the outputs in self.encoder_cache, then runs the text
    forward (_dummy_run) and the sampler warm-up, and clears the cache only after both. profile_run is the
    function that logs "Encoder cache will be initialized with a budget of N tokens" (gpu_model_runner.py:3344
    in 0.11.0 logs); read in https://github.com/vllm-project/vllm/blob/000fc94b754f66aeb60ef5acf1ea2e94cdc65164/vllm/v1/worker/gpu_model_runner.py.
    The budget is the most tokens those items hold, so this is an upper bound by less than one item. The encoder's own
    transient peak while it runs is not modelled."""
    return encoder_cache_tokens * encoder_output_width(hf_config, geometry) * geometry.dtype_bytes
