"""The Python environment: installed distributions (read from their metadata, never
imported), the interpreter, glibc, torch's build and the CUDA major of vLLM's own compiled
extensions.

Three sources:

- the interpreter running the tool (:func:`read_current_environment`);
- another interpreter (:func:`read_interpreter_environment`): it is run isolated
  (``-I -S``: no user site, no ``.pth`` files, no ``PYTHONPATH``) with a small stdlib-only
  reader that lists distribution metadata; nothing of the user's is imported;
- a ``pip freeze`` / ``uv pip freeze`` / ``pip list --format=freeze`` file
  (:func:`read_freeze_file`), for CI where the host is not at hand.
"""

from __future__ import annotations

import ast
import json
import os
import platform
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

from packaging.markers import default_environment
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from vllm_upgrade_check.errors import UsageError
from vllm_upgrade_check.model.environment import Environment, TorchBuild
from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.parsing.distfiles import parse_dist_url
from vllm_upgrade_check.parsing.elf import cuda_major_of, file_needed
from vllm_upgrade_check.parsing.textfiles import read_named_file

ENVIRONMENT = Location(None)

READER_TIMEOUT_S = 60.0
"""Seconds the metadata reader may run in another interpreter before it is given up."""


def _glibc() -> str | None:
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")
    except (AttributeError, ValueError, OSError):
        text = None
    if text and text.startswith("glibc "):
        return text.split()[1]
    lib, version = platform.libc_ver()
    return version if lib == "glibc" and version else None


def _sys_path_dirs() -> tuple[str, ...]:
    return tuple(p for p in sys.path if p and os.path.isdir(p))


def read_current_environment(paths: Iterable[str] | None = None) -> Environment:
    """Read the distributions installed for this interpreter (or on ``paths``).

    Args:
        paths: ``sys.path``-like directories to look in instead of the current ones.
    """
    dirs = tuple(paths) if paths is not None else _sys_path_dirs()
    found: dict[str, str] = {}
    requires: dict[str, tuple[str, ...]] = {}
    for dist in metadata.distributions(path=list(dirs)):
        name = dist.metadata["Name"] if dist.metadata else None
        if name and dist.version:
            key = canonicalize_name(name)
            if key not in found:
                found[key] = dist.version
                requires[key] = tuple(dist.requires or ())
    return _with_builds(
        Environment(
            found,
            platform.python_version(),
            platform.machine(),
            "current interpreter " + sys.executable,
            glibc=_glibc(),
            requires=requires,
            paths=dirs,
            markers={k: str(v) for k, v in default_environment().items()},
        )
    )


_READER = r"""
import glob, json, os, platform, sys, site, sysconfig
from importlib import metadata
exe = sys.argv[1] if len(sys.argv) > 1 else sys.executable
prefixes = [sys.prefix, sys.exec_prefix]
home = os.path.dirname(os.path.dirname(os.path.abspath(exe)))
cfg = os.path.join(home, "pyvenv.cfg")
if os.path.isfile(cfg) and sys.flags.no_site:
    prefixes = [home]
    with open(cfg, encoding="utf-8", errors="replace") as f:
        for line in f:
            key, _, value = line.partition("=")
            if key.strip() == "include-system-site-packages" and value.strip().lower() == "true":
                prefixes += [sys.base_prefix, sys.base_exec_prefix]
candidates = list(site.getsitepackages(prefixes))
schemes = sysconfig.get_scheme_names()
for prefix in prefixes:
    # Distributions patch site.getsitepackages (Debian: dist-packages); a venv's own
    # site-packages follows the "venv" scheme (3.11+) or the upstream posix layout.
    for scheme in ("venv", "posix_prefix", "nt"):
        if scheme in schemes:
            found = sysconfig.get_paths(scheme, vars={"base": prefix, "platbase": prefix})
            candidates += [found["purelib"], found["platlib"]]
    candidates += sorted(glob.glob(os.path.join(prefix, "lib", "python3*", "site-packages")))
paths = []
for p in candidates + [p for p in sys.path if p]:
    if os.path.isdir(p) and p not in paths:
        paths.append(p)
try:
    libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
except (AttributeError, ValueError, OSError):
    libc = ""
if not libc:
    name, version = platform.libc_ver()
    libc = (name + " " + version) if version else ""
dists = []
for d in metadata.distributions(path=paths):
    try:
        name = d.metadata["Name"]
        version = d.version
        requires = d.requires or []
    except Exception:
        continue
    if name:
        dists.append({"name": name, "version": version, "requires": list(requires)})
impl = sys.implementation
iver = "%d.%d.%d" % impl.version[:3]
markers = {
    "implementation_name": impl.name, "implementation_version": iver,
    "os_name": os.name, "platform_machine": platform.machine(),
    "platform_release": platform.release(), "platform_system": platform.system(),
    "platform_version": platform.version(),
    "python_full_version": platform.python_version(),
    "platform_python_implementation": platform.python_implementation(),
    "python_version": ".".join(platform.python_version_tuple()[:2]),
    "sys_platform": sys.platform,
}
print(json.dumps({"python": platform.python_version(), "machine": platform.machine(),
    "libc": libc, "executable": exe, "paths": paths, "distributions": dists, "markers": markers,
    "site": not sys.flags.no_site}))
"""
"""Run by another interpreter with ``-I -S``: stdlib only; prints one JSON object."""


