// generator/engine/from_log.py in the browser: a pasted vLLM log's printed KV memory, through the
// in-page engine (kvcalc.js, passed in as K with its constants V), to the longest --max-model-len
// that starts, the fp8 figure and the concurrency, at both ends of the printed value's rounding.
// Kept step for step with the Python; tests/triage/test_recompute_js.py holds them to the same output.

const GIB = 1024 ** 3;
const HALF_STEP = 0.005;
const DEFAULT_BLOCK_SIZE = 16;

const commas = (n) => Math.trunc(n).toLocaleString("en-US");
const version = (text) => {
  const m = /^v?(\d+)\.(\d+)(?:\.(\d+))?/.exec(String(text || "").trim());
  return m ? [Number(m[1]), Number(m[2]), Number(m[3] || 0)] : null;
};
const atLeast = (a, b) => a[0] !== b[0] ? a[0] > b[0] : a[1] !== b[1] ? a[1] > b[1] : a[2] >= b[2];

// generator/kv/hf_ids.py in the browser: the catalog record a log's model id names (HfIdIndex.resolve), and the vLLM
// build the recompute takes (vllm_build). tests/triage/test_resolve_js.py holds the two to the same answers.
const URL_PREFIX = /^(?:https?:\/\/)?(?:www\.)?(?:huggingface\.co|hf\.co|modelscope\.cn)\/(?:models\/)?/i;
const REPO = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+$/;
const SHARD = /-\d{5}-of-\d{5}(?=\.gguf$)/i;
// mradermacher's imatrix quants write i1 before the type and split big files after .gguf (hf_ids.py gives the source).
const QUANT_SUFFIX = /[-._](?:UD-|i1-)?(?:I?Q\d[A-Z0-9_]*|TQ\d_\d|F16|BF16|F32|FP16|MXFP4(?:_MOE)?)$/i;
const SHARD_BARE = /-\d{5}-of-\d{5}$/;
const GGUF_PART = /(?<=\.gguf)\.part\d+of\d+$/i;
// GGUF-my-repo's `{username}/{MODEL_NAME}-{q_method}-GGUF`: without -GGUF, a GGUF file's name.
const GGUF_MY_REPO = /(?<=[A-Za-z0-9_])-GGUF$/i;
// -128K-GGUF: unsloth's GGUF builds with YaRN on for a longer context, the same layers and heads (hf_ids.py gives the source).
const PACKAGING_WORD = new RegExp(
  "[-_.](?:awq|gptq|int[248]|fp[48]|nvfp4|mxfp4|fp16|bf16|dynamic|static|w[48]a(?:8|16)|g\\d+|bnb|\\d+(?:\\.\\d+)?bit|unsloth" +
  "|gguf|mlx|quantized|autoround|exl2|mixed|a?sym|ov|mtp|qat|q4_0|unquantized|kv|quarot|hf|i1|dwq|\\d+k-gguf)$", "i");
// ModelScope's snapshot_download names the local folder after the repository with each `.` as `___`.
const MODELSCOPE_DOT = /___/g;
const OLLAMA_TAG = /^([a-z0-9][a-z0-9._-]*):([a-z0-9._]+)(?:-([a-z0-9._-]+))?$/i;
const OLLAMA_REGISTRY = /^(?:https?:\/\/)?(?:registry\.ollama\.ai|ollama\.com)\/library\//i;
// A LiteLLM provider route (hf_ids.py's docstring gives the sources): `openai/` only before owner/name; RamaLama's ollama://.
const LITELLM_ROUTE = /^(?:ollama|ollama_chat|hosted_vllm|docker_model_runner)\/|^ollama:\/\/|^openai\/(?=[^/]+\/[^/]+$)/i;
// A name under a user's namespace, as Ollama and Docker Model Runner name pushes (maryasov/qwen2.5-coder:32b-instruct-q8_0).
const OLLAMA_NAMESPACED = /^(?:(?:https?:\/\/)?(?:registry\.ollama\.ai|ollama\.com|docker\.io)\/)?[a-z0-9][a-z0-9._-]*\/([a-z0-9][a-z0-9._-]*:[a-z0-9._-]+)$/i;
// A version's dot written as a hyphen, as DNS-label names spell it (kimi-k2-5); the decimal-size reading (qwen3-1-7b).
const HYPHEN_DOT = /(?<=[A-Za-z-]\d)-(?=\d(?:-|$))/g;
// A version's dot written as `_` (Qwen3_6-35B, internlm2_5), read as that hyphen (hf_ids.py gives the sources).
const UNDERSCORE_DOT = /(?<=[A-Za-z-]\d)_(?=\d(?:-|$))/g;
const HYPHEN_SIZE_DOT = /(?<=-\d)-(?=\d+[bmt](?:-|$))/gi;
const SIZE = /^(?:(?:\d+x)?\d+(?:\.\d+)?[bmt]|e\d+b)$/i;
const ACTIVE = /^a\d+(?:\.\d+)?b$/i;
const CHAT_WORDS = new Set(["instruct", "it", "chat"]);
const VERSION = /^v\d+(?:\.\d+)*$/i;
const OLLAMA_QUANT = /^(?:i?q\d[a-z0-9_]*|fp\d+|bf16|int\d|mxfp4|nvfp4|qat)$/i;
const FAMILY_NUMERAL = /^([a-z]+)(\d+(?:\.\d+)?)(-.+)$/i;
// Qwen's own GGUF files write the family and VL as one word (Qwen3VL-8B-Instruct-Q4_K_M.gguf); hf_ids.py gives the source.
const GLUED_VL = /^(qwen\d+(?:\.\d+)?)(vl)(-.+)$/i;
const CACHE_DIR = /^(?:models--)?([A-Za-z0-9_.-]+?)--([A-Za-z0-9_.-]+)$/;
// llama.cpp's -hf cache file: owner_repo_file, every `/` as `_` (hf_ids.py gives the source).
const LLAMACPP_CACHE_FILE = /^([A-Za-z0-9.-]+)_([A-Za-z0-9._-]+?-GGUF)_(.+\.gguf)$/i;
// A Kaggle Models mount, /kaggle/input/[models/<owner>/]<slug>/<framework>/<variation>/<version>: hf_ids.py's _kaggle and its sources.
const KAGGLE_INPUT = /(?:^|\/)kaggle\/input\/(?:models\/[^/]+\/)?([^/]+)\/[^/]+\/([^/]+)\/\d+$/i;

