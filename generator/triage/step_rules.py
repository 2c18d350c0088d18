"""The steps of each engine's startup and serving, and the page of each step, as data for
generator/triage/rules.py: where a generic out-of-memory line happened decides its page.

Same regex subset as the rules (what Python and JavaScript share); templates/static/triage.js reads
them from the rules table (its "step_markers", "steps_next", "steps_next_framed", "step_pages" and
"step_pages_when" keys).
"""

from __future__ import annotations

# Markers of the step a run had reached, with the step's place in the engine's order of startup.
# The furthest step the paste shows (log lines before the error, frames of its traceback) is
# where memory ran out: a traceback through capture_model -> _dummy_run is graph capture, not
# the profile run, because capture comes later.
STEP_MARKERS = {
    "vllm": [
        # Building the model's layers (make_layers, a model class's __init__) creates its weights.
        # The checkpoint loader's progress lines print only while the weights load.
        ["load_weights", 1, r"\bload_model\b|\bload_weights\b|create_weights|Starting to load model|Loading weights|model_loader|initialize_model|Failed to create unquantized linear weights|\bmake_layers\b|model_executor/models/\w+\.py\", line \d+, in __init__|Loading (safetensors|pt) checkpoint shards|Using model weights format"],
        # The model loader builds the model inside `with target_device:` (load_model in
        # vllm/model_executor/model_loader/base_loader.py at 01f62d3ec2d08e2e2c818871f69099831dd02f44),
        # so each tensor a layer creates passes through torch's DeviceContext.__torch_function__
        # (torch/utils/_device.py): that frame is the model's weights being created.
        ["load_weights", 1, r"torch[\\/]utils[\\/]_device\.py\", line \d+, in __torch_function__"],
        # vLLM re-raises an out-of-memory as a new error ("The above exception was the direct
        # cause") only in the sampler warm-up; weakest marker, so any other step wins over it.
        ["sampler_warmup", 0, r"The above exception was the direct cause"],
        # torch's out-of-memory message counts memory "allocated in private pools (e.g., CUDA Graphs)"
        # only once graphs hold some: capture had begun. As weak: a marker of any step says more,
        # and the sampler warm-up, which follows capture, keeps its own weak marker above.
        ["graph_capture", 0, r"allocated in private pools \(e\.g\., CUDA Graphs\)"],
        # The vision encoder runs at startup only on the profile run's dummy multi-modal batch; at
        # serving time the request markers (a later step) win.
        # Aphrodite's profile_run logs "Profiling peak memory usage..." (see the engine markers in rules.py).
        ["profile_run", 2, r"Profiling peak memory usage\.\.\.|\bprofile_run\b|_dummy_run\b|determine_available_memory|determine_num_available_blocks|Memory profiling|Model loading took|Loading model weights took|profile run|vit_attn_wrappers|_execute_mm_encoder|get_multimodal_embeddings|\bvision_tower\b"],
        # The same encoder called by a model's own names for it: mllama's get_cross_attention_states
        # calls self.vision_model(...), whose forward starts with self.patch_embedding(...)
        # (vllm/model_executor/models/mllama.py at vllm-project/vllm 005ad95003ff57af6f921ac33a3507780ac756d2),
        # as SigLIP's embeddings do (siglip.py at 0531c2226a6a25cd96ccc856f3bda3f0bb4efb5f); Qwen2-VL's
        # _process_image_input calls self.visual(...) (qwen2_vl.py at 002d181a55a03803d7d69547846630069d2378b8).
        # A call, not the assignment in __init__ ("self.visual = Qwen2VisionTransformer("), which builds weights.
        ["profile_run", 2, r"\.(vision_model|visual|patch_embedding)\(|\b_process_(image|video)_input\b"],
        # V0's Worker.initialize_cache runs raise_if_cache_size_invalid; V1's check calls
        # estimate_max_model_len for its message (vllm/v1/core/kv_cache_utils.py).
        ["kv_cache_check", 3, r"check_enough_kv_cache_memory|raise_if_cache_size_invalid|\binitialize_cache\b|\bestimate_max_model_len\b"],
        # After the check the KV cache is allocated: V0's Worker.initialize_cache calls _init_cache_engine,
        # whose CacheEngine.__init__ calls _allocate_kv_cache (vllm/worker/worker.py, vllm/worker/cache_engine.py);
        # V1's Worker.initialize_from_config calls the model runner's initialize_kv_cache (vllm/v1/worker/
        # gpu_worker.py, gpu_model_runner.py; all at vllm-project/vllm a8f5aec20ad685851f972847c0567db270d9845f),
        # which vllm-ascend splits into initialize_kv_cache_tensors and _allocate_kv_cache_tensors
        # (vllm_ascend/worker/model_runner_v1.py at vllm-project/vllm-ascend 000f832c7932e73a50a9800a15f4314e8448d5f9).
        # Not V1's EngineCore._initialize_kv_caches, which also profiles and checks.
        # No page covers this step as such; see STEP_PAGES_WHEN.
        ["kv_cache_alloc", 3.5, r"\b_init_cache_engine\b|\b_allocate_kv_cache(_tensors)?\b|\binitialize_kv_cache(_tensors)?\b"],
        # Capture's frames and progress lines, not the word alone: V1's config line at the start of
        # every log names its settings ("use_cudagraph", "cudagraph_capture_sizes", "cudagraph_mode":
        # CUDAGraphMode...; the compilation_config of "Initializing a V1 LLM engine ... with config"),
        # whatever step memory later ran out in.
        ["graph_capture", 4, r"capture_model|Capturing CUDA graph|Capturing cudagraph|Capturing the model for CUDA graphs|_capture_cudagraphs|cuda_graph_memory|torch\.cuda\.graph\(|cuda_graph\.capture|\.capture_(begin|end)\(|CUDAGraph(Runner|Wrapper)\b|ESTIMATE_CUDAGRAPHS|graph capture"],
        # The sampler runs at startup (the warm-up) and for every request; with no request marker
        # beside them, its frames (V1's top-k/top-p sampler, which calls FlashInfer's sampling
        # kernels: vllm/v1/sample/ops/topk_topp_sampler.py) are the warm-up's.
        ["sampler_warmup", 5, r"_dummy_sampler_run|warming up sampler|sampler warm-?up|_dummy_pooler_run|topk_topp_sampler|flashinfer[/\\]sampling\.py|\btop_k_top_p_sampling"],
        # V0's AsyncLLMEngine: step_async runs a request's step, and _log_task_completion is the
        # callback of the run_engine_loop task only (vllm/engine/async_llm_engine.py).
        # LLM.generate and LLM.chat run requests (offline inference); vllm/entrypoints/llm.py. A
        # worker's execute_model runs a scheduled batch: startup calls the model runner's dummy runs
        # and sampler warm-up directly (compile_or_warm_up_model, determine_available_memory in
        # vllm/v1/worker/gpu_worker.py; V0's profile_run in the model runner), not the worker's. The Ascend
        # plugin's NPUWorker does the same: its determine_available_memory and compile_or_warm_up_model call
        # the runner's profile_run and _dummy_run, and only a scheduled batch calls its execute_model
        # (vllm_ascend/worker/worker_v1.py at vllm-project/vllm-ascend 01beff7a9369373e4c0252d435873f566bcf0a3b).
        ["request", 6, r"vllm[/\\]entrypoints[/\\]llm\.py\", line \d+, in (generate|chat)\b|(v1[/\\]worker[/\\]gpu_worker|worker[/\\]worker_base|vllm_ascend[/\\]worker[/\\]worker_v1)\.py\", line \d+, in (execute_model|sample_tokens)\b"],
        # EngineCore.execute_model dumps the scheduled batch when its model execution raises
        # (dump_engine_exception, vllm/v1/engine/core.py at v0.9.0.1): serving, whatever was raised.
        ["request", 6, r"Dumping input data for V1 LLM engine"],
        ["request", 6, r"engine_step|run_engine_loop|\bstep_async\b|_log_task_completion|_process_request|\brun_asgi\b|\b_run_engine\b|step_with_batch_queue|execute_model_async|Added request|POST /v1|Processed prompts|Avg prompt throughput|Application startup complete|_continuation_prefill|serving_chat|engine_core\.step|\bstep_fn\b|\boutput_handler\b|get_output_async|_process_engine_step|run_busy_loop"],
        # A reader's own words for serving, in a title ("CUDA OOM when requesting prompt_logprobs", "OOM in
        # high-concurrency test"), as Ollama's steps below take "while loading": requests were running.
        ["request", 6, r"\b([Ww]hen|[Ww]hile) (requesting|serving)\b|\b[Hh]igh[- ]concurrency\b|\b[Uu]nder (heavy )?load\b"],
        # lm-eval's request types: its vLLM backend builds the LLM in __init__, then runs loglikelihood (through
        # _loglikelihood_tokens, with prompt logprobs) and generate_until requests through self.model.generate, under
        # the progress bars "Running loglikelihood requests" and "Running generate_until requests"
        # (lm_eval/models/vllm_causallms.py at EleutherAI/lm-evaluation-harness
        # e104e8e3256c9a5a9bf741e4a858f350fd8f36b2): the engine had started and was running requests.
        ["request", 6, r"\b(loglikelihood(_rolling)?|generate_until)\b"],
        # The API server checks a request's length while it tokenizes the prompt, before any GPU work.
        ["request_preprocess", 7, r"Error in preprocessing prompt inputs|_preprocess_chat\b|_preprocess_completion\b|_tokenize_prompt_inputs?(_async)?\b|_validate_input\b"],
        # Sleep mode: LLM.wake_up or POST /wake_up maps the released memory back (vllm/entrypoints/llm.py,
        # vllm/device_allocator/cumem.py); it follows startup and serving. Its frames, a call, or the
        # endpoint, but not the access log of a wake-up that succeeded ("POST /wake_up HTTP/1.1" 200).
        ["sleep_wake", 8, r"\bin wake_up\b|\.wake_up\(|/wake_up\b(?! HTTP/[\d.]+\" 2\d\d)"],
    ],
    "llamacpp": [
        # llama_model_loader::done_getting_tensors ends the creation of the model's weight tensors, before
        # their buffers are allocated (src/llama-model-loader.cpp at ggml-org/llama.cpp
        # 3074b500a5fffba5c9b84a7c14e4dc2248b3653c); newer builds log the tensors it moved off their
        # preferred buffer type under its name.
        ["weights", 1, r"load_tensors|llm_load_tensors|alloc_tensor_range|loading model tensors|error loading model|\bdone_getting_tensors\b"],
        # load_tensors places the weights on the devices and says so: "offloading %d repeating layers to GPU",
        # "offloaded %d/%d layers to GPU" (src/llama-model.cpp at ggml-org/llama.cpp b11434); a reader's title
        # in those words ("UR_RESULT_ERROR_OUT_OF_HOST_MEMORY when offloading experts to Intel Arc GPUs") is
        # the same step. The weakest step: any later one the paste shows wins.
        ["weights", 1, r"\b[Oo]ffload(ing|ed)\b"],
        ["kv_cache", 2, r"llama_kv_cache_init: failed|failed to allocate buffer for kv cache"],
        ["context", 3, r"llama_new_context_with_model|llama_init_from_model|pipeline parallelism enabled|ggml_gallocr_reserve|failed to allocate compute buffers|graph_reserve|sched_reserve"],
        # The vision (or audio) projector that llama-server and the mtmd tools load after the model's
        # context: clip_init loads the mmproj, then warm-up reserves its compute buffers for a dummy
        # picture (warmup, alloc_compute_meta in tools/mtmd/clip.cpp at ggml-org/llama.cpp
        # 3679b65db16ebaabba95a893c62eb6c4840e832c). No page covers the projector's own buffers: the
        # step has none, so an allocation failing in it lands nowhere rather than on the context page.
        ["vision", 4, r"warmup with (image|audio) size = |\balloc_compute_meta: |\bclip_init: "],
        # The CUDA pool grows for compute scratch while a batch runs (ggml_cuda_pool_malloc_vmm).
        # ggml_cuda_pool_vmm::alloc maps more memory into the pool with cuMemCreate, cuMemMap and
        # cuMemSetAccess, and CUDA_CHECK prints the failing call (ggml/src/ggml-cuda/ggml-cuda.cu in
        # ggml-org/llama.cpp at f6d77a1ba0ac794e950bd3abb630b904bdcd8fb8).
        ["running", 5, r"llama_kv_cache_update|update_slots|\bdecode\b|launch_slot|process_batch|slot \d|n_past|ggml_cuda_pool_malloc|\bcuMem(Create|Map|SetAccess)\("],
        # ggml's CUDA back end allocates buffers (weights, KV cache, the compute buffers reserved with the
        # context) through ggml_backend_cuda_buffer_type_alloc_buffer, which logs "allocating ... cudaMalloc
        # failed: out of memory" and returns null; GGML_CUDA_NAME " error: %s" comes from ggml_cuda_error, which
        # CUDA_CHECK and CU_CHECK call when the pools grow (ggml_cuda_pool_leg::alloc, ggml_cuda_pool_vmm::alloc)
        # while a graph runs (ggml/src/ggml-cuda/ggml-cuda.cu in ggml-org/llama.cpp at
        # f6d77a1ba0ac794e950bd3abb630b904bdcd8fb8). Not the 2023 "CUDA error 2 at <file>:<line>", whose
        # CUDA_CHECK also allocated the weights.
        ["running", 5, r"\b(CUDA|ROCm|MUSA) error: out of memory\b"],
    ],
    "ollama": [
        # ggml's "cudaMalloc failed" is its buffer allocation (weights, KV cache, compute reserve),
        # done while loading; out of memory while running comes from the CUDA pool as "CUDA error".
        # A reader's own words for the step, in a title ("CUDA out of memory error on Windows for ollama
        # run starts up"): the runner was starting, i.e. loading the model.
        ["load", 1, r"\b([Ss]tarts? up|[Ss]tart-?up|[Ww](hile|hen) loading)\b"],
        ["load", 1, r"load_tensors|llm_load_tensors|loading model|llama_new_context_with_model|llama_init_from_model|llama_kv_cache_init|waiting for llama runner|starting llama server|(cuda|hip)Malloc failed|_alloc_buffer|(failed|unable) to allocate \w+ buffer"],
        # llama.cpp's decode of a batch; not Ollama's "vision: decode", the image decoding its
        # EncodeMultimodal logs (model/models/<arch>/model.go), which the runner also does while it
        # reserves the graphs at load, as ollama/ollama#15284 shows. Nor Ollama's msg="compute graph",
        # which its ggml backend logs when it is created and when it reserves the graphs, both at load
        # (ml/backend/ggml/ggml.go); llama.cpp's "failed to allocate compute graph for K-shift" (or
        # defrag) is a KV-cache update while running.
        ["running", 5, r"while running the model|POST \"?/api/(chat|generate)|llama runner started|encode_image|image encoded|(^|[^:] )decode\b|update_slots|ggml_backend_sched_graph_compute|allocate compute graph for"],
    ],
    "sglang": [
        # Building the scheduler, its TP worker and the model runner: ModelRunner.__init__ loads the model, sizes
        # the KV pool, sets up attention and captures the CUDA graphs (python/sglang/srt/model_executor/
        # model_runner.py at sgl-project/sglang 01cc04e2b5b01ce379698a3fee1bd17706e1d0ec; later releases call them
        # from its initialize()). A traceback cut in those constructors is startup, before any step says which;
        # every startup step has the same page.
        ["startup", 0.5, r"managers[\\/](scheduler|tp_worker\w*)\.py\", line \d+, in __init__\b|model_executor[\\/]model_runner\.py\", line \d+, in (__init__|initialize)\b"],
        # A model class's __init__ (sglang/srt/models/<arch>.py) builds its layers, whose linear methods create the
        # weight tensors (create_weights), as in vLLM above: the loader calls the model class inside `with
        # target_device:` (DefaultModelLoader.load_model in python/sglang/srt/model_loader/loader.py at
        # sgl-project/sglang 005cbe0ea796446e420b6aab62ce51a488f5e7c7). Not the model's forward, which runs at
        # graph capture and for every batch.
        ["load_weights", 1, r"\bload_model\b|Load weight begin|load_weights|model_loader|create_weights|sglang[\\/]srt[\\/]models[\\/]\w+\.py\", line \d+, in __init__"],
        ["kv_pool", 2, r"init_memory_pool|Memory pool|KV Cache is allocated|profile_max_num_token"],
        ["attention", 3, r"init_attention_backend"],
        ["graph_capture", 4, r"init_cuda_graphs|CudaGraphRunner|Capture cuda graph|capture_one_batch|Capture CUDA graph"],
        # A batch taking KV slots from the token pool: alloc_token_slots and its paged variants raise
        # "Out of memory. Try to lower your batch size." when the pool has none left
        # (python/sglang/srt/mem_cache/allocation.py, mem_cache/common.py in 0.5.x), prefill, decode
        # or a speculative verify alike: the pool is full, not the GPU.
        ["token_slots", 7, r"\balloc_(paged_)?token_slots\w*|\balloc_for_(extend|decode)\b"],
        # Releases of 2024 ran the batch loop in a controller and a TP server. Not the scheduler's event
        # loop itself: each turn it takes the next batch (get_next_batch_to_run, which admits prefills and
        # takes their KV slots) before it runs it (run_batch), as event_loop_pp does in
        # python/sglang/srt/managers/scheduler_pp_mixin.py at sgl-project/sglang
        # 8da8de17c387043bf3912373e0805ee40b37bec1; a traceback cut at that frame has not said which.
        ["running", 6, r"run_batch|forward_batch_generation|Decode batch|Prefill batch|POST /|loop_for_forward|exposed_step|\bforward_step\b|forward_decode_batch|forward_fill_batch"],
    ],
}

