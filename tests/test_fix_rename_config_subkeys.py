"""Renaming a ``*_config`` arg keeps its sub-keys: the check expects them under the new name
(``--override-pooler-config '{"pooling_type": "MEAN"}'`` -> ``--pooler-config ...``)."""

from __future__ import annotations

from pathlib import Path

from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.model.options import ScanOptions


def _fix(root: Path):
    options = ScanOptions.of(paths=[root], from_version="0.11.0", to_version="0.12.0")
    return fix_paths(options, unsafe=True, bump=False)


def test_a_cli_json_value_keeps_its_keys(tmp_path: Path) -> None:
    (tmp_path / "run.sh").write_text(
        '#!/bin/sh\nvllm serve m --override-pooler-config \'{"pooling_type": "MEAN"}\'\n'
    )
    result = _fix(tmp_path)
    assert result.not_written == []
    assert (
        tmp_path / "run.sh"
    ).read_text() == '#!/bin/sh\nvllm serve m --pooler-config \'{"pooling_type": "MEAN"}\'\n'


def test_a_config_mapping_keeps_its_keys(tmp_path: Path) -> None:
    (tmp_path / "vllm.yaml").write_text('seed: 1\noverride-pooler-config: {"pooling_type": "MEAN"}\n')
    result = _fix(tmp_path)
    assert result.not_written == []
    assert (tmp_path / "vllm.yaml").read_text() == 'seed: 1\npooler-config: {"pooling_type": "MEAN"}\n'
