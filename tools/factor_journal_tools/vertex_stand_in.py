"""A local HTTP stand-in for Vertex AI's ``generateContent`` endpoint, serving scripted answers.

Each request takes the next scripted step: a recorded response (a JSON file
shaped like Vertex AI's), raw text as the model's output, an HTTP error
status, or a delay before answering; or, with ``respond``, the step that
function gives for the request's body (the seat serves answers by the
request's hash this way, ``seat.SeatAnswers``).  Requests are kept for
assertions.  The tests and the seat's tools (``seat_run``) share it.

With ``embed`` (text, dimensions) → vector, it also answers the embedding endpoints
google-genai calls in Vertex mode (``:embedContent`` for Gemini embedding models,
``:batchEmbedContents`` for several texts, ``:predict`` for the older text-embedding
models), in Vertex AI's response shapes; a scripted error step answers them too.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def model_response(
    text: str,
    prompt_tokens: int = 412,
    response_tokens: int = 57,
    *,
    cached_tokens: int = 0,
    thinking_tokens: int = 0,
    model_version: str = "gemini-2.5-flash-001",
) -> dict[str, Any]:
    """A Vertex AI GenerateContentResponse whose model output is ``text``, with its usage metadata (the prompt's
    tokens include the cached ones; thinking tokens are counted apart from the response's)."""
    usage = {
        "promptTokenCount": prompt_tokens,
        "candidatesTokenCount": response_tokens,
        "totalTokenCount": prompt_tokens + response_tokens + thinking_tokens,
    }
    if cached_tokens:
        usage["cachedContentTokenCount"] = cached_tokens
    if thinking_tokens:
        usage["thoughtsTokenCount"] = thinking_tokens
    return {
        "candidates": [{"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP"}],
        "usageMetadata": usage,
        "modelVersion": model_version,
    }


@dataclass
class Step:
    """One scripted answer: an HTTP status and JSON body, sent after ``delay`` seconds."""

    status: int = 200
    body: dict[str, Any] | None = None
    delay: float = 0.0


def output(text: str) -> Step:
    """A successful answer whose model output is ``text`` (JSON or not)."""
    return Step(body=model_response(text))


EMBEDDING_ENDPOINTS = (":embedContent", ":batchEmbedContents", ":predict")
STATUS_NAMES = {
    400: "INVALID_ARGUMENT",
    404: "NOT_FOUND",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
}


def error(status: int, message: str = "scripted failure") -> Step:
    """An error answer shaped like Google APIs' (``{"error": {code, message, status}}``)."""
    name = STATUS_NAMES.get(status, "UNKNOWN")
    return Step(status=status, body={"error": {"code": status, "message": message, "status": name}})


@dataclass
class VertexStandIn:
    """The stand-in as a context manager: ``with VertexStandIn(steps) as vertex: ... vertex.url``.

    Each POST to a path ending in ``:generateContent`` takes the next step; the last step repeats
    (so ``[error(500)]`` fails every attempt); with ``respond``, it is answered by ``respond(body)`` instead.
    ``paths`` and ``requests`` (decoded JSON bodies) keep every request, in order.
    """

    steps: list[Step] = field(default_factory=list)
    respond: Callable[[dict[str, Any]], Step] | None = None
    embed: Callable[[str, int], list[float]] | None = None
    port: int = 0  # 0: any free port
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __enter__(self) -> VertexStandIn:
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                with stand_in.lock:
                    stand_in.paths.append(self.path)
                    stand_in.requests.append(body)
                    embedding = stand_in.embed is not None and self.path.endswith(EMBEDDING_ENDPOINTS)
                    if not self.path.endswith(":generateContent") and not embedding:
                        self.send_error(404)
                        return
                    if stand_in.respond is not None and not embedding:
                        step = stand_in.respond(body)
                    else:
                        step = stand_in.steps.pop(0) if len(stand_in.steps) > 1 else stand_in.steps[0]
                if step.delay:
                    time.sleep(step.delay)
                answer = step.body
                if embedding and step.status == 200:
                    answer = stand_in.embedding_response(self.path, body)
                payload = json.dumps(answer or {}).encode()
                try:
                    self.send_response(step.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up waiting (a timeout test)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    def embedding_response(self, path: str, request: dict[str, Any]) -> dict[str, Any]:
        """Vertex AI's answer to an embedding request, each text embedded by ``embed``."""
        assert self.embed is not None

        def text_of(content: dict[str, Any]) -> str:
            return " ".join(part.get("text", "") for part in content.get("parts", []))

        def vector(text: str, config: dict[str, Any]) -> dict[str, Any]:
            values = self.embed(text, int(config.get("outputDimensionality") or 768))  # type: ignore[misc]
            return {"values": values}

        tokens = {"promptTokenCount": 7}
        if path.endswith(":embedContent"):
            return {
                "embedding": vector(text_of(request["content"]), request.get("embedContentConfig", {})),
                "usageMetadata": tokens,
            }
        if path.endswith(":batchEmbedContents"):
            return {
                "embeddings": [
                    vector(text_of(r["content"]), r.get("embedContentConfig", {})) for r in request["requests"]
                ]
            }
        parameters = request.get("parameters", {})
        return {
            "predictions": [
                {"embeddings": {**vector(i["content"], parameters), "statistics": {"token_count": 7}}}
                for i in request["instances"]
            ]
        }

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def prompt(self, index: int = -1) -> str:
        """The text of a request's prompt (its user content)."""
        return " ".join(p.get("text", "") for c in self.requests[index]["contents"] for p in c["parts"])

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=5)
