// SGLang (python -m sglang.launch_server) for the in-page calculator: generator/engine/sglang.py and
// requests.answer_sglang_request, line for line. Loaded like kvcalc-llama.js; install(K) wires it into
// kvcalc.js's answer(). Constants come from the catalog JSON (generator/calculator.py sglang_constants).
let fail, isObj, isInt, get, has, fdiv, fixed, roundTo, roundInt, repr, reprFloat, geometry, deriveMaxLen, weightShape, InputError, GiB, MiB;

class SglangError extends Error {} // SglangInputError: SGLang's own start failure, or a setting it rejects

// Python's float // float (Objects/floatobject.c float_floor_div), for the hybrid pool's float cell size.
function floatFloorDiv(a, b) {
  const mod = a % b;
  let div = (a - mod) / b;
  if (mod && (b < 0) !== (mod < 0)) div -= 1;
  if (!div) return 0;
  let fl = Math.floor(div);
  if (div - fl > 0.5) fl += 1;
  return fl;
}

// ---------------------------------------------------------------- sglang.py
function releaseKey(release) {
  let text = String(release).trim().replace(/^v+/, ""), post = 0;
  const bad = () => { throw new SglangError(`release ${repr(String(release))} is not like 0.5.23 or 0.4.3.post4`); };
  const at = text.indexOf(".post");
  if (at >= 0) {
    const p = text.slice(at + 5);
    text = text.slice(0, at);
    if (!/^\d+$/.test(p)) bad();
    post = parseInt(p, 10);
  }
  const parts = text.split(".");
  if (parts.length < 1 || parts.length > 3 || !parts.every((p) => /^\d+$/.test(p))) bad();
  const nums = parts.map((p) => parseInt(p, 10));
  while (nums.length < 3) nums.push(0);
  return [...nums, post];
}
const keyLess = (a, b) => { for (let i = 0; i < 4; i++) if (a[i] !== b[i]) return a[i] < b[i]; return false; };

function notEnoughMemoryText(S, release, fraction) {
  const key = releaseKey(release);
  if (keyLess(key, [0, 5, 0, 0]) || fraction === null) return S.not_enough_memory;
  if (keyLess(key, [0, 5, 15, 0])) return `${S.not_enough_memory} Current value: self.server_args.mem_fraction_static=${reprFloat(fraction)}`;
  return `${S.not_enough_memory} Current value: mem_fraction_static=${reprFloat(fraction)}`;
}

function noKvMemoryText(fraction, after, pre) {
  const minimum = 1 - after / pre, suggested = Math.ceil(minimum * 1000) / 1000;
  return "Loaded weights leave no GPU memory for the KV cache under " +
    `--mem-fraction-static=${reprFloat(fraction)}. Raise --mem-fraction-static above ${fixed(suggested, 3)} ` +
    `(minimum viable = 1 - available/pre = ${fixed(minimum, 4)}). If using speculative decoding, draft weights are now counted.`;
}

const textOf = (cfg) => (isObj(cfg.text_config) ? cfg.text_config : cfg);
function cfgInt(cfg, key) {
  const v = get(cfg, key);
  if (v === null || typeof v === "boolean") return null;
  if (!isInt(v) || v <= 0) fail(`\`${key}\` must be a positive integer, got ${repr(v)}`);
  return v;
}

function kvDtypeBytes(S, dtype, g) {
  if (dtype === "auto") return g.dtypeBytes;
  if (has(S.kv_dtype_bytes, dtype)) return S.kv_dtype_bytes[dtype];
  if (S.kv_dtypes.includes(dtype)) throw new SglangError(`--kv-cache-dtype ${dtype} adds scale buffers this engine does not size`);
  throw new SglangError(`--kv-cache-dtype ${repr(dtype)} is not one of ${S.kv_dtypes.join(", ")}`);
}
const kvHeads = (total, tp) => Math.max(1, fdiv(total, tp));
const count = (g, kind) => g.kinds.filter((k) => k === kind).length;

function isHybridSwa(S, hf, g) {
  const archs = get(hf, "architectures") || [];
  if (!archs.some((a) => S.hybrid_swa_archs.includes(a))) return false;
  if (archs.includes("LagunaForCausalLM") && !textOf(hf).sliding_window) return false;
  return new Set(g.kinds).size > 1 || g.kinds.every((k) => k !== "full");
}

