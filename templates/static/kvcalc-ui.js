// The in-page calculator: a form over kvcalc.js. The static page already shows its own pair's numbers;
// this only adds the form. Settings live in the URL query so a result can be shared.
// The engine and the catalog load by their fingerprinted URLs (data attributes), as /static/ caches for a year;
// llama.cpp and Ollama (kvcalc-llama.js) and SGLang (kvcalc-sglang.js) only once the reader picks one of them.
let K, llamaLoading = null, sglangLoading = null;

const $ = (tag, attrs = {}, ...kids) => {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) if (v !== null && v !== undefined && v !== false) el.setAttribute(k, v === true ? "" : v);
  el.append(...kids);
  return el;
};
const RAW = [["L", "Layers", "num_hidden_layers"], ["H", "Attention heads", "num_attention_heads"], ["KV", "KV heads", "num_key_value_heads"],
  ["D", "Head dim", "head_dim"], ["hid", "Hidden size", "hidden_size"], ["ff", "Intermediate size", "intermediate_size"],
  ["voc", "Vocabulary", "vocab_size"], ["ctx", "Context (max_position_embeddings)", "max_position_embeddings"]];
const ENGINES = { vllm: "vLLM", sglang: "SGLang", llamacpp: "llama.cpp", ollama: "Ollama" };
const SGLANG_KV = ["auto", "fp8_e4m3", "fp8_e5m2", "bf16"];
// The memory bar's segments, in the order and with the labels of generator/plan/budget_bar.py.
const VLLM_BAR = [["weights", "Weights"], ["non_torch", "Non-torch memory"], ["activation", "Activation or sampler peak"], ["cudagraph", "CUDA graphs"], ["kv", "KV cache"], ["reserve", "Left out by --gpu-memory-utilization"]];
const LLAMA_BAR = [["weights", "Weights"], ["kv", "KV cache"], ["compute", "Compute buffers"], ["free", "Free"]];

// One stacked bar of the GPU's memory as inline SVG, its figures also as text (the page's own bar, redrawn).
function budgetBar(id, title, total, segments, sizes) {
  const NS = "http://www.w3.org/2000/svg", svgEl = (tag, attrs) => { const el = document.createElementNS(NS, tag); for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v); return el; };
  const parts = segments.map(([key, label]) => [key, label, Math.max(sizes[key] || 0, 0)]);
  const used = parts.reduce((sum, p) => sum + p[2], 0), scale = Math.max(total, used, 1), over = Math.max(used - total, 0);
  const text = (n) => (n / K.GiB).toFixed(2) + " GiB";
  const overText = over > 0 ? `${text(over)} more than the GPU holds` : "";
  const svg = svgEl("svg", { role: "img", "aria-labelledby": id + "-title", viewBox: "0 0 1000 28", preserveAspectRatio: "none", width: "100%", height: "28", focusable: "false" });
  const name = svgEl("title", { id: id + "-title" });
  const figures = parts.map(([, label, n]) => label + " " + text(n)).join(", ");
  name.textContent = `${title}: ${figures}${over > 0 ? "; " + overText : ""}`;
  svg.append(name);
  let x = 0;
  for (const [key, , n] of parts) {
    const w = (1000 * n) / scale;
    if (w > 0) svg.append(svgEl("rect", { class: "bb-" + key, x: x.toFixed(1), y: "0", width: w.toFixed(1), height: "28" }));
    x += w;
  }
  if (over > 0) { const lx = ((1000 * total) / scale).toFixed(1); svg.append(svgEl("line", { class: "bb-limit", x1: lx, x2: lx, y1: "0", y2: "28" })); }
  return $("figure", { class: "budget", "data-bar": id, "data-out": "bar" }, svg,
    $("ul", { class: "bb-legend" }, ...parts.map(([key, label, n]) => $("li", {}, $("span", { class: "bb-swatch bb-" + key, "aria-hidden": "true" }), `${label}: ${text(n)}`))),
    $("figcaption", {}, `${title}${over > 0 ? ": " + overText + " (the line marks its memory)" : ""}.`));
}

// The config.json keys the engine reads (generator/schema.py HfConfig, which geometry.py consumes);
// a pasted config.json keeps these and drops the rest, as `kvtriage import-model` does.
const HF_KEYS = ["model_type", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
  "intermediate_size", "vocab_size", "torch_dtype", "max_position_embeddings", "rope_scaling", "sliding_window", "use_sliding_window",
  "sliding_window_pattern", "layer_types", "attention_chunk_size", "no_rope_layers", "kv_lora_rank", "qk_rope_head_dim", "q_lora_rank",
  "qk_nope_head_dim", "v_head_dim", "tie_word_embeddings", "num_local_experts", "num_experts", "n_routed_experts", "n_shared_experts",
  "moe_intermediate_size", "first_k_dense_replace", "num_experts_per_tok", "quantization_config"];

