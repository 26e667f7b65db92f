"""extract_surface on fake releases shaped like each vLLM era."""

import json

import pytest
from derive_fakes import NEW_FLAGS, NEW_RELEASE, OLD_FLAGS, OLD_RELEASE, line_of, write_tree, write_wheel

from vllm_upgrade_check.knowledge.derive import NAME_CATEGORIES, ReleaseSurface, SourceRef, extract_surface


@pytest.fixture(scope="module")
def old(tmp_path_factory):
    return extract_surface(write_wheel(OLD_RELEASE, tmp_path_factory.mktemp("old")))


@pytest.fixture(scope="module")
def new(tmp_path_factory):
    return extract_surface(write_wheel(NEW_RELEASE, tmp_path_factory.mktemp("new")))


# -- metadata and binaries ----------------------------------------------------


def test_metadata(old):
    assert old.version == "0.6.0"
    assert old.requires_python == ">=3.8"
    assert old.requires_dist == tuple(OLD_RELEASE["requires"])
    dist = "vllm-0.6.0.dist-info/METADATA"
    assert old.requires_python_ref == SourceRef(dist, 5)
    assert old.requires_dist_refs == tuple(SourceRef(dist, 6 + i) for i in range(5))


def test_cuda_major_prefers_vllm_C(old, new):
    # vllm/_C links libcudart.so.12 (old) / libcublas.so.13 (new); the other
    # extensions name other majors and must not win
    assert (old.cuda_major, old.cuda_ref) == (12, SourceRef("vllm/_C.abi3.so", 0))
    assert (new.cuda_major, new.cuda_ref) == (13, SourceRef("vllm/_C.abi3.so", 0))


def test_no_compiled_extension_means_no_cuda(tmp_path):
    release = dict(OLD_RELEASE, binaries={})
    assert extract_surface(write_wheel(release, tmp_path)).cuda_major is None


def test_unparseable_file_is_reported(old):
    assert old.unparsed == ("vllm/broken.py",)


# -- CLI flags ----------------------------------------------------------------


def test_old_era_flags(old):
    # literal add_argument calls reached from the serve subparser of
    # vllm/scripts.py; chat/complete/top-level and unrelated parsers excluded
    assert set(old.cli_flags) == OLD_FLAGS


def test_old_era_flag_refs(old):
    assert old.cli_flags["--config"] == SourceRef(
        "vllm/scripts.py", line_of(OLD_RELEASE, "vllm/scripts.py", '"--config"')
    )
    cli_args = "vllm/entrypoints/openai/cli_args.py"
    assert old.cli_flags["--host"] == SourceRef(cli_args, line_of(OLD_RELEASE, cli_args, '"--host"'))
    assert old.cli_flags["-tp"] == old.cli_flags["--tensor-parallel-size"]
    assert old.cli_flags["--no-disable-sliding-window"] == old.cli_flags["--disable-sliding-window"]


def test_new_era_flags(new):
    assert set(new.cli_flags) == NEW_FLAGS


def test_new_era_loop_flags_point_at_dataclass_fields(new):
    path = "vllm/entrypoints/launchers/cli_args.py"
    assert new.cli_flags["--port"] == SourceRef(path, line_of(NEW_RELEASE, path, "port: int"))
    assert new.cli_flags["--lora-modules"] == SourceRef(
        path, line_of(NEW_RELEASE, path, "lora_modules: list")
    )
    assert new.cli_flags["--max-num-partial-prefills"].path == "vllm/engine/arg_utils.py"
    assert new.cli_flags["-O"].path == "vllm/utils/argparse_utils.py"


def test_bool_fields_need_boolean_optional_action_semantics(tmp_path):
    # an 0.8.4-style get_kwargs that does not set BooleanOptionalAction
    # produces no --no-X forms for bool config fields
    sources = dict(NEW_RELEASE["sources"])
    sources["vllm/engine/arg_utils.py"] = sources["vllm/engine/arg_utils.py"].replace(
        'kwargs[name]["action"] = argparse.BooleanOptionalAction', "pass"
    )
    surface = extract_surface(write_wheel(dict(NEW_RELEASE, sources=sources), tmp_path))
    literal_boolean_optional = {
        "--fail-on-environ-validation",
        "--enable-log-requests",
        "--disable-log-requests",
    }
    expected = {f for f in NEW_FLAGS if not f.startswith("--no-") or "--" + f[5:] in literal_boolean_optional}
    assert set(surface.cli_flags) == expected


