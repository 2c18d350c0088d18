// Triage a pasted log in the browser: the same rules and steps as generator/triage/core.py, line
// for line, reading the rules and the error records from /search/errors.json. No dependencies.
// A change here needs the same change there; tests/triage/test_js_parity.py runs both on the
// pasted corpus.
(function (root) {
  "use strict";

  var ANSI_ESCAPE = /\x1b\[[0-9;?]*[A-Za-z]/g;
  // Windows line endings shown as text ("^M") by some terminals and log viewers.
  var CARET_M = /\^M$/;
  // Readers retype errors, or copy them from rich text (a chat, a document, a rendered issue), which
  // turns quotes into typographic ones and spaces into non-breaking ones: the engines print ASCII.
  var TYPOGRAPHIC = [
    [/[\u2018\u2019\u201a\u201b\u2032]/g, "'"], [/[\u201c\u201d\u201e\u201f\u2033]/g, '"'],
    [/[\u00a0\u202f\u2007]/g, " "], [/\u200b/g, ""]
  ];
  var compiled = {};

  function search(pattern, text) {
    var regex = compiled[pattern];
    if (regex === undefined) {
      try {
        regex = new RegExp(pattern);
      } catch (err) {
        regex = null; // a pattern this browser cannot compile matches nothing
      }
      compiled[pattern] = regex;
    }
    return regex ? regex.exec(text) : null;
  }

  // Every non-empty match of the pattern in the text, left to right (Python's finditer).
  var compiledAll = {};
  function matchesOf(pattern, text) {
    var regex = compiledAll[pattern];
    if (regex === undefined) {
      try {
        regex = new RegExp(pattern, "g");
      } catch (err) {
        regex = null;
      }
      compiledAll[pattern] = regex;
    }
    var found = [];
    if (!regex) return found;
    regex.lastIndex = 0;
    var match;
    while ((match = regex.exec(text)) !== null) {
      if (match[0].length) found.push(match);
      else regex.lastIndex++;
    }
    return found;
  }

  // ------------------------------------------------------------------------- normalise

  function clean(raw) {
    var line = raw.replace(ANSI_ESCAPE, "").replace(/\r/g, "");
    TYPOGRAPHIC.forEach(function (pair) { line = line.replace(pair[0], pair[1]); });
    return line.replace(CARET_M, "");
  }

  function stripPrefixes(line, rules) {
    var hadPrefix = false;
    var changed = true;
    while (changed) {
      changed = false;
      rules.prefixes.forEach(function (prefix) {
        var match = search(prefix, line);
        if (match && match.index + match[0].length > 0) {
          line = line.slice(match.index + match[0].length);
          hadPrefix = changed = true;
        }
      });
    }
    var slog = search(rules.slog_line, line);
    if (slog) {
      var message = slog[3] !== undefined ? slog[3] : (slog[4] || "");
      line = (message.replace(/\\"/g, '"') + " " + slog[5]).trim();
      hadPrefix = true;
    }
    return [line, hadPrefix];
  }

  function normalise(text, rules) {
    var lines = [];
    text.split("\n").forEach(function (raw) {
      var cleaned = clean(raw);
      var stripped = stripPrefixes(cleaned, rules);
      var line = stripped[0];
      // A terminal or an issue form cut the previous line: this one carries on from it.
      if (lines.length && !stripped[1] && lines[lines.length - 1].length >= rules.wrap_width &&
          search(rules.continuation, cleaned) && !search(rules.not_continuation, cleaned)) {
        lines[lines.length - 1] = lines[lines.length - 1] + line;
        return;
      }
      lines.push(line);
    });
    // Trailing spaces go only now: a cut after "with 1024 " joins the next line with its space.
    return lines.filter(function (line) { return line.trim(); }).map(function (line) { return line.replace(/\s+$/, ""); });
  }

  // ------------------------------------------------------------------------- engine, release, step

  function detectEngine(text, rules) {
    var totals = {};
    text.split("\n").forEach(function (raw) {
      var line = clean(raw);
      Object.keys(rules.engine_markers).forEach(function (engine) {
        rules.engine_markers[engine].forEach(function (marker) {
          if (search(marker[1], line)) totals[engine] = (totals[engine] || 0) + marker[0];
        });
      });
    });
    var best = null;
    Object.keys(totals).sort().forEach(function (engine) { // by name, as in core.py
      if (best === null || totals[engine] > totals[best]) best = engine;
    });
    // An Ollama log carries many llama.cpp lines; one line of Ollama's own makes it Ollama's.
    Object.keys(rules.engine_embeds).forEach(function (outer) {
      if (best === rules.engine_embeds[outer].engine && totals[outer]) best = outer;
    });
    return best;
  }

  function detectRelease(lines, engine, rules) {
    var engines = engine ? [engine] : Object.keys(rules.release_markers).sort();
    for (var e = 0; e < engines.length; e++) {
      var patterns = rules.release_markers[engines[e]] || [];
      for (var p = 0; p < patterns.length; p++) {
        for (var i = 0; i < lines.length; i++) {
          var match = search(patterns[p], lines[i]);
          if (match) return match[1];
        }
      }
    }
    return null;
  }

  function detectStep(lines, engine, rules) {
    if (engine === null) return null;
    var bestStep = null, bestOrder = -1;
    (rules.step_markers[engine] || []).forEach(function (marker) {
      if (marker[1] > bestOrder && lines.some(function (line) { return search(marker[2], line); })) {
        bestStep = marker[0];
        bestOrder = marker[1];
      }
    });
    return bestStep;
  }

  // The page of a step: the first of its conditional pages whose regex matches the out-of-memory line.
  function stepPage(rules, engine, step, line) {
    var when = (rules.step_pages_when[engine] || {})[step] || [];
    for (var i = 0; i < when.length; i++) if (search(when[i][0], line)) return when[i][1];
    return (rules.step_pages[engine] || {})[step];
  }

  // ------------------------------------------------------------------------- ranking

  function wording(record, line) {
    var best = null, bestShare = 0;
    (record.wordings || []).forEach(function (pair) {
      var parts = pair[1].split(/\{[^}]*\}/).map(function (part) { return part.trim(); })
        .filter(function (part) { return part.length >= 4; });
      if (!parts.length) return;
      var found = 0, total = 0;
      parts.forEach(function (part) {
        total += part.length;
        if (line.indexOf(part) >= 0) found += part.length;
      });
      if (found / total > bestShare) {
        best = pair[0];
        bestShare = found / total;
      }
    });
    return best;
  }

  // Where each pattern first matches the line.
  function spansOf(patterns, line) {
    var spans = [];
    patterns.forEach(function (pattern) {
      var match = search(pattern, line);
      if (match) spans.push([match.index, match.index + match[0].length]);
    });
    return spans;
  }

  function overlaps(spans, start, end) {
    return spans.some(function (span) { return span[0] < end && start < span[1]; });
  }

  function lineFacts(lines, rules) {
    var facts = lines.map(function (line) {
      var spans = spansOf(rules.generic_oom, line);
      var wrappers = spansOf(rules.wrapper_lines, line);
      return {
        lookalike: !!search(rules.absurd_size, line) ||
          (!spans.length && rules.lookalike_lines.some(function (pattern) { return search(pattern, line); })),
        failure: !!search(rules.failure_line, line),
        reply: !!search(rules.reply_line, line),
        wrapper: wrappers.length > 0,
        wrappers: wrappers,
        expected: rules.expected_lines.some(function (pattern) { return search(pattern, line); }) ||
          rules.expected_when_equal.some(function (pattern) {
            var match = search(pattern, line);
            return !!match && match[1] === match[2];
          }),
        generic: spans
      };
    });
    markRetried(lines, facts, rules);
    return facts;
  }

  // A line saying the engine retried a failed step another way makes the generic out-of-memory lines right
  // before it expected: the retry decides, and a failure of the retry comes after it. The retry line itself
  // may still name a page (Ollama backing off to fewer GPU layers is a partial offload).
  function markRetried(lines, facts, rules) {
    lines.forEach(function (line, index) {
      if (!rules.retried_lines.some(function (pattern) { return search(pattern, line); })) return;
      for (var before = index - 1; before >= 0 && facts[before].generic.length; before--) {
        facts[before].expected = true;
        facts[before].generic = [];
      }
    });
  }

  // The look-alike line, when the paste states a failure of another kind and no memory failure.
  function lookalikeOnly(lines, facts, rules) {
    var found = null;
    for (var i = 0; i < lines.length && found === null; i++) if (facts[i].lookalike) found = lines[i];
    if (found === null) return null;
    for (var j = 0; j < lines.length; j++) {
      if (!facts[j].lookalike && (facts[j].generic.length || search(rules.memory_statement, lines[j]))) return null;
    }
    return found;
  }

  function confident(ranked, scores) {
    if (!ranked.length || ranked[0].score < scores.confident) return false;
    return ranked.length === 1 || ranked[0].score - ranked[1].score >= scores.navigate_margin;
  }

  function position(index, count, scores) {
    return scores.position_max * (count > 1 ? index / (count - 1) : 1);
  }

  function engineAdjustment(recordEngine, engine, rules) {
    var scores = rules.scores;
    if (engine === null) return [0, null];
    if (recordEngine === engine) return [scores.engine_match, engine + " log"];
    if ((rules.engine_embeds[engine] || {}).engine === recordEngine) return [0, recordEngine + " inside " + engine];
    return [scores.engine_mismatch, engine + " log, " + recordEngine + " error"];
  }

  function round2(value) {
    return Math.round(value * 100) / 100;
  }

  function candidate(record, score, line, index, pattern, step, notes) {
    return {
      id: record.id, engine: record.engine, title: record.title, url: record.url, score: round2(score),
      reason: { line: line, line_number: index + 1, pattern: pattern, wording: wording(record, line), step: step, notes: notes }
    };
  }

  // records: [{id, engine, title, url, patterns, weight, wordings: [[versions, text]]}]
  function triage(text, records, rules) {
    var byId = {};
    records.forEach(function (record) { byId[record.id] = record; });
    var scores = rules.scores;
    var lines = normalise(text, rules);
    var engine = detectEngine(text, rules);
    var release = detectRelease(lines, engine, rules);
    var facts = lineFacts(lines, rules);
    var lookalike = lookalikeOnly(lines, facts, rules);
    if (lookalike !== null) {
      return { engine: engine, release: release, step: null, candidates: [], numbers: extractNumbers(lines, rules),
        confident: false, lookalike: lookalike };
    }
    var best = {};
    var embeds = rules.engine_embeds[engine || ""] || {};
    // The step the paste shows the outer engine had reached, for pages offered only at one step.
    var reached = embeds.pages_at_step ? detectStep(lines, engine, rules) : null;

    function offer(c) {
      if (!best[c.id] || c.score > best[c.id].score) best[c.id] = c;
    }

    records.forEach(function (record) {
      // A log of the inner engine alone (llama.cpp's lines from KoboldCpp or llama-cpp-python) has
      // no marker of the outer one, or it would be the outer engine's: not the outer engine's pages,
      // but for those listed_inside, scored as another engine's.
      var outerOf = rules.engine_embeds[record.engine] || {};
      if (engine !== null && outerOf.engine === engine && (outerOf.listed_inside || []).indexOf(record.id) < 0) return;
      var adjustment = engineAdjustment(record.engine, engine, rules);
      record.patterns.forEach(function (pattern) {
        lines.forEach(function (line, index) {
          var fact = facts[index];
          if (fact.expected || fact.lookalike) return;
          // Every match, not only the leftmost: on a line that joins several messages the first
          // alternative to match may be the generic one.
          matchesOf(pattern, line).forEach(function (match) {
            var start = match.index, end = match.index + match[0].length;
            var score = scores.hit + (record.weight || 0) + adjustment[0] + position(index, lines.length, scores);
            score += scores.specific_per_char * Math.min(match[0].length, scores.specific_chars_max);
            var notes = adjustment[1] ? [adjustment[1]] : [];
            score += fact.failure ? scores.failure_line : scores.not_failure_line;
            if (fact.reply) {
              score += scores.reply_line;
              notes.push("the error the server replied with");
            }
            // Only the wrapper's own words: a line can carry the cause beside it.
            if (overlaps(fact.wrappers, start, end)) {
              score += scores.wrapper_line;
              notes.push("wrapper line: the failure it reports is elsewhere");
            }
            // Generic text says memory ran out, not where: it names no page by itself; the step does.
            if (overlaps(fact.generic, start, end)) return;
            if (record.weight) notes.push("weight " + (record.weight > 0 ? "+" : "") + record.weight);
            offer(candidate(record, score, line, index, pattern, null, notes));
            // llama.cpp failing inside Ollama: Ollama's page for it, scored as a hit of Ollama's.
            var outerPage = (embeds.pages || {})[record.id] ||
              ((embeds.pages_at_step || {})[record.id] || {})[reached || ""];
            var outer = outerPage ? byId[outerPage] : undefined;
            if (outer) {
              var outerScore = score - adjustment[0] + scores.engine_match + scores.embedded;
              offer(candidate(outer, outerScore, line, index, pattern, null, [record.engine + " failure inside " + engine + ": " + record.id]));
            }
          });
        });
      });
    });

    // A generic out-of-memory line names no page; the step the run had reached does. So does the
    // step of a traceback cut before its exception line.
    var genericLines = [];
    facts.forEach(function (fact, index) { if (fact.generic.length) genericLines.push(index); });
    // A title that no signature matched and that says memory ran out in the reader's words: a generic line.
    if (!genericLines.length && !Object.keys(best).length && lines.length === 1 && search(rules.title_oom, lines[0])) {
      genericLines.push(0);
    }
    var cutTraceback = !genericLines.length &&
      lines.some(function (line) { return search(rules.traceback_line, line); }) &&
      !lines.some(function (line) { return search(rules.exception_line, line); });
    var step = null;
    if (cutTraceback) {
      // A cut traceback is placed by its frames alone.
      var firstFrame = 0;
      while (!search(rules.traceback_line, lines[firstFrame])) firstFrame++;
      if (firstFrame > 0 && search(rules.traceback_header, lines[firstFrame - 1])) firstFrame--;
      step = detectStep(lines.slice(firstFrame), engine, rules);
      // A paste that stops at "Traceback (most recent call last):" has no frames to place it: then
      // the log before it says how far the run had got (frames that name no step do not). Frames that
      // name no step leave it to a log line after which only one step can come.
      var frames = lines.slice(firstFrame).filter(function (line) { return search(rules.traceback_line, line); });
      if (step === null && engine !== null) {
        var markers = rules.steps_next_framed[engine] || [];
        if (frames.length === 1) {
          markers = (rules.step_markers[engine] || []).concat(rules.steps_next[engine] || []).concat(markers);
        }
        var nextMarkers = {};
        nextMarkers[engine] = markers;
        step = detectStep(lines.slice(0, firstFrame), engine, { step_markers: nextMarkers });
      }
    } else if (genericLines.length) {
      // The raw lines keep their log prefixes, which name the module that logged.
      var rawLines = text.split("\n").map(function (raw) { return clean(raw); });
      step = detectStep(lines.concat(rawLines), engine, rules);
    }
    if ((genericLines.length || cutTraceback) && engine !== null) {
      var index = genericLines.length ? genericLines[genericLines.length - 1] : lines.length - 1;
      var pages = rules.step_pages[engine] || {};
      var routed = [];
      if (step) {
        var base = genericLines.length ? scores.step_routed : scores.step_traceback;
        routed.push([stepPage(rules, engine, step, lines[index]), base, "step " + step + (genericLines.length ? "" : " (traceback cut before its error)")]);
      }
      if (genericLines.length) routed.push([pages["default"], scores.step_default, "out of memory at an unknown step"]);
      for (var r = 0; r < routed.length; r++) {
        var record = routed[r][0] ? byId[routed[r][0]] : undefined;
        if (!record) continue;
        var score = routed[r][1] + (facts[index].failure ? scores.failure_line : 0) + position(index, lines.length, scores);
        offer(candidate(record, score, lines[index], index, "generic out of memory", step, [routed[r][2]]));
        break;
      }
    }

    var ranked = Object.keys(best).map(function (id) { return best[id]; })
      .filter(function (c) { return c.score >= scores.minimum; })
      .sort(function (a, b) { return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0); });
    return { engine: engine, release: release, step: step, candidates: ranked, numbers: extractNumbers(lines, rules),
      confident: confident(ranked, scores), lookalike: null };
  }

  // ------------------------------------------------------------------------- numbers

  function value(match, kind) {
    var raw = match[1];
    if (kind === "str") return raw.trim();
    if (kind === "ratio") return raw + "/" + match[2];
    if (kind === "int") {
      var whole = Number(raw.replace(/,/g, ""));
      return Number.isInteger(whole) ? whole : undefined;
    }
    var number = Number(raw);
    if (isNaN(number)) return undefined; // "1.2.3" caught by [\d.]+: not a number
    if (kind === "mib") {
      var unit = match[2];
      number = unit === "GiB" ? number * 1024 : unit === "KiB" ? number / 1024 : number;
      return round2(number);
    }
    return number;
  }

  function extractNumbers(lines, rules) {
    var numbers = {};
    rules.extract.forEach(function (rule) {
      if (Object.prototype.hasOwnProperty.call(numbers, rule[0])) return;
      for (var i = 0; i < lines.length; i++) {
        var match = search(rule[1], lines[i]);
        if (!match) continue;
        var found = value(match, rule[2]);
        if (found === undefined) continue;
        numbers[rule[0]] = found;
        break;
      }
    });
    return numbers;
  }

  // telling_line: what a full-text search should look for in a paste no signature matched.
  function tellingLine(text, rules) {
    var lines = normalise(text, rules);
    if (!lines.length) return "";
    var facts = lineFacts(lines, rules);
    var pick = -1;
    for (var i = lines.length - 1; i >= 0 && pick < 0; i--) if (facts[i].failure && !facts[i].wrapper && !facts[i].expected) pick = i;
    for (var j = lines.length - 1; j >= 0 && pick < 0; j--) if (facts[j].failure) pick = j;
    return lines[pick < 0 ? 0 : pick].slice(0, rules.telling_chars);
  }

  var api = { triage: triage, normalise: normalise, detectEngine: detectEngine, extractNumbers: extractNumbers, tellingLine: tellingLine };
  if (typeof module !== "undefined" && module.exports) module.exports = api;
  else root.kvTriage = api;
})(typeof window !== "undefined" ? window : this);
