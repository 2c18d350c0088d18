"""The triage rules as data: one JSON-serialisable table, so the browser can run the same rules.

Every regex here uses only what Python and JavaScript share: no lookbehind, no named groups, no
possessive or atomic groups, no inline flags. Matching is case-sensitive unless a rule says
`"flags": "i"`. Keys and their order are part of the contract with templates/static/triage.js.

What is here, and why it is not in the error records:
- log prefixes, wrapper lines, engine and release markers: facts about the engines' log formats,
  the same for every error;
- generic out-of-memory lines and the steps they are routed by: a bare "CUDA out of memory" names
  no page by itself; the step it happened in does, and `step_pages` names the page of each step
  (a page that does not exist yet is skipped, so writing the record is all it takes); those step
  tables are in step_rules.py;
- extraction regexes: the numbers a reader expects, whatever the error.
What an error's own wording is (its `pattern`, `triage_patterns`, `triage_weight`) stays in its record.
"""

from __future__ import annotations

from generator.triage.extract_rules import EXTRACT
from generator.triage.step_rules import STEP_MARKERS, STEP_PAGES, STEP_PAGES_WHEN, STEPS_NEXT, STEPS_NEXT_FRAMED

# Scores: a record's own pattern on a line scores HIT; the adjustments below are added to it.
SCORES = {
    "hit": 100,
    # Per character of the matched text, up to `specific_chars_max`: a long literal signature is
    # more specific than a short one.
    "specific_per_char": 0.5,
    "specific_chars_max": 80,
    # The line states a failure (an exception line, "error:", a fatal log level), or it does not
    # (a progress line such as "Capturing CUDA graphs" says where a run was, not that it failed).
    "failure_line": 10,
    "not_failure_line": -25,
    # The line a server logs as the error it returned to the client: the outcome the reader saw,
    # where an earlier line of the same failure only says which step gave up first.
    "reply_line": 8,
    # Spread over the paste's lines: later lines are closer to what finally failed.
    "position_max": 6,
    # The line only says that something else failed ("Engine core initialization failed").
    "wrapper_line": -45,
    # The record's engine is the one the log was printed by, or another one.
    "engine_match": 15,
    "engine_mismatch": -40,
    # A generic out-of-memory line routed to the page of the step it happened in.
    "step_routed": 100,
    # A traceback cut before its exception line, routed by the step its frames show.
    "step_traceback": 60,
    # A record of an engine run inside the log's engine (llama.cpp inside Ollama): the hit also
    # offers the outer engine's page for that failure, at this adjustment to the hit's score.
    "embedded": 0,
    # ... or to the engine's default page for an out-of-memory of unknown step.
    "step_default": 50,
    # Candidates below this score are not shown (look-alikes, notes that nothing failed).
    "minimum": 40,
    # The search page goes straight to the best page only when it is confident: it scores at least
    # `confident` (a page's own signature on a failure line; a wrapper line, a traceback cut before
    # its error or an out-of-memory line of unknown step scores less) and leads the next by
    # `navigate_margin`. Otherwise it lists the matches, best first.
    "confident": 90,
    "navigate_margin": 25,
}
# Characters of a paste's telling line handed to the full-text search (Pagefind's query).
TELLING_CHARS = 200

# Log prefixes, tried in this order and repeatedly at the start of each line, so that
# "(APIServer pid=1) (EngineCore_DP0 pid=2) ERROR 05-12 10:11:12 [core.py:718] " loses all three.
PREFIXES = [
    # CI viewers and issue quoting: "--", "  | ", "> ".
    r"^\s*\|\s",
    r"^>\s",
    # docker compose: "vllm-1  | ", "llama.cpp-gpu  | "
    r"^\s*[A-Za-z0-9][\w.-]*\s+\|\s?",
    # journald: "Dec 01 12:00:00 host ollama[123]: ". journalctl's short format writes the time with
    # strftime("%b %d %H:%M:%S") (output_timestamp_realtime in src/shared/logs-show.c at systemd/systemd
    # 002951ce222cc8a7823f9d0db355933319f4256f), and %b is the locale's month: "12月 03" in Chinese and
    # Japanese locales, "12월" in Korean.
    r"^([A-Z][a-z]{2}|\d{1,2}[月월]) +\d{1,2} \d\d:\d\d:\d\d [\w.-]+ [\w./-]+(\[\d+\])?: ",
    # ISO timestamps: "[2025-03-10T15:07:20Z] ", "2024-04-27 10:13:05 | ERROR | stderr | "
    r"^\[\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d[.,\d]*Z?\]\s?",
    r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d[.,\d]*Z? \| \w+ \| \w+ \| ",
    r"^\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d[.,\d]*Z?\s+(\[\w+\]\s*)?",
    # SGLang: "[2026-07-10 03:27:18 TP0] ", "[TP0] "
    r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d( [A-Z]+\d+)*\]\s?",
    r"^\[(TP|DP|PP|EP)\d+( [A-Z]+\d+)*\]\s?",
    # vLLM process tags: "(EngineCore_DP0 pid=123) ", "(VllmWorker rank=0 pid=10672) ", "[rank0]: "
    r"^\([A-Za-z_][\w ]*?(rank=\d+ )?pid=\d+\)\s?",
    r"^\[rank\d+\]:\s?",
    # vLLM log levels: "ERROR 05-12 10:11:12 [core.py:718] ", "[v1/engine/core.py:842] " (newer
    # releases print the path), old "INFO 04-27 10:11:03 llm_engine.py:70] "
    r"^(DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? (\[[\w./-]+:\d+\]|[\w.]+:\d+\])\s?",
    # llama.cpp's timestamped log: "0.00.951.571 E ", "29.22.825.917 W "
    r"^\d+\.\d\d\.\d{3}\.\d{3} [DIWE] ",
    # old llama.cpp server: "[1707364943] "
    r"^\[\d{9,11}\]\s",
    # Google Cloud Logging export: "INFO 2025-11-19T20:16:36.096674521Z [resource.labels.containerName: vllm] "
    r"^(DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL) \d{4}-\d\d-\d\dT[\d:.]+Z \[resource\.labels\.[\w.]+: [\w.-]+\]\s?",
    # a tab or a shell prompt's stray spaces
    r"^\t",
]

