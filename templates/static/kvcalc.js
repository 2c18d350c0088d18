// kvtriage's engine in the browser: generator/engine/{geometry,vllm}.py and requests.answer_request, line
// for line, for vLLM 0.33.0 (kvcalc-llama.js adds llama.cpp and Ollama, kvcalc-hybrid.js Mamba / Gated-DeltaNet
// state layers, kvcalc-release.js the older releases' rules through V's hooks: batch, graphs, groups, tooLong,
// null_block). Constants (budget model, error templates, dtype tables) come from the build's catalog JSON,
// so Python stays the one source.
// tests/test_calculator_parity.py runs both on the same requests in Chromium and compares every field.
const GiB = 2 ** 30, MiB = 2 ** 20;
class InputError extends Error {}   // vLLM/llama.cpp reject the request (VllmInputError, GeometryError, ...)
class StartupError extends Error {} // llama-server refuses to start (LlamaCppError)
const fail = (m) => { throw new InputError(m); };
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const isInt = (v) => typeof v === "number" && Number.isInteger(v);
const get = (o, k, d = null) => (o[k] === undefined || o[k] === null ? d : o[k]);
const has = (o, k) => Object.prototype.hasOwnProperty.call(o, k);
const sum = (a) => a.reduce((x, y) => x + y, 0);
// Integer floor division and ceil division that stay exact below 2^53 (Python // and cdiv).
const fdiv = (a, b) => { let q = Math.floor(a / b); if (q * b > a) q--; else if ((q + 1) * b <= a) q++; return q; };
const cdiv = (a, b) => -fdiv(-a, b);

