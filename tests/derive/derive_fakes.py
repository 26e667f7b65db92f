"""Tiny fake vLLM releases for the derive tests.

``OLD_RELEASE`` is shaped like vLLM 0.6-0.8 (flags added one by one with
``parser.add_argument("--foo", ...)`` in ``vllm/engine/arg_utils.py`` and
``vllm/entrypoints/openai/cli_args.py``, serve subparser in
``vllm/scripts.py``, plain ``__init__`` configs in ``vllm/config.py``).

``NEW_RELEASE`` is shaped like vLLM 0.27+ (flags built from config
dataclasses with ``get_kwargs``, a ``FrontendArgs`` dataclass whose fields
become flags in a loop, the serve parser in ``vllm/entrypoints/cli/serve.py``
importing ``make_arg_parser`` from a moved module).
"""

from __future__ import annotations

import struct
import textwrap
import zipfile
from pathlib import Path

# --------------------------------------------------------------------------
# ELF
# --------------------------------------------------------------------------


def make_elf(
    needed: list[str], *, is64: bool = True, little: bool = True, vaddr_base: int = 0x10000
) -> bytes:
    """A minimal shared object: ELF header, a PT_LOAD mapping the whole file
    at ``vaddr_base``, a PT_DYNAMIC with DT_NEEDED/DT_STRTAB/DT_STRSZ."""
    end = "<" if little else ">"
    ehsize, phentsize = (64, 56) if is64 else (52, 32)
    phoff = ehsize
    strtab = b"\0"
    offsets = []
    for lib in needed:
        offsets.append(len(strtab))
        strtab += lib.encode() + b"\0"
    str_off = phoff + 2 * phentsize
    dyn_off = str_off + len(strtab)
    dyn_off += (-dyn_off) % 8
    entries = [(1, o) for o in offsets] + [(5, vaddr_base + str_off), (10, len(strtab)), (0, 0)]
    dyn_fmt = end + ("qQ" if is64 else "iI")
    dynamic = b"".join(struct.pack(dyn_fmt, tag, val) for tag, val in entries)
    total = dyn_off + len(dynamic)
    ident = b"\x7fELF" + bytes([2 if is64 else 1, 1 if little else 2, 1]) + b"\0" * 9
    if is64:
        header = struct.pack(end + "HHIQQQIHHHHHH", 3, 62, 1, 0, phoff, 0, 0, ehsize, phentsize, 2, 64, 0, 0)
        load = struct.pack(end + "IIQQQQQQ", 1, 5, 0, vaddr_base, vaddr_base, total, total, 0x1000)
        dyn = struct.pack(
            end + "IIQQQQQQ", 2, 6, dyn_off, vaddr_base + dyn_off, 0, len(dynamic), len(dynamic), 8
        )
    else:
        header = struct.pack(end + "HHIIIIIHHHHHH", 3, 3, 1, 0, phoff, 0, 0, ehsize, phentsize, 2, 40, 0, 0)
        load = struct.pack(end + "IIIIIIII", 1, 0, vaddr_base, vaddr_base, total, total, 5, 0x1000)
        dyn = struct.pack(
            end + "IIIIIIII", 2, dyn_off, vaddr_base + dyn_off, 0, len(dynamic), len(dynamic), 6, 4
        )
    body = ident + header + load + dyn + strtab
    body += b"\0" * (dyn_off - len(body))
    return body + dynamic


# --------------------------------------------------------------------------
# Writing a release in the three accepted layouts
# --------------------------------------------------------------------------


def _metadata(version: str, requires_python: str, requires: list[str]) -> str:
    lines = ["Metadata-Version: 2.1", "Name: vllm", f"Version: {version}", "Summary: fake"]
    lines.append(f"Requires-Python: {requires_python}")
    lines += [f"Requires-Dist: {r}" for r in requires]
    return "\n".join(lines) + "\n\nLong description mentioning Requires-Dist: nothing\n"


def release_files(release: dict) -> dict[str, bytes]:
    """All files of a fake release, by path inside the wheel."""
    files = {path: textwrap.dedent(text).lstrip("\n").encode() for path, text in release["sources"].items()}
    files.update(release.get("binaries", {}))
    dist = f"vllm-{release['version']}.dist-info"
    files[f"{dist}/METADATA"] = _metadata(
        release["version"], release["requires_python"], release["requires"]
    ).encode()
    files[f"{dist}/WHEEL"] = b"Wheel-Version: 1.0\nRoot-Is-Purelib: false\n"
    return files


def write_wheel(release: dict, where: Path) -> Path:
    """Write ``release`` as a .whl file in ``where``."""
    path = where / f"vllm-{release['version']}-cp38-abi3-manylinux1_x86_64.whl"
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in release_files(release).items():
            zf.writestr(name, data)
    return path


def write_tree(release: dict, root: Path, *, site_packages: bool = False) -> Path:
    """Write ``release`` unpacked under ``root``; with ``site_packages``, add
    another distribution's files around it as in a real site-packages."""
    files = release_files(release)
    if site_packages:
        files["numpy/__init__.py"] = b"x = 1\n"
        files["numpy-2.0.0.dist-info/METADATA"] = b"Metadata-Version: 2.1\nName: numpy\nVersion: 2.0.0\n"
    for name, data in files.items():
        target = root / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return root


# --------------------------------------------------------------------------
# Old era (0.6-0.8 shape)
# --------------------------------------------------------------------------

