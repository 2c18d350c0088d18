// Hybrid models for the in-page calculator: layers that keep a fixed-size state per sequence (Mamba, Gated
// DeltaNet) beside attention layers. generator/engine/geometry.py (_state_layer_kinds, _state_shape,
// StateShape) and vllm/kv_dtype.py (hybrid_pages), line for line. Loaded only for a model that has such layers,
// so a page of an attention-only model does not fetch it; install(K) fills in kvcalc.js's `hybrid` hooks.
// Its tables (layer types in Python's order, refused model types, dtypes, the block alignment) come from the
// catalog JSON under vllm.geometry.hybrid.
let fail, isObj, isInt, get, has, fdiv, repr, kvPerLayer, moeShape;
const cdiv = (a, b) => -fdiv(-a, b);
const ATTENTION = ["full", "sliding", "chunked"];

// Python's truth value of a JSON value (`if cfg.get(key)`).
const truthy = (v) => !(v === null || v === undefined || v === false || v === 0 || v === "" || (Array.isArray(v) && !v.length) || (isObj(v) && !Object.keys(v).length));
const range = (n) => [...Array(n).keys()];

/** _state_layer_kinds, then `layer_types` with every kind geometry.py reads; null when neither says. */
function kinds(cfg, modelType, layers, G) {
  const H = G.hybrid;
  if (H.refused.includes(modelType)) fail(`${modelType} mixes attention and state layers in a way this calculator does not model yet`);
  const pattern = cfg.hybrid_override_pattern;
  if (typeof pattern === "string") {
    // Nemotron-H: one character per layer, M = Mamba-2, * = attention, - = MLP, E = MoE.
    const chars = [...pattern], map = { M: "state", "*": "full", "-": "none", E: "none" };
    if (chars.length !== layers) fail(`\`hybrid_override_pattern\` must have ${layers} characters, one per layer`);
    if (chars.some((c) => !has(map, c))) fail("`hybrid_override_pattern` characters must be M, *, - or E");
    return chars.map((c) => map[c]);
  }
  const interval = cfg.full_attention_interval;
  if (isInt(interval) && interval > 0 && truthy(cfg.linear_num_value_heads)) return range(layers).map((i) => ((i + 1) % interval === 0 ? "full" : "state"));
  const period = cfg.attn_layer_period, offset = cfg.attn_layer_offset;
  if (isInt(period) && isInt(offset) && period > 0) return range(layers).map((i) => (i % period === offset ? "full" : "state"));
  const blocks = cfg.layers_block_type;
  if (Array.isArray(blocks)) {
    if (blocks.length !== layers) fail(`\`layers_block_type\` must list ${layers} entries, one per layer`);
    return blocks.map((t) => (t === "mamba" ? "state" : "full"));
  }
  const types = get(cfg, "layer_types");
  if (types === null) return null;
  if (!Array.isArray(types) || types.length !== layers) fail(`\`layer_types\` must list ${layers} entries, one per layer`);
  const table = new Map(H.layer_types);
  return types.map((t) => (table.has(t) ? table.get(t) : fail(`\`layer_types\` entry ${repr(t)} is not one of ${[...table.keys()].join(", ")}`)));
}

/** _state_shape: the state layers' shape from the family's own config.json names. */
function shape(cfg, modelType, hidden, H) {
  const num = (keys, dflt = null) => {
    for (const k of keys) if (isInt(cfg[k]) && cfg[k] > 0) return cfg[k];
    return dflt === null ? fail(`config.json lacks \`${keys[0]}\` for its state (Mamba / linear-attention) layers`) : dflt;
  };
  const ssm = get(cfg, "mamba_ssm_dtype");
  if (ssm !== null && !H.dtypes.includes(ssm)) fail(`\`mamba_ssm_dtype\` ${repr(ssm)} is not one of ${H.dtypes.join(", ")}`);
  if (get(cfg, "linear_num_value_heads") !== null)
    return { family: "gdn", conv: num(["linear_conv_kernel_dim"], 4), kHeads: num(["linear_num_key_heads"]), vHeads: num(["linear_num_value_heads"]),
      kDim: num(["linear_key_head_dim"]), vDim: num(["linear_value_head_dim"]), ssm };
  const heads = has(cfg, "mamba_n_heads") ? cfg.mamba_n_heads : cfg.mamba_num_heads;
  if (heads !== null && heads !== undefined) {
    // Mamba-2: Granite-4.0-H / Bamba (mamba_*), Nemotron-H (mamba_num_heads, ssm_state_size, n_groups, conv_kernel).
    const n = num(["mamba_n_heads", "mamba_num_heads"]), dim = num(["mamba_d_head", "mamba_head_dim"]);
    const expand = cfg.mamba_expand;  // Nemotron-H's `expand` is never read: vLLM sizes it as heads x head_dim
    const inter = isInt(expand) ? expand * hidden : n * dim;
    return { family: "mamba2", conv: num(["mamba_d_conv", "conv_kernel"]), inter, size: num(["mamba_d_state", "ssm_state_size"]), heads: n, dim,
      groups: num(["mamba_n_groups", "n_groups"], 1), ssm };
  }
  // Mamba-1 (Jamba): intermediate = expand x hidden; its state keeps the model's dtype.
  if (get(cfg, "mamba_d_state") !== null) return { family: "mamba1", conv: num(["mamba_d_conv"]), inter: num(["mamba_expand"]) * hidden, size: num(["mamba_d_state"]), ssm: null };
  return fail(`${modelType || "this model"} has state layers but config.json names no Mamba or linear-attention sizes`);
}

