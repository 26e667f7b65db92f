"""Python source read with :mod:`ast` (never imported or run): how code configures vLLM.

What is read (vLLM's Python API as of its ``vllm/__init__.py`` exports and
``vllm/engine/arg_utils.py``):

- ``LLM(...)``, ``EngineArgs(...)``, ``AsyncEngineArgs(...)`` keywords -> ``arg`` facts with
  origin ``python`` (name = the keyword), a ``model`` fact for the model, and one ``launch``
  fact per call listing every keyword (for absence rules);
- ``SamplingParams(...)`` keywords -> ``arg`` facts with origin ``sampling``: sampling
  parameters are not engine args, so rules reach them only with ``origins: [sampling]``;
- ``**d`` splats where ``d`` is a dict literal, ``dict(...)`` call, or a name bound to one
  earlier in the same function (or module), with later ``d["k"] = v`` / ``d.update(...)``
  applied; a splat that cannot be resolved marks the launch fact ``resolved=False``;
- ``from vllm... import name`` / ``import vllm.x`` -> ``import`` facts;
- ``os.environ["VLLM_X"] = ...``, ``os.environ.setdefault(...)``, ``os.environ.update({...})``,
  ``os.putenv(...)`` -> ``env_var`` facts;
- ``subprocess.run/Popen/call/check_call/check_output``, ``os.system``, ``os.exec*``,
  ``os.spawn*``, ``asyncio.create_subprocess_exec/_shell`` (the command also named by its
  keyword: ``args=``, ``cmd=``), and the shell lines of ``os.popen``,
  ``subprocess.getoutput/getstatusoutput``: argv lists (a flag
  and its value in two elements; lists built with ``+``, ``+=``, ``.append``, ``.extend``
  and comprehensions over literal dicts such as ``[f"--{k.replace('_', '-')}", str(v)]``)
  and command strings (parsed as shell) that launch vLLM -> the same facts as a shell launch;
- ``x.reasoning_content``, ``x["reasoning_content"]``, ``x.get("reasoning_content")`` ->
  ``response_field`` facts (client code; read even when the file does not mention vLLM).

Only names imported from ``vllm`` count as ``LLM``/``EngineArgs``/...; a class of the same
name from another library is not vLLM. Comments and docstrings are never read as code.

The modules: :mod:`.scanner` (:class:`~.scanner.PythonSourceScanner`, which files are read
and which facts reported), :mod:`.walker` (the walk over a file's tree, turning calls and reads
into facts), :mod:`.keywords` (a call's keywords and the dicts behind them), :mod:`.argv` (a
subprocess argv), :mod:`.responses` (client code's response reads), :mod:`.source` (where each
node is written; :mod:`.literals`: where each character of a string literal is), :mod:`.scope` (what a name is bound to), :mod:`.names` (what is recognised by
name).
"""