OLD_ARG_UTILS = '''
import argparse
from dataclasses import dataclass
from typing import Optional

from vllm.utils import FlexibleArgumentParser


@dataclass
class EngineArgs:
    """Arguments for vLLM engine."""
    model: str = "facebook/opt-125m"
    swap_space: float = 4
    use_v2_block_manager: bool = True
    max_context_len_to_capture: Optional[int] = None
    max_seq_len_to_capture: int = 8192
    tensor_parallel_size: int = 1

    @staticmethod
    def add_cli_args(parser: FlexibleArgumentParser) -> FlexibleArgumentParser:
        def nested_helper():
            return None

        parser.add_argument("--model", type=str, default=EngineArgs.model)
        parser.add_argument('--swap-space', type=float, default=4)
        parser.add_argument("--use-v2-block-manager", action="store_true")
        parser.add_argument("--tensor-parallel-size", "-tp", type=int)
        parser.add_argument("--enable-chunked-prefill", action=StoreBoolean)
        parser.add_argument("--disable-sliding-window", action=argparse.BooleanOptionalAction)
        parser.add_argument(
            "--max-context-len-to-capture",
            type=int,
            help="Maximum context length covered by CUDA graphs. "
            "(DEPRECATED. Use --max-seq-len-to-capture instead)",
        )
        parser.add_argument("--max-seq-len-to-capture", type=int)
        parser.add_argument("--max_cpu_loras", type=int)  # stored dashed
        parser.add_argument("--engine-use-ray", action="store_true",
                            help="(DEPRECATED. This argument is deprecated "
                            "and will be removed in a future update.)")
        return parser


@dataclass
class AsyncEngineArgs(EngineArgs):
    """Arguments for asynchronous vLLM engine."""
    disable_log_requests: bool = False

    @staticmethod
    def add_cli_args(parser: FlexibleArgumentParser, async_args_only: bool = False) -> FlexibleArgumentParser:
        if not async_args_only:
            parser = EngineArgs.add_cli_args(parser)
        parser.add_argument("--disable-log-requests", action="store_true")
        return parser


class StoreBoolean(argparse.Action):
    pass


def _engine_args_parser():
    return EngineArgs.add_cli_args(FlexibleArgumentParser())
'''

OLD_CLI_ARGS = """
import argparse
from vllm.engine.arg_utils import AsyncEngineArgs, nullable_str


def make_arg_parser(parser):
    parser.add_argument("--host", type=nullable_str, default=None)
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--allow-credentials", action="store_true")
    parser = AsyncEngineArgs.add_cli_args(parser)
    return parser
"""

OLD_SCRIPTS = """
from vllm.entrypoints.openai.cli_args import make_arg_parser
from vllm.utils import FlexibleArgumentParser


def _add_query_options(parser):
    parser.add_argument("--url", type=str)
    return parser


def main():
    parser = FlexibleArgumentParser(description="vLLM CLI")
    parser.add_argument("-v", "--version", action="version")
    subparsers = parser.add_subparsers(required=True)
    serve_parser = subparsers.add_parser("serve", help="Start the server")
    serve_parser.add_argument("model_tag", type=str)
    serve_parser.add_argument("--config", type=str, default="")
    serve_parser = make_arg_parser(serve_parser)
    chat_parser = subparsers.add_parser("chat", help="chat")
    _add_query_options(chat_parser)
    chat_parser.add_argument("--system-prompt", type=str)
"""

OLD_CONFIG = """
import enum
from dataclasses import dataclass, field
from typing import ClassVar, Optional, Union

from vllm.logger import init_logger

logger = init_logger(__name__)


class ModelConfig:
    def __init__(self, model: str, tokenizer: str, max_context_len_to_capture: Optional[int] = None,
                 max_seq_len_to_capture: Optional[int] = None, *args, **kwargs) -> None:
        self.model = model
        if max_context_len_to_capture is not None:
            logger.warning("`max_context_len_to_capture` is deprecated. "
                           "Use `max_seq_len_to_capture` instead.")


class SchedulerConfig:
    def __init__(self, max_num_batched_tokens: Optional[int], max_num_seqs: int,
                 use_v2_block_manager: bool = True, _private: int = 0) -> None:
        self.max_num_seqs = max_num_seqs


class LoadFormat(str, enum.Enum):
    AUTO = "auto"
    PT = "pt"
    SAFETENSORS = "safetensors"


@dataclass
class LoadConfig:
    load_format: Union[str, LoadFormat] = LoadFormat.AUTO
    download_dir: Optional[str] = None
    ignore_patterns: list = field(default_factory=list)
    registry: ClassVar[dict] = {}


class NotAConfigThing:
    x: int = 1
"""

OLD_ENVS = """
import os
from typing import TYPE_CHECKING, Any, Callable, Dict

if TYPE_CHECKING:
    VLLM_HOST_IP: str = ""
    VLLM_NOT_IN_DICT: str = ""

environment_variables: Dict[str, Callable[[], Any]] = {
    "VLLM_HOST_IP":
    lambda: os.getenv("VLLM_HOST_IP", ""),
    "VLLM_USE_V1":
    lambda: bool(int(os.getenv("VLLM_USE_V1", "0"))),
    "VLLM_ENGINE_ITERATION_TIMEOUT_S":
    lambda: int(os.environ.get("VLLM_ENGINE_ITERATION_TIMEOUT_S", "60")),
}

environment_variables["VLLM_LATE_ADDED"] = lambda: None
"""