/** cell_size: per-token pool bytes of one rank. */
function cellSize(S, hf, g, dtype, tp, ratio) {
  if (tp < 1) throw new SglangError("--tp-size must be at least 1");
  if (g.state) throw new SglangError(`${g.modelType} has Mamba or linear-attention layers; SGLang's hybrid pools are not modelled`);
  if (g.globalHeadDim || g.globalKvHeads || g.kinds.includes("none"))
    throw new SglangError(`${g.modelType} has layers of two KV shapes or layers that share KV; SGLang's pools for it are not modelled`);
  const text = textOf(hf), nb = kvDtypeBytes(S, dtype, g), layers = g.layers;
  if (g.mla) {
    const { rank, rope } = g.mla, index = cfgInt(text, "index_head_dim");
    if (index === null) return { kind: "mla", k: (rank + rope) * layers * nb, v: 0, idx: 0, sk: 0, sv: 0, ratio: 1.0 };
    let latent;
    if (dtype !== "fp8_e4m3") latent = (rank + rope) * nb;
    else {
      if (rank % S.dsa_quant_block) throw new SglangError(`kv_lora_rank ${rank} must be a multiple of ${S.dsa_quant_block}`);
      latent = rank + fdiv(rank, S.dsa_quant_block) * 4 + rope * S.dsa_rope_bytes;
    }
    const indexer = index + fdiv(index, S.dsa_quant_block) * 4;
    return { kind: "dsa", k: latent * layers, v: 0, idx: indexer * layers, sk: 0, sv: 0, ratio: 1.0 };
  }
  const heads = kvHeads(g.kvHeads, tp), hd = g.headDim, vhd = cfgInt(text, "v_head_dim") || hd;
  if (!isHybridSwa(S, hf, g)) return { kind: "mha", k: heads * hd * layers * nb, v: heads * vhd * layers * nb, idx: 0, sk: 0, sv: 0, ratio: 1.0 };
  if (!(ratio > 0 && ratio <= 1)) throw new SglangError("--swa-full-tokens-ratio must be in (0, 1]");
  const full = count(g, "full"), swa = count(g, "sliding") + count(g, "chunked");
  const sh = kvHeads(cfgInt(text, "swa_num_key_value_heads") || g.kvHeads, tp), shd = cfgInt(text, "swa_head_dim") || hd, svd = cfgInt(text, "swa_v_head_dim") || shd;
  return { kind: "hybrid_swa", k: heads * hd * full * nb, v: heads * vhd * full * nb, idx: 0, sk: sh * shd * swa * nb, sv: sh * svd * swa * nb, ratio: full ? ratio : 1.0 };
}
const fullBytes = (c) => c.k + c.v + c.idx;
const perToken = (c) => (c.kind === "hybrid_swa" ? fullBytes(c) + c.ratio * (c.sk + c.sv) : fullBytes(c));

function poolFromBytes(cell, bytes, page, maxTotal) {
  if (page < 1) throw new SglangError("--page-size must be at least 1");
  const budget = Math.max(Math.trunc(bytes), 0);
  let tokens = cell.kind === "hybrid_swa" ? Math.trunc(floatFloorDiv(budget, perToken(cell))) : fdiv(budget, fullBytes(cell));
  tokens = fdiv(tokens, page) * page;
  let capped = false;
  if (maxTotal !== null && maxTotal < tokens) { tokens = fdiv(maxTotal, page) * page; capped = true; }
  const swa = cell.kind === "hybrid_swa" ? fdiv(Math.trunc(tokens * cell.ratio), page) * page : null;
  return { cell, page, budget, tokens, swa, capped };
}

function poolFromGpu(S, cell, pre, weightsGb, fraction, page, maxTotal) {
  const after = pre - weightsGb;
  if (!(fraction > 0 && fraction <= 1)) throw new SglangError("--mem-fraction-static must be in (0, 1]");
  const rest = after - pre * (1 - fraction) - 0.0;
  if (rest <= 0) throw new SglangError(noKvMemoryText(fraction, after, pre));
  const pool = poolFromBytes(cell, Math.trunc(rest * GiB), page, maxTotal);
  if (pool.tokens <= 0) throw new SglangError(notEnoughMemoryText(S, S.release, fraction));
  return pool;
}

const rows = (p) => p.tokens + p.page;
const kSize = (p) => (rows(p) * p.cell.k) / GiB, vSize = (p) => (rows(p) * p.cell.v) / GiB, kvSize = (p) => (rows(p) * (p.cell.k + p.cell.idx)) / GiB;