const key = (text) => String(text).trim().toLowerCase();
const target = (modelId, variantId, sameArchitectureOnly) => ({ model_id: modelId, variant_id: variantId, same_architecture_only: !!sameArchitectureOnly });
const targetKey = (t) => `${t.model_id}|${t.variant_id}|${t.same_architecture_only}`;

function unique(pairs) {
  const seen = new Map();
  for (const [k, t] of pairs) {
    if (!seen.has(k)) seen.set(k, new Map());
    seen.get(k).set(targetKey(t), t);
  }
  const out = new Map();
  for (const [k, targets] of seen) if (targets.size === 1) out.set(k, targets.values().next().value);
  return out;
}

const wordsOf = (name) => key(name).split("-");
/** _joined: a name without its hyphens between two letters (deepseek-v3 as deepseekv3). */
const joinedKey = (name) => key(name).replace(/(?<=[a-z])-(?=[a-z])/g, "");
/** _unpackaged: a repository name without each packaging word at its end, one at a time. */
function unpackaged(name) {
  const forms = [];
  let word;
  while ((word = PACKAGING_WORD.exec(name)) !== null && word.index > 0) {
    if (/k-gguf$/i.test(word[0])) forms.push(name.slice(0, -"-gguf".length));  // a name may end in a context (…-128K)
    name = name.slice(0, word.index);
    forms.push(name);
  }
  return forms;
}
const ownNames = (m) => [m.repo, ...(m.aliases || [])];
/** _without_meta: Meta-Llama-3-8B-Instruct as Llama-3-8B-Instruct, the naming Meta took up from Llama 3.1 on. */
const withoutMeta = (name) => key(name).startsWith("meta-llama-") ? [name.slice("Meta-".length)] : [];
/** _dotted: internlm2_5-7b-chat as internlm2.5-7b-chat, the version a repository writes with `_` as readers write it. */
const dottedName = (name) => name.replace(UNDERSCORE_DOT, ".") !== name ? [name.replace(UNDERSCORE_DOT, ".")] : [];
// A config.json as one string whatever its key order: records of the same KV geometry compare equal.
const member = (value) => (k) => JSON.stringify(k) + ":" + canonical(value[k]);
const canonical = (value) => Array.isArray(value) ? "[" + value.map(canonical).join(",") + "]"
  : value && typeof value === "object" ? "{" + Object.keys(value).sort().map(member(value)).join(",") + "}" : JSON.stringify(value);

/** _base_checkpoints: family-size records alone in a family whose chat records add only Instruct, it or Chat. */
function baseCheckpoints(models) {
  const bare = new Map(), chat = new Set();
  for (const m of models) for (const repo of ownNames(m)) {
    const words = wordsOf(repo.split("/")[1]);
    const at = words.findIndex((w, i) => i > 0 && SIZE.test(w));
    const tail = words.slice(at + 1);
    if (at < 0 || !tail.every((w) => ACTIVE.test(w) || CHAT_WORDS.has(w))) continue;
    const family = words.slice(0, at).join("-");
    if (tail.some((w) => CHAT_WORDS.has(w))) chat.add(family);
    else (bare.get(family) || bare.set(family, new Set()).get(family)).add(m.id);
  }
  const bases = new Set();
  for (const [family, members] of bare) if (chat.has(family)) for (const id of members) bases.add(id);
  return bases;
}

function ggufBuilds(models) {
  const builds = new Map();
  for (const m of models) {
    const own = new Set(ownNames(m).map(key));
    for (const v of m.variants) {
      if (v.engines.includes("vllm") || !v.repo || own.has(key(v.repo))) continue;
      if (!builds.has(key(v.repo))) builds.set(key(v.repo), [m.id, new Map()]);
      const quant = v.gguf ? QUANT_SUFFIX.exec(v.gguf.replace(SHARD, "").slice(0, -".gguf".length)) : null;
      const byQuant = builds.get(key(v.repo))[1];
      if (quant && !byQuant.has(key(quant[0].slice(1)))) byQuant.set(key(quant[0].slice(1)), target(m.id, v.id));
    }
  }
  return builds;
}