OLD_METRICS = '''
from prometheus_client import Counter, Gauge

PREFIX = "vllm:"


class Metrics:
    """Docstring mentioning vllm:not_a_metric in prose."""

    def __init__(self):
        self.gauge_scheduler_running = Gauge(name="vllm:num_requests_running", documentation="x")
        self.gauge_gpu_cache_usage = Gauge(
            name="vllm:" + "gpu_cache_usage_perc",
            documentation="GPU KV-cache usage. DEPRECATED: Use vllm:kv_cache_usage_perc instead.",
        )
        self.gauge_kv_cache_usage = Gauge(name="vllm:kv_cache_usage_perc", documentation="y")
        self.hist = Histogram(name=PREFIX + "e2e", documentation="not resolvable: PREFIX is a name")
        self.family = Gauge(name="vllm:lora_", documentation="a prefix, not a metric")
        self.counter_tokens = Counter(name="vllm:prompt_tokens_total", documentation="z")
        op = "vllm::flash_attn_varlen_func"
'''

OLD_MODELS_INIT = """
from typing import Dict, List, Type

_GENERATION_MODELS = {
    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),
    "MistralForCausalLM": ("llama", "LlamaForCausalLM"),
}

_EMBEDDING_MODELS = {
    "MistralModel": ("llama_embedding", "LlamaEmbeddingModel"),
}

_MODELS = {
    **_GENERATION_MODELS,
    **_EMBEDDING_MODELS,
}

_OOT_MODELS: Dict[str, Type] = {}
_ROCM_UNSUPPORTED_MODELS: List[str] = ["MistralModel"]
_ROCM_PARTIALLY_SUPPORTED_MODELS: Dict[str, str] = {"Qwen2ForCausalLM": "reason"}
"""

OLD_QUANT = """
from typing import Dict, Type

from vllm.model_executor.layers.quantization.awq import AWQConfig

QUANTIZATION_METHODS: Dict[str, Type] = {
    "awq": AWQConfig,
    "squeezellm": SqueezeLLMConfig,
    "compressed-tensors": CompressedTensorsConfig,
}
"""

OLD_SAMPLING = """
from typing import ClassVar, List, Optional

import msgspec


class SamplingParams(msgspec.Struct, omit_defaults=True):
    n: int = 1
    best_of: Optional[int] = None
    temperature: float = 1.0
    _real_n: Optional[int] = None
    output_kind: ClassVar[int] = 0
"""

OLD_API_SERVER = """
def build():
    parser.add_argument("--not-a-serve-flag", type=str)
"""

OLD_RELEASE = {
    "version": "0.6.0",
    "requires_python": ">=3.8",
    "requires": [
        "numpy<2.0.0",
        "torch==2.4.0",
        'xformers==0.0.27.post2; platform_system == "Linux" and platform_machine == "x86_64"',
        "outlines<0.1,>=0.0.43",
        'librosa; extra == "audio"',
    ],
    "sources": {
        "vllm/__init__.py": '"""vLLM."""\n',
        "vllm/engine/__init__.py": "",
        "vllm/engine/arg_utils.py": OLD_ARG_UTILS,
        "vllm/engine/metrics.py": OLD_METRICS,
        "vllm/entrypoints/openai/cli_args.py": OLD_CLI_ARGS,
        "vllm/entrypoints/api_server.py": OLD_API_SERVER,
        "vllm/scripts.py": OLD_SCRIPTS,
        "vllm/config.py": OLD_CONFIG,
        "vllm/envs.py": OLD_ENVS,
        "vllm/model_executor/models/__init__.py": OLD_MODELS_INIT,
        "vllm/model_executor/layers/quantization/__init__.py": OLD_QUANT,
        "vllm/sampling_params.py": OLD_SAMPLING,
        "vllm/broken.py": "def f(:\n    return 'vllm:lost_metric'\n",
    },
    "binaries": {
        "vllm/_C.abi3.so": make_elf(["libtorch.so", "libcudart.so.12", "libc.so.6"]),
        "vllm/_moe_C.abi3.so": make_elf(["libcudart.so.11"]),
    },
}

OLD_FLAGS = {
    "--config",
    "--host",
    "--port",
    "--allow-credentials",
    "--model",
    "--swap-space",
    "--use-v2-block-manager",
    "--tensor-parallel-size",
    "-tp",
    "--enable-chunked-prefill",
    "--disable-sliding-window",
    "--no-disable-sliding-window",
    "--max-context-len-to-capture",
    "--max-seq-len-to-capture",
    "--max-cpu-loras",
    "--engine-use-ray",
    "--disable-log-requests",
}

# --------------------------------------------------------------------------
# New era (0.27+ shape)
# --------------------------------------------------------------------------