function logLines(p, release, dtypeText) {
  const key = releaseKey(release), n = p.tokens, mla = p.cell.kind === "mla" || p.cell.kind === "dsa";
  if (keyLess(key, [0, 4, 3, 4])) return mla ? [] : [`KV Cache is allocated. K size: ${fixed(kSize(p), 2)} GB, V size: ${fixed(vSize(p), 2)} GB.`];
  const dtype = keyLess(key, [0, 5, 15, 0]) ? "" : `dtype: ${dtypeText}, `;
  if (mla) return [`KV Cache is allocated. ${dtype}#tokens: ${n}, KV size: ${fixed(kvSize(p), 2)} GB`];
  const [lf, ls] = keyLess(key, [0, 5, 23, 0]) ? ["", ""] : ["Full ", "SWA "];
  const full = `KV Cache is allocated. ${dtype}#tokens: ${n}, K size: ${fixed(kSize(p), 2)} GB, V size: ${fixed(vSize(p), 2)} GB`;
  if (p.cell.kind !== "hybrid_swa") return [full];
  const swa = p.swa || 0, r = swa + p.page, sk = (r * p.cell.sk) / GiB, sv = (r * p.cell.sv) / GiB, total = kSize(p) + vSize(p) + sk + sv;
  return [
    `Use sliding window memory pool. full_layer_tokens=${n}, swa_layer_tokens=${swa}`,
    lf + full,
    `${ls}KV Cache is allocated. ${dtype}#tokens: ${swa}, K size: ${fixed(sk, 2)} GB, V size: ${fixed(sv, 2)} GB`,
    `SWAKVPool mem usage: ${fixed(total, 2)} GB, swa size: ${swa}, full size: ${n}`,
  ];
}

function torchDtype(S, dtype, g) {
  if (dtype === "auto") return get(S.torch_model_dtypes, g.dtype, "torch.bfloat16");
  return get(S.torch_kv_dtypes, dtype, "torch.bfloat16");
}

function prefillGraphSizes(maxBs) {
  const out = [], range = (a, b, s) => { for (let x = a; x < b; x += s) out.push(x); };
  range(4, 33, 4); range(48, 257, 16); range(288, 513, 32); range(576, 1025, 64); range(1280, 4097, 256); range(4608, maxBs + 1, 512);
  return out.filter((s) => s <= maxBs);
}

/** default_mem_fraction_static (v0.5.23, CUDA, text model, no speculative decoding or DP attention). */
export function defaultMemFraction(gpuMib, tp, mla, maxRunning = null) {
  let chunk, bs;
  if (gpuMib < 20 * 1024) [chunk, bs] = [2048, 8];
  else if (gpuMib < 35 * 1024) [chunk, bs] = [4096, tp < 4 ? 48 : 160];
  else if (gpuMib < 60 * 1024) [chunk, bs] = [4096, tp < 4 ? 32 : 160];
  else if (gpuMib < 160 * 1024) [chunk, bs] = [8192, tp < 4 ? 256 : 512];
  else [chunk, bs] = [16384, 512];
  if (maxRunning !== null) bs = Math.min(bs, maxRunning);
  let reserved = 512.0 + Math.max(chunk, 2048) * 1.5 + (tp * 1) / 8 * 1024;
  reserved += bs * 2;
  if (mla) reserved += 1.5 * 1024;
  else reserved += prefillGraphSizes(chunk).length * 8;
  if (gpuMib > 60 * 1024) reserved = Math.max(reserved, 10 * 1024);
  return roundTo((gpuMib - reserved) / gpuMib, 3);
}

/** plan: SGLang's pool for one rank from kv_cache_bytes, or from the GPU total (estimated). */
export function plan(S, G, hf, o) {
  const g = geometry(hf, G), cell = cellSize(S, hf, g, o.kv_cache_dtype, o.tp, o.ratio);
  let pool, estimated = false;
  if (o.kv_cache_bytes !== null) {
    pool = poolFromBytes(cell, o.kv_cache_bytes, o.page_size, o.max_total_tokens);
    if (pool.tokens <= 0) throw new SglangError(notEnoughMemoryText(S, o.release, o.mem_fraction_static));
  } else {
    const pre = o.gpu_total_bytes / GiB - S.startup_overhead_gb;
    estimated = true;
    pool = poolFromGpu(S, cell, pre, o.weights_gb, o.mem_fraction_static, o.page_size, o.max_total_tokens);
  }
  const mla = cell.kind === "mla" || cell.kind === "dsa", ctx = o.context_len;
  const limit = ctx ? Math.min(ctx - 1, pool.tokens - 1) - 5 : null;
  return {
    release: o.release, kind: cell.kind, kv_bytes_per_token: perToken(cell), kv_cache_bytes: pool.budget, tokens: pool.tokens, swa: pool.swa,
    k_size_gb: mla ? null : roundTo(kSize(pool), 2), v_size_gb: mla ? null : roundTo(vSize(pool), 2), kv_size_gb: mla ? roundTo(kvSize(pool), 2) : null,
    log_lines: logLines(pool, o.release, torchDtype(S, o.kv_cache_dtype, g)), max_req_input_len: limit,
    context_fits: limit === null ? null : pool.tokens >= ctx, budget_estimated: estimated,
  };
}

