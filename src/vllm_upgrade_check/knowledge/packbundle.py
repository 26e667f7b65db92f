"""The bundled rule packs pre-parsed to JSON at build time, so a run does not parse YAML.

Building the wheel (``setup.py``'s ``build_py``) writes :data:`BUNDLE_NAME` next to the packs
in ``vllm_upgrade_check/rules/``: for each pack file, the digest of its text and the data
PyYAML's safe loader gives for it. Loading 66 packs from this file takes about a tenth of the
time libyaml's loader takes (constructing Python objects from YAML nodes is pure Python).
A run builds the pack records straight from this data, without validation
(:mod:`vllm_upgrade_check.model.construct`): the test suite validates every bundled pack.

An entry is used only when the digest of the pack file next to it matches, so a pack edited
after the build (an editable install, a patched site-packages) is read from its YAML. The
bundle is package data, as trusted as the code beside it; a missing, unreadable or malformed
bundle is ignored.

This module imports only the standard library (and PyYAML, when compiling): ``setup.py``
loads it by path at build time, before the package's dependencies exist.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

BUNDLE_NAME = "_packs.json"
"""File name of the bundle, inside the ``vllm_upgrade_check.rules`` package."""

FORMAT = 1
"""Version of the bundle layout."""


def text_digest(text: str) -> str:
    """Digest (hex, 32 characters) of a pack file's text as read (UTF-8)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def compile_bundle(packs: Iterable[tuple[str, str]]) -> str:
    """The bundle (JSON text) for ``(file name, YAML text)`` pairs.

    A pack that does not parse as YAML, or whose data would not come back from JSON
    unchanged (a date, a non-string key), is left out: it is then read from its YAML at load
    time, which reports the problem with its line.

    Raises:
        ImportError: PyYAML is not installed.
    """
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    entries: dict[str, Any] = {}
    for name, text in packs:
        try:
            data = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
            encoded = json.dumps(data, ensure_ascii=False, sort_keys=True)
        except (yaml.YAMLError, TypeError, ValueError):
            continue
        back = json.loads(encoded)
        if back != data:
            continue
        entries[name] = {"digest": text_digest(text), "data": back}
    return json.dumps({"format": FORMAT, "packs": entries}, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def read_bundle(text: str) -> dict[str, tuple[str, Any]]:
    """File name -> ``(digest, data)`` from a bundle's text; empty when it is malformed or of
    another format (never raises)."""
    try:
        bundle = json.loads(text)
    except ValueError:
        return {}
    if not isinstance(bundle, dict) or bundle.get("format") != FORMAT or not isinstance(bundle.get("packs"), dict):
        return {}
    out: dict[str, tuple[str, Any]] = {}
    for name, entry in bundle["packs"].items():
        if isinstance(entry, dict) and isinstance(entry.get("digest"), str) and "data" in entry:
            out[name] = (entry["digest"], entry["data"])
    return out


def parsed_pack(bundle: dict[str, tuple[str, Any]], name: str, text: str) -> Any | None:
    """The bundled data of pack file ``name`` if the bundle holds it for exactly ``text``,
    else ``None`` (parse the YAML)."""
    entry = bundle.get(name)
    if entry is None or entry[0] != text_digest(text):
        return None
    return entry[1]
