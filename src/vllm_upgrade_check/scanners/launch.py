"""vLLM launch recognition: which argv is a vLLM launch, and what it sets.

Recognised entry points (vLLM's own, from its ``pyproject.toml`` script and module layout):

- ``vllm serve [MODEL] ...`` (the ``vllm`` console script; also ``vllm bench``-style
  subcommands are ignored, only ``serve`` takes engine args on the command line);
- ``python -m vllm.entrypoints.openai.api_server ...`` and ``python -m vllm.entrypoints.api_server ...``;
- ``docker run|podman run [options] IMAGE ...`` where IMAGE is a vLLM image (its entry point
  is the OpenAI server, so the remaining argv are vLLM CLI flags);
- a container whose image is a vLLM image and whose ``args`` (Kubernetes) or ``command``
  (compose) are the flags alone.

vLLM's ``FlexibleArgumentParser`` accepts ``--max_num_seqs`` and ``--max-num-seqs`` alike
and ``--flag=value`` as well as ``--flag value``; boolean flags built with
``argparse.BooleanOptionalAction`` also have a ``--no-flag`` form.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from vllm_upgrade_check.model.facts import Fact, FactKind, Location
from vllm_upgrade_check.shellparse import Token
from vllm_upgrade_check.versions import version_from_tag

VLLM_IMAGES = frozenset(
    {
        "vllm/vllm-openai",
        "vllm/vllm-openai-rocm",
        "vllm/vllm-tpu",
        "rocm/vllm",
        "rocm/vllm-dev",
        "intel/vllm",
    }
)
"""Image repositories whose entry point is vLLM's OpenAI-compatible server."""

VLLM_MODULES = frozenset(
    {"vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server", "vllm.entrypoints.cli.main"}
)
"""Modules run with ``python -m`` that parse vLLM CLI flags."""

SHORT_FLAGS = {
    "-tp": "tensor_parallel_size",
    "-pp": "pipeline_parallel_size",
    "-dp": "data_parallel_size",
    "-q": "quantization",
    "-O": "compilation_config",
    "-spec-draft-tp": "speculative_draft_tensor_parallel_size",
}
"""Short aliases vLLM's parser defines (vllm/engine/arg_utils.py, ``add_cli_args``;
``-spec-draft-tp`` until 0.8.2)."""

_WRAPPERS = frozenset({"exec", "nohup", "time", "sudo", "env", "stdbuf", "nice", "ionice", "taskset"})
_RUNNERS = {("uv", "run"), ("poetry", "run"), ("pipx", "run"), ("conda", "run")}

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


def split_image(reference: str) -> tuple[str, str | None]:
    """Split ``registry/repo:tag@digest`` into (repository without registry, tag or ``None``).

    ``docker.io/vllm/vllm-openai:v0.26.0`` -> ``("vllm/vllm-openai", "v0.26.0")``.
    """
    ref = reference.split("@", 1)[0]
    name, tag = ref, None
    slash = ref.rfind("/")
    colon = ref.rfind(":")
    if colon > slash:
        name, tag = ref[:colon], ref[colon + 1 :]
    parts = name.split("/")
    if len(parts) > 2 and ("." in parts[0] or ":" in parts[0] or parts[0] == "localhost"):
        parts = parts[1:]
    if parts and parts[0] in ("docker.io", "index.docker.io"):
        parts = parts[1:]
    if parts and parts[0] == "library":
        parts = parts[1:]
    return "/".join(parts), tag


def is_vllm_image(reference: str) -> bool:
    """``True`` for a vLLM server image (see :data:`VLLM_IMAGES`), whatever the registry."""
    repo, _tag = split_image(reference)
    return repo in VLLM_IMAGES or any(repo.endswith("/" + image) for image in VLLM_IMAGES)


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
    """

    entry: str
    args: tuple[Token, ...]
    start: Token
    image: Token | None = None
    env: tuple[Token, ...] = ()
    positional_model: bool = True


def _strip_wrappers(argv: Sequence[Token]) -> list[Token]:
    tokens = list(argv)
    changed = True
    while tokens and changed:
        changed = False
        head = tokens[0].text.rsplit("/", 1)[-1]
        if head in _WRAPPERS:
            tokens = tokens[1:]
            while tokens and (
                ("=" in tokens[0].text and not tokens[0].text.startswith("-"))
                or tokens[0].text.startswith("-")
            ):
                tokens = tokens[1:]
            changed = True
        elif len(tokens) > 1 and (head, tokens[1].text) in _RUNNERS:
            tokens = tokens[2:]
            changed = True
    return tokens


def find_launch(argv: Sequence[Token]) -> Launch | None:
    """Recognise a vLLM launch in a command's argv, or return ``None``."""
    tokens = _strip_wrappers(argv)
    if not tokens:
        return None
    head = tokens[0].text.rsplit("/", 1)[-1]
    if head == "vllm":
        if len(tokens) > 1 and tokens[1].text == "serve":
            return Launch("vllm serve", tuple(tokens[2:]), tokens[0])
        return None
    if head.startswith("python"):
        rest = tokens[1:]
        while rest and rest[0].text.startswith("-") and rest[0].text != "-m":
            rest = rest[1:]
        if len(rest) >= 2 and rest[0].text == "-m" and rest[1].text in VLLM_MODULES:
            args = rest[2:]
            if rest[1].text == "vllm.entrypoints.cli.main":
                if not args or args[0].text != "serve":
                    return None
                args = args[1:]
            return Launch(
                f"python -m {rest[1].text}",
                tuple(args),
                tokens[0],
                positional_model=rest[1].text.endswith("cli.main"),
            )
        return None
    if head in ("docker", "podman", "nerdctl") and len(tokens) > 1:
        return _docker_run(tokens)
    return None


