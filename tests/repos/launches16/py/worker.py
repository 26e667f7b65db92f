import os
import shlex
import subprocess

# a table of flags the wrapper passes on: reported at warning where each is written
SWITCHES = ["--enforce-eager", "--calculate-kv-scales"]  # ruleid: VUC0280-001
ENV_TO_FLAG = {"PREFILLS": "--max-num-partial-prefills"}  # ruleid: VUC0270-001

argv = ["vllm", "serve", os.environ["MODEL_NAME"]]
argv += shlex.split(os.environ.get("ENGINE_PASSTHROUGH", ""))
subprocess.Popen(argv)
