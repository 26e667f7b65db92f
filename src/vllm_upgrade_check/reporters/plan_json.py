"""``plan --format json``: a documented, versioned public schema for upgrade plans.

Schema version 1 (``schema_version: 1``, ``kind: "plan"``)::

    {
      "schema_version": 1, "kind": "plan",
      "tool": {"name": "vllm-upgrade-check", "version": "0.1.0"},
      "current": "0.25.0" | null, "current_source": "installed vllm 0.25.0 (...)",
      "newest_known": "0.28.0", "reachable": "0.26.0" | null,
      "host": {"python": "3.10" | null, "driver": "550.54.15" | null,
               "driver_source": "nvidia-smi --query-gpu" | "--driver" | null,
               "keep": ["driver", "torch"], "environment": "freeze file reqs.txt",
               "driver_cuda": "12.4" | null (the CUDA the driver supports natively),
               "sources": [{"fact": "NVIDIA driver", "value": "550.54.15",
                            "source": "smi.txt:3 (captured nvidia-smi table)"}],
               "not_checked": ["GPU compute capability unknown ..."]},
      "releases": [{"release": "0.27.0", "checked": true, "reachable": false | null (unchecked),
                    "first_blocker": "wheels built for CUDA 13 need driver >= ..." | null,
                    "blockers": [{"kind": "python|driver|keep|conflict|model", "subject": "driver",
                                  "message": "...",
                                  "path": "serve.sh", "line": 2}],  (path and line: model only)
                    "changes": ["torch 2.11.0 -> 2.13.0 (upgrade; vllm requires torch==2.13.0)"],
                    "cuda": "13.0" | "13" | null (the default wheel's CUDA),
                    "build": "CUDA 12.9 build: wheel vllm==0.26.0+cu129 from ..." | null
                             (the build to install when it is not the default wheel),
                    "notes": ["the CUDA 12.9 build runs on driver ... minor-version compatibility ..."],
                    "conflicts": [{"requirer": "lmcache", "requirer_version": "0.3.1",
                                   "requirement": "vllm<0.27", "name": "vllm",
                                   "future": "0.27.0", "cause": "vllm==0.27.0",
                                   "message": "lmcache 0.3.1 has requirement ..."}]}],
      "path": [{"from": "0.25.0" | null, "to": "0.26.0", "reason": "...",
                "blockers": 2, "warnings": 1, "changes": ["..."], "migrate": ["VUC0260-001"],
                "findings": [<finding objects of the scan schema>]}],
      "notes": ["..."], "driver_table_source": "NVIDIA CUDA Toolkit Release Notes, Table 3 ..."
    }

Fields are only ever added within a schema version; removing or changing one bumps it.
"""

from __future__ import annotations

from typing import Any

from vllm_upgrade_check import __version__
from vllm_upgrade_check.model.pack import Severity
from vllm_upgrade_check.model.plan import Blocker, Plan, ReleaseCheck
from vllm_upgrade_check.reporters.json_report import finding_dict
from vllm_upgrade_check.reporters.jsontext import dumps_indented

SCHEMA_VERSION = 1


def _release(check: ReleaseCheck) -> dict[str, Any]:
    conflicts = check.future.conflicts if check.future else ()
    return {
        "release": check.release,
        "checked": check.checked,
        "reachable": check.reachable if check.checked else None,
        "first_blocker": check.blockers[0].message if check.blockers else None,
        "blockers": [_blocker(b) for b in check.blockers],
        "changes": list(check.changes),
        "cuda": check.cuda,
        "build": check.build,
        "notes": list(check.notes),
        "conflicts": [
            {
                "requirer": c.requirer,
                "requirer_version": c.requirer_version,
                "requirement": c.requirement,
                "name": c.name,
                "future": c.future,
                "cause": c.cause,
                "message": c.describe(),
            }
            for c in conflicts
        ],
    }


def plan_dict(plan: Plan) -> dict[str, Any]:
    """The public JSON object of a plan (see the module docstring)."""
    host = plan.host
    return {
        "schema_version": SCHEMA_VERSION,
        "kind": "plan",
        "tool": {"name": "vllm-upgrade-check", "version": __version__},
        "current": plan.current,
        "current_source": plan.current_source,
        "newest_known": plan.newest_known,
        "reachable": plan.reachable,
        "host": {
            "python": host.python,
            "driver": host.driver,
            "driver_source": host.driver_source,
            "keep": sorted(host.keep),
            "environment": host.env.source,
            "driver_cuda": host.driver_cuda,
            "sources": [{"fact": f, "value": v, "source": w} for f, v, w in host.sources],
            "not_checked": list(host.not_checked),
        },
        "releases": [_release(c) for c in plan.releases],
        "path": [
            {
                "from": hop.from_version,
                "to": hop.to_version,
                "reason": hop.reason,
                "blockers": hop.blockers,
                "warnings": hop.report.count(Severity.WARNING),
                "changes": list(hop.changes),
                "migrate": list(hop.migrate),
                "findings": [finding_dict(f, hop.report) for f in hop.report.findings],
            }
            for hop in plan.path
        ],
        "notes": list(plan.notes),
        "driver_table_source": plan.driver_source,
    }


def render_plan_json(plan: Plan) -> str:
    """Render ``plan`` as indented JSON text (ends with a newline)."""
    return dumps_indented(plan_dict(plan)) + "\n"


def _blocker(blocker: Blocker) -> dict[str, Any]:
    out: dict[str, Any] = {"kind": blocker.kind, "subject": blocker.subject, "message": blocker.message}
    if blocker.path is not None:
        out["path"], out["line"] = blocker.path, blocker.line
    return out