# Ollama's slog lines keep only the message and its key=value attributes:
# time=... level=ERROR source=server.go:1 msg="llama runner terminated" error="..."
SLOG_LINE = r'^time=\S+ level=([A-Z]+) source=\S+ msg=("((?:[^"\\]|\\.)*)"|(\S+))\s?(.*)$'

# A raw line that continues the line before it (hard-wrapped by a terminal or an issue form):
# it starts with a lower-case letter or a size ("184.31 GiB of which"), had no log prefix, and is not a log line
# of its own.
CONTINUATION = r"^([a-z]|[\d.]+ (?:GiB|MiB|KiB) )"
NOT_CONTINUATION = r"^([a-z_][\w.]*\s*:|[a-z]+\s+[\w.]+\s*:|[a-z_][\w.]* [=(]|srv |slot |main:|error|usage|load|print_info|llama|ggml|time=|goroutine|panic|pulling|verifying|writing|success)"
# A previous line at least this long may have been cut by a terminal or an issue form.
WRAP_WIDTH = 60

# A line that states a failure (its matches are worth more than a line that just logs).
# Besides error levels and exception names, the wording engines use to refuse a setting ("V cache
# quantization requires flash_attn", "Insufficient Memory", "cannot be allocated") states a failure,
# and so does a back end's out-of-memory status code (Vulkan's ErrorOutOfDeviceMemory, Metal's
# kIOGPUCommandBufferCallbackErrorOutOfMemory, VK_ERROR_OUT_OF_DEVICE_MEMORY).
FAILURE_LINE = r"([A-Za-z_][\w.]*(Error|Exception)\b:?|^Error:|^error:|\berror\b|\bERR\b|failed|\bE \b|^RuntimeError|^ValueError|^AssertionError|panic:|GGML_ASSERT|\brequires\b|Insufficient Memory|[Nn]ot enough memory|unable to allocate|cannot be allocated|OutOf(Device|Host)?Memory|_OUT_OF_(DEVICE_|HOST_)?MEMORY)"

# Lines where a server logs the error it sent back for a request (llama.cpp's send_error).
REPLY_LINE = r"\bsend_error\b"

# Lines that only report that another, earlier failure happened. Matches on them lose to any
# specific match elsewhere in the paste, but still win when they are all there is.
# Lines the engine itself marks as expected: llama.cpp's memory fitting probes settings that fail on
# purpose and says so in the error it throws ("... (this warning is normal during memory fitting)").
# Such a line names no failure of the reader's; the triage passes over it.
# Ollama's runner-terminated error with nothing after the exit status names no cause either: Ollama
# puts the runner's last captured error line ("error:", "CUDA error", "cudaMalloc failed", "error
# loading model", ...; llm/status.go) after it (v0.1.48: "terminated: %v %s", err, msg) or in its
# place (v0.5.8: `s.done <- errors.New(s.status.LastErrMsg)`), both in llm/server.go. A bare status
# means the runner printed none of them; only a memory line elsewhere in the paste names a page.
# The same holds for the log line Ollama's server writes when the runner process exits: it logs
# slog.Error("llama runner terminated", "error", err) with err from cmd.Wait(), only when the runner
# left a last error message, which goes to the client and names the cause (llm/server.go at
# ollama/ollama 5dbb81b72c4b61b737e4970db711f7718e4efcc6). The exit status alone names none.
# vLLM V1's dump of the scheduled batch ("Dumping input data for V1 LLM engine ...") is logged for any
# exception of a batch's model execution (EngineCore.execute_model calls dump_engine_exception,
# vllm/v1/engine/core.py at v0.9.0.1), an illegal memory access as much as an out-of-memory: it says
# the engine was serving (a step marker below), not what failed.
EXPECTED_LINES = [
    r"this warning is normal during memory fitting",
    # A bare exit status, or a bare abort (Go names SIGABRT "aborted", "abort trap" on macOS): the lines Ollama captures
    # include ggml's memory failures ("CUDA error", "cudaMalloc failed", "GGML_ASSERT": errorPrefixes in llm/status.go at
    # ollama/ollama 040a8e85eeead2b9a9ec21734f436b97a343866a). Not "signal: killed" (the kernel's OOM killer among others).
    r"llama runner process has terminated: (exit status \w+|signal: abort(ed| trap)( \(core dumped\))?)\W*$",
    # A runner that exited cleanly with no last error: Ollama reaps the runner with s.doneErr = cmd.Wait()'s error
    # (nil for exit status 0) when it captured no error line, and WaitUntilRunning returns
    # fmt.Errorf("llama runner process has terminated: %w", s.doneErr) (llm/server.go at ollama/ollama v0.20.0,
    # de9673ac3fb1c57fbf6e5e194f1f3dc5a8b48668; "llama-server process has terminated: %w" in llm/llama_server.go
    # later). Go formats a nil operand of %w as "%!w(<nil>)" (badVerb in src/fmt/print.go at golang/go
    # 0c5c593ff273476f367fa47c0df9785b647888e5). The runner printed no error, memory or other.
    r"(llama runner|llama-server) process has terminated: %!w\(<nil>\)\W*$",
    r"llama runner terminated\W+error=\W*exit status \w+(\W|\\n)*$",
    r"Dumping input data for V1 LLM engine",
    # ggml's CUDA back end of early 2024 printed "CUDA error: <msg>", the device and the failing call,
    # then aborted with GGML_ASSERT(!"CUDA error") (ggml_cuda_error in ggml-cuda.cu at dhiltgen/llama.cpp
    # acae2d81a90bdb1c3cb8f0f9d830703fde82f36a, the fork Ollama built from; quoted in ollama/ollama#3237):
    # the assert follows any CUDA error, and the line before it says which.
    r'GGML_ASSERT: \S+: !"CUDA error"',
]
# Lines that say the engine retried a failed step another way: the generic out-of-memory lines right
# before such a line were a first attempt, not the outcome (a line in the engine's own words, such as a
# back end's buffer size limit, still names its page). llama.cpp reserves the compute buffers with
# pipeline parallelism first and, when that fails, logs "compute buffer allocation failed, retrying without
# pipeline parallelism" and reserves again; only a failure of the retry throws ("failed to allocate
# compute pp buffers"), after that line (sched_reserve in src/llama-context.cpp at ggml-org/llama.cpp
# 4c7103b96d720ea6057eec6ac11a49727f9ecd43).
# Ollama's new engine loads in steps (llm/server.go at ollama/ollama v0.13.5, 7325791599409de52534429897481918717a9e85):
# it asks the runner to fit a layout (no memory allocated), then to allocate it; when the allocation
# fails the runner answers Success:false, the server builds a layout with fewer GPU layers (or backs
# off, logging "model layout did not fit, applying backoff") and asks again, and the runner logs each
# ask as slog.Info("load", "request", req) (runner/ollamarunner/runner.go). A request to allocate after
# failure lines is such a retry: only "memory layout cannot be allocated" ends the loop. The retry line
# itself is no expected line: the backoff names the partial-offload page (its triage_patterns).
RETRIED_LINES = [
    r"compute buffer allocation failed, retrying without pipeline parallelism",
    r"\bload request=\"?\{Operation:alloc\b|model layout did not fit, applying backoff",
]
# Lines that name no failure when their two numbers are equal: every layer offloaded is a full
# offload, not a partial one. (A regex cannot compare numbers portably: no backreferences.)
EXPECTED_WHEN_EQUAL = [
    r"offloaded (\d+)/(\d+) layers to GPU",
]

