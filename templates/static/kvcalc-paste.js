// The calculator's "Paste config.json" field and its reader, loaded by kvcalc-ui.js once the reader enters a
// model's own numbers (the model "Other"), so a page that shows a catalog model does not fetch them.
// The config.json keys the engine reads (generator/schema.py HfConfig, which geometry.py consumes);
// a pasted config.json keeps these and drops the rest, as `kvtriage import-model` does.
const HF_KEYS = ["model_type", "num_hidden_layers", "num_attention_heads", "num_key_value_heads", "head_dim", "hidden_size",
  "intermediate_size", "vocab_size", "torch_dtype", "max_position_embeddings", "rope_scaling", "sliding_window", "use_sliding_window",
  "sliding_window_pattern", "layer_types", "attention_chunk_size", "no_rope_layers", "kv_lora_rank", "qk_rope_head_dim", "q_lora_rank",
  "qk_nope_head_dim", "v_head_dim", "tie_word_embeddings", "num_local_experts", "num_experts", "n_routed_experts", "n_shared_experts",
  "moe_intermediate_size", "first_k_dense_replace", "num_experts_per_tok", "full_attention_interval", "linear_num_key_heads",
  "linear_num_value_heads", "linear_key_head_dim", "linear_value_head_dim", "linear_conv_kernel_dim", "mamba_n_heads", "mamba_d_head",
  "mamba_d_state", "mamba_n_groups", "mamba_d_conv", "mamba_expand", "mamba_num_heads", "mamba_head_dim", "ssm_state_size", "n_groups",
  "conv_kernel", "expand", "hybrid_override_pattern", "attn_layer_period", "attn_layer_offset", "layers_block_type", "mamba_ssm_dtype",
  "global_head_dim", "num_global_key_value_heads", "attention_k_eq_v", "num_kv_shared_layers", "enable_moe_block", "top_k_experts",
  "hidden_size_per_layer_input", "vocab_size_per_layer_input", "use_double_wide_mlp",
  "quantization_config"];

/** The engine's keys of a pasted config.json (its text_config for multimodal checkpoints); throws on text that is not one. */
export function pastedConfig(text) {
  const raw = JSON.parse(text);
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error("config.json must be a JSON object");
  const inner = raw.text_config && typeof raw.text_config === "object" && raw.text_config.num_hidden_layers ? raw.text_config : null;
  const c = inner ? { ...inner, model_type: inner.model_type || raw.model_type, torch_dtype: inner.torch_dtype || inner.dtype || raw.torch_dtype || raw.dtype,
    quantization_config: inner.quantization_config || raw.quantization_config } : { ...raw, torch_dtype: raw.torch_dtype || raw.dtype };
  // Remote-code configs name the layer count their own way (EXAONE: num_layers).
  if (c.num_hidden_layers === undefined) c.num_hidden_layers = c.num_layers ?? c.n_layer ?? c.n_layers;
  if (c.num_key_value_heads === undefined || c.num_key_value_heads === null) c.num_key_value_heads = c.num_attention_heads;
  const out = {};
  for (const k of HF_KEYS) if (c[k] !== undefined && (c[k] !== null || k === "sliding_window")) out[k] = c[k];
  for (const k of ["num_hidden_layers", "num_attention_heads", "hidden_size", "vocab_size", "max_position_embeddings"]) {
    if (!(Number.isInteger(out[k]) && out[k] > 0)) throw new Error(`config.json has no usable ${k}`);
  }
  if (!out.model_type) out.model_type = "custom";
  if (!["bfloat16", "float16", "float32"].includes(out.torch_dtype)) out.torch_dtype = "bfloat16";
  return out;
}

/** The field: a pasted config.json fills the form's model numbers (set, RAW, rawValue) and goes to `use`, or null when it is not one. */
export function pasteField({ $, set, RAW, rawValue, use }) {
  const hint = "Paste the model's config.json to fill the numbers below.";
  const box = $("textarea", { id: "kc-cfg", rows: "4", spellcheck: "false", "aria-describedby": "kc-cfg-hint", placeholder: '{"model_type": "...", "num_hidden_layers": ...}' });
  const note = $("small", { id: "kc-cfg-hint", "aria-live": "polite" }, hint);
  box.addEventListener("input", () => {
    const text = box.value.trim();
    if (!text) { use(null); note.textContent = hint; return; }
    try {
      const pasted = pastedConfig(text);
      use(pasted);
      for (const [k, , key] of RAW) set(k, rawValue(pasted, key));
      set("c", String(pasted.max_position_embeddings));
      note.textContent = `Read ${pasted.model_type}: ${pasted.num_hidden_layers} layers, ${pasted.num_key_value_heads} KV heads.`;
    } catch (e) {
      use(null);
      note.textContent = `Not read: ${e.message}`;
    }
  });
  return { box, field: $("div", { class: "kc-field kc-paste", "data-for": "cfg" }, $("label", { for: "kc-cfg" }, "Paste config.json"), box, note) };
}
