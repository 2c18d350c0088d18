"""The /accuracy/ page: every prediction comes from the engine at build time, from the log's own settings."""

from __future__ import annotations

import pytest

from generator.engine.pairs import compute_results
from generator.engine.vllm import GiB, VllmInputs, plan_vllm
from generator.load import load_dataset
from generator.plan.accuracy import ACCURACY_URL, accuracy_view
from generator.plan.planner import plan_pages

from ..conftest import FIXTURE_SITE, REPO


@pytest.fixture(scope="module")
def repo_evidence():
    return load_dataset(REPO).evidence


def _table(view, table_id):
    return next(t for s in view["sections"] for t in s["tables"] if t["id"] == table_id)


def test_the_page_is_planned_from_the_fixture_tables() -> None:
    dataset = load_dataset(FIXTURE_SITE)
    plan = plan_pages(dataset, compute_results(dataset), {"*": "2026-11-29"})
    page = next(p for p in plan.pages if p.url == ACCURACY_URL)
    assert page.indexable and page.kind == "accuracy"
    assert {s["id"] for s in page.view["sections"]} == {"vllm", "sglang", "llamacpp"}
    assert "evidence:vllm" in page.inputs


def test_a_site_without_evidence_still_has_the_page() -> None:
    view = accuracy_view(None)
    assert view == {"sections": [], "row_count": 0}


def test_vllm_end_to_end_rows_are_the_engines_prediction(repo_evidence) -> None:
    view = accuracy_view(repo_evidence)
    rows = _table(view, "vllm-available")["rows"]
    modelled = [e for e in repo_evidence.vllm.budget if not e.status and e.log.available_kv_cache_gib is not None
                and e.gpu_total_gib is not None and repo_evidence.vllm.models[e.model].config is not None]
    assert len(rows) == len(modelled)
    log = next(e for e in modelled if e.id == "rtx3090-llama-3.1-8b-0.90-v0.17")
    row = next(r for r in rows if r["id"] == log.id)
    weights = round(log.log.model_loading_gib * GiB)
    expected = plan_vllm(VllmInputs(hf_config=repo_evidence.vllm.models[log.model].config, gpu_total_bytes=round(log.gpu_total_gib * GiB),
                                    weights_bytes=weights, vllm_version=log.vllm_version, **log.settings.engine_inputs()))
    assert row["predicted"] == expected.available_kv_cache_bytes / GiB
    assert row["error"] == row["predicted"] - log.log.available_kv_cache_gib
    assert row["source"]["href"] == log.url


def test_release_summaries_are_medians_and_worst_of_their_rows(repo_evidence) -> None:
    table = _table(accuracy_view(repo_evidence), "vllm-available")
    assert sum(r["count"] for r in table["releases"]) == len(table["rows"])
    for summary in table["releases"]:
        errors = sorted(r["abs_error"] for r in table["rows"] if r["release"] == summary["release"])
        assert summary["worst"] == errors[-1]
        assert errors[0] <= summary["median"] <= errors[-1]


def test_llamacpp_kv_buffers_match_the_printed_figures(repo_evidence) -> None:
    table = _table(accuracy_view(repo_evidence), "llamacpp-kv")
    assert len(table["rows"]) >= 8
    assert table["overall"]["worst"] < 0.01  # percent: the KV buffer is exact arithmetic


def test_no_internal_note_reaches_the_page(repo_evidence) -> None:
    text = repr(accuracy_view(repo_evidence)).lower()
    for phrase in ("exact-text search", "search id", "file id", "tests/data", "data/evidence"):
        assert phrase not in text


def test_vllm_end_to_end_table_reports_each_collection(repo_evidence) -> None:
    """Tuning logs and every holdout collection get their own median, worst and within-the-bar count."""
    table = _table(accuracy_view(repo_evidence), "vllm-available")
    splits = {s["split"]: s for s in table["splits"]}
    assert list(splits)[0] == "tuning" and {"holdout", "holdout4", "holdout5", "holdout6"} <= set(splits)
    assert sum(s["count"] for s in splits.values()) == len(table["rows"])
    for name, summary in splits.items():
        rows = [r for r in table["rows"] if r["split"] == name]
        assert summary["worst"] == max(r["abs_error"] for r in rows)
        assert summary["within"] == sum(r["within"] for r in rows)
        assert summary["note"]


def test_each_table_says_whether_it_is_exact_or_empirical(repo_evidence) -> None:
    view = accuracy_view(repo_evidence)
    basis = {t["id"]: t["basis"] for s in view["sections"] for t in s["tables"]}
    assert basis["vllm-available"] == "empirical" and basis["vllm-kv-size"] == "exact"
    assert basis["llamacpp-kv"] == "exact" and basis["llamacpp-compute"] == "empirical"
    assert all(t["basis_text"] for s in view["sections"] for t in s["tables"])


def test_the_empirical_nccl_term_says_so_and_links_its_rows(repo_evidence) -> None:
    """An empirical term names itself so and links the rows it is fitted on; those rows are marked as not blind."""
    view = accuracy_view(repo_evidence)
    vllm = next(s for s in view["sections"] if s["id"] == "vllm")
    term = next(t for t in vllm["empirical"] if t["term"].startswith("NCCL buffers"))
    assert term["text"].startswith("Empirical.") and len(term["rows"]) == 4
    assert all(row["source"]["href"].startswith("https://") for row in term["rows"])
    rows = {r["id"]: r for r in _table(view, "vllm-available")["rows"]}
    fitted = [rows[row["id"]] for row in term["rows"] if row["id"] in rows]
    assert len(fitted) == 3 and all("NCCL term fitted on it, not blind" in r["marks"] for r in fitted)


def test_a_setting_inferred_after_measuring_is_marked(repo_evidence) -> None:
    rows = {r["id"]: r for r in _table(accuracy_view(repo_evidence), "vllm-available")["rows"]}
    row = rows["h200-tp4-llama-3.3-70b-fp8-8k-0.92-v0.11.0-h11-66ba6f71"]
    assert any(mark.startswith("the FlashInfer sampler path") and "not printed" in mark for mark in row["marks"])
    assert not any("not printed" in mark for mark in rows["h200-tp4-llama-3.3-70b-8k-0.92-v0.11.2-h11-5ac9216d"]["marks"])
