"""Build shim: ship the top-level ``rules/`` directory as ``vllm_upgrade_check.rules``, with
the packs pre-parsed to JSON beside them (``vllm_upgrade_check/knowledge/packbundle.py`` says why).

pyproject.toml holds all metadata; this file only maps the rule packs into the package so
that a non-editable install finds them with the repository gone.
"""

import importlib.util
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).resolve().parent


class BuildWithPackBundle(build_py):
    """``build_py`` that also writes ``vllm_upgrade_check/rules/_packs.json``."""

    def run(self) -> None:
        super().run()
        spec = importlib.util.spec_from_file_location("_vuc_packbundle", HERE / "src/vllm_upgrade_check/knowledge/packbundle.py")
        if spec is None or spec.loader is None:
            return
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        packs = sorted(
            (path.name, path.read_text(encoding="utf-8"))
            for path in (HERE / "rules").iterdir()
            if path.suffix in (".yaml", ".yml") and not path.name.endswith((".draft.yaml", ".draft.yml"))
        )
        target = Path(self.build_lib) / "vllm_upgrade_check" / "rules" / module.BUNDLE_NAME
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(module.compile_bundle(packs), encoding="utf-8")


setup(
    packages=[*find_packages("src"), "vllm_upgrade_check.rules"],
    package_dir={"": "src", "vllm_upgrade_check.rules": "rules"},
    cmdclass={"build_py": BuildWithPackBundle},
)
