"""The collector is paused while a file is scanned and while facts are matched, and on
again afterwards (``sources.collector``): never left off by a scan, and the garbage cycles
of one file (a Python file's AST) are freed once the scan is done."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from vllm_upgrade_check.engine import run_scan
from vllm_upgrade_check.model.options import ScanOptions
from vllm_upgrade_check.sources import dispatch
from vllm_upgrade_check.sources.collector import paused_collector


def test_paused_inside_restored_after_also_on_error() -> None:
    assert gc.isenabled()
    with paused_collector():
        assert not gc.isenabled()
        with paused_collector():  # nested: still off inside, and the outer block keeps it off
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError), paused_collector():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_caller_that_turned_the_collector_off_keeps_it_off() -> None:
    gc.disable()
    try:
        with paused_collector():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_scan_pauses_the_collector_for_each_file_and_leaves_it_on(tmp_path: Path, monkeypatch) -> None:
    (tmp_path / "run.sh").write_text("vllm serve m --swap-space 4\n", encoding="utf-8")
    (tmp_path / "serve.py").write_text("from vllm import LLM\nLLM(model='m', swap_space=4)\n", encoding="utf-8")
    (tmp_path / "deploy.yaml").write_text(
        "kind: Deployment\nspec:\n  template:\n    spec:\n      containers:\n      - image: vllm/vllm-openai:v0.8.0\n"
        "        args: [--swap-space, '4']\n",
        encoding="utf-8",
    )
    seen: list[bool] = []

    run_scanners = dispatch._run_scanners

    def spy(source, takers, result):  # type: ignore[no-untyped-def]
        seen.append(gc.isenabled())
        return run_scanners(source, takers, result)

    monkeypatch.setattr(dispatch, "_run_scanners", spy)
    report = run_scan(ScanOptions.of(paths=[tmp_path], jobs=1, cache_dir=None, to_version="0.33.0"))
    assert report.files_scanned == 3 and report.findings
    assert seen == [False, False, False]
    assert gc.isenabled()
    gc.collect()
    assert gc.garbage == []  # nothing uncollectable left behind
