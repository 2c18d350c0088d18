// kvtriage's engine in the browser: generator/engine/{geometry,vllm,llamacpp,ollama}.py and
// requests.answer_request, line for line, for vLLM 0.33.0 and Ollama 0.33.0. Constants (budget model,
// error templates, dtype tables) come from the build's catalog JSON, so Python stays the one source.
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
  let kinds;
  const types = get(cfg, "layer_types");
  if (types !== null) {
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
  if (kinds.includes("sliding") && window === null) fail("`layer_types` names sliding layers but `sliding_window` is not set");
  return {
    modelType, layers, heads, kvHeads, headDim, hidden, inter: int("intermediate_size", false), vocab, dtype,
    dtypeBytes: G.dtype_bytes[dtype], maxPos, kinds, window: kinds.includes("sliding") ? window : null,
    chunk: kinds.includes("chunked") ? int("attention_chunk_size", false) : null, mla, tied: !!get(cfg, "tie_word_embeddings", false),
  };
}

// ---------------------------------------------------------------- vllm.py (0.33.0)
const kvHeadsPerRank = (g, tp) => (g.mla ? 1 : Math.max(1, fdiv(g.kvHeads, tp)));

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
  return g.mla ? (g.mla.rank + g.mla.rope) * el : 2 * kvHeadsPerRank(g, tp) * g.headDim * el;
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
  g.kinds.forEach((k, i) => { if (!buckets.has(k)) buckets.set(k, []); buckets.get(k).push(i); });
  if (buckets.size === 1) return [{ kind: g.kinds[0], window: win(g.kinds[0]), layers: [...g.kinds.keys()] }];
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

const groupBlocks = (gr, len, bs, fly) =>
  gr.kind === "sliding" ? cdiv(Math.min(gr.window - 1 + fly, len), bs) + 1
    : gr.kind === "chunked" ? cdiv(Math.min(gr.window + fly, len), bs) : cdiv(len, bs);
const blocksPerRequest = (groups, len, bs, fly) => sum(groups.map((gr) => groupBlocks(gr, len, bs, fly)));

function largestFit(check, bpb, groups, upper, bs, fly) {
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
  const topK = asInt(cfg, "num_experts_per_tok", "moe_topk", "top_k") || 2;
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
  const [dmb, emb] = quantMillibits(hf, g, V).map(BigInt), layerParams = BigInt(attention) + mlp;
  const emb16 = BigInt(g.vocab * hidden) * 16000n, head16 = g.tied ? 0n : emb16;
  return (layers, first, last) => (BigInt(layers) * (layerParams * dmb + expertAvg * emb) + (first ? emb16 : 0n) + (last ? head16 : 0n)) / 8000n;
}

function activationPeak(g, hf, tp, batched, seqs, A) {
  const [experts, topK, eInter, shared] = moeShape(vTextConfig(hf));
  const inter = experts ? topK * eInter + shared : g.inter || 4 * g.hidden;
  const perToken = (fdiv(A.activation_intermediate_factor * inter, tp) + A.activation_hidden_factor * g.hidden) * g.dtypeBytes;
  return Math.max(batched * perToken, seqs * g.vocab * A.sampler_bytes_per_logit);
}

const formatGib = (b) => reprFloat(roundTo(b / GiB, 2));
const positive = (name, v) => { if (v !== null && (!isInt(v) || v < 1)) fail(`${name} must be a positive integer, got ${repr(v)}`); };

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
  kvPerLayer(g, s.kv_cache_dtype, tp, V);
  const d = deriveMaxLen(s.hf_config, V), ml = s.max_model_len;
  if (ml !== null && ml !== -1) {
    positive("max_model_len", ml);
    if (ml > d.value && (d.mml === null || ml > d.mml))
      fail(`User-specified max_model_len (${ml}) is greater than the derived max_model_len (${d.key}=${d.printed} or model_max_length=${repr(d.mml)} in model's config.json). ` + V.too_long_tail);
  }
  const [seqs, toks] = batchDefaults(s.gpu_total_bytes || 0, s.gpu_name);
  const maxSeqs = s.max_num_seqs || seqs;
  const batched = s.max_num_batched_tokens === null ? Math.min(maxSeqs * (ml === null || ml === -1 ? d.dflt : ml), toks) : s.max_num_batched_tokens;
  return [g, d, { ...s, gpu_memory_utilization: util, block_size: s.block_size || V.block_size, max_num_seqs: maxSeqs, max_num_batched_tokens: batched }];
}

