"""plan_pages: one page per URL, titles and descriptions that say the specific thing, no thin twins."""

from __future__ import annotations

from dataclasses import replace

import pytest

from generator.engine.pairs import compute_results
from generator.errors import RenderError
from generator.load import load_dataset
from generator.plan.planner import plan_pages
from generator.plan.routes import check_unique_urls
from generator.plan.views import fill, fill_slots

from ..conftest import FIXTURE_SITE


@pytest.fixture(scope="module")
def fixture_plan():
    dataset = load_dataset(FIXTURE_SITE)
    return dataset, plan_pages(dataset, compute_results(dataset), {"*": "2026-11-29"})


def test_the_seed_pages_exist(fixture_plan) -> None:
    _, plan = fixture_plan
    urls = {p.url for p in plan.pages}
    assert "/oom/vllm-max-model-len-error/" in urls
    assert "/oom/vllm-max-model-len-error/rtx-4090/qwen2.5-coder-32b-instruct-awq/" in urls
    assert {"/", "/gpus/rtx-4090/", "/models/qwen2.5-coder-32b-instruct/", "/engines/vllm/"} <= urls


def test_pair_title_states_the_engines_number(fixture_plan) -> None:
    _, plan = fixture_plan
    pair = next(p for p in plan.pages if p.kind == "pair" and p.url.startswith("/oom/vllm-"))
    numbers = pair.view["numbers"].vllm
    assert f"fits {numbers.max_len:,} tokens" in pair.title
    assert "RTX 4090" in pair.title and "Qwen2.5-Coder-32B" in pair.title
    assert 50 <= len(pair.description) <= 160


def test_titles_and_descriptions_are_unique(fixture_plan) -> None:
    _, plan = fixture_plan
    indexable = [p for p in plan.pages if p.indexable]
    assert len({p.title for p in indexable}) == len(indexable)
    assert len({p.description for p in indexable}) == len(indexable)


def test_prose_quantities_come_from_the_engine(fixture_plan) -> None:
    _, plan = fixture_plan
    pair = next(p for p in plan.pages if p.kind == "pair" and p.url.startswith("/oom/vllm-"))
    numbers = pair.view["numbers"].vllm
    assert f"{numbers.max_len:,}" in pair.view["triage"]
    assert "{{" not in pair.view["triage"] + pair.view["cause"]


def test_same_numbers_on_two_gpus_is_thin(fixture_plan) -> None:
    dataset, _ = fixture_plan
    base = dataset.gpus["rtx-4090"]
    twins = {
        gid: base.model_copy(update={"id": gid, "name": name})
        for gid, name in (("rtx-4090-a", "GeForce RTX 4090 A"), ("rtx-4090-b", "GeForce RTX 4090 B"))
    }
    dataset = replace(dataset, gpus=dict(dataset.gpus, **twins))
    plan = plan_pages(dataset, compute_results(dataset), {"*": "2026-11-29"})
    pairs = {p.url.split("/")[3]: p for p in plan.pages if p.kind == "pair" and p.url.startswith("/oom/vllm-") and p.url.endswith("-awq/")}
    # The featured RTX 4090 page runs at its own utilization, so its numbers differ; the twins match each other.
    assert set(pairs) == {"rtx-4090", "rtx-4090-a", "rtx-4090-b"}
    assert pairs["rtx-4090-a"].indexable and not pairs["rtx-4090-b"].indexable
    # Each other build of the model repeats on the twins too, so at least the AWQ page is counted.
    assert plan.thin_report["same numbers as a sibling GPU"] >= 1


def test_two_pages_cannot_claim_one_url(fixture_plan) -> None:
    _, plan = fixture_plan
    with pytest.raises(RenderError) as raised:
        check_unique_urls([plan.pages[0], plan.pages[0]])
    assert plan.pages[0].url in str(raised.value)


def test_fill_and_slots() -> None:
    assert fill("holds {{ vllm.kv_tokens }} tokens", {"vllm.kv_tokens": "8,192"}) == "holds 8,192 tokens"
    assert fill_slots("len ({max_model_len}) on {device}", {"max_model_len": "32768"}) == "len (32768) on <device>"


def test_a_url_claimed_twice_names_the_records_and_their_files(fixture_plan) -> None:
    _, plan = fixture_plan
    page = next(p for p in plan.pages if p.kind == "pair")
    # Model 'a-b' variant 'c' and model 'a' variant 'b-c' end in the same /a-b-c/ (load refuses that
    # earlier, with lines; this is the backstop that names where both pages came from).
    first = replace(page, inputs=("gpu:rtx-4090", "model:a-b", "error:e"))
    second = replace(page, inputs=("gpu:rtx-4090", "model:a", "error:e"))
    origins = {"gpu:rtx-4090": "data/gpus.yaml", "model:a-b": "data/models.yaml", "model:a": "data/more-models.yaml", "error:e": "content/errors/e.yaml"}
    with pytest.raises(RenderError) as raised:
        check_unique_urls([first, second], origins)
    (issue,) = raised.value.issues
    assert issue.path == "data/more-models.yaml"
    assert "model:a-b in data/models.yaml" in issue.message and "model:a in data/more-models.yaml" in issue.message