NEW_ARG_UTILS = '''
import argparse
import copy
from dataclasses import dataclass, fields
from typing import Literal, get_args

from vllm.config import CacheConfig, ModelConfig, SchedulerConfig
from vllm.utils.argparse_utils import FlexibleArgumentParser


def _compute_kwargs(cls):
    kwargs = {}
    for field in fields(cls):
        type_hints = get_type_hints(field.type)
        name = field.name
        kwargs[name] = {"default": field.default}
        if type_hints == {bool, str, type(None)}:
            kwargs[name]["type"] = str
            kwargs[name]["nargs"] = "?"
        elif contains_type(type_hints, bool):
            kwargs[name]["action"] = argparse.BooleanOptionalAction
        elif contains_type(type_hints, int):
            kwargs[name]["type"] = int
    return kwargs


def get_kwargs(cls):
    return copy.deepcopy(_compute_kwargs(cls))


@dataclass
class EngineArgs:
    """Arguments for vLLM engine."""

    model: str = ModelConfig.model
    trust_remote_code: bool = ModelConfig.trust_remote_code
    hf_token: bool | str | None = ModelConfig.hf_token
    max_seq_len_to_capture: int = ModelConfig.max_seq_len_to_capture
    max_num_partial_prefills: int = SchedulerConfig.max_num_partial_prefills
    enable_chunked_prefill: bool | None = None
    block_size: int | None = None

    @staticmethod
    def add_cli_args(parser: FlexibleArgumentParser) -> FlexibleArgumentParser:
        """Shared CLI arguments for vLLM engine."""
        model_kwargs = get_kwargs(ModelConfig)
        model_group = parser.add_argument_group(title="ModelConfig")
        model_group.add_argument("--model", **model_kwargs["model"])
        model_group.add_argument("--trust-remote-code", **model_kwargs["trust_remote_code"])
        model_group.add_argument("--hf-token", **model_kwargs["hf_token"])
        model_group.add_argument("--max-seq-len-to-capture", **model_kwargs["max_seq_len_to_capture"])
        model_group.add_argument("--quantization", "-q", **model_kwargs["quantization"])

        scheduler_kwargs = get_kwargs(SchedulerConfig)
        scheduler_group = parser.add_argument_group(title="SchedulerConfig")
        scheduler_group.add_argument(
            "--max-num-partial-prefills", **scheduler_kwargs["max_num_partial_prefills"]
        )
        scheduler_group.add_argument(
            "--enable-chunked-prefill",
            **{
                **scheduler_kwargs["enable_chunked_prefill"],
                "default": None,
            },
        )
        scheduler_group.add_argument(
            "--async-scheduling",
            **{**scheduler_kwargs["async_scheduling"], "action": "store_true"},
        )
        scheduler_group.add_argument("--scheduling-policy", **scheduler_kwargs["policy"])

        cache_kwargs = get_kwargs(CacheConfig)
        cache_group = parser.add_argument_group(title="CacheConfig")
        prefix_kwargs = cache_kwargs["enable_prefix_caching"]
        prefix_kwargs["default"] = None
        cache_group.add_argument("--enable-prefix-caching", **prefix_kwargs)
        cache_group.add_argument("--block-size", **cache_kwargs["block_size"])
        for arg, type in [
            ("--guided-decoding-backend", str),
            ("--guided-decoding-disable-fallback", bool),
        ]:
            cache_group.add_argument(
                arg,
                type=type,
                help=(f"[DEPRECATED] {arg} will be removed in v0.12.0."),
                deprecated=True,
            )

        parser.add_argument("--disable-log-stats", action="store_true")
        parser.add_argument(
            "--fail-on-environ-validation",
            default=False,
            action=argparse.BooleanOptionalAction,
        )
        return parser


@dataclass
class AsyncEngineArgs(EngineArgs):
    enable_log_requests: bool = False

    @staticmethod
    def add_cli_args(parser: FlexibleArgumentParser, async_args_only: bool = False) -> FlexibleArgumentParser:
        if not async_args_only:
            parser = EngineArgs.add_cli_args(parser)
        parser.add_argument("--enable-log-requests", action=argparse.BooleanOptionalAction)
        parser.add_argument(
            "--disable-log-requests",
            action=argparse.BooleanOptionalAction,
            deprecated=True,
            help="[DEPRECATED] Disable logging requests. Use --enable-log-requests instead.",
        )
        return parser
'''

NEW_CONFIG_INIT = """
from vllm.config.cache import CacheConfig
from vllm.config.model import ModelConfig
from vllm.config.scheduler import SchedulerConfig

__all__ = ["CacheConfig", "ModelConfig", "SchedulerConfig"]
"""

NEW_CONFIG_SCHEDULER = '''
from dataclasses import InitVar, field
from typing import ClassVar, Literal

from pydantic import SkipValidation

from vllm.config.utils import config

SchedulerPolicy = Literal["fcfs", "priority"]


@config
class SchedulerConfig:
    """Scheduler configuration."""

    max_num_batched_tokens: int | None = None
    max_num_partial_prefills: int = 1
    enable_chunked_prefill: SkipValidation[bool] = None  # type: ignore
    async_scheduling: bool = False
    policy: SchedulerPolicy = "fcfs"
    is_encoder_decoder: InitVar[bool] = False
    _private: int = 0
    registry: ClassVar[dict] = {}
'''

NEW_CONFIG_CACHE = '''
from vllm.config.utils import config
from vllm.config.base import BaseCacheConfig


@config
class CacheConfig(BaseCacheConfig):
    """Cache configuration."""

    block_size: int | None = None
    enable_prefix_caching: "bool | None" = None
'''

NEW_CONFIG_BASE = """
from dataclasses import dataclass


@dataclass
class BaseCacheConfig:
    cpu_offload_gb: float = 0
"""

NEW_CONFIG_MODEL = """
from typing import Optional

from vllm.config.utils import config
from vllm.model_executor.layers.quantization import QuantizationMethods


@config
class ModelConfig:
    model: str = "Qwen/Qwen3-0.6B"
    trust_remote_code: bool = False
    hf_token: bool | str | None = None
    max_seq_len_to_capture: int = 8192
    quantization: Optional[QuantizationMethods] = None
"""

