"""Build shim: ship the top-level ``rules/`` directory as ``vllm_upgrade_check.rules``.

pyproject.toml holds all metadata; this file only maps the rule packs into the package so
that a non-editable install finds them with the repository gone.
"""

from setuptools import find_packages, setup

setup(
    packages=[*find_packages("src"), "vllm_upgrade_check.rules"],
    package_dir={"": "src", "vllm_upgrade_check.rules": "rules"},
)
