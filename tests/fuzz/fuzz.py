"""Run one fuzz target under atheris (libFuzzer), seeded from its saved corpus.

Usage::

    python tests/fuzz/fuzz.py TARGET [libFuzzer options, e.g. -max_total_time=600]

New interesting inputs go to a scratch folder (``$FUZZ_WORK``, default
``/tmp/vuc-fuzz/TARGET``), never into the saved corpus; add a crashing input to
``tests/fuzz/corpus/TARGET/`` by hand, with a regression test.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import atheris  # noqa: E402

with atheris.instrument_imports(include=["vllm_upgrade_check", "yaml", "dockerfile_parse", "packaging", "pathspec"]):
    import targets  # noqa: E402


def main() -> None:
    """Parse the command line and hand over to libFuzzer."""
    name = sys.argv[1]
    target = targets.TARGETS[name]
    work = Path(os.environ.get("FUZZ_WORK", f"/tmp/vuc-fuzz/{name}"))
    work.mkdir(parents=True, exist_ok=True)
    argv = [sys.argv[0], *sys.argv[2:], str(work), str(HERE / "corpus" / name)]
    atheris.Setup(argv, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
