"""Command-line interface (typer). Thin: parse options, call the engine, render, exit.

Exit codes: 0 nothing at or above ``--fail-on``; 1 something is; 2 usage error or bad
input (one line on stderr naming file and line, no traceback).
"""

from __future__ import annotations

import errno
import os
import signal
import sys

from vllm_upgrade_check import __version__
from vllm_upgrade_check.cli.apps import app, baseline_app, rules_app

__all__ = ["app", "baseline_app", "main", "rules_app"]


COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "scan": ("scan_cmd",),
    "fix": ("fix_cmd",),
    "env": ("env_cmd",),
    "plan": ("plan_cmd",),
    "report": ("report_cmd",),
    "explain": ("rules_cmd",),
    "rules": ("rules_cmd", "derive_cmd"),
    "baseline": ("baseline_cmd",),
    "fleet": ("fleet_cmd",),
}
"""Command (or group) name -> the modules of :mod:`vllm_upgrade_check.cli` that register it,
in the order ``--help`` lists them."""


def _register(args: list[str] | None = None) -> None:
    """Import the command modules, which register their commands on :data:`app`.

    Args:
        args: the command line (without the program name). When its first word names a
            command, only that command's modules are imported (a run pays for the code it
            uses: ``scan`` never imports ``plan``'s); otherwise (``--help``, no command, an
            unknown name, shell completion) every command is registered, so that help and
            "no such command" read as they always do.
    """
    import importlib

    first = next((a for a in args or () if not a.startswith("-")), None) if args is not None else None
    leading_option = bool(args) and args is not None and args[0].startswith("-")
    completing = any(key.startswith(("_VLLM_UPGRADE_CHECK_COMPLETE", "_TYPER_COMPLETE")) for key in os.environ)
    if first in COMMAND_MODULES and not leading_option and not completing:
        names: tuple[str, ...] = COMMAND_MODULES[first]
    else:
        names = tuple(dict.fromkeys(m for ms in COMMAND_MODULES.values() for m in ms))
    for name in names:
        importlib.import_module(f"vllm_upgrade_check.cli.{name}")


def _usage_error() -> type[Exception]:
    """The usage error class of the click that typer runs on (typer >= 0.20 carries its own
    copy; older ones depend on click)."""
    try:
        from typer._click.exceptions import UsageError
    except ImportError:  # pragma: no cover - typer with click as a dependency
        from click.exceptions import UsageError  # type: ignore[no-redef,unused-ignore]
    return UsageError


_SAYS_WHY_EMPTY = frozenset({"--select", "--ignore", "--from", "--to", "--cache-dir"})
"""Options whose own check says better what an empty value should have been."""


def _reject_empty(args: list[str]) -> None:
    """Refuse an empty argument: ``scan ""`` or ``--rules ""`` would read as the current
    directory (``Path("")`` is ``.``); a path the user names is never silently replaced.
    The options of :data:`_SAYS_WHY_EMPTY` refuse their empty values themselves.

    Raises:
        VucError: naming the argument's position.
    """
    from vllm_upgrade_check.errors import VucError

    for index, arg in enumerate(args):
        if arg == "" and not (index and args[index - 1] in _SAYS_WHY_EMPTY):
            after = f" after {args[index - 1]}" if index else ""
            raise VucError(f"argument {index + 1}{after} is empty: an empty string names no file or value")


_FULL = frozenset({errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EFBIG})
"""Write errors that mean the output's device is full (or failing), not a bug."""


def main() -> None:
    """Entry point of the ``vllm-upgrade-check`` console script.

    Usage errors are reported by typer (exit 2); :class:`~vllm_upgrade_check.errors.VucError`
    (bad rule pack, unknown version, missing path) becomes one line on stderr and exit 2. A
    bug (any other exception) prints its traceback and exits 2 too, never 1: a CI gate must
    not read a crash as "findings".
    """
    if sys.argv[1:] in (["--version"], ["-V"]):  # fast path: no command module (pydantic, yaml...) imported
        print(f"vllm-upgrade-check {__version__}")
        return
    import typer

    from vllm_upgrade_check.errors import VucError, one_line

    _register(sys.argv[1:])
    usage_error = _usage_error()
    try:
        _reject_empty(sys.argv[1:])
        code = app(standalone_mode=False)
        sys.stdout.flush()  # here, so that a full device is an error of this run, said once
        sys.exit(code if isinstance(code, int) else 0)
    except usage_error as exc:
        # One line, as for every other bad input (typer would draw a three-line box).
        if type(exc).__name__ == "NoArgsIsHelpError":  # no command: the help, as typer prints it
            print(exc.format_message(), file=sys.stderr)  # type: ignore[attr-defined]
            sys.exit(2)
        ctx = getattr(exc, "ctx", None)
        hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
        print(f"vllm-upgrade-check: error: {exc.format_message()}{hint}", file=sys.stderr)  # type: ignore[attr-defined]
        sys.exit(2)
    except typer.Abort:
        sys.exit(130)
    except VucError as exc:
        print(f"vllm-upgrade-check: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except RecursionError:
        print("vllm-upgrade-check: error: an input is nested too deeply to read", file=sys.stderr)
        sys.exit(2)
    except MemoryError:
        print("vllm-upgrade-check: error: out of memory reading an input (a file too large?)", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        # Exit at once: the interpreter's exit hooks would wait on (or write to) the pipes of
        # worker processes that were just stopped.
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(130)
    except Exception as exc:
        if isinstance(exc, OSError) and exc.errno in _FULL:
            # stdout or an output file on a full device: one line (stderr may still be writable)
            print(f"vllm-upgrade-check: error: cannot write output: {exc.strerror or exc}", file=sys.stderr)
            os._exit(2)  # the interpreter's final flush of stdout would fail again
        if isinstance(exc, OSError) and exc.filename is not None:
            # a path the user named that the system refuses (a name too long, a loop of
            # links, no permission): the path and the reason, on one line
            print(f"vllm-upgrade-check: error: {one_line(str(exc.filename))}: {exc.strerror or exc}", file=sys.stderr)
            sys.exit(2)
        import traceback

        traceback.print_exc()
        print("vllm-upgrade-check: internal error (a bug: please report it with the traceback above)", file=sys.stderr)
        sys.exit(2)
    finally:
        # The run is over; a Ctrl-C while the interpreter shuts down (joining worker threads,
        # running exit hooks) ends it with 130 too, not with a traceback of those hooks.
        signal.signal(signal.SIGINT, _interrupted_at_exit)


def _interrupted_at_exit(_signum: int, _frame: object) -> None:
    """SIGINT handler once :func:`main` has finished: flush what was written, exit 130."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(130)