# Log lines that end a step, for a traceback cut at its first line (no frames, no error): the
# failure came in the step that follows. Not for an out-of-memory line: after V1's worker logs
# "Available KV cache memory" (the profile run's result, vllm/v1/worker/gpu_worker.py) the check
# of one request's KV cache comes next, and it raises a ValueError, not an out-of-memory; an OOM
# after that line came in a later step (the cache's allocation, graph capture, the sampler).
STEPS_NEXT = {
    "vllm": [
        ["kv_cache_check", 3, r"Available KV cache memory:"],
    ],
}
# Log lines after which one step alone can come before the step's own log lines, so that a cut
# traceback whose frames name no step failed in it (frames or not). V0's model runner logs "Loading
# model weights took %.4f GB" when the weights are in (GPUModelRunnerBase.load_model,
# vllm/worker/model_runner.py at vllm-project/vllm 587909ce7f4fe9cb48be48fb50936bcb18b2f73c;
# vllm-ascend's runners print the same); the profile run follows, and logs its result ("# GPU blocks",
# "Memory profiling", "Available KV cache memory") before any later step runs.
STEPS_NEXT_FRAMED = {
    "vllm": [
        # Aphrodite's V0 runner logs "Total model weights memory usage: %.2f GiB" at the same point
        # (load_model in aphrodite/task_handler/model_runner.py at aphrodite-engine/aphrodite-engine
        # 76c05c559193486abde8d4fc0d02c9e0227048e4, v0.6.3).
        ["profile_run", 2, r"Loading model weights took|Total model weights memory usage: "],
        # The API server's access log of a request it answered ("POST /v1/chat/completions HTTP/1.1" 200 OK):
        # startup was over, and the engine was serving; a worker's traceback after it came from a request.
        # Not another status (a 400 is a request refused before any GPU work) nor the sleep-mode endpoints.
        ["request", 6, r"\"POST /v1/\S+ HTTP/[\d.]+\" 200\b"],
    ],
}

