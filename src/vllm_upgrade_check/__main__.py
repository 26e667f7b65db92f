"""``python -m vllm_upgrade_check`` runs the command-line tool."""

from vllm_upgrade_check.cli import main

main()