// ---------------------------------------------------------------- requests.answer_sglang_request
const SGLANG_KEYS = new Set(["engine", "id", "model", "hf_config", "gpu", "gpu_memory_gib", "tensor_parallel_size", "context_length", "kv_cache_dtype", "page_size", "mem_fraction_static", "kv_cache_memory_bytes", "weights_gib", "max_total_tokens", "swa_full_tokens_ratio", "sglang_version", "max_running_requests"]);

// requests.py's integer keys take their range from generator.schema.BOUNDS (catalog: request_kinds, bounds).
const commas = (n) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");
// schema._short: a long repr is cut to its first 20 characters and its length. A number past 2^53 came
// from a float (JSON loses the difference), so it is worded as Python's repr(float) words it.
function short(v) {
  const float = typeof v === "number" && isFinite(v) && !Number.isSafeInteger(v) && Number.isInteger(v);
  const text = typeof v === "bigint" ? String(v) : float ? reprFloat(v) : repr(v);
  return text.length <= 40 ? text : `${text.slice(0, 20)}... (${text.length} characters)`;
}

/** parse_human_int; numbers past 2^53 come back as BigInt so the bound check words them exactly. */
function humanInt(v, name) {
  if (typeof v === "boolean") fail(`${name} must be an integer, got ${repr(v)}`);
  if (isInt(v)) return v;
  const m = typeof v === "string" ? /^(\d+(?:\.\d+)?)([kKmMgGtT]?)$/.exec(v.trim()) : null;
  if (!m) fail(`${name} must be an integer like 32768, 32k or 32K, got ${repr(v)}`);
  const dec = { k: 1e3, m: 1e6, g: 1e9, t: 1e12 }, bin = { K: 10n, M: 20n, G: 30n, T: 40n };
  if (m[1].includes(".") && !dec[m[2]]) fail(`${name} ${repr(v)}: decimals need a lower-case suffix (k, m, g, t)`);
  if (m[1].length > 30) fail(`${name} ${short(v)} is not a size any GPU has`);
  const n = bin[m[2]] ? BigInt(m[1]) << bin[m[2]] : BigInt(Math.trunc(parseFloat(m[1]) * (dec[m[2]] || 1)));
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n;
}
/** schema.check_int with requests.py's low bound (minus the upper one: the engine words the minimum). */
function checkInt(S, v, name) {
  const [, hi, what] = S.bounds[S.request_kinds[name]];
  if (typeof v !== "bigint" && !isInt(v)) fail(`${name} must be an integer, got ${short(v)}`);
  if (v < -hi) fail(`${name} must be at least ${-hi}, got ${String(v)}`);
  if (v > hi) fail(`${name} must be at most ${commas(hi)} (${what}), got ${short(v)}`);
  return Number(v);
}
/** requests._positive_float: schema.check_number(value, key, 0, MAX_GIB). */
function posFloat(S, r, k) {
  const v = get(r, k);
  if (v === null) return null;
  if (typeof v !== "number" || !isFinite(v) || v <= 0) fail(`${k} must be a positive number, got ${repr(v)}`);
  if (v > S.max_gib) fail(`${k} must be at most ${commas(S.max_gib)}, got ${short(v)}`);
  return v;
}
function optInt(S, r, k, human = false) {
  const v = get(r, k);
  if (v === null) return null;
  return checkInt(S, human ? humanInt(v, k) : v, k);
}
const lookup = (cat, key, what) => (has(cat, key) ? cat[key] : fail(`unknown ${what} ${repr(key)}`));

