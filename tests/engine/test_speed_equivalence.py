"""The engine's shortcuts give the numbers of the plain algorithms they replace.

The engine memoises what a config or layout gives, solves searches it used to run, and skips work
a caller does not read. Each test here runs the plain algorithm (as the engine ran it before those
shortcuts, written out again below) next to the engine and asserts equal results. The layouts and
settings are shapes, not facts: the catalog's own models, plus made-up layouts that reach the
corners (negative sizes, SWA, MLA, widths that differ per layer).
"""

from __future__ import annotations

import random
import re
from dataclasses import fields, replace

import pytest

from generator.engine import llamacpp as llama
from generator.engine import pairs, vllm
from generator.engine.geometry import CHUNKED, FULL, SLIDING, GeometryError, geometry_from_hf_config
from generator.load import load_dataset

from ..conftest import REPO

GIB = 1 << 30


@pytest.fixture(scope="module")
def catalog():
    return load_dataset(REPO)


# --------------------------------------------------------------------------- vLLM: the length search


def plain_largest_fitting_len(check, bytes_per_block, groups, upper, block_size, in_flight) -> int:
    """vLLM's _estimate_max_model_len_from_groups: binary search over [1, upper]."""
    def fits(length):
        return bytes_per_block * vllm.blocks_per_request(groups, length, block_size, in_flight) <= check

    if upper < 1 or not fits(1):
        return 0
    low, high, best = 1, upper, 1
    while low <= high:
        mid = (low + high) // 2
        if fits(mid):
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return best


def _random_groups(rng: random.Random) -> tuple[vllm.KvGroup, ...]:
    groups = []
    for _ in range(rng.randint(1, 5)):
        kind = rng.choice([FULL, SLIDING, CHUNKED])
        window = None if kind == FULL else rng.choice([rng.randint(-40, 40), rng.randint(1, 8192)])
        groups.append(vllm.KvGroup(kind, window, (0,)))
    return tuple(groups)


def test_solved_length_equals_the_binary_search_on_random_inputs() -> None:
    rng = random.Random(20261129)
    outcomes = {"zero": 0, "upper": 0, "between": 0}
    for _ in range(20000):
        groups = _random_groups(rng)
        check = rng.randint(-1000, 400_000)
        bytes_per_block = rng.randint(1, 300)
        upper = rng.choice([rng.randint(-3, 300), rng.randint(1, 300_000)])
        block_size = rng.choice([1, 2, 16, 32, rng.randint(1, 64)])
        in_flight = rng.choice([0, 1, rng.randint(-60, 60), rng.randint(0, 16384)])
        solved = vllm.largest_fitting_len(check, bytes_per_block, groups, upper, block_size, in_flight)
        assert solved == plain_largest_fitting_len(check, bytes_per_block, groups, upper, block_size, in_flight), (
            groups, check, bytes_per_block, upper, block_size, in_flight)
        outcomes["zero" if solved == 0 else "upper" if solved == upper else "between"] += 1
    # The cases reach every branch, not only the trivial ones.
    assert min(outcomes.values()) > 150


def test_length_search_still_runs_for_what_the_solution_does_not_cover() -> None:
    groups = (vllm.KvGroup(FULL, None, (0, 1)), vllm.KvGroup(SLIDING, 4096, (2,)))
    # A float check and a zero-byte block go through vLLM's search itself.
    assert vllm.largest_fitting_len(1e6, 64, groups, 100_000, 16, 2048) == plain_largest_fitting_len(1e6, 64, groups, 100_000, 16, 2048)
    assert vllm.largest_fitting_len(10, 0, groups, 5000, 16, 2048) == 5000


# --------------------------------------------------------------------------- vLLM: plans, levers, grid


def _vllm_inputs(catalog):
    for gpu in catalog.gpus.values():
        for model in catalog.models.values():
            for variant in model.variants:
                if "vllm" in variant.engines and pairs.runs_on(gpu, variant):
                    yield vllm.VllmInputs(
                        hf_config=pairs.variant_config(model, variant), gpu_total_bytes=pairs.gpu_total_bytes(gpu),
                        gpu_name=gpu.name, gpu_count=2, weights_bytes=variant.checkpoint_bytes, vllm_version="0.33.0",
                    )