/** The engine's keys of a pasted config.json (its text_config for multimodal checkpoints); throws on text that is not one. */
export function pastedConfig(text) {
  const raw = JSON.parse(text);
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error("config.json must be a JSON object");
  const inner = raw.text_config && typeof raw.text_config === "object" && raw.text_config.num_hidden_layers ? raw.text_config : null;
  const c = inner ? { ...inner, model_type: inner.model_type || raw.model_type, torch_dtype: inner.torch_dtype || inner.dtype || raw.torch_dtype || raw.dtype,
    quantization_config: inner.quantization_config || raw.quantization_config } : { ...raw, torch_dtype: raw.torch_dtype || raw.dtype };
  // Remote-code configs name the layer count their own way (EXAONE: num_layers).
  if (c.num_hidden_layers === undefined) c.num_hidden_layers = c.num_layers ?? c.n_layer ?? c.n_layers;
  if (c.num_key_value_heads === undefined || c.num_key_value_heads === null) c.num_key_value_heads = c.num_attention_heads;
  const out = {};
  for (const k of HF_KEYS) if (c[k] !== undefined && (c[k] !== null || k === "sliding_window")) out[k] = c[k];
  for (const k of ["num_hidden_layers", "num_attention_heads", "hidden_size", "vocab_size", "max_position_embeddings"]) {
    if (!(Number.isInteger(out[k]) && out[k] > 0)) throw new Error(`config.json has no usable ${k}`);
  }
  if (!out.model_type) out.model_type = "custom";
  if (!["bfloat16", "float16", "float32"].includes(out.torch_dtype)) out.torch_dtype = "bfloat16";
  return out;
}

function field(name, label, control, hint) {
  control.id = "kc-" + name;
  control.name = name;
  const wrap = $("div", { class: "kc-field", "data-for": name }, $("label", { for: control.id }, label), control);
  if (hint) { control.setAttribute("aria-describedby", control.id + "-hint"); wrap.append($("small", { id: control.id + "-hint" }, hint)); }
  return wrap;
}
const select = (options) => $("select", {}, ...options.map(([v, t]) => $("option", { value: v }, t)));
const number = (attrs) => $("input", { type: "number", inputmode: "decimal", ...attrs });

// Weights as the form shows them; while the field still shows this, the catalog's exact bytes are used.
const weightsText = (entry) => (entry.variant.weights / K.GiB).toFixed(2);
const rawValue = (c, key) => String(c[key] || (key === "head_dim" && c.hidden_size ? Math.floor(c.hidden_size / c.num_attention_heads) : ""));

