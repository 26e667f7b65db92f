"""Arity (``takes``) and ``choices`` of the serve flags, read statically."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest
from derive_fakes import (
    COMPUTE_KWARGS_NO_OPTIONAL_STR,
    GET_KWARGS_084,
    NEW_ARGPARSE_UTILS,
    NEW_RELEASE,
    arity_new_release,
    arity_old_release,
    write_wheel,
)

from vllm_upgrade_check.knowledge.derive import FlagArity, ReleaseSurface, extract_surface


def _takes(surface: ReleaseSurface) -> dict[str, str | None]:
    return {flag: arity.takes for flag, arity in surface.cli_arity.items()}


@pytest.fixture(scope="module")
def old(tmp_path_factory: pytest.TempPathFactory) -> ReleaseSurface:
    return extract_surface(write_wheel(arity_old_release(), tmp_path_factory.mktemp("old")))


@pytest.fixture(scope="module")
def new(tmp_path_factory: pytest.TempPathFactory) -> ReleaseSurface:
    return extract_surface(write_wheel(arity_new_release(), tmp_path_factory.mktemp("new")))


def test_every_flag_has_an_arity(old: ReleaseSurface, new: ReleaseSurface) -> None:
    assert set(old.cli_arity) == set(old.cli_flags)
    assert set(new.cli_arity) == set(new.cli_flags)


def test_literal_add_argument_shapes(old: ReleaseSurface) -> None:
    takes = _takes(old)
    # store_true / count / BooleanOptionalAction and its --no- form
    assert takes["--disable-log-requests"] == "0"
    assert takes["--use-v2-block-manager"] == "0"
    assert takes["--verbose"] == takes["-v"] == "0"
    assert takes["--disable-sliding-window"] == takes["--no-disable-sliding-window"] == "0"
    # plain store with any type=, and append
    assert takes["--swap-space"] == takes["--tensor-parallel-size"] == takes["-tp"] == "1"
    assert takes["--ignore-patterns"] == "1"
    # nargs literal, argparse.ONE_OR_MORE, an integer
    assert takes["--lora-modules"] == "+"
    assert takes["--long-lora-scaling-factors"] == "+"
    assert takes["--num-speculative-tokens"] == "2"
    # custom action classes take their nargs from the call (default one word)
    assert takes["--disable-logprobs-during-spec-decoding"] == "?"
    assert takes["--enable-chunked-prefill"] == "1"


def test_literal_choices(old: ReleaseSurface) -> None:
    assert old.cli_arity["--kv-cache-dtype"].choices == ("auto", "fp8")
    assert old.cli_arity["--block-size"].choices == ("8", "16", "32")
    assert old.cli_arity["--load-format"].choices == ("auto", "pt", "safetensors")  # [f.value for f in Enum]
    # [*QUANTIZATION_METHODS, None]: a None choice is the word "None"
    assert old.cli_arity["--quantization"].choices == ("awq", "squeezellm", "compressed-tensors", "None")
    assert old.cli_arity["-q"] == old.cli_arity["--quantization"]
    assert old.cli_arity["--swap-space"].choices is None
    assert old.cli_arity["--use-v2-block-manager"].choices is None


def test_get_kwargs_field_shapes(new: ReleaseSurface) -> None:
    takes = _takes(new)
    # bool -> BooleanOptionalAction (both spellings take nothing)
    assert takes["--trust-remote-code"] == takes["--no-trust-remote-code"] == "0"
    assert takes["--enable-prefix-caching"] == "0"  # "bool | None" string annotation
    assert takes["--enable-chunked-prefill"] == "0"  # SkipValidation[bool]
    # exactly bool | str | None -> nargs="?"
    assert takes["--hf-token"] == "?"
    assert "--no-hf-token" not in takes
    # int / float / str / dataclass (JSON) -> one word
    assert takes["--max-model-len"] == takes["--block-size"] == takes["--max-num-partial-prefills"] == "1"
    assert takes["--model"] == "1"
    assert takes["--compilation-config"] == takes["-cc"] == "1"
    # list / tuple[X, ...] -> nargs="+", tuple[int, int] -> 2
    assert takes["--served-model-name"] == "+"
    assert takes["--long-lora-scaling-factors"] == "+"
    assert takes["--mm-range"] == "2"


def test_get_kwargs_literal_choices(new: ReleaseSurface) -> None:
    assert new.cli_arity["--scheduling-policy"] == FlagArity("1", ("fcfs", "priority"))
    # nested Literal aliases are flattened; sorted as get_kwargs sorts them
    assert new.cli_arity["--runner"] == FlagArity("1", ("auto", "generate", "pooling"))
    # Optional[Literal]: the appended None is accepted as the word "None"
    assert new.cli_arity["--quantization"].choices == ("awq", "compressed-tensors", "fp8", "None")
    # Literal | str: get_kwargs uses metavar, not choices
    assert new.cli_arity["--tokenizer-mode"] == FlagArity("1", None)


def test_overrides_and_explicit_keywords(new: ReleaseSurface) -> None:
    takes = _takes(new)
    # kw["field"]["action"] = "store_true" in a class method
    assert takes["--disable-fastapi-docs"] == "0"
    # kw["lora_modules"]["action"] = LoRAParserAction keeps the list's nargs
    assert takes["--lora-modules"] == "+"
    # del kw["middleware"]["nargs"] in a subclass method
    assert takes["--middleware"] == "1"
    # aliases set with kw["port"]["flags"] share the arity
    assert takes["--port"] == takes["-p"] == "1"
    # {**kw["async_scheduling"], "action": "store_true"}
    assert takes["--async-scheduling"] == "0"
    # literal flags in the same function
    assert takes["--headless"] == "0"
    assert takes["--api-server-count"] == takes["-asc"] == "1"
    assert takes["--guided-decoding-backend"] == takes["--guided-decoding-disable-fallback"] == "1"
    # custom actions: an argparse.Action subclass (nargs from the call) and
    # one whose __init__ passes nargs=0
    assert takes["--log-config-file"] == "1"
    assert takes["--skip-x"] == "0"


def test_rewritten_flag_without_a_bare_form_is_unknown(new: ReleaseSurface) -> None:
    # the fake FlexibleArgumentParser only rewrites attached -O3 forms
    assert new.cli_arity["-O"] == FlagArity(None)


def test_bare_rewritten_flag_takes_its_targets_arity(tmp_path: Path) -> None:
    release = arity_new_release()
    sources = dict(release["sources"])
    sources["vllm/utils/argparse_utils.py"] = NEW_ARGPARSE_UTILS.replace(
        "            else:\n                processed.append(arg)\n",
        '            elif arg == "-O":\n                processed.append("--max-model-len")\n'
        "            else:\n                processed.append(arg)\n",
        1,
    )
    surface = extract_surface(write_wheel(dict(release, sources=sources), tmp_path))
    assert surface.cli_arity["-O"] == FlagArity("1")


def test_release_without_optional_str_branch(tmp_path: Path) -> None:
    """Before the ``bool | str | None`` branch such a field contains bool:
    a BooleanOptionalAction flag with a --no- form."""
    surface = extract_surface(write_wheel(arity_new_release(COMPUTE_KWARGS_NO_OPTIONAL_STR), tmp_path))
    assert surface.cli_arity["--hf-token"] == surface.cli_arity["--no-hf-token"] == FlagArity("0")


def test_084_get_kwargs(tmp_path: Path) -> None:
    """0.8.4: ``field.type is bool`` fields get no action (one word unless
    the call says otherwise); other fields a ``type=`` only."""
    takes = _takes(extract_surface(write_wheel(arity_new_release(GET_KWARGS_084), tmp_path)))
    assert takes["--trust-remote-code"] == "1"
    assert "--no-trust-remote-code" not in takes
    assert takes["--served-model-name"] == takes["--max-model-len"] == "1"
    assert takes["--async-scheduling"] == "0"  # explicit action in the splat


def test_unreadable_get_kwargs_is_unknown(tmp_path: Path) -> None:
    """A branch the emulation cannot decide gives takes=None, never a guess."""
    compute = GET_KWARGS_084.replace("if field.type is bool:", "if mystery(field):")
    takes = _takes(extract_surface(write_wheel(arity_new_release(compute), tmp_path)))
    assert takes["--max-model-len"] is None
    assert takes["--headless"] == "0"  # literal flags are unaffected


def test_enable_disable_pairs(tmp_path: Path) -> None:
    """0.33: BooleanOptionalAction is registered as an action pairing
    --enable-x with --disable-x."""
    sources = dict(NEW_RELEASE["sources"])
    sources["vllm/utils/argparse_utils.py"] = NEW_ARGPARSE_UTILS.replace(
        "class FlexibleArgumentParser(argparse.ArgumentParser):\n",
        "class EnableDisableAction(argparse.BooleanOptionalAction):\n"
        '    _inverse_prefixes = {"--enable-": "--disable-", "--disable-": "--enable-"}\n\n\n'
        "class FlexibleArgumentParser(argparse.ArgumentParser):\n"
        "    def __init__(self, *args, **kwargs):\n"
        "        super().__init__(*args, **kwargs)\n"
        '        self.register("action", argparse.BooleanOptionalAction, EnableDisableAction)\n\n',
    )
    surface = extract_surface(write_wheel(dict(NEW_RELEASE, sources=sources), tmp_path))
    assert surface.cli_arity["--disable-prefix-caching"] == FlagArity("0")
    assert "--disable-chunked-prefill" in surface.cli_flags
    assert "--disable-auto-tool-choice" in surface.cli_flags
    # store_true flags and --no- forms are not paired
    assert "--enable-log-stats" not in surface.cli_flags
    assert "--disable-fastapi-docs" in surface.cli_flags and "--enable-fastapi-docs" not in surface.cli_flags


def test_json_round_trip(new: ReleaseSurface) -> None:
    data = json.loads(json.dumps(new.to_json()))
    assert data["cli_arity"]["--scheduling-policy"] == {"takes": "1", "choices": ["fcfs", "priority"]}
    assert data["cli_arity"]["--trust-remote-code"] == {"takes": "0"}
    assert ReleaseSurface.from_json(data).cli_arity == new.cli_arity
    legacy = {k: v for k, v in data.items() if k != "cli_arity"}
    assert ReleaseSurface.from_json(legacy).cli_arity == {}


def _gen_known_args():
    path = Path(__file__).resolve().parents[2] / "scripts" / "gen_known_args.py"
    spec = importlib.util.spec_from_file_location("gen_known_args", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_known_args_arity_runs() -> None:
    gen = _gen_known_args()
    entry: dict[str, object] = {}
    gen._add_arity(
        entry,
        [("0.6.0", "1", None), ("0.6.1", "1", None), ("0.7.0", "+", ["a", "b"]), ("0.8.0", "+", ["a", "b"])],
    )
    assert entry == {
        "takes": "+",
        "takes_by_release": [["0.6.0", "0.6.1", "1"], ["0.7.0", "0.8.0", "+"]],
        "choices": ["a", "b"],
        "choices_by_release": [["0.6.0", "0.6.1", None], ["0.7.0", "0.8.0", ["a", "b"]]],
    }
    steady: dict[str, object] = {}
    gen._add_arity(steady, [("0.6.0", "0", None), ("0.7.0", "0", None)])
    assert steady == {"takes": "0"}