def test_shared_config_facts_give_the_plans_fresh_ones_give(catalog) -> None:
    for inputs in list(_vllm_inputs(catalog))[::7]:
        facts = vllm.ConfigFacts(inputs.hf_config)
        for changed in (inputs, replace(inputs, max_model_len=-1), replace(inputs, kv_cache_dtype="fp8", max_model_len=-1),
                        replace(inputs, tensor_parallel_size=2, gpu_memory_utilization=0.95)):
            try:
                fresh = vllm.plan_vllm(changed)
            except vllm.VllmInputError as exc:
                with pytest.raises(vllm.VllmInputError, match=re.escape(str(exc))):
                    vllm.plan_vllm(changed, facts=facts)
                continue
            assert vllm.plan_vllm(changed, facts=facts) == fresh
            assert vllm.resolve_settings(changed, facts=facts) == vllm.resolve_settings(changed)


def test_facts_of_another_config_are_ignored(catalog) -> None:
    first, second = (m.config.as_config_json() for m in list(catalog.models.values())[:2])
    inputs = vllm.VllmInputs(hf_config=second, gpu_total_bytes=80 * GIB, gpu_name="H100")
    assert vllm.plan_vllm(inputs, facts=vllm.ConfigFacts(first)) == vllm.plan_vllm(inputs)
    # An equal dict that is not the same object does not reuse the facts either.
    assert vllm.plan_vllm(inputs, facts=vllm.ConfigFacts(dict(second))) == vllm.plan_vllm(inputs)


def test_levers_and_grid_read_what_plan_vllm_reports(catalog) -> None:
    for inputs in list(_vllm_inputs(catalog))[::11]:
        facts = vllm.ConfigFacts(inputs.hf_config)
        requested = vllm.plan_vllm(inputs).max_model_len
        for lever in vllm.vllm_remediation(inputs, facts=facts):
            if lever.kind in ("clamp_max_model_len", "quantization", "gpu"):
                continue  # the clamp lever rewrites its own fields; the others need alternatives
            flag_to_field = {"--kv-cache-dtype": ("kv_cache_dtype", str), "--enforce-eager": ("enforce_eager", lambda _v: True),
                             "--gpu-memory-utilization": ("gpu_memory_utilization", float),
                             "--tensor-parallel-size": ("tensor_parallel_size", int)}
            changes = {flag_to_field[f][0]: flag_to_field[f][1](v) for f, v in lever.flags}
            auto = vllm.plan_vllm(replace(inputs, max_model_len=-1, **changes))
            assert lever.num_blocks == auto.num_blocks
            assert lever.available_kv_cache_bytes == auto.available_kv_cache_bytes
            assert lever.max_model_len_that_fits == (auto.estimated_max_model_len if auto.error is None else 0)
            assert lever.fits_requested == (auto.error is None and auto.max_model_len >= requested)
        for util in pairs.GRID_UTILIZATIONS:
            for dtype in pairs.GRID_DTYPES:
                cell = replace(inputs, gpu_memory_utilization=util, kv_cache_dtype=dtype, max_model_len=-1)
                auto = vllm.plan_vllm(cell)
                assert vllm.fitting_max_model_len(cell, facts=facts) == (auto.estimated_max_model_len if auto.error is None else 0)


def test_replace_inputs_is_dataclasses_replace() -> None:
    inputs = vllm.VllmInputs(hf_config={"x": 1}, gpu_total_bytes=24 * GIB, gpu_name="RTX 4090", weights_bytes=5)
    for changes in ({}, {"max_model_len": -1}, {"kv_cache_dtype": "fp8", "gpu_memory_utilization": 0.95}, {"hf_config": {}}):
        assert vllm.replace_inputs(inputs, **changes) == replace(inputs, **changes)
    assert {f.name for f in fields(vllm.VllmInputs)} == set(vars(inputs))  # only init fields, as replace_inputs assumes