NEW_CLI_ARGS = '''
"""Moved out of vllm/entrypoints/openai in this release."""
import argparse
import json
from dataclasses import InitVar, field
from typing import Any

from vllm.config.utils import config
from vllm.engine.arg_utils import AsyncEngineArgs


class LoRAParserAction(argparse.Action):
    pass


@config
class BaseFrontendArgs:
    """Base frontend arguments."""

    lora_modules: list[str] | None = None
    enable_auto_tool_choice: bool = False
    tool_call_parser: str | None = None

    @classmethod
    def _customize_cli_kwargs(cls, frontend_kwargs: dict[str, Any]) -> dict[str, Any]:
        frontend_kwargs["lora_modules"]["action"] = LoRAParserAction
        return frontend_kwargs

    @classmethod
    def add_cli_args(cls, parser):
        from vllm.engine.arg_utils import get_kwargs

        frontend_kwargs = get_kwargs(cls)
        frontend_kwargs = cls._customize_cli_kwargs(frontend_kwargs)
        frontend_group = parser.add_argument_group(title=cls.__name__)
        for key, value in frontend_kwargs.items():
            extra_flags = value.pop("flags", [])
            frontend_group.add_argument(*extra_flags, f"--{key.replace('_', '-')}", **value)
        return parser


@config
class FrontendArgs(BaseFrontendArgs):
    """Arguments for the OpenAI-compatible frontend server."""

    host: str | None = None
    port: int = 8000
    allow_credentials: bool = False
    disable_fastapi_docs: bool = False
    middleware: list[str] = field(default_factory=list)
    removed_field: str = ""
    init_only: InitVar[bool] = False

    @classmethod
    def _customize_cli_kwargs(cls, frontend_kwargs: dict[str, Any]) -> dict[str, Any]:
        frontend_kwargs = super()._customize_cli_kwargs(frontend_kwargs)
        frontend_kwargs["disable_fastapi_docs"]["action"] = "store_true"
        frontend_kwargs["port"]["flags"] = ["-p"]
        del frontend_kwargs["middleware"]["nargs"]
        del frontend_kwargs["removed_field"]
        return frontend_kwargs


def make_arg_parser(parser):
    parser.add_argument("model_tag", type=str, nargs="?")
    parser.add_argument("--headless", action="store_true", default=False)
    parser.add_argument("--api-server-count", "-asc", type=int, default=None)
    parser = FrontendArgs.add_cli_args(parser)
    parser = AsyncEngineArgs.add_cli_args(parser)
    return parser
'''

NEW_RUN_BATCH = """
from vllm.entrypoints.launchers.cli_args import BaseFrontendArgs


class BatchFrontendArgs(BaseFrontendArgs):
    input_file: str = ""

    @classmethod
    def _customize_cli_kwargs(cls, frontend_kwargs):
        frontend_kwargs["input_file"]["flags"] = ["-i"]
        return frontend_kwargs


def make_arg_parser(parser):
    parser.add_argument("--output-tmp-dir", type=str)
    return BatchFrontendArgs.add_cli_args(parser)
"""

NEW_SERVE = """
import argparse

from vllm.entrypoints.cli.types import CLISubcommand
from vllm.entrypoints.launchers.cli_args import make_arg_parser


class ServeSubcommand(CLISubcommand):
    name = "serve"

    def subparser_init(self, subparsers: argparse._SubParsersAction):
        serve_parser = subparsers.add_parser(self.name, help="Launch a server.")
        serve_parser = make_arg_parser(serve_parser)
        return serve_parser


def cmd_init():
    return [ServeSubcommand()]
"""

NEW_ENVS = """
import os
from collections.abc import Callable
from typing import Any

environment_variables: dict[str, Callable[[], Any]] = {
    "VLLM_HOST_IP": lambda: os.getenv("VLLM_HOST_IP", ""),
    "VLLM_ENGINE_ITERATION_TIMEOUT_S": lambda: int(os.environ.get("VLLM_ENGINE_ITERATION_TIMEOUT_S", "60")),
    "VLLM_NEW_THING": lambda: os.getenv("VLLM_NEW_THING"),
}


def __getattr__(name: str):
    if name == "VLLM_USE_V1":
        raise AttributeError("VLLM_USE_V1 has been removed; the V1 engine is always used.")
    raise AttributeError(name)
"""

NEW_METRICS = """
import prometheus_client

_TOTAL_BYTES = "vllm:kv_offload_total_bytes"


class PrometheusStatLogger:
    def __init__(self):
        self.gauge_scheduler_running = prometheus_client.Gauge(name="vllm:num_requests_running", documentation="r")
        self.gauge_kv_cache_usage = prometheus_client.Gauge(name="vllm:kv_cache_usage_perc", documentation="k")
        self.counter_prompt_tokens = prometheus_client.Counter(name="vllm:prompt_tokens", documentation="p")
        counter_specs = [
            ("vllm:spec_decode_num_drafts", "Number of drafts."),
            ("vllm:spec_decode_num_draft_tokens", "Number of draft tokens."),
        ]
        self.counters = [self._counter_cls(name=name, documentation=doc) for name, doc in counter_specs]
        self.total_bytes = prometheus_client.Counter(name=_TOTAL_BYTES, documentation="b")


def is_drafts(metric):
    # prometheus_client reports a counter's family name, without _total
    return metric.name == "vllm:spec_decode_num_drafts"
"""

