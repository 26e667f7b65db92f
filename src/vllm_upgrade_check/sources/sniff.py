"""Choosing files by what they say: the byte-level pre-filter and the content sniffer.

Every regular file of a scanned tree that survives the ignore rules is a candidate, whatever
its name. A file no scanner takes by name is read as bytes and passed through
:func:`has_marker` (a cheap test for the literal markers of vLLM: ``vllm`` in any case, which
covers ``VLLM_*``, ``vllm:`` metrics and ``vllm/vllm-openai`` images) or, for the shapes of
dependency files, :func:`has_distribution_marker` (the names of the distributions vLLM's
releases require, from their wheels' ``Requires-Dist``). Only a file that passes is decoded
and sniffed (:func:`sniff_kind`): the stand-in name returned is the name of the file kind the
scanners read (``requirements.txt``, ``Dockerfile``, ``pyproject.toml``, ``x.sh``, ``x.yaml``)
or :data:`LAUNCH_LINES` (a text the launch-line scan reads).

The name decides first (:func:`kind_by_name`: ``Dockerfile-gpu``, ``deploy.yaml.tpl``,
``justfile``); the content second: a JSON document (read as the YAML it also is), a ``#!`` line, Dockerfile instructions, TOML tables,
requirement lines, ``pip freeze`` snapshots of an environment (:data:`FREEZE_SNAPSHOT`). Documentation (Markdown, reST,
``README``/``CHANGELOG``), logs and the sources of other languages are never sniffed: what
they say of vLLM is prose or data, not configuration.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache

from packaging.requirements import InvalidRequirement

from vllm_upgrade_check.parsing.reqtext import parse_requirement

LAUNCH_LINES = "<launch-lines>"
"""Stand-in name of a text that no structured parser reads but whose launch lines count."""

FREEZE_SNAPSHOT = "<pip-freeze>"
"""Stand-in name of a ``pip freeze`` snapshot of an environment kept in the repository
(:func:`looks_like_freeze_snapshot`): read as an installed environment, not as pins."""

TEMPLATE_SUFFIXES = (".tpl", ".tmpl", ".j2", ".jinja", ".jinja2", ".gotmpl")
"""Suffixes of template files: the name without the suffix says what the file renders to."""

NEVER_TEXT_SUFFIXES = frozenset(
    "png jpg jpeg gif ico bmp webp svgz pdf zip gz tgz bz2 xz zst 7z tar whl egg so o a dylib dll exe "
    "pyc pyo class jar war mo woff woff2 ttf otf eot mp3 mp4 wav ogg mov avi onnx pt pth bin safetensors "
    "gguf npy npz pkl parquet arrow h5 db sqlite".split()
)
"""Suffixes of files that are never text: not even opened."""

PROSE_SUFFIXES = frozenset("md markdown mdx rst adoc asciidoc tex html htm ipynb org".split())
"""Documentation: prose, never configuration (launch lines in it are examples)."""

PROSE_STEMS = (
    "readme",
    "changelog",
    "changes",
    "news",
    "history",
    "release",
    "contributing",
    "license",
    "authors",
)
"""Base names (any case, any suffix) of documentation files."""

OTHER_SUFFIXES = frozenset(
    "py pyi js mjs cjs ts tsx jsx go rs java kt scala c h cc cpp hpp cs rb php swift lua pl r sql proto "
    "css scss less svg xml csv tsv jsonl log lock sum mod tf tfvars hcl gradle properties".split()
)
"""Sources of other languages, data and logs: read by their own scanners when one takes
them by name (``.py``), otherwise never sniffed."""

_CONFIG_SUFFIXES = frozenset("yaml yml json toml sh bash txt cfg ini conf env".split())
_FREEZE_LINE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*\s*(===?\s*[^\s;#]+|\s@\s\S+)\s*(#.*)?$")
_PIP_OPTION = re.compile(r"^(-r|-c|-e|-i|-f|--[a-z][a-z-]*)(\s|=|$)")
_TOML_TABLE = re.compile(r"(?m)^\[(project|tool\.[A-Za-z0-9_.-]+|dependency-groups|build-system)\]\s*$")
_DOCKER_INSTRUCTIONS = frozenset(
    "from run cmd label maintainer expose env add copy entrypoint volume user workdir arg onbuild "
    "stopsignal healthcheck shell".split()
)


def suffix(name: str) -> str:
    """The last suffix of base name ``name``, lower-case, without the dot (``""``: none)."""
    stem = name.lstrip(".")
    return stem.rpartition(".")[2].lower() if "." in stem else ""


def never_text(name: str) -> bool:
    """Whether base name ``name`` is of a binary kind (never opened)."""
    return suffix(name) in NEVER_TEXT_SUFFIXES


def never_sniffed(name: str) -> bool:
    """Whether a file of base name ``name`` that no scanner takes by name is left unopened:
    a binary kind (:func:`never_text`), documentation (:func:`is_prose`) or the source of
    another language, data or a log (:data:`OTHER_SUFFIXES`)."""
    return never_text(name) or is_prose(name) or suffix(name) in OTHER_SUFFIXES


def is_prose(name: str) -> bool:
    """Whether base name ``name`` is documentation (Markdown, ``README``, ``CHANGELOG``...)."""
    lower = name.lower()
    return suffix(name) in PROSE_SUFFIXES or lower.startswith(PROSE_STEMS)


def is_dockerfile_name(name: str) -> bool:
    """``Dockerfile``/``Containerfile`` with any suffix after ``.``, ``-`` or ``_``
    (``Dockerfile-gpu``, ``Containerfile.rocm``), or ``*.dockerfile``/``*.containerfile``."""
    lower = name.lower()
    for base in ("dockerfile", "containerfile"):
        if lower == base or lower.startswith(base + "."):
            return True
        if lower.startswith((base + "-", base + "_")):  # not dockerfile_utils.py, dockerfile-lint.yaml
            return suffix(name) not in OTHER_SUFFIXES | PROSE_SUFFIXES | _CONFIG_SUFFIXES
        if lower.endswith("." + base):
            return True
    return False


def kind_by_name(name: str) -> str | None:
    """The stand-in name a file of base name ``name`` is read as, when the name says so and no
    scanner takes the name itself: a template's rendered name (``deploy.yaml.tpl`` ->
    ``deploy.yaml``; ``values-prod.tpl`` -> ``values-prod.yaml`` when it holds YAML, decided
    by content), ``Dockerfile`` for ``Dockerfile-gpu``, :data:`LAUNCH_LINES` for a justfile."""
    lower = name.lower()
    if lower.endswith(TEMPLATE_SUFFIXES):
        inner = name[: name.rfind(".")]
        if is_dockerfile_name(inner):
            return "Dockerfile"
        if inner in ("Makefile", "makefile", "GNUmakefile"):
            return inner
        return inner if suffix(inner) and suffix(inner) not in ("tpl", "tmpl") else None
    if is_dockerfile_name(name):
        return "Dockerfile"
    if lower in ("justfile", ".justfile") or lower.endswith(".just"):
        return LAUNCH_LINES
    return None


def has_marker(data: bytes) -> bool:
    """Whether ``data`` holds ``vllm`` in any case (the cheap test every candidate passes)."""
    if b"llm" not in data and b"LLM" not in data and b"Llm" not in data:
        return False
    return b"vllm" in data or b"VLLM" in data or b"vllm" in data.lower()


@lru_cache(maxsize=1)
def _distribution_pattern() -> re.Pattern[bytes]:
    from vllm_upgrade_check.knowledge.requires import requirement_names

    names = sorted(requirement_names(), key=len, reverse=True)
    alternatives = b"|".join(re.escape(n.encode()).replace(b"\\-", b"[-_.]") for n in names)
    return re.compile(rb"(?im)^[ \t]*[\"']?(?:" + alternatives + rb")\s*(?:[=<>!~@;\[\"',]|$)")


def has_distribution_marker(data: bytes) -> bool:
    """Whether a line of ``data`` starts with (or quotes) the name of a distribution some vLLM
    release requires, as a requirement does (``torch==2.9.1``, ``"transformers>=4.56"``)."""
    return _distribution_pattern().search(data) is not None


def _meaningful(text: str, limit: int = 400) -> list[str]:
    out = []
    for raw in text.split("\n"):
        line = raw.strip()
        if line and not line.startswith("#"):
            out.append(line)
            if len(out) >= limit:
                break
    return out


def looks_like_requirements(text: str) -> bool:
    """Whether every meaningful line (up to 400) is a PEP 508 requirement or a pip option
    (``-r other.txt``, ``--index-url``), at least one being a requirement or an include:
    a requirements file or ``pip freeze`` output, whatever its name."""
    lines = _meaningful(text)
    found = False
    for line in lines:
        body = line.split(" #", 1)[0].strip().rstrip("\\").strip()
        if _PIP_OPTION.match(body):
            found = found or body.startswith(("-r", "-c", "--requirement", "--constraint"))
            continue
        try:
            parse_requirement(body.split(" --hash", 1)[0])
        except InvalidRequirement:
            return False
        found = True
    return found


def looks_like_freeze(text: str) -> bool:
    """Whether ``text`` is ``pip freeze`` output: three or more lines, every one of them an
    exact pin (``name==version``) or ``name @ URL`` (pip options and comments aside)."""
    lines = [line for line in _meaningful(text) if not _PIP_OPTION.match(line)]
    return len(lines) >= 3 and all(_FREEZE_LINE.match(line) for line in lines)


_COMPILED = re.compile(r"(?im)^#.*(autogenerated|pip-compile|uv pip compile)|^\s*#\s*via\b|--hash[=\s]")


def looks_like_freeze_snapshot(text: str) -> bool:
    """Whether ``text`` is a snapshot of an installed environment (``pip freeze``, ``uv pip
    freeze``, ``pip list --format=freeze`` output), not a requirements file to install from:
    :func:`looks_like_freeze` holds, the distributions are in the order those commands write
    them (sorted by name in any case, as written or canonical), and nothing says it was
    compiled to be installed from (``pip-compile``/``uv pip compile`` headers, ``# via``
    comments, ``--hash`` options)."""
    if not looks_like_freeze(text) or _COMPILED.search(text):
        return False
    raw = [re.split(r"[\s=@\[;]", line, maxsplit=1)[0].lower() for line in _meaningful(text) if not _PIP_OPTION.match(line)]
    canonical = [re.sub(r"[-_.]+", "-", name) for name in raw]
    return raw == sorted(raw) or canonical == sorted(canonical)  # pip sorts names as written, uv canonical ones


def looks_like_dockerfile(text: str) -> bool:
    """Whether the first instruction is ``FROM`` (or ``ARG`` before it) and every line that
    starts an instruction starts with a Dockerfile instruction keyword."""
    lines = text.split("\n")
    first = None
    continued = False
    for raw in lines[:400]:
        line = raw.strip()
        if continued:
            continued = line.endswith("\\")
            continue
        if not line or line.startswith("#"):
            continue
        word = line.split(None, 1)[0].lower()
        if word not in _DOCKER_INSTRUCTIONS:
            return False
        if first is None:
            if word not in ("from", "arg"):
                return False
            first = word
        continued = line.endswith("\\")
    return first is not None and re.search(r"(?im)^\s*FROM\s+\S", text) is not None


_DASHBOARD_KEYS = frozenset({"panels", "dashboard", "__inputs", "templating", "groups"})
"""Top-level keys of Grafana dashboards and Prometheus rule files, which the monitoring
scanner reads by name."""


def json_shape(text: str) -> str | None:
    """What a JSON text configures, by its shape: ``kubernetes`` (``apiVersion`` and ``kind``,
    or a ``List`` of such ``items``), ``compose`` (a ``services`` mapping), ``ray-serve`` (an
    ``applications`` list), ``config`` (an object of three or more keys, most of them engine
    args of some vLLM release: a vLLM ``--config`` file); ``None``
    for no JSON object, a dashboard or rule file, or a smaller object. Parsed with
    :mod:`json` (the text is bounded by the scan's size limit)."""
    if text.lstrip()[:1] != "{":
        return None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if not isinstance(value, dict):
        return None
    items = value.get("items")
    if ("apiVersion" in value and "kind" in value) or (
        isinstance(items, list) and any(isinstance(i, dict) and "apiVersion" in i for i in items)
    ):
        return "kubernetes"
    if isinstance(value.get("services"), dict):
        return "compose"
    if isinstance(value.get("applications"), list):
        return "ray-serve"
    if len(value) >= 3 and not _DASHBOARD_KEYS & value.keys() and _engine_arg_share(value) >= 0.6:
        return "config"
    return None


def _engine_arg_share(value: dict[str, object]) -> float:
    """The share of ``value``'s keys that are engine args of some vLLM release."""
    from vllm_upgrade_check.knowledge.known_args import known_args

    known = known_args()
    return sum(1 for key in value if known.is_known(str(key).replace("-", "_"))) / len(value)


def looks_like_json(text: str) -> bool:
    """Whether ``text`` is a JSON object of a shape the YAML scanners read (:func:`json_shape`)."""
    return json_shape(text) is not None


def as_yaml_name(name: str) -> str:
    """The stand-in name of a JSON file read as YAML (JSON is YAML): ``app.json`` ->
    ``app.json.yaml``, so that what the name says (``vllm-config``) still counts."""
    return name + ".yaml"


def looks_like_yaml(text: str) -> bool:
    """Whether ``text`` has a YAML block shape: its first meaningful line a ``key:`` at
    column 0, a ``---`` or a ``- `` item (templates are neutralised before this is asked)."""
    for raw in text.split("\n"):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        return bool(re.match(r"^(---|- |[A-Za-z_][\w.-]*:(\s|$))", raw))
    return False


def sniff_kind(name: str, text: str, vllm: bool) -> str | None:
    """The stand-in name to read a file of base name ``name`` and text ``text`` as, or ``None``.

    Args:
        name: the file's base name (no scanner takes it by name).
        text: its decoded text (templates not yet neutralised).
        vllm: whether :func:`has_marker` held (otherwise only dependency shapes are sniffed).
    """
    by_name = kind_by_name(name)
    template = name.lower().endswith(TEMPLATE_SUFFIXES)
    if by_name is not None:
        return by_name if vllm or by_name != LAUNCH_LINES else None
    if is_prose(name) or suffix(name) in OTHER_SUFFIXES:
        return None
    if template:
        from vllm_upgrade_check.sources.scanners.templates import neutralise_templates

        if looks_like_yaml(neutralise_templates(text)):
            return name[: name.rfind(".")] + ".yaml"
    if vllm and looks_like_json(text):
        return as_yaml_name(name)  # JSON is YAML: the YAML scanners tell its shape (manifest, compose, config)
    first = text[:200].split("\n", 1)[0]
    if vllm and first.startswith("#!"):
        words = first[2:].split()
        if words and (
            words[-1] in ("sh", "bash", "zsh", "ksh", "dash") or words[0].rsplit("/", 1)[-1] in ("sh", "bash")
        ):
            return "script.sh"
    if _TOML_TABLE.search(text) and ("[project]" in text or "[tool." in text):
        return "pyproject.toml"
    if looks_like_freeze_snapshot(text):
        return FREEZE_SNAPSHOT
    if looks_like_requirements(text):
        return "requirements.txt"
    if vllm and looks_like_dockerfile(text):
        return "Dockerfile"
    return LAUNCH_LINES if vllm else None