def read_interpreter_environment(python: Path, timeout: float = READER_TIMEOUT_S) -> Environment:
    """Read the environment of another interpreter (a deployment venv's ``bin/python``).

    The interpreter runs isolated (``-I -S``) with a stdlib-only metadata reader; its
    site-packages are found from its prefix (and ``pyvenv.cfg``) with ``site`` and
    ``sysconfig`` (the ``venv`` scheme, so a Debian-patched ``site`` that only knows
    ``dist-packages`` still finds a venv's ``site-packages``); no ``.pth`` file runs and
    nothing of the user's is imported.

    Raises:
        UsageError: the interpreter does not exist, fails, times out or prints no JSON.
    """
    if not python.exists():
        raise UsageError("no such interpreter", str(python))
    data = _run_reader(python, ("-I", "-S"), timeout)
    found: dict[str, str] = {}
    requires: dict[str, tuple[str, ...]] = {}
    for item in data.get("distributions", []):
        key = canonicalize_name(item["name"])
        if item.get("version") and key not in found:
            found[key] = item["version"]
            requires[key] = tuple(item.get("requires") or ())
    libc = str(data.get("libc") or "")
    return _with_builds(
        Environment(
            found,
            data.get("python"),
            data.get("machine"),
            f"interpreter {python}",
            glibc=libc.split()[1] if libc.startswith("glibc ") else None,
            requires=requires,
            paths=tuple(data.get("paths") or ()),
            markers=dict(data.get("markers") or {}),
        )
    )


def _run_reader(python: Path, flags: tuple[str, ...], timeout: float) -> dict[str, Any]:
    try:
        done = subprocess.run(
            [str(python), *flags, "-c", _READER, str(python)],
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"},
        )
    except subprocess.TimeoutExpired:
        raise UsageError(f"the interpreter did not answer within {timeout:g} s", str(python)) from None
    except OSError as exc:
        raise UsageError(f"cannot run the interpreter: {exc.strerror or exc}", str(python)) from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UsageError(f"the interpreter failed (exit {done.returncode}): {last}", str(python))
    try:
        data = json.loads(done.stdout)
    except ValueError:
        raise UsageError("the interpreter printed no environment description", str(python)) from None
    if not isinstance(data, dict):
        raise UsageError("the interpreter printed no environment description", str(python))
    return data


_EDITABLE_COMMENT = re.compile(r"^#\s*Editable.*\(([^()\s]+)==([^()\s]+)\)\s*$")
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")


def _version_from_url(req: Requirement) -> str | None:
    """The version a ``name @ URL`` line's wheel or sdist file name says (percent-decoded:
    ``vllm-0.20.0%2Bcu126-...whl`` is ``0.20.0+cu126``), or ``None``."""
    dist = parse_dist_url((req.url or "").rstrip("/"))
    return None if dist is None else str(dist.version)


def read_freeze_file(path: Path) -> Environment:
    """Read the output of ``pip freeze``, ``uv pip freeze`` or ``pip list --format=freeze``
    (as :func:`parse_freeze_text` reads it).

    Raises:
        UsageError: unreadable file, or a line that is no requirement (names file and line).
    """
    try:
        text = read_named_file(path).decode("utf-8-sig")
    except OSError as exc:
        raise UsageError(f"cannot read freeze file: {exc.strerror or exc}", str(path)) from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"cannot read freeze file: not UTF-8 text: {exc.reason} at byte {exc.start}", str(path)) from None
    return parse_freeze_text(text, str(path))[0]


