"""Server settings and the cell counts llama-server derives from them."""

from __future__ import annotations

from dataclasses import dataclass

from generator.engine.llamacpp.constants import AUTO_PARALLEL, CTX_PAD, DEFAULT_UBATCH, LlamaCppError
from generator.units import pad as ggml_pad


@dataclass(frozen=True)
class ServerSettings:
    """llama-server flags that size memory, with llama-server's defaults (common/common.h, arg.cpp)."""

    ctx_size: int = 0  # -c; 0 = n_ctx_train
    cache_type_k: str = "f16"
    cache_type_v: str = "f16"
    parallel: int | None = None  # -np; None or -1 = auto (4 slots, unified)
    kv_unified: bool | None = None  # -kvu / -no-kvu; None = default (on only with auto -np)
    swa_full: bool = False
    ubatch_size: int = DEFAULT_UBATCH
    n_gpu_layers: int | None = None  # -ngl; None = auto (fit decides); 'all' -> n_layer + 1
    flash_attn: str = "auto"
    kv_offload: bool = True  # -nkvo sets False
    fit: bool = True
    ctx_pad: int = CTX_PAD  # 256 today; CTX_PAD_BEFORE_2025_11_FA_OFF for old builds without FA
    fa_supported: bool = True  # whether the backend runs flash attention (auto resolves to it)

    def seqs(self) -> tuple[int, bool]:
        """(n_seq_max, kv_unified) as the server resolves them."""
        if self.parallel is None or self.parallel < 0:
            return AUTO_PARALLEL, True
        return self.parallel, bool(self.kv_unified)


@dataclass(frozen=True)
class ContextCells:
    n_ctx: int  # as `llama_context: n_ctx` prints it
    n_ctx_seq: int  # cells per stream (kv_size)
    n_seq_max: int
    n_stream: int
    rounded: bool  # "n_ctx is not divisible by n_seq_max - rounding down to %u" was printed

    @property
    def cells(self) -> int:
        return self.n_ctx_seq * self.n_stream


def context_cells(ctx_size: int, n_ctx_train: int, n_seq_max: int, kv_unified: bool, ctx_pad: int = CTX_PAD) -> ContextCells:
    """llama_context::llama_context (src/llama-context.cpp) n_ctx / n_ctx_seq arithmetic."""
    if n_seq_max < 1:
        raise LlamaCppError("n_seq_max must be at least 1")
    n_ctx = n_ctx_train if ctx_size == 0 else ctx_size
    n_ctx = ggml_pad(n_ctx, ctx_pad)
    if kv_unified:
        return ContextCells(n_ctx, n_ctx, n_seq_max, 1, False)
    n_ctx_seq = ggml_pad(n_ctx // n_seq_max, ctx_pad)
    rounded = n_ctx != n_ctx_seq * n_seq_max
    # The warning says "rounding down" but pads each stream up first, so the total can grow.
    return ContextCells(n_ctx_seq * n_seq_max, n_ctx_seq, n_seq_max, n_seq_max, rounded)


def swa_cells_per_stream(n_ctx_seq: int, n_swa: int, n_seq_max: int, unified: bool, ubatch: int, swa_full: bool, pad: int = CTX_PAD) -> int:
    """llama_kv_cache_iswa: PAD256(min(size_base, n_swa*(unified ? n_seq_max : 1) + n_ubatch)).

    History: n_swa*n_seq_max + n_batch (PR #13194, 2025-05); + n_ubatch since PR #13833 (2025-05-27);
    always padded to 256 since issue #17037 (2025-11), before that to the context padding."""
    if swa_full:
        return n_ctx_seq
    return ggml_pad(min(n_ctx_seq, n_swa * (n_seq_max if unified else 1) + ubatch), pad)