// ---------------------------------------------------------------- Python's number formatting
// round-half-even of |x| * 10^n on the exact binary value, as Python's round() and format() do.
function decRound(x, n) {
  const neg = x < 0 || Object.is(x, -0), dv = new DataView(new ArrayBuffer(8));
  dv.setFloat64(0, Math.abs(x));
  const bits = dv.getBigUint64(0);
  let e = Number(bits >> 52n), m = bits & 0xfffffffffffffn;
  if (e) m |= 1n << 52n; else e = 1;
  e -= 1075;
  let num = m * 10n ** BigInt(n), den = 1n;
  if (e >= 0) num <<= BigInt(e); else den <<= BigInt(-e);
  let q = num / den;
  const r2 = 2n * (num - q * den);
  if (r2 > den || (r2 === den && q & 1n)) q++;
  return [neg, q];
}
const commas = (s) => s.replace(/\B(?=(\d{3})+(?!\d))/g, ",");
/** f"{x:.nf}" (with `group` true: f"{x:,.nf}"). */
export function fixed(x, n, group = false) {
  const [neg, q] = decRound(x, n);
  let s = q.toString().padStart(n + 1, "0"), i = n ? s.slice(0, -n) : s;
  if (group) i = commas(i);
  return (neg ? "-" : "") + i + (n ? "." + s.slice(-n) : "");
}
/** round(x, n) for a float. */
export const roundTo = (x, n) => Number(fixed(x, n));
/** round(x) to an int: half to even. */
export function roundInt(x) { const f = Math.floor(x), d = x - f; return d > 0.5 || (d === 0.5 && f % 2) ? f + 1 : f; }
/** repr(float) / str(float): 8.0, 1.75, 12.35, 1e-05, 1e+16. */
export function reprFloat(x) {
  if (Object.is(x, -0)) return "-0.0";
  let [mant, ex] = x.toExponential().split("e");
  const e = +ex, neg = mant[0] === "-", d = mant.replace(/^-/, "").replace(".", "");
  let s;
  if (e < -4 || e >= 16) s = d[0] + (d.length > 1 ? "." + d.slice(1) : "") + "e" + (e < 0 ? "-" : "+") + String(Math.abs(e)).padStart(2, "0");
  else if (e < 0) s = "0." + "0".repeat(-e - 1) + d;
  else s = d.slice(0, e + 1).padEnd(e + 1, "0") + "." + (d.slice(e + 1) || "0");
  return (neg ? "-" : "") + s;
}
/** Python repr of a str, an int, a float (floats must be marked by the caller) or a list of str. */
function repr(v) {
  if (Array.isArray(v)) return "[" + v.map(repr).join(", ") + "]";
  if (typeof v === "string") return v.includes("'") && !v.includes('"') ? `"${v}"` : `'${v.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  if (v === null || v === undefined) return "None";
  if (typeof v === "boolean") return v ? "True" : "False";
  return String(v);
}
const tok = (n) => commas(String(n)); // f"{n:,}"
export const gib = (b) => fixed(b / GiB, 2) + " GiB";
export const mib = (b) => fixed(b / MiB, 2, true) + " MiB";
export const kib = (b) => (b % 1024 === 0 ? tok(b / 1024) : fixed(b / 1024, 2, true)) + " KiB";
export const tokens = tok;

// ---------------------------------------------------------------- geometry.py
/** State layers (Mamba, Gated DeltaNet): kvcalc-hybrid.js's install() fills these in for a model that has them. */
export const hybrid = {};

export function geometry(config, G) {
  if (!isObj(config)) fail("config.json must be a JSON object");
  let cfg = config;
  if (isObj(config.text_config)) {
    cfg = { ...config.text_config };
    for (const k of ["torch_dtype", "dtype"]) if (!has(cfg, k) && has(config, k)) cfg[k] = config[k];
    if (!has(cfg, "model_type") && has(config, "model_type")) cfg.model_type = config.model_type;
  }
  const int = (key, required = true, minimum = 1) => {
    const v = get(cfg, key);
    if (v === null) { if (required) fail(`config.json lacks \`${key}\``); return null; }
    if (!isInt(v)) fail(`\`${key}\` must be an integer, got ${repr(v)}`);
    if (v < minimum) fail(`\`${key}\` must be at least ${minimum}, got ${v}`);
    return v;
  };
  const modelType = String(cfg.model_type || "");
  const layers = int("num_hidden_layers"), heads = int("num_attention_heads");
  const kvHeads = int("num_key_value_heads", false) || heads, hidden = int("hidden_size");
  const headDim = int("head_dim", false) || fdiv(hidden, heads), vocab = int("vocab_size"), maxPos = int("max_position_embeddings");
  let dtype = cfg.torch_dtype || cfg.dtype || "bfloat16";
  if (!has(G.dtype_bytes, dtype)) fail(`\`torch_dtype\` ${repr(dtype)} is not one of ${Object.keys(G.dtype_bytes).join(", ")}`);
  if (dtype === "float32") dtype = "bfloat16";
  let window = has(cfg, "sliding_window") ? int("sliding_window", false, 0) : get(G.default_window, modelType);
  if (window === 0) window = null;
  const qwen = G.qwen_style.includes(modelType);
  if (qwen && !cfg.use_sliding_window) window = null;
  const mla = get(cfg, "kv_lora_rank") !== null ? { rank: int("kv_lora_rank"), rope: int("qk_rope_head_dim") } : null;
  const rope = get(cfg, "rope_scaling");
  if (rope !== null && !isObj(rope)) fail("`rope_scaling` must be an object or null");
  let kinds = hybrid.kinds?.(cfg, modelType, layers, G);
  const types = get(cfg, "layer_types");
  if (kinds);
  else if (types !== null) {
    if (!Array.isArray(types) || types.length !== layers) fail(`\`layer_types\` must list ${layers} entries, one per layer`);
    kinds = types.map((t) => has(G.hf_layer_type, t) ? G.hf_layer_type[t] : fail(`\`layer_types\` entry ${repr(t)} is not one of ${Object.keys(G.hf_layer_type).join(", ")}`));
  } else if (modelType.startsWith("llama4") && cfg.attention_chunk_size) {
    const noRope = cfg.no_rope_layers && cfg.no_rope_layers.length ? cfg.no_rope_layers : [...Array(layers).keys()].map((i) => +((i + 1) % 4 !== 0));
    if (noRope.length !== layers) fail(`\`no_rope_layers\` must list ${layers} entries`);
    kinds = noRope.map((f) => (f ? "chunked" : "full"));
  } else if (window === null) kinds = Array(layers).fill("full");
  else if (qwen) {
    const first = has(cfg, "max_window_layers") ? cfg.max_window_layers : 28;
    if (!isInt(first)) fail("`max_window_layers` must be an integer");
    kinds = [...Array(layers).keys()].map((i) => (i >= first ? "sliding" : "full"));
    if (new Set(kinds).size > 1) fail(`vLLM does not support sliding window on only some layers of a Qwen2-style model (max_window_layers=${first}, num_hidden_layers=${layers})`);
  } else {
    const p = has(cfg, "sliding_window_pattern") ? cfg.sliding_window_pattern : get(G.default_pattern, modelType);
    kinds = isInt(p) && p > 1 ? [...Array(layers).keys()].map((i) => ((i + 1) % p ? "sliding" : "full")) : Array(layers).fill("sliding");
  }
  // Gemma 4 (kvcalc-hybrid.js): its kinds, with KV-shared layers keeping none, replace these below (no layer type is lost).
  const g4 = G.gemma4.includes(modelType) && hybrid.gemma4(cfg, kinds, int);
  if (kinds.includes("sliding") && window === null) fail("`layer_types` names sliding layers but `sliding_window` is not set");
  const state = hybrid.state?.(cfg, kinds, modelType, hidden, G);
  return {
    modelType, layers, heads, kvHeads, headDim, hidden, inter: int("intermediate_size", false), vocab, dtype,
    dtypeBytes: G.dtype_bytes[dtype], maxPos, kinds, window: kinds.includes("sliding") ? window : null,
    chunk: kinds.includes("chunked") ? int("attention_chunk_size", false) : null, mla, tied: !!get(cfg, "tie_word_embeddings", false), state,
    ...g4,
  };
}

// ---------------------------------------------------------------- vllm.py (0.33.0)

function kvPerLayer(g, dtype, tp, V) {
  if (!V.kv_cache_dtypes.includes(dtype)) fail(`Invalid kv_cache_dtype: ${repr(dtype)}. Valid values are: ${repr(V.kv_cache_dtypes)}`);
  if ((dtype === "float16" || dtype === "bfloat16") && dtype !== g.dtype)
    fail(`kv_cache_dtype="${dtype}" is incompatible with dtype="${g.dtype}". Please set \`--kv-cache-dtype\` to \`auto\` or \`${g.dtype}\`.`);
  if (has(V.mla_packed, dtype)) {
    if (!g.mla) fail(`kv_cache_dtype ${dtype} exists only for MLA models (DeepSeek V3.2)`);
    return V.mla_packed[dtype];
  }
  let el;
  if (dtype === "auto" || dtype === "float16" || dtype === "bfloat16") el = g.dtypeBytes;
  else if (V.one_byte_kv_dtypes.includes(dtype)) el = 1;
  else fail(`kv_cache_dtype ${dtype} is a packed format this calculator does not model; use one of auto, ${V.one_byte_kv_dtypes.join(", ")}`);
  return g.mla ? (g.mla.rank + g.mla.rope) * el : 2 * Math.max(1, fdiv(g.kvHeads, tp)) * g.headDim * el;
}