WRAPPER_LINES = [
    r"Engine core initialization failed",
    r"Engine process failed to start",
    r"EngineCore failed to start",
    r"EngineCore hit an exception",
    r"WorkerProc hit an exception",
    r"Worker failed with error",
    r"Scheduler hit an exception",
    r"Received sigquit from a child process",
    # The message after the exception name is the wrapper's own ("EngineCore encountered an issue").
    r"(MQEngineDeadError|AsyncEngineDeadError|EngineDeadError).*",
    # V0's model runner re-raises whatever its execute_model raised as f"Error in model execution (input dumped to
    # {filename}): {err}" (dump_input_when_exception in vllm/worker/model_runner_base.py, 0.6.2 to 0.7.1), and the
    # profile run at startup calls that execute_model as serving does: the frames or log lines say which step.
    r"Error in model execution \(input dumped to [^)]*\): ",
    r"llama runner process (has terminated|no longer running)|llama runner terminated",
    r"model runner has unexpectedly stopped",
    r"error starting llama server",
    r"The above exception was the direct cause",
    # llama.cpp's front ends report that context creation or model loading failed after the
    # library printed why (a V-cache check, a compute buffer, the KV cache, the weights).
    r"failed to create[ _]context with model",
    # "failed to initialize the context: <cause>": the cause after the colon is not a wrapper.
    r"failed to initialize the context: ",
    # ... and the cause it names when a compute buffer failed: libllama's context throws "failed to allocate compute
    # pp buffers" (or "tg") after graph_reserve logged "failed to allocate compute buffers" and ggml the buffer and
    # back end that failed (sched_reserve in src/llama-context.cpp at ggml-org/llama.cpp
    # 4c7103b96d720ea6057eec6ac11a49727f9ecd43): those lines say why, when the paste holds them.
    r"\bfailed to allocate compute (pp|tg) buffers\b",
    r"\bload_model: failed to load model\b",
    r"(main|error): unable to load model|panic: unable to (load model|create llama context)",
    # libllama's llama_decode logs any failed decode after the line that said why ("decode: failed
    # to find KV cache slot", a front end's "context size exceeded").
    r"llama_decode: failed to decode, ret = ",
]

# A line that says memory (or the context that memory holds) ran short: with one, a look-alike
# elsewhere in the paste does not silence the pages.
MEMORY_STATEMENT = r"[Oo]ut of memory|OutOf(Device|Host)?Memory|OOM\b|[Nn]ot enough memory|[Ii]nsufficient [Mm]emory|unable to allocate|failed to allocate|cannot be allocated|Cannot allocate memory|more system memory|KV cache|cache blocks|max seq len|context (size|length|window)|too long|memory slot"

