// The calculator's llama.cpp, Ollama and SGLang settings and views, loaded by kvcalc-ui.js with kvcalc-llama.js
// or kvcalc-sglang.js once the reader picks one of those engines, so a vLLM page does not fetch them.
// The memory bar's segments for llama.cpp, in the order and with the labels of generator/plan/budget_bar.py.
const LLAMA_BAR = [["weights", "Weights"], ["kv", "KV cache"], ["compute", "Compute buffers"], ["free", "Free"]];

/** The llama.cpp, Ollama and SGLang settings: name -> [control, default] (llama.cpp's -c stays with the model numbers in kvcalc-ui.js). */
export const controls = ({ $, select, number }) => ({
  ctk: [select(["f16", "q8_0", "q4_0"].map((x) => [x, x])), "f16"],
  np: [number({ min: "1", step: "1" }), "1"],
  nc: [number({ min: "4", step: "1024", placeholder: "Ollama's default" }), ""],
  onp: [number({ min: "1", step: "1" }), "1"],
  okv: [select(["f16", "q8_0", "q4_0"].map((x) => [x, x])), "f16"],
  sf: [number({ min: "0.05", max: "1", step: "0.01", placeholder: "SGLang's default" }), ""],
  sctx: [$("input", { type: "text", inputmode: "numeric", pattern: "[0-9]*[kKmM]?", placeholder: "model maximum" }), ""],
  smrr: [number({ min: "1", step: "1", placeholder: "not set" }), ""],
  sps: [select(["1", "16", "32", "64"].map((x) => [x, x])), "1"],
  skv: [select(["auto", "fp8_e4m3", "fp8_e5m2", "bf16"].map((x) => [x, x])), "auto"],
  stp: [select(["1", "2", "4", "8"].map((x) => [x, x])), "1"],
  smtt: [number({ min: "1", step: "1", placeholder: "not set" }), ""],
});

/** Their fieldsets, hidden but for the chosen engine's. */
export const fieldsets = ({ $, field }, controls) => [
  $("fieldset", { "data-group": "llamacpp" }, $("legend", {}, "llama-server settings"), field("c", "-c (context)", controls.c[0]), field("ctk", "-ctk / -ctv", controls.ctk[0]), field("np", "-np (slots)", controls.np[0])),
  $("fieldset", { "data-group": "ollama" }, $("legend", {}, "Ollama server settings"), field("nc", "OLLAMA_CONTEXT_LENGTH", controls.nc[0], "blank: the default for this much VRAM"),
    field("onp", "OLLAMA_NUM_PARALLEL", controls.onp[0]), field("okv", "OLLAMA_KV_CACHE_TYPE", controls.okv[0])),
  $("fieldset", { "data-group": "sglang" }, $("legend", {}, "SGLang settings"),
    field("sf", "--mem-fraction-static", controls.sf[0], "blank: SGLang's default for this GPU and --tp"),
    field("sctx", "--context-length", controls.sctx[0], "blank: the model's, from config.json"),
    field("smrr", "--max-running-requests", controls.smrr[0], "blank: not set; also lowers the default fraction's CUDA-graph reserve"),
    field("sps", "--page-size", controls.sps[0]), field("skv", "--kv-cache-dtype", controls.skv[0]), field("stp", "--tp", controls.stp[0]),
    field("smtt", "--max-total-tokens", controls.smtt[0], "blank: the whole pool the memory allows")),
];

/** The views by engine name, each (request so far, catalog entry, custom GPU?) -> nodes; `ui` carries the form's helpers. */
export function views({ $, K, cat, get, table, command, problem, budgetBar }) {
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
  function sglang(r, entry, gpuCustom) {
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
  return { llamacpp: llama, ollama, sglang };
}