function ropeSets(cfg, V) {
  let p = get(cfg, "rope_parameters");
  if (p === null) p = get(cfg, "rope_scaling");
  if (!isObj(p) || !Object.keys(p).length) return V.rope_keys.some((k) => has(cfg, k)) ? [{ rope_type: "default" }] : [];
  const nested = Object.values(p).filter(isObj);
  return nested.length && nested.length === Object.keys(p).length ? nested.filter((q) => Object.keys(q).length) : [p];
}

/** derive_max_model_len. JSON cannot tell 4 from 4.0, so a RoPE factor always counts as a float. */
export function deriveMaxLen(cfg, V) {
  const text = isObj(cfg.text_config) ? cfg.text_config : cfg;
  let derived = null, key = null, isFloat = false;
  for (const name of V.max_len_keys) {
    const v = text[name];
    if (typeof v === "number" && (derived === null || v < derived)) { key = name; derived = v; }
  }
  if (typeof text.model_max_length === "number" && text.model_max_length) { key = "model_max_length"; derived = text.model_max_length; }
  if (derived === null) derived = V.default_max_len;
  const sets = ropeSets(cfg, V);
  if (sets.length && !String(cfg.model_type || "").includes("gemma3")) {
    let factor = 1.0;
    for (const p of sets) if (!V.rope_scaled.includes(get(p, "rope_type", get(p, "type", "default")))) factor = has(p, "factor") ? p.factor : factor;
    derived *= factor === null ? 1.0 : factor;
    isFloat = true;
  }
  let dflt = Math.trunc(derived);
  if (sets.some((p) => get(p, "rope_type", get(p, "type")) === "longrope")) dflt = Math.trunc(get(text, "original_max_position_embeddings", derived));
  const mml = cfg.model_max_length;
  return { value: Math.trunc(derived), dflt, key, printed: isFloat ? reprFloat(derived) : String(derived), mml: isInt(mml) ? mml : null };
}

const stageSplit = (layers, pp) => {
  const share = fdiv(layers, pp), parts = Array(pp).fill(share);
  for (let i = 2; i < (layers - share * pp) + 2; i++) parts[pp - i] += 1;
  return parts;
};

function kvGroups(g) {
  const win = (k) => (k === "sliding" ? g.window : k === "chunked" ? g.chunk : null);
  const buckets = new Map();
  // MLP/MoE-only layers ("none") register no cache.
  g.kinds.forEach((k, i) => { if (k === "none") return; if (!buckets.has(k)) buckets.set(k, []); buckets.get(k).push(i); });
  if (buckets.size === 1) { const [[kind, layers]] = buckets; return [{ kind, window: win(kind), layers }]; }
  const sizes = [...buckets.values()].map((l) => l.length);
  let size = Math.min(...sizes);
  if (Math.max(...sizes) < Math.min(...sizes) * 1.5) size = Math.max(...sizes);
  const out = [];
  for (const [kind, layers] of buckets) {
    const count = cdiv(layers.length, size);
    for (let i = 0; i < count; i++) out.push({ kind, window: win(kind), layers: layers.filter((_, j) => j % count === i) });
  }
  return out;
}

// A state group holds one page per request (MambaSpec, --mamba-cache-mode none).
const groupBlocks = (gr, len, b, fly, bs = b * gr.scale || b) =>
  gr.kind === "state" ? 1 : gr.kind === "sliding" ? cdiv(Math.min(gr.window - 1 + fly, len), bs) + 1
    : gr.kind === "chunked" ? cdiv(Math.min(gr.window + fly, len), bs) : cdiv(len, bs);
const blocksPerRequest = (groups, len, bs, fly) => sum(groups.map((gr) => groupBlocks(gr, len, bs, fly)));

export function largestFit(check, bpb, groups, upper, bs, fly) {
  const fits = (n) => bpb * blocksPerRequest(groups, n, bs, fly) <= check;
  if (upper < 1 || !fits(1)) return 0;
  let lo = 1, hi = upper, best = 1;
  while (lo <= hi) { const mid = fdiv(lo + hi, 2); if (fits(mid)) { best = mid; lo = mid + 1; } else hi = mid - 1; }
  return best;
}

function batchDefaults(total, name) {
  const n = name.toLowerCase();
  if (total >= 160 * GiB) return [1024, 16384];
  if (total >= 70 * GiB && !n.includes("a100") && !n.includes("gb10")) return [1024, 8192];
  return [256, 2048];
}

function captureSizes(seqs, batched) {
  const largest = Math.min(seqs * 2, 512), s = [1, 2, 4];
  for (let i = 8; i < 256; i += 8) s.push(i);
  for (let i = 256; i <= largest; i += 16) s.push(i);
  const out = s.filter((x) => x <= largest);
  if (batched <= largest && !out.includes(batched)) out.push(batched);
  return out;
}

const asInt = (cfg, ...keys) => { for (const k of keys) if (isInt(cfg[k])) return cfg[k]; return null; };
const vTextConfig = (cfg) => (isObj(cfg.text_config) ? cfg.text_config : cfg);

