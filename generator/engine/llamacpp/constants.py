"""llama.cpp's constants, ggml's block sizes and row sizes, and the errors this engine raises."""

from __future__ import annotations

import struct

from generator.units import MIB

# ggml/src/ggml.c type_traits + ggml-common.h static_asserts: (block size, bytes per block).
GGML_BLOCK = {
    "f32": (1, 4),
    "f16": (1, 2),
    "bf16": (1, 2),
    "q8_0": (32, 34),
    "q4_0": (32, 18),
    "q4_1": (32, 20),
    "q5_0": (32, 22),
    "q5_1": (32, 24),
    "iq4_nl": (32, 18),
}
# The values -ctk/-ctv accept, in the order `llama-server --help` lists them (common/arg.cpp).
CACHE_TYPES = ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1")
QUANTIZED_CACHE_TYPES = frozenset(t for t, (blck, _) in GGML_BLOCK.items() if blck > 1)

# llama_context: GGML_PAD(n_ctx, 256) since 2025-11-07 (PR #17046); before that
# llama_kv_cache_get_padding() returned flash_attn ? 256 : 32.
CTX_PAD = 256
CTX_PAD_BEFORE_2025_11_FA_OFF = 32
DEFAULT_UBATCH = 512
# The -ub a page offers when the compute buffer is what failed: a quarter of the default, so the
# worst-case graph (sized for min(n_ctx, n_ubatch) tokens) is about a quarter too, while prompts
# are still processed 128 tokens at a time.
SMALL_UBATCH = 128
AUTO_PARALLEL = 4  # tools/server/server.cpp: n_parallel auto -> 4 slots, kv_unified = true
FIT_TARGET_BYTES = 1024 * MIB  # common/fit.cpp: --fit-target default, free memory left per device
FIT_MIN_CTX = 4096  # --fit-ctx default

FLASH_ATTN_ON = frozenset({"on", "enabled", "true", "1"})
FLASH_ATTN_OFF = frozenset({"off", "disabled", "false", "0"})
FLASH_ATTN_AUTO = frozenset({"auto", "-1"})

# llama.cpp architectures whose model builds an interleaved-SWA cache (llama_kv_cache_iswa),
# with the SWA layer pattern set_swa_pattern(n) uses: is_swa(il) = il % n < n - 1.
# src/models/gemma2.cpp (2), gemma3.cpp (6), openai-moe.cpp (2), read at master 3f545be.
SWA_PATTERN_BY_GGUF_ARCH = {"gemma2": 2, "gemma3": 6, "gpt-oss": 2}
# From config.json the pattern comes with the layer kinds; cohere2 (Command R7B) builds an iSWA cache too
# (ggml-org/llama.cpp PR #13194 discussion runs c4ai-command-r7b with and without --swa-full), and so does
# Gemma 4 (GEMMA4_LLAMACPP_SOURCE: build_attn_inp_kv_iswa).
SWA_HF_PREFIXES = ("gemma2", "gemma3", "gpt_oss", "cohere2", "gemma4")

# Gemma 4 in llama.cpp. src/models/gemma4.cpp load_arch_hparams: the per-layer `sliding_window_pattern` array picks
# the SWA layers, `key_length` / `key_length_swa` are the full / sliding head sizes (llama_hparams::n_embd_head_k(il)),
# and n_layer_kv_from_start = block_count - `shared_kv_layers`: from that layer on has_kv(il) is false, the layer
# reads an earlier layer's cells and llama_kv_cache allocates nothing for it ("does not have KV cache"). The graph
# builds an iSWA cache. conversion/gemma.py Gemma4Model.set_gguf_parameters writes those keys from config.json:
# key_length = global_head_dim, key_length_swa = head_dim, shared_kv_layers = num_kv_shared_layers, and
# head_count_kv per layer (num_global_key_value_heads on full layers) when num_global_key_value_heads is set.
# Ollama's converter (convert/convert_gemma4.go at fb30760) writes the same keys, and Ollama 0.33 runs GGUF
# Gemma 4 through llama-server (server/sched.go; llama/compat only renames tokenizer metadata and hides the
# projector tensors).
GEMMA4_LLAMACPP_SOURCE = (
    "https://github.com/ggml-org/llama.cpp/blob/9af0434d8c5ede7127955d063a9617d8492ae79d/src/models/gemma4.cpp",
    "https://github.com/ggml-org/llama.cpp/blob/061b8c5f91885f2779d23198a091777df47c3f6f/conversion/gemma.py",
)

# Grok forces flash attention off ("flash_attn is not compatible with Grok - forcing off").
FA_FORCED_OFF_ARCHS = frozenset({"grok"})


class LlamaCppError(ValueError):
    """llama-server refuses these settings; the message is llama.cpp's own log text."""


class LlamaCppInputError(ValueError):
    """The request cannot describe a llama-server launch (missing or malformed values)."""


def row_size(cache_type: str, n_elements: int) -> int:
    """ggml_row_size: bytes of one row of `n_elements` in `cache_type`."""
    blck, size = GGML_BLOCK[cache_type]
    if n_elements % blck:
        raise LlamaCppError(f"row of {n_elements} elements is not a whole number of {cache_type} blocks of {blck}")
    return n_elements // blck * size


def _float32(value: int | float) -> float:
    # llama.cpp prints (float)bytes / (1024.0f * 1024.0f); float32 rounding can move the last digit.
    return struct.unpack("f", struct.pack("f", float(value)))[0]


def mib_text(n_bytes: int, *, float32: bool = True) -> str:
    value = (_float32(n_bytes) if float32 else float(n_bytes)) / MIB
    return f"{value:.2f}"