NEW_REGISTRY = """
_TEXT_GENERATION_MODELS = {
    "LlamaForCausalLM": ("llama", "LlamaForCausalLM"),
    "Qwen3ForCausalLM": ("qwen3", "Qwen3ForCausalLM"),
}

_EMBEDDING_MODELS = {
    "BertModel": ("bert", "BertEmbeddingModel"),
}

_SPECULATIVE_DECODING_MODELS = {
    "EagleLlamaForCausalLM": ("llama_eagle", "EagleLlamaForCausalLM"),
}

_VLLM_MODELS = {
    **_TEXT_GENERATION_MODELS,
    **_EMBEDDING_MODELS,
    **_SPECULATIVE_DECODING_MODELS,
}

_PREVIOUSLY_SUPPORTED_MODELS = {"MistralModel": "0.10.0"}
"""

NEW_QUANT = """
from typing import Literal, get_args

QuantizationMethods = Literal[
    "awq",
    "fp8",
    "compressed-tensors",
]
QUANTIZATION_METHODS: list[str] = list(get_args(QuantizationMethods))
"""

NEW_LOADER = """
from typing import Literal

LoadFormats = Literal[
    "auto",
    "hf",
    "safetensors",
]

_LOAD_FORMAT_TO_MODEL_LOADER = {
    "auto": DefaultModelLoader,
    "hf": DefaultModelLoader,
    "safetensors": DefaultModelLoader,
    "dummy": DummyModelLoader,
}
"""

NEW_SAMPLING = """
from typing import ClassVar

import msgspec


class SamplingParams(msgspec.Struct, omit_defaults=True):
    n: int = 1
    temperature: float = 1.0
    max_tokens: int | None = 16
"""

NEW_DEPRECATION_WARNINGS = """
import warnings

from vllm.logger import init_logger

logger = init_logger(__name__)


def check(args):
    if args.swap_space:
        warnings.warn(
            "`swap_space` is deprecated and will be removed in v0.30. Use `cpu_offload_gb` instead.",
            DeprecationWarning,
        )
    if args.foo:
        logger.warning(f"The {args.name} option is deprecated")
    # an unrelated sentence mentioning the word deprecated
    note = "See the deprecation policy for details."
"""

NEW_ARGPARSE_UTILS = """
import argparse


class FlexibleArgumentParser(argparse.ArgumentParser):
    def parse_args(self, args=None, namespace=None):
        processed = []
        for arg in args:
            if arg == "--help" or arg.startswith("--model="):
                processed.append(arg)
            elif arg.startswith("-O") and arg != "-O":
                processed += ["--optimization-level", arg[2:]]
            else:
                processed.append(arg)
        return super().parse_args(processed, namespace)
"""

NEW_RELEASE = {
    "version": "0.27.0",
    "requires_python": ">=3.10",
    "requires": [
        "numpy",
        "torch==2.9.0",
        "outlines_core==0.2.11",
        'librosa; extra == "audio"',
    ],
    "sources": {
        "vllm/__init__.py": '"""vLLM."""\n',
        "vllm/engine/__init__.py": "",
        "vllm/engine/arg_utils.py": NEW_ARG_UTILS,
        "vllm/config/__init__.py": NEW_CONFIG_INIT,
        "vllm/config/scheduler.py": NEW_CONFIG_SCHEDULER,
        "vllm/config/cache.py": NEW_CONFIG_CACHE,
        "vllm/config/base.py": NEW_CONFIG_BASE,
        "vllm/config/model.py": NEW_CONFIG_MODEL,
        "vllm/entrypoints/launchers/cli_args.py": NEW_CLI_ARGS,
        "vllm/entrypoints/launchers/run_batch.py": NEW_RUN_BATCH,
        "vllm/entrypoints/cli/serve.py": NEW_SERVE,
        "vllm/envs.py": NEW_ENVS,
        "vllm/v1/metrics/loggers.py": NEW_METRICS,
        "vllm/model_executor/models/registry.py": NEW_REGISTRY,
        "vllm/model_executor/layers/quantization/__init__.py": NEW_QUANT,
        "vllm/model_executor/model_loader/__init__.py": NEW_LOADER,
        "vllm/sampling_params.py": NEW_SAMPLING,
        "vllm/engine/checks.py": NEW_DEPRECATION_WARNINGS,
        "vllm/utils/argparse_utils.py": NEW_ARGPARSE_UTILS,
    },
    "binaries": {
        "vllm/_C.abi3.so": make_elf(["libtorch.so", "libcublas.so.13", "libcudart.so.13"]),
        "vllm/vllm_flash_attn/_vllm_fa2_C.abi3.so": make_elf(["libcudart.so.12"]),
    },
}

NEW_FLAGS = {
    # make_arg_parser
    "--headless",
    "--api-server-count",
    "-asc",
    # FrontendArgs loop (base fields first); disable_fastapi_docs forced to
    # store_true; removed_field deleted; init_only is an InitVar
    "--lora-modules",
    "--enable-auto-tool-choice",
    "--no-enable-auto-tool-choice",
    "--tool-call-parser",
    "--host",
    "--port",
    "-p",
    "--allow-credentials",
    "--no-allow-credentials",
    "--disable-fastapi-docs",
    "--middleware",
    # EngineArgs.add_cli_args
    "--model",
    "--trust-remote-code",
    "--no-trust-remote-code",
    "--hf-token",
    "--max-seq-len-to-capture",
    "--quantization",
    "-q",
    "--max-num-partial-prefills",
    "--enable-chunked-prefill",
    "--no-enable-chunked-prefill",
    "--async-scheduling",
    "--scheduling-policy",
    "--enable-prefix-caching",
    "--no-enable-prefix-caching",
    "--block-size",
    "--guided-decoding-backend",
    "--guided-decoding-disable-fallback",
    "--disable-log-stats",
    "--fail-on-environ-validation",
    "--no-fail-on-environ-validation",
    # rewritten by FlexibleArgumentParser.parse_args (-O3 style)
    "-O",
    # AsyncEngineArgs.add_cli_args
    "--enable-log-requests",
    "--no-enable-log-requests",
    "--disable-log-requests",
    "--no-disable-log-requests",
}