function moeShape(cfg) {
  const experts = asInt(cfg, "num_local_experts", "num_experts", "n_routed_experts") || 0;
  if (experts <= 1) return [0, 0, 0, 0];
  const topK = asInt(cfg, "num_experts_per_tok", "moe_topk", "top_k", "top_k_experts") || 2;
  const inter = asInt(cfg, "moe_intermediate_size", "intermediate_size") || 0;
  let shared = asInt(cfg, "shared_expert_intermediate_size") || 0;
  if (!shared && asInt(cfg, "n_shared_experts")) shared = cfg.n_shared_experts * inter;
  return [experts, topK, inter, shared];
}

function quantMillibits(cfg, g, V) {
  const dense = g.dtypeBytes * 8000, qc = cfg.quantization_config;
  if (!isObj(qc)) return [dense, dense];
  const method = String(qc.quant_method || "").toLowerCase();
  if (method === "mxfp4" || method === "gpt_oss_mxfp4") return [dense, 4250];
  if (["fp8", "fbgemm_fp8", "modelopt"].includes(method)) return [8000, 8000];
  let bits = asInt(qc, "bits", "w_bit", "num_bits");
  if (bits === null && method === "compressed-tensors")
    for (const grp of Object.values(qc.config_groups || {})) {
      const w = isObj(grp) ? grp.weights : null;
      if (isObj(w) && isInt(w.num_bits)) { bits = w.num_bits; break; }
    }
  if (method === "bitsandbytes") bits = qc.load_in_4bit ? 4 : 8;
  if (bits === null) return [dense, dense];
  const scaled = bits * 1000 + (bits < 8 ? V.assumptions.quantized_scale_bits_per_weight_x1000 : 0);
  return [scaled, scaled];
}

/** weight_shape: returns stageBytes(layers, first, last) as a BigInt (millibit sums pass 2^53). */
function weightShape(hf, g, V) {
  const cfg = vTextConfig(hf), { hidden, heads, kvHeads, headDim } = g;
  let attention;
  if (g.mla) {
    const qr = asInt(cfg, "q_lora_rank") || 0, nope = asInt(cfg, "qk_nope_head_dim") || headDim, vd = asInt(cfg, "v_head_dim") || headDim, rope = g.mla.rope;
    const q = qr ? hidden * qr + qr * heads * (nope + rope) : hidden * heads * (nope + rope);
    attention = q + hidden * (g.mla.rank + rope) + g.mla.rank * heads * (nope + vd) + heads * vd * hidden;
  } else attention = hidden * headDim * (2 * heads + 2 * kvHeads);
  const [experts, , eInter, shared] = moeShape(cfg), inter = g.inter || 4 * hidden;
  let expertAvg = 0n, mlp;
  if (experts) {
    const dense = BigInt(asInt(cfg, "first_k_dense_replace") || 0), L = BigInt(g.layers), H = BigInt(hidden);
    expertAvg = (BigInt(experts * eInter + shared) * 3n * H * (L - dense)) / L;
    mlp = (3n * H * BigInt(inter) * dense) / L + H * BigInt(experts);
  } else mlp = BigInt(3 * hidden * inter);
  const [ple, own] = g.w4 || [0n, attention];
  const [dmb, emb] = quantMillibits(hf, g, V).map(BigInt), layerParams = BigInt(own) + mlp;
  const emb16 = BigInt(g.vocab * hidden) * 16000n, head16 = g.tied ? 0n : emb16;
  return (layers, first, last) => (BigInt(layers) * (layerParams * dmb + expertAvg * emb) + (first ? emb16 + ple : 0n) + (last ? head16 : 0n)) / 8000n;
}

function activationPeak(g, hf, tp, batched, seqs, A) {
  const [experts, topK, eInter, shared] = moeShape(vTextConfig(hf));
  const inter = experts ? topK * eInter + shared : g.inter || 4 * g.hidden;
  const perToken = (fdiv(A.activation_intermediate_factor * inter, tp) + A.activation_hidden_factor * g.hidden) * g.dtypeBytes;
  // The sampler warm-up has one row per dummy request: min(max_num_seqs, max_num_batched_tokens).
  return Math.max(batched * perToken, Math.min(seqs, batched) * g.vocab * A.sampler_bytes_per_logit);
}

const formatGib = (b) => reprFloat(roundTo(b / GiB, 2));
const positive = (name, v) => { if (v !== null && (!isInt(v) || v < 1)) fail(`${name} must be a positive integer, got ${repr(v)}`); };

/** vllm_releases.default_mla_block_size at the catalog's release: the block size the MLA backend forces. */
function mlaBlockSize(name, V) {
  const n = (name || "").toLowerCase(), any = (keys) => keys.some((k) => n.includes(k));
  if (any(V.mla_block.rocm)) return null;
  if (any(V.mla_block.blackwell)) return 128;
  return any(V.mla_block.hopper) ? 64 : null;
}

