"""Draft the rule pack of a new vLLM release.

Usage: ``python scripts/new_release.py VERSION [--previous OLD] [--rules-dir rules] [--work-dir DIR]``

Downloads the vllm wheels of ``VERSION`` and ``OLD`` (default: the newest release with a pack in
``rules/``) with ``pip download --no-deps --only-binary=:all: vllm==X`` -- pip is the only network
use -- runs ``rules derive`` on them and writes ``rules/<VERSION>.draft.yaml``. The registry never
loads ``*.draft.yaml`` from a directory: curate the draft (severities, messages, fixes, model
patterns, ids), rename it to ``rules/<VERSION>.yaml`` and run ``vllm-upgrade-check rules validate``.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from packaging.version import InvalidVersion, Version

from vllm_upgrade_check.errors import VucError
from vllm_upgrade_check.knowledge.derive.draft import derive_draft
from vllm_upgrade_check.knowledge.registry import is_pack_name, load_pack_text

RULES_DIR = Path(__file__).resolve().parents[1] / "rules"

Downloader = Callable[[str, Path], Path]
"""``(version, directory) -> path of the downloaded vllm wheel``."""


def pip_download(version: str, dest: Path) -> Path:
    """Download the vllm ``version`` wheel (no dependencies) into ``dest`` with pip.

    Raises:
        RuntimeError: pip failed or left no ``vllm-<version>-*.whl`` in ``dest``.
    """
    dest.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:"]
    cmd += [f"vllm=={version}", "-d", str(dest)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"pip download vllm=={version} failed: {tail[0]}")
    found = sorted(dest.glob(f"vllm-{version}-*.whl"))
    if not found:
        raise RuntimeError(f"pip download left no vllm-{version}-*.whl in {dest}")
    return found[0]


def newest_pack_release(rules_dir: Path) -> str:
    """The newest release that has a (non-draft) pack ``<release>.yaml`` in ``rules_dir``.

    Raises:
        ValueError: no pack file there.
    """
    versions = []
    for path in rules_dir.glob("*.y*ml"):
        if not is_pack_name(path.name):
            continue
        try:
            versions.append(Version(path.name.rsplit(".y", 1)[0]))
        except InvalidVersion:
            continue
    if not versions:
        raise ValueError(f"no <release>.yaml pack in {rules_dir}")
    return str(max(versions))


def _version(text: str) -> str:
    try:
        return str(Version(text))
    except InvalidVersion:
        raise argparse.ArgumentTypeError(f"not a valid version: {text!r}") from None


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse the command line (argparse exits 2 on a bad one)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("version", type=_version, help="the new vLLM release, e.g. 0.34.0")
    parser.add_argument("--previous", type=_version, help="release to diff against (default: newest pack)")
    parser.add_argument("--rules-dir", type=Path, default=RULES_DIR, help="pack directory (default: rules/)")
    parser.add_argument(
        "--work-dir", type=Path, help="where wheels are downloaded (default: a temporary dir)"
    )
    parser.add_argument("--force", action="store_true", help="overwrite an existing draft")
    return parser.parse_args(argv)


def run(args: argparse.Namespace, download: Downloader = pip_download) -> Path:
    """Download both wheels, derive, validate and write the draft; returns its path.

    Raises:
        ValueError: previous not older than version, or a draft already there (without --force).
        RuntimeError: a download failed.
        VucError: a wheel that is not a vLLM release, or a draft that does not validate.
    """
    previous = args.previous or newest_pack_release(args.rules_dir)
    if Version(previous) >= Version(args.version):
        raise ValueError(f"previous release {previous} is not older than {args.version}")
    target = args.rules_dir / f"{args.version}.draft.yaml"
    if target.exists() and not args.force:
        raise ValueError(f"{target} exists (use --force to overwrite)")
    with tempfile.TemporaryDirectory(prefix="vuc-wheels-") as tmp:
        work = args.work_dir or Path(tmp)
        old_wheel = download(previous, work / previous)
        new_wheel = download(args.version, work / args.version)
        text = derive_draft(old_wheel, new_wheel)
    pack = load_pack_text(text, str(target))
    target.write_text(text, encoding="utf-8")
    print(f"wrote {target}: {len(pack.rules)} candidate rule(s), vllm {previous} -> {args.version}")
    print("review before shipping:")
    print("  - each rule: severity (startup failure = blocker), message, fix, docs, deprecated_in")
    print("  - model rules: the guessed model-id patterns")
    print("  - dependency rules: keep the distributions users pin; wheel.requires_dist")
    print("  - the summary's notes (CUDA major, config fields / sampling params not drafted)")
    print(
        f"  - renumber ids if needed, drop the draft tags, rename to {args.rules_dir / (args.version + '.yaml')}"
    )
    print("  - vllm-upgrade-check rules validate rules/ && pytest tests/test_pack_coverage.py")
    return target


def main(argv: Sequence[str] | None = None, download: Downloader = pip_download) -> int:
    """Entry point; returns the exit code (2 with one line on stderr on failure)."""
    args = parse_args(sys.argv[1:] if argv is None else argv)
    try:
        run(args, download)
    except (ValueError, RuntimeError, OSError, VucError) as exc:
        print(f"new_release: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