# Lines that state a failure of another kind: the model's architecture is unknown, the build has no
# kernel for the GPU, the driver is too old, NCCL could not connect, the tokenizer file cannot be
# read, a kernel touched an illegal address. kvtriage has no page for any of them. Such a line
# routes nowhere, and in a paste that states no memory failure (no generic out-of-memory line,
# no MEMORY_STATEMENT) the wrappers and follow-up lines around it ("failed to load model", a
# runner's exit, "Engine core initialization failed") report that failure, not a memory one: no
# page is offered. A line that also says memory ran out is not a look-alike.
LOOKALIKE_LINES = [
    # vLLM's model registry: "Model architectures {architectures} are not supported for now."
    # (vllm/model_executor/models/registry.py at v0.33.0, the same words in 0.6 releases' threads).
    r"Model architectures? \[.*\] (are|is) not supported",
    # llama.cpp's loader: "error loading model architecture: unknown model architecture: '<arch>'"
    # (as https://github.com/ggml-org/llama.cpp/issues/24001 and Ollama's logs print it).
    r"unknown model architecture: '",
    # The same loader failing on the file's metadata before any tensor is placed: llama_model_load throws
    # "error loading model hyperparameters: <why>" or "error loading model vocabulary: <why>" (an unknown
    # pre-tokenizer, a key of the wrong GGUF type) ahead of load_tensors, which allocates (src/llama.cpp at
    # ggml-org/llama.cpp 01649e61c782d88825d9f5affb6acbad0f57fb9b). A file the build cannot read, not memory.
    r"error loading model (vocabulary|hyperparameters): ",
    # CUDA runtime errors that are not a shortage (cudaErrorNoKernelImageForDevice,
    # cudaErrorInsufficientDriver, cudaErrorIllegalAddress: CUDA's own strings, which torch prints).
    r"no kernel image is available for execution on the device",
    r"CUDA driver version is insufficient for CUDA runtime version",
    r"an illegal memory access was encountered",
    # NCCL failing to set up or talk: vLLM's and SGLang's pynccl wrapper raise "NCCL error: <reason>"
    # (vllm/distributed/device_communicators/pynccl_wrapper.py at v0.33.0); not "unhandled cuda
    # error", which can carry an allocation failure.
    r"NCCL error: (unhandled system error|invalid usage|internal error|remote process exited)",
    # vLLM refusing bfloat16 or an old GPU (vllm/platforms/cuda.py at v0.33.0).
    r"Bfloat16 is only supported on GPUs with compute capability",
    r"GPUs with compute capability below [\d.]+ are not supported",
    # Hugging Face tokenizers reading a tokenizer.json newer than the installed release.
    r"data did not match any variant of untagged enum",
    # Ollama's runner got no model back from llama.cpp's loader: LoadModelFromFile returns "unable to
    # load model: <path>" (llama/llama.go at v0.11.4, the same from v0.5.7), and the client shows it.
    # Alone, with no memory line, the blob is one the bundled llama.cpp cannot read (an architecture
    # it does not know yet, a file from another hub, as in ollama/ollama#11094). When loading ran
    # out of memory, llama.cpp's own lines say so and keep the pages.
    r"unable to load model: \S*blobs[/\\]sha256-[0-9a-f]+",
    # Ollama listing a GPU with no memory at all (its "gpu has too little memory to allocate any
    # layers" and offload lines print the device's total and available memory, llm/memory.go at
    # v0.11.4): the backend did not read the device's memory, so no layer is planned on it. A
    # detection failure, not a model too big for the card.
    r'\btotal="0 B" available="0 B"|memory\.available="\[0 B( 0 B)*\]"',
    # Ollama planning for the CPU backend alone (msg="offload to cpu" before v0.5.12, msg=offload
    # library=cpu from it; llm/server.go; matched as normalise() leaves the line): no GPU is in use, so
    # offload=0 is the design of that machine, not a card too small. With a memory line elsewhere the
    # pages stay.
    r"\boffload to cpu layers\.requested|\boffload library=cpu layers\.requested",
    # macOS names why a Metal command buffer failed after ggml's "command buffer N failed with status
    # 5" (MTLCommandBufferStatusError): kIOGPUCommandBufferCallbackErrorOutOfMemory is memory running
    # out; any other cause (submissions ignored after earlier GPU errors, as in
    # https://github.com/ggml-org/llama.cpp/issues/8886, a timeout, a page fault) is not.
    r"kIO(GPU|Accel)CommandBufferCallbackError(?!OutOfMemory)\w+",
    # A runner process that crashed: Go's ProcessState.String() names how it ended, "signal: " and the
    # signal's name on Unix, "exit status 0x..." with the NTSTATUS code on Windows (src/os/exec_posix.go
    # in golang/go at e9d2fe8d9b5dad1e3bfbac3efdb06f116aada634), and Ollama passes it on after "llama
    # runner process has terminated: " or logs it alone (log.Println of cmd.Wait()'s error in llm/llama.go
    # at ollama/ollama v0.1.17). An illegal instruction
    # (SIGILL; 0xc000001d, STATUS_ILLEGAL_INSTRUCTION) is a build for CPU features the machine lacks, a
    # segmentation fault (SIGSEGV; 0xc0000005, STATUS_ACCESS_VIOLATION, -1073741819 in
    # https://docs.rs/windows-sys/0.48.0/windows_sys/Win32/Foundation/constant.STATUS_ACCESS_VIOLATION.html)
    # a bad access; Go's own crash report starts with the signal's entry in its sigtable, "SIGILL: illegal
    # instruction" or "SIGSEGV: segmentation violation" (src/runtime/sigtab_linux_generic.go in golang/go at
    # 662feb6fbd89129f7932da3d7aadf02a5df12904). A crash, not memory running out: with a memory line
    # elsewhere the pages stay. An integer division by zero is the same kind of crash: SIGFPE, which Go names
    # "floating point exception" (the signal table of src/syscall/zerrors_linux_amd64.go in golang/go at
    # 2bd616b1a7d2544e05d55141b6575f17a9b17263) and its crash report "SIGFPE: floating-point exception"
    # (sigtab_linux_generic.go, as above); on Windows STATUS_INTEGER_DIVIDE_BY_ZERO, 0xc0000094 (-1073741676 in
    # https://docs.rs/windows-sys/latest/windows_sys/Win32/Foundation/constant.EXCEPTION_INT_DIVIDE_BY_ZERO.html).
    # 0xe06d7363 is the exception code of a Visual C++ throw (CXX_EXCEPTION in dlls/msvcrt/cppexcept.h at
    # wine-mirror/wine 5e8399814fbf315e40cf2b70162c61d8d0a7a784): a C++ exception nothing caught ended the
    # runner. ggml reports a failed allocation with its own log line ("failed to allocate ... buffer") and a
    # null buffer, not a throw, so the exit alone names no memory failure; with a memory line the pages stay.
    r"\bsignal: (illegal instruction|segmentation fault|floating point exception)\b|\bexit status 0x(c00000(1d|05|94)|e06d7363)\b|^SIG(ILL: illegal instruction|SEGV: segmentation violation|FPE: floating-point exception)",
    # Metal that did not start: ggml_metal_init returns NULL after "failed to create command queue" or "failed to
    # initialize the Metal library" (ggml/src/ggml-metal/ggml-metal-context.m in ggml-org/llama.cpp at
    # 49d0981376e073317e89b5a339aa78281caa780b), ggml_backend_metal_device_init then logs "failed to allocate context"
    # (ggml-metal.cpp at 3c1bcf26069be6c4683d0bf42794e85d5c520aab: the Metal context, not memory), and llama_context
    # throws "failed to initialize %s backend" with the device's name (Metal, MTL0). No buffer was asked for.
    r"ggml_metal_init: error: failed to (initialize the Metal library|create command queue)|ggml_backend_metal(_device)?_init: error: failed to allocate context|failed to initialize (Metal|MTL\d*) backend",
    # A title that calls the failure a regression ("Regression: ...", "[Bug]: Regression in ..."): the reader
    # reports behaviour a release broke, which no setting of theirs fixes, unless the title itself says that
    # memory or the context ran short (MEMORY_STATEMENT), when the pages stay.
    r"^(\[\w+\]:? ?|[\w.]+ bug: ?)?\[?[Rr]egression\b(?!.*(" + MEMORY_STATEMENT + "))",
    # SGLang's CUDA-graph runner wraps whatever capture raised as f"Capture cuda graph failed: {e}" and
    # appends one list of possible solutions ("1. set --mem-fraction-static to a smaller value ...") to
    # every such failure (CUDA_GRAPH_CAPTURE_FAILED_MSG in python/sglang/srt/model_executor/
    # runner_backend_utils/__init__.py at sgl-project/sglang v0.5.23). The cause is what follows the colon:
    # torch's out-of-memory there is a generic line, and so no look-alike; any other cause (a gloo
    # timeout, an illegal access, an assert, an exception with no message) with no memory line elsewhere is
    # not memory running out, whatever the list of remedies says.
    r"Capture cuda graph failed:",
    # vLLM's engine and its workers timing out on each other: the shared-memory message queue's
    # acquire_read and acquire_write raise a bare TimeoutError when their timeout passes
    # (vllm/distributed/device_communicators/shm_broadcast.py at vllm-project/vllm
    # 00264800f555bb4f4541dbcfdf728e839b3f2acb), and the executor's collective_rpc re-raises it as
    # TimeoutError(f"RPC call to {method} timed out.") (vllm/v1/executor/multiproc_executor.py at
    # 00f6c9bf92aa69c72d5828d28d029129775223b7). A hang or a lost peer, not memory running out; the
    # "EngineCore encountered a fatal error" and busy-loop frames around it report that timeout.
    r"^TimeoutError$|\bRPC call to \w+ timed out\b",
    # The same executor reports a worker's exception as "Worker failed with error '<the worker's error>',
    # please check the stack trace above for the root cause" (collective_rpc, as above; 0.8 releases
    # printed the format and the error as a tuple). When that error says nothing of memory (a code error
    # such as "'tuple' object has no attribute 'ndim'", a missing kernel backend), it is the cause, and a
    # shell's "Killed" as the processes shut down is no out-of-memory kill.
    r"Worker failed with error\b(?!.*(" + MEMORY_STATEMENT + "|Tried to allocate))",
    # A draft model (EAGLE3, DFlash, Qwen4Exp, Gemma4Assistant) whose context was created without the target model's:
    # libllama's context throws "<arch> requires ctx_other to be set (this warning is normal during memory fitting)"
    # (llama_context::llama_context in src/llama-context.cpp at ggml-org/llama.cpp
    # 001d906a6d86e2490e394361e7cc6f478b100088). Memory fitting probes it on purpose; outside fitting it is a front
    # end that does not pair the two models, and the "failed to create context" lines after it report that.
    r"\brequires ctx_other to be set\b",
]
# A size no machine has (2^50 bytes and more, printed in bytes or in MB): a size computed below zero
# and wrapped around, as llama-finetune's 2^64-byte dataset buffer in
# https://github.com/ggml-org/llama.cpp/issues/15139. The line says memory ran out, but the bug is
# the size: a look-alike, even beside the out-of-memory lines that report it.
ABSURD_SIZE = r"\b(size|allocate)( of| =|:|=)? ?\d{16,}\b|\ballocate \d{10,}(\.\d+)? ?[MG]i?B\b"