/** resolve_settings: validate like vLLM and fill its defaults. `s` uses VllmInputs' field names. */
function resolve(s, V) {
  let g;
  try { g = geometry(s.hf_config, V.geometry); } catch (e) { fail(`hf_config: ${e.message}`); }
  for (const k of ["tensor_parallel_size", "pipeline_parallel_size", "gpu_count", "block_size", "max_num_batched_tokens", "max_num_seqs"]) positive(k, s[k]);
  const tp = s.tensor_parallel_size, pp = s.pipeline_parallel_size;
  if (tp * pp > s.gpu_count) fail(`tensor_parallel_size x pipeline_parallel_size = ${tp * pp} needs ${tp * pp} GPUs; gpu_count is ${s.gpu_count}`);
  if (g.heads % tp) fail(`Total number of attention heads (${g.heads}) must be divisible by tensor parallel size (${tp}).`);
  if (!g.mla && tp > g.kvHeads && tp % g.kvHeads) fail(`tensor_parallel_size ${tp} must be a multiple of the ${g.kvHeads} KV heads to replicate them`);
  if (pp > g.layers) fail(`pipeline_parallel_size ${pp} exceeds the ${g.layers} layers`);
  const util = s.gpu_memory_utilization === null ? V.default_utilization : s.gpu_memory_utilization;
  if (!(util > 0 && util <= 1)) fail(`gpu_memory_utilization must be in (0, 1], got ${reprFloat(util)}`);
  if (s.kv_cache_memory_bytes === null && s.available_kv_cache_bytes === null && !s.gpu_total_bytes)
    fail("give the GPU (gpu or gpu_memory_gib), kv_cache_memory_bytes or available_kv_cache_bytes");
  const perLayer = kvPerLayer(g, s.kv_cache_dtype, tp, V);
  const block = g.state ? hybrid.block(g, tp, s.block_size, perLayer, V.geometry.hybrid) : s.block_size || (g.mla ? mlaBlockSize(s.gpu_name, V) : null) || V.block_size;
  const d = deriveMaxLen(s.hf_config, V), ml = s.max_model_len;
  if (ml !== null && ml !== -1) {
    positive("max_model_len", ml);
    if (ml > d.value && (d.mml === null || ml > d.mml))
      fail(`User-specified max_model_len (${ml}) is greater than the derived max_model_len (${d.key}=${d.printed} or model_max_length=${repr(d.mml)} in model's config.json). ` + V.too_long_tail);
  }
  const len = ml === null || ml === -1 ? d.dflt : ml, [seqs, toks] = (V.batch || batchDefaults)(s.gpu_total_bytes || 0, s.gpu_name, len);
  const maxSeqs = s.max_num_seqs || seqs;
  const batched = s.max_num_batched_tokens === null ? Math.min(maxSeqs * len, toks) : s.max_num_batched_tokens;
  // graphs: whether the CUDA-graph estimate leaves the budget (older releases: kvcalc-release.js's V.graphs).
  return [g, d, { ...s, gpu_memory_utilization: util, block_size: block, max_num_seqs: maxSeqs, max_num_batched_tokens: batched, graphs: V.graphs ? V.graphs(s, g) : !s.enforce_eager }];
}

function stageBudget(s, g, shape, stage, layers, V) {
  const A = V.assumptions, tp = s.tensor_parallel_size, pp = s.pipeline_parallel_size;
  const own = shape(layers, stage === 0, stage === pp - 1);
  const weights = Number(s.weights_bytes !== null ? (BigInt(s.weights_bytes) * own) / shape(g.layers, true, true) / BigInt(tp) : own / BigInt(tp));
  const unified = RegExp(A.unified_memory_gpus, "i").test(s.gpu_name);  // budget.py unified_memory_gpu
  // plan.py _stage_budget: releases that count the distributed init add a TP rank's NCCL buffers (kvcalc-release.js).
  const nccl = tp * pp > 1 ? A.non_torch_extra_bytes_tp + (tp > 1 ? A.nccl_rank_bytes || 0 : 0) : 0;
  // plan.py _stage_costs: the V2 sampler's penalty buffers on the last stage (the newest release: V.v2_penalties;
  // older ones: kvcalc-release.js sets assumptions.v2_penalties).
  const penalties = (A.v2_penalties ?? V.v2_penalties) && stage === pp - 1 ? s.max_num_seqs * (g.vocab + Math.ceil(g.vocab / 32)) * 4 : 0;
  const estimate = captureSizes(s.max_num_seqs, s.max_num_batched_tokens).length * layers * A.cudagraph_bytes_per_size_per_layer;
  // plan.py _stage_costs: 0.18-0.19 keep the graph profile's capture in use at TP > 1 (kvcalc-release.js retained_capture).
  const retained = A.retained_capture && tp > 1 && !s.enforce_eager ? estimate : 0;
  const nonTorch = A.non_torch_bytes + nccl + (unified ? A.unified_memory_bytes : 0) + penalties + retained;
  const activation = activationPeak(g, s.hf_config, tp, s.max_num_batched_tokens, s.max_num_seqs, A);
  const cudagraph = !s.graphs ? 0 : estimate;
  const requested = Math.ceil(s.gpu_total_bytes * s.gpu_memory_utilization);
  return { requested_bytes: requested, weights_bytes: weights, non_torch_bytes: nonTorch, activation_peak_bytes: activation, cudagraph_bytes: cudagraph };
}
const availableOf = (b) => b.requested_bytes - b.weights_bytes - b.non_torch_bytes - b.activation_peak_bytes - b.cudagraph_bytes;

function tooLongText(V, len, needed, available, estimate) {
  const msg = estimate > 0 ? `Based on the available memory, the estimated maximum model length is ${estimate}. ` : "";
  return V.too_long.replace("{max_model_len}", len).replace("{needed}", formatGib(needed)).replace("{available}", formatGib(available)).replace("{estimated_msg}", msg);
}