function stageBudget(s, g, shape, stage, layers, V) {
  const A = V.assumptions, tp = s.tensor_parallel_size, pp = s.pipeline_parallel_size;
  const own = shape(layers, stage === 0, stage === pp - 1);
  const weights = Number(s.weights_bytes !== null ? (BigInt(s.weights_bytes) * own) / shape(g.layers, true, true) / BigInt(tp) : own / BigInt(tp));
  const nonTorch = A.non_torch_bytes + (tp * pp > 1 ? A.non_torch_extra_bytes_tp : 0);
  const activation = activationPeak(g, s.hf_config, tp, s.max_num_batched_tokens, s.max_num_seqs, A);
  const cudagraph = s.enforce_eager ? 0 : captureSizes(s.max_num_seqs, s.max_num_batched_tokens).length * layers * A.cudagraph_bytes_per_size_per_layer;
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
  const perLayer = kvPerLayer(g, s.kv_cache_dtype, tp, V), page = bs * perLayer, groups = kvGroups(g);
  const fly = (pp + 1) * s.max_num_batched_tokens, shape = weightShape(s.hf_config, g, V);
  const budget = s.kv_cache_memory_bytes === null && s.available_kv_cache_bytes === null;
  const stages = [];
  let start = 0;
  stageSplit(g.layers, pp).forEach((layers, stage) => {
    const end = start + layers;
    const bpb = Math.max(...groups.map((gr) => gr.layers.filter((i) => i >= start && i < end).length)) * page;
    start = end;
    let breakdown = null, available;
    if (s.available_kv_cache_bytes !== null) available = s.available_kv_cache_bytes;
    else if (s.kv_cache_memory_bytes !== null) available = s.kv_cache_memory_bytes;
    else { breakdown = stageBudget(s, g, shape, stage, layers, V); available = availableOf(breakdown); }
    stages.push({ stage, layers, bpb, available, blocks: fdiv(Math.max(available, 0), bpb), breakdown });
  });
  const checks = stages.map((st) => st.available - st.bpb);
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
      else if (st.bpb * perReq > check) error = tooLongText(V, len, st.bpb * perReq, check, largestFit(check, st.bpb, groups, len, bs, fly));
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
    max_num_seqs: s.max_num_seqs, enforce_eager: s.enforce_eager, kv_bytes_per_token_per_layer: perLayer, kv_bytes_per_token: perLayer * chosen.layers,
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
  if (!input.enforce_eager && input.kv_cache_memory_bytes === null) {
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

function answerVllm(r, cat) {
  const s = vllmInputs(r, cat), V = cat.vllm, out = planVllm(s, V);
  if (!out.fits) {
    const id = String(get(r, "model", "MODEL")), e = has(r, "model") ? cat.models[id] : null, model = (e && e.repo) || id;
    const base = s.gpu_memory_utilization !== null ? [["--gpu-memory-utilization", reprFloat(s.gpu_memory_utilization)]] : [];
    out.remediation = vllmLevers(s, V).map((l) => ({ ...l, command: l.flags.length ? serveCommand(model, serveFlags(l, base)) : null }));
  }
  return out;
}

/** requests.answer_request (and ollama.answer_ollama_request for "ollama"): never throws for bad input. */
export function answer(r, cat) {
  if (!isObj(r)) return { error_input: "a request must be a JSON object" };
  const engine = r.engine, echo = has(r, "id") ? { id: r.id } : {};
  const handler = { vllm: answerVllm, llamacpp: answerLlama, ollama: answerOllama }[engine];
  if (!handler) return { ...echo, error_input: `unknown engine ${repr(engine)}; use one of llamacpp, vllm` };
  try { return { ...echo, engine, ...handler(r, cat) }; } catch (e) {
    if (e instanceof StartupError) return { ...echo, engine, startup_error: e.message };
    if (e instanceof InputError) return { ...echo, engine, error_input: e.message };
    throw e;
  }
}

// ---------------------------------------------------------------- llamacpp.py
function rowSize(L, type, n) {
  const [blck, size] = L.ggml_block[type];
  if (n % blck) throw new StartupError(`row of ${n} elements is not a whole number of ${type} blocks of ${blck}`);
  return fdiv(n, blck) * size;
}
const pad = (v, to) => fdiv(v + to - 1, to) * to;
const mibText = (b) => fixed(Math.fround(b) / MiB, 2);

/** kv_layout_from_geometry */
export function layout(g, L) {
  if (g.modelType.startsWith("gemma3n")) fail("Gemma 3n shares KV between layers; its llama.cpp cache is not modelled");
  const base = { arch: g.modelType, nLayer: g.layers, nCtxTrain: g.maxPos, nEmbd: g.hidden, nHead: g.heads, nVocab: g.vocab, nFf: g.inter };
  if (g.mla) {
    const w = g.mla.rank + g.mla.rope;
    return { ...base, kv: g.kinds.map((_, i) => ({ i, k: w, v: 0, hk: w, hv: g.mla.rank, swa: false })), nSwa: null, mla: true };
  }
  const iswa = L.swa_hf_prefixes.some((p) => g.modelType.startsWith(p)) || (g.modelType.startsWith("llama4") && g.kinds.includes("chunked"));
  const w = g.kvHeads * g.headDim, kv = g.kinds.map((k, i) => ({ i, k: w, v: w, hk: g.headDim, hv: g.headDim, swa: iswa && k !== "full" }));
  return { ...base, kv, nSwa: iswa && kv.some((l) => l.swa) ? g.window || g.chunk : null, mla: false };
}

const LLAMA_DEFAULTS = { ctx_size: 0, cache_type_k: "f16", cache_type_v: "f16", parallel: null, kv_unified: null, swa_full: false, ubatch_size: 512, n_gpu_layers: null, flash_attn: "auto", kv_offload: true, fit: true, fa_supported: true };
const seqs = (st, L) => (st.parallel === null || st.parallel < 0 ? [L.auto_parallel, true] : [st.parallel, !!st.kv_unified]);

function planKv(lay, st, L) {
  for (const t of [st.cache_type_k, st.cache_type_v]) if (!has(L.ggml_block, t)) throw new StartupError(`Unsupported cache type: ${t}`);
  if (lay.mla && st.cache_type_k !== st.cache_type_v) throw new StartupError(`llama_init_from_model: model does not support different K (${st.cache_type_k}) and V (${st.cache_type_v}) cache types`);
  const bk = L.ggml_block[st.cache_type_k][0], bv = L.ggml_block[st.cache_type_v][0];
  for (const l of lay.kv) {
    if (l.hk % bk) throw new StartupError(`llama_init_from_model: K cache type ${st.cache_type_k} with block size ${bk} does not divide n_embd_head_k=${l.hk}`);
    if (!lay.mla && l.hv % bv) throw new StartupError(`llama_init_from_model: V cache type ${st.cache_type_v} with block size ${bv} does not divide n_embd_head_v=${l.hv}`);
  }
  // resolve_flash_attn
  const fa = st.flash_attn.toLowerCase(), quantV = L.ggml_block[st.cache_type_v][0] > 1;
  let mode = L.fa_on.includes(fa) ? "on" : L.fa_off.includes(fa) ? "off" : "auto", faLog = null, faOn;
  if (L.fa_off_archs.includes(lay.arch)) { mode = "off"; faLog = "flash_attn is not compatible with Grok - forcing off"; }
  if (quantV && mode !== "on") {
    if (mode === "off") throw new StartupError("llama_init_from_model: quantized V cache requires flash_attn to be enabled");
    faOn = true; faLog = "llama_init_from_model: enabling flash_attn since it is required for quantized V cache";
  } else faOn = mode === "auto" ? st.fa_supported : mode === "on";
  const [nSeq, unified] = seqs(st, L);
  // context_cells
  let nCtx = pad(st.ctx_size === 0 ? lay.nCtxTrain : st.ctx_size, L.ctx_pad), perSeq = nCtx, nStream = 1, rounded = false;
  if (!unified) { perSeq = pad(fdiv(nCtx, nSeq), L.ctx_pad); rounded = nCtx !== perSeq * nSeq; nCtx = perSeq * nSeq; nStream = nSeq; }
  const vMax = Math.max(0, ...lay.kv.map((l) => l.v));
  const build = (kind, layers, cells) => {
    let kb = 0, vb = 0;
    const per = layers.map((l) => {
      const k = rowSize(L, st.cache_type_k, l.k), v = lay.mla ? 0 : rowSize(L, st.cache_type_v, faOn ? l.v : vMax);
      kb += k * cells * nStream; vb += v * cells * nStream;
      return [l.i, (k + v) * cells * nStream];
    });
    return { kind, cells, nStream, n: layers.length, k: kb, v: vb, per };
  };
  let caches;
  if (lay.nSwa !== null && lay.kv.some((l) => l.swa)) {
    const swaCells = st.swa_full ? perSeq : pad(Math.min(perSeq, lay.nSwa * (unified ? nSeq : 1) + st.ubatch_size), L.ctx_pad);
    caches = [build("non-SWA", lay.kv.filter((l) => !l.swa), perSeq), build("SWA", lay.kv.filter((l) => l.swa), swaCells)];
  } else caches = [build("kv", lay.kv, perSeq)];
  const kb = sum(caches.map((c) => c.k)), vb = sum(caches.map((c) => c.v));
  return { nCtx, perSeq, nSeq, nStream, rounded, unified, faOn, faLog, caches, k: kb, v: vb, kv: kb + vb };
}

function gpuUse(lay, plan, st, weights, ngl) {
  const rep = Math.min(Math.max(0, ngl), lay.nLayer), units = rep + (ngl > lay.nLayer ? 1 : 0);
  const w = fdiv(weights * units, lay.nLayer + 1);
  let kv = 0;
  if (st.kv_offload && rep) for (const c of plan.caches) for (const [i, b] of c.per) if (i >= lay.nLayer - rep) kv += b;
  let compute = 0;
  if (units) {
    const nt = Math.min(plan.nCtx, st.ubatch_size), nkv = Math.max(...plan.caches.map((c) => c.cells));
    const attn = st.kv_offload ? (plan.faOn ? 0 : lay.nHead * nkv * nt * 4) + nkv * nt * (plan.faOn ? 2 : 4) : 0;
    compute = Math.max(attn, lay.nVocab * nt * 4, 2 * (lay.nFf || 0) * nt * 4) + 2 * lay.nEmbd * nt * 4;
  }
  return { weights: w, kv, compute, total: w + kv + compute };
}
const nglValue = (lay, st) => (st.n_gpu_layers === null || st.n_gpu_layers < 0 ? lay.nLayer + 1 : st.n_gpu_layers);
function layersThatFit(lay, plan, st, weights, budget) {
  for (let n = lay.nLayer + 1; n >= 0; n--) if (gpuUse(lay, plan, st, weights, n).total <= budget) return n;
  return 0;
}
function maxCtx(lay, st, weights, budget, L) {
  const [nSeq, unified] = seqs(st, L), step = L.ctx_pad * (unified ? 1 : nSeq), ngl = nglValue(lay, st);
  let hi = fdiv(Math.max(lay.nCtxTrain, st.ctx_size), step), lo = 1;
  const fits = (k) => { const s2 = { ...st, ctx_size: k * step }; return gpuUse(lay, planKv(lay, s2, L), s2, weights, ngl).total <= budget; };
  if (hi < 1 || !fits(1)) return 0;
  while (lo < hi) { const mid = fdiv(lo + hi + 1, 2); if (fits(mid)) lo = mid; else hi = mid - 1; }
  return lo * step;
}

function kvLogLines(plan, lay, st) {
  const out = [], f = (k, v) => `llama_context: ${k.padEnd(21)} = ${v}`;
  if (plan.faLog) out.push(plan.faLog);
  if (plan.rounded) out.push(`llama_context: n_ctx is not divisible by n_seq_max - rounding down to ${plan.nCtx}`);
  out.push(f("n_seq_max", plan.nSeq), f("n_ctx", plan.nCtx), f("n_ctx_seq", plan.perSeq), f("kv_unified", plan.unified));
  if (plan.perSeq < lay.nCtxTrain) out.push(`llama_context: n_ctx_seq (${plan.perSeq}) < n_ctx_train (${lay.nCtxTrain}) -- the full capacity of the model will not be utilized`);
  else if (plan.perSeq > lay.nCtxTrain) out.push(`llama_context: n_ctx_seq (${plan.perSeq}) > n_ctx_train (${lay.nCtxTrain}) -- possible training context overflow`);
  const name = st.kv_offload ? "CUDA0" : "CPU";
  for (const c of plan.caches) {
    if (c.kind === "non-SWA") {
      if (st.swa_full) out.push("llama_kv_cache_iswa: using full-size SWA cache (ref: https://github.com/ggml-org/llama.cpp/pull/13194#issuecomment-2868343055)");
      out.push(`llama_kv_cache_iswa: creating non-SWA KV cache, size = ${c.cells} cells`);
    } else if (c.kind === "SWA") out.push(`llama_kv_cache_iswa: creating     SWA KV cache, size = ${c.cells} cells`);
    out.push(`llama_kv_cache: ${name.padStart(10)} KV buffer size = ${fixed((c.k + c.v) / MiB, 2).padStart(8)} MiB`);
    out.push(`llama_kv_cache: size = ${mibText(c.k + c.v).padStart(7)} MiB (${String(c.cells).padStart(6)} cells, ${String(c.n).padStart(3)} layers, ${String(plan.nSeq).padStart(2)}/${c.nStream} seqs), K (${st.cache_type_k}): ${mibText(c.k).padStart(7)} MiB, V (${st.cache_type_v}): ${mibText(c.v).padStart(7)} MiB`);
  }
  return out;
}

function oomLines(use, budget, model) {
  const alloc = (n) => `ggml_backend_cuda_buffer_type_alloc_buffer: allocating ${fixed(n / MiB, 2)} MiB on device 0: cudaMalloc failed: out of memory`;
  const tail = [`cmn  common_init_: failed to create context with model '${model}'`, `srv    load_model: failed to create_context with model '${model}'`, "srv  llama_server: exiting due to model loading error"];
  if (use.weights > budget) return [alloc(use.weights), `alloc_tensor_range: failed to allocate CUDA0 buffer of size ${use.weights}`, "llama_model_load: error loading model: unable to allocate CUDA0 buffer", "llama_model_load_from_file_impl: failed to load model", `srv    load_model: failed to load model, '${model}'`, "srv  llama_server: exiting due to model loading error"];
  if (use.weights + use.kv > budget) return [alloc(use.kv), `alloc_tensor_range: failed to allocate CUDA0 buffer of size ${use.kv}`, "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache", ...tail];
  return [alloc(use.compute), `ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size ${use.compute}`, "llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers", ...tail];
}

/** estimate_llamacpp: the LlamaCppResult fields. */
export function estimateLlama(lay, st, weights, gpu, L, model = "model.gguf", headroom = L.fit_target) {
  const plan = planKv(lay, st, L), use = gpuUse(lay, plan, st, weights, nglValue(lay, st)), basis = [...L.basis];
  if (L.fa_auto.includes(st.flash_attn.toLowerCase()) && L.ggml_block[st.cache_type_v][0] === 1)
    basis.push("-fa auto assumed to resolve to " + (st.fa_supported ? "on (backend supports flash attention)" : "off"));
  let fits = null, mc = null, lf = null, outcome = null, budget = null, oom = [];
  if (gpu !== null) {
    budget = gpu - headroom;
    basis.push(`GPU budget = GPU memory - ${fdiv(headroom, MiB)} MiB (llama-server --fit-target default margin)`);
    fits = use.total <= budget; mc = maxCtx(lay, st, weights, budget, L); lf = layersThatFit(lay, plan, st, weights, budget);
    if (!fits) {
      if (!st.fit || (st.n_gpu_layers !== null && st.n_gpu_layers >= 0)) outcome = "no fit adjustment (-ngl set or --fit off): loading fails with a CUDA out-of-memory error";
      else if (st.ctx_size === 0 && mc >= L.fit_min_ctx) outcome = `--fit reduces the context (was n_ctx_train ${lay.nCtxTrain}); the largest that fits is about ${mc}`;
      else outcome = `--fit keeps -c and offloads fewer layers: about ${lf}/${lay.nLayer + 1} layers on the GPU`;
      oom = oomLines(use, budget, model);
    }
  }
  const c0 = plan.caches[0];
  return {
    k_bytes: plan.k, v_bytes: plan.v, kv_bytes: plan.kv, kv_cells: c0.cells * c0.nStream, swa_cells: plan.caches.length > 1 ? plan.caches[1].cells * plan.caches[1].nStream : null,
    n_ctx: plan.nCtx, n_ctx_seq: plan.perSeq, n_seq_max: plan.nSeq, n_stream: plan.nStream, kv_unified: plan.unified, flash_attn: plan.faOn,
    weights_bytes: weights, compute_buffer_bytes: use.compute, gpu_bytes: use.total, gpu_budget_bytes: budget, fits, max_ctx_that_fits: mc,
    gpu_layers_that_fit: lf, fit_outcome: outcome, log_lines: kvLogLines(plan, lay, st), oom_lines: oom, basis,
  };
}

/** plan_llamacpp_remediation */
function llamaLevers(lay, st, weights, gpu, L) {
  const budget = gpu === null ? null : gpu - L.fit_target, base = planKv(lay, st, L), out = [];
  const max = (s) => (budget === null ? null : maxCtx(lay, s, weights, budget, L));
  const lever = (s, name, flags, note, yields) => {
    let plan;
    try { plan = planKv(lay, s, L); } catch (e) { if (e instanceof StartupError) return null; throw e; }
    const use = gpuUse(lay, plan, s, weights, nglValue(lay, s));
    return { name, flags, kv_bytes: plan.kv, gpu_bytes: use.total, fits: budget === null ? null : use.total <= budget, yields: yields ? yields() : null, note };
  };
  const best = max(st);
  if (best !== null && best > 0 && best < base.nCtx) {
    const l = lever({ ...st, ctx_size: best }, "ctx_size", [["--ctx-size", String(best)]], `largest -c that fits: a multiple of ${L.ctx_pad * (base.unified ? 1 : base.nSeq)} so llama.cpp does not pad it up`, () => best);
    if (l) out.push(l);
  }
  for (const q of ["q8_0", "q4_0"]) {
    if (["f32", "f16", "bf16"].includes(st.cache_type_k) || ["f32", "f16", "bf16"].includes(st.cache_type_v)) {
      let s = { ...st, cache_type_k: q, cache_type_v: q }, flags = [["--cache-type-k", q], ["--cache-type-v", q]];
      let note = `${q} K and V; a quantized V needs flash attention (-fa auto turns it on)`;
      if (L.fa_off.includes(st.flash_attn.toLowerCase())) { s = { ...s, flash_attn: "on" }; flags.push(["--flash-attn", "on"]); note = `${q} K and V with -fa on (a quantized V cache requires flash attention)`; }
      const l = lever(s, `cache_type_${q}`, flags, note, () => max(s));
      if (l && l.kv_bytes < base.kv) out.push(l);
    }
  }
  if (seqs(st, L)[0] > 1) {
    const s = { ...st, parallel: 1, kv_unified: null }, l = lever(s, "parallel_1", [["--parallel", "1"]], "one slot: the whole -c for one request", () => max(s));
    if (l && l.kv_bytes < base.kv) out.push(l);
  }
  if (budget !== null) {
    const ngl = layersThatFit(lay, base, st, weights, budget);
    if (ngl < lay.nLayer + 1) { const l = lever({ ...st, n_gpu_layers: ngl }, "n_gpu_layers", [["--n-gpu-layers", String(ngl)]], "partial offload: the remaining layers and their KV run from system RAM (slower)", () => ngl); if (l) out.push(l); }
  }
  if (st.kv_offload) { const l = lever({ ...st, kv_offload: false }, "no_kv_offload", [["--no-kv-offload", null]], "KV cache in system RAM (attention runs on the CPU; slower)"); if (l) out.push(l); }
  if (st.swa_full && lay.nSwa !== null) { const s = { ...st, swa_full: false }, l = lever(s, "swa_full_off", [], "remove --swa-full: the SWA layers keep only n_swa + n_ubatch cells per stream", () => max(s)); if (l) out.push(l); }
  return { engine: "llamacpp", levers: out };
}

const LLAMA_KEYS = new Set(["engine", "model", "hf_config", "gpu", "gpu_memory_gib", "weights_gib", "ctx_size", "cache_type_k", "cache_type_v", "parallel", "kv_unified", "swa_full", "ubatch_size", "n_gpu_layers", "flash_attn", "no_kv_offload", "fit", "id"]);
function reqGib(r, k) {
  const v = get(r, k);
  if (v === null) return null;
  if (typeof v !== "number" || v <= 0) fail(`\`${k}\` must be a positive number of GiB, got ${repr(v)}`);
  return roundInt(v * GiB);
}
function layoutOf(r, cat) {
  let cfg = get(r, "hf_config");
  if (cfg === null) {
    const m = get(r, "model"), e = typeof m === "string" && has(cat.models, m) ? cat.models[m] : null;
    if (e && e.hf_config) cfg = e.hf_config;
    else fail(m !== null ? `unknown model ${repr(m)}; pass \`hf_config\` or \`gguf_metadata\`` : "a llamacpp request needs `hf_config`, `gguf_metadata` or a known `model`");
  }
  return layout(geometry(cfg, cat.vllm.geometry), cat.llamacpp);
}
const gpuBytesOf = (r, cat) => {
  let b = reqGib(r, "gpu_memory_gib");
  if (get(r, "gpu") !== null) {
    if (b !== null) fail("give either `gpu` or `gpu_memory_gib`, not both");
    if (!has(cat.gpus, r.gpu)) fail(`unknown gpu ${repr(r.gpu)}; pass \`gpu_memory_gib\``);
    b = cat.gpus[r.gpu].total_bytes;
  }
  return b;
};

function answerLlama(r, cat) {
  const L = cat.llamacpp, unknown = Object.keys(r).filter((k) => !LLAMA_KEYS.has(k)).sort();
  if (unknown.length) fail(`unknown key(s) ${unknown.map(repr).join(", ")}; llama-server long flags in snake_case`);
  const lay = layoutOf(r, cat), st = { ...LLAMA_DEFAULTS };
  const int = (k, min = null) => { const v = get(r, k); if (v === null) return null; if (!isInt(v)) fail(`\`${k}\` must be an integer, got ${repr(v)}`); if (min !== null && v < min) fail(`\`${k}\` must be at least ${min}, got ${v}`); return v; };
  const c = int("ctx_size", 0);
  if (c !== null) st.ctx_size = c;
  for (const k of ["cache_type_k", "cache_type_v"]) {
    const v = get(r, k);
    if (v !== null) { if (!has(L.ggml_block, v)) fail(`\`${k}\` ${repr(v)} is not one of ${L.cache_types.join(", ")} (llama-server: Unsupported cache type)`); st[k] = v; }
  }
  const p = int("parallel");
  if (p !== null) { if (p === 0 || p < -1) fail("`parallel` must be at least 1, or -1 for auto (llama-server rejects 0)"); st.parallel = p === -1 ? null : p; }
  for (const k of ["kv_unified", "swa_full", "fit", "no_kv_offload"]) {
    const v = get(r, k);
    if (v !== null && typeof v !== "boolean") fail(`\`${k}\` must be true or false, got ${repr(v)}`);
    if (v !== null) { if (k === "no_kv_offload") st.kv_offload = !v; else st[k] = v; }
  }
  const u = int("ubatch_size", 1);
  if (u !== null) st.ubatch_size = u;
  const ngl = get(r, "n_gpu_layers");
  if (ngl !== null) st.n_gpu_layers = ngl === "auto" || ngl === -1 ? null : ngl === "all" ? 1e6 : isInt(ngl) && ngl >= 0 ? ngl : fail(`\`n_gpu_layers\` must be an integer, 'auto' or 'all', got ${repr(ngl)}`);
  let fa = get(r, "flash_attn");
  if (fa !== null) {
    if (typeof fa === "boolean") fa = fa ? "on" : "off";
    if (typeof fa !== "string" || ![...L.fa_on, ...L.fa_off, ...L.fa_auto].includes(fa.toLowerCase())) fail(`\`flash_attn\` must be on, off or auto, got ${repr(fa)}`);
    st.flash_attn = fa.toLowerCase();
  }
  const gpu = gpuBytesOf(r, cat), weights = reqGib(r, "weights_gib") || 0;
  const out = estimateLlama(lay, st, weights, gpu, L, `${get(r, "model") || "model"}.gguf`);
  out.remediation = llamaLevers(lay, st, weights, gpu, L);
  return out;
}

// ---------------------------------------------------------------- ollama.py (0.33.0, llama-server runner)
const OLLAMA_KEYS = new Set(["engine", "id", "model", "hf_config", "num_ctx", "env", "gpu", "gpu_memory_gib", "weights_gib", "num_gpu", "compute_capability"]);

/** server/routes.go: the default num_ctx by total VRAM (from 0.15.5). */
export const ollamaDefaultCtx = (vram, O) => O.vram_tiers.find(([min]) => vram >= min)[1];

export function estimateOllama(lay, o, cat) {
  const L = cat.llamacpp, O = cat.ollama, env = o.env, notes = [];
  const vram = o.gpu === null ? null : Math.max(o.gpu - env.gpu_overhead, 0);
  let value, source;
  if (o.num_ctx !== null) { value = o.num_ctx; source = "request"; }
  else if (env.context_length) { value = env.context_length; source = "OLLAMA_CONTEXT_LENGTH"; }
  else { if (vram === null) fail("from Ollama 0.15.5 the default context depends on total VRAM; give the GPU"); value = ollamaDefaultCtx(vram, O); source = "default"; }
  if (value < 4) { value = 4; notes.push("num_ctx below 4 is raised to 4 (server/sched.go getRunner)"); }
  if (lay.nCtxTrain && value > lay.nCtxTrain) { notes.push(`requested context size too large for model: lowered from ${value} to n_ctx_train ${lay.nCtxTrain} (llm/server.go)`); value = lay.nCtxTrain; }
  const automatic = source === "default";
  const single = O.single_slot_archs.includes(lay.arch) || O.single_slot_prefixes.some((p) => lay.arch.startsWith(p));
  const nPar = single ? 1 : Math.max(env.num_parallel, 1);
  if (nPar !== Math.max(env.num_parallel, 1)) notes.push(`OLLAMA_NUM_PARALLEL forced to 1 for ${lay.arch}`);
  const kvType = env.kv_cache_type;
  let faSupported = true;
  if (o.cc !== null) { const [ma, mi] = o.cc.split("."); const c = +ma * 1000 + +(mi || 0); faSupported = !(c < 6000 || c === 7002); }
  const flash = env.flash_attention === true ? "on" : env.flash_attention === false ? "off" : faSupported ? "auto" : "off";
  const args = ["-c", String(value * nPar), "-np", String(nPar), ...(kvType ? ["--cache-type-k", kvType, "--cache-type-v", kvType] : []), "--flash-attn", flash, ...(o.num_gpu !== null ? ["-ngl", String(o.num_gpu)] : [])];
  const st = { ...LLAMA_DEFAULTS, ctx_size: value * nPar, cache_type_k: kvType || "f16", cache_type_v: kvType || "f16", parallel: nPar, kv_unified: false, ubatch_size: 512, n_gpu_layers: o.num_gpu, flash_attn: flash, fa_supported: faSupported };
  const kvMin = Math.min(...lay.kv.filter((l) => l.hk).map((l) => fdiv(l.k, l.hk)));
  const predicted = o.weights + 2 * lay.nLayer * (isFinite(kvMin) ? kvMin : 0) * (lay.nHead ? fdiv(lay.nEmbd, lay.nHead) : 0) * Math.min(value, lay.nCtxTrain) * nPar * 2;
  const budget = o.gpu === null ? null : Math.max(o.gpu - env.gpu_overhead, 0);
  const res = { version: O.version, num_ctx: value, num_ctx_source: source, num_ctx_automatic: automatic, num_parallel: nPar, kv_cache_type: kvType || "f16", flash_attn: flash, llama_server_args: args, predicted_vram_bytes: predicted, eviction_log: null };
  const model = `/root/.ollama/models/blobs/sha256-<${o.model}>`;
  let r;
  try { r = estimateLlama(lay, st, o.weights, budget, L, model); } catch (e) {
    if (!(e instanceof StartupError)) throw e;
    return { ...res, kv_bytes: 0, kv_cells: 0, n_ctx: 0, weights_bytes: o.weights, compute_buffer_bytes: 0, gpu_budget_bytes: budget, fits: null, gpu_layers: null, processor: null, error: O.load_oom.replace("{captured}", e.message), error_lines: [e.message], retry: [], notes, llama_server_log: [] };
  }
  let layers = null, processor = null, error = null, errorLines = [];
  const retry = [];
  if (r.fits !== null) {
    const pinned = o.num_gpu !== null;
    if (r.fits) layers = pinned ? Math.min(o.num_gpu, lay.nLayer + 1) : lay.nLayer + 1;
    else if (pinned || !env.fit) {
      errorLines = r.oom_lines.filter((l) => l.includes("cudaMalloc failed") || l.startsWith("llama_init_from_model:")).map((l) => (l.includes("cudaMalloc failed") ? "cudaMalloc failed: out of memory" : l));
      error = O.load_oom.replace("{captured}", errorLines.join("\n"));
      const smaller = automatic && has(O.auto_ctx_steps, value) ? O.auto_ctx_steps[value] : null;
      if (smaller) {
        retry.push(`llama-server load failed; reducing automatic context and retrying once (old_num_ctx=${value} new_num_ctx=${smaller})`);
        const again = estimateLlama(lay, { ...st, ctx_size: smaller * nPar }, o.weights, budget, L, "model.gguf");
        retry.push(`retry at num_ctx ${smaller}: ` + (again.fits ? "loads" : "fails again"));
      }
    } else { layers = r.gpu_layers_that_fit; notes.push("Ollama passes -c, so llama-server --fit keeps the context and moves layers to the CPU"); }
    if (layers !== null) {
      const onGpu = gpuUse(lay, planKv(lay, st, L), st, o.weights, layers).total, total = o.weights + r.kv_bytes + r.compute_buffer_bytes;
      processor = total <= 0 || onGpu >= total ? "100% GPU" : onGpu <= 0 ? "100% CPU" : (() => { const cpu = roundInt((total - onGpu) / total * 100); return `${cpu}%/${100 - cpu}% CPU/GPU`; })();
    }
  }
  if (kvType && !["f16", "q8_0", "q4_0"].includes(kvType)) notes.push(`${kvType} works (llama-server accepts it) but docs/faq.mdx documents only f16, q8_0 and q4_0`);
  return { ...res, kv_bytes: r.kv_bytes, kv_cells: r.kv_cells, n_ctx: r.n_ctx, weights_bytes: o.weights, compute_buffer_bytes: r.compute_buffer_bytes, gpu_budget_bytes: r.gpu_budget_bytes, fits: r.fits, gpu_layers: layers, processor, error, error_lines: errorLines, retry, notes, llama_server_log: r.log_lines };
}

function answerOllama(r, cat) {
  const unknown = Object.keys(r).filter((k) => !OLLAMA_KEYS.has(k)).sort();
  if (unknown.length) fail(`unknown key(s) ${unknown.map(repr).join(", ")}`);
  const lay = layoutOf(r, cat), e = get(r, "env", {});
  if (!isObj(e)) fail("`env` must be an object of server environment variables");
  const uint = (k, d) => { const v = get(e, k); if (v === null || v === "") return d; const t = String(v).trim(); if (!/^\d+$/.test(t)) fail(`${k}=${repr(v)} is not an unsigned integer`); return parseInt(t, 10); };
  let flash = get(e, "OLLAMA_FLASH_ATTENTION");
  if (flash !== null && flash !== "") {
    const t = typeof flash === "boolean" ? (flash ? "1" : "0") : String(flash).trim();
    flash = ["1", "t", "T", "TRUE", "true", "True"].includes(t) ? true : ["0", "f", "F", "FALSE", "false", "False"].includes(t) ? false : fail(`OLLAMA_FLASH_ATTENTION=${repr(flash)} is not a boolean (1/true or 0/false)`);
  } else flash = null;
  const env = { context_length: uint("OLLAMA_CONTEXT_LENGTH", 0), num_parallel: uint("OLLAMA_NUM_PARALLEL", 1), kv_cache_type: String(get(e, "OLLAMA_KV_CACHE_TYPE") || "").toLowerCase(), flash_attention: flash, gpu_overhead: uint("OLLAMA_GPU_OVERHEAD", 0), fit: true };
  const int = (k) => { const v = get(r, k); if (v === null) return null; if (!isInt(v) || v < 0) fail(`\`${k}\` must be an integer >= 0, got ${repr(v)}`); return v; };
  const gpu = gpuBytesOf(r, cat);
  const cc = get(r, "compute_capability");
  if (cc !== null && (typeof cc !== "string" || !cc.split(/\.(.*)/s).filter((x, i) => i < 2).every((p) => /^\d+$/.test(p)))) fail("`compute_capability` must be a string like '8.6'");
  return estimateOllama(lay, { env, num_ctx: int("num_ctx"), num_gpu: int("num_gpu"), weights: reqGib(r, "weights_gib") || 0, gpu, cc, model: String(get(r, "model") || "model") }, cat);
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

export { InputError, StartupError, GiB, MiB };
