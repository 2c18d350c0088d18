// The in-page calculator: a form over kvcalc.js. The static page already shows its own pair's numbers;
// this only adds the form. Settings live in the URL query so a result can be shared.
// The engine and the catalog load by their fingerprinted URLs (data attributes), as /static/ caches for a year;
// llama.cpp and Ollama (kvcalc-llama.js) and SGLang (kvcalc-sglang.js), with their views (kvcalc-ui-engines.js), only
// once the reader picks one of them; the config.json reader (kvcalc-paste.js) once the reader enters a model's numbers;
// state layers (kvcalc-hybrid.js) for a catalog model that has them or a pasted config.json; an older vLLM release's
// rules (kvcalc-release.js) once the reader picks one or the address names one (a log's, from the search page).
let K, R, hybridLoading = null, llamaLoading = null, sglangLoading = null, viewsLoading = null, pasteLoading = null, views = null;

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
    vr: [select(cat.vllm.releases.map((x) => [x.version, x.label])), cat.vllm.version],
    u: [number({ min: "0.05", max: "1", step: "0.01" }), d.utilization || String(cat.vllm.default_utilization)],
    kv: [select(["auto", "fp8", "fp8_e5m2"].map((x) => [x, x])), "auto"],
    len: [$("input", { type: "text", inputmode: "numeric", pattern: "auto|[0-9]*", placeholder: "model maximum" }), ""],
    tp: [select(["1", "2", "4", "8"].map((x) => [x, x])), "1"],
    pp: [select(["1", "2", "4"].map((x) => [x, x])), "1"],
    eager: [$("input", { type: "checkbox" }), false],
    c: [number({ min: "0", step: "256" }), String(cfg.max_position_embeddings || 4096)],
  };
  const get = (k) => (controls[k][0].type === "checkbox" ? controls[k][0].checked : controls[k][0].value);
  const set = (k, v) => { const c = controls[k][0]; if (c.type === "checkbox") c.checked = v === true || v === "1"; else c.value = v; };
  // A page opened from the search page carries the reader's figures in the fragment (#u=0.9&len=...).
  const query = new URLSearchParams(location.search + (location.hash.includes("=") ? "&" + location.hash.slice(1) : ""));
  // Controls kvcalc-ui-engines.js brings take their settings from the address as these do.
  const adopt = (more) => { for (const [k, c] of Object.entries(more)) { controls[k] = c; set(k, query.has(k) ? query.get(k) : c[1]); } };
  adopt(controls);
  if (![...controls.e[0].options].some((o) => o.value === get("e"))) set("e", "vllm");

  const form = $("form", { class: "kc-form", "aria-describedby": "kc-help" },
    $("fieldset", {}, $("legend", {}, "GPU and model"), field("e", "Engine", controls.e[0]), field("g", "GPU", controls.g[0]), field("mem", "GPU memory (GiB, as CUDA reports it)", controls.mem[0]),
      field("m", "Model", controls.m[0]), field("w", "Weights (GiB)", controls.w[0])),
    $("fieldset", { "data-group": "raw" }, $("legend", {}, "Model numbers (config.json)"), ...RAW.map(([k, label]) => field(k, label, controls[k][0]))),
    $("fieldset", { "data-group": "vllm" }, $("legend", {}, "vLLM settings"), field("vr", "vLLM release", controls.vr[0]), field("u", "--gpu-memory-utilization", controls.u[0]), field("kv", "--kv-cache-dtype", controls.kv[0]),
      field("len", "--max-model-len", controls.len[0], "blank: the model's maximum; auto: the longest that fits"), field("tp", "--tensor-parallel-size", controls.tp[0]),
      field("pp", "--pipeline-parallel-size", controls.pp[0]), field("eager", "--enforce-eager", controls.eager[0])));
  form.addEventListener("submit", (ev) => ev.preventDefault());
  const out = $("div", { class: "kc-out", "aria-live": "polite" });
  root.querySelector("[data-kvcalc-root]").append(form, out);

  // A model the catalog lacks: a config.json pasted in the field kvcalc-paste.js adds fills the numbers,
  // and its other keys (sliding window, MLA ranks, MoE, quantization) go to the engine with them.
  let pasted = null;
  const loadPaste = () => (pasteLoading = pasteLoading || import(d.pasteSrc).then((m) => {
    const paste = m.pasteField({ $, set, RAW, rawValue, use: (config) => (pasted = config) });
    form.querySelector("[data-group=raw] legend").after(paste.field);
    return paste;
  }));
  // A config.json pasted on the search page with the error (static/search.js) arrives once, here.
  let carried = null;
  try { carried = sessionStorage.getItem("kvtriage:config"); sessionStorage.removeItem("kvtriage:config"); } catch (e) { carried = null; }
  if (carried && !query.has("m")) {
    set("m", "custom");
    const paste = await loadPaste();
    paste.box.value = carried;
    paste.box.dispatchEvent(new Event("input"));
  }
  root.hidden = false;

  let timer = null;
  const changed = () => { clearTimeout(timer); timer = setTimeout(update, 120); };
  form.addEventListener("input", changed);
  form.addEventListener("change", changed);
  controls.m[0].addEventListener("change", () => {
    // A new model brings its own numbers; "Other" keeps the last model's as a starting point.
    const entry = cat.models[get("m")];
    if (!entry) return void loadPaste();
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
    if (llamaLoading || sglangLoading) viewsLoading = viewsLoading || import(root.dataset.viewsSrc).then((m) => {
      adopt(m.controls({ $, select, number }));
      form.append(...m.fieldsets({ $, field }, controls));
      views = m.views({ $, K, cat, get, table, command, problem, budgetBar });
    });
    if (llamaLoading) await llamaLoading;
    if (sglangLoading) await sglangLoading;
    if (viewsLoading) await viewsLoading;
    const entry = cat.models[get("m")], custom = !entry, gpuCustom = !cat.gpus[get("g")], allowed = engines();
    // An older release, or one the address names (a log's): kvcalc-release.js picks its range and its utilization default.
    if (get("vr") !== cat.vllm.version) R = R || await import(d.releaseSrc).then((m) => m.ui(K, cat, get, set, query.get("vr")));
    if (R) R.follow();
    if (entry ? entry.model.state : pasted) await (hybridLoading = hybridLoading || import(d.hybridSrc).then((m) => m.install(K)));
    if (custom) loadPaste();
    for (const o of controls.e[0].options) o.disabled = !allowed.includes(o.value);
    if (!allowed.includes(get("e"))) set("e", allowed[0]);
    const engine = get("e");
    form.querySelector('[data-for="mem"]').hidden = !gpuCustom;
    form.querySelector('[data-for="w"]').hidden = !custom && (engine === "vllm" || engine === "sglang");
    for (const fs of form.querySelectorAll("fieldset[data-group]")) fs.hidden = fs.dataset.group === "raw" ? !custom : fs.dataset.group !== engine;
    const q = new URLSearchParams();
    for (const [k, [, dflt]] of Object.entries(controls)) { const v = get(k); if (String(v) !== String(dflt) && !(v === false && !dflt)) q.set(k, v === true ? "1" : v); }
    // Until the other engines' controls load, their settings stay in the address as they came.
    if (!views) for (const [k, v] of query) if (!controls[k]) q.set(k, v);
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
    return engine === "vllm" ? vllm(r, entry) : views[engine](r, entry, gpuCustom);
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
    const len = get("len").trim(), flags = [], vr = get("vr"), old = vr !== cat.vllm.version;
    const u = parseFloat(get("u"));
    if (old) r.vllm_version = vr;
    if (u !== (R ? R.util() : cat.vllm.default_utilization)) { r.gpu_memory_utilization = u; flags.push(["--gpu-memory-utilization", K.reprFloat(u)]); }
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
    const stage = pp > 1 ? ", pipeline stage " + a.binding_stage : "", rel = old ? controls.vr[0].selectedOptions[0].text : a.vllm_version;
    const nodes = [
      a.fits ? $("p", { class: "kc-verdict", "data-out": "verdict" }, `vLLM ${rel} starts: ${K.tokens(a.kv_cache_tokens)} tokens of KV cache, ${K.fixed(a.max_concurrency, 2)}x concurrency at ${K.tokens(a.max_model_len)} tokens.`)
        : $("div", { "data-out": "verdict" }, $("p", { class: "kc-verdict" }, `vLLM ${rel} does not start; it stops with:`), $("pre", { class: "signature" }, $("code", { "data-out": "error" }, a.error))),
      table(`vLLM ${rel}, ${tp * pp} GPU${tp * pp > 1 ? "s" : ""}${stage}`, [
        b && ["GPU memory (as CUDA reports it)", K.gib(total), "total"],
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
      b && budgetBar("kc-bar-vllm", `vLLM ${rel} memory budget on one GPU of ${K.gib(total)}`, total, cat.vllm.bar, {
        weights: b.weights_bytes, non_torch: b.non_torch_bytes, activation: b.activation_peak_bytes, cudagraph: b.cudagraph_bytes,
        kv: a.available_kv_cache_bytes, reserve: total - b.requested_bytes }),
      $("p", { class: "note", "data-out": "release" }, `These figures follow vLLM ${rel}'s rules; pick your release above (`,
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

  await update();
}

const root = document.querySelector("[data-kvcalc]");
if (root) start(root).catch((e) => console.warn("kvcalc:", e));