# The page of each step; a generic out-of-memory line of no known step goes to `default`.
# A page that is not among the records is skipped.
STEP_PAGES = {
    "vllm": {
        "load_weights": "vllm-weights-oom",
        "profile_run": "vllm-profile-run-oom",
        "kv_cache_check": "vllm-max-model-len-error",
        "graph_capture": "vllm-cudagraph-capture-oom",
        "sampler_warmup": "vllm-sampler-warmup-oom",
        "request": "vllm-request-cuda-oom",
        "request_preprocess": "vllm-request-too-long",
        "sleep_wake": "vllm-sleep-wake-oom",
    },
    "llamacpp": {
        "weights": "llamacpp-model-load-failed",
        "kv_cache": "llamacpp-kv-cache-alloc-failed",
        "context": "llamacpp-context-create-failed",
        "running": "llamacpp-compute-buffer-failed",
    },
    "ollama": {
        "load": "ollama-llama-server-terminated",
        "running": "ollama-cuda-oom",
        "default": "ollama-cuda-oom",
    },
    "sglang": {
        "startup": "sglang-cuda-oom",
        "load_weights": "sglang-cuda-oom",
        "kv_pool": "sglang-cuda-oom",
        "attention": "sglang-cuda-oom",
        "graph_capture": "sglang-cuda-oom",
        "running": "sglang-cuda-oom",
        "token_slots": "sglang-kv-pool-full",
        "default": "sglang-cuda-oom",
    },
}