def parse_freeze_text(text: str, source: str) -> tuple[Environment, dict[str, int]]:
    """The environment a ``pip freeze`` text describes, and the 1-based line of each
    distribution in it (canonical name -> line).

    Understands ``name==version`` (and ``===``), ``name @ URL`` (the version is taken from a
    wheel or sdist file name in the URL), ``-e`` lines (with pip's ``# Editable ... (name==v)``
    comment or ``#egg=name``), comments and option lines. Python, machine and glibc are
    unknown; torch's build comes from its local version label (``+cu130``, ``+rocm6.4``).

    Args:
        text: the decoded text.
        source: what the text is, for messages and :attr:`Environment.source` (a path).

    Raises:
        UsageError: a line that is no requirement (names ``source`` and the line).
    """
    found: dict[str, str] = {}
    lines: dict[str, int] = {}
    unversioned: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line:
            continue
        editable = _EDITABLE_COMMENT.match(line)
        if editable:
            key = canonicalize_name(editable.group(1))
            found.setdefault(key, editable.group(2))
            lines.setdefault(key, number + 1)  # the comment stands above its -e line
            continue
        if line.startswith("#"):
            continue
        if line.startswith(("-e ", "--editable")):
            egg = _EGG.search(line)
            if egg and canonicalize_name(egg.group(1)) not in found:
                unversioned.append(canonicalize_name(egg.group(1)))
                lines.setdefault(canonicalize_name(egg.group(1)), number)
            continue
        if line.startswith("-"):
            continue
        try:
            req = Requirement(line.split(" #", 1)[0])
        except InvalidRequirement as exc:
            why = str(exc).split("\n", 1)[0]  # packaging adds the line and a caret below
            raise UsageError(f"not a freeze line: {line.strip()!r} ({why})", source, number) from None
        key = canonicalize_name(req.name)
        lines.setdefault(key, number)
        pins = [s.version for s in req.specifier if s.operator in ("==", "===")]
        version = pins[0] if len(pins) == 1 and "*" not in pins[0] else None
        if version is None and req.url:
            version = _version_from_url(req)
        if version is None:
            unversioned.append(key)
        else:
            found.setdefault(key, version)
            lines.setdefault(key, number)
    torch = None
    if "torch" in found:
        where = f"{source}:{lines['torch']}" if "torch" in lines else source
        torch = _torch_from_label(found["torch"], f"{where} torch=={found['torch']}")
    environment = Environment(
        found,
        None,
        None,
        f"freeze file {source}",
        unversioned=tuple(sorted(set(unversioned) - set(found))),
        torch=torch,
    )
    return environment, lines


def _torch_from_label(version: str, source: str) -> TorchBuild:
    local = version.partition("+")[2]
    cuda = hip = None
    cu = re.fullmatch(r"cu(\d+)(\d)", local)
    if cu:
        cuda = f"{cu.group(1)}.{cu.group(2)}"
    rocm = re.fullmatch(r"rocm([\d.]+)", local)
    if rocm:
        hip = rocm.group(1)
    return TorchBuild(version, cuda, hip, source)


def read_torch_build(version_py: Path) -> TorchBuild | None:
    """torch's build from ``torch/version.py``, parsed as text (``ast``), never imported.

    Returns ``None`` when the file cannot be read or parsed.
    """
    try:
        tree = ast.parse(version_py.read_text(encoding="utf-8", errors="replace"))
    except (OSError, SyntaxError, ValueError):
        return None
    values: dict[str, str | None] = {}
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign) and node.value is not None
            else []
        )
        value = getattr(node, "value", None)
        if isinstance(value, ast.Constant) and (value.value is None or isinstance(value.value, str)):
            for target in targets:
                if isinstance(target, ast.Name):
                    values[target.id] = value.value
    return TorchBuild(values.get("__version__"), values.get("cuda"), values.get("hip"), str(version_py))


def _vllm_extensions(directory: Path) -> list[Path]:
    package = directory / "vllm"
    if not package.is_dir():
        return []
    own = sorted(package.glob("_C*.so"), key=lambda p: (not p.name.startswith("_C."), p.name))
    return own + sorted(p for p in package.glob("*.so") if p not in own)


