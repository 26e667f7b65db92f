"""diff_surfaces, end to end on the fake eras and on hand-built surfaces."""

import json

import pytest
from derive_fakes import NEW_RELEASE, OLD_RELEASE, write_wheel

from vllm_upgrade_check.knowledge.derive import (
    NAME_CATEGORIES,
    Deprecation,
    ReleaseSurface,
    SourceRef,
    diff_surfaces,
    extract_surface,
)


@pytest.fixture(scope="module")
def diff(tmp_path_factory):
    old = extract_surface(write_wheel(OLD_RELEASE, tmp_path_factory.mktemp("old")))
    new = extract_surface(write_wheel(NEW_RELEASE, tmp_path_factory.mktemp("new")))
    return diff_surfaces(old, new)


def test_versions(diff):
    assert (diff.old_version, diff.new_version) == ("0.6.0", "0.27.0")


def test_cli_flags(diff):
    assert set(diff.removed("cli_flags")) == {
        "--config",
        "--swap-space",
        "--use-v2-block-manager",
        "--tensor-parallel-size",
        "-tp",
        "--disable-sliding-window",
        "--no-disable-sliding-window",
        "--engine-use-ray",
        "--max-cpu-loras",
    }
    # the old help text says "Use --max-seq-len-to-capture instead"
    assert diff.renamed("cli_flags") == (("--max-context-len-to-capture", "--max-seq-len-to-capture"),)
    rename = diff.categories["cli_flags"].renamed[0]
    assert rename.old_ref.path == "vllm/engine/arg_utils.py"
    assert rename.new_ref.path == "vllm/engine/arg_utils.py"
    assert rename.deprecation.kind == "cli_flag"
    assert "--max-num-partial-prefills" in diff.added("cli_flags")
    assert "--host" not in diff.added("cli_flags") and "--host" not in diff.removed("cli_flags")


def test_engine_args(diff):
    assert set(diff.removed("engine_args")) == {
        "swap_space",
        "use_v2_block_manager",
        "tensor_parallel_size",
        "disable_log_requests",
    }
    assert diff.renamed("engine_args") == (("max_context_len_to_capture", "max_seq_len_to_capture"),)
    assert set(diff.added("engine_args")) == {
        "trust_remote_code",
        "hf_token",
        "max_num_partial_prefills",
        "enable_chunked_prefill",
        "block_size",
        "enable_log_requests",
    }


def test_other_categories(diff):
    assert set(diff.removed("env_vars")) == {"VLLM_USE_V1", "VLLM_LATE_ADDED"}
    assert set(diff.added("env_vars")) == {"VLLM_NEW_THING"}
    assert diff.categories["env_vars"].removed[0].ref.path == "vllm/envs.py"
    assert diff.removed("metrics") == ()
    assert diff.renamed("metrics") == (("vllm:gpu_cache_usage_perc", "vllm:kv_cache_usage_perc"),)
    assert set(diff.removed("quantization_methods")) == {"squeezellm"}
    assert set(diff.added("quantization_methods")) == {"fp8"}
    assert set(diff.removed("load_formats")) == {"pt"}
    assert set(diff.added("load_formats")) == {"hf", "dummy"}
    assert set(diff.removed("architectures")) == {"MistralForCausalLM", "MistralModel"}
    assert set(diff.removed("sampling_params")) == {"best_of"}


def test_requirements(diff):
    changes = {c.name: c for c in diff.requirements}
    assert set(changes) == {"numpy", "torch", "xformers", "outlines", "outlines-core"}
    torch = changes["torch"]
    assert (torch.kind, torch.old_specifier, torch.new_specifier) == ("changed", "==2.4.0", "==2.9.0")
    assert torch.old_refs == (SourceRef("vllm-0.6.0.dist-info/METADATA", 7),)
    assert torch.new_refs == (SourceRef("vllm-0.27.0.dist-info/METADATA", 7),)
    numpy = changes["numpy"]
    assert (numpy.old_specifier, numpy.new_specifier) == ("<2.0.0", "")
    xformers = changes["xformers"]
    assert xformers.kind == "removed"
    assert xformers.old == (OLD_RELEASE["requires"][2],)
    assert xformers.new == () and xformers.new_specifier is None
    assert changes["outlines-core"].kind == "added"
    assert changes["outlines-core"].new_specifier == "==0.2.11"


def test_python_and_cuda(diff):
    assert (diff.requires_python.old, diff.requires_python.new) == (">=3.8", ">=3.10")
    assert diff.requires_python.new_ref == SourceRef("vllm-0.27.0.dist-info/METADATA", 5)
    assert (diff.cuda_major.old, diff.cuda_major.new) == (12, 13)
    assert diff.cuda_major.new_ref == SourceRef("vllm/_C.abi3.so", 0)


def test_json_is_serialisable(diff):
    data = json.loads(json.dumps(diff.to_json()))
    assert set(data["categories"]) == set(NAME_CATEGORIES)
    assert data["cuda_major"]["new"] == 13


# -- hand-built surfaces ----------------------------------------------------------