def test_cudagraph_sizes_memo_keeps_types_apart() -> None:
    assert vllm.cudagraph_capture_sizes(256, 8192) == vllm.cudagraph_capture_sizes.__wrapped__(256, 8192)
    with pytest.raises(TypeError):
        vllm.cudagraph_capture_sizes(256.0, 8192)  # range() refuses floats, memo or not


# --------------------------------------------------------------------------- llama.cpp: the plain algorithms


def plain_plan_kv(layout: llama.KvLayout, settings: llama.ServerSettings) -> llama.KvPlan:
    """plan_kv as one loop over the layers, row_size per layer."""
    llama.check_cache_types(layout, settings.cache_type_k, settings.cache_type_v)
    fa = llama.resolve_flash_attn(settings.flash_attn, settings.cache_type_v, layout.arch, settings.fa_supported)
    n_seq_max, unified = settings.seqs()
    ctx = llama.context_cells(settings.ctx_size, layout.n_ctx_train, n_seq_max, unified, settings.ctx_pad)
    v_trans = not fa.enabled
    n_stream = 1 if unified else n_seq_max

    def build(kind, layers, cells):
        k_bytes = v_bytes = 0
        per_layer = []
        for layer in layers:
            k = llama.row_size(settings.cache_type_k, layer.k_width)
            v = 0 if layout.is_mla else llama.row_size(settings.cache_type_v, layout.v_width_max if v_trans else layer.v_width)
            k_bytes += k * cells * n_stream
            v_bytes += v * cells * n_stream
            per_layer.append((k + v) * cells * n_stream)
        return llama.KvCache(kind, cells, n_stream, tuple(layer.index for layer in layers), k_bytes, v_bytes,
                             settings.cache_type_k, settings.cache_type_v, tuple(per_layer))

    if layout.n_swa is not None and any(layer.swa for layer in layout.kv_layers):
        size_swa = llama.swa_cells_per_stream(ctx.n_ctx_seq, layout.n_swa, n_seq_max, unified, settings.ubatch_size,
                                              settings.swa_full, settings.ctx_pad)
        caches = (build("non-SWA", [l for l in layout.kv_layers if not l.swa], ctx.n_ctx_seq),
                  build("SWA", [l for l in layout.kv_layers if l.swa], size_swa))
    else:
        caches = (build("kv", list(layout.kv_layers), ctx.n_ctx_seq),)
    return llama.KvPlan(ctx, unified, fa, caches)


def plain_gpu_total(layout, plan, settings, weights_bytes, ngl) -> int:
    repeating = min(max(0, ngl), layout.n_layer)
    units = repeating + (1 if max(0, ngl) > layout.n_layer else 0)
    kv = 0
    if settings.kv_offload and repeating:
        kv = sum(b for il, b in plan.bytes_by_layer().items() if il >= layout.n_layer - repeating)
    compute = llama.compute_buffer_bytes(layout, plan, settings.ubatch_size, attention_on_gpu=settings.kv_offload) if units else 0
    return weights_bytes * units // (layout.n_layer + 1) + kv + compute


def plain_gpu_layers_that_fit(layout, plan, settings, weights_bytes, budget) -> int:
    for ngl in range(layout.n_layer + 1, -1, -1):
        if plain_gpu_total(layout, plan, settings, weights_bytes, ngl) <= budget:
            return ngl
    return 0


def plain_max_ctx(layout, settings, weights_bytes, budget) -> int:
    n_seq_max, unified = settings.seqs()
    step = settings.ctx_pad * (1 if unified else n_seq_max)
    hi = max(layout.n_ctx_train, settings.ctx_size) // step
    ngl = layout.n_layer + 1 if settings.n_gpu_layers is None or settings.n_gpu_layers < 0 else settings.n_gpu_layers

    def fits(k):
        plan = plain_plan_kv(layout, replace(settings, ctx_size=k * step))
        return plain_gpu_total(layout, plan, settings, weights_bytes, ngl) <= budget

    if hi < 1 or not fits(1):
        return 0
    lo = 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo * step


