"""Client code reading a server's responses: which server a file's OpenAI-compatible clients
talk to (:data:`CLIENT_CALLS`, :data:`HOSTED_APIS`), and the ``response_field`` facts for
``x.reasoning_content``, ``x["reasoning_content"]``, ``x.get("reasoning_content")`` and
``getattr(x, "reasoning_content")`` (the names in :data:`.names.RESPONSE_FIELDS` and those the loaded packs name).
"""

from __future__ import annotations

import ast

from vllm_upgrade_check.model.facts import Fact, FactKind, Span, Spans
from vllm_upgrade_check.sources.scanners.python.names import RESPONSE_FIELDS, const_text, dotted_name
from vllm_upgrade_check.sources.scanners.python.source import PythonSource

CLIENT_CALLS = frozenset({"OpenAI", "AsyncOpenAI", "AzureOpenAI", "AsyncAzureOpenAI"})
"""OpenAI-compatible client classes (``openai``) whose ``base_url`` says which server answers."""

HOSTED_APIS = (
    "api.openai.com",
    "api.deepseek.com",
    "api.anthropic.com",
    "openrouter.ai",
    "api.together.xyz",
    "api.groq.com",
    "api.mistral.ai",
    "api.fireworks.ai",
    "generativelanguage.googleapis.com",
    "api.x.ai",
    "dashscope.aliyuncs.com",
    "api.moonshot.cn",
    "api.perplexity.ai",
    ":11434",  # Ollama's default port
    ":1234/",  # LM Studio's
)
"""Hosted APIs that are not vLLM, and the default ports of local servers that are not vLLM
(Ollama, LM Studio): a client of one of these reads their responses (DeepSeek's
``reasoning_content`` is correct code for DeepSeek's API)."""

API_CALLS = (
    ("chat.completions.", "chat"),
    ("completions.", "completion"),
    ("embeddings.", "embedding"),
)
"""Which API a client call asks (``client.chat.completions.create`` -> ``chat``), by the dotted
name's end (without the method), first match wins."""

API_PATHS = (("/chat/completions", "chat"), ("/completions", "completion"), ("/embeddings", "embedding"))
"""Which API a URL literal asks (``http://host:8000/v1/completions`` -> ``completion``)."""

UNKNOWN_SERVER = "the file does not say the response is a vLLM server's: rename it by hand if it is"
"""Why a response-field read in a file that names no vLLM client is not renamed."""