# -- other categories ---------------------------------------------------------


def test_engine_args(old, new):
    assert set(old.engine_args) == {
        "model",
        "swap_space",
        "use_v2_block_manager",
        "max_context_len_to_capture",
        "max_seq_len_to_capture",
        "tensor_parallel_size",
        "disable_log_requests",
    }
    assert set(new.engine_args) == {
        "model",
        "trust_remote_code",
        "hf_token",
        "max_seq_len_to_capture",
        "max_num_partial_prefills",
        "enable_chunked_prefill",
        "block_size",
        "enable_log_requests",
    }
    arg_utils = "vllm/engine/arg_utils.py"
    assert old.engine_args["swap_space"] == SourceRef(
        arg_utils, line_of(OLD_RELEASE, arg_utils, "swap_space: float")
    )


def test_config_fields(old, new):
    assert set(old.config_fields) == {
        "ModelConfig.model",
        "ModelConfig.tokenizer",
        "ModelConfig.max_context_len_to_capture",
        "ModelConfig.max_seq_len_to_capture",
        "SchedulerConfig.max_num_batched_tokens",
        "SchedulerConfig.max_num_seqs",
        "SchedulerConfig.use_v2_block_manager",
        "LoadConfig.load_format",
        "LoadConfig.download_dir",
        "LoadConfig.ignore_patterns",
    }
    assert set(new.config_fields) == {
        "SchedulerConfig.max_num_batched_tokens",
        "SchedulerConfig.max_num_partial_prefills",
        "SchedulerConfig.enable_chunked_prefill",
        "SchedulerConfig.async_scheduling",
        "SchedulerConfig.policy",
        "SchedulerConfig.is_encoder_decoder",
        "CacheConfig.cpu_offload_gb",
        "CacheConfig.block_size",
        "CacheConfig.enable_prefix_caching",
        "BaseCacheConfig.cpu_offload_gb",
        "ModelConfig.model",
        "ModelConfig.trust_remote_code",
        "ModelConfig.hf_token",
        "ModelConfig.max_seq_len_to_capture",
        "ModelConfig.quantization",
    }
    base = "vllm/config/base.py"
    assert new.config_fields["CacheConfig.cpu_offload_gb"] == SourceRef(
        base, line_of(NEW_RELEASE, base, "cpu_offload_gb")
    )


def test_sampling_params(old, new):
    assert set(old.sampling_params) == {"n", "best_of", "temperature"}
    assert set(new.sampling_params) == {"n", "temperature", "max_tokens"}


def test_env_vars(old, new):
    assert set(old.env_vars) == {
        "VLLM_HOST_IP",
        "VLLM_USE_V1",
        "VLLM_ENGINE_ITERATION_TIMEOUT_S",
        "VLLM_LATE_ADDED",
    }
    assert old.env_vars["VLLM_USE_V1"] == SourceRef(
        "vllm/envs.py", line_of(OLD_RELEASE, "vllm/envs.py", '"VLLM_USE_V1":')
    )
    assert set(new.env_vars) == {"VLLM_HOST_IP", "VLLM_ENGINE_ITERATION_TIMEOUT_S", "VLLM_NEW_THING"}


def test_metrics(old, new):
    assert set(old.metrics) == {
        "vllm:num_requests_running",
        "vllm:gpu_cache_usage_perc",
        "vllm:kv_cache_usage_perc",
        "vllm:prompt_tokens_total",
    }
    # counters are stored as exposed: prometheus_client appends _total
    # (also through a list of specs fed to a counter in a loop, and through a
    # module constant); a counter's family name alone is not a metric
    assert set(new.metrics) == {
        "vllm:num_requests_running",
        "vllm:kv_cache_usage_perc",
        "vllm:prompt_tokens_total",
        "vllm:spec_decode_num_drafts_total",
        "vllm:spec_decode_num_draft_tokens_total",
        "vllm:kv_offload_total_bytes_total",
    }
    loggers = "vllm/v1/metrics/loggers.py"
    assert new.metrics["vllm:prompt_tokens_total"] == SourceRef(
        loggers, line_of(NEW_RELEASE, loggers, "vllm:prompt_tokens")
    )


def test_quantization_methods(old, new):
    assert set(old.quantization_methods) == {"awq", "squeezellm", "compressed-tensors"}
    assert set(new.quantization_methods) == {"awq", "fp8", "compressed-tensors"}


