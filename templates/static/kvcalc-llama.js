// llama.cpp (llama-server) and Ollama 0.33.0 for the in-page calculator: generator/engine/llamacpp.py and
// ollama.py, line for line. Loaded only when a page needs them; install(K) wires them into kvcalc.js's answer().
let fail, isObj, isInt, get, has, sum, fdiv, fixed, roundInt, repr, geometry, InputError, StartupError, GiB, MiB;

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
  // Mamba / DeltaNet layers keep a recurrent state in llama.cpp's separate r/s cache.
  if (g.state) fail(`${g.modelType} has Mamba or linear-attention layers; their llama.cpp recurrent cache is not modelled`);
  if (g.modelType.startsWith("gemma3n")) fail("Gemma 3n shares KV between layers; its llama.cpp cache is not modelled");
  if (!g.g4 && (g.globalHeadDim || g.globalKvHeads || g.kinds.includes("none")))
    fail(`${g.modelType} has layers of two KV shapes or layers that share KV; its llama.cpp cache from config.json is not modelled`);
  const base = { arch: g.modelType, nLayer: g.layers, nCtxTrain: g.maxPos, nEmbd: g.hidden, nHead: g.heads, nVocab: g.vocab, nFf: g.inter };
  if (g.mla) {
    const w = g.mla.rank + g.mla.rope;
    return { ...base, kv: g.kinds.map((_, i) => ({ i, k: w, v: 0, hk: w, hv: g.mla.rank, swa: false })), nSwa: null, mla: true };
  }
  const iswa = L.swa_hf_prefixes.some((p) => g.modelType.startsWith(p)) || (g.modelType.startsWith("llama4") && g.kinds.includes("chunked"));
  // _layer_kv: Gemma 4's full layers have their own shape (Geometry.layer_shape); its KV-shared layers have no row.
  const two = g.globalHeadDim || g.globalKvHeads, kv = [];
  g.kinds.forEach((k, i) => {
    const [h, d] = k === "full" && two ? [g.globalKvHeads || g.kvHeads, g.globalHeadDim || g.headDim] : [g.kvHeads, g.headDim];
    if (k !== "none") kv.push({ i, k: h * d, v: h * d, hk: d, hv: d, swa: iswa && k !== "full" });
  });
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

/** Wire these engines into kvcalc.js (the module object K) and return their entry points. */
export function install(K) {
  ({ fail, isObj, isInt, get, has, sum, fdiv, fixed, roundInt, repr, geometry, InputError, StartupError, GiB, MiB } = K.lib);
  K.handlers.llamacpp = answerLlama;
  K.handlers.ollama = answerOllama;
  return { layout, estimateLlama, estimateOllama, ollamaDefaultCtx };
}