# Generic out-of-memory lines: they say memory ran out, not where. The step decides the page.
GENERIC_OOM = [
    r"CUDA out of memory\. Tried to allocate",
    # Not Ray's ray.exceptions.OutOfMemoryError, which its memory monitor raises when the node's
    # host RAM runs low (python/ray/exceptions.py): that one names a page of its own.
    r"(^|[^.]|\btorch\.(cuda\.)?)OutOfMemoryError",
    r"CUDA error: out of memory",
    # ggml's CUDA back end prints GGML_CUDA_NAME " error: %s" (ggml_cuda_error in
    # ggml/src/ggml-cuda/ggml-cuda.cu), and GGML_CUDA_NAME is "ROCm" in HIP builds and "MUSA" in MUSA
    # builds (ggml/include/ggml-cuda.h at ggml-org/llama.cpp dee003ea8420fdf6c27fc38fc787a4a7a2d3c711).
    r"(ROCm|MUSA) error: out of memory",
    # vLLM's cuMem allocator (sleep mode) formats "CUDA Error: %s at %s:%d"
    # (csrc/cumem_allocator.cpp); readers quote it without the place, which names the sleep page.
    r"CUDA Error: out of memory(?! at \S*cumem_allocator)",
    # A reader's own words in a title: "CUDA OOM during sampler warmup".
    r"\b(CUDA|GPU) OOM\b",
    # ... or "OOM during `capture_model()`", naming the model runner's graph capture (see the engine markers), or
    # "OOM during sampler warmup", vLLM's sampler warm-up (both GPU steps: device memory).
    r"\bOOM (during|in|while|at|when) (the )?(`?capture_model\b|[Ss]ampler warm-?up\b|warming up (the )?sampler\b)",
    r"HIP out of memory",
    # Ascend's torch_npu allocator (torch_npu/csrc/core/npu/NPUCachingAllocator.cpp in Ascend/pytorch
    # at 165f15da0eb0ac26c7b7dcaedb0f7c5723c7d07e; vllm-project/vllm-ascend#19, sgl-project/sglang#15453),
    # torch's for Intel GPUs (c10/xpu/XPUCachingAllocator.cpp in pytorch/pytorch at 1e545826209f94b2).
    r"(NPU|XPU) out of memory",
    r"cudaMalloc failed: out of memory",
    r"hipMalloc failed: out of memory",
    # Triton's launcher raises the CUDA driver's error string after "Triton Error [CUDA]: " (gpuAssert in
    # third_party/nvidia/backend/driver.c at triton-lang/triton 7649d87cce6c12361bb9da234b9b227b2880b499),
    # and the driver's string for CUDA_ERROR_OUT_OF_MEMORY is "out of memory": a Triton kernel of the
    # engine (vLLM's and SGLang's attention, MoE and sampling kernels) ran out; the step decides the page.
    r"Triton Error \[CUDA\]: out of memory",
    # ggml's CUBLAS_CHECK reports a cuBLAS status through ggml_cuda_error as "CUDA error: <status>": with CUDA 12
    # and later cublasGetStatusString's words, before it the status's name (cublas_get_error_str in
    # ggml/src/ggml-cuda/common.cuh at ggml-org/llama.cpp 00108827d87949b538ad1821f81a6b111827fcda).
    # CUBLAS_STATUS_ALLOC_FAILED ("the resource allocation failed") is cuBLAS failing to allocate its handle or
    # workspace on the GPU: memory ran out, as Ollama's maintainers read it in ollama/ollama#6139.
    r"\bCUDA error: (CUBLAS_STATUS_ALLOC_FAILED|the resource allocation failed)\b",
    r"\bCUDA out of memory\b",
    # torch prints the size with a space ("Tried to allocate 160.00 MiB"); readers retyping it in a title drop it.
    r"Tried to allocate [\d.]+ ?[GMK]iB",
    # ggml's allocators name the buffer type: "failed to allocate %s buffer of size %zu" with
    # ggml_backend_buft_name ("CUDA0", "CPU", "ROCm0", "Metal", "Vulkan0"), from alloc_tensor_range and
    # ggml_gallocr_reserve_n (ggml/src/ggml-alloc.c at ggml-org/llama.cpp 5bc7a7409fc39d2801b3eeddc9e22fdd4bda718d).
    # CUDA's and the CPU's (host RAM) are generic, the step decides; so are ROCm's and MUSA's, which are the same CUDA
    # back end built with HIP or MUSA (GGML_CUDA_NAME, above) and come after its "cudaMalloc failed" line. The Metal
    # and Vulkan ones are left to their back ends' pages, which match them.
    r"failed to allocate (CUDA|ROCm|MUSA)\d* buffer",
    r"failed to allocate CPU buffer of size",
    r"failed to allocate buffer of size",
    # llama.cpp reserves compute buffers both when it creates a context and while it runs (a KV
    # cache update): the step tells which.
    r"failed to allocate compute buffers",
    # NCCL reports the CUDA allocation it could not make ("Cuda failure 2 'out of memory'").
    r"Cuda failure (\d+ )?'out of memory'",
    # Intel GPUs (llama.cpp's SYCL back end, IPEX-LLM builds): ggml-sycl's buffer allocation logs
    # "can't allocate %lu Bytes of memory on device" (ggml/src/ggml-sycl/ggml-sycl.cpp at ggml-org/llama.cpp
    # 3c1bcf26069be6c4683d0bf42794e85d5c520aab), and the SYCL runtime's status names the shortage:
    # Unified Runtime's UR_RESULT_ERROR_OUT_OF_{HOST,DEVICE}_MEMORY (include/ur_api.h at
    # oneapi-src/unified-runtime aa04ce16b3a06e0f11ff2602d7c5f46c1a3fbd6f), Level Zero's ZE_RESULT_ codes
    # (include/ze_api.h at oneapi-src/level-zero c1872469737f807abc0ab8c4b35a263a568a6504) and the older
    # PI_ERROR_OUT_OF_HOST_MEMORY, which llama.cpp's docs/backend/SYCL.md (at 30ce2794fff1fea1521823e803ffa0dd211e1d7e)
    # reads as device memory not being enough.
    r"can't allocate \d+ Bytes of memory on device",
    r"\b(UR_RESULT|ZE_RESULT|PI)_ERROR_OUT_OF_(DEVICE|HOST)_MEMORY\b",
]

