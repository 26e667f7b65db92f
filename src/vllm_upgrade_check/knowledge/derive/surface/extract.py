""":func:`extract_surface`: the surface of one release, each part read by the
module that knows it, assembled into a :class:`ReleaseSurface`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any, cast

from vllm_upgrade_check.knowledge.derive.surface.categories import (
    _architectures,
    _config_fields,
    _engine_args,
    _env_vars,
    _load_formats,
    _metrics,
    _modules,
    _quantization_methods,
    _sampling_params,
)
from vllm_upgrade_check.knowledge.derive.surface.cli_flags import _CliCollector
from vllm_upgrade_check.knowledge.derive.surface.cuda import _cuda_major
from vllm_upgrade_check.knowledge.derive.surface.deprecations import _deprecations
from vllm_upgrade_check.knowledge.derive.surface.files import _open_release
from vllm_upgrade_check.knowledge.derive.surface.metadata import _read_metadata
from vllm_upgrade_check.knowledge.derive.surface.model import FlagArity, ReleaseSurface, SourceRef
from vllm_upgrade_check.knowledge.derive.surface.resolver import _Resolver
from vllm_upgrade_check.knowledge.derive.surface.sources import _Sources

__all__ = ["extract_surface"]


def extract_surface(path: str | os.PathLike) -> ReleaseSurface:
    """Extract the :class:`ReleaseSurface` of the vLLM release at ``path``.

    ``path`` is a ``.whl`` file (read with :mod:`zipfile`, only the members
    needed), an unpacked wheel directory, or a site-packages directory with
    ``vllm/`` and exactly one ``vllm-*.dist-info``.  Nothing is imported."""
    files = _open_release(path)
    try:
        meta = _read_metadata(files)
        cuda, cuda_ref = _cuda_major(files)
        src = _Sources(files)
        resolver = _Resolver(src)
        cli = _CliCollector(src, resolver)
        flags = cli.collect()
        metrics, metric_notices = _metrics(src)
        sets: dict[str, Mapping[str, SourceRef]] = {
            "cli_flags": flags,
            "engine_args": _engine_args(resolver),
            "config_fields": _config_fields(resolver),
            "sampling_params": _sampling_params(resolver),
            "env_vars": _env_vars(src),
            "metrics": metrics,
            "quantization_methods": _quantization_methods(resolver),
            "load_formats": _load_formats(resolver),
            "architectures": _architectures(resolver),
            "modules": _modules(src),
        }
        return ReleaseSurface(
            version=meta.version,
            requires_python=meta.requires_python,
            requires_dist=meta.requires_dist,
            requires_dist_refs=meta.requires_dist_refs,
            requires_python_ref=meta.requires_python_ref,
            cuda_major=cuda,
            cuda_ref=cuda_ref,
            deprecations=_deprecations(src, cli.deprecated + metric_notices, sets),
            unparsed=tuple(sorted(src.unparsed)),
            cli_arity={f: cli.arity.get(f, FlagArity(None)) for f in flags},
            **cast(dict[str, Any], sets),
        )
    finally:
        files.close()
