import subprocess
import sys


def start(model, port=8000, **opts):
    argv = ["vllm", "serve", model, "--port", str(port)]
    for k, v in opts.items():
        argv += [f"--{k.replace('_', '-')}", str(v)]
    return subprocess.Popen(argv)


# ruleid: VUC0110-003
start("acme/coder-7b", port=9100, preemption_mode="swap")
# ok: VUC0110-003
start("acme/coder-7b", max_num_seqs=4)

cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", "m"]
# ruleid: VUC0101-001
cmd += ["--num-scheduler-steps", "8"]
subprocess.Popen(cmd)
# a command the file does not say: named in a note
subprocess.Popen(" ".join(sys.argv[1:]), shell=True)