/** plan_vllm for vLLM 0.33.0: the same fields as requests.vllm_result_dict. */
export function planVllm(input, V) {
  const [g, d, s] = resolve(input, V);
  const tp = s.tensor_parallel_size, pp = s.pipeline_parallel_size, bs = s.block_size;
  let perLayer = kvPerLayer(g, s.kv_cache_dtype, tp, V), groups = (V.groups || kvGroups)(g, s);
  if (g.g4) [groups, perLayer] = g.g4(g, groups, perLayer, s, V);
  const page = bs * perLayer;
  const fly = (pp + 1) * s.max_num_batched_tokens, shape = weightShape(s.hf_config, g, V);
  const budget = s.kv_cache_memory_bytes === null && s.available_kv_cache_bytes === null;
  const stages = [];
  let start = 0;
  stageSplit(g.layers, pp).forEach((layers, stage) => {
    const end = start + layers;
    const bpb = Math.max(...groups.map((gr) => gr.layers.filter((i) => i >= start && i < end).length)) * page;
    const kv = g.kinds.slice(start, end).filter((k) => k !== "state" && k !== "none").length; // layers keeping per-token KV
    start = end;
    let breakdown = null, available;
    if (s.available_kv_cache_bytes !== null) available = s.available_kv_cache_bytes;
    else if (s.kv_cache_memory_bytes !== null) available = s.kv_cache_memory_bytes;
    else { breakdown = stageBudget(s, g, shape, stage, layers, V); available = availableOf(breakdown); }
    stages.push({ stage, layers, kv, bpb, available, blocks: fdiv(Math.max(available, 0), bpb), breakdown });
  });
  const checks = stages.map((st) => st.available - V.null_block * st.bpb);
  const ml = s.max_model_len, auto = ml === -1, unset = ml === null || auto;
  const upper = unset ? d.dflt : Math.max(ml, d.dflt);
  const estimates = stages.map((st, i) => (checks[i] > 0 ? largestFit(checks[i], st.bpb, groups, upper, bs, fly) : 0));
  const fit = Math.min(...estimates), log = [];
  let error = null, len = unset ? d.dflt : ml;
  if (auto) {
    const memory = `${formatGib(checks[estimates.indexOf(fit)])} GiB GPU`;
    if (fit <= 0) error = V.cannot_auto_fit;
    else if (fit >= len) log.push(`Auto-fit max_model_len: full model context length ${len} fits in available KV cache memory (${memory})`);
    else { log.push(`Auto-fit max_model_len: reduced from ${len} to ${fit} to fit in available KV cache memory (${memory})`); len = fit; }
  }
  const perReq = blocksPerRequest(groups, len, bs, fly);
  let binding = 0;
  stages.forEach((st, i) => { const b = stages[binding]; if (st.blocks < b.blocks || (st.blocks === b.blocks && st.bpb > b.bpb)) binding = i; });
  let needed = stages[binding].bpb * perReq;
  if (error === null)
    for (const [i, st] of stages.entries()) {
      const check = checks[i];
      if (check <= 0) error = V.no_memory;
      else if (st.bpb * perReq > check) error = (V.tooLong || tooLongText)(V, len, st.bpb * perReq, check, largestFit(check, st.bpb, groups, len, bs, fly), st.blocks * bs);
      if (error) { binding = i; needed = st.bpb * perReq; break; }
    }
  const blocks = error ? stages[binding].blocks : Math.min(...stages.map((st) => st.blocks));
  const conc = blocks / perReq, kvTokens = Math.trunc(blocks / perReq * len), chosen = stages[binding];
  log.unshift(`Available KV cache memory: ${formatGib(chosen.available)} GiB`);
  if (chosen.breakdown && chosen.breakdown.cudagraph_bytes > 0 && s.gpu_total_bytes) {
    const u = s.gpu_memory_utilization, delta = chosen.breakdown.cudagraph_bytes / s.gpu_total_bytes;
    log.splice(1, 0, V.cudagraph_note.replace("{current}", fixed(u, 4)).replace("{without}", fixed(roundTo(u - delta, 4), 4)).replace("{increase}", fixed(Math.min(roundTo(u + delta, 4), 1.0), 4)));
  }
  if (error === null) log.push(`GPU KV cache size: ${tok(kvTokens)} tokens, Maximum concurrency for ${tok(len)} tokens per request: ${fixed(conc, 2)}x`);
  return {
    fits: error === null, num_blocks: blocks, bytes_per_block: chosen.bpb, kv_cache_tokens: kvTokens, max_concurrency: roundTo(conc, 2),
    estimated_max_model_len: fit, error, available_kv_cache_bytes: chosen.available, breakdown: chosen.breakdown, vllm_version: V.version,
    max_model_len: len, derived_max_model_len: d.value, kv_cache_dtype: s.kv_cache_dtype, block_size: bs, tensor_parallel_size: tp,
    pipeline_parallel_size: pp, gpu_memory_utilization: s.gpu_memory_utilization, max_num_batched_tokens: s.max_num_batched_tokens,
    max_num_seqs: s.max_num_seqs, enforce_eager: s.enforce_eager, kv_bytes_per_token_per_layer: perLayer, kv_bytes_per_token: g.kvBytes?.(stages, chosen) ?? perLayer * chosen.kv,
    num_kv_cache_groups: groups.length, blocks_per_request: perReq, needed_bytes: needed, check_bytes: checks[chosen.stage], in_flight_tokens: fly,
    binding_stage: chosen.stage, log_lines: log, assumptions: budget ? V.assumptions : null,
  };
}

const LEVER_ORDER = ["clamp_max_model_len", "kv_cache_dtype_fp8", "enforce_eager", "fp8_and_eager", "utilization", "tensor_parallel", "quantization", "gpu"];