function answerSglang(r, cat) {
  const S = cat.sglang, G = cat.vllm.geometry;
  const unknown = Object.keys(r).filter((k) => !SGLANG_KEYS.has(k)).sort();
  if (unknown.length) fail(`unknown key(s) ${unknown.map(repr).join(", ")}; use the long flags of \`kvtriage kv sglang\` in snake_case`);
  if (has(r, "model") === has(r, "hf_config")) fail("give exactly one of model or hf_config");
  let hf, weights = null;
  if (has(r, "model")) { const e = lookup(cat.models, String(r.model), "model"); hf = e.hf_config; weights = get(e, "weights_bytes"); } else hf = r.hf_config;
  if (!isObj(hf)) fail("hf_config must be the config.json object");
  const wg = posFloat(S, r, "weights_gib");
  if (wg !== null) weights = roundInt(wg * GiB);
  if (has(r, "gpu") && has(r, "gpu_memory_gib")) fail("give gpu or gpu_memory_gib, not both");
  let total = null;
  if (has(r, "gpu")) total = lookup(cat.gpus, String(r.gpu), "gpu").total_bytes;
  else if (has(r, "gpu_memory_gib")) total = roundInt(posFloat(S, r, "gpu_memory_gib") * GiB);
  const tp = optInt(S, r, "tensor_parallel_size") || 1, page = optInt(S, r, "page_size") || 1;
  if (tp < 1) fail(`tensor_parallel_size must be at least 1, got ${tp}`);
  const dtype = get(r, "kv_cache_dtype", "auto");
  if (typeof dtype !== "string") fail(`kv_cache_dtype must be a string, got ${repr(dtype)}`);
  const release = String(get(r, "sglang_version") || S.release), ratio = posFloat(S, r, "swa_full_tokens_ratio");
  let ctx = optInt(S, r, "context_length", true);
  if (ctx === null) ctx = deriveMaxLen(hf, cat.vllm).value;
  else if (ctx < 1) fail(`context_length must be at least 1, got ${ctx}`);
  const budget = optInt(S, r, "kv_cache_memory_bytes", true);
  if (budget !== null && budget < 0) fail(`kv_cache_memory_bytes must not be negative, got ${budget}`);
  let fraction = posFloat(S, r, "mem_fraction_static");
  const maxTotal = optInt(S, r, "max_total_tokens");
  const maxRunning = optInt(S, r, "max_running_requests");
  if (maxRunning !== null && maxRunning < 1) fail(`max_running_requests must be at least 1, got ${maxRunning}`);
  const o = { tp, kv_cache_dtype: dtype, page_size: page, max_total_tokens: maxTotal, context_len: ctx, release, ratio: ratio !== null ? ratio : S.default_swa_ratio, kv_cache_bytes: budget };
  let perRank = null;
  if (budget === null) {
    if (total === null) fail("give kv_cache_memory_bytes, or a gpu / gpu_memory_gib to estimate it from");
    if (weights === null) { const g = geometry(hf, G); weights = Number(weightShape(hf, g, cat.vllm)(g.layers, true, true)); }
    perRank = weights / tp;
    if (fraction === null) fraction = defaultMemFraction(total / MiB, tp, geometry(hf, G).mla !== null, maxRunning);
    Object.assign(o, { gpu_total_bytes: total, weights_gb: perRank / GiB, mem_fraction_static: fraction });
  } else o.mem_fraction_static = fraction;
  let res;
  try { res = plan(S, G, hf, o); } catch (e) {
    if (!(e instanceof SglangError)) throw e;
    if (!(e.message.startsWith(S.not_enough_memory) || e.message.startsWith("Loaded weights leave"))) fail(e.message);
    return { starts: false, error: e.message, kv_cache_tokens: 0, sglang_version: release, tensor_parallel_size: tp, kv_cache_dtype: dtype,
             mem_fraction_static: fraction, context_length: ctx, weights_bytes_per_rank: perRank, budget_estimated: budget === null };
  }
  const allocated = res.log_lines.filter((l) => l.includes("KV Cache is allocated"));
  return {
    starts: true, kv_cache_tokens: res.tokens, kv_bytes_per_token: res.kv_bytes_per_token, log_line: allocated.length ? allocated[0] : null,
    log_lines: res.log_lines, kv_cache_memory_bytes: res.kv_cache_bytes, budget_estimated: res.budget_estimated, swa_kv_cache_tokens: res.swa,
    pool_kind: res.kind, k_size_gb: res.k_size_gb, v_size_gb: res.v_size_gb, kv_size_gb: res.kv_size_gb, context_length: ctx,
    max_req_input_len: res.max_req_input_len, context_fits: res.context_fits, sglang_version: res.release, tensor_parallel_size: tp,
    kv_cache_dtype: dtype, page_size: page, mem_fraction_static: fraction, weights_bytes_per_rank: perRank,
    startup_overhead_gb: res.budget_estimated ? S.startup_overhead_gb : null,
  };
}

/** Wire SGLang into kvcalc.js (the module object K) and return its entry points. */
export function install(K) {
  ({ fail, isObj, isInt, get, has, fdiv, fixed, roundTo, roundInt, repr, reprFloat, geometry, deriveMaxLen, weightShape, InputError, GiB, MiB } = K.lib);
  K.handlers.sglang = answerSglang;
  return { plan, defaultMemFraction };
}