def test_shipped_catalog_makes_over_a_thousand_distinct_pair_pages() -> None:
    """Issue 5's bar on the real catalog: 1,000+ indexable pair pages, no two pages with one title
    or description. Broken links are refused by the build itself (check/site_checks.py, check_pages)."""
    from ..conftest import REPO

    dataset = load_dataset(REPO)
    plan = plan_pages(dataset, compute_results(dataset), {"*": "2026-11-29"})
    indexable = [p for p in plan.pages if p.indexable]
    assert sum(1 for p in indexable if p.kind == "pair") >= 1000
    assert len({p.title for p in indexable}) == len(indexable)
    assert len({p.description for p in indexable}) == len(indexable)
    assert all(50 <= len(p.description) <= 160 for p in indexable)


def _described(plan) -> list[tuple]:
    """Everything a page renders from, with each view built, for comparing two plans."""
    return [(p.url, p.template, p.title, p.description, p.kind, p.lastmod, p.breadcrumbs, p.indexable, p.inputs,
             repr(sorted(dict(p.view).items(), key=lambda item: item[0]))) for p in plan.pages]


def test_a_plan_memo_reuses_unchanged_pages_and_equals_a_fresh_plan() -> None:
    from generator.plan.memo import PlanMemo

    dataset = load_dataset(FIXTURE_SITE)
    results = compute_results(dataset)
    dates = {"*": "2026-11-29"}
    memo = PlanMemo()
    first = plan_pages(dataset, results, dates, memo)
    assert _described(first) == _described(plan_pages(dataset, results, dates))
    again = plan_pages(dataset, results, dates, memo)
    assert all(a is b for a, b in zip(first.pages, again.pages) if a.kind in ("pair", "gpu", "model"))

    # A featured pair's new intro: that one page is planned again, its siblings are kept.
    pair = dataset.pairs[0]
    edited = replace(dataset, pairs=(pair.model_copy(update={"intro": "Another intro."}), *dataset.pairs[1:]))
    third = plan_pages(edited, results, dates, memo)
    assert _described(third) == _described(plan_pages(edited, results, dates))
    fresh = [p.url for a, p in zip(again.pages, third.pages) if a is not p and p.kind == "pair"]
    assert fresh == [f"/oom/{pair.errors[0]}/{pair.gpu}/{pair.model}-{pair.variant}/"]

    # A later date for a GPU, and numbers computed again: planned afresh, equal to a plan without memo.
    dated = {"*": "2026-11-30", "gpu:rtx-4090": "2026-11-30"}
    assert _described(plan_pages(edited, results, dated, memo)) == _described(plan_pages(edited, results, dated))
    recomputed = compute_results(edited)
    fourth = plan_pages(edited, recomputed, dated, memo)
    assert _described(fourth) == _described(plan_pages(edited, recomputed, dated))
    assert not any(a is b for a, b in zip(third.pages, fourth.pages) if a.kind == "pair")


def test_a_plan_memo_replans_only_the_pair_pages_of_an_edited_gpu() -> None:
    """A GPU edit changes inputs every error's pages share; the memo keeps the pair pages of the
    other GPUs (the same numbers objects, the same GPUs that fit) and the plan equals a fresh one."""
    from generator.plan.memo import PlanMemo

    dataset = load_dataset(FIXTURE_SITE)
    gpu = dataset.gpus["rtx-4090"]
    other = gpu.model_copy(update={"id": "test-card-16gb", "name": "Test Card 16GB", "marketed_gb": 16,
                                   "cuda_total_bytes": 16 * 10**9, "buy_query": "Test Card 16GB"})
    dataset = replace(dataset, gpus={gpu.id: gpu, other.id: other})
    results = compute_results(dataset)
    dates = {"*": "2026-11-29"}
    memo = PlanMemo()
    first = plan_pages(dataset, results, dates, memo)
    edited = replace(dataset, gpus=dict(dataset.gpus, **{gpu.id: gpu.model_copy(update={"buy_query": "another query"})}))
    after = plan_pages(edited, results, dates, memo)
    assert _described(after) == _described(plan_pages(edited, results, dates))
    before = {p.url: p for p in first.pages}
    pairs = [p for p in after.pages if p.kind == "pair"]
    kept = {p.url for p in pairs if p is before[p.url]}
    assert kept == {p.url for p in pairs if f"/{other.id}/" in p.url} != set()