/** vllm_remediation (no alternative checkpoints or GPUs): the levers, best first. */
export function vllmLevers(input, V) {
  const [g, d, resolved] = resolve(input, V), ml = input.max_model_len;
  const requested = ml === null || ml === -1 ? d.dflt : ml, out = [];
  const lever = (kind, label, flags, changes, note = "") => {
    let auto;
    try { auto = planVllm({ ...input, ...changes, max_model_len: -1 }, V); } catch (e) { if (e instanceof InputError) return; throw e; }
    out.push({ kind, label, flags, fits_requested: auto.error === null && auto.max_model_len >= requested,
      max_model_len_that_fits: auto.error === null ? auto.estimated_max_model_len : 0, num_blocks: auto.num_blocks,
      available_kv_cache_bytes: auto.available_kv_cache_bytes, note });
  };
  lever("clamp_max_model_len", "", [], {});
  if (out.length) {
    const b = out.pop(), n = b.max_model_len_that_fits;
    if (n > 0) out.push({ ...b, label: `--max-model-len ${n}`, flags: [["--max-model-len", String(n)]], fits_requested: false, note: "the largest length that starts with everything else unchanged" });
  }
  const fp8 = input.kv_cache_dtype === "auto" && g.dtypeBytes > 1;
  if (fp8) lever("kv_cache_dtype_fp8", "--kv-cache-dtype fp8", [["--kv-cache-dtype", "fp8"]], { kv_cache_dtype: "fp8" }, "halves bytes per token");
  if (resolved.graphs && input.kv_cache_memory_bytes === null) {
    lever("enforce_eager", "--enforce-eager", [["--enforce-eager", ""]], { enforce_eager: true }, "no CUDA graphs: slower decoding");
    if (fp8) lever("fp8_and_eager", "--kv-cache-dtype fp8 --enforce-eager", [["--kv-cache-dtype", "fp8"], ["--enforce-eager", ""]], { kv_cache_dtype: "fp8", enforce_eager: true });
  }
  if (input.kv_cache_memory_bytes === null && resolved.gpu_memory_utilization < 0.95)
    lever("utilization", "--gpu-memory-utilization 0.95", [["--gpu-memory-utilization", "0.95"]], { gpu_memory_utilization: 0.95 }, "needs that much memory free at startup");
  let tp = 1;
  while (tp < input.tensor_parallel_size + 1) tp *= 2;
  if (tp * input.pipeline_parallel_size <= input.gpu_count) lever("tensor_parallel", `--tensor-parallel-size ${tp}`, [["--tensor-parallel-size", String(tp)]], { tensor_parallel_size: tp });
  const key = (l) => [+!l.fits_requested, -l.max_model_len_that_fits, LEVER_ORDER.indexOf(l.kind)];
  return out.sort((a, b) => { const x = key(a), y = key(b); for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] - y[i]; return a.label < b.label ? -1 : a.label > b.label ? 1 : 0; });
}

/** Lever.serve_flags: the reader's flags, the lever's, and --max-model-len when the lever alone falls short. */
export function serveFlags(l, base = []) {
  const own = new Set(l.flags.map((f) => f[0]));
  const flags = [...base.filter((f) => !own.has(f[0])), ...l.flags];
  if (!["clamp_max_model_len", "quantization", "gpu"].includes(l.kind) && !l.fits_requested && l.max_model_len_that_fits > 0) flags.push(["--max-model-len", String(l.max_model_len_that_fits)]);
  return flags;
}
export const serveCommand = (model, flags) => ["vllm", "serve", model, ...flags.map(([f, v]) => (v === "" ? f : `${f} ${v}`))].join(" ");

// ---------------------------------------------------------------- requests.py (the batch API)
const VLLM_KEYS = new Set(["engine", "id", "model", "hf_config", "gpu", "gpu_memory_gib", "gpu_count", "tensor_parallel_size", "pipeline_parallel_size", "max_model_len", "kv_cache_dtype", "block_size", "gpu_memory_utilization", "kv_cache_memory_bytes", "weights_gib", "max_num_batched_tokens", "max_num_seqs", "enforce_eager", "vllm_version", "available_kv_cache_bytes"]);

function humanInt(v, name) {
  if (isInt(v)) return v;
  const m = typeof v === "string" ? /^(\d+(?:\.\d+)?)([kKmMgGtT]?)$/.exec(v.trim()) : null;
  if (!m) fail(`${name} must be an integer like 32768, 32k or 32K, got ${repr(v)}`);
  const dec = { k: 1e3, m: 1e6, g: 1e9, t: 1e12 }, bin = { K: 2 ** 10, M: 2 ** 20, G: 2 ** 30, T: 2 ** 40 };
  if (m[1].includes(".") && !dec[m[2]]) fail(`${name} ${repr(v)}: decimals need a lower-case suffix (k, m, g, t)`);
  return bin[m[2]] ? parseInt(m[1], 10) * bin[m[2]] : Math.trunc(parseFloat(m[1]) * (dec[m[2]] || 1));
}
function posFloat(r, k) {
  const v = get(r, k);
  if (v === null) return null;
  if (typeof v !== "number" || !isFinite(v) || v <= 0) fail(`${k} must be a positive number, got ${repr(v)}`);
  return v;
}
function optInt(r, k, human = false) {
  const v = get(r, k);
  if (v === null) return null;
  if (human) return humanInt(v, k);
  if (!isInt(v)) fail(`${k} must be an integer, got ${repr(v)}`);
  return v;
}
const lookup = (cat, key, what) => (has(cat, key) ? cat[key] : fail(`unknown ${what} ${repr(key)}`));