# A one-line paste (an issue title) that no signature matched and that says memory ran out in the
# reader's own words ("OOM", "out of memory") is taken as a generic out-of-memory line: the engine it
# names, and the step it names ("when loading"), decide the page, as for any generic line. Not a title
# that says memory did not run out ("crashes, but not OOM").
# "OOM" is also a verb in titles ("OOMs reserving compute buffer", "OOMed", "OOMing"), and readers write it
# in lower case too ("[Bug] hierarchical_cache oom", sgl-project/sglang#5372).
TITLE_OOM = r"^(?!.*\b([Nn]ot|[Nn]o|[Ww]ithout|[Nn]ever)( an?)? (OOM|oom|[Oo]ut of [Mm]emory)\b).*\b((OOM|oom)(s|e?d|ing)?|[Oo]ut of [Mm]emory)\b"

# Which engine printed the log: each marker found adds its weight to its engine. Ollama runs llama.cpp
# inside, so its own markers weigh more than the llama.cpp lines its logs carry.
ENGINE_MARKERS = {
    "vllm": [
        # POST /wake_up: the sleep-mode endpoint of vLLM's API server (vllm/entrypoints/openai/api_server.py).
        [3, r"/wake_up\b"],
        # vllm_ascend: the package of vLLM's Ascend plugin (vllm_ascend/worker/model_runner_v1.py at
        # vllm-project/vllm-ascend 000f832c7932e73a50a9800a15f4314e8448d5f9), whose frames name no other marker.
        [3, r"\bvllm(_ascend)?\b|vLLM|VLLM_|EngineCore|VllmWorker|gpu_model_runner|gpu_memory_utilization|max_model_len|\[core\.py:\d+\]|llm_engine\.py|model_runner\.py"],
        # `vllm serve` flags that SGLang's and llama-server's parsers lack (data/surfaces/*-flags.txt, *-args.txt).
        [3, r"--(gpu-memory-utilization|max-model-len|enforce-eager)\b"],
        # The model runner's CUDA-graph capture, called by name with its parentheses: GPUModelRunner.capture_model
        # (vllm/v1/worker/gpu/model_runner.py, Model Runner V2, at vllm-project/vllm
        # f03f9783da87ef35af1ce1051cea2979a41492f3; V1's in vllm/v1/worker/gpu_model_runner.py).
        [3, r"\bcapture_model\(\)"],
        # Aphrodite, the vLLM fork filed under vLLM: its package, and the lines its V0 model runner logs
        # when the weights are in and when the profile run starts (load_model, profile_run in
        # aphrodite/task_handler/model_runner.py at aphrodite-engine/aphrodite-engine v0.6.3,
        # 76c05c559193486abde8d4fc0d02c9e0227048e4), which name nothing else of vLLM's.
        [3, r"\baphrodite\b|Total model weights memory usage: |Profiling peak memory usage\.\.\."],
        # The sampler warm-up is vLLM's own startup step: _dummy_sampler_run, whose error reads "CUDA out of memory
        # occurred when warming up sampler" (vllm/v1/worker/gpu_model_runner.py, the source of
        # content/errors/vllm-sampler-warmup-oom.yaml); the other engines' step tables (step_rules.py) have none.
        [3, r"\b[Ss]ampler warm-?up\b|\b[Ww]arming up (the )?sampler\b"],
        # vLLM's issue forms open the title with "[Bug]: " and "[Usage]: " (400-bug-report.yml at vllm-project/vllm
        # 9f77d7f7e4396e9ed83a5ed3f657d200744c51e6, 300-usage.yml at 4652ef5d87ed8cf43f8c6f09d31cbf3b87d9b84e): as weak
        # as SGLang's "[Bug] " below, which has no colon; other projects' forms share the words, any marker outweighs it.
        [2, r"^\[(Bug|Usage)\]: "],
    ],
    "llamacpp": [
        # common_*: the functions of llama.cpp's common library (common_init_from_params, common_fit_params).
        [2, r"llama_|ggml_|\bllm_load|\bsrv\b|update_slots|\bslot\b|n_ctx|llama-server|llama\.cpp|gguf|load_tensors|print_info|\bcommon_(init|fit|params)\w*:"],
        # ggml's source tree, which its CUDA_CHECK and GGML_ASSERT lines name ("in function alloc at
        # ...\ggml\src\ggml-cuda\ggml-cuda.cu:457"), whichever front end (KoboldCpp, LLamaSharp) built it.
        [2, r"\bggml[\\/]src[\\/]ggml-\w+[\\/.]"],
        # llama.cpp's common log with timestamps on, "0.02.396.005 E " (common_log_entry::print in common/log.cpp at
        # ggml-org/llama.cpp 30037a74a9f46f0248b6760c8de97f419651d167), anywhere in a line as a front end quotes it
        # after its own words; in an Ollama log any marker of Ollama's own still wins (ENGINE_EMBEDS).
        [2, r"\b\d+\.\d\d\.\d{3}\.\d{3} [DIWE] "],
        # llama.cpp's bug-report forms open the title with "Eval bug: " and "Misc. bug: "
        # (.github/ISSUE_TEMPLATE/011-bug-results.yml, 019-bug-misc.yml at ggml-org/llama.cpp
        # 74d087935d27e402716ddf6c6e24b71f4ff2e032); as weak as SGLang's "[Bug] " below.
        [2, r"^(Eval|Misc\.) bug: "],
    ],
    "ollama": [
        # Not the JSON log line of llama.cpp's server ({"level":"ERR", ...}): Ollama's runner printed it only
        # while it built llama.cpp's server code (LOG_ERROR in llm/ext_server/utils.hpp at ollama/ollama v0.1.30,
        # 756c2575535641f1b96d94b4214941b90f4c30c7; "ERROR" from v0.1.35), and llamafile, whose server is
        # llama.cpp's, prints it too (https://github.com/mozilla-ai/llamafile/issues/501).
        # A model tag as `ollama run` names it: "llama3.1:8b", "deepseek-r1:671b" (not ":latest",
        # which docker images share).
        [5, r"\b[a-z][a-z0-9._-]*:\d+(\.\d+)?[bm]\b"],
        [5, r"\.ollama[/\\]|blobs[/\\]sha256-|ollama\[\d+\]|^\s*ollama\S*\s+\||\bollama (run|serve|pull|ps)\b|ollama\._types|ollama version|Ollama\.|/api/(chat|generate)|llama runner|level=(INFO|WARN|ERROR|DEBUG) source=|num_gpu|OLLAMA_|memory layout cannot be allocated|model requires more system memory|model runner has unexpectedly stopped"],
        # Ollama's own words for the llama-server it runs (llm/llama_server.go from v0.30), and the
        # source tree its bundled llama.cpp was built in, which asserts print.
        [5, r"llama-server process has terminated|llama-server reported out-of-memory during startup|[\\/]ollama[\\/]llm[\\/]llama\.cpp[\\/]"],
        # The name alone, as titles and prompts write it ("ollama crashed at 0.1.31 - CUDA out of memory",
        # "$ Ollama run ..."), weaker than a line of its own; not a host named so in journald's column
        # ("Dec 03 17:30:50 ollama llama-swap[3704265]: "), which is any program's line.
        [3, r"\b[Oo]llama\b(?! [\w.-]+\[\d+\]: )"],
        # Ollama's "llama runner process has terminated" (llm/server.go, above) in a reader's shortened
        # words ("Runner Terminated" in a title), as weak as the name.
        [3, r"\b[Rr]unner ([Pp]rocess )?([Hh]as )?[Tt]erminated\b"],
    ],
    "sglang": [
        # The launcher's SIGQUIT handler logs "Received sigquit from a child process" when a
        # scheduler dies (python/sglang/srt/entrypoints/engine.py, _set_envs_and_config, at
        # sglang 18bfdd16794a857cefaebc00a0964935b8d0a026): a wrapper line, but SGLang's own.
        [5, r"Received sigquit from a child process"],
        # SGLang's bug-report form opens the title with "[Bug] " (.github/ISSUE_TEMPLATE/1-bug-report.yml at
        # sgl-project/sglang 343e7165529ba0b11ffd671c05596bcdfb214e05); vLLM's with "[Bug]: " (400-bug-report.yml
        # at vllm-project/vllm 9f77d7f7e4396e9ed83a5ed3f657d200744c51e6), llama.cpp's "Eval bug: ", Ollama's
        # none. Weak: a title alone, and any line of an engine's own outweighs it.
        [2, r"^\[Bug\] "],
        # Its --mem-fraction-static (python/sglang/srt/server_args.py) shortened by a reader ("cookbook mem-fraction
        # OOMs"): none of the other three engines has an option of that name.
        [3, r"\bmem[-_]fraction\b"],
        # KTransformers' kt-kernel runs its CPU experts inside SGLang's server, whose launch_server takes its
        # --kt-* flags (kt-kernel/README.md, "Integration with SGLang", at kvcache-ai/ktransformers
        # 721b6c4c948271ff72b674735f1f4fada453ae3b): a GPU out-of-memory beside it is SGLang's.
        [3, r"\bkt-kernel\b|--kt-(method|weight-path|cpuinfer|num-gpu-experts)\b"],
        # The error body of SGLang's native API: {"error": {"message": str(e)}} and nothing else, orjson-dumped
        # (generate_request and _create_error_response in python/sglang/srt/entrypoints/http_server.py at
        # sgl-project/sglang 9c0549b727fe222444495cea6b369697534d60f0). vLLM's and llama-server's error bodies
        # carry a type and a code beside the message; Ollama's error is a string.
        [3, r'^\{"error": ?\{"message": ?"(?:[^"\\]|\\.)*"\}\}$'],
        [5, r"sglang|SGLang|\bS(glang|GLANG)\b|mem-fraction-static|mem_fraction_static|token_to_kv_pool|req_to_token_pool|Scheduler hit an exception|\[TP\d+\]| TP\d+\]|max_total_num_tokens|#running-req"],
    ],
}

