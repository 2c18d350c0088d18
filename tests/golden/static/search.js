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

  function show(rows) {
    var p = document.createElement("p");
    if (!rows.length) {
      p.textContent = "No error signature matches that text. The full-text results below may still find it.";
      out.appendChild(p);
      return;
    }
    p.textContent = rows.length + " error signatures match what you pasted:";
    var ul = document.createElement("ul");
    rows.forEach(function (row) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = row.url;
      a.textContent = row.title;
      li.appendChild(a);
      li.appendChild(document.createTextNode(" (" + row.engine + ")"));
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
  fetch(box.getAttribute("data-index"))
    .then(function (response) { return response.json(); })
    .then(function (data) {
      var rows = matching(query, data.errors || []);
      if (rows.length === 1) {
        window.location.replace(rows[0].url);
        return;
      }
      show(rows);
      fullText(rows.length ? "" : query);
    })
    .catch(function () { fullText(query); });
})();
