// Usage: node lighthouse-scores.mjs OUT.json URL...
// Runs Lighthouse (performance, accessibility, best practices, SEO) on each URL in one Chromium and
// writes {url: {scores: {category: score}, failing: [audit ids below 1 that carry weight],
// audits: {id: score} for the audits that depend on the page's bytes, not on the machine's speed}}.
import { writeFileSync } from "node:fs";
import * as chromeLauncher from "chrome-launcher";
import lighthouse from "lighthouse";
import { CHROME_FLAGS, CHROME_PATH } from "./chrome-flags.mjs";

const [out, ...urls] = process.argv.slice(2);
const categories = ["performance", "accessibility", "best-practices", "seo"];
// Performance audits decided by what the page is (its bytes, what blocks rendering), whatever the load.
const byteAudits = ["total-byte-weight", "render-blocking-resources", "render-blocking-insight", "unminified-css",
  "font-display", "font-display-insight"];
const chrome = await chromeLauncher.launch({ chromePath: CHROME_PATH, chromeFlags: CHROME_FLAGS });
const results = {};
try {
  for (const url of urls) {
    const run = await lighthouse(url, { port: chrome.port, output: "json", logLevel: "error", onlyCategories: categories });
    const lhr = run.lhr;
    const failing = [];
    for (const category of Object.values(lhr.categories)) {
      for (const ref of category.auditRefs) {
        const audit = lhr.audits[ref.id];
        if (ref.weight > 0 && audit.score !== null && audit.score < 1) {
          failing.push(`${category.id}/${ref.id}=${audit.score}${audit.displayValue ? " (" + audit.displayValue + ")" : ""}`);
        }
      }
    }
    results[url] = {
      scores: Object.fromEntries(categories.map((id) => [id, lhr.categories[id].score])),
      failing,
      audits: Object.fromEntries(byteAudits.filter((id) => lhr.audits[id] && lhr.audits[id].score !== null).map((id) => [id, lhr.audits[id].score])),
      runtimeError: lhr.runtimeError ? lhr.runtimeError.message : null,
    };
  }
} finally {
  await chrome.kill();
}
writeFileSync(out, JSON.stringify(results, null, 2));
