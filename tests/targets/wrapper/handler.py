import os
import shlex
import subprocess

argv = ["vllm", "serve", os.environ["MODEL_NAME"]]
for name in ("CALCULATE_KV_SCALES", "MAX_NUM_PARTIAL_PREFILLS"):
    if os.environ.get(name):
        argv += ["--" + name.lower().replace("_", "-"), os.environ[name]]
argv += shlex.split(os.environ.get("ENGINE_PASSTHROUGH", ""))
subprocess.Popen(argv)