/** The state shape (null without state layers), refusing a model with no attention layer at all. */
function state(cfg, kinds, modelType, hidden, G) {
  const s = kinds.includes("state") ? shape(cfg, modelType, hidden, G.hybrid) : null;
  if (!kinds.some((k) => ATTENTION.includes(k))) fail("every layer keeps state: a pure Mamba model has no KV cache to size");
  return s;
}

/** StateShape.tensor_elements: (conv state, temporal/SSM state) elements one TP rank keeps per sequence. */
function elements(s, tp) {
  if (s.family === "gdn") return [(s.conv - 1) * fdiv(s.kDim * s.kHeads * 2 + s.vDim * s.vHeads, tp), fdiv(s.vHeads, tp) * s.kDim * s.vDim];
  if (s.family === "mamba2") {
    const groups = s.groups % tp === 0 ? s.groups : s.groups + tp - s.groups; // replicated for the head shards
    return [(s.conv - 1) * fdiv(s.inter + 2 * groups * s.size, tp), fdiv(s.heads, tp) * s.dim * s.size];
  }
  return [(s.conv - 1) * fdiv(s.inter, tp), fdiv(s.inter, tp) * s.size];
}

/** hybrid_pages(...).block_size: the attention block raised until one attention page holds a state page. */
function block(g, tp, requested, perLayer, H) {
  if (H.too_old) fail(H.too_old); // kvcalc-release.js: a release before the hybrid allocator
  const convBytes = g.dtypeBytes, ssmBytes = g.state.ssm ? H.mamba_dtype_bytes[g.state.ssm] : convBytes;
  const [conv, ssm] = elements(g.state, tp), page = conv * convBytes + ssm * ssmBytes;
  const aligned = H.align * cdiv(page, H.align * perLayer);
  return requested === null || requested < aligned ? aligned : requested;
}


// ---------------------------------------------------------------- Gemma 4: two layer shapes, KV-shared layers
// geometry._gemma4_shape, blocks.unify_page_sizes and budget.weight_shape's Gemma 4 terms, loaded for Gemma 4 models too.

/** geometry._gemma4_shape: KV-shared layers keep no cache; full layers have their own head size and KV heads. */
function gemma4(cfg, kinds, int) {
  const headDim = int("head_dim", false) || fdiv(int("hidden_size"), int("num_attention_heads"));
  const kvHeads = int("num_key_value_heads", false) || int("num_attention_heads");
  if (get(cfg, "layer_types") === null) fail("a Gemma 4 config.json lists its layers in `layer_types`; this one does not");
  const shared = get(cfg, "num_kv_shared_layers") ? int("num_kv_shared_layers", true, 0) : 0;
  if (shared >= kinds.length) fail(`\`num_kv_shared_layers\` ${shared} leaves no layer of the ${kinds.length} with a KV cache`);
  const first = kinds.length - shared, own = kinds.slice(0, first);
  for (let i = first; i < kinds.length; i++)
    if (!own.includes(kinds[i])) fail(`layer ${i} shares the KV cache of an earlier ${kinds[i]} layer, but there is none`);
  kinds = own.concat(Array(shared).fill("none"));
  const gHead = int("global_head_dim", false);
  const gKv = get(cfg, "attention_k_eq_v") ? int("num_global_key_value_heads", false) || kvHeads : kvHeads;
  const same = (gHead || headDim) === headDim && gKv === kvHeads;
  // g4: plan._size's Gemma 4 step (pages), which kvcalc.js calls when the geometry has it; pages sets g.kvBytes for two shapes.
  const g = { kinds, globalHeadDim: same || gHead === headDim ? null : gHead, globalKvHeads: same || gKv === kvHeads ? null : gKv, g4: pages };
  // budget.weight_shape's Gemma 4 terms, worked out here from config.json so kvcalc.js's weightShape only reads them.
  const H = int("hidden_size"), heads = int("num_attention_heads"), L = kinds.length;
  const geo = { ...g, hidden: H, heads, headDim, kvHeads, layers: L, vocab: int("vocab_size") };
  g.w4 = weights(cfg, geo, int("intermediate_size", false) || 4 * H, H * headDim * (2 * heads + 2 * kvHeads), moeShape(cfg)[0]);
  return g;
}