def _docker_run(tokens: list[Token]) -> Launch | None:
    i = 1
    if tokens[i].text == "container":
        i += 1
    if i >= len(tokens) or tokens[i].text != "run":
        return None
    i += 1
    env: list[Token] = []
    while i < len(tokens):
        text = tokens[i].text
        if not text.startswith("-") or text == "-":
            break
        option = text.split("=", 1)[0]
        takes_value = option in _DOCKER_VALUE_OPTS and "=" not in text
        if option in ("-e", "--env"):
            value = tokens[i + 1] if takes_value and i + 1 < len(tokens) else None
            if "=" in text:
                env.append(
                    Token(text.split("=", 1)[1], tokens[i].line, tokens[i].column, tokens[i].resolved, text)
                )
            elif value is not None:
                env.append(value)
        i += 2 if takes_value else 1
    if i >= len(tokens) or not is_vllm_image(tokens[i].text):
        return None
    image = tokens[i]
    return Launch(
        f"image {split_image(image.text)[0]}", tuple(tokens[i + 1 :]), tokens[0], image=image, env=tuple(env)
    )


def normalise_flag(flag: str) -> tuple[str, tuple[str, ...]]:
    """The snake_case arg name of a CLI flag, and the aliases it also answers to.

    ``--max-num-seqs`` -> ``("max_num_seqs", ())``; ``--no-enable-prefix-caching`` ->
    ``("no_enable_prefix_caching", ("enable_prefix_caching",))``;
    ``--compilation-config.level`` -> ``("compilation_config", ("compilation_config.level",))``.
    """
    body = flag.lstrip("-")
    name = body.replace("-", "_")
    aliases: list[str] = []
    if "." in name:
        head = name.split(".", 1)[0]
        aliases.append(name)
        name = head
    if name.startswith("no_") and len(name) > 3:
        aliases.append(name[3:])
    return name, tuple(aliases)


def _loc(path: str | None, token: Token) -> Location:
    end = token.column + len(token.written or token.text)
    return Location(path, token.line, token.column, token.line, end)


def arg_facts(
    args: Sequence[Token],
    path: str | None,
    scanner: str,
    origin: str = "cli",
    positional_model: bool = True,
    entry: str = "vllm serve",
    start: Token | None = None,
    hint: tuple[str, str] | None = None,
) -> Iterator[Fact]:
    """Facts for the vLLM argv ``args`` (flags and positionals after the entry point).

    Yields one ``arg`` fact per flag (value attached when given as ``=value`` or as the next
    word), one ``model`` fact for the served model, and one ``launch`` fact listing every
    arg name set (for rules on changed defaults). Words that could not be resolved from the
    repository (``$VLLM_ARGS`` set elsewhere) make the launch fact ``resolved=False`` with
    those words as its ``value``; no flags are invented for them. ``--*-config`` JSON values
    add one fact per top-level key (see :func:`json_subkey_facts`).

    Args:
        args: tokens after the entry point.
        path: file path for locations.
        scanner: name of the calling scanner.
        origin: ``cli`` for command lines.
        positional_model: whether the first positional is the model (``vllm serve``).
        entry: the entry point, for the launch fact.
        start: the token the launch starts at (for the launch fact's location).
        hint: ``(version, source)`` when the launch's vLLM version is known (image tag).
    """
    version_hint, hint_source = hint if hint else (None, None)
    names: set[str] = set()
    facts: list[Fact] = []
    seen_positional = False
    served: str | None = None
    unresolved: list[str] = []
    i = 0
    while i < len(args):
        token = args[i]
        text = token.text
        if not token.resolved and not text.startswith("-"):
            unresolved.append(token.written or token.text)
            i += 1
            continue
        if text.startswith("--") and len(text) > 2:
            flag, has_eq, inline = text.partition("=")
            value: str | None = inline if has_eq else None
            step = 1
            if not has_eq and i + 1 < len(args) and _is_value(args[i + 1]):
                value, step = args[i + 1].text, 2
            name, aliases = normalise_flag(flag)
            facts.append(
                Fact(
                    FactKind.ARG,
                    name,
                    _loc(path, token),
                    raw=flag,
                    value=value,
                    origin=origin,
                    aliases=aliases,
                    scanner=scanner,
                    version_hint=version_hint,
                    hint_source=hint_source,
                    resolved=token.resolved,
                )
            )
            names.add(name)
            names.update(aliases)
            if value is not None and name.endswith("_config"):
                sub = json_subkey_facts(
                    name, flag, value, args[i + 1] if step == 2 else token, path, scanner, origin, hint
                )
                facts.extend(sub)
                names.update(f.name for f in sub)
            if name == "model" and value:
                served = value
                facts.append(_model_fact(args[i + 1] if step == 2 else token, value, path, scanner, hint))
            i += step
            continue
        if text in SHORT_FLAGS or (text.startswith("-") and len(text) > 1 and not _is_number(text)):
            name = SHORT_FLAGS.get(text, text.lstrip("-").replace("-", "_"))
            value = None
            step = 1
            if i + 1 < len(args) and _is_value(args[i + 1]):
                value, step = args[i + 1].text, 2
            facts.append(
                Fact(
                    FactKind.ARG,
                    name,
                    _loc(path, token),
                    raw=text,
                    value=value,
                    origin=origin,
                    scanner=scanner,
                    version_hint=version_hint,
                    hint_source=hint_source,
                )
            )
            names.add(name)
            i += step
            continue
        if positional_model and not seen_positional:
            seen_positional = True
            served = served or text
            facts.append(_model_fact(token, text, path, scanner, hint))
            names.add("model")
        i += 1
    yield from facts
    if start is not None:
        yield Fact(
            FactKind.LAUNCH,
            entry,
            _loc(path, start),
            raw=entry,
            value=" ".join(unresolved) or None,
            origin=origin,
            args=frozenset(names),
            scanner=scanner,
            version_hint=version_hint,
            hint_source=hint_source,
            resolved=not unresolved,
            model=served,
        )