# The page of a step that depends on what the out-of-memory line says, tried before `STEP_PAGES`: the
# first [regex, page] whose regex matches the generic out-of-memory line names the page.
# vLLM sizes its KV cache as utilization × total memory less what it measured itself using (V0's
# Worker.determine_num_available_blocks, vllm/worker/worker.py at vllm-project/vllm
# a8f5aec20ad685851f972847c0567db270d9845f): memory other processes held is not taken off, so the
# allocation of that cache runs out when they hold more than the rest. torch's message lists each process
# NVML reports on the device, the running one as "Including non-PyTorch memory, this process has" and every
# other as "Process <pid> has" (reportProcessMemoryInfo and DeviceCachingAllocator::malloc in
# c10/cuda/CUDACachingAllocator.cpp at pytorch/pytorch 001074d25084fdb87a799823e395a50f5ec044d3). Two
# entries in that list mean another process held memory (in a container no pid is the running one's, so
# one "Process" entry alone may be itself). That is what vLLM's later startup check refuses up front.
STEP_PAGES_WHEN = {
    "vllm": {
        "kv_cache_alloc": [
            [r"(Process \d+|this process) has [\d.]+ (bytes|[KMG]iB) memory in use\. +(Process \d+|Including non-PyTorch memory, this process) has ",
             "vllm-startup-free-memory"],
        ],
    },
}