function buildIndex(raw) {
  const repos = new Map(), files = new Map(), tags = new Map(), names = [], baseNames = [];
  const setDefault = (map, k, t) => { if (!map.has(k)) map.set(k, t); };
  for (const m of raw.models) {
    const owned = [[m.repo, target(m.id, null)], ...(m.aliases || []).map((a) => [a, target(m.id, null)])];
    for (const gguf of [false, true])
      for (const v of m.variants)
        if (v.repo && v.engines.includes("vllm") !== gguf) owned.push([v.repo, target(m.id, v.id)]);
    for (const [repo, t] of owned) {
      setDefault(repos, key(repo), t);
      names.push([key(repo.split("/")[1]), repos.get(key(repo))]);
    }
    for (const repo of [m.repo, ...(m.aliases || [])]) {
      // The name alone, and the name after its owner and `_` (bartowski's Qwen_Qwen3-8B).
      const ownerName = repo.replace("/", "_");
      names.push([key(ownerName), target(m.id, null)]);
      for (const form of [repo.split("/")[1], ownerName]) baseNames.push([key(form), target(m.id, null, true)]);
    }
    for (const v of m.variants) {
      if (v.gguf) setDefault(files, key(v.gguf), target(m.id, v.id));
      // A library name without a tag (phi4) is also name:latest, the tag Ollama gives it (hf_ids.py's _ollama_tags).
      for (const tag of v.ollama ? (v.ollama.includes(":") ? [v.ollama] : [v.ollama, `${v.ollama}:latest`]) : []) setDefault(tags, key(tag), target(m.id, v.id));
    }
  }
  const library = unique(raw.models.flatMap((m) => (m.ollama_names || []).map((n) => [key(n), target(m.id, null, true)])));
  // A library name listed without a size, at the size its record's name carries (mistral-small3.2:24b).
  const librarySizes = unique(raw.models.flatMap((m) => (m.ollama_names || []).filter((n) => !n.includes(":"))
    .flatMap((n) => ownNames(m).flatMap((repo) => wordsOf(repo.split("/")[1]).filter((w) => SIZE.test(w))
      .map((w) => [key(`${n}:${w}`), target(m.id, null, true)])))));
  // A catalog repository named with a packaging word also answers to its name without it, as the architecture.
  const stripped = raw.models.flatMap((m) => ownNames(m).flatMap((repo) => [...unpackaged(repo.split("/")[1]), ...withoutMeta(repo.split("/")[1]), ...dottedName(repo.split("/")[1])]
    .map((f) => [key(f), target(m.id, null, true)])));
  const families = raw.models.flatMap((m) => ownNames(m).flatMap((repo) => [repo.split("/")[1], ...withoutMeta(repo.split("/")[1])])
    .map((name) => [wordsOf(name), target(m.id, null, true), canonical(m.config)]));
  const owners = new Set(raw.models.flatMap((m) => ownNames(m).map((repo) => key(repo.split("/")[0]))));
  const allBase = unique([...baseNames, ...stripped]);
  return { repos, files, tags, library, librarySizes, names: unique(names), stripped: unique(stripped),
           baseNames: allBase, joined: unique([...allBase].map(([k, t]) => [joinedKey(k), target(t.model_id, null, true)])), families, owners,
           bases: baseCheckpoints(raw.models), ggufBuilds: ggufBuilds(raw.models) };
}

/** _shorthand: Qwen3-VL-235B for the one record (or one default of one config) named like it plus variant words. */
function shorthand(index, leaf) {
  const words = wordsOf(leaf), last = words[words.length - 1];
  if (words.length < 2 || !words.slice(1).some((w) => SIZE.test(w)) || (!SIZE.test(last) && !ACTIVE.test(last))) return null;
  const hits = new Map();
  for (const [name, found, config] of index.families) {
    const rest = name.slice(words.length);
    if (rest.length && words.every((w, i) => name[i] === w) && rest.every((w) => ACTIVE.test(w) || CHAT_WORDS.has(w) || w === "thinking"))
      hits.set(found.model_id, [found, config, !rest.includes("thinking")]);
  }
  const all = [...hits.values()];
  if (!all.length || all.some(([, config]) => config !== all[0][1])) return null;
  const defaults = all.filter(([, , isDefault]) => isDefault || all.length === 1);
  return defaults.length === 1 ? defaults[0][0] : null;
}

function repackaged(index, leaf, short) {
  if (short) {
    const found = shorthand(index, leaf);
    if (found) return found;
  }
  for (const stripped of unpackaged(leaf)) {
    const found = index.baseNames.get(key(stripped)) || (short ? shorthand(index, stripped) : null);
    if (found) return found;
  }
  return null;
}

/** _named: the name, a re-pack or shorthand of it, or (gemma4-26b-a4b-it) the name with its family numeral hyphened. */
function named(index, leaf, short) {
  const found = index.names.get(key(leaf)) || index.stripped.get(key(leaf)) || repackaged(index, leaf, short);
  if (found) return found;
  const numeral = FAMILY_NUMERAL.exec(leaf);
  const hyphened = numeral ? `${numeral[1]}-${numeral[2]}${numeral[3]}` : null;
  const respelled = hyphened ? index.baseNames.get(key(hyphened)) || repackaged(index, hyphened, short) : null;
  if (respelled) return target(respelled.model_id, null, true);
  // DeepSeekV3 as DeepSeek-V3: words run together where the name has a hyphen between two letters, the architecture alone.
  return index.joined.get(joinedKey(leaf)) || null;
}

