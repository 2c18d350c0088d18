// The search page: match a pasted error against every error signature's pattern and jump to its
// page; otherwise list the matches and run Pagefind's full-text search. No framework, no server:
// the page lists every error without this file.
(function () {
  "use strict";
  var box = document.getElementById("pagefind");
  var out = document.getElementById("matches");
  var field = document.getElementById("q");
  if (!box || !out || !field) return;
  var query = new URLSearchParams(window.location.search).get("q") || "";
  field.value = query;

  function matching(text, rows) {
    var flat = text.replace(/\s+/g, " ");
    var found = [];
    rows.forEach(function (row) {
      var exact, loose;
      try {
        exact = new RegExp(row.pattern);
        loose = new RegExp(row.pattern, "i");
      } catch (err) {
        return;
      }
      if (exact.test(text) || exact.test(flat)) found.push({ row: row, rank: 0 });
      else if (loose.test(flat)) found.push({ row: row, rank: 1 });
    });
    var best = Math.min.apply(null, found.map(function (f) { return f.rank; }));
    return found.filter(function (f) { return f.rank === best; }).map(function (f) { return f.row; });
  }

  // Ranked by static/triage.js (the rules of generator/triage): pages best first, each with the
  // line that matched. null when the triage is not loaded or the index has no rules.
  function triaged(text, data) {
    var rules = data.triage_rules;
    if (!window.kvTriage || !rules) return null;
    var records = (data.errors || []).filter(function (row) { return row.triage; }).map(function (row) {
      return {
        id: row.id, title: row.title, url: row.url, engineName: row.engine, engine: row.triage.engine,
        patterns: row.triage.patterns, weight: row.triage.weight, wordings: row.triage.wordings
      };
    });
    var result = window.kvTriage.triage(text, records, rules);
    var byId = {};
    records.forEach(function (record) { byId[record.id] = record; });
    var rows = result.candidates.map(function (c) {
      return { url: c.url, title: c.title, engine: byId[c.id].engineName, score: c.score, reason: c.reason };
    });
    rows.confident = result.confident;
    rows.lookalike = result.lookalike;
    rows.numbers = result.numbers;
    rows.engine = result.engine;
    rows.release = result.release;
    rows.telling = window.kvTriage.tellingLine ? window.kvTriage.tellingLine(text, rules) : "";
    return rows;
  }

  // What a confident match carries to its page: the calculator there (static/kvcalc-ui.js) reads
  // its fields from the fragment as from the query, so it opens on the reader's own settings, and on
  // the vLLM release the log names (vr: kvcalc-release.js opens the range that holds it).
  // [field, number, the values the field offers (none: any)]
  var CARRIED = {
    vllm: [["u", "gpu_memory_utilization"], ["kv", "kv_cache_dtype", ["auto", "fp8", "fp8_e5m2"]],
      ["len", "max_model_len"], ["tp", "tensor_parallel_size", ["1", "2", "4", "8"]], ["mem", "gpu_total_gib"]],
    llamacpp: [["c", "n_ctx"], ["ctk", "type_k", ["f16", "q8_0", "q4_0"]], ["np", "n_seq_max"]]
  };
  function carried(engine, numbers, release) {
    var q = new URLSearchParams();
    if (engine === "vllm" && release) q.set("vr", release);
    (CARRIED[engine] || []).forEach(function (rule) {
      var value = numbers && numbers[rule[1]] !== undefined ? String(numbers[rule[1]]) : null;
      if (value !== null && (!rule[2] || rule[2].indexOf(value) !== -1)) q.set(rule[0], value);
    });
    if (q.has("mem")) q.set("g", "custom");
    if (q.toString()) q.set("e", engine);
    return q.toString() ? "#" + q.toString() : "";
  }

  // The reader's own figures (static/recompute.js over the in-page engine), when the paste prints
  // vLLM's KV cache memory, by the rules of the release the log names (static/kvcalc-release.js) when
  // the calculator has them. Resolves to whether a panel was shown.
  function diagnose(numbers, release) {
    var panel = document.getElementById("diagnosis");
    var llama = numbers && numbers.available_kv_cache_gib === undefined && numbers.kv_buffer_mib !== undefined &&
      numbers.n_ctx !== undefined && numbers.device_free_mib !== undefined && numbers.second_device === undefined;
    if (!panel || !numbers || (numbers.available_kv_cache_gib === undefined && !llama)) return Promise.resolve(false);
    var d = panel.dataset;
    // The state-layer module too: the log may name a hybrid (Mamba / Gated DeltaNet) catalog model.
    return Promise.all([import(d.engineSrc), import(d.recomputeSrc), fetch(d.catalog).then(function (r) { return r.json(); }), import(d.hybridSrc),
      release ? import(d.releaseSrc) : null])
      .then(function (loaded) {
        var K = loaded[0], R = loaded[1], raw = loaded[2];
        loaded[3].install(K);
        if (loaded[4]) loaded[4].install(K);
        if (llama) {
          var fit = R.recomputeLlamacpp(numbers, raw.llamacpp.ctx_pad);
          if (!fit || fit.fitting_ctx === null) return false;
          renderLlama(panel, fit);
          renderFix(panel, R.readerFix(query, fit));
          return true;
        }
        var model = R.matchModel(numbers.model, raw);
        var figures = R.recomputeVllm(numbers, model, K, (loaded[4] && loaded[4].releaseFor(release, raw)) || raw.vllm);
        if (!figures) return false;
        render(panel, figures);
        renderFix(panel, R.readerFix(query, figures));
        return true;
      })
      .catch(function () { return false; });
  }

  // The reader's own command (from the paste) with only the fix changed, and what each change buys.
  function renderFix(panel, fixed) {
    if (!fixed) return;
    [fixed].concat(fixed.alternative ? [fixed.alternative] : []).forEach(function (f, i) {
      var p = document.createElement("p");
      p.className = "reader-command";
      p.textContent = i ? "Or:" : "Your command, with only the fix changed (model and flags from " + f.source + "):";
      panel.appendChild(p);
      var pre = document.createElement("pre");
      pre.textContent = f.command;
      panel.appendChild(pre);
      var ul = document.createElement("ul");
      f.changes.forEach(function (note) { var li = document.createElement("li"); li.textContent = note; ul.appendChild(li); });
      panel.appendChild(ul);
    });
  }

  function renderLlama(panel, f) {
    var h = document.createElement("h2");
    h.textContent = "Your numbers, recomputed";
    panel.appendChild(h);
    var p = document.createElement("p");
    p.textContent = "Your log's KV cache is " + f.kv_mib.toFixed(2) + " MiB for " + f.n_ctx.toLocaleString("en-US") + " tokens (" +
      f.mib_per_1k.toFixed(2) + " MiB per 1024 tokens). The largest -c whose cache fits the device's free memory beside the weights and the compute buffer: " +
      f.fitting_ctx.toLocaleString("en-US") + ". llama.cpp prints MiB with two decimals, so each figure is known to 0.005 MiB.";
    panel.appendChild(p);
    var code = document.createElement("pre");
    code.textContent = f.command;
    panel.appendChild(code);
    [["from-log", "From your log: " + f.from_log.join("; ") + "."], ["modelled", "Modelled: " + f.modelled.join("; ") + "."]].forEach(function (pair) {
      var el = document.createElement("p");
      el.className = pair[0];
      el.textContent = pair[1];
      panel.appendChild(el);
    });
    panel.hidden = false;
  }

  function render(panel, f) {
    function para(text, tag) {
      var el = document.createElement(tag || "p");
      el.textContent = text;
      panel.appendChild(el);
      return el;
    }
    function span(s, digits) {
      var fmt = function (v) { return digits ? v.toFixed(digits) : Math.trunc(v).toLocaleString("en-US"); };
      return fmt(s.low) === fmt(s.high) ? fmt(s.low) : fmt(s.low) + " to " + fmt(s.high);
    }
    para("Your numbers, recomputed", "h2");
    para("Your log prints " + f.source_line + ": " + f.available_gib.toFixed(2) + " GiB. vLLM rounds that to two decimals, so the memory was " +
      (f.available_gib - 0.005).toFixed(3) + " to " + (f.available_gib + 0.005).toFixed(3) + " GiB; each figure below holds for both ends.");
    var ul = document.createElement("ul");
    function item(text) { var li = document.createElement("li"); li.textContent = text; ul.appendChild(li); }
    item("Longest --max-model-len that starts: " + span(f.longest) + " tokens" + (f.model ? " (" + f.model + ")" : ""));
    if (f.longest_fp8) item("With --kv-cache-dtype fp8: " + span(f.longest_fp8) + " tokens");
    if (f.concurrency && f.max_model_len) item("Requests of " + f.max_model_len.toLocaleString("en-US") + " tokens held at once: " + span(f.concurrency, 2) + "x");
    panel.appendChild(ul);
    var code = document.createElement("pre");
    code.textContent = f.command;
    panel.appendChild(code);
    para("From your log: " + f.from_log.join("; ") + ".", "p").className = "from-log";
    para("Modelled: " + f.modelled.join("; ") + ".", "p").className = "modelled";
    panel.hidden = false;
  }

  // A config.json pasted with the error (for a model the catalog lacks) goes with the reader: the
  // calculator on the page the paste leads to reads it into its "Paste config.json" field.
  function pastedConfigText(text) {
    var ends = [];
    for (var e = text.lastIndexOf("}"); e !== -1 && ends.length < 20; e = text.lastIndexOf("}", e - 1)) ends.push(e);
    for (var i = text.indexOf("{"), tries = 0; i !== -1 && tries < 20; i = text.indexOf("{", i + 1), tries++) {
      for (var k = 0; k < ends.length && ends[k] > i; k++) {
        var body = text.slice(i, ends[k] + 1), obj;
        try { obj = JSON.parse(body); } catch (err) { continue; }
        if (obj && typeof obj === "object" && !Array.isArray(obj) && (obj.num_hidden_layers || obj.num_layers || obj.text_config)) return body;
      }
    }
    return null;
  }

  function show(rows, lookalike) {
    var p = document.createElement("p");
    if (lookalike) {
      p.textContent = "What you pasted reports a failure that is not about memory, and no error page here covers it: " +
        (lookalike.length > 160 ? lookalike.slice(0, 157) + "..." : lookalike);
      out.appendChild(p);
      return;
    }
    if (!rows.length) {
      p.textContent = "No error signature matches that text. The full-text results below may still find it.";
      out.appendChild(p);
      return;
    }
    p.textContent = rows.length + " error signatures match what you pasted, best first:";
    var ul = document.createElement("ul");
    rows.forEach(function (row) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = row.url;
      a.textContent = row.title;
      li.appendChild(a);
      li.appendChild(document.createTextNode(" (" + row.engine + ")"));
      if (row.reason) {
        var why = document.createElement("small");
        var line = row.reason.line.length > 160 ? row.reason.line.slice(0, 157) + "..." : row.reason.line;
        why.textContent = " matched line " + row.reason.line_number + ": " + line +
          (row.reason.step ? " (step: " + row.reason.step.replace(/_/g, " ") + ")" : "");
        li.appendChild(why);
      }
      ul.appendChild(li);
    });
    out.appendChild(p);
    out.appendChild(ul);
  }

  function fullText(text) {
    var css = document.createElement("link");
    css.rel = "stylesheet";
    css.href = "/pagefind/pagefind-ui.css";
    document.head.appendChild(css);
    var script = document.createElement("script");
    script.src = "/pagefind/pagefind-ui.js";
    script.onload = function () {
      if (typeof window.PagefindUI !== "function") return;
      // Pair pages are indexed in a bundle of their own (data-pairs), merged into this one: PagefindUI's
      // mergeIndex takes [{bundlePath}] (pagefind_ui/default/ui-core.js at v1.5.2), and a search runs
      // on every bundle and sorts all their results by score together (search() in
      // pagefind_web_js/lib/coupled_search.ts at v1.5.2), github.com/Pagefind/pagefind.
      var pairs = box.getAttribute("data-pairs");
      var ui = new window.PagefindUI({ element: "#pagefind", showSubResults: true, showImages: false,
        mergeIndex: pairs ? [{ bundlePath: pairs }] : [] });
      if (text) ui.triggerSearch(text.slice(0, 200));
    };
    document.body.appendChild(script);
  }

  if (!query.trim()) {
    fullText("");
    return;
  }
  var config = pastedConfigText(query);
  if (config) {
    try { window.sessionStorage.setItem("kvtriage:config", config); } catch (err) { config = null; }
  }
  fetch(box.getAttribute("data-index"))
    .then(function (response) { return response.json(); })
    .then(function (data) {
      var rows = triaged(query, data);
      var numbers = rows ? rows.numbers : null, release = rows && rows.engine === "vllm" ? rows.release : null;
      var telling = rows && rows.telling ? rows.telling : query;
      var lookalike = rows ? rows.lookalike : null;
      // Only one confident match is gone to; the signature search's rows (no triage score) and weak
      // matches are listed, best first.
      var go = !!(rows && rows.confident);
      if (!lookalike && (!rows || !rows.length)) rows = matching(query, data.errors || []);
      return diagnose(numbers, release).then(function (shown) {
        // A paste that prints the reader's own numbers stays here, with them, above the ranked pages.
        if (!shown && go) {
          window.location.replace(rows[0].url + carried(rows.engine, numbers, release));
          return;
        }
        show(rows || [], lookalike);
        if (config) {
          var note = document.createElement("p");
          note.textContent = "Your config.json was read: the calculator on the error page you open computes from it.";
          out.appendChild(note);
        }
        fullText(rows && rows.length ? "" : telling);
      });
    })
    .catch(function () { fullText(query); });
})();