# An engine that runs another inside it: any marker of the outer engine means the log is its,
# however many lines the inner engine printed. The inner engine's records are not penalised as
# another engine's (a llama.cpp setting refused inside Ollama is still that llama.cpp page), but
# where the outer engine has its own page for an inner failure, a hit also offers that page.
ENGINE_EMBEDS = {
    "ollama": {
        "engine": "llamacpp",
        "pages": {
            "llamacpp-model-load-failed": "ollama-llama-server-terminated",
            "llamacpp-context-create-failed": "ollama-llama-server-terminated",
            "llamacpp-kv-cache-alloc-failed": "ollama-llama-server-terminated",
        },
        # A hit of an inner page that covers more than one step offers the outer page only when the
        # paste shows that step. Metal failing to allocate a buffer while Ollama loads the model ends
        # the runner before it answers: WaitUntilRunning returns "llama runner process has
        # terminated: %w" with the runner's last "error:" line (llm/server.go and llm/status.go at
        # v0.11.4), as ollama/ollama#11750 shows. A Metal command buffer failing while the model runs
        # stays on the Metal page.
        "pages_at_step": {
            "llamacpp-metal-oom": {"load": "ollama-llama-server-terminated"},
        },
        # Pages of the outer engine still offered for a log of the inner engine alone, scored as
        # another engine's page (so listed, never gone to straight): a model partly offloaded
        # ("offloaded 17/81 layers to GPU", llama.cpp's line, which Ollama's runner prints) is no
        # failure, and llama.cpp has no page for it; Ollama's is the one on the subject.
        "listed_inside": ["ollama-partial-offload"],
    },
}