def line_of(release: dict, path: str, needle: str) -> int:
    """1-based line of the first line of ``path`` in ``release`` containing ``needle``."""
    text = textwrap.dedent(release["sources"][path]).lstrip("\n")
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


# --------------------------------------------------------------------------
# Arity variants: the NEW release with a realistic get_kwargs, the OLD one
# with nargs / choices / custom-action flags
# --------------------------------------------------------------------------

#: ``_compute_kwargs`` shaped like vLLM 0.33 (dataclass -> JSON, exactly
#: ``bool | str | None`` -> ``nargs="?"``, bool -> BooleanOptionalAction,
#: Literal -> choices, collections -> nargs, None appended to choices).
COMPUTE_KWARGS_033 = '''
def get_type_hints(type_hint):
    type_hints = set()
    origin = get_origin(type_hint)
    args = get_args(type_hint)
    if origin is Annotated:
        type_hints.update(get_type_hints(args[0]))
    elif origin in {Union, UnionType}:
        for arg in args:
            type_hints.update(get_type_hints(arg))
    else:
        type_hints.add(type_hint)
    return type_hints


def literal_to_kwargs(type_hints):
    type_hint = get_type(type_hints, Literal)
    options = get_args(type_hint)
    option_type = type(options[0])
    kwarg = "metavar" if contains_type(type_hints, str) else "choices"
    return {"type": option_type, kwarg: sorted(options)}


def collection_to_kwargs(type_hints, type):
    type_hint = get_type(type_hints, type)
    types = get_args(type_hint)
    elem_type = types[0]
    if get_origin(elem_type) in {Union, UnionType}:
        elem_type = str
    return {
        "type": elem_type,
        "nargs": "+" if type is not tuple or Ellipsis in types else len(types),
    }


def _compute_kwargs(cls):
    kwargs = {}
    for field in fields(cls):
        type_hints = get_type_hints(field.type)
        type_hints = {dict if is_dict_subclass(th) else th for th in type_hints}
        generator = (th for th in type_hints if is_dataclass(th))
        dataclass_cls = next(generator, None)
        name = field.name
        kwargs[name] = {"default": field.default, "help": ""}
        if dataclass_cls is not None:
            kwargs[name]["type"] = lambda val, cls=dataclass_cls: cls(**json.loads(val))
        elif type_hints == {bool, str, type(None)}:
            kwargs[name]["type"] = str
            kwargs[name]["nargs"] = "?"
            kwargs[name]["const"] = True
        elif contains_type(type_hints, bool):
            kwargs[name]["action"] = argparse.BooleanOptionalAction
        elif contains_type(type_hints, Literal):
            kwargs[name].update(literal_to_kwargs(type_hints))
        elif contains_type(type_hints, tuple):
            kwargs[name].update(collection_to_kwargs(type_hints, tuple))
        elif contains_type(type_hints, list):
            kwargs[name].update(collection_to_kwargs(type_hints, list))
        elif contains_type(type_hints, int):
            if name == "max_model_len":
                kwargs[name]["type"] = human_readable_int
            else:
                kwargs[name]["type"] = int
        elif contains_type(type_hints, float):
            kwargs[name]["type"] = float
        elif contains_type(type_hints, str) or any(is_not_builtin(th) for th in type_hints):
            kwargs[name]["type"] = str
        else:
            raise ValueError(f"Unsupported type {type_hints} for argument {name}.")
        if get_origin(kwargs[name].get("type")) is Literal:
            kwargs[name].update(literal_to_kwargs({kwargs[name]["type"]}))
        if type(None) in type_hints and not contains_type(type_hints, bool):
            kwargs[name]["type"] = optional_type(kwargs[name]["type"])
            if kwargs[name].get("choices"):
                kwargs[name]["choices"].append(None)
    return kwargs
'''

#: The same loop before the ``bool | str | None`` branch (0.9-0.20 shape):
#: such a field contains bool, so it is a BooleanOptionalAction.
COMPUTE_KWARGS_NO_OPTIONAL_STR = COMPUTE_KWARGS_033.replace(
    '''        elif type_hints == {bool, str, type(None)}:
            kwargs[name]["type"] = str
            kwargs[name]["nargs"] = "?"
            kwargs[name]["const"] = True
''',
    "",
)

#: A 0.8.4-shaped get_kwargs nested in add_cli_args: bool fields get no
#: action (the call site gives one), everything else one value.
GET_KWARGS_084 = '''
def get_kwargs(cls):
    kwargs = {}
    for field in fields(cls):
        name = field.name
        kwargs[name] = {"default": field.default, "help": ""}
        if field.type is bool:
            continue
        if is_optional(field.type):
            kwargs[name]["type"] = nullable_str
            continue
        kwargs[name]["type"] = field.type
    return kwargs
'''

_FAKE_COMPUTE_KWARGS = NEW_ARG_UTILS[NEW_ARG_UTILS.index("def _compute_kwargs(cls):") : NEW_ARG_UTILS.index("def get_kwargs(cls):")]