/** _ollama: an Ollama tag the catalog does not list, read as the Hugging Face name it abbreviates. */
function ollamaName(index, name, size, rest) {
  if (!SIZE.test(size)) return null;
  const words = [name, size];
  for (const word of rest ? rest.split("-") : []) {
    if (ACTIVE.test(word) || CHAT_WORDS.has(word.toLowerCase())) words.push(word);
    else if (!OLLAMA_QUANT.test(word)) return null;
  }
  const hfName = words.join("-");
  const found = index.baseNames.get(key(hfName)) || shorthand(index, hfName);
  return !found || index.bases.has(found.model_id) ? null : found;
}

/** HfIdIndex._tag: an Ollama name:size tag, listed or read as the Hugging Face name it abbreviates. */
function ollamaTag(index, tag) {
  const flavour = (tag[3] ? tag[3].split("-") : []).filter((w) => !OLLAMA_QUANT.test(w));
  if (flavour.length) {
    // The flavour may name a record itself (mistral:7b-instruct-v0.1-q4_0), never a base checkpoint; a version no record has is none.
    const exact = index.baseNames.get(key([tag[1], tag[2], ...flavour].join("-")));
    if (exact && !index.bases.has(exact.model_id)) return exact;
    if (flavour.some((w) => VERSION.test(w))) return null;
  }
  const nameSize = key(`${tag[1]}:${tag[2]}`);
  const found = index.tags.get(nameSize) || index.library.get(nameSize) || index.librarySizes.get(nameSize) || (!tag[3] && OLLAMA_QUANT.test(tag[2]) ? index.library.get(key(tag[1])) : null);
  return found ? target(found.model_id, null, true) : ollamaName(index, tag[1], tag[2], tag[3]);  // name:q4_K_M: a listed name's default
}

function ggufFile(index, leaf) {
  const found = index.files.get(key(leaf)) || index.files.get(key(leaf.replace(SHARD, "")));
  if (found) return found;
  const cached = LLAMACPP_CACHE_FILE.exec(leaf);
  if (cached) return ggufFile(index, cached[3]) || repository(index, [cached[1], cached[2]]);
  const tag = OLLAMA_TAG.exec(leaf.slice(0, -".gguf".length));
  if (tag) return ollamaTag(index, tag);
  // An Ollama library name saved as a file (command-r-plus.gguf): the name's architecture.
  const libraryName = key(leaf.slice(0, -".gguf".length));
  const listed = index.library.get(libraryName) || index.tags.get(libraryName);
  if (listed) return target(listed.model_id, null, true);
  const stem = leaf.replace(SHARD, "").slice(0, -".gguf".length).replace(QUANT_SUFFIX, "");
  const byName = stem ? index.names.get(key(stem)) : undefined;
  if (byName) return target(byName.model_id, null);
  // A catalog name's other spelling (Llama-3-8B-Instruct-Q4_K_M.gguf): the architecture alone.
  if (stem && index.stripped.has(key(stem))) return index.stripped.get(key(stem));
  // A -128K build's file (Qwen3-235B-A22B-128K-Q4_K_M.gguf) read as its repository's name, -128K-GGUF.
  const repack = stem ? repackaged(index, stem.replace(/(?<=.)(-\d+k)$/i, "$1-GGUF"), true) : null;
  const glued = repack || !stem ? null : GLUED_VL.exec(stem);
  if (!glued) return repack;
  // Qwen3VL-8B-Instruct (Qwen's file name) as Qwen3-VL-8B-Instruct: a spelling, so the architecture alone.
  const respelled = `${glued[1]}-${glued[2]}${glued[3]}`;
  const hit = index.names.get(key(respelled)) || repackaged(index, respelled, true);
  return hit ? target(hit.model_id, null, true) : null;
}

function repository(index, parts) {
  const text = parts.join("/"), kaggle = KAGGLE_INPUT.exec(text);
  const kaggled = kaggle && [kaggle[2], `${kaggle[1]}-${kaggle[2]}`, kaggle[1]].map((n) => owned(index, null, n)).find((f) => f);
  if (kaggled) return target(kaggled.model_id, null, true);
  if (REPO.test(text) && index.repos.has(key(text))) return index.repos.get(key(text));
  if (parts.length >= 2 && index.repos.has(key(parts.slice(-2).join("/")))) return index.repos.get(key(parts.slice(-2).join("/")));
  for (const part of [...parts].reverse()) {
    const cache = CACHE_DIR.exec(part);
    if (cache) return index.repos.get(key(`${cache[1]}/${cache[2]}`)) || owned(index, cache[1], cache[2]);
  }
  const found = owned(index, parts.length === 2 ? parts[0] : null, parts[parts.length - 1]) || glued(index, parts[parts.length - 1]);
  if (found) return found;
  // A catalog repository's owner/name folder with more below it: the architecture of the nearest one.
  for (let i = parts.length - 3; i >= 0; i--) {
    const hit = index.repos.get(key(`${parts[i]}/${parts[i + 1]}`));
    if (hit) return target(hit.model_id, null, true);
  }
  return null;
}

