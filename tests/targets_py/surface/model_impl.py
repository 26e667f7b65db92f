"""hf_overrides written as a Python dict, with and without the Transformers backend."""

from vllm import LLM

ARCHS = ["AquilaForCausalLM"]
# ruleid: VUC000-014
a = LLM("acme/aquila", hf_overrides=dict(architectures=["AquilaForCausalLM"]))
# ruleid: VUC000-014
b = LLM("acme/aquila", hf_overrides={"architectures": ["AquilaForCausalLM"]}, model_impl="transformers")
# ok: VUC000-014
c = LLM("acme/aquila", hf_overrides={"architectures": ARCHS, "num_hidden_layers": 2})
# ok: VUC000-014
d = LLM("acme/aquila", hf_overrides=lambda config: config)
