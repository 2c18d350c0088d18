"""Which pages exist: `plan_pages(dataset, results)` is the whole of it. Pair pages come per error,
the thin-page guard (thin_guard.py) applied among them; a PlanMemo (memo.py) lets a resident
builder re-plan only what an edit reaches."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Iterable, Mapping

from generator.engine.pairs import PairNumbers, Results, smallest_vllm_build
from generator.errors import Issue, RenderError
from generator.plan import sglang_pages
from generator.plan.accuracy import plan_accuracy
from generator.plan.memo import PlanMemo, _PairUnit, _Tables
from generator.plan.pages import LazyView, Page, Plan
from generator.plan.routes import check_unique_urls, error_url, pair_url
from generator.plan.thin_guard import fingerprint
from generator.plan.views import PageMeta, PairInputs, _pair_page_view, engine_names, gib, gpu_memory_bytes, kib, mib, page_meta_view, pair_view, short_gpu, sponsored_links
from generator.schema import ENGINE_NAMES, Dataset, ErrorSignature, Gpu, Model, ModelVariant


class _Planner:
    def __init__(self, dataset: Dataset, results: Results, dates: Mapping[str, str], memo: PlanMemo | None = None):
        self.d = dataset
        self.results = results
        self.dates = dates
        self.memo = memo
        self.pages: list[Page] = []
        self.thin: dict[str, int] = defaultdict(int)
        # error id -> gpu id -> [(model, variant)] of the pair pages that exist
        self.pair_index: dict[str, dict[str, list[tuple[str, str]]]] = defaultdict(lambda: defaultdict(list))
        self.indexable_pairs: set[str] = set()
        self._links: dict[str | None, list[dict[str, Any]]] = {}
        self._fits: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._pair_pages: dict[tuple[str, str, str], list[dict[str, str]]] | None = None
        self._runnable: dict[str, int] | None = None
        self._keys: dict[tuple[str, str], str] = {}
        self._variants = {(m.id, v.id): v for m in dataset.models.values() for v in m.variants}
        self._siblings: dict[tuple[str, str, str], ModelVariant | None] = {}
        self._by_scenario: dict[str, list[PairNumbers]] | None = None

    # ---- shared pieces

    def lastmod(self, inputs: Iterable[str]) -> str:
        return max((self.dates.get(key, self.dates.get("*", "1970-01-01")) for key in inputs), default=self.dates.get("*", "1970-01-01"))

    def add(self, **fields: Any) -> None:
        self.pages.append(self.page(**fields))

    def page(self, *, url: str, template: str, title: str, description: str, kind: str, view: dict[str, Any] | PairInputs,
             inputs: tuple[str, ...], crumbs: tuple[tuple[str, str], ...] = (), indexable: bool = True) -> Page:
        lastmod = self.lastmod(inputs)
        meta = PageMeta(self.d.site, url, title, description, lastmod, crumbs)
        if isinstance(view, PairInputs):
            view = LazyView(_pair_page_view, (view, meta))
        else:
            view = dict(view)
            view.update(page_meta_view(meta))
        return Page(url=url, template=template, title=title, description=description, kind=kind, lastmod=lastmod,
                    view=view, breadcrumbs=crumbs, indexable=indexable, inputs=inputs)

    def records(self, key: tuple[str, str, str]) -> tuple[Gpu, Model, ModelVariant]:
        gpu = self.d.gpus[key[0]]
        model = self.d.models[key[1]]
        return gpu, model, self._variants[(key[1], key[2])]

    def sibling(self, model: Model, variant: ModelVariant, engine: str) -> ModelVariant | None:
        """The build of the same model a reader of another engine would run: Q4_K_M GGUF for
        llama.cpp and Ollama, the smallest checkpoint for vLLM (the engine works out vLLM levers for
        that build on every GPU: pairs.vllm_sibling)."""
        key = (model.id, variant.id, engine)
        if key in self._siblings:  # asked for every pair page of every GPU: once per build is enough
            return self._siblings[key]
        candidates = [v for v in model.variants if engine in v.engines and v.id != variant.id]
        if engine == "vllm":
            found = smallest_vllm_build(candidates)
        else:
            preferred = [v for v in candidates if v.gguf_type == "Q4_K_M"] or candidates
            if engine == "ollama":
                preferred = [v for v in preferred if v.ollama_tag] or [v for v in candidates if v.ollama_tag]
            found = preferred[0] if preferred else None
        self._siblings[key] = found
        return found

    def command_builds(self, error: ErrorSignature, model: Model, variant: ModelVariant,
                       numbers: PairNumbers) -> tuple[tuple[str, ModelVariant, PairNumbers], ...]:
        """(engine, build, its numbers) for each command section, the error's engine first, then the
        others as the seed orders them (Ollama, llama.cpp, vLLM), each for the build of this model
        that engine runs. vLLM pages get SGLang's section right after vLLM's."""
        order = [error.engine] + [e for e in ("ollama", "llamacpp", "vllm") if e != error.engine]
        if error.engine == "vllm":
            order.insert(1, "sglang")  # SGLang serves the same checkpoints: its section follows vLLM's
        elif error.engine == "sglang":
            order = ["sglang", "vllm", "ollama", "llamacpp"]
        builds = []
        for engine in order:
            use_variant, use_numbers = variant, numbers
            if engine == "sglang":
                # Computed beside vLLM for every checkpoint vLLM runs; no sibling build is looked for.
                # Without figures (a geometry SGLang's engine does not size) the section says so.
                if numbers.sglang is not None or numbers.vllm is not None:
                    builds.append((engine, variant, numbers))
                continue
            if engine not in variant.engines or getattr(numbers, engine) is None:
                other = self.sibling(model, variant, engine)
                if other is None or (numbers.gpu, model.id, other.id) not in self.results:
                    continue
                use_variant, use_numbers = other, self.results[(numbers.gpu, model.id, other.id)]
            if getattr(use_numbers, engine) is not None:
                builds.append((engine, use_variant, use_numbers))
        return tuple(builds)

    def pair_inputs(self, error: ErrorSignature, numbers: PairNumbers, intro: str | None = None,
                    duplicate_of: str | None = None) -> PairInputs:
        gpu, model, variant = self.records(numbers.key)
        return PairInputs(error, gpu, model, variant, numbers, self.command_builds(error, model, variant, numbers),
                          self.gpus_that_fit(numbers), self.links(gpu), intro, duplicate_of)

    def links(self, gpu: Gpu | None) -> list[dict[str, Any]]:
        key = gpu.id if gpu is not None else None
        found = self._links.get(key)
        if found is None:
            found = self._links[key] = sponsored_links(self.d, gpu)
        return found

    def gpus_that_fit(self, numbers: PairNumbers) -> list[dict[str, Any]]:
        key = (numbers.model, numbers.variant)
        found = self._fits.get(key)
        if found is None:
            found = self._fits[key] = self._gpus_that_fit(numbers)
        return found

    def _gpus_that_fit(self, numbers: PairNumbers) -> list[dict[str, Any]]:
        """Catalog GPUs on which this variant starts at its full context, smallest first."""
        fits = []
        for gpu_id, gpu in self.d.gpus.items():
            other = self.results.get((gpu_id, numbers.model, numbers.variant))
            if other is None:
                continue
            ok = (other.vllm.fits if other.vllm is not None else False) or (other.llamacpp.fits if other.llamacpp is not None else False)
            if ok:
                fits.append({"gpu": _gpu_link(gpu), "memory_bytes": gpu_memory_bytes(gpu)})
        fits.sort(key=lambda item: (item["memory_bytes"], item["gpu"]["id"]))
        return fits[:6]

    # ---- the pages

    def plan(self) -> Plan:
        memo = self.memo
        self.reusable = memo is not None and memo.same_shared(self.d, self.results)
        self._stable = memo.unchanged_pairs(self.d, self.results) if memo is not None and not self.reusable else None
        self._same_fits: dict[int, tuple[list[dict[str, Any]], bool]] = {}
        self.plan_pairs()
        self.plan_errors()
        self.plan_tables()
        self.plan_engines()
        self.plan_home()
        plan_accuracy(self)
        if memo is not None:
            memo.remember(self.d, self.results)
        return Plan(pages=tuple(sorted(self.pages, key=lambda p: p.url)), thin_report=dict(sorted(self.thin.items())))

    def pairs_for(self, error: ErrorSignature) -> list[PairNumbers]:
        if self._by_scenario is None:  # each error reads the pairs of its scenario: one pass over the results for all
            self._by_scenario = defaultdict(list)
            for n in self.results.values():
                for scenario in set(n.scenarios):
                    self._by_scenario[scenario].append(n)
        chosen = {n.key: n for n in self._by_scenario.get(error.scenario, ())} if error.pair_pages else {}
        for pair in self.d.pairs:
            if error.id in pair.errors:
                key = (pair.gpu, pair.model, pair.variant)
                if key in self.results:
                    chosen[key] = self.results[key]
        return [chosen[k] for k in sorted(chosen)]

    def plan_pairs(self) -> None:
        featured = {(p.gpu, p.model, p.variant): p for p in self.d.pairs}
        memo = self.memo
        units: dict[str, _PairUnit] = {}
        for error in self.d.errors.values():
            unit = memo.units.get(error.id) if memo is not None else None
            if unit is None or not self.reusable or not self._still_current(unit, error):
                # The same error with other featured pairs, dates or shared records (a GPU or model edit):
                # most pages come out as before.
                unit = self._plan_error_pairs(error, featured, unit if unit is not None and unit.error == error else None)
            units[error.id] = unit
            self.pages.extend(unit.pages)
            self.pair_index[error.id].update((gpu_id, list(pairs)) for gpu_id, pairs in unit.index.items())
            self.indexable_pairs.update(unit.indexable)
            for rule, count in unit.thin.items():
                self.thin[rule] += count
        if memo is not None:
            memo.units = units

    def _relevant_pairs(self, error: ErrorSignature, keys: frozenset[tuple[str, str, str]]) -> tuple[Any, ...]:
        """The featured pair records planning this error's pages reads: those that list it, and those
        of pairs it has a candidate page for (their intro shows, and they are never thinned)."""
        return tuple(p for p in self.d.pairs if error.id in p.errors or (p.gpu, p.model, p.variant) in keys)

    def _dates_read(self, pages: Iterable[Page]) -> tuple[tuple[str, str], ...]:
        keys = sorted({key for page in pages for key in page.inputs})
        return tuple((key, self.lastmod((key,))) for key in keys)

    def _still_current(self, unit: _PairUnit, error: ErrorSignature) -> bool:
        """Whether a unit planned earlier is what planning this error now would give (the shared
        inputs were found equal already)."""
        return (unit.error == error and unit.featured == self._relevant_pairs(error, unit.keys)
                and all(self.lastmod((key,)) == date for key, date in unit.dates))

    def _plan_error_pairs(self, error: ErrorSignature, featured: Mapping[tuple[str, str, str], Any],
                          before: _PairUnit | None = None) -> _PairUnit:
        """One error's pair pages, the thin-page guard applied among them. before: this error's pages
        as planned from the same shared inputs (see PlanMemo); a page whose own inputs are all
        unchanged is taken from it as it is."""
        unit = _PairUnit(error=error)
        old_pages = {page.url: page for page in before.pages} if before is not None else {}
        # Shared by every pair page of the error: at 100k pages, copies per page add up.
        error_crumbs = (("Home", "/"), (ENGINE_NAMES[error.engine], f"/engines/{error.engine}/"),
                        (error.short_name or error.title, error_url(error.id)))
        error_key = f"error:{error.id}"
        seen: dict[bytes, str] = {}
        seen_urls: set[str] = set()
        candidates = self.pairs_for(error)
        unit.keys = frozenset(numbers.key for numbers in candidates)
        unit.featured = self._relevant_pairs(error, unit.keys)
        for numbers in candidates:
            gpu, model, variant = self.records(numbers.key)
            if not (sglang_pages.runs(numbers) if error.engine == "sglang" else error.engine in variant.engines):
                unit.thin["engine cannot run this variant"] += 1
                continue
            url = pair_url(error.id, gpu.id, model.id, variant.id)
            seen_urls.add(url)
            fp = fingerprint(error.engine, numbers) if self.memo is None else self.memo.fingerprint(error.engine, numbers)
            indexable = fp not in seen or numbers.key in featured
            if not indexable:
                unit.thin["same numbers as a sibling GPU"] += 1
            seen.setdefault(fp, url)
            intro = featured[numbers.key].intro if numbers.key in featured and featured[numbers.key].intro else None
            duplicate_of = None if indexable else seen[fp]
            inputs = (self.key_of("gpu", gpu.id), self.key_of("model", model.id), error_key, "engine")
            if numbers.key in featured:
                inputs += (f"pair:{gpu.id}--{model.id}-{variant.id}",)
            page = old_pages.get(url)
            if page is not None and not self.reusable and not self._reads_the_same(page, numbers):
                page = None
            if page is None or not (page.indexable == indexable and page.inputs == inputs and page.lastmod == self.lastmod(inputs)
                                    and page.view.inputs[0].intro == intro and page.view.inputs[0].duplicate_of == duplicate_of):
                title, description = self.pair_title(error, gpu, model, variant, numbers)
                crumbs = (*error_crumbs, (f"{short_gpu(gpu)} · {model.name} {variant.name}", url))
                page = self.page(url=url, template="pair", title=title, description=description, kind="pair",
                                 view=self.pair_inputs(error, numbers, intro, duplicate_of), inputs=inputs,
                                 crumbs=crumbs, indexable=indexable)
            unit.pages.append(page)
            if indexable:
                unit.indexable.append(url)
            unit.index[gpu.id].append((model.id, variant.id))
        if error.pair_pages:
            # Pairs this engine can run that start fine or fail some other way: no page, nothing to say.
            runnable = self.runnable_pairs(error.engine)
            unit.thin["pair does not hit the error (fits, or fails another way)"] += runnable - len(seen_urls)
        unit.dates = self._dates_read(unit.pages)
        return unit

    def _reads_the_same(self, page: Page, numbers: PairNumbers) -> bool:
        """Whether a pair page planned from other shared records reads what planning it now would
        (PlanMemo.unchanged_pairs; the caller compares the error's own inputs)."""
        if self._stable is None or not self._stable(numbers.gpu, numbers.model):
            return False
        before = page.view.inputs[0].fits_elsewhere
        known = self._same_fits.get(id(before))
        if known is None or known[0] is not before:
            known = self._same_fits[id(before)] = (before, before == self.gpus_that_fit(numbers))
        return known[1]

    def key_of(self, kind: str, record_id: str) -> str:
        """The record key "kind:id", one string object per record however many pages name it."""
        return self._keys.setdefault((kind, record_id), f"{kind}:{record_id}")

    def runnable_pairs(self, engine: str) -> int:
        """How many catalog pairs this engine can run (their variant lists it)."""
        if self._runnable is None:
            self._runnable = defaultdict(int)
            for key in self.results:
                for name in self._variants[(key[1], key[2])].engines:
                    self._runnable[name] += 1
            self._runnable["sglang"] = sglang_pages.runnable_count(self.results)
        return self._runnable[engine]

    def pair_title(self, error: ErrorSignature, gpu: Gpu, model: Model, variant: ModelVariant, numbers: PairNumbers) -> tuple[str, str]:
        name = error.short_name or error.title
        engine = ENGINE_NAMES[error.engine]
        where = f"{short_gpu(gpu)} with {model.name} {variant.name}"
        if error.engine == "vllm" and numbers.vllm is not None:
            v = numbers.vllm
            verdict = f"fits {v.max_len:,} tokens" if v.max_len else "no KV cache fits"
            desc = (
                f"{model.name} {variant.name} on {short_gpu(gpu)} ({gib(gpu_memory_bytes(gpu))}): "
                f"{kib(v.bytes_per_token)}/token, {v.kv_cache_tokens:,} KV tokens, --max-model-len {v.max_len:,} starts."
            )
        elif error.engine == "llamacpp" and numbers.llamacpp is not None:
            l = numbers.llamacpp
            verdict = f"-c {l.max_ctx_f16:,} fits" if l.max_ctx_f16 else "KV cache does not fit"
            desc = (
                f"{model.name} {variant.name} on {short_gpu(gpu)}: KV {mib(l.kv_bytes)} at -c {l.ctx_size:,}; "
                f"fits -c {l.max_ctx_f16:,} (f16) or {l.max_ctx_q8_0:,} (q8_0)."
            )
        elif error.engine == "sglang" and sglang_pages.runs(numbers):
            verdict, desc = sglang_pages.title_parts(short_gpu(gpu), model, variant, numbers, gib(gpu_memory_bytes(gpu)))
        else:
            o = numbers.ollama
            assert o is not None
            verdict = f"num_ctx {o.max_num_ctx_f16:,} fits" if o.max_num_ctx_f16 else "offloads to CPU"
            desc = (
                f"{model.name} {variant.name} on {short_gpu(gpu)}: default num_ctx {o.num_ctx:,} needs {mib(o.kv_bytes)} KV; "
                f"fits {o.max_num_ctx_f16:,} (f16), {o.max_num_ctx_q8_0:,} (q8_0)."
            )
        title = f"{engine} {name} on {where}: {verdict}"
        if len(desc) > 160:
            desc = desc[:157].rstrip(" ,;:") + "..."
        return title, desc

    def plan_errors(self) -> None:
        for error in self.d.errors.values():
            ex = error.example
            key = (ex.gpu, ex.model, ex.variant)
            numbers = self.results.get(key)
            if numbers is None:
                raise RenderError([Issue(f"content/errors/{error.id}.yaml", 1, 0, "example", f"no numbers for {key}")])
            view = pair_view(self.pair_inputs(error, numbers))
            by_gpu = []
            for gpu_id in sorted(self.pair_index.get(error.id, {}), key=lambda g: (gpu_memory_bytes(self.d.gpus[g]), g)):
                gpu = self.d.gpus[gpu_id]
                items = []
                for model_id, variant_id in sorted(self.pair_index[error.id][gpu_id]):
                    model = self.d.models[model_id]
                    variant = next(v for v in model.variants if v.id == variant_id)
                    items.append({"label": f"{model.name} {variant.name}", "url": pair_url(error.id, gpu_id, model_id, variant_id)})
                by_gpu.append({"gpu": _gpu_link(gpu), "pairs": items})
            view["pairs_by_gpu"] = by_gpu
            view["related"] = [{"id": r, "title": self.d.errors[r].title} for r in error.related if r in self.d.errors]
            view["texts"] = error.texts
            url = error_url(error.id)
            crumbs = (("Home", "/"), (ENGINE_NAMES[error.engine], f"/engines/{error.engine}/"), (error.short_name or error.title, url))
            self.add(url=url, template="error", title=error.title, description=error.description, kind="error", view=view,
                     inputs=(f"error:{error.id}", f"gpu:{ex.gpu}", f"model:{ex.model}", "engine"), crumbs=crumbs)

    def variant_rows(self, gpu_id: str) -> list[dict[str, Any]]:
        rows = []
        for model in self.d.models.values():
            for variant in model.variants:
                numbers = self.results.get((gpu_id, model.id, variant.id))
                if numbers is None:
                    continue
                rows.append({"model": {"id": model.id, "name": model.name}, "variant": {"name": variant.name}, "numbers": numbers,
                             "pages": self.pages_for_pair(numbers)})
        return rows

    def pages_for_pair(self, numbers: PairNumbers) -> list[dict[str, str]]:
        """The pair pages of this GPU and build, one per error, in error order (after plan_pairs)."""
        if self._pair_pages is None:
            self._pair_pages = defaultdict(list)
            for error_id, gpus in self.pair_index.items():
                label = self.d.errors[error_id].short_name or self.d.errors[error_id].title
                for gpu_id, pairs in gpus.items():
                    for model_id, variant_id in pairs:
                        self._pair_pages[(gpu_id, model_id, variant_id)].append(
                            {"label": label, "url": pair_url(error_id, gpu_id, model_id, variant_id)})
        return self._pair_pages.get(numbers.key, [])

    def plan_tables(self) -> None:
        """The GPU and model pages (a table of every pair each) and their index pages."""
        labels = tuple((e.id, e.short_name or e.title) for e in self.d.errors.values())
        before = self.memo.tables if self.memo is not None and self.reusable else None
        if (before is not None and before.labels == labels and before.pair_index == self.pair_index
                and all(self.lastmod((key,)) == date for key, date in before.dates)):
            self.pages.extend(before.pages)
            return
        start = len(self.pages)
        self.plan_gpus()
        self.plan_models()
        if self.memo is not None:
            pages = self.pages[start:]
            self.memo.tables = _Tables(pages, self.pair_index, labels, self._dates_read(pages))

    def plan_gpus(self) -> None:
        items = []
        for gpu in self.d.gpus.values():
            url = f"/gpus/{gpu.id}/"
            rows = self.variant_rows(gpu.id)
            fits_full = sum(1 for r in rows if (r["numbers"].vllm and r["numbers"].vllm.fits) or (r["numbers"].llamacpp and r["numbers"].llamacpp.fits))
            view = {"gpu": gpu, "memory_bytes": gpu_memory_bytes(gpu), "rows": rows, "links": self.links(gpu), "fits_full": fits_full}
            title = f"{gpu.name} ({gpu.marketed_gb} GB) for LLM serving: which models and contexts fit"
            description = f"{gpu.name}: {gib(gpu_memory_bytes(gpu))} usable. {fits_full} of {len(rows)} model builds start at full context in vLLM or llama.cpp."
            crumbs = (("Home", "/"), ("GPUs", "/gpus/"), (short_gpu(gpu), url))
            self.add(url=url, template="gpu", title=title, description=description, kind="gpu", view=view,
                     inputs=(f"gpu:{gpu.id}", "models", "engine"), crumbs=crumbs)
            items.append({"gpu": {"id": gpu.id, "name": gpu.name, "marketed_gb": gpu.marketed_gb}, "memory_bytes": gpu_memory_bytes(gpu),
                          "url": url, "fits_full": fits_full, "rows": len(rows)})
        items.sort(key=lambda i: (i["memory_bytes"], i["gpu"]["id"]))
        self.add(url="/gpus/", template="gpus", title="GPUs: usable memory and the LLMs that fit",
                 description="Every GPU in the catalog with the memory CUDA reports, bandwidth, FP8 support and how many model builds fit at full context.",
                 kind="index", view={"items": items}, inputs=("gpus",), crumbs=(("Home", "/"), ("GPUs", "/gpus/")))

    def plan_models(self) -> None:
        items = []
        for model in self.d.models.values():
            url = f"/models/{model.id}/"
            table = []
            for variant in model.variants:
                cells = []
                for gpu in sorted(self.d.gpus.values(), key=lambda g: (gpu_memory_bytes(g), g.id)):
                    numbers = self.results.get((gpu.id, model.id, variant.id))
                    if numbers is not None:
                        cells.append({"gpu": _gpu_link(gpu), "numbers": numbers, "pages": self.pages_for_pair(numbers)})
                table.append({"variant": variant, "weights": next((c["numbers"].weights_bytes for c in cells), 0),
                              "weights_estimated": next((c["numbers"].weights_estimated for c in cells), True), "cells": cells})
            any_numbers = next((c["numbers"] for row in table for c in row["cells"]), None)
            view = {"model": model, "table": table, "sample": any_numbers}
            title = f"{model.name}: KV cache per token and the GPUs that fit it"
            layers = model.config.num_hidden_layers
            description = (
                f"{model.name} ({layers} layers, {model.config.num_key_value_heads} KV heads): weights and max context by GPU "
                f"and quantization for vLLM, llama.cpp and Ollama."
            )
            if len(description) > 160:
                description = description[:157].rstrip(" ,") + "..."
            crumbs = (("Home", "/"), ("Models", "/models/"), (model.name, url))
            self.add(url=url, template="model", title=title, description=description, kind="model", view=view,
                     inputs=(f"model:{model.id}", "gpus", "engine"), crumbs=crumbs)
            config = model.config
            shown = {"name": model.name, "variants": [{"name": v.name} for v in model.variants], "config": {
                "num_hidden_layers": config.num_hidden_layers, "num_key_value_heads": config.num_key_value_heads,
                "max_position_embeddings": config.max_position_embeddings}}
            items.append({"model": shown, "url": url})
        self.add(url="/models/", template="models", title="Models: architecture, KV bytes per token and variants",
                 description="Every model in the catalog with its layers, KV heads, head size, context limit and the quantized builds kvtriage sizes.",
                 kind="index", view={"items": items}, inputs=("models",), crumbs=(("Home", "/"), ("Models", "/models/")))

    def plan_engines(self) -> None:
        for engine in self.d.engines.values():
            url = f"/engines/{engine.id}/"
            errors = [e for e in self.d.errors.values() if e.engine == engine.id]
            view = {"engine": engine, "errors": [{"id": e.id, "title": e.title, "description": e.description} for e in errors]}
            title = f"{engine.name} out-of-memory and KV-cache errors, explained with exact numbers"
            description = f"Every {engine.name} {engine.version} memory error kvtriage covers, what prints it, and the settings that fix it on your GPU."
            crumbs = (("Home", "/"), (engine.name, url))
            self.add(url=url, template="engine", title=title, description=description, kind="engine", view=view,
                     inputs=("engine", *(f"error:{e.id}" for e in errors)), crumbs=crumbs)

    def plan_home(self) -> None:
        by_engine = [
            {"engine": engine, "errors": [{"id": e.id, "title": e.title} for e in self.d.errors.values() if e.engine == engine.id]}
            for engine in self.d.engines.values()
        ]
        featured = []
        for pair in self.d.pairs:
            for error_id in pair.errors:
                featured.append({"label": f"{short_gpu(self.d.gpus[pair.gpu])} · {self.d.models[pair.model].name}",
                                 "url": pair_url(error_id, pair.gpu, pair.model, pair.variant)})
        view = {"by_engine": by_engine, "featured": featured, "pair_count": len(self.indexable_pairs),
                "gpu_count": len(self.d.gpus), "model_count": len(self.d.models)}
        self.add(url="/", template="home", title=f"{self.d.site.title}: fix {engine_names(self.d, 'and')} out-of-memory errors",
                 description=f"Paste your {engine_names(self.d)} memory error and get the exact context, KV cache and flags that start on your GPU and model.",
                 kind="home", view=view, inputs=("*",))


def _gpu_link(gpu: Gpu) -> dict[str, str]:
    """A GPU as the lists of other pages show it (a link by its name). Only what they show: its other
    fields (buy links, sources) stay out of the key of every page listing it, so editing them
    re-renders only the pages that show them."""
    return {"id": gpu.id, "name": gpu.name}


def plan_pages(dataset: Dataset, results: Results, dates: Mapping[str, str] | None = None, memo: PlanMemo | None = None) -> Plan:
    """Every page of the site. memo: pair pages planned by an earlier call in this process, reused
    where their inputs are unchanged (see PlanMemo); it is updated for the next call."""
    plan = _Planner(dataset, results, dates or {}, memo).plan()
    check_unique_urls(plan.pages, dataset.origins)
    return plan