def _surface(version, *, requires=(), deprecations=(), python=">=3.9", cuda=12, **names):
    cats = {
        c: {n: SourceRef(f"vllm/{c}.py", i + 1) for i, n in enumerate(names.get(c, ()))}
        for c in NAME_CATEGORIES
    }
    return ReleaseSurface(
        version=version,
        requires_python=python,
        requires_dist=tuple(requires),
        requires_dist_refs=tuple(SourceRef("M", i + 1) for i in range(len(requires))),
        cuda_major=cuda,
        deprecations=tuple(deprecations),
        **cats,
    )


def test_identical_surfaces_have_empty_diff():
    s = _surface("1", requires=["torch==2.4.0"], cli_flags=["--a"])
    d = diff_surfaces(s, s)
    assert all(not (c.removed or c.added or c.renamed) for c in d.categories.values())
    assert d.requirements == () and d.requires_python is None and d.cuda_major is None


def test_requirement_formatting_and_order_are_not_changes():
    a = _surface("1", requires=["torch == 2.4.0", "xformers; platform_system == 'Linux'", "ray>=2.9"])
    b = _surface("2", requires=["Ray>=2.9", "torch==2.4.0", 'xformers ; platform_system == "Linux"'])
    assert diff_surfaces(a, b).requirements == ()


def test_marker_only_change_is_a_change():
    a = _surface("1", requires=["xformers==0.0.27; platform_machine == 'x86_64'"])
    b = _surface("2", requires=["xformers==0.0.27; platform_machine == 'aarch64'"])
    (change,) = diff_surfaces(a, b).requirements
    assert change.kind == "changed" and change.old_specifier == change.new_specifier == "==0.0.27"


def test_rename_needs_replacement_present_in_new():
    dep = Deprecation(
        "env_var",
        "VLLM_OLD",
        "VLLM_OLD is deprecated, use VLLM_NEW instead",
        SourceRef("vllm/envs.py", 3),
        "VLLM_NEW",
    )
    old = _surface("1", env_vars=["VLLM_OLD", "VLLM_NEW"], deprecations=[dep])
    assert diff_surfaces(old, _surface("2", env_vars=["VLLM_NEW"])).renamed("env_vars") == (
        ("VLLM_OLD", "VLLM_NEW"),
    )
    assert diff_surfaces(old, _surface("2", env_vars=["VLLM_NEW"])).removed("env_vars") == ()
    # replacement absent: plain removal
    gone = diff_surfaces(old, _surface("2", env_vars=["VLLM_OTHER"]))
    assert gone.renamed("env_vars") == () and set(gone.removed("env_vars")) == {"VLLM_OLD", "VLLM_NEW"}


def test_rename_spellings_are_normalised_per_category():
    # a message may spell a flag as a field name, or an engine arg as a flag
    dep = Deprecation("name", "disable_log_requests", "m", SourceRef("x.py", 1), "--enable-log-requests")
    old = _surface(
        "1",
        cli_flags=["--disable-log-requests", "--enable-log-requests"],
        engine_args=["disable_log_requests", "enable_log_requests"],
        deprecations=[dep],
    )
    new = _surface("2", cli_flags=["--enable-log-requests"], engine_args=["enable_log_requests"])
    d = diff_surfaces(old, new)
    assert d.renamed("cli_flags") == (("--disable-log-requests", "--enable-log-requests"),)
    assert d.renamed("engine_args") == (("disable_log_requests", "enable_log_requests"),)


def test_python_and_cuda_changes_detected_alone():
    d = diff_surfaces(_surface("1", python=">=3.9", cuda=12), _surface("2", python=">=3.10", cuda=None))
    assert (d.requires_python.old, d.requires_python.new) == (">=3.9", ">=3.10")
    assert (d.cuda_major.old, d.cuda_major.new) == (12, None)


def test_config_field_rename_keeps_the_class():
    dep = Deprecation(
        "config_field",
        "use_cudagraph",
        "use_cudagraph is deprecated, use cudagraph_mode=NONE instead.",
        SourceRef("vllm/config/compilation.py", 444),
        "cudagraph_mode",
    )
    old = _surface(
        "1",
        config_fields=["CompilationConfig.use_cudagraph", "CompilationConfig.cudagraph_mode", "Other.use_x"],
        deprecations=[dep],
    )
    new = _surface("2", config_fields=["CompilationConfig.cudagraph_mode"])
    d = diff_surfaces(old, new)
    assert d.renamed("config_fields") == (
        ("CompilationConfig.use_cudagraph", "CompilationConfig.cudagraph_mode"),
    )
    assert d.removed("config_fields") == ("Other.use_x",)


def test_short_flag_spellings_are_kept():
    dep = Deprecation("cli_flag", "-spec-draft-tp", "m", SourceRef("x.py", 1), "--speculative-config")
    old = _surface("1", cli_flags=["-spec-draft-tp", "--speculative-config"], deprecations=[dep])
    new = _surface("2", cli_flags=["--speculative-config"])
    assert diff_surfaces(old, new).renamed("cli_flags") == (("-spec-draft-tp", "--speculative-config"),)