def read_vllm_cuda_major(paths: Iterable[str]) -> tuple[int | None, str | None]:
    """CUDA major of the installed vLLM's compiled extensions, from ELF ``DT_NEEDED``.

    Looks at ``vllm/_C*.so`` (then other ``vllm/*.so``) in the first of ``paths`` that holds
    a ``vllm`` package. Returns ``(major, file)`` or ``(None, None)``.
    """
    for entry in paths:
        for so in _vllm_extensions(Path(entry)):
            try:
                major = cuda_major_of(file_needed(so))
            except (OSError, ValueError):
                continue
            if major is not None:
                return major, str(so)
        if (Path(entry) / "vllm").is_dir():
            return None, None
    return None, None


def _with_builds(env: Environment) -> Environment:
    from dataclasses import replace

    torch = None
    if "torch" in env.distributions:
        for entry in env.paths:
            candidate = Path(entry) / "torch" / "version.py"
            if candidate.is_file():
                torch = read_torch_build(candidate)
                break
        if torch is None:
            torch = _torch_from_label(env.distributions["torch"], "torch distribution version")
    major, source = read_vllm_cuda_major(env.paths) if "vllm" in env.distributions else (None, None)
    return replace(env, torch=torch, vllm_cuda_major=major, vllm_cuda_source=source)


def _requirement_facts(env: Environment) -> Iterator[Fact]:
    """``requirement`` facts (origin ``installed``) for what installed distributions require."""
    markers = dict(env.markers)
    for owner, lines in sorted(env.requires.items()):
        for line in lines:
            try:
                req = Requirement(line)
            except InvalidRequirement:
                continue
            if req.marker is not None:
                if "extra" in str(req.marker) or not markers:
                    continue
                try:
                    if not req.marker.evaluate({**markers, "extra": ""}):
                        continue
                except Exception:  # noqa: BLE001 - an odd marker is not ours to judge
                    continue
            if not str(req.specifier):
                continue
            name = canonicalize_name(req.name)
            yield Fact(
                FactKind.REQUIREMENT,
                name,
                ENVIRONMENT,
                raw=f"{owner} {env.distributions.get(owner, '')} requires {name}{req.specifier}".replace(
                    "  ", " "
                ),
                value=str(req.specifier),
                origin="installed",
                aliases=(owner,),
                scanner="environment",
            )


def _platform(name: str, value: str, raw: str) -> Fact:
    return Fact(
        FactKind.PLATFORM, name, ENVIRONMENT, raw=raw, value=value, origin="env", scanner="environment"
    )


def environment_facts(env: Environment) -> Iterator[Fact]:
    """``distribution`` facts (one per installed distribution), ``requirement`` facts (origin
    ``installed``: what each installed distribution requires; ``aliases`` holds the requirer)
    and ``platform`` facts: ``python``, ``machine``, ``glibc``, ``torch_cuda``, ``torch_hip``,
    ``vllm_cuda``, whichever are known."""
    for name, version in sorted(env.distributions.items()):
        yield Fact(
            FactKind.DISTRIBUTION,
            name,
            ENVIRONMENT,
            raw=f"{name}=={version}",
            value=version,
            origin="env",
            scanner="environment",
        )
    for name in env.unversioned:
        yield Fact(FactKind.DISTRIBUTION, name, ENVIRONMENT, raw=name, origin="env", scanner="environment")
    yield from _requirement_facts(env)
    if env.python:
        yield _platform("python", env.python, f"python {env.python}")
    if env.machine:
        yield _platform("machine", env.machine, env.machine)
    if env.glibc:
        yield _platform("glibc", env.glibc, f"glibc {env.glibc}")
    if env.torch is not None and env.torch.cuda:
        yield _platform(
            "torch_cuda", env.torch.cuda, f"torch {env.torch.version} built with CUDA {env.torch.cuda}"
        )
    if env.torch is not None and env.torch.hip:
        yield _platform(
            "torch_hip", env.torch.hip, f"torch {env.torch.version} built with ROCm {env.torch.hip}"
        )
    if env.vllm_cuda_major is not None:
        yield _platform(
            "vllm_cuda", str(env.vllm_cuda_major), f"vllm extensions link CUDA {env.vllm_cuda_major}"
        )
