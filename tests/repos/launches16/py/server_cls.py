import subprocess
import sys


class Server:
    """A launcher class: *extra words and **opts keywords build the argv."""

    def start(self, *extra, **opts):
        cmd = ["vllm", "serve", "acme/coder-7b", *extra]
        for k, v in opts.items():
            cmd += [f"--{k.replace('_', '-')}", str(v)]
        return subprocess.Popen(cmd)

    def restart(self):
        # ruleid: VUC0270-002
        self.start("--max-long-partial-prefills", "4")


class Batch:
    def run(self, *extra):
        base_cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", "acme/b"]
        cmd = base_cmd + list(extra)
        subprocess.run(cmd, check=True)


srv = Server()
# ruleid: VUC0280-001
srv.start("--calculate-kv-scales", max_num_seqs=8)
# ruleid: VUC0270-001
Batch().run("--max-num-partial-prefills", "2")
# words the file does not say: an unresolved note at this line
srv.start(*sys.argv[1:])