/** vllm_inputs_from_request. cat.models: "model-variant" -> {hf_config, weights_bytes, repo}; cat.gpus: id -> {total_bytes, name}. */
export function vllmInputs(r, cat) {
  const unknown = Object.keys(r).filter((k) => !VLLM_KEYS.has(k)).sort();
  if (unknown.length) fail(`unknown key(s) ${unknown.map(repr).join(", ")}; use the long flags of \`kvtriage kv vllm\` in snake_case`);
  if (has(r, "model") === has(r, "hf_config")) fail("give exactly one of model or hf_config");
  if (get(r, "vllm_version") !== null && r.vllm_version !== cat.vllm.version) fail(`the in-page calculator models vLLM ${cat.vllm.version} only`);
  let hf, weights = null;
  if (has(r, "model")) { const e = lookup(cat.models, String(r.model), "model"); hf = e.hf_config; weights = get(e, "weights_bytes"); } else hf = r.hf_config;
  if (!isObj(hf)) fail("hf_config must be the config.json object");
  const wg = posFloat(r, "weights_gib");
  if (wg !== null) weights = roundInt(wg * GiB);
  if (has(r, "gpu") && has(r, "gpu_memory_gib")) fail("give gpu or gpu_memory_gib, not both");
  let total = null, name = "";
  if (has(r, "gpu")) { const e = lookup(cat.gpus, String(r.gpu), "gpu"); total = e.total_bytes; name = String(e.name || r.gpu); }
  else if (has(r, "gpu_memory_gib")) total = roundInt(posFloat(r, "gpu_memory_gib") * GiB);
  const eager = get(r, "enforce_eager", false), dtype = get(r, "kv_cache_dtype", "auto");
  if (typeof eager !== "boolean") fail(`enforce_eager must be true or false, got ${repr(eager)}`);
  if (typeof dtype !== "string") fail(`kv_cache_dtype must be a string, got ${repr(dtype)}`);
  const tp = optInt(r, "tensor_parallel_size") || 1, pp = optInt(r, "pipeline_parallel_size") || 1, mml = get(r, "max_model_len");
  return {
    hf_config: hf, gpu_total_bytes: total, gpu_name: name, gpu_count: optInt(r, "gpu_count") || Math.max(1, tp * pp),
    tensor_parallel_size: tp, pipeline_parallel_size: pp, max_model_len: mml === null ? null : mml === "auto" || mml === -1 ? -1 : humanInt(mml, "max_model_len"),
    kv_cache_dtype: dtype, block_size: optInt(r, "block_size"), gpu_memory_utilization: posFloat(r, "gpu_memory_utilization"),
    kv_cache_memory_bytes: optInt(r, "kv_cache_memory_bytes", true), available_kv_cache_bytes: optInt(r, "available_kv_cache_bytes"),
    weights_bytes: weights, max_num_batched_tokens: optInt(r, "max_num_batched_tokens", true), max_num_seqs: optInt(r, "max_num_seqs"), enforce_eager: eager,
  };
}

function answerVllm(r, cat, V = cat.vllm) {
  const s = vllmInputs(r, cat), out = planVllm(s, V);
  if (!out.fits) {
    const id = String(get(r, "model", "MODEL")), e = has(r, "model") ? cat.models[id] : null, model = (e && e.repo) || id;
    const base = s.gpu_memory_utilization !== null ? [["--gpu-memory-utilization", reprFloat(s.gpu_memory_utilization)]] : [];
    out.remediation = vllmLevers(s, V).map((l) => ({ ...l, command: l.flags.length ? serveCommand(model, serveFlags(l, base)) : null }));
  }
  return out;
}

/** Engine handlers; kvcalc-llama.js adds llamacpp and ollama when a page needs them. */
export const handlers = { vllm: answerVllm };

/** requests.answer_request (and ollama.answer_ollama_request for "ollama"): never throws for bad input. */
export function answer(r, cat) {
  if (!isObj(r)) return { error_input: "a request must be a JSON object" };
  const engine = r.engine, echo = has(r, "id") ? { id: r.id } : {};
  const handler = handlers[engine];
  if (!handler) return { ...echo, error_input: `unknown engine ${repr(engine)}; use one of llamacpp, vllm` };
  try { return { ...echo, engine, ...handler(r, cat) }; } catch (e) {
    if (e instanceof StartupError) return { ...echo, engine, startup_error: e.message };
    if (e instanceof InputError) return { ...echo, engine, error_input: e.message };
    throw e;
  }
}

/** The catalog JSON as lookups: models by "model-variant" (and bare model id, as kv_catalog does), GPUs by id. */
export function index(c) {
  const models = {}, gpus = {};
  for (const [id, name, total_bytes] of c.gpus) gpus[id] = { id, name, total_bytes };
  for (const m of c.models)
    for (const v of m.variants) {
      const e = { hf_config: v.quant ? { ...m.config, quantization_config: v.quant } : m.config, weights_bytes: v.ckpt, repo: v.engines.includes("vllm") ? v.repo || m.repo : "", model: m, variant: v };
      models[`${m.id}-${v.id}`] = e;
      if (!has(models, m.id) && v.engines.includes("vllm")) models[m.id] = e;
    }
  for (const m of c.models) if (!has(models, m.id)) models[m.id] = models[`${m.id}-${m.variants[0].id}`];
  return { ...c, models, gpus };
}

// What kvcalc-llama.js builds on.
export const lib = { kvPerLayer, InputError, StartupError, fail, isObj, isInt, get, has, sum, fdiv, fixed, roundInt, roundTo, repr, reprFloat, geometry, deriveMaxLen, weightShape, moeShape, vTextConfig, GiB, MiB };
export { InputError, StartupError, GiB, MiB };
