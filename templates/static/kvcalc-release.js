// vLLM's older releases in the in-page calculator: the release rules of generator/engine/vllm_releases.py and
// generator/engine/vllm/ (versions, error_texts, plan), applied through kvcalc.js's hooks (V.batch, V.graphs,
// V.groups, V.tooLong, V.null_block). Loaded only once the reader picks a release other than the newest, or a
// pasted log names one; install(K) wraps the vLLM handler. Each release range's facts come from the catalog JSON
// (vllm.releases and vllm.release_facts, made by generator/kv/calculator.py from the engine's tables), so Python
// stays the one source; tests/kv/test_calculator_parity_node.py holds both to the same answers, release by release.
let K, lib;

/** parse_version: [major, minor, patch] of "0.9.2", "v0.10.1.1" or "0.8.5.post1"; null when it is not one. */
export const parse = (text) => {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[.+-].*)?$/.exec(String(text).trim());
  return m ? [+m[1], +m[2], +(m[3] || 0)] : null;
};
const cmp = (a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

// The catalog lists each range's rules as changes to the range before it (newer); these are the whole rules.
const whole = new WeakMap();
function ranges(W) {
  let rules = {};
  if (!whole.has(W)) whole.set(W, W.releases.map((r) => ({ ...r, rules: (rules = { ...rules, ...r.rules }) })));
  return whole.get(W);
}

/** The release range of the catalog's vLLM constants W (newest first) that holds a version; null outside them. */
export function rangeOf(text, W) {
  const v = parse(text);
  return !v || cmp(v, parse(W.version)) > 0 ? null : ranges(W).find((r) => cmp(parse(r.first), v) <= 0) || null;
}

/** The constants planVllm reads, and its hooks, for one request at release `v` (rules R) on the GPU `name`. */
function releaseV(W, v, R, name) {
  const F = W.release_facts, A = W.assumptions, G = W.geometry, n = name.toLowerCase();
  const has = (keys) => keys.some((k) => n.includes(k));
  const v0 = R.v0 === 2 || (R.v0 === 1 && new RegExp(F.pre_ampere).test(n));
  const gib = (b) => (R.gib_round ? lib.reprFloat(lib.roundTo(b / lib.GiB, 2)) : lib.fixed(b / lib.GiB, 2));
  const V = {
    ...W, version: v.join("."), default_utilization: R.util, too_long: R.too_long, no_memory: R.no_memory, null_block: R.null_block,
    mla_block: { ...W.mla_block, hopper: R.mla[0] ? W.mla_block.hopper : [], blackwell: R.mla[1] ? W.mla_block.blackwell : [] },
    assumptions: { ...A, non_torch_bytes: v0 ? A.non_torch_bytes_v0 : A.non_torch_bytes, sampler_bytes_per_logit: v0 ? F.v0_sampler : R.sampler,
      // counts_distributed_init and is_hopper_gpu: NCCL buffers of a TP rank in the non-torch term (every V0 start, V1 by release).
      nccl_rank_bytes: (v0 || R.nccl_init) && has(W.mla_block.hopper) ? A.nccl_init_bytes_per_rank_hopper : 0, v2_penalties: false,
      // retains_profiling_capture: the graph profile's capture stays in use at TP > 1 (kvcalc.js adds it when graphs are on).
      retained_capture: R.retained && has(W.mla_block.hopper) },
    geometry: R.hybrid ? G : { ...G, hybrid: { ...G.hybrid, too_old: F.hybrid_too_old.replace("{version}", v.join(".")) } },
    // batch_defaults_for: V0 by the length, V1 by the release's first tier the GPU meets.
    batch: (total, _name, len) => (v0 ? [F.v0_seqs, len > F.v0_chunk_above ? R.v0_chunk : Math.max(len, F.v0_min_tokens)]
      : R.batch.find(([least, names, excluded]) => total >= least && (!names.length || has(names)) && !has(excluded)).slice(3)),
    // graph_estimate_subtracted: the release's default on CUDA or ROCm, unless the V2 model runner of 0.22-0.28 takes the model.
    // kvcalc.js calls it once per request, before the budget: the model's V2 runner also warms up its own sampler
    // (sampler_bytes_per_logit(v2_runner=True)), so it sets this request's bytes per logit here.
    // From 0.27 the V2 sampler's penalty buffers leave the budget too (vllm_releases.v2_penalties_bytes).
    graphs: (s, g) => {
      const v2 = !v0 && v2Runner(R.v2, s.hf_config, g, has(W.mla_block.rocm));
      if (v2) Object.assign(V.assumptions, { sampler_bytes_per_logit: R.v2_sampler, v2_penalties: R.v2_penalties });
      return !s.enforce_eager && R.graphs[+has(W.mla_block.rocm)] && !(v2 && R.v2[4]);
    },
    // V0 had no hybrid allocator: every layer keeps every token in one block table.
    groups: v0 ? (g) => {
      if (g.globalHeadDim || g.globalKvHeads) lib.fail(`${g.modelType} layers of two head sizes are modelled on vLLM's V1 engine only`);
      return [{ kind: "full", window: null, layers: g.kinds.map((_, i) => i) }];
    } : undefined,
    tooLong: (V, len, needed, check, estimate, maxSeqLen) => {
      if (R.v0 === 2) return maxSeqLen <= 0 ? V.no_memory : V.too_long.replace("{max_model_len}", len).replace("{max_seq_len}", maxSeqLen);
      return V.too_long.replace("{max_model_len}", len).replace("{needed}", gib(needed)).replace("{available}", gib(check))
        .replace("{estimated_msg}", estimate > 0 ? R.estimated.replace("{estimate}", estimate) : "");
    },
  };
  return [V, gib];
}

/** runs_v2_runner for the release's row [model types or null, MoE types or null, quantized too, hybrid too, estimate 0,
 * architectures ROCm keeps on V1]. */
function v2Runner(row, hf, g, rocm) {
  if (!row || (g.kinds.includes("state") && !row[3])) return false;
  if (rocm && Array.isArray(hf.architectures) && hf.architectures.some((a) => row[5].includes(String(a)))) return false;
  const type = String(hf.model_type || ""), moe = lib.moeShape(lib.vTextConfig(hf))[0] > 0;
  return (row[0] === null || row[0].includes(type)) && (!moe || row[1] === null || row[1].includes(type)) && (row[2] || !lib.isObj(hf.quantization_config));
}

/** The release's log lines and "GPU KV cache size" count, from the figures planVllm gives (kv_cache_tokens_logged, plan_vllm). */
function relog(a, R, gib) {
  const log = a.log_lines, blocks = a.num_blocks, tok = K.tokens;
  if (R.available_line) log[0] = `Available KV cache memory: ${gib(a.available_kv_cache_bytes)} GiB`;
  else log.shift();
  if (R.tokens === "per_group") a.kv_cache_tokens = lib.fdiv(blocks, a.num_kv_cache_groups) * a.block_size;
  else if (R.tokens === "blocks") a.kv_cache_tokens = blocks * a.block_size;
  if (a.error !== null) return;
  log.pop();
  const size = `GPU KV cache size: ${tok(a.kv_cache_tokens)} tokens`, conc = `Maximum concurrency for ${tok(a.max_model_len)} tokens per request: ${lib.fixed(blocks / a.blocks_per_request, 2)}x`;
  if (R.one_line) log.push(`${size}, ${conc}`);
  else log.push(size, conc);
}

/** The constants and hooks planVllm takes for a release (recompute.js's, for the release a log names), or null
 * outside the catalog's releases. The log lines and token count planVllm prints stay the newest release's. */
export function releaseFor(text, cat, gpuName = "") {
  const range = rangeOf(text, cat.vllm);
  return range ? releaseV(cat.vllm, parse(text), range.rules, gpuName)[0] : null;
}

export function install(k) {
  if (K) return;
  K = k;
  lib = K.lib;
  const base = K.handlers.vllm;
  K.handlers.vllm = (r, cat) => {
    if (lib.get(r, "vllm_version") === null) return base(r, cat);
    const W = cat.vllm, range = rangeOf(r.vllm_version, W);
    if (!range) lib.fail(`the in-page calculator models vLLM ${W.releases[W.releases.length - 1].first} to ${W.version}`);
    const gpu = lib.has(r, "gpu") && lib.has(cat.gpus, String(r.gpu)) ? cat.gpus[String(r.gpu)] : null;
    const [V, gib] = releaseV(W, parse(r.vllm_version), range.rules, gpu ? String(gpu.name || r.gpu) : "");
    const a = base({ ...r, vllm_version: null }, cat, V);
    relog(a, range.rules, gib);
    if (a.assumptions) a.assumptions = W.assumptions;
    return a;
  };
}

/** The calculator form's part (kvcalc-ui.js): the range of the release the address names (a log's), and the
 * utilization default that follows the release while the reader keeps the one before. */
export function ui(k, cat, get, set, named) {
  install(k);
  const W = cat.vllm, util = () => ranges(W).find((x) => x.version === get("vr")).rules.util;
  if (named) set("vr", (rangeOf(named, W) || W).version);
  let held = W.default_utilization;
  return { util, follow: () => { if (+get("u") === held) set("u", String(util())); held = util(); } };
}
