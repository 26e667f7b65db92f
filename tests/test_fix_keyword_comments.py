"""``fix`` removing a keyword argument: one on its own line goes with its line, its trailing
comment included; a comment on a line of its own stays; a keyword sharing a line with
others removes only itself (the line's comment stays with the others). The fixed file
still parses."""

from __future__ import annotations

import ast
from pathlib import Path

from vllm_upgrade_check.engine.fix import fix_paths
from vllm_upgrade_check.model.options import ScanOptions

SOURCE = """\
from vllm import LLM, EngineArgs

a = LLM(
    model="m",
    # keep this comment
    swap_space=4,  # spill to CPU
    tensor_parallel_size=2,
)
b = LLM(
    model="m",
    swap_space=4  # last, no comma
)
c = LLM(
    model="m",
    swap_space=int(
        "4"
    ),  # a value over lines
    seed=1,
)
d = LLM(
    model="m", swap_space=4,  # shared line
    seed=3,
)
e = EngineArgs(
\tmodel="m",
\tswap_space=4,\t# tab
)
f = LLM(model="m", swap_space=8, seed=1)  # inline
"""

FIXED = """\
from vllm import LLM, EngineArgs

a = LLM(
    model="m",
    # keep this comment
    tensor_parallel_size=2,
)
b = LLM(
    model="m",
)
c = LLM(
    model="m",
    seed=1,
)
d = LLM(
    model="m",  # shared line
    seed=3,
)
e = EngineArgs(
\tmodel="m",
)
f = LLM(model="m", seed=1)  # inline
"""


def test_keyword_removal_takes_its_own_line_and_comment(tmp_path: Path) -> None:
    path = tmp_path / "run.py"
    path.write_text(SOURCE)
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.17.0"), bump=False)
    fixed = path.read_text()
    ast.parse(fixed)
    assert fixed == FIXED


def test_crlf_lines_keep_their_endings(tmp_path: Path) -> None:
    path = tmp_path / "run.py"
    path.write_bytes(b'from vllm import LLM\r\nh = LLM(\r\n    model="m",\r\n    swap_space=4,  # crlf\r\n)\r\n')
    fix_paths(ScanOptions.of(paths=[tmp_path], to_version="0.18.0", from_version="0.17.0"), bump=False)
    fixed = path.read_bytes()
    assert fixed == b'from vllm import LLM\r\nh = LLM(\r\n    model="m",\r\n)\r\n'
    ast.parse(fixed)
