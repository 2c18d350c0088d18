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
    return result.candidates.map(function (c) {
      return { url: c.url, title: c.title, engine: byId[c.id].engineName, score: c.score, reason: c.reason };
    });
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

  function clearLead(rows, margin) {
    return rows.length === 1 || (rows.length > 1 && rows[0].score - rows[1].score >= margin);
  }

  function show(rows) {
    var p = document.createElement("p");
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
      var ui = new window.PagefindUI({ element: "#pagefind", showSubResults: true, showImages: false });
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
      var margin = rows ? data.triage_rules.scores.navigate_margin : 0;
      if (!rows || !rows.length) rows = matching(query, data.errors || []);
      if (clearLead(rows, margin)) {
        window.location.replace(rows[0].url);
        return;
      }
      show(rows);
      if (config) {
        var note = document.createElement("p");
        note.textContent = "Your config.json was read: the calculator on the error page you open computes from it.";
        out.appendChild(note);
      }
      fullText(rows.length ? "" : query);
    })
    .catch(function () { fullText(query); });
})();