/** plan._size for Gemma 4: [groups, bytes a token in the largest page]; with two shapes it also sets g.kvBytes. */
function pages(g, groups, perLayer, s, V) {
  const bytesOf = (h) => kvPerLayer(h, s.kv_cache_dtype, s.tensor_parallel_size, V);
  if (s.pipeline_parallel_size > 1 && g.kinds.includes("none")) fail(`${g.modelType} shares KV between layers; pipeline parallelism is not modelled for it`);
  if (!(g.globalHeadDim || g.globalKvHeads)) return [groups, perLayer];
  // Geometry.layer_shape: a full layer's own head size and KV heads.
  const full = { ...g, kvHeads: g.globalKvHeads || g.kvHeads, headDim: g.globalHeadDim || g.headDim };
  const perKind = Object.fromEntries(ATTENTION.map((k) => [k, bytesOf(k === "full" ? full : g)]));
  g.kvBytes = (stages, chosen) => kvBytes(g, perKind, stages, chosen);
  return unify(groups, perKind);
}

/** plan_vllm's kv_bytes_per_token for Gemma 4: the binding stage's layers, each at its own shape. */
function kvBytes(g, perKind, stages, chosen) {
  const start = stages.slice(0, chosen.stage).reduce((a, st) => a + st.layers, 0);
  return g.kinds.slice(start, start + chosen.layers).reduce((a, k) => a + (perKind[k] || 0), 0);
}

/** blocks.unify_page_sizes: the smaller page's groups hold more tokens per block, so every page is the largest. */
function unify(groups, perKind) {
  const largest = Math.max(...groups.map((gr) => perKind[gr.kind]));
  const out = groups.map((gr) => {
    const own = perKind[gr.kind];
    if (largest % own) fail(`vLLM cannot unify these KV cache pages: a ${gr.kind} layer keeps ${own} bytes per token, which does not divide the largest page's ${largest} (unify_kv_cache_spec_page_size)`);
    return { ...gr, scale: largest / own };
  });
  return [out, largest];
}

/** budget.weight_shape for Gemma 4: [first-stage PLE parameters in millibits (16-bit, as the embedding), a layer's mean attention + PLE / double-wide / MoE-beside-MLP parameters]. */
function weights(cfg, g, inter, base, experts) {
  const int = (k) => (isInt(cfg[k]) ? cfg[k] : null), ple = int("hidden_size_per_layer_input") || 0, L = g.layers, H = g.hidden;
  const first = ((int("vocab_size_per_layer_input") || g.vocab) + H) * L * ple;
  let perLayers = 2 * H * ple * L;
  if (get(cfg, "use_double_wide_mlp")) perLayers += 3 * H * inter * g.kinds.filter((k) => k === "none").length;
  if (experts && get(cfg, "enable_moe_block")) perLayers += 3 * H * inter * L; // the dense MLP beside the experts
  const two = g.globalHeadDim || g.globalKvHeads;
  const attention = (k) => (k === "full" && two ? H * (g.globalHeadDim || g.headDim) * (2 * g.heads + 2 * (g.globalKvHeads || g.kvHeads)) : H * g.headDim * (2 * g.heads + 2 * g.kvHeads));
  return [BigInt(first) * 16000n, fdiv(perLayers, L) + (two ? fdiv(g.kinds.reduce((a, k) => a + attention(k), 0), L) : base)];
}

export function install(K) {
  ({ fail, isObj, isInt, get, has, fdiv, repr, kvPerLayer, moeShape } = K.lib);
  Object.assign(K.hybrid, { kinds, state, block, gemma4 });
  return { elements };
}