def _odd_layouts() -> list[llama.KvLayout]:
    """Layouts no catalog model has: per-layer widths, SWA with an odd pattern, a negative width."""
    mixed = tuple(llama.LayerKv(i, 256 * (1 + i % 3), 128 * (1 + i % 2), 128, 64, i % 4 != 3) for i in range(24))
    base = dict(arch="test", n_layer=26, kv_layers=mixed, n_swa=512, is_mla=False, n_ctx_train=40960,
                n_embd=2048, n_head=16, n_vocab=32000, n_ff=8192)
    negative = tuple(llama.LayerKv(i, -128 if i == 5 else 1024, 1024, 128, 128, False) for i in range(8))
    return [
        llama.KvLayout(**base),
        llama.KvLayout(**{**base, "n_swa": None}),
        llama.KvLayout(**{**base, "kv_layers": negative, "n_layer": 8, "n_swa": None}),
    ]


def _settings_grid():
    yield llama.ServerSettings(parallel=1)
    yield llama.ServerSettings(parallel=1, cache_type_k="q8_0", cache_type_v="q8_0")
    yield llama.ServerSettings(parallel=1, cache_type_k="q4_0", cache_type_v="q4_0", flash_attn="on")
    yield llama.ServerSettings(parallel=1, cache_type_k="q8_0", flash_attn="off")  # V transposed, padded
    yield llama.ServerSettings()  # auto: four unified slots
    yield llama.ServerSettings(parallel=3, ctx_size=20000, swa_full=True)
    yield llama.ServerSettings(parallel=2, kv_unified=False, n_gpu_layers=7, ubatch_size=2048)
    yield llama.ServerSettings(parallel=1, kv_offload=False, ctx_size=12345)


def _llama_cases(catalog):
    # Models whose layers keep a recurrent state, or Gemma 3n's shared KV, have no llama.cpp layout the engine models;
    # Gemma 4's KV-shared layers leave gaps in its cache's layer indices.
    def modelled(m) -> bool:
        g = geometry_from_hf_config(m.config.as_config_json())
        return not (g.model_type.startswith("gemma3n") or g.has_state)
    layouts = [pairs._work(m, next(v for v in m.variants)).layout for m in catalog.models.values() if modelled(m)]
    for layout in layouts + _odd_layouts():
        for settings in _settings_grid():
            yield layout, settings


def test_plans_equal_the_layer_by_layer_build(catalog) -> None:
    for layout, settings in _llama_cases(catalog):
        try:
            expected = plain_plan_kv(layout, settings)
        except (llama.LlamaCppError, llama.LlamaCppInputError) as exc:
            with pytest.raises(type(exc)):
                llama.plan_kv(layout, settings)
            continue
        plan = llama.plan_kv(layout, settings)
        assert plan == expected
        assert llama.plan_kv(layout, settings) == expected  # the layout's memo answers the second time
        for ngl in range(layout.n_layer + 2):
            expected_kv = sum(b for il, b in plan.bytes_by_layer().items() if il >= layout.n_layer - ngl)
            assert plan.kv_bytes_from_layer(layout.n_layer - ngl) == expected_kv