def test_load_formats(old, new):
    assert set(old.load_formats) == {"auto", "pt", "safetensors"}
    assert old.load_formats["pt"] == SourceRef(
        "vllm/config.py", line_of(OLD_RELEASE, "vllm/config.py", 'PT = "pt"')
    )
    assert set(new.load_formats) == {"auto", "hf", "safetensors", "dummy"}


def test_architectures(old, new):
    assert set(old.architectures) == {"LlamaForCausalLM", "MistralForCausalLM", "MistralModel"}
    assert set(new.architectures) == {
        "LlamaForCausalLM",
        "Qwen3ForCausalLM",
        "BertModel",
        "EagleLlamaForCausalLM",
    }
    registry = "vllm/model_executor/models/registry.py"
    assert new.architectures["BertModel"] == SourceRef(
        registry, line_of(NEW_RELEASE, registry, '"BertModel"')
    )


def test_modules(old):
    assert set(old.modules) == {
        "vllm",
        "vllm.engine",
        "vllm.engine.arg_utils",
        "vllm.engine.metrics",
        "vllm.entrypoints.openai.cli_args",
        "vllm.entrypoints.api_server",
        "vllm.scripts",
        "vllm.config",
        "vllm.envs",
        "vllm.model_executor.models",
        "vllm.model_executor.layers.quantization",
        "vllm.sampling_params",
        "vllm.broken",
    }


# -- deprecations -------------------------------------------------------------


def _deprecations(surface):
    return {(d.kind, d.name, d.replacement) for d in surface.deprecations}


def test_old_deprecations(old):
    assert _deprecations(old) == {
        ("cli_flag", "--max-context-len-to-capture", "--max-seq-len-to-capture"),
        ("cli_flag", "--engine-use-ray", None),
        ("engine_arg", "max_context_len_to_capture", "max_seq_len_to_capture"),
        ("metric", "vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"),
    }
    dep = next(d for d in old.deprecations if d.name == "max_context_len_to_capture")
    assert dep.ref == SourceRef(
        "vllm/config.py", line_of(OLD_RELEASE, "vllm/config.py", "`max_context_len_to_capture` is deprecated")
    )
    assert dep.message == "`max_context_len_to_capture` is deprecated. Use `max_seq_len_to_capture` instead."


def test_new_deprecations(new):
    assert _deprecations(new) == {
        ("cli_flag", "--guided-decoding-backend", None),
        ("cli_flag", "--guided-decoding-disable-fallback", None),
        ("cli_flag", "--disable-log-requests", "--enable-log-requests"),
        ("name", "swap_space", "cpu_offload_gb"),
    }


# -- input layouts and serialisation -------------------------------------------


def test_wheel_unpacked_dir_and_site_packages_agree(tmp_path, new):
    unpacked = extract_surface(write_tree(NEW_RELEASE, tmp_path / "unpacked"))
    site = extract_surface(write_tree(NEW_RELEASE, tmp_path / "site", site_packages=True))
    assert unpacked.to_json() == new.to_json()
    assert site.to_json() == new.to_json()


def test_needed_listing_fallback_for_trees_without_binaries(tmp_path):
    root = write_tree(dict(OLD_RELEASE, binaries={}), tmp_path)
    (root / "NEEDED.txt").write_text(
        "== vllm/_moe_C.abi3.so\n"
        " 0x0000000000000001 (NEEDED)             Shared library: [libcudart.so.11]\n"
        "== vllm/_C.abi3.so\n"
        " 0x0000000000000001 (NEEDED)             Shared library: [libtorch.so]\n"
        " 0x0000000000000001 (NEEDED)             Shared library: [libcudart.so.12]\n"
    )
    surface = extract_surface(root)
    assert (surface.cuda_major, surface.cuda_ref) == (12, SourceRef("vllm/_C.abi3.so", 0))


def test_directory_without_vllm_is_rejected(tmp_path):
    with pytest.raises(ValueError):
        extract_surface(tmp_path)


def test_json_round_trip(old, new):
    for surface in (old, new):
        data = json.loads(json.dumps(surface.to_json()))
        assert ReleaseSurface.from_json(data) == surface
        assert data["counts"] == {c: len(surface.names(c)) for c in NAME_CATEGORIES}


def test_surface_is_immutable(old):
    with pytest.raises(AttributeError):
        old.version = "x"
    with pytest.raises(TypeError):
        old.cli_flags["--new"] = SourceRef("x", 1)