# A traceback cut before its exception line: it has frames but no line that names an exception.
TRACEBACK_LINE = r"Traceback \(most recent call last\)|^\s*File \".*\", line \d+, in |^\s*raise \w"
# vLLM opens a worker's traceback with the method it was running: part of the same report.
TRACEBACK_HEADER = r"Error executing method \w+|Exception in worker \w+ while processing method \w+"
# An exception line names the exception then a colon (or nothing): "Error in preprocessing" is a log line.
EXCEPTION_LINE = r"^[A-Za-z_.]*(Error|Exception|Interrupt)(:|$)|^error:"

# The release the log states, per engine: the first group is the release.
RELEASE_MARKERS = {
    "vllm": [
        r"Initializing an? (?:LLM|V1 LLM) engine \(v([0-9][\w.+-]*)\)",
        r"vLLM API server version ([0-9][\w.+-]*)",
        r"\bvllm(?: version|==| v)\s?([0-9]+\.[0-9]+[\w.+-]*)",
    ],
    "llamacpp": [
        r"\bbuild(?: =|:) ?([0-9]+ \([0-9a-f]+\))",
        r"\bversion: ([0-9]+ \([0-9a-f]+\))",
        r"\b(b[0-9]{4,5})\b",
    ],
    "ollama": [
        r"ollama version(?: is)? ([0-9]+\.[0-9]+[\w.+-]*)",
        r"\bversion=([0-9]+\.[0-9]+[\w.+-]*)",
        r"/ollama-([0-9]+\.[0-9]+\.[0-9]+)/",
    ],
    "sglang": [
        r"sglang(?:==| version | v)([0-9]+\.[0-9]+[\w.+-]*)",
    ],
}

# Everything above in one JSON-serialisable table, in the order triage.js reads it.
RULES = {
    "scores": SCORES,
    "prefixes": PREFIXES,
    "slog_line": SLOG_LINE,
    "continuation": CONTINUATION,
    "not_continuation": NOT_CONTINUATION,
    "wrap_width": WRAP_WIDTH,
    "telling_chars": TELLING_CHARS,
    "failure_line": FAILURE_LINE,
    "reply_line": REPLY_LINE,
    "wrapper_lines": WRAPPER_LINES,
    "expected_lines": EXPECTED_LINES,
    "expected_when_equal": EXPECTED_WHEN_EQUAL,
    "retried_lines": RETRIED_LINES,
    "generic_oom": GENERIC_OOM,
    "title_oom": TITLE_OOM,
    "lookalike_lines": LOOKALIKE_LINES,
    "absurd_size": ABSURD_SIZE,
    "memory_statement": MEMORY_STATEMENT,
    "step_markers": STEP_MARKERS,
    "step_pages": STEP_PAGES,
    "step_pages_when": STEP_PAGES_WHEN,
    "steps_next": STEPS_NEXT,
    "steps_next_framed": STEPS_NEXT_FRAMED,
    "engine_markers": ENGINE_MARKERS,
    "engine_embeds": ENGINE_EMBEDS,
    "traceback_line": TRACEBACK_LINE,
    "traceback_header": TRACEBACK_HEADER,
    "exception_line": EXCEPTION_LINE,
    "release_markers": RELEASE_MARKERS,
    "extract": EXTRACT,
}
