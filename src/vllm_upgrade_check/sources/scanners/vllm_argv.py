"""vLLM launch recognition: which argv is a vLLM launch, and the facts of one that is.

Recognised entry points (vLLM's own, from its ``pyproject.toml`` script and module layout):

- ``vllm serve [MODEL] ...``, ``vllm run-batch ...`` and ``vllm bench throughput|latency|startup|
  mm-processor ...`` (the ``vllm`` subcommands that parse engine args, see :data:`VLLM_SUBCOMMANDS`);
- ``python -m vllm.entrypoints.openai.api_server ...`` and ``python -m vllm.entrypoints.api_server ...``
  (also through ``torchrun -m``);
- any of these behind a wrapper (``env A=1``, ``timeout 60``, ``srun -n 2``, ``ray job submit --``,
  ``uv run`` ..., see :data:`WRAPPERS`);
- ``docker run|podman run [options] IMAGE ...`` where IMAGE is a vLLM image (its entry point
  is the OpenAI server, so the remaining argv are vLLM CLI flags);
- a container whose image is a vLLM image and whose ``args`` (Kubernetes) or ``command``
  (compose) are the flags alone.

:func:`find_launch` recognises one (a :class:`Launch`); :func:`launch_facts` yields its
facts: the image's (:mod:`.images`), the env vars it sets, and what its words set
(:func:`~vllm_upgrade_check.sources.scanners.arg_facts.arg_facts`).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from vllm_upgrade_check.knowledge.subcommands import MODULE_SUBCOMMANDS, SUBCOMMANDS, subcommand
from vllm_upgrade_check.model.facts import UNKNOWN_IMAGE_ENTRY, VENDOR_ENTRY, Fact, FactKind
from vllm_upgrade_check.parsing.argv_words import after_options
from vllm_upgrade_check.parsing.words import Token, token_location
from vllm_upgrade_check.sources.scanners.arg_facts import arg_facts, env_fact
from vllm_upgrade_check.sources.scanners.images import (
    image_fact,
    image_hint,
    is_vllm_image,
    split_image,
    vendor_vllm_image,
)

VLLM_MODULES = frozenset(
    {
        "vllm.entrypoints.openai.api_server",
        "vllm.entrypoints.api_server",
        "vllm.entrypoints.cli.main",
        "vllm.entrypoints.openai.run_batch",
    }
)
"""Modules run with ``python -m`` that parse vLLM CLI flags."""


@dataclass(frozen=True)
class Wrapper:
    """How a command that runs another command (``env``, ``timeout``, ``srun`` ...) is read.

    The wrapper's own words are followed by options (words starting with ``-``; those in
    ``value_opts`` take the next word as their value unless written ``--opt=value``), then
    ``positionals`` words of its own (``timeout``'s DURATION), then the wrapped command.

    Attributes:
        value_opts: options that take a separate value word.
        positionals: words after the options that belong to the wrapper.
        assignments: ``NAME=value`` words before the command set environment variables
            (``env``, ``sudo``).
        dash_dash: the wrapped command is everything after a ``--`` word when there is one
            (``ray job submit -- CMD``).
    """

    value_opts: frozenset[str] = frozenset()
    positionals: int = 0
    assignments: bool = False
    dash_dash: bool = False


def _opts(text: str) -> frozenset[str]:
    return frozenset(text.split())


WRAPPERS: dict[tuple[str, ...], Wrapper] = {
    ("exec",): Wrapper(_opts("-a")),
    ("nohup",): Wrapper(),
    ("time",): Wrapper(_opts("-f --format -o --output")),
    ("sudo",): Wrapper(
        _opts(
            "-u --user -g --group -C --close-from -h --host -p --prompt -D --chdir -r --role -t --type -U --other-user"
        ),
        assignments=True,
    ),
    ("env",): Wrapper(_opts("-u --unset -C --chdir -S --split-string"), assignments=True),
    ("stdbuf",): Wrapper(_opts("-i -o -e --input --output --error")),
    ("nice",): Wrapper(_opts("-n --adjustment")),
    ("ionice",): Wrapper(_opts("-c --class -n --classdata -p --pid -P --pgid -u --uid")),
    ("taskset",): Wrapper(positionals=1),
    ("numactl",): Wrapper(
        _opts("-N --cpunodebind -m --membind -C --physcpubind -p --preferred -i --interleave")
    ),
    ("timeout",): Wrapper(_opts("-s --signal -k --kill-after"), positionals=1),
    ("srun",): Wrapper(
        _opts(
            """-n --ntasks -N --nodes -c --cpus-per-task -p --partition -t --time -G --gpus --gres
            -J --job-name -A --account -o --output -e --error -i --input -w --nodelist -x --exclude
            -C --constraint -q --qos -D --chdir -d --dependency -m --distribution --mem --mem-per-cpu
            --mem-per-gpu --gpus-per-node --gpus-per-task --ntasks-per-node --cpus-per-gpu --export
            --mpi --cpu-bind --reservation --container-image --container-mounts --container-workdir
            --container-name --time-min --begin --signal --jobid --het-group"""
        )
    ),
    ("ray", "job", "submit"): Wrapper(
        _opts(
            """--address --job-id --submission-id --runtime-env --runtime-env-json --working-dir
            --metadata-json --entrypoint-num-cpus --entrypoint-num-gpus --entrypoint-memory
            --entrypoint-resources --headers --log-style --log-color -v"""
        ),
        dash_dash=True,
    ),
    ("uv", "run"): Wrapper(
        _opts(
            "--with --with-editable --with-requirements --python -p --project --directory --env-file --extra --group --package --index --index-url --from"
        )
    ),
    ("poetry", "run"): Wrapper(_opts("-C --directory -P --project")),
    ("pipx", "run"): Wrapper(_opts("--spec --python --pip-args --index-url")),
    ("docker", "exec"): Wrapper(_opts("-e --env --env-file -u --user -w --workdir --detach-keys"), positionals=1),
    ("podman", "exec"): Wrapper(_opts("-e --env --env-file -u --user -w --workdir --detach-keys"), positionals=1),
    ("kubectl", "exec"): Wrapper(_opts("-c --container -n --namespace --context"), dash_dash=True),
    ("conda", "run"): Wrapper(_opts("-n --name -p --prefix --cwd")),
    ("mamba", "run"): Wrapper(_opts("-n --name -p --prefix --cwd")),
    ("tini",): Wrapper(_opts("-p -e")),
    ("tini-static",): Wrapper(_opts("-p -e")),
    ("docker-init",): Wrapper(_opts("-p -e")),
    ("dumb-init",): Wrapper(_opts("-r --rewrite")),
    ("catatonit",): Wrapper(),
    ("gosu",): Wrapper(positionals=1),
    ("su-exec",): Wrapper(positionals=1),
}
"""Commands that run the command after them, keyed by their leading words (coreutils,
``sudo``, Slurm ``srun``, ``ray job submit``, Python environment runners, ``docker exec
CONTAINER``/``kubectl exec POD --`` into a running container, and the init programs a
container's ``ENTRYPOINT`` starts with: ``tini [-g] [-p SIGNAL] --`` (``docker-init`` is
Docker's ``--init`` copy of it), ``dumb-init [-r s:r] --``, ``catatonit --``, ``gosu USER``
and ``su-exec USER``)."""

PYTHON_RUNNERS: dict[str, frozenset[str]] = {
    "python": _opts("-W -X -c"),
    "torchrun": _opts(
        """--nproc-per-node --nproc_per_node --nnodes --node-rank --node_rank --master-addr
        --master_addr --master-port --master_port --rdzv-endpoint --rdzv_endpoint --rdzv-backend
        --rdzv_backend --rdzv-id --rdzv_id --rdzv-conf --rdzv_conf --max-restarts --max_restarts
        --monitor-interval --monitor_interval --start-method --start_method --role --log-dir
        --log_dir -r --redirects -t --tee --local-addr --local_addr --local-ranks-filter
        --local_ranks_filter --logs-specs --logs_specs"""
    ),
}
"""Programs whose ``-m MODULE`` runs a Python module (``python3.12`` counts as ``python``;
``torchrun -m`` / ``--module`` per torch.distributed.run), with their value-taking options."""

VLLM_SUBCOMMANDS: dict[tuple[str, ...], bool] = {
    sub.words: sub.positional_model for sub in SUBCOMMANDS if sub.engine_args
}
"""``vllm`` subcommands that parse engine args, and whether the first positional is the
model (:data:`~vllm_upgrade_check.knowledge.subcommands.SUBCOMMANDS`: ``serve``,
``run-batch``, ``bench throughput|latency|startup|mm-processor``). ``bench serve``, ``chat``
and ``complete`` are HTTP clients and take no engine args."""

_DOCKER_VALUE_OPTS = frozenset(
    """-e --env --env-file -v --volume -p --publish --name --gpus --ipc --shm-size --runtime
    --network --net -w --workdir --entrypoint --mount --device -u --user --ulimit --cpus
    --memory -m --label -l --platform --restart --hostname -h --add-host --cap-add --cap-drop
    --security-opt --pid --group-add --log-driver --log-opt --cpuset-cpus --memory-swap
    --health-cmd --health-interval --health-retries --health-timeout --stop-signal
    --stop-timeout --tmpfs --expose --dns --uts --userns --cgroupns --pull --cidfile
    --device-cgroup-rule --storage-opt --sysctl --volumes-from --link --mac-address --ip
    --ip6 --network-alias --label-file --annotation""".split()
)


@dataclass(frozen=True)
class Launch:
    """A recognised vLLM launch inside an argv.

    Attributes:
        entry: ``vllm serve``, ``python -m <module>``, or ``image <repo>``.
        args: the argv after the entry point (vLLM flags and positionals).
        start: the first token of the launch (for its location).
        image: the image token, when launched through ``docker run``.
        env: ``NAME=value`` tokens given with ``docker run -e``.
        positional_model: ``True`` when the first positional is the model (``vllm serve``).
        command: the ``vllm`` subcommand's words (``("bench", "throughput")``), whose own
            flags (:mod:`~vllm_upgrade_check.knowledge.subcommands`) are no engine flags;
            empty for the server.
    """

    entry: str
    args: tuple[Token, ...]
    start: Token
    image: Token | None = None
    env: tuple[Token, ...] = ()
    positional_model: bool = True
    command: tuple[str, ...] = ()


_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")


def _wrappers_by_head() -> dict[str, list[tuple[tuple[str, ...], Wrapper]]]:
    """:data:`WRAPPERS` grouped by their first word, each group in the table's order."""
    out: dict[str, list[tuple[tuple[str, ...], Wrapper]]] = {}
    for words, wrapper in WRAPPERS.items():
        out.setdefault(words[0], []).append((words, wrapper))
    return out


_BY_HEAD = _wrappers_by_head()


def _match_wrapper(tokens: Sequence[Token]) -> tuple[int, Wrapper] | None:
    """``(words, wrapper)`` of the first :data:`WRAPPERS` entry that ``tokens`` start with
    (followed by at least one more word), asked of the entries with the same first word
    only: every command of a file asks, so it must not compare with the whole table."""
    head = tokens[0].text.rsplit("/", 1)[-1]
    for words, wrapper in _BY_HEAD.get(head, ()):
        n = len(words)
        if len(tokens) > n and all(tokens[k].text == words[k] for k in range(1, n)):
            return n, wrapper
    return None


def strip_wrappers(argv: Sequence[Token]) -> tuple[list[Token], list[Token]]:
    """The wrapped command of ``argv`` with every :data:`WRAPPERS` prefix removed, and the
    ``NAME=value`` words those wrappers set (``env VLLM_USE_V1=1 CMD``).

    ``timeout -k 5 60 env A=1 vllm serve m`` -> (``vllm serve m`` tokens, [``A=1``]).
    """
    tokens = list(argv)
    env: list[Token] = []
    while tokens:
        found = _match_wrapper(tokens)
        if found is None:
            break
        i, wrapper = found
        rest = [t.text for t in tokens[i:]]
        if wrapper.dash_dash and "--" in rest:
            tokens = tokens[i + rest.index("--") + 1 :]
            continue
        positionals = wrapper.positionals
        while i < len(tokens):
            i = after_options([t.text for t in tokens], i, wrapper.value_opts)
            if i >= len(tokens) or tokens[i - 1].text == "--":
                break
            if wrapper.assignments and _ASSIGNMENT.match(tokens[i].text):
                env.append(tokens[i])
            elif positionals > 0:
                positionals -= 1
            else:
                break
            i += 1
        tokens = tokens[i:]
    return tokens, env


def _vllm_subcommand(args: Sequence[Token]) -> tuple[str, bool, tuple[str, ...]] | None:
    """(entry, positional model, its words) for a ``vllm`` subcommand that takes engine args."""
    for words, positional in VLLM_SUBCOMMANDS.items():
        if tuple(t.text for t in args[: len(words)]) == words:
            return "vllm " + " ".join(words), positional, words
    return None


def find_launch(argv: Sequence[Token]) -> Launch | None:
    """Recognise a vLLM launch in a command's argv, or return ``None``.

    Wrappers (:data:`WRAPPERS`) are looked through; ``NAME=value`` words they set are the
    launch's ``env``. Entry points: ``vllm`` with a :data:`VLLM_SUBCOMMANDS` subcommand,
    ``python``/``torchrun`` ``-m`` one of :data:`VLLM_MODULES` (or running the ``vllm`` console
    script by its path), ``docker|podman run`` of a vLLM image.
    """
    tokens, env = strip_wrappers(argv)
    launch = _find_entry(tokens)
    if launch is not None and env:
        launch = replace(launch, env=tuple(env) + launch.env)
    return launch


def _find_entry(tokens: list[Token]) -> Launch | None:
    if not tokens:
        return None
    head = tokens[0].text.rsplit("/", 1)[-1]
    if head == "vllm":
        sub = _vllm_subcommand(tokens[1:])
        if sub is None:
            return None
        entry, positional, words = sub
        return Launch(
            entry, tuple(tokens[1 + len(words) :]), tokens[0], positional_model=positional, command=words
        )
    runner = "python" if head.startswith("python") else head
    if runner in PYTHON_RUNNERS:
        value_opts = PYTHON_RUNNERS[runner] - {"-m", "--module"}
        i = 1
        while i < len(tokens) and tokens[i].text not in ("-m", "--module"):
            if not tokens[i].text.startswith("-"):
                # `python3 /srv/venv/bin/vllm serve ...`: the interpreter runs the console script
                script = tokens[i].text.rsplit("/", 1)[-1]
                return _find_entry(tokens[i:]) if script == "vllm" else None
            i += 2 if tokens[i].text in value_opts else 1
        rest = tokens[i:]
        if len(rest) >= 2 and rest[1].text in VLLM_MODULES:
            module = rest[1].text
            args = rest[2:]
            positional = module == "vllm.entrypoints.cli.main"
            command = MODULE_SUBCOMMANDS.get(module, ())
            if positional:
                sub = _vllm_subcommand(args)
                if sub is None:
                    return None
                _entry, positional, command = sub
                args = args[len(command) :]
            return Launch(
                f"{runner} -m {module}", tuple(args), tokens[0], positional_model=positional, command=command
            )
        return None
    if head in ("docker", "podman", "nerdctl") and len(tokens) > 1:
        return _docker_run(tokens)
    return None


def _docker_options(tokens: Sequence[Token]) -> tuple[int, list[Token], Token | None] | None:
    """Read ``docker|podman run [options]``: the index of the word after the options (the
    image), the ``-e`` values and the ``--entrypoint`` given; ``None`` when it is no ``run``."""
    i = 1
    if i < len(tokens) and tokens[i].text == "container":
        i += 1
    if i >= len(tokens) or tokens[i].text != "run":
        return None
    i += 1
    env: list[Token] = []
    entrypoint: Token | None = None
    while i < len(tokens):
        text = tokens[i].text
        if not text.startswith("-") or text == "-":
            break
        option = text.split("=", 1)[0]
        takes_value = option in _DOCKER_VALUE_OPTS and "=" not in text
        given = tokens[i + 1] if takes_value and i + 1 < len(tokens) else None
        if "=" in text:
            given = Token(text.split("=", 1)[1], tokens[i].line, tokens[i].column, tokens[i].resolved, text)
        if option in ("-e", "--env") and given is not None:
            env.append(given)
        elif option == "--entrypoint" and given is not None:
            entrypoint = given
        i += 2 if takes_value else 1
    return i, env, entrypoint


def _docker_run(tokens: list[Token]) -> Launch | None:
    read = _docker_options(tokens)
    if read is None:
        return None
    i, env, entrypoint = read
    if i >= len(tokens):
        return None
    vendor = vendor_vllm_image(tokens[i].text, [t.text for t in tokens[i + 1 :]])
    if vendor is not None and entrypoint is None:
        # a vendor's build of vLLM run with vLLM's flags: no image of ours to bump
        args = tokens[i + 2 :] if tokens[i + 1].text == "serve" else tokens[i + 1 :]
        return Launch(VENDOR_ENTRY + vendor, tuple(args), tokens[i], env=tuple(env))
    if not is_vllm_image(tokens[i].text):
        return None
    image = tokens[i]
    if entrypoint is not None:
        # --entrypoint replaces the image's `vllm serve`: the words after the image are the
        # arguments of that program, a vLLM launch only when it is one (`--entrypoint vllm
        # IMAGE serve M`, `--entrypoint python3 IMAGE -m vllm.entrypoints.openai.api_server`).
        inner = _find_entry([entrypoint, *tokens[i + 1 :]]) if entrypoint.text.strip() else None
        if inner is None or inner.image is not None:
            return None
        return replace(inner, image=image, env=tuple(env) + inner.env)
    return Launch(
        f"image {split_image(image.text)[0]}", tuple(tokens[i + 1 :]), tokens[0], image=image, env=tuple(env)
    )


def _container_run(argv: Sequence[Token]) -> tuple[list[Token], int, Token | None] | None:
    """``(argv without wrappers, index of the IMAGE word, the --entrypoint word or None)`` of
    a ``docker|podman|nerdctl`` command whose options read (:func:`_docker_options`)."""
    tokens, _env = strip_wrappers(list(argv))
    if not tokens or tokens[0].text.rsplit("/", 1)[-1] not in ("docker", "podman", "nerdctl"):
        return None
    read = _docker_options(tokens)
    if read is None:
        return None
    i, _, entrypoint = read
    return tokens, i, entrypoint


def other_program_image(argv: Sequence[Token]) -> tuple[Token, str] | None:
    """``(image token, program)`` of ``docker|podman run --entrypoint PROGRAM IMAGE ...`` when
    IMAGE is a vLLM image and PROGRAM runs no vLLM launch (a benchmark script, a shell):
    the image is the deployment's vLLM version, but what runs in it is not checked."""
    found = _container_run(argv)
    if found is None:
        return None
    tokens, i, entrypoint = found
    if entrypoint is None or i >= len(tokens) or not is_vllm_image(tokens[i].text):
        return None
    if _docker_run(tokens) is not None:
        return None
    program = " ".join(t.text for t in [entrypoint, *tokens[i + 1 : i + 2]])
    return tokens[i], program


def unknown_image_launch(argv: Sequence[Token], path: str | None, scanner: str) -> Fact | None:
    """The unresolved ``launch`` fact of ``docker|podman run [options] IMAGE ARGS`` whose
    IMAGE word the repository does not resolve (``"$IMAGE"`` set nowhere in it) and whose
    ARGS start as vLLM's server's do (``--model``, ``--model=...``, ``serve``): its entry is
    :data:`~vllm_upgrade_check.model.facts.UNKNOWN_IMAGE_ENTRY` and the program, its value
    the image word as written. No flag of it is read (the image may be no vLLM). ``None``
    for any other argv."""
    found = _container_run(argv)
    if found is None:
        return None
    tokens, i, entrypoint = found
    if entrypoint is not None or i + 1 >= len(tokens) or tokens[i].resolved:
        return None
    first = tokens[i + 1].text
    if first not in ("--model", "serve") and not first.startswith("--model="):
        return None
    start = tokens[0]
    return Fact(
        FactKind.LAUNCH,
        f"{UNKNOWN_IMAGE_ENTRY}{start.text.rsplit('/', 1)[-1]} run",
        token_location(path, start),
        raw=start.text,
        value=tokens[i].written or tokens[i].text,
        scanner=scanner,
        origin="cli",
        resolved=False,
        group=f"{start.line}:{start.column}",
    )


def launch_facts(
    launch: Launch,
    path: str | None,
    scanner: str,
    hint: tuple[str, str] | None = None,
    syntax: str = "shell",
) -> Iterator[Fact]:
    """Every fact of a recognised launch: image, ``-e`` env vars, args, model, the launch
    (``syntax``: what the argv is written in, see :func:`arg_facts`)."""
    if launch.image is not None:
        yield image_fact(launch.image, path, scanner)
        tag_hint = image_hint(launch.image.text, path, launch.image.line)
        hint = tag_hint or hint
    for token in launch.env:
        name, _, value = token.text.partition("=")
        yield env_fact(name, value if _ else None, path, token.line, token.column, scanner, raw=token.text)
    yield from arg_facts(
        launch.args,
        path,
        scanner,
        positional_model=launch.positional_model,
        entry=launch.entry,
        start=launch.start,
        hint=hint,
        syntax=syntax,
        own_flags=subcommand(launch.command),
    )
