"""Wheel and sdist file names, as pip reads them from a URL or a path.

The one place a distribution file's name is read: the last path segment of a URL (its query
and fragment dropped), percent-decoded as pip decodes it (``torch-2.3.0%2Bcu121-...whl`` is
``torch-2.3.0+cu121-...whl``: a local version label's ``+`` is always escaped in
``download.pytorch.org`` and GitHub release URLs), then parsed with
:func:`packaging.utils.parse_wheel_filename` / :func:`~packaging.utils.parse_sdist_filename`.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    NormalizedName,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

SDIST_SUFFIXES = (".tar.gz", ".zip")
"""The sdist archives pip installs by file name."""


@dataclass(frozen=True)
class DistFile:
    """A distribution file named by a URL or a path.

    Attributes:
        name: the canonical project name (``vllm``).
        version: the version the file name says (``0.16.0+cu118``).
        written: that version as the decoded name writes it (``0.16.0+cu118``).
        offset: where the version starts in the URL or path as written (percent-encoded).
        wheel: whether it is a wheel (else an sdist).
    """

    name: NormalizedName
    version: Version
    written: str
    offset: int
    wheel: bool


def file_name(url: str) -> tuple[str, int]:
    """The last path segment of ``url`` (a URL or a path) as written, query and fragment
    dropped, and the offset it starts at: ``https://h/whl/torch-2.3.0%2Bcu121-...whl#sha256=..``
    -> ``("torch-2.3.0%2Bcu121-...whl", 14)``."""
    path = url.split("#", 1)[0].split("?", 1)[0]
    start = path.rfind("/") + 1
    return path[start:], start


def is_dist_name(name: str) -> bool:
    """Whether ``name`` (a file name, encoded or not) ends as a wheel or an sdist does."""
    return name.endswith((".whl", *SDIST_SUFFIXES))


def parse_dist_url(url: str) -> DistFile | None:
    """The distribution file ``url`` names (a URL, ``file:`` URL or path whose last segment
    is a wheel or sdist file name, percent-encoded or not), or ``None`` when that segment is
    no valid wheel or sdist name (or its version as written is not the version parsed).

    ``.../vllm-0.16.0%2Bcu118-cp38-abi3-manylinux1_x86_64.whl`` -> ``vllm`` ``0.16.0+cu118``,
    its version at the offset of ``0.16.0`` in ``url``."""
    raw, start = file_name(url)
    name = unquote(raw)
    wheel = name.endswith(".whl")
    try:
        if wheel:
            project, version, _build, _tags = parse_wheel_filename(name)
        elif name.endswith(SDIST_SUFFIXES):
            project, version = parse_sdist_filename(name)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    if wheel:
        raw_version = raw.split("-")[1]
        at = raw.index("-") + 1
    else:
        stem = raw.removesuffix(".tar.gz").removesuffix(".zip")
        at = stem.rfind("-") + 1
        raw_version = stem[at:]
    written = unquote(raw_version)
    try:
        if Version(written) != version:
            return None
    except InvalidVersion:
        return None
    return DistFile(project, version, written, start + at, wheel)


__all__ = ["SDIST_SUFFIXES", "DistFile", "file_name", "is_dist_name", "parse_dist_url"]
