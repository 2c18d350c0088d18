"""What one config.json gives, worked out once and shared by every setting tried on it."""

from __future__ import annotations

from functools import cached_property
from typing import Any, Mapping

from generator.engine.geometry import (
    Geometry,
    geometry_from_hf_config,
)
from generator.engine.vllm.blocks import KvGroup, kv_cache_groups
from generator.engine.vllm.budget import WeightShape, moe_shape, text_config_of, weight_shape
from generator.engine.vllm.model_len import DerivedMaxLen, derive_max_model_len


class ConfigFacts:
    """What a plan derives from the config.json alone, each part derived on first use and then kept.

    The catalog plans a pair about 16 times over one config (the reader's settings, every lever,
    the utilization x KV-dtype grid). Re-deriving the geometry, the max length, the weight shape
    and the KV groups from the dict each time was most of a plan's cost. Parts are derived in the
    order a plan first needs them, so a bad config raises the same error at the same step as
    before; a part that raised is derived (and raises) again next time.

    The facts describe the config as it was when read, and plans find them by the dict's identity:
    keep them only as long as nobody changes that dict (the catalog keeps one per variant, for a
    config dict it built and never changes).
    """

    def __init__(self, hf_config: Mapping[str, Any]) -> None:
        self.hf_config = hf_config

    @cached_property
    def geometry(self) -> Geometry:
        return geometry_from_hf_config(self.hf_config)

    @cached_property
    def derived(self) -> DerivedMaxLen:
        return derive_max_model_len(self.hf_config)

    @cached_property
    def weight_shape(self) -> WeightShape:
        return weight_shape(self.hf_config, self.geometry)

    @cached_property
    def groups(self) -> tuple[KvGroup, ...]:
        return kv_cache_groups(self.geometry)

    @cached_property
    def moe(self) -> tuple[int, int, int, int]:
        return moe_shape(text_config_of(self.hf_config))

    @cached_property
    def v2_runner_traits(self) -> tuple[str, bool, bool, bool]:
        """(model_type, MoE?, hybrid?, quantized?): what decides whether a release runs the model on the V2 runner."""
        hf = self.hf_config
        return (str(hf.get("model_type") or ""), self.moe[0] > 0, self.geometry.has_state,
                isinstance(hf.get("quantization_config"), Mapping))

    @cached_property
    def architectures(self) -> tuple[str, ...]:
        """config.json's architectures (ROCm keeps some of them on the V1 runner, vllm_releases.runs_v2_runner)."""
        archs = self.hf_config.get("architectures")
        return tuple(str(a) for a in archs) if isinstance(archs, (list, tuple)) else ()
