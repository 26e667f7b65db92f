"""vLLM container images: which image references are vLLM's server, and what they say.

:data:`VLLM_IMAGES` names the repositories whose entry point is vLLM's OpenAI-compatible
server; :func:`split_image` and :func:`is_vllm_image` read a reference whatever its registry,
:func:`image_hint` turns a vLLM image's version tag into the version hint its launch's facts
carry, and :func:`image_fact` makes the ``image`` fact, with where a tag bump edits it.
"""

from __future__ import annotations

import re

from vllm_upgrade_check.knowledge.versions import tag_version_span, version_from_tag
from vllm_upgrade_check.model.facts import Fact, FactKind, Location, Span, Spans
from vllm_upgrade_check.parsing.words import Token, sub_span, token_location

VLLM_IMAGES = frozenset(
    {
        "vllm/vllm-openai",
        "vllm/vllm-openai-rocm",
        "vllm/vllm-tpu",
        "rocm/vllm",
        "rocm/vllm-dev",
        "intel/vllm",
        "q9t5s3a7/vllm-cpu-release-repo",
        "q9t5s3a7/vllm-arm64-cpu-release-repo",
    }
)
"""Image repositories whose entry point is vLLM's OpenAI-compatible server: those vLLM's
docs list (Docker Hub's ``vllm/vllm-openai`` and its ROCm and TPU images; the CPU images on
``public.ecr.aws/q9t5s3a7``, x86-64 and arm64) and the hardware vendors' own."""

def split_image(reference: str) -> tuple[str, str | None]:
    """Split ``registry/repo:tag@digest`` into (repository without registry, tag or ``None``).

    ``docker.io/vllm/vllm-openai:v0.26.0`` -> ``("vllm/vllm-openai", "v0.26.0")``.
    """
    ref = reference.split("@", 1)[0]
    name, tag = ref, None
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        name, tag = ref[:colon], ref[colon + 1 :]
    parts = name.split("/")
    if len(parts) > 2 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    if parts and parts[0] in ("docker.io", "index.docker.io"):
        parts = parts[1:]
    if parts and parts[0] == "library":
        parts = parts[1:]
    return "/".join(parts), tag


def is_vllm_image(reference: str) -> bool:
    """``True`` for a vLLM server image (see :data:`VLLM_IMAGES`), whatever the registry."""
    repo, _tag = split_image(reference)
    return repo in VLLM_IMAGES or any(repo.endswith("/" + image) for image in VLLM_IMAGES)

_MODEL_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+")
"""A Hugging Face model id (``org/name``), as ``vllm serve MODEL`` takes its positional."""

_SCRIPT_SUFFIXES = (".py", ".sh", ".bash", ".js", ".rb", ".pl")
"""What a first word ending so runs: a program, not a model."""


def positional_model(args: list[str]) -> bool:
    """Whether ``args`` start with a model id given as ``vllm serve``'s positional
    (``["acme/model-7b", "--swap-space", "4"]``): an ``org/name`` word (no leading slash,
    no script suffix) followed by nothing or by a flag. The entry point of vLLM's image in
    recent releases is ``vllm serve`` (docker/Dockerfile ``ENTRYPOINT ["vllm", "serve"]``),
    whose ``model_tag`` positional is the model (vllm/entrypoints/cli/serve.py)."""
    if not args or not _MODEL_ID.fullmatch(args[0]) or args[0].lower().endswith(_SCRIPT_SUFFIXES):
        return False
    return len(args) == 1 or args[1].startswith("--")


def vendor_vllm_image(reference: str, args: list[str]) -> str | None:
    """The repository of an image that is no known vLLM image but whose repository's name says
    vLLM (``registry.example.net/ml-platform/vllm-rocm``) and whose container args start as
    vLLM's server's do (``--model``, ``--model=...``, ``serve``, or a model id as ``vllm
    serve``'s positional, see :func:`positional_model`): read as a vLLM launch whose release
    is unknown. ``None`` otherwise."""
    repo, _tag = split_image(reference)
    if is_vllm_image(reference) or "vllm" not in repo.rsplit("/", 1)[-1].lower() or not args:
        return None
    first = args[0]
    if first in ("--model", "serve") or first.startswith("--model=") or positional_model(args):
        return repo
    return None


DIGEST_NOTE = "the image is pinned by digest; update the digest by hand"
"""Why the tag of an image pinned by ``@sha256:...`` is not bumped."""


def image_fact(
    token: Token,
    path: str | None,
    scanner: str,
    version: Span | None = None,
    note: str = "",
    syntax: str = "",
) -> Fact:
    """An ``image`` fact for an image reference token.

    Its spans name where the tag's version is written: ``version`` when the caller found it
    elsewhere (a Helm ``tag:``, a Dockerfile ``ARG`` default), else inside the token when the
    reference is written as its text; ``note`` says why it cannot be set, if so.
    """
    repo, tag = split_image(token.text)
    location = token_location(path, token)
    if "@" in token.text:
        version, note = None, DIGEST_NOTE
    elif version is None and tag is not None and not note:
        found = tag_version_span(tag)
        at = len(token.text) - len(tag)
        version = None if found is None else sub_span(token, at + found[0], at + found[1])
        if version is None and found is not None and token.defined is not None:
            # `"$IMAGE"`: the tag is set where the variable is (`IMAGE=vllm/vllm-openai:v0.16.0`)
            d = token.defined
            version = Span(d.line, d.column + at + found[0], d.line, d.column + at + found[1])
            location = Location(location.path, d.line, d.column, d.end_line, d.end_column)
    spans = Spans(version=version, note=note, syntax=syntax)
    return Fact(FactKind.IMAGE, repo, location, raw=token.text, value=tag, scanner=scanner, spans=spans)


def image_hint(reference: str, path: str | None, line: int | None) -> tuple[str, str] | None:
    """``(version, "path:line image")`` when ``reference`` is a vLLM image with a version tag."""
    if not is_vllm_image(reference):
        return None
    _repo, tag = split_image(reference)
    version = version_from_tag(tag) if tag else None
    if version is None:
        return None
    where = f"{path}:{line}" if path and line else (path or "")
    return str(version), f"{where} image {reference}"


def replaced_server_note(program: str, how: str) -> str:
    """Why a vLLM image is not bumped when its container runs ``program`` instead of vLLM's
    server (``how``: ``--entrypoint``, ``ENTRYPOINT``, ``its command is replaced``)."""
    return (
        f"the container runs {program} in place of vLLM's server ({how}): what it runs is not "
        "checked, so bump the image by hand once it is"
    )