#: Extra NEW-release config fields and flags for the arity tests.
_ARITY_MODEL_FIELDS = '''    max_model_len: int | None = None
    served_model_name: str | list[str] | None = None
    long_lora_scaling_factors: tuple[float, ...] | None = None
    mm_range: tuple[int, int] = (0, 1)
    compilation_config: CompilationConfig = None
    runner: RunnerOption = "auto"
    tokenizer_mode: TokenizerMode | str = "auto"
'''
_ARITY_MODEL_HEAD = '''from dataclasses import dataclass
from typing import Literal

RunnerType = Literal["generate", "pooling"]
RunnerOption = Literal["auto", RunnerType]
TokenizerMode = Literal["auto", "slow"]


@dataclass
class CompilationConfig:
    level: int = 0


'''
_ARITY_ENGINE_FLAGS = '''        model_group.add_argument("--max-model-len", **model_kwargs["max_model_len"])
        model_group.add_argument("--served-model-name", **model_kwargs["served_model_name"])
        model_group.add_argument("--long-lora-scaling-factors", **model_kwargs["long_lora_scaling_factors"])
        model_group.add_argument("--mm-range", **model_kwargs["mm_range"])
        model_group.add_argument("--compilation-config", "-cc", **model_kwargs["compilation_config"])
        model_group.add_argument("--runner", **model_kwargs["runner"])
        model_group.add_argument("--tokenizer-mode", **model_kwargs["tokenizer_mode"])
        model_group.add_argument("--log-config-file", action=DeprecatedAction)
        model_group.add_argument("--skip-x", action=NoValueAction)
'''
_ARITY_ACTIONS = '''

class DeprecatedAction(argparse.Action):
    def __call__(self, parser, namespace, values, option_string=None):
        setattr(namespace, self.dest, values)


class NoValueAction(argparse.Action):
    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)
'''


def arity_new_release(compute_kwargs: str = COMPUTE_KWARGS_033) -> dict:
    """NEW_RELEASE with ``compute_kwargs`` as its get_kwargs machinery and
    extra ModelConfig fields / flags (int, list, tuple, dataclass, nested
    Literal, custom actions)."""
    sources = dict(NEW_RELEASE["sources"])
    arg_utils = NEW_ARG_UTILS.replace(_FAKE_COMPUTE_KWARGS, compute_kwargs.lstrip("\n") + "\n\n")
    arg_utils = arg_utils.replace(
        '        model_group.add_argument("--quantization", "-q", **model_kwargs["quantization"])\n',
        '        model_group.add_argument("--quantization", "-q", **model_kwargs["quantization"])\n'
        + _ARITY_ENGINE_FLAGS,
    )
    sources["vllm/engine/arg_utils.py"] = arg_utils + _ARITY_ACTIONS
    model = NEW_CONFIG_MODEL.replace("from typing import Optional\n", "from typing import Optional\n" + _ARITY_MODEL_HEAD)
    sources["vllm/config/model.py"] = model + _ARITY_MODEL_FIELDS
    return dict(NEW_RELEASE, sources=sources)


_ARITY_OLD_FLAGS = '''        parser.add_argument("--load-format", type=str, choices=[f.value for f in LoadFormat])
        parser.add_argument("--kv-cache-dtype", type=str, choices=["auto", "fp8"])
        parser.add_argument("--block-size", type=int, choices=[8, 16, 32])
        parser.add_argument("--quantization", "-q", type=nullable_str, choices=[*QUANTIZATION_METHODS, None])
        parser.add_argument("--ignore-patterns", action="append", type=str)
        parser.add_argument("--long-lora-scaling-factors", type=nullable_str, nargs=argparse.ONE_OR_MORE)
        parser.add_argument("--num-speculative-tokens", nargs=2, type=int)
        parser.add_argument("--verbose", "-v", action="count")
        parser.add_argument("--disable-logprobs-during-spec-decoding", action=StoreBoolean, nargs="?", const="True")
'''


def arity_old_release() -> dict:
    """OLD_RELEASE with literal ``choices=`` (list, enum comprehension,
    spread of a module list), ``nargs=`` (``"?"``, ``argparse.ONE_OR_MORE``,
    ``2``), ``append`` and ``count`` flags."""
    sources = dict(OLD_RELEASE["sources"])
    arg_utils = OLD_ARG_UTILS.replace(
        '        parser.add_argument("--max-seq-len-to-capture", type=int)\n',
        '        parser.add_argument("--max-seq-len-to-capture", type=int)\n' + _ARITY_OLD_FLAGS,
    )
    arg_utils = arg_utils.replace(
        "from vllm.utils import FlexibleArgumentParser\n",
        "from vllm.utils import FlexibleArgumentParser\n"
        "from vllm.config import LoadFormat\n"
        "from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS\n",
    )
    sources["vllm/engine/arg_utils.py"] = arg_utils
    sources["vllm/entrypoints/openai/cli_args.py"] = OLD_CLI_ARGS.replace(
        '    parser.add_argument("--allow-credentials", action="store_true")\n',
        '    parser.add_argument("--allow-credentials", action="store_true")\n'
        '    parser.add_argument("--lora-modules", type=nullable_str, nargs="+", action=LoRAParserAction)\n',
    ) + "\n\nclass LoRAParserAction(argparse.Action):\n    pass\n"
    return dict(OLD_RELEASE, sources=sources)