/** _glued: a catalog owner written onto the name (QwenQwen3-14B-AWQ, a Windows path without its backslashes), the architecture alone. */
function glued(index, leaf) {
  const hits = new Set();
  for (const owner of index.owners) {
    const rest = leaf.slice(owner.length);
    if (!key(leaf).startsWith(owner) || !/^[A-Za-z0-9]/.test(rest)) continue;
    const found = index.repos.get(key(`${owner}/${rest}`)) || owned(index, owner, rest);
    if (found) hits.add(found.model_id);
  }
  return hits.size === 1 ? target([...hits][0], null, true) : null;
}

/** _owned: an owner's checkpoint named in full, or its pretrained checkpoint of a chat record's family and size as that architecture. */
function owned(index, owner, leaf) {
  const own = owner !== null && index.owners.has(key(owner));
  const found = named(index, leaf, !own), sibling = found || !own ? null : shorthand(index, leaf);
  return sibling ? target(sibling.model_id, null, true) : found;
}

/** _created_name: name:latest where the name carries its own size (`ollama create`'s default tag), not a library name alone. */
const createdName = (tag) => tag[2].toLowerCase() === "latest" && !tag[3] && wordsOf(tag[1]).some((w) => SIZE.test(w));

/** HfIdIndex.resolve: {model_id, variant_id, same_architecture_only}, or null. */
export function resolveModel(modelText, raw) {
  if (!modelText) return null;
  const index = buildIndex(raw);
  const found = resolveText(index, modelText);
  const path = /^(.*[/\\])?([^/\\:]+)$/.exec(String(modelText).trim().replace(/^['"`]+|['"`]+$/g, "").replace(/[/\\]+$/, ""));
  const leaf = path ? path[2].replace(UNDERSCORE_DOT, "-") : "";  // Qwen3_6-35B as Qwen3-6-35B, then as below
  if (found || !path || leaf.replace(HYPHEN_DOT, ".") === leaf) return found;
  // kimi-k2-5 as kimi-k2.5: a spelling, so the architecture alone, when the decimal-size reading names nothing.
  const head = path[1] || "", dotted = resolveText(index, head + leaf.replace(HYPHEN_DOT, "."));
  if (!dotted || resolveText(index, head + leaf.replace(HYPHEN_SIZE_DOT, "."))) return null;
  return target(dotted.model_id, null, true);
}

function resolveText(index, modelText) {
  if (!modelText) return null;
  let text = String(modelText).trim().replace(/^['"`]+|['"`]+$/g, "").replace(URL_PREFIX, "").replace(/[/\\]+$/, "")
    .replace(MODELSCOPE_DOT, ".");
  const ollama = /^ollama/i.test(text) && LITELLM_ROUTE.test(text) || OLLAMA_REGISTRY.test(text);
  text = text.replace(LITELLM_ROUTE, "").replace(OLLAMA_REGISTRY, "").replace(GGUF_PART, "");
  // An Ollama name without a tag is tagged latest (name.go): deepseek-r1 is no Hugging Face name here.
  if (ollama && !/[:/\\]/.test(text)) text += ":latest";
  if (index.tags.has(key(text))) return index.tags.get(key(text));
  const libraryName = key(text.replace(/:latest$/i, ""));
  if (index.library.has(libraryName) && (text.includes(":") || !index.names.has(key(text)))) return index.library.get(libraryName);
  const tag = OLLAMA_TAG.exec(text.replace(/\.gguf$/i, ""));
  const tagged = tag ? ollamaTag(index, tag) : null;
  if (tag && (tagged || !createdName(tag))) return tagged;  // qwen3:8b, or the tag saved as a file (qwen3:8b.gguf)
  if (tag) text = tag[1];  // a full checkpoint name with Ollama's default tag: the name
  const pushed = OLLAMA_NAMESPACED.exec(text), pushedTag = pushed ? OLLAMA_TAG.exec(pushed[1]) : null;
  const pushedWords = pushedTag && SIZE.test(pushedTag[2]) && (pushedTag[3] ? pushedTag[3].split("-") : [])
    .every((w) => ACTIVE.test(w) || CHAT_WORDS.has(w.toLowerCase()) || OLLAMA_QUANT.test(w));
  const pushedFound = pushedWords ? ollamaTag(index, pushedTag) : null;
  if (pushedFound) return target(pushedFound.model_id, null, true);  // a user's push of a name at a size: the architecture
  text = text.replace(/\/(?:tree|blob|resolve)\/[^/]+(?:\/.*)?$/, "");
  let quant = null;
  const tail = text.includes("/") && !key(text).endsWith(".gguf") ? /:([A-Za-z0-9_.-]+)$/.exec(text) : null;
  if (tail) [text, quant] = [text.slice(0, tail.index), tail[1]];  // hf.co/owner/repo:Q4_K_M (Ollama, llama.cpp -hf)
  const parts = text.split(/[/\\]/).filter((p) => p);
  if (parts.length && parts[parts.length - 1].toLowerCase().endsWith(".gguf")) {
    const found = ggufFile(index, parts.pop());
    if (found) return found;
  }
  if (!parts.length) return null;
  const builds = quant !== null ? index.ggufBuilds.get(key(parts.slice(-2).join("/"))) : undefined;
  // The build of that quantization, or the architecture alone: never another quantization's build.
  if (builds) return builds[1].get(key(quant)) || target(builds[0], null, true);
  let found = repository(index, parts);
  // A GGUF file's name without .gguf (Qwen3.5-27B-Q4_K_M): read as that file.
  const leaf = parts[parts.length - 1].replace(GGUF_MY_REPO, "");  // someone/Qwen3-0.6B-Q8_0-GGUF: one file, Qwen3-0.6B-Q8_0
  if (!found && quant === null && QUANT_SUFFIX.test(leaf.replace(SHARD_BARE, ""))) found = ggufFile(index, `${leaf}.gguf`);
  if (quant === null || !found) return found;
  // Another owner's repository named like one listed GGUF repository: its build of that quantization, or the architecture.
  const alike = [...index.ggufBuilds].filter(([repo]) => repo.split("/")[1] === key(parts[parts.length - 1])).map(([, b]) => b);
  const alikeBuilds = alike.length === 1 ? alike[0] : [found.model_id, new Map()];
  return alikeBuilds[1].get(key(quant)) || target(alikeBuilds[0], null, true);
}

/** vllm_build: the catalog build {repo, name, hf_config} the recompute takes, or null. */
export function vllmBuild(raw, found) {
  if (!found || found.same_architecture_only) return null;
  const m = raw.models.find((x) => x.id === found.model_id);
  const v = m.variants.find((x) => x.id === found.variant_id) || m.variants[0];
  if (!v.engines.includes("vllm")) return null;
  return { repo: v.repo || m.repo, name: `${m.name} ${v.name}`, hf_config: v.quant ? { ...m.config, quantization_config: v.quant } : m.config };
}

/** The build a log's model id names: resolveModel, then vllmBuild. */
export const matchModel = (modelText, raw) => vllmBuild(raw, resolveModel(modelText, raw));

function inputs(model, numbers, available, maxModelLen, dtype) {
  const tp = numbers.tensor_parallel_size || 1;
  return {
    hf_config: model.hf_config, gpu_total_bytes: null, gpu_name: "", gpu_count: tp, tensor_parallel_size: tp, pipeline_parallel_size: 1,
    max_model_len: maxModelLen, kv_cache_dtype: dtype, block_size: numbers.block_size || null, gpu_memory_utilization: null,
    kv_cache_memory_bytes: null, available_kv_cache_bytes: available, weights_bytes: null, max_num_batched_tokens: null,
    max_num_seqs: null, enforce_eager: false,
  };
}

function fromConfig(numbers, model, availableGib, sourceLine, K, V) {
  const dtype = String(numbers.kv_cache_dtype || "auto");
  const readerLen = numbers.max_model_len || null;
  const reserves = atLeast(version(V.version), [0, 29, 0]);
  const ends = [];
  for (const gib of [availableGib - HALF_STEP, availableGib + HALF_STEP]) {
    let available = Math.max(Math.trunc(gib * GIB), 0);
    let probe = K.planVllm(inputs(model, numbers, available, null, dtype), V);
    if (sourceLine !== "Available KV cache memory" && reserves) {
      available += probe.bytes_per_block;
      probe = K.planVllm(inputs(model, numbers, available, null, dtype), V);
    }
    let fp8 = null;
    if (["auto", "float16", "bfloat16"].includes(dtype)) fp8 = K.planVllm(inputs(model, numbers, available, null, "fp8"), V).estimated_max_model_len;
    let concurrency = null;
    if (readerLen) concurrency = K.planVllm(inputs(model, numbers, available, readerLen, dtype), V).max_concurrency;
    ends.push([probe.estimated_max_model_len, fp8, concurrency, probe.block_size]);
  }
  const [[low, fp8Low, concLow, block], [high, fp8High, concHigh]] = ends;
  const fromLog = [`${sourceLine} ${availableGib.toFixed(2)} GiB`, `model ${model.repo}`];
  if (readerLen) fromLog.push(`max_model_len ${commas(readerLen)}`);
  if (numbers.kv_cache_dtype) fromLog.push(`kv cache dtype ${dtype}`);
  if (numbers.tensor_parallel_size) fromLog.push(`tensor parallel size ${numbers.tensor_parallel_size}`);
  if (numbers.block_size) fromLog.push(`block size ${numbers.block_size}`);
  const modelled = [`bytes per token from ${model.repo}'s config.json (layers, KV heads, head size, attention windows)`];
  if (!numbers.block_size) modelled.push(`block size ${block} (vLLM's default)`);
  if (!numbers.kv_cache_dtype) modelled.push("kv cache dtype auto (the model's dtype)");
  let command = `vllm serve ${model.repo} --max-model-len ${low}`;
  if (fp8Low !== null && fp8Low > low) command += `   (or --kv-cache-dtype fp8 --max-model-len ${fp8Low})`;
  return {
    available_gib: availableGib, source_line: sourceLine, model: model.name, kv_cache_dtype: dtype, max_model_len: readerLen,
    longest: { low, high }, longest_fp8: fp8Low !== null ? { low: fp8Low, high: fp8High } : null,
    concurrency: concLow !== null ? { low: concLow, high: concHigh } : null, from_log: fromLog, modelled, command,
  };
}

function fromNeeded(numbers, availableGib, sourceLine, K) {
  const readerLen = numbers.max_model_len, neededGib = numbers.needed_kv_gib;
  const block = numbers.block_size || DEFAULT_BLOCK_SIZE, blocks = Math.ceil(readerLen / block);
  const groups = [{ kind: "full", window: null, layers: [0] }];
  const spans = [[+1, -1], [-1, +1]].map(([n, a]) => {
    const needed = (neededGib + n * HALF_STEP) * GIB;
    const available = Math.trunc((availableGib + a * HALF_STEP) * GIB);
    return K.largestFit(available, Math.max(Math.trunc(needed / blocks), 1), groups, readerLen, block, 2);
  });
  return {
    available_gib: availableGib, source_line: sourceLine, model: "", kv_cache_dtype: String(numbers.kv_cache_dtype || "auto"),
    max_model_len: readerLen, longest: { low: spans[0], high: spans[1] }, longest_fp8: null, concurrency: null,
    from_log: [`${sourceLine} ${availableGib.toFixed(2)} GiB`, `KV cache needed ${neededGib.toFixed(2)} GiB`, `max_model_len ${commas(readerLen)}`],
    modelled: [`bytes per token = needed / max_model_len, in blocks of ${block} tokens, as if every layer kept every token`],
    command: `--max-model-len ${spans[0]}`,
  };
}

function fromEstimate(numbers, availableGib, sourceLine) {
  const estimate = numbers.derived_max_len, readerLen = numbers.max_model_len || null;
  const fromLog = [`${sourceLine} ${availableGib.toFixed(2)} GiB`, `vLLM's estimated maximum model length ${commas(estimate)}`];
  if (readerLen) fromLog.push(`max_model_len ${commas(readerLen)}`);
  return {
    available_gib: availableGib, source_line: sourceLine, model: "", kv_cache_dtype: String(numbers.kv_cache_dtype || "auto"),
    max_model_len: readerLen, longest: { low: estimate, high: estimate }, longest_fp8: null, concurrency: null, from_log: fromLog,
    modelled: ["nothing: vLLM ran the same search over the memory it had, so the rounding of the printed GiB does not matter"],
    command: `--max-model-len ${estimate}`,
  };
}

/** recompute_vllm: null when the log prints no KV memory (or neither a known model nor the needed KV). */
export function recomputeVllm(numbers, model, K, V) {
  if (numbers.available_kv_cache_gib === undefined || numbers.available_kv_cache_gib === null) return null;
  const availableGib = numbers.available_kv_cache_gib;
  const sourceLine = numbers.needed_kv_gib !== undefined && numbers.needed_kv_gib !== null
    ? "the error's available KV cache memory" : "Available KV cache memory";
  let found = null;
  if (model) {
    try { found = fromConfig(numbers, model, availableGib, sourceLine, K, V); } catch (e) { found = null; }
  }
  if (numbers.derived_max_len) {
    const estimate = numbers.derived_max_len;
    if (found === null) return fromEstimate(numbers, availableGib, sourceLine);
    return {
      ...found, longest: { low: estimate, high: estimate },
      from_log: [...found.from_log, `vLLM's estimated maximum model length ${commas(estimate)}`],
      command: found.command.replace(`--max-model-len ${found.longest.low}`, `--max-model-len ${estimate}`),
    };
  }
  if (found !== null) return found;
  if (numbers.needed_kv_gib !== undefined && numbers.needed_kv_gib !== null && numbers.max_model_len) return fromNeeded(numbers, availableGib, sourceLine, K);
  return null;
}

/** recompute_llamacpp: the KV cost per token and, with the device's free memory, the -c that fits. */
export function recomputeLlamacpp(numbers, ctxPad) {
  const kv = numbers.kv_buffer_mib, nCtx = numbers.n_ctx;
  if (!kv || !nCtx) return null;
  const MIB = 1024 ** 2, perCell = kv * MIB / nCtx;
  const free = numbers.device_free_mib ?? null, model = numbers.model_buffer_mib ?? null, compute = numbers.compute_buffer_mib ?? null;
  const fromLog = [`KV buffer ${kv.toFixed(2)} MiB`, `n_ctx ${commas(nCtx)}`];
  const modelled = ["KV bytes per token = KV buffer / n_ctx (the cache grows linearly with -c)"];
  let fitting = null, command = "";
  if (numbers.second_device) {
    modelled.push(`no -c that fits: the log spreads the model over several devices (${numbers.second_device} too)`);
  } else if (free !== null) {
    const room = free * MIB - (model || 0) * MIB - (compute || 0) * MIB;
    fitting = Math.max(Math.floor(Math.floor(room / perCell) / ctxPad) * ctxPad, 0);
    fromLog.push(`${commas(free)} MiB free on the device`);
    for (const [name, value] of [["model buffer", model], ["compute buffer", compute]]) if (value) fromLog.push(`${name} ${value.toFixed(2)} MiB`);
    modelled.push(`-c rounded down to a multiple of ${ctxPad} (llama.cpp pads the context)`);
    modelled.push("the compute buffer as printed (it shrinks a little with a smaller -c), all on that one device");
    command = `-c ${fitting}`;
  }
  return {
    n_ctx: nCtx, kv_mib: kv, mib_per_1k: perCell * 1024 / MIB, free_mib: free, model_mib: model,
    compute_mib: compute, fitting_ctx: fitting, from_log: fromLog, modelled, command,
  };
}

// generator/triage/command.py: the reader's own command from the paste, and the same command with
// only the fix flags changed, each change with what it buys.
const NON_DEFAULT = /non-default args: \{(.*)\}/;
const ARG_PAIR = /'(\w+)': ('[^']*'|"[^"]*"|-?[0-9][0-9.e+-]*|True|False|None)(?=,|$)/g;
const PROGRAMS = [["vllm serve", /\bvllm serve\s+(.*)$/], ["vllm serve", /\bvllm\.entrypoints\.openai\.api_server\s+(-.*)$/],
  ["llama-server", /\bllama-server(?:\.exe)?\s+(-.*)$/]];
const MODEL_FLAGS = ["--model", "-m", "--model-path"];
const MODEL_KEYS = ["model_tag", "model"];

function fromNonDefault(line) {
  const found = NON_DEFAULT.exec(line);
  if (!found) return null;
  let model = null;
  const flags = [];
  for (const [, key, raw] of found[1].matchAll(ARG_PAIR)) {
    if (raw === "False" || raw === "None") continue;
    const value = raw === "True" ? null : raw.replace(/^['"]+|['"]+$/g, "");
    if (MODEL_KEYS.includes(key)) { model = model || value; continue; }
    flags.push(["--" + key.replace(/_/g, "-"), value]);
  }
  return { program: "vllm serve", model, flags, source: "the non-default args line" };
}

function fromCommandLine(line) {
  for (const [program, pattern] of PROGRAMS) {
    const found = pattern.exec(line);
    if (!found) continue;
    const words = found[1].split(/\s+/).filter(Boolean);
    let model = null;
    const flags = [];
    for (let i = 0; i < words.length; i++) {
      const word = words[i];
      if (word.startsWith("-")) {
        const eq = word.indexOf("=");
        const name = eq === -1 ? word : word.slice(0, eq);
        let value = null;
        if (eq !== -1) value = word.slice(eq + 1);
        else if (i + 1 < words.length && !words[i + 1].startsWith("-")) value = words[++i];
        if (MODEL_FLAGS.includes(name) && model === null) model = value;
        else flags.push([name, value]);
      } else if (model === null && !flags.length && program === "vllm serve") model = word;
    }
    return { program, model, flags, source: "the command line in the paste" };
  }
  return null;
}

function joinedLines(text) {
  const out = [];
  let carry = "";
  for (const raw of text.split("\n")) {
    const line = raw.replace(/\s+$/, "");
    if (line.endsWith("\\")) { carry += line.slice(0, -1) + " "; continue; }
    out.push(carry + line);
    carry = "";
  }
  if (carry) out.push(carry);
  return out;
}

/** reader_command: vLLM's non-default args line, else the first command line in the paste. */
export function readerCommand(text) {
  const lines = joinedLines(text);
  for (const line of lines) { const found = fromNonDefault(line); if (found) return found; }
  for (const line of lines) { const found = fromCommandLine(line); if (found) return found; }
  return null;
}

/** changed_command: the reader's command with only `changes` ([flag, value, buys, ...aliases]) applied. */
export function changedCommand(command, changes) {
  const flags = command.flags.map((pair) => [...pair]);
  const notes = [];
  for (const [flag, value, buys, ...aliases] of changes) {
    const names = [flag, ...aliases];
    const held = flags.find((pair) => names.includes(pair[0]));
    if (!held) { flags.push([flag, value]); notes.push(`${flag} ${value} (added): ${buys}`); }
    else { notes.push(`${held[0]} ${held[1]} -> ${value}: ${buys}`); held[1] = value; }
  }
  const words = [command.program, ...(command.model ? [command.model] : [])];
  for (const [name, value] of flags) words.push(value === null ? name : `${name} ${value}`);
  return { command: words.join(" "), changes: notes, source: command.source };
}

/** reader_fix: the reader's command with a recompute's fix, and the fp8 alternative where there is one. */
export function readerFix(text, figures) {
  const command = readerCommand(text);
  if (!command || !figures) return null;
  let changes = [];
  if (figures.longest) changes = [["--max-model-len", String(figures.longest.low), "the longest context whose KV cache fits the memory your log prints"]];
  else if (figures.fitting_ctx) changes = [["-c", String(figures.fitting_ctx), "the largest context whose KV cache fits the device's free memory beside the weights and compute buffer", "--ctx-size"]];
  if (!changes.length) return null;
  const fixed = changedCommand(command, changes);
  const fp8 = figures.longest_fp8;
  if (fp8 && figures.longest && fp8.low > figures.longest.low)
    fixed.alternative = changedCommand(command, [["--kv-cache-dtype", "fp8", "half the KV bytes per token"],
      ["--max-model-len", String(fp8.low), "the longest context an fp8 cache fits in the same memory"]]);
  return fixed;
}