def json_subkey_facts(
    name: str,
    flag: str,
    value: str,
    token: Token,
    path: str | None,
    scanner: str,
    origin: str,
    hint: tuple[str, str] | None = None,
) -> list[Fact]:
    """``arg`` facts for the top-level keys of a JSON object given to a ``--*-config`` flag.

    ``--compilation-config '{"level": 3}'`` -> a fact named ``compilation_config.level``
    (value ``3``), placed where ``"level"`` is written inside ``token`` (multi-line JSON
    included). Anything that is not a JSON object yields nothing.
    """
    text = value.strip()
    if not text.startswith("{"):
        return []
    try:
        data = json.loads(text)
    except ValueError:
        return []
    if not isinstance(data, dict):
        return []
    written = token.written or token.text
    facts = []
    for key, sub in data.items():
        line, column = token.line, token.column
        index = written.find(f'"{key}"')
        if index >= 0:
            rows = written.count("\n", 0, index)
            if rows:
                line, column = token.line + rows, index - written.rfind("\n", 0, index)
            else:
                column = token.column + index
        sub_text = sub if isinstance(sub, str) else json.dumps(sub)
        facts.append(
            Fact(
                FactKind.ARG,
                f"{name}.{key}",
                Location(path, line, column, line, column + len(key) + 2),
                raw=f"{flag}.{key}",
                value=sub_text,
                origin=origin,
                scanner=scanner,
                version_hint=hint[0] if hint else None,
                hint_source=hint[1] if hint else None,
                resolved=token.resolved,
            )
        )
    return facts


def _model_fact(
    token: Token, value: str, path: str | None, scanner: str, hint: tuple[str, str] | None
) -> Fact:
    return Fact(
        FactKind.MODEL,
        value,
        _loc(path, token),
        raw=value,
        value=value,
        scanner=scanner,
        version_hint=hint[0] if hint else None,
        hint_source=hint[1] if hint else None,
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _is_value(token: Token) -> bool:
    text = token.text
    return not text.startswith("-") or _is_number(text) or text == "-"


def env_fact(
    name: str,
    value: str | None,
    path: str | None,
    line: int,
    column: int,
    scanner: str,
    origin: str = "env",
    raw: str | None = None,
) -> Fact:
    """An ``env_var`` fact for ``name`` set to ``value`` at the given position."""
    return Fact(
        FactKind.ENV_VAR,
        name,
        Location(path, line, column, line, column + len(name)),
        raw=raw or name,
        value=value,
        origin=origin,
        scanner=scanner,
    )


def image_fact(token: Token, path: str | None, scanner: str) -> Fact:
    """An ``image`` fact for an image reference token."""
    repo, tag = split_image(token.text)
    return Fact(FactKind.IMAGE, repo, _loc(path, token), raw=token.text, value=tag, scanner=scanner)


def launch_facts(
    launch: Launch, path: str | None, scanner: str, hint: tuple[str, str] | None = None
) -> Iterator[Fact]:
    """Every fact of a recognised launch: image, ``-e`` env vars, args, model, the launch."""
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
    )


def image_hint(reference: str, path: str | None, line: int | None) -> tuple[str, str] | None:
    """``(version, "path:line image")`` when ``reference`` is a vLLM image with a version tag."""
    if not is_vllm_image(reference):
        return None
    _repo, tag = split_image(reference)
    version = version_from_tag(tag) if tag else None
    if version is None:
        return None
    where = f"{path}:{line}" if path and line else (path or "")
    return str(version), f"{where} image {reference}"