def test_searches_equal_the_plain_scan_and_search(catalog) -> None:
    rng = random.Random(7)
    for layout, settings in _llama_cases(catalog):
        try:
            plan = llama.plan_kv(layout, settings)
        except (llama.LlamaCppError, llama.LlamaCppInputError):
            continue
        for _ in range(4):
            weights = rng.choice([0, rng.randint(1, 80) * GIB // 2, -GIB])
            budget = rng.choice([rng.randint(0, 200) * GIB // 4, -1, plan.kv_bytes])
            assert llama.gpu_layers_that_fit(layout, plan, settings, weights, budget) == \
                plain_gpu_layers_that_fit(layout, plan, settings, weights, budget)
            assert llama.max_ctx_that_fits(layout, settings, weights, budget) == plain_max_ctx(layout, settings, weights, budget)


def test_ctx_search_keeps_the_plain_search_when_use_can_fall_with_context() -> None:
    # Made-up widths: SWA rows that stop growing at the window, negative rows that keep shrinking.
    # GPU use rises to a peak and falls again, so a fitting top says nothing about the lengths below.
    layers = tuple(llama.LayerKv(i, 4096 if i % 2 else -1024, 4096 if i % 2 else -1024, 128, 128, bool(i % 2)) for i in range(8))
    layout = llama.KvLayout(arch="gemma2", n_layer=8, kv_layers=layers, n_swa=512, is_mla=False, n_ctx_train=2048,
                            n_embd=64, n_head=1, n_vocab=0, n_ff=0)
    settings = llama.ServerSettings(parallel=1)
    budget = 40_000_000
    top_plan = plain_plan_kv(layout, replace(settings, ctx_size=2048))
    assert plain_gpu_total(layout, top_plan, settings, 0, layout.n_layer + 1) <= budget  # the top fits...
    assert plain_max_ctx(layout, settings, 0, budget) == 3 * 256  # ...yet the search stops below it
    assert llama.max_ctx_that_fits(layout, settings, 0, budget) == 3 * 256


def test_layout_memo_is_not_part_of_the_layout(catalog) -> None:
    model = next(iter(catalog.models.values()))
    fresh = llama.kv_layout_from_geometry(geometry_from_hf_config(model.config.as_config_json()))
    used = llama.kv_layout_from_geometry(geometry_from_hf_config(model.config.as_config_json()))
    llama.plan_kv(used, llama.ServerSettings(parallel=1))
    assert used == fresh and hash(used) == hash(fresh) and repr(used) == repr(fresh)
    assert {f.name for f in fields(llama.KvLayout)} == {f.name for f in fields(fresh)}
    assert "_memo" not in {f.name for f in fields(used)}


# --------------------------------------------------------------------------- pairs: the per-variant memo


def test_pair_numbers_do_not_depend_on_the_variant_memo(catalog) -> None:
    tasks = pairs.pair_tasks(catalog)[::37]
    pairs._WORK.clear()
    cold = [pairs.compute_pair(t.gpu, t.model, t.variant, t.settings) for t in tasks]
    warm = [pairs.compute_pair(t.gpu, t.model, t.variant, t.settings) for t in tasks]
    pairs._WORK.clear()
    assert cold == warm and repr(cold) == repr(warm)


def test_variant_memo_stays_bounded(catalog, monkeypatch) -> None:
    monkeypatch.setattr(pairs, "_WORK_MAX", 3)
    pairs._WORK.clear()
    model = next(m for m in catalog.models.values() if len(m.variants) >= 2)
    for _ in range(3):
        for other in catalog.models.values():
            pairs._work(other, other.variants[0])
            assert len(pairs._WORK) <= 3
    assert pairs._work(model, model.variants[0]).weights == pairs.variant_weights(model, model.variants[0])
    pairs._WORK.clear()


# --------------------------------------------------------------------------- vLLM: the sizing memo


def test_plans_levers_and_grid_with_a_memo_equal_those_without(catalog) -> None:
    memo: vllm.SizeMemo = {}
    for inputs in list(_vllm_inputs(catalog))[::5]:
        facts = vllm.ConfigFacts(inputs.hf_config)
        for _ in range(2):  # the second round reads every sizing back from the memo
            try:
                fresh = vllm.plan_vllm(inputs)
            except vllm.VllmInputError as exc:
                with pytest.raises(vllm.VllmInputError, match=re.escape(str(exc))):
                    vllm.plan_vllm(inputs, facts=facts, memo=memo)
                break
            assert vllm.plan_vllm(inputs, facts=facts, memo=memo) == fresh
            assert vllm.vllm_remediation(inputs, facts=facts, memo=memo) == vllm.vllm_remediation(inputs, facts=facts)
            for util in (None, *pairs.GRID_UTILIZATIONS):
                cell = replace(inputs, gpu_memory_utilization=util, kv_cache_dtype="fp8", max_model_len=-1)
                assert vllm.fitting_max_model_len(cell, facts=facts, memo=memo) == vllm.fitting_max_model_len(cell, facts=facts)
    assert memo


def test_size_memo_keys_apart_what_sizes_apart() -> None:
    from generator.engine.vllm.plan import _memo_key

    config = {"x": 1}
    inputs = vllm.VllmInputs(hf_config=config, gpu_total_bytes=24 * GIB, gpu_name="RTX 4090", vllm_version="0.19.0")
    key = _memo_key(inputs, vllm.ASSUMPTIONS)
    # vLLM's default utilization written out is the same sizing; another value, type or config is not.
    assert _memo_key(replace(inputs, gpu_memory_utilization=0.90), vllm.ASSUMPTIONS) == key
    assert _memo_key(replace(inputs, vllm_version="0.20.0", gpu_memory_utilization=0.90), vllm.ASSUMPTIONS) != \
        _memo_key(replace(inputs, vllm_version="0.20.0"), vllm.ASSUMPTIONS)
    assert _memo_key(replace(inputs, gpu_memory_utilization=1), vllm.ASSUMPTIONS) != \
        _memo_key(replace(inputs, gpu_memory_utilization=True), vllm.ASSUMPTIONS)
    assert _memo_key(replace(inputs, hf_config=dict(config)), vllm.ASSUMPTIONS) != key


def test_size_memo_stays_bounded(catalog, monkeypatch) -> None:
    import generator.engine.vllm.plan as plan

    monkeypatch.setattr(plan, "_SIZE_MEMO_MAX", 4)
    memo: vllm.SizeMemo = {}
    for inputs in list(_vllm_inputs(catalog))[:20]:
        try:
            vllm.plan_vllm(inputs, memo=memo)
        except vllm.VllmInputError:
            continue
        assert len(memo) <= 4


def test_replace_inputs_refuses_unknown_names() -> None:
    inputs = vllm.VllmInputs(hf_config={"x": 1})
    with pytest.raises(TypeError):
        vllm.replace_inputs(inputs, max_model_length=4096)
    assert not hasattr(vllm.replace_inputs(inputs, max_model_len=8), "__post_init__")


def test_pair_numbers_do_not_depend_on_the_size_memo(catalog, monkeypatch) -> None:
    tasks = pairs.pair_tasks(catalog)[::29]
    pairs._SIZES.clear()
    cold = [pairs.compute_pair(t.gpu, t.model, t.variant, t.settings) for t in tasks]
    warm = [pairs.compute_pair(t.gpu, t.model, t.variant, t.settings) for t in tasks]
    pairs._SIZES.clear()
    monkeypatch.setattr(pairs, "_SIZES", None)  # no memo: every sizing computed where it is asked for
    plain = [pairs.compute_pair(t.gpu, t.model, t.variant, t.settings) for t in tasks]
    assert cold == warm == plain and repr(cold) == repr(warm) == repr(plain)


def test_sglang_plan_with_the_variant_geometry_equals_its_own(catalog) -> None:
    from generator.engine import sglang

    for model in list(catalog.models.values())[::3]:
        config = model.config.as_config_json()
        try:
            geometry = geometry_from_hf_config(config)
            own = sglang.plan(config, gpu_total_bytes=80 * GIB, weights_gb=10.0, mem_fraction_static=0.85)
        except (sglang.SglangInputError, GeometryError):
            continue
        assert sglang.plan(config, gpu_total_bytes=80 * GIB, weights_gb=10.0, mem_fraction_static=0.85, geometry=geometry) == own


# --------------------------------------------------------------------------- vLLM: the prefix before the utilization, and auto-fit


def _varied_inputs(catalog):
    """Catalog configs under settings the catalog's pairs never use: old releases (V0, the pre-Ampere fallback),
    pipeline parallelism, a fixed KV budget, GPUs of every kind the release tables tell apart."""
    rng = random.Random(20261207)
    gpus = [("NVIDIA H100 80GB HBM3", 80 * GIB), ("Tesla T4", 15 * GIB), ("AMD Instinct MI300X", 192 * GIB),
            ("NVIDIA GeForce RTX 4090", 24 * GIB), ("NVIDIA B200", 180 * GIB), ("NVIDIA Jetson AGX Thor", 128 * GIB)]
    configs = [pairs.variant_config(m, v) for m in catalog.models.values() for v in m.variants if "vllm" in v.engines]
    for config in configs[::3]:
        for _ in range(3):
            name, total = rng.choice(gpus)
            yield vllm.VllmInputs(
                hf_config=config, gpu_total_bytes=total, gpu_name=name, gpu_count=4,
                tensor_parallel_size=rng.choice([1, 1, 2]), pipeline_parallel_size=rng.choice([1, 1, 2]),
                kv_cache_dtype=rng.choice(["auto", "fp8"]), vllm_version=rng.choice(["0.6.6", "0.9.2", "0.11.0", "0.20.0", "0.33.0"]),
                weights_bytes=rng.choice([None, rng.randint(1, 200) * GIB // 2]),
                kv_cache_memory_bytes=rng.choice([None, None, None, rng.randint(-2, 40) * GIB // 4]),
                enforce_eager=rng.choice([False, True]), max_num_seqs=rng.choice([None, 64]),
            )


def _outcome(call, *args, **kwargs):
    try:
        return call(*args, **kwargs)
    except (vllm.VllmInputError, ZeroDivisionError, ValueError) as exc:
        return type(exc), str(exc)


def _planned_fit(inputs: vllm.VllmInputs) -> tuple[int, int, int]:
    auto = vllm.plan_vllm(inputs)
    if auto.error is None:
        assert auto.max_model_len == auto.estimated_max_model_len > 0  # what a lever's fits_requested reads
    return auto.estimated_max_model_len if auto.error is None else 0, auto.num_blocks, auto.available_kv_cache_bytes


def test_auto_fit_shortcut_equals_the_plan(catalog) -> None:
    checked = {"fits": 0, "zero": 0, "refused": 0}
    for inputs in _varied_inputs(catalog):
        facts = vllm.ConfigFacts(inputs.hf_config)
        memo: vllm.SizeMemo = {}
        for util in (None, 0.5, 0.85, 0.92, 0.95, 1, 0, 1.5, True):
            cell = replace(inputs, gpu_memory_utilization=util, max_model_len=-1)

            expected = _outcome(_planned_fit, cell)
            for kept in (None, memo, memo):  # the second time from the memo
                assert _outcome(vllm.auto_fit, cell, vllm.ASSUMPTIONS, facts, kept) == expected, cell
            length = expected[0] if isinstance(expected[0], int) else expected
            assert _outcome(vllm.fitting_max_model_len, cell, facts=facts) == length, cell
            assert _outcome(vllm.fitting_max_model_len, cell, facts=facts, memo=memo) == length, cell
            checked["refused" if not isinstance(expected[0], int) else "fits" if expected[0] else "zero"] += 1
    assert min(checked.values()) > 20, checked


def test_sizings_sharing_a_prefix_equal_fresh_ones(catalog) -> None:
    for inputs in _varied_inputs(catalog):
        facts = vllm.ConfigFacts(inputs.hf_config)
        memo: vllm.SizeMemo = {}
        # Utilizations first, lengths after: each sizing after the first finds the prefix of another.
        for util in (None, 0.85, 0.95, 0, 1.5, True, "0.9"):
            for length in (None, -1, 4096):
                cell = replace(inputs, gpu_memory_utilization=util, max_model_len=length)
                assert _outcome(vllm.plan_vllm, cell, facts=facts, memo=memo) == _outcome(vllm.plan_vllm, cell)
