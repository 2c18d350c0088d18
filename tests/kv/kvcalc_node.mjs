// Runs the in-page calculator's modules under Node: [requests, catalog] as JSON on stdin, answers on stdout.
// Usage: node tests/kv/kvcalc_node.mjs <repo root>
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const root = process.argv[2];
const K = await import(pathToFileURL(`${root}/templates/static/kvcalc.js`));
for (const name of ["llama", "sglang", "hybrid", "release"]) (await import(pathToFileURL(`${root}/templates/static/kvcalc-${name}.js`))).install(K);
const [requests, catalog] = JSON.parse(readFileSync(0, "utf8"));
const index = K.index(catalog);
process.stdout.write(JSON.stringify(requests.map((r) => K.answer(r, index))));