async function start(root) {
  const [engine, response] = await Promise.all([import(root.dataset.engineSrc), fetch(root.dataset.catalog)]);
  K = engine;
  const raw = await response.json();
  const cat = K.index(raw), d = root.dataset;
  const pageModel = cat.models[d.model], pageGpu = cat.gpus[d.gpu];
  const byMemory = Object.values(cat.gpus).sort((a, b) => a.total_bytes - b.total_bytes || (a.id < b.id ? -1 : 1));
  const modelSelect = $("select", {});
  for (const m of raw.models) modelSelect.append($("optgroup", { label: m.name }, ...m.variants.map((v) => $("option", { value: `${m.id}-${v.id}` }, `${m.name} ${v.name}`))));
  modelSelect.append($("option", { value: "custom" }, "Other: enter the numbers"));
  const cfg = (pageModel && pageModel.model.config) || {};

  // name -> [control, page default]
  const controls = {
    e: [select(Object.entries(ENGINES)), d.engine],
    g: [select([...byMemory.map((g) => [g.id, `${g.name} (${K.gib(g.total_bytes)})`]), ["custom", "Other: enter memory"]]), pageGpu ? pageGpu.id : "custom"],
    mem: [number({ min: "1", step: "0.01" }), pageGpu ? (pageGpu.total_bytes / K.GiB).toFixed(2) : "24"],
    m: [modelSelect, pageModel ? d.model : "custom"],
    w: [number({ min: "0.1", step: "0.01" }), pageModel ? weightsText(pageModel) : "16"],
    ...Object.fromEntries(RAW.map(([k, , key]) => [k, [number({ min: "1", step: "1" }), rawValue(cfg, key)]])),
    u: [number({ min: "0.05", max: "1", step: "0.01" }), d.utilization || String(cat.vllm.default_utilization)],
    kv: [select(["auto", "fp8", "fp8_e5m2"].map((x) => [x, x])), "auto"],
    len: [$("input", { type: "text", inputmode: "numeric", pattern: "auto|[0-9]*", placeholder: "model maximum" }), ""],
    tp: [select(["1", "2", "4", "8"].map((x) => [x, x])), "1"],
    pp: [select(["1", "2", "4"].map((x) => [x, x])), "1"],
    eager: [$("input", { type: "checkbox" }), false],
    c: [number({ min: "0", step: "256" }), String(cfg.max_position_embeddings || 4096)],
    ctk: [select(["f16", "q8_0", "q4_0"].map((x) => [x, x])), "f16"],
    np: [number({ min: "1", step: "1" }), "1"],
    nc: [number({ min: "4", step: "1024", placeholder: "Ollama's default" }), ""],
    onp: [number({ min: "1", step: "1" }), "1"],
    okv: [select(["f16", "q8_0", "q4_0"].map((x) => [x, x])), "f16"],
    sf: [number({ min: "0.05", max: "1", step: "0.01", placeholder: "SGLang's default" }), ""],
    sctx: [$("input", { type: "text", inputmode: "numeric", pattern: "[0-9]*[kKmM]?", placeholder: "model maximum" }), ""],
    smrr: [number({ min: "1", step: "1", placeholder: "not set" }), ""],
    sps: [select(["1", "16", "32", "64"].map((x) => [x, x])), "1"],
    skv: [select(SGLANG_KV.map((x) => [x, x])), "auto"],
    stp: [select(["1", "2", "4", "8"].map((x) => [x, x])), "1"],
    smtt: [number({ min: "1", step: "1", placeholder: "not set" }), ""],
  };
  const get = (k) => (controls[k][0].type === "checkbox" ? controls[k][0].checked : controls[k][0].value);
  const set = (k, v) => { const c = controls[k][0]; if (c.type === "checkbox") c.checked = v === true || v === "1"; else c.value = v; };
  const query = new URLSearchParams(location.search + (location.hash.includes("=") ? "&" + location.hash.slice(1) : ""));
  for (const [k, [, dflt]] of Object.entries(controls)) set(k, query.has(k) ? query.get(k) : dflt);
  if (![...controls.e[0].options].some((o) => o.value === get("e"))) set("e", "vllm");

  // A model the catalog lacks: its config.json pasted here fills the numbers below, and its other
  // keys (sliding window, MLA ranks, MoE, quantization) go to the engine with them.
  let pasted = null;
  const pasteBox = $("textarea", { rows: "4", spellcheck: "false", placeholder: '{"model_type": "...", "num_hidden_layers": ...}' });
  const pasteNote = $("small", { id: "kc-cfg-hint", "aria-live": "polite" }, "Paste the model's config.json to fill the numbers below.");
  pasteBox.id = "kc-cfg";
  pasteBox.setAttribute("aria-describedby", "kc-cfg-hint");
  const pasteField = $("div", { class: "kc-field kc-paste", "data-for": "cfg" }, $("label", { for: "kc-cfg" }, "Paste config.json"), pasteBox, pasteNote);
  pasteBox.addEventListener("input", () => {
    const text = pasteBox.value.trim();
    if (!text) { pasted = null; pasteNote.textContent = "Paste the model's config.json to fill the numbers below."; return; }
    try {
      pasted = pastedConfig(text);
      for (const [k, , key] of RAW) set(k, rawValue(pasted, key));
      set("c", String(pasted.max_position_embeddings));
      pasteNote.textContent = `Read ${pasted.model_type}: ${pasted.num_hidden_layers} layers, ${pasted.num_key_value_heads} KV heads.`;
    } catch (e) {
      pasted = null;
      pasteNote.textContent = `Not read: ${e.message}`;
    }
  });

  // A config.json pasted on the search page with the error (static/search.js) arrives once, here.
  let carried = null;
  try { carried = sessionStorage.getItem("kvtriage:config"); sessionStorage.removeItem("kvtriage:config"); } catch (e) { carried = null; }
  if (carried && !query.has("m")) {
    set("m", "custom");
    pasteBox.value = carried;
    pasteBox.dispatchEvent(new Event("input"));
  }

  const form = $("form", { class: "kc-form", "aria-describedby": "kc-help" },
    $("p", { id: "kc-help" }, "Change any setting; the figures, verdict and commands below update, and the address bar keeps the settings for sharing."),
    $("fieldset", {}, $("legend", {}, "GPU and model"), field("e", "Engine", controls.e[0]), field("g", "GPU", controls.g[0]), field("mem", "GPU memory (GiB, as CUDA reports it)", controls.mem[0]),
      field("m", "Model", controls.m[0]), field("w", "Weights (GiB)", controls.w[0])),
    $("fieldset", { "data-group": "raw" }, $("legend", {}, "Model numbers (config.json)"), pasteField, ...RAW.map(([k, label]) => field(k, label, controls[k][0]))),
    $("fieldset", { "data-group": "vllm" }, $("legend", {}, "vLLM settings"), field("u", "--gpu-memory-utilization", controls.u[0]), field("kv", "--kv-cache-dtype", controls.kv[0]),
      field("len", "--max-model-len", controls.len[0], "blank: the model's maximum; auto: the longest that fits"), field("tp", "--tensor-parallel-size", controls.tp[0]),
      field("pp", "--pipeline-parallel-size", controls.pp[0]), field("eager", "--enforce-eager", controls.eager[0])),
    $("fieldset", { "data-group": "llamacpp" }, $("legend", {}, "llama-server settings"), field("c", "-c (context)", controls.c[0]), field("ctk", "-ctk / -ctv", controls.ctk[0]), field("np", "-np (slots)", controls.np[0])),
    $("fieldset", { "data-group": "ollama" }, $("legend", {}, "Ollama server settings"), field("nc", "OLLAMA_CONTEXT_LENGTH", controls.nc[0], "blank: the default for this much VRAM"),
      field("onp", "OLLAMA_NUM_PARALLEL", controls.onp[0]), field("okv", "OLLAMA_KV_CACHE_TYPE", controls.okv[0])),
    $("fieldset", { "data-group": "sglang" }, $("legend", {}, "SGLang settings"),
      field("sf", "--mem-fraction-static", controls.sf[0], "blank: SGLang's default for this GPU and --tp"),
      field("sctx", "--context-length", controls.sctx[0], "blank: the model's, from config.json"),
      field("smrr", "--max-running-requests", controls.smrr[0], "blank: not set; also lowers the default fraction's CUDA-graph reserve"),
      field("sps", "--page-size", controls.sps[0]), field("skv", "--kv-cache-dtype", controls.skv[0]), field("stp", "--tp", controls.stp[0]),
      field("smtt", "--max-total-tokens", controls.smtt[0], "blank: the whole pool the memory allows")));
  form.addEventListener("submit", (ev) => ev.preventDefault());
  const out = $("div", { class: "kc-out", "aria-live": "polite" });
  root.querySelector("[data-kvcalc-root]").append(form, out);
  root.hidden = false;

  let timer = null;
  const changed = () => { clearTimeout(timer); timer = setTimeout(update, 120); };
  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  controls.m[0].addEventListener("change", () => {
    // A new model brings its own numbers; "Other" keeps the last model's as a starting point.
    const entry = cat.models[get("m")];
    if (!entry) return;
    set("w", weightsText(entry));
    for (const [k, , key] of RAW) set(k, rawValue(entry.model.config, key));
    set("c", String(entry.model.config.max_position_embeddings));
  });

  function engines() {
    // SGLang serves the checkpoints vLLM serves (its numbers sit beside vLLM's on the pages).
    const entry = cat.models[get("m")];
    if (!entry) return Object.keys(ENGINES);
    return entry.variant.engines.includes("vllm") ? ["vllm", "sglang", ...entry.variant.engines.filter((e) => e !== "vllm")] : entry.variant.engines;
  }
  async function update() {
    const wanted = get("e"), first = engines()[0];
    if ((wanted !== "vllm" && wanted !== "sglang") || (first !== "vllm" && first !== "sglang")) llamaLoading = llamaLoading || import(root.dataset.llamaSrc).then((m) => m.install(K));
    if (wanted === "sglang" || first === "sglang") sglangLoading = sglangLoading || import(root.dataset.sglangSrc).then((m) => m.install(K));
    if (llamaLoading) await llamaLoading;
    if (sglangLoading) await sglangLoading;
    const entry = cat.models[get("m")], custom = !entry, gpuCustom = !cat.gpus[get("g")], allowed = engines();
    for (const o of controls.e[0].options) o.disabled = !allowed.includes(o.value);
    if (!allowed.includes(get("e"))) set("e", allowed[0]);
    const engine = get("e");
    form.querySelector('[data-for="mem"]').hidden = !gpuCustom;
    form.querySelector('[data-for="w"]').hidden = !custom && (engine === "vllm" || engine === "sglang");
    for (const fs of form.querySelectorAll("fieldset[data-group]")) fs.hidden = fs.dataset.group === "raw" ? !custom : fs.dataset.group !== engine;
    const q = new URLSearchParams();
    for (const [k, [, dflt]] of Object.entries(controls)) { const v = get(k); if (String(v) !== String(dflt) && !(v === false && !dflt)) q.set(k, v === true ? "1" : v); }
    history.replaceState(null, "", (q.toString() ? "?" + q : location.pathname) + location.hash);
    out.replaceChildren(...render(engine, entry, gpuCustom));
  }

  function base(engine, entry, gpuCustom) {
    const r = { engine };
    if (entry) r.model = get("m");
    else {
      const c = pasted ? { ...pasted } : { model_type: "custom", torch_dtype: "bfloat16" };
      for (const [k, , key] of RAW) { const v = parseInt(get(k), 10); if (v > 0 && !(key === "head_dim" && pasted && pasted.head_dim === undefined && v === parseInt(rawValue(pasted, key), 10))) c[key] = v; }
      r.hf_config = c;
    }
    if (gpuCustom) r.gpu_memory_gib = parseFloat(get("mem")) || 0;
    else r.gpu = get("g");
    if (!entry || (engine !== "vllm" && engine !== "sglang")) {
      const w = entry && get("w") === weightsText(entry) ? entry.variant.weights / K.GiB : parseFloat(get("w"));
      if (w > 0) r.weights_gib = w;
    }
    return r;
  }

  function render(engine, entry, gpuCustom) {
    const r = base(engine, entry, gpuCustom);
    if (engine === "vllm") return vllm(r, entry);
    if (engine === "sglang") return sglangView(r, entry, gpuCustom);
    if (engine === "llamacpp") return llama(r, entry);
    return ollama(r, entry);
  }

  function table(caption, rows) {
    return $("table", { class: "numbers" }, $("caption", {}, caption),
      $("tbody", {}, ...rows.filter(Boolean).map(([th, td, key, total]) => $("tr", { class: total ? "total" : null }, $("th", { scope: "row" }, th), $("td", { "data-out": key }, td)))));
  }
  function command(text, title, key = "command") {
    const code = $("code", { "data-out": key }, text), btn = $("button", { type: "button", class: "copy" }, "Copy");
    btn.addEventListener("click", () => {
      const done = () => { btn.textContent = "Copied"; setTimeout(() => (btn.textContent = "Copy"), 1500); };
      if (navigator.clipboard) navigator.clipboard.writeText(text).then(done, () => {});
    });
    return $("figure", { class: "cmd" }, $("figcaption", {}, $("strong", {}, title)), $("pre", {}, code, btn));
  }
  const problem = (a) => [$("p", { class: "kc-verdict", "data-out": "verdict" }, "These settings cannot be computed: " + a.error_input)];

  function vllm(r, entry) {
    const len = get("len").trim(), flags = [];
    const u = parseFloat(get("u"));
    if (u !== cat.vllm.default_utilization) { r.gpu_memory_utilization = u; flags.push(["--gpu-memory-utilization", K.reprFloat(u)]); }
    if (get("kv") !== "auto") { r.kv_cache_dtype = get("kv"); flags.push(["--kv-cache-dtype", get("kv")]); }
    if (len) { r.max_model_len = len === "auto" ? -1 : parseInt(len, 10); flags.push(["--max-model-len", len]); }
    const tp = +get("tp"), pp = +get("pp");
    if (tp > 1) { r.tensor_parallel_size = tp; flags.push(["--tensor-parallel-size", String(tp)]); }
    if (pp > 1) { r.pipeline_parallel_size = pp; flags.push(["--pipeline-parallel-size", String(pp)]); }
    r.gpu_count = Math.max(2, tp * pp);
    if (get("eager")) { r.enforce_eager = true; flags.push(["--enforce-eager", ""]); }
    const a = K.answer(r, cat);
    if (a.error_input) return problem(a);
    const repo = (entry && entry.repo) || "MODEL", b = a.breakdown, longest = a.check_bytes > 0 ? Math.min(a.estimated_max_model_len, a.derived_max_model_len) : 0;
    const total = r.gpu ? cat.gpus[r.gpu].total_bytes : K.roundInt(r.gpu_memory_gib * K.GiB);
    const stage = pp > 1 ? ", pipeline stage " + a.binding_stage : "";
    const nodes = [
      a.fits ? $("p", { class: "kc-verdict", "data-out": "verdict" }, `vLLM ${a.vllm_version} starts: ${K.tokens(a.kv_cache_tokens)} tokens of KV cache, ${K.fixed(a.max_concurrency, 2)}x concurrency at ${K.tokens(a.max_model_len)} tokens.`)
        : $("div", { "data-out": "verdict" }, $("p", { class: "kc-verdict" }, `vLLM ${a.vllm_version} does not start; it stops with:`), $("pre", { class: "signature" }, $("code", { "data-out": "error" }, a.error))),
      table(`vLLM ${a.vllm_version}, ${tp * pp} GPU${tp * pp > 1 ? "s" : ""}${stage}`, [
        b && ["GPU memory (as CUDA reports it)", K.gib(r.gpu ? cat.gpus[r.gpu].total_bytes : K.roundInt(r.gpu_memory_gib * K.GiB)), "total"],
        b && [`× --gpu-memory-utilization ${K.fixed(a.gpu_memory_utilization, 2)} = requested`, K.gib(b.requested_bytes), "requested"],
        b && ["− weights (per GPU)", K.gib(b.weights_bytes), "weights"],
        b && ["− non-torch memory (assumed)", K.gib(b.non_torch_bytes), "non_torch"],
        b && [`− activation peak of a ${K.tokens(a.max_num_batched_tokens)}-token dummy batch (modelled)`, K.gib(b.activation_peak_bytes), "activation"],
        b && ["− CUDA-graph estimate (modelled)", K.gib(b.cudagraph_bytes), "cudagraph"],
        ["= KV cache memory", K.gib(a.available_kv_cache_bytes), "available", true],
        ["KV bytes per token", K.kib(a.kv_bytes_per_token), "per_token"],
        [`Block (${a.block_size} tokens)`, K.mib(a.bytes_per_block), "block"],
        ["Blocks", K.tokens(a.num_blocks), "blocks"],
        ["GPU KV cache size", K.tokens(a.kv_cache_tokens) + " tokens", "kv_tokens"],
        [`--max-model-len ${K.tokens(a.max_model_len)} needs`, K.gib(a.needed_bytes), "needed"],
        ["Longest --max-model-len that starts", K.tokens(longest), "max_len", true],
      ]),
      b && budgetBar("kc-bar-vllm", `vLLM ${a.vllm_version} memory budget on one GPU of ${K.gib(total)}`, total, VLLM_BAR, {
        weights: b.weights_bytes, non_torch: b.non_torch_bytes, activation: b.activation_peak_bytes, cudagraph: b.cudagraph_bytes,
        kv: a.available_kv_cache_bytes, reserve: total - b.requested_bytes }),
      $("p", { class: "note", "data-out": "release" }, `The calculator follows vLLM ${a.vllm_version}'s rules only; a log from an older release, above all from the V0 engine, prints different figures (`,
        $("a", { href: "/accuracy/#vllm" }, "how far off, release by release"), ")."),
      command(K.serveCommand(repo, flags), "Your command"),
    ].filter(Boolean);
    if (!a.fits && a.remediation.length) {
      // The reader's flags stay; a lever replaces its own flags and caps the length when it must.
      const own = flags.filter((f) => f[0] !== "--max-model-len"), levers = a.remediation.filter((l) => l.max_model_len_that_fits > 0);
      nodes.push($("table", { class: "levers" }, $("caption", {}, "What each lever buys"),
        $("thead", {}, $("tr", {}, ...["Change", "Longest context that starts", "Full context?"].map((t) => $("th", { scope: "col" }, t)))),
        $("tbody", {}, ...a.remediation.map((l) => $("tr", {}, $("td", {}, l.label, ...(l.note ? [$("br"), $("small", {}, l.note)] : [])),
          $("td", {}, K.tokens(l.max_model_len_that_fits)), $("td", {}, l.fits_requested ? "yes" : "no"))))));
      for (const l of levers.slice(0, 3)) {
        const f = K.serveFlags(l, own);
        if (len && !f.some((x) => x[0] === "--max-model-len")) f.push(["--max-model-len", len]);
        nodes.push(command(K.serveCommand(repo, f), `Starts with ${l.label}`, "lever-command"));
      }
    }
    return nodes;
  }

  function llama(r, entry) {
    const ctk = get("ctk");
    Object.assign(r, { ctx_size: parseInt(get("c"), 10) || 0, parallel: parseInt(get("np"), 10) || 1, cache_type_k: ctk, cache_type_v: ctk });
    const a = K.answer(r, cat);
    if (a.error_input) return problem(a);
    const llamaTotal = r.gpu ? cat.gpus[r.gpu].total_bytes : K.roundInt(r.gpu_memory_gib * K.GiB);
    const gguf = (entry && entry.variant.gguf) || "model.gguf", qt = ctk === "f16" ? [] : ["-ctk", ctk, "-ctv", ctk];
    if (a.startup_error) return [$("div", { "data-out": "verdict" }, $("p", { class: "kc-verdict" }, "llama-server refuses these settings:"), $("pre", { class: "signature" }, $("code", {}, a.startup_error)))];
    const nodes = [
      $("p", { class: "kc-verdict", "data-out": "verdict" }, a.fits ? `Fits: ${K.gib(a.gpu_bytes)} of ${K.gib(a.gpu_budget_bytes)} usable.` : `Does not fit: ${K.gib(a.gpu_bytes)} needed, ${K.gib(a.gpu_budget_bytes)} usable. ${a.fit_outcome}.`),
      table(`llama-server -c ${r.ctx_size}, ${a.n_seq_max} slot${a.n_seq_max > 1 ? "s" : ""}`, [
        ["Context after padding (n_ctx)", K.tokens(a.n_ctx), "n_ctx"],
        [`KV cache (${ctk})`, K.mib(a.kv_bytes), "kv"],
        ["Weights", K.gib(a.weights_bytes), "weights"],
        ["Compute buffer (modelled)", K.mib(a.compute_buffer_bytes), "compute"],
        ["Total on the GPU", K.gib(a.gpu_bytes), "total", true],
        ["Largest -c that fits", K.tokens(a.max_ctx_that_fits), "max_ctx", true],
        ["Layers that fit with -ngl", `${a.gpu_layers_that_fit} of ${K.geometry(r.hf_config || cat.models[r.model].hf_config, cat.vllm.geometry).layers + 1}`, "layers"],
      ]),
      budgetBar("kc-bar-llamacpp", `llama-server -c ${r.ctx_size} on a GPU of ${K.gib(llamaTotal)}`, llamaTotal, LLAMA_BAR, {
        weights: a.weights_bytes, kv: a.kv_bytes, compute: a.compute_buffer_bytes, free: llamaTotal - a.weights_bytes - a.kv_bytes - a.compute_buffer_bytes }),
      command(["llama-server", "-m", gguf, "-c", String(a.fits || !a.max_ctx_that_fits ? r.ctx_size : a.max_ctx_that_fits), "-np", String(r.parallel), ...qt].join(" "), a.fits || !a.max_ctx_that_fits ? "Your command" : "A context that fits"),
      $("pre", {}, $("code", {}, a.log_lines.join("\n"))),
    ];
    return nodes;
  }

  function ollama(r, entry) {
    const env = {}, nc = get("nc").trim();
    if (nc) env.OLLAMA_CONTEXT_LENGTH = nc;
    if (get("onp") !== "1") env.OLLAMA_NUM_PARALLEL = get("onp");
    if (get("okv") !== "f16") env.OLLAMA_KV_CACHE_TYPE = get("okv");
    r.env = env;
    const a = K.answer(r, cat);
    if (a.error_input) return problem(a);
    if (a.startup_error) return [$("p", { class: "kc-verdict", "data-out": "verdict" }, a.startup_error)];
    const tag = (entry && entry.variant.ollama) || "MODEL", vars = Object.entries(env).map(([k, v]) => `${k}=${v}`).join(" ");
    return [
      a.error ? $("div", { "data-out": "verdict" }, $("p", { class: "kc-verdict" }, "The load fails:"), $("pre", { class: "signature" }, $("code", {}, a.error)))
        : $("p", { class: "kc-verdict", "data-out": "verdict" }, `Loads as ${a.processor} at num_ctx ${K.tokens(a.num_ctx)} (${a.num_ctx_source}).`),
      table(`Ollama ${a.version}`, [
        ["Context per slot (num_ctx)", K.tokens(a.num_ctx), "num_ctx"],
        ["Slots (OLLAMA_NUM_PARALLEL)", String(a.num_parallel), "parallel"],
        [`KV cache (${a.kv_cache_type})`, K.mib(a.kv_bytes), "kv"],
        ["Weights + KV + compute", K.gib(a.weights_bytes + a.kv_bytes + a.compute_buffer_bytes), "total", true],
        ["Ollama's own prediction (f16 KV)", K.gib(a.predicted_vram_bytes), "predicted"],
      ]),
      command(`${vars ? vars + " " : ""}ollama serve\n# in another terminal:\nollama run ${tag}`, "Your server"),
    ];
  }
  function sglangView(r, entry, gpuCustom) {
    const val = (k) => String(get(k)).trim(), tp = +get("stp");
    if (val("sf")) r.mem_fraction_static = parseFloat(val("sf"));
    if (val("sctx")) r.context_length = /^\d+$/.test(val("sctx")) ? parseInt(val("sctx"), 10) : val("sctx");
    if (val("smrr")) r.max_running_requests = parseInt(val("smrr"), 10);
    if (get("sps") !== "1") r.page_size = +get("sps");
    if (get("skv") !== "auto") r.kv_cache_dtype = get("skv");
    if (tp > 1) r.tensor_parallel_size = tp;
    if (val("smtt")) r.max_total_tokens = parseInt(val("smtt"), 10);
    const a = K.answer(r, cat);
    if (a.error_input) return problem(a);
    const repo = (entry && entry.repo) || "MODEL", total = r.gpu ? cat.gpus[r.gpu].total_bytes : K.roundInt(r.gpu_memory_gib * K.GiB);
    // The command passes what the figures were computed with: SGLang's default fraction is written out.
    const flags = [["--model-path", repo], ["--tp-size", String(tp)], ["--mem-fraction-static", K.reprFloat(a.mem_fraction_static)], ["--context-length", String(a.context_length)]];
    if (r.kv_cache_dtype) flags.push(["--kv-cache-dtype", r.kv_cache_dtype]);
    if (r.page_size) flags.push(["--page-size", String(r.page_size)]);
    if (r.max_running_requests) flags.push(["--max-running-requests", String(r.max_running_requests)]);
    if (r.max_total_tokens) flags.push(["--max-total-tokens", String(r.max_total_tokens)]);
    const cmd = ["python -m sglang.launch_server", ...flags.map(([f, v]) => `${f} ${v}`)].join(" \\\n  ");
    const est = a.budget_estimated ? ` (estimated: free memory before loading taken as the card's total less ${a.startup_overhead_gb} GB)` : "";
    if (!a.starts) {
      return [$("div", { "data-out": "verdict" }, $("p", { class: "kc-verdict" }, `SGLang ${a.sglang_version} does not start; it stops with:`), $("pre", { class: "signature" }, $("code", { "data-out": "error" }, a.error))),
        table(`SGLang ${a.sglang_version}, ${tp} GPU${tp > 1 ? "s" : ""}${est}`, [
          ["GPU memory (as CUDA reports it)", K.gib(total), "total"],
          a.weights_bytes_per_rank !== null && ["Weights per GPU", K.gib(K.roundInt(a.weights_bytes_per_rank)), "weights"],
          ["--mem-fraction-static", K.reprFloat(a.mem_fraction_static), "fraction"],
        ]),
        command(cmd, "The command that fails")];
    }
    const ctx = a.context_length, perRequest = Math.floor(a.kv_cache_tokens / ctx);
    const concurrency = r.max_running_requests ? Math.min(perRequest, r.max_running_requests) : perRequest;
    const sizes = a.pool_kind === "mla" || a.pool_kind === "dsa" ? [["KV size (printed)", `${K.fixed(a.kv_size_gb, 2)} GB`, "kv_size"]]
      : [["K size / V size (printed)", `${K.fixed(a.k_size_gb, 2)} GB / ${K.fixed(a.v_size_gb, 2)} GB`, "kv_size"]];
    const nodes = [
      $("p", { class: "kc-verdict", "data-out": "verdict" }, `SGLang ${a.sglang_version} starts: a KV pool of ${K.tokens(a.kv_cache_tokens)} tokens per GPU, ` +
        `inputs up to ${K.tokens(a.max_req_input_len)} tokens, ${concurrency} request${concurrency === 1 ? "" : "s"} at the full ${K.tokens(ctx)}-token context at once.`),
      table(`SGLang ${a.sglang_version}, ${tp} GPU${tp > 1 ? "s" : ""}${est}`, [
        ["GPU memory (as CUDA reports it)", K.gib(total), "total"],
        a.weights_bytes_per_rank !== null && ["Weights per GPU", K.gib(K.roundInt(a.weights_bytes_per_rank)), "weights"],
        ["--mem-fraction-static", K.reprFloat(a.mem_fraction_static), "fraction"],
        ["KV pool memory per GPU", K.gib(a.kv_cache_memory_bytes), "available", true],
        ["KV bytes per token (one GPU)", `${Math.round(a.kv_bytes_per_token).toLocaleString("en-US")} bytes`, "per_token"],
        ["Pool (max_total_num_tokens)", K.tokens(a.kv_cache_tokens) + " tokens", "kv_tokens", true],
        a.swa_kv_cache_tokens !== null && ["Sliding-window layers' pool", K.tokens(a.swa_kv_cache_tokens) + " tokens", "swa_tokens"],
        ...sizes,
        ["--context-length", K.tokens(ctx) + " tokens", "context"],
        ["Longest input a request gets: min(context − 1, pool − 1) − 5", K.tokens(a.max_req_input_len) + " tokens", "max_input", true],
        ["Requests at the full context at once" + (r.max_running_requests ? " (capped by --max-running-requests)" : ""), String(concurrency), "concurrency"],
      ]),
      $("p", {}, "The log line SGLang would print:"),
      $("pre", {}, $("code", { "data-out": "log_line" }, a.log_lines.join("\n"))),
      command(cmd, "Your command"),
    ];
    if (!a.context_fits) nodes.splice(1, 0, $("p", { class: "note", "data-out": "short_pool" }, `The pool holds fewer tokens than --context-length, so SGLang starts but refuses longer inputs with: ` +
      `"Input length (N tokens) exceeds the maximum allowed length (${a.max_req_input_len} tokens)."`));
    return nodes;
  }
  await update();
}

const root = document.querySelector("[data-kvcalc]");
if (root) start(root).catch((e) => console.warn("kvcalc:", e));