class ResponseReader:
    """Reads of response fields in one file, as facts; ``imports_vllm``: whether the file
    imports vLLM (then its responses are a vLLM server's unless a client says otherwise)."""

    def __init__(
        self,
        source: PythonSource,
        imports_vllm: bool,
        fields: frozenset[str] = RESPONSE_FIELDS,
        calls: list[ast.Call] | None = None,
    ) -> None:
        """``calls``: every call of the file (:attr:`.index.TreeIndex.calls`); its tree is
        walked for them when not given."""
        self.source = source
        self.calls = calls
        self.fields = fields
        self.imports_vllm = imports_vllm
        self._client: str | None = None
        self._api: tuple[str | None] | None = None

    def client_kind(self) -> str:
        """Which server the file's response reads come from: ``vllm`` (it imports vLLM, or
        every OpenAI client's ``base_url`` is not a hosted API), ``other`` (every client is one
        of :data:`HOSTED_APIS`), or ``unknown`` (no client; a ``base_url`` only known at run
        time: ``OpenAI()`` alone reads ``OPENAI_BASE_URL``; or clients of both kinds, whose
        reads cannot be told apart without following the data)."""
        if self._client is not None:
            return self._client
        kinds = set()
        if self.imports_vllm:
            kinds.add("vllm")
        src = self.source.src
        if "://" in src and any(path in src for path, _a in API_PATHS):  # URL literals anywhere
            for node in ast.walk(self.source.tree):
                url_kind = _url_kind(node)
                if url_kind is not None:
                    kinds.add(url_kind)
        calls = self.calls if self.calls is not None else ast.walk(self.source.tree)
        for node in calls:
            if not isinstance(node, ast.Call):
                continue
            name = dotted_name(node.func) or ""
            if name.rsplit(".", 1)[-1] not in CLIENT_CALLS:
                continue
            url = next((k.value for k in node.keywords if k.arg == "base_url"), None)
            text = const_text(url) if url is not None else None
            if text is None:
                kinds.add("unknown")
            elif any(host in text for host in HOSTED_APIS):
                kinds.add("other")
            else:
                kinds.add("vllm")
        if kinds == {"vllm"}:
            self._client = "vllm"
        elif kinds == {"other"}:
            self._client = "other"
        else:  # no client, a server known only at run time, or vLLM and a hosted API in one file
            self._client = "unknown"
        return self._client

    def api(self) -> str | None:
        """The one API the file's responses come from (``chat``, ``completion`` or
        ``embedding``: the client calls it makes, :data:`API_CALLS`, and the URL literals it
        writes, :data:`API_PATHS`), or ``None`` when it asks none or several (a read is
        then judged against every response of the target)."""
        if self._api is None:
            found: set[str] = set()
            for node in ast.walk(self.source.tree):
                if isinstance(node, ast.Call):
                    name = dotted_name(node.func) or ""
                    head = name.rpartition(".")[0] + "."
                    api = next((a for end, a in API_CALLS if head.endswith("." + end) or head == end), None)
                    if api is not None:
                        found.add(api)
                elif isinstance(node, ast.Constant) and isinstance(node.value, str) and "://" in node.value:
                    api = next((a for path, a in API_PATHS if path in node.value), None)
                    if api is not None:
                        found.add(api)
            self._api = (found.pop() if len(found) == 1 else None,)
        return self._api[0]

    def response_field(self, node: ast.AST, name: str, written: ast.AST | None = None) -> Fact | None:
        """The ``response_field`` fact for reading ``name`` in ``node``; ``written`` is the string
        literal that names it (``x["name"]``, ``x.get("name")``), else ``node`` is ``x.name``.

        Only reads of a vLLM server's responses count: none in a file whose clients all talk
        to a hosted API, and, where the file does not say which server answers, a fact marked
        unresolved (a warning, with no fix: the field may be another API's or an object's own).
        """
        kind = self.client_kind()
        if kind == "other":
            return None
        if kind == "unknown":
            spans = Spans(note=UNKNOWN_SERVER)
        elif written is not None:
            spans = Spans(name=self.source.string_span(written), syntax="python")
        else:
            end = self.source.span(node)
            where = (
                None
                if end is None
                else Span(end.end_line, end.end_column - len(name), end.end_line, end.end_column)
            )
            spans = Spans(name=where, syntax="python")
        return Fact(
            FactKind.RESPONSE_FIELD,
            name,
            self.source.loc(node),
            raw=self.source.segment(node),
            value=self.api(),
            origin="python",
            scanner="python",
            resolved=kind != "unknown",
            spans=spans,
        )

    def response_getter(self, call: ast.Call) -> Fact | None:
        """The fact for ``x.get("reasoning_content")``, if ``call`` is such a read."""
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr == "get" and call.args:
            key = const_text(call.args[0])
            if key in self.fields:
                return self.response_field(call, key, call.args[0])
        return None


def _url_kind(node: ast.AST) -> str | None:
    """``other`` for a URL literal of a hosted API's endpoint, ``vllm`` for one of another
    host (``http://localhost:8000/v1/completions``: a server the team runs), else ``None``
    (only URLs of an OpenAI-compatible endpoint, :data:`API_PATHS`, count)."""
    if not (isinstance(node, ast.Constant) and isinstance(node.value, str)):
        return None
    text = node.value
    if not text.startswith(("http://", "https://")) or not any(path in text for path, _a in API_PATHS):
        return None
    return "other" if any(host in text for host in HOSTED_APIS) else "vllm"
