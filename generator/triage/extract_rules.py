"""The numbers a reader expects extracted from a paste, as data for generator/triage/rules.py.

Same regex subset as the rules (what Python and JavaScript share); templates/static/triage.js reads
them from the rules table (its "extract" key), in this order.
"""

from __future__ import annotations

# Numbers a reader expects from a paste: [key, regex, kind]. The first rule of a key that matches any line wins (rules of a
# key are in order of preference), and the value is group 1. kinds: int (commas dropped), float, str, mib (group 2: GiB, MiB or KiB), ratio ("group 1/group 2").
EXTRACT = [
    ["model", r"\bmodel='([^']+)'", "str"],
    ["model", r"\bmodel=\"([^\"]+)\"", "str"],
    # V1's "non-default args: {'model': ...}" (or 'model_tag' for `vllm serve MODEL`), and the command itself.
    ["model", r"'model(?:_tag)?': '([^']+)'", "str"],
    ["model", r"\bvllm serve ([\w./-]+)", "str"],
    ["gpu_name", r"Device \d+: ([^,]+), compute capability", "str"],
    ["gpu_total_gib", r"total_gpu_memory=([\d.]+) ?GiB", "float"],
    ["gpu_total_gib", r"total_gpu_memory \(([\d.]+) ?GiB\)", "float"],
    # torch's OOM text: "GPU 0 has a total capacity of X GiB" since 2.2, "total capacty" (sic) in 2.1, "(GPU 0; X GiB total capacity; ...)" before.
    ["gpu_total_gib", r"total capac(?:i)?ty of ?([\d.]+) GiB", "float"],
    # Ascend's torch_npu words it the same with "NPU" ("(NPU 2; 60.96 GiB total capacity; ...)"), and its workspace
    # allocator with no space before the parenthesis ("NPUWorkspaceAllocator tried to allocate 216.00 MiB(NPU 0; ...",
    # as Ascend/sglang#667 quotes it).
    ["gpu_total_gib", r"\((?:GPU|NPU) \d+; ([\d.]+) GiB total capacity;", "float"],
    ["gpu_total_gib", r"Free memory on device[^(]*\([\d.]+/([\d.]+) GiB\)", "float"],
    ["free_gib", r"Free memory on device[^(]*\(([\d.]+)/[\d.]+ GiB\)", "float"],
    ["free_gib", r"Load weight end\..*avail mem=([\d.]+) GB", "float"],
    ["tensor_parallel_size", r"tensor_parallel_size=(\d+)", "int"],
    ["tensor_parallel_size", r"'tensor_parallel_size': (\d+)", "int"],
    ["block_size", r"\bblock_size=(\d+)", "int"],
    ["block_size", r"'block_size': (\d+)", "int"],
    ["max_model_len", r"max seq len \((\d+)\)", "int"],
    ["max_model_len", r"User-specified max_model_len \((\d+)\)", "int"],
    ["max_model_len", r"\bmax_model_len=(\d+)", "int"],
    ["max_model_len", r"'max_model_len': (\d+)", "int"],
    ["max_model_len", r"\bmax_seq_len=(\d+)", "int"],
    ["max_model_len", r"Maximum concurrency for ([\d,]+) tokens per request", "int"],
    ["derived_max_len", r"estimated maximum model length is (\d+)", "int"],
    ["derived_max_len", r"derived max_model_len \(\w+=(\d+)", "int"],
    # the model's limit as a reader writes it beside max_model_len ("max_model_len is greater than max_position=40960").
    ["derived_max_len", r"max_model_len.*\bmax_position(?:_embeddings)?=(\d+)", "int"],
    ["kv_cache_dtype", r"kv_cache_dtype=(\w+)", "str"],
    ["kv_cache_dtype", r"'kv_cache_dtype': '(\w+)'", "str"],
    ["gpu_memory_utilization", r"gpu_memory_utilization=([\d.]+)", "float"],
    ["gpu_memory_utilization", r"GPU memory utilization(?: is)? \(([\d.]+),", "float"],
    ["gpu_memory_utilization", r"gpu_memory_utilization \(([\d.]+)\)", "float"],
    ["model_loading_gib", r"Loading model weights took ([\d.]+) G", "float"],
    ["model_loading_gib", r"Model loading took ([\d.]+) G", "float"],
    ["model_loading_gib", r"model weights take ([\d.]+) ?GiB", "float"],
    ["model_loading_gib", r"Load weight end\..*mem usage=([\d.]+) GB", "float"],
    ["available_kv_cache_gib", r"available KV cache memory \(([\d.]+) GiB\)", "float"],
    ["available_kv_cache_gib", r"Available KV cache memory: ([\d.]+) GiB", "float"],
    ["available_kv_cache_gib", r"memory reserved for KV Cache is ([\d.]+) ?GiB?", "float"],
    ["kv_cache_tokens", r"stored in KV cache \((\d+)\)", "int"],
    ["kv_cache_tokens", r"GPU KV cache size: ([\d,]+) tokens", "int"],
    ["kv_cache_tokens", r"KV Cache is allocated\..*#tokens: (\d+)", "int"],
    ["kv_cache_tokens", r"max_total_num_tokens=(\d+)", "int"],
    ["num_gpu_blocks", r"# GPU blocks: (\d+)", "int"],
    ["num_gpu_blocks", r"num_gpu_blocks=(\d+)", "int"],
    ["max_concurrency", r"Maximum concurrency for [\d,]+ tokens per request: ([\d.]+)x", "float"],
    ["needed_kv_gib", r"([\d.]+) GiB KV cache is needed", "float"],
    ["tried_to_allocate_mib", r"[Tt]ried to allocate ([\d.]+) (GiB|MiB|KiB)", "mib"],
    ["n_ctx", r"\bn_ctx\s*=\s*(\d+)", "int"],
    ["n_ctx", r"\bkv_size = (\d+)", "int"],
    ["n_ctx", r"MiB \( *(\d+) cells,", "int"],
    # LM Studio's "Failed to load model" JSON lists the context asked for in its errorData, pretty-printed and
    # followed by n_batch (`"n_ctx": N,`); llama-server's exceed_context_size_error prints n_ctx last (below).
    ["n_ctx", r"^\s*\"n_ctx\"\s*:\s*(\d+),\s*$", "int"],
    # `ollama ps`: the CONTEXT column follows PROCESSOR ("100% GPU", "100% CPU" or "48%/52% CPU/GPU"), ollama/ollama
    # cmd/cmd.go ListRunningHandler.
    ["n_ctx", r"\b(?:\d+% [CG]PU|\d+%/\d+% CPU/GPU) +(\d+) ", "int"],
    ["n_seq_max", r"\bn_seq_max\s*=\s*(\d+)", "int"],
    ["n_seq_max", r"\bn_slots = (\d+)", "int"],
    ["type_k", r"\btype_k = '(\w+)'", "str"],
    # the KV line of llama.cpp's context setup: "KV self size  = 13800.00 MiB, K (q8_0): 6120.00 MiB, V (f16): ...".
    ["type_k", r"KV self size .*, K \((\w+)\): [\d.]+ MiB", "str"],
    ["kv_buffer_mib", r"KV self size\s*=\s*([\d.]+) MiB", "float"],
    ["kv_buffer_mib", r"KV buffer size\s*=\s*([\d.]+) MiB", "float"],
    ["kv_buffer_mib", r"llama_kv_cache\w*: size = *([\d.]+) MiB", "float"],
    # llama_model_load_from_file_impl: "using device CUDA0 (NVIDIA GeForce RTX 3090) (0000:01:00.0) - 23733 MiB free"
    ["device_free_mib", r"using device \S+ .*- (\d+) MiB free", "int"],
    # A buffer on a second device: the log's per-device figures do not add up to one budget.
    ["second_device", r"((?:CUDA|ROCm|Vulkan|SYCL|MTL)[1-9]\d*)(?:_Mapped)? (?:KV|model|compute) buffer size", "str"],
    ["model_buffer_mib", r"(?:CUDA\d+|ROCm\d+|Vulkan\d+|SYCL\d+|Metal|MTL\d+)(?:_Mapped)? model buffer size\s*=\s*([\d.]+) MiB", "float"],
    ["compute_buffer_mib", r"\w+ compute buffer size\s*=\s*([\d.]+) MiB", "float"],
    ["alloc_mib", r"allocating ([\d.]+) MiB on device", "float"],
    ["layers_offloaded", r"offloaded (\d+/\d+) layers to GPU", "str"],
    # Ollama's estimate before it starts the runner, logged from memory.go (ollama/ollama#8471): "layers.model=33 layers.offload=32".
    ["layers_offloaded", r"layers\.model=(?=\d+ layers\.offload=(\d+))(\d+)", "ratio"],
    ["system_memory_required_gib", r"requires more system memory \(([\d.]+) GiB\)", "float"],
    ["system_memory_required_gib", r"requested model \(([\d.]+) GiB\) is too large", "float"],
    ["system_memory_available_gib", r"than is available \(([\d.]+) GiB\)", "float"],
    ["system_memory_available_gib", r"too large for this system \(([\d.]+) GiB\)", "float"],
    ["request_tokens", r"you requested (\d+) tokens", "int"],
    # vLLM's OpenAI server, prompt alone over the limit: "However, your request has N input tokens." (0.15.1 in
    # vllm-project/vllm#33921).
    ["request_tokens", r"your request has (\d+) input tokens", "int"],
    ["request_tokens", r"request \((\d+) tokens\)", "int"],
    ["request_tokens", r"\bn_prompt_tokens\"?\s*[=:]\s*(\d+)", "int"],
    ["request_tokens", r"Input length \((\d+) tokens\)", "int"],
    ["request_tokens", r"The input \((\d+) tokens\)", "int"],
    # vLLM V0's scheduler warning, SGLang's request check of 2026, llama-cpp-python's check.
    ["request_tokens", r"Input prompt \((\d+) tokens\) is too long", "int"],
    ["request_tokens", r"You requested a total of (\d+) tokens", "int"],
    ["request_tokens", r"Requested tokens \((\d+)\) exceed context window", "int"],
    # vLLM's own input check: "The decoder prompt (length N) is longer than the maximum model length of M" (0.8 to 0.11),
    # "The prompt (total length N) is too long to fit into the model (context length M)" (0.6.3 to 0.7.3, multimodal models).
    # V1's check of early 2025: "Prompt length of N is longer than the maximum model length of M". Titles cut the
    # decoder-prompt wording after "is longer than".
    ["request_tokens", r"prompt \(length (\d+)\) is longer than\b", "int"],
    ["request_tokens", r"Prompt length of (\d+) is longer than the maximum model length", "int"],
    ["request_tokens", r"prompt \(total length (\d+)\) is too long to fit", "int"],
    ["context_tokens", r"maximum context length is (\d+) tokens", "int"],
    ["context_tokens", r"available context size \((\d+) tokens\)", "int"],
    ["context_tokens", r"\bn_ctx_slot = (\d+)", "int"],
    ["context_tokens", r"exceed_context_size_error.*\"n_ctx\":(\d+)", "int"],
    # the same error pretty-printed, one key a line
    ["context_tokens", r"^\s*\"n_ctx\"\s*:\s*(\d+)\s*$", "int"],
    ["context_tokens", r"maximum allowed length \((\d+) tokens\)", "int"],
    ["context_tokens", r"context length \((\d+) tokens\)", "int"],
    ["context_tokens", r"is too long and exceeds limit of (\d+)", "int"],
    ["context_tokens", r"maximum context length of (\d+) tokens", "int"],
    ["context_tokens", r"exceed context window of (\d+)", "int"],
    ["context_tokens", r"is longer than the maximum model length of (\d+)", "int"],
    ["context_tokens", r"too long to fit into the model \(context length (\d+)\)", "int"],
]