def test_a_gpus_buy_link_is_in_the_views_of_its_own_pages_only(fixture_plan) -> None:
    """Lists of GPUs on other pages (the GPUs that fit, the model and error tables, the GPU index)
    carry what they show, so a buy-link edit leaves those pages' views, and so their keys, alone."""
    dataset, plan = fixture_plan
    gpu = dataset.gpus["rtx-4090"]
    edited = replace(dataset, gpus=dict(dataset.gpus, **{gpu.id: gpu.model_copy(update={"buy_query": "another query"})}))
    after = plan_pages(edited, compute_results(edited), {"*": "2026-11-29"})
    own = {f"/gpus/{gpu.id}/"} | {p.url for p in plan.pages if p.kind == "pair" and f"/{gpu.id}/" in p.url}
    changed = {a[0] for a, b in zip(_described(plan), _described(after)) if a != b}
    assert changed and changed <= own | {f"/oom/{e.id}/" for e in dataset.errors.values() if e.example.gpu == gpu.id}


def test_engine_works_out_levers_for_the_vllm_build_other_pages_show() -> None:
    """The engine gives the planner's vLLM sibling its levers on every GPU (pairs.vllm_sibling)."""
    from generator.engine.pairs import vllm_sibling
    from generator.load import load_dataset as load
    from generator.plan.planner import _Planner

    from ..conftest import REPO

    for root in (FIXTURE_SITE, REPO):
        dataset = load(root)
        planner = _Planner(dataset, {}, {})
        for model in dataset.models.values():
            for variant in model.variants:
                if "vllm" not in variant.engines:
                    other = planner.sibling(model, variant, "vllm")
                    assert (other.id if other is not None else None) == vllm_sibling(model)


def test_rent_links_take_the_article_the_gpu_name_is_said_with() -> None:
    """'Rent an RTX 4090', 'an NVIDIA H100', 'an AMD Instinct', but 'a Tesla V100' and 'a T4'."""
    from generator.load import load_dataset
    from generator.plan.views import indefinite_article, sponsored_links

    said = {"RTX 4090": "an", "NVIDIA H100 80GB": "an", "AMD Instinct MI300X": "an", "H100": "an", "A100": "an", "L40S": "an",
            "MI300X": "an", "Instinct": "an", "Tesla V100": "a", "T4": "a", "GeForce RTX 3090": "a", "DGX Spark": "a", "B200": "a"}
    assert {name: indefinite_article(name) for name in said} == said
    dataset = load_dataset(FIXTURE_SITE)
    labels = [link["label"] for link in sponsored_links(dataset, dataset.gpus["rtx-4090"])]
    rent = [label for label in labels if label.startswith("Rent")]
    assert rent and all(label.startswith("Rent an RTX 4090 on ") for label in rent), labels


def test_the_site_names_every_engine_it_has_pages_for() -> None:
    """The navigation, the home page's title and description, the search page and llms.txt name each
    engine of data/engines.yaml (SGLang too), from the records rather than a list typed into them."""
    from generator.build.pipeline import site_context
    from generator.plan.views import engine_names

    from ..conftest import REPO

    dataset = load_dataset(REPO)
    assert engine_names(dataset) == "vLLM, llama.cpp, Ollama or SGLang"
    assert engine_names(dataset, "and") == "vLLM, llama.cpp, Ollama and SGLang"
    assert [e["url"] for e in site_context(dataset)["engines"]] == [f"/engines/{e}/" for e in ("vllm", "llamacpp", "ollama", "sglang")]
    typed = ["templates/base.html", "generator/plan/planner.py", "generator/render/site_files.py"]
    assert not [path for path in typed if "llama.cpp or Ollama" in (REPO / path).read_text()
                or "llama.cpp and Ollama out-of-memory" in (REPO / path).read_text()
                or 'href="/engines/ollama/"' in (REPO / path).read_text()]



def test_a_unified_memory_module_page_lists_no_tensor_parallel_fix() -> None:
    """The fixes of a Jetson's page leave out tensor parallelism: the module is the one GPU of its host."""
    from generator.plan.views import PairInputs, pair_view

    dataset = load_dataset(FIXTURE_SITE)
    key = ("rtx-4090", "qwen2.5-coder-32b-instruct", "awq")
    numbers = compute_results(dataset)[key]
    error = dataset.errors["vllm-max-model-len-error"]
    model = dataset.models[key[1]]
    variant = next(v for v in model.variants if v.id == key[2])
    card = dataset.gpus[key[0]]
    module = card.model_copy(update={"name": "NVIDIA Jetson AGX Orin 64GB"})

    def levers(gpu):
        return [f["lever"] for f in pair_view(PairInputs(error, gpu, model, variant, numbers, (), [], [], None, None))["fixes"]]

    assert "tensor-parallel" in levers(card)
    assert "tensor-parallel" not in levers(module) and len(levers(module)) == len(levers(card)) - 1
