"""The Vertex AI Gemini extractor, through the maintained ``google-genai`` SDK in Vertex mode.

One ``generate_content`` call per turn with structured output (the
``ExtractionOutput`` schema).  The SDK's own retry (``HttpRetryOptions``:
exponential backoff with jitter on 408/429/5xx and transient network errors,
timeouts included) handles transient failures; after the last attempt an
``ExtractionError`` says what failed.  Model output is returned *untrusted*:
malformed JSON becomes a rejection reason, never an exception, and entries are
passed on as plain dictionaries for the pipeline to screen.
"""

from __future__ import annotations

import importlib
import json
import os
from typing import Any

from google.auth.credentials import Credentials
from google.genai import Client, errors, types
from google.oauth2.credentials import Credentials as TokenCredentials
from pydantic import BaseModel, Field

from factor_journal.extraction.base import ExtractionError, ExtractionOutput, ExtractionRequest, ExtractionResult
from factor_journal.extraction.prompt import SYSTEM_INSTRUCTION, build_prompt


def _transport_errors() -> tuple[tuple[type[Exception], ...], tuple[type[Exception], ...]]:
    """(timeout, other transport) exception classes of the HTTP clients the SDK may use (httpx, httpx2)."""
    timeouts: list[type[Exception]] = []
    transport: list[type[Exception]] = []
    for name in ("httpx", "httpx2"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        timeouts.append(module.TimeoutException)
        transport.append(module.HTTPError)
    return tuple(timeouts), tuple(transport)


TIMEOUT_ERRORS, TRANSPORT_ERRORS = _transport_errors()


class GeminiSettings(BaseModel):
    model: str = "gemini-2.5-flash"
    project: str | None = None
    location: str = "europe-west1"
    timeout_seconds: float = Field(default=30.0, gt=0)
    max_attempts: int = Field(default=4, ge=1, le=10)
    initial_backoff_seconds: float = Field(default=1.0, ge=0)
    max_backoff_seconds: float = Field(default=20.0, ge=0)
    temperature: float = 0.0
    base_url: str | None = None  # a local stand-in for tests; None in production

    @classmethod
    def from_env(cls) -> GeminiSettings:
        """Settings from FJ_GEMINI_* (project falls back to GOOGLE_CLOUD_PROJECT / GCLOUD_PROJECT)."""
        env = os.environ
        values: dict[str, Any] = {
            "model": env.get("FJ_GEMINI_MODEL"),
            "project": env.get("FJ_GEMINI_PROJECT") or env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT"),
            "location": env.get("FJ_GEMINI_LOCATION"),
            "timeout_seconds": env.get("FJ_GEMINI_TIMEOUT"),
            "max_attempts": env.get("FJ_GEMINI_MAX_ATTEMPTS"),
            "base_url": env.get("FJ_GEMINI_BASE_URL"),
        }
        return cls.model_validate({k: v for k, v in values.items() if v not in (None, "")})


class GeminiExtractor:
    name = "gemini"

    def __init__(self, settings: GeminiSettings, credentials: Credentials | None = None) -> None:
        self.settings = settings
        if credentials is None and settings.base_url:
            credentials = TokenCredentials(token="local-stand-in")  # a fixed token: the stand-in checks none
        retry = types.HttpRetryOptions(
            attempts=settings.max_attempts,
            initial_delay=settings.initial_backoff_seconds,
            max_delay=settings.max_backoff_seconds,
            http_status_codes=[408, 429, 500, 502, 503, 504],
        )
        http_options = types.HttpOptions(
            timeout=int(settings.timeout_seconds * 1000), retry_options=retry, base_url=settings.base_url
        )
        self.client = Client(
            enterprise=True, project=settings.project, location=settings.location,
            credentials=credentials, http_options=http_options,
        )  # fmt: skip

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        """One model call for the turn; raises ExtractionError once the retries are spent."""
        config = types.GenerateContentConfig(
            system_instruction=SYSTEM_INSTRUCTION,
            response_mime_type="application/json",
            response_schema=ExtractionOutput,
            temperature=self.settings.temperature,
        )
        try:
            response = self.client.models.generate_content(
                model=self.settings.model, contents=build_prompt(request), config=config
            )
        except errors.APIError as error:
            raise ExtractionError(
                f"Vertex AI answered {error.code} ({error.status or 'error'}) after up to "
                f"{self.settings.max_attempts} attempts: {error.message or ''}".strip()
            ) from error
        except TIMEOUT_ERRORS as error:
            raise ExtractionError(
                f"Vertex AI did not answer within {self.settings.timeout_seconds:g}s, "
                f"{self.settings.max_attempts} attempts"
            ) from error
        except TRANSPORT_ERRORS as error:
            raise ExtractionError(f"could not reach Vertex AI: {error}") from error
        usage = response.usage_metadata
        result = ExtractionResult(
            raw_updates=[],
            extractor=self.name,
            model=response.model_version or self.settings.model,
            prompt_tokens=(usage.prompt_token_count or 0) if usage else 0,
            response_tokens=(usage.candidates_token_count or 0) if usage else 0,
        )
        text = response.text or ""
        try:
            payload = json.loads(text)
        except json.JSONDecodeError as error:
            result.rejected.append(f"malformed JSON from model: {error.msg} (at {error.pos}): {text[:120]!r}")
            return result
        updates = payload.get("updates") if isinstance(payload, dict) else None
        if not isinstance(updates, list):
            result.rejected.append(f"model output has no 'updates' list: {text[:120]!r}")
            return result
        result.raw_updates = updates
        return result


ANSWER_INSTRUCTION = """You answer a person's question about their company's AI-readiness assessment.
Use only the context given (factor values, dated journal evidence, dependencies, blockers). Cite dates and \
quote the evidence you rely on; say plainly when the context holds no evidence. Be brief and concrete."""

PHRASE_INSTRUCTION = """Rephrase the interview question so it follows naturally from the last exchange. \
Keep its meaning; one or two sentences; no preamble."""


class GeminiWriter:
    """Gemini writing for people: answers to "why?" questions and the next interview question.

    Citations never come from the model: the app shows the journal evidence the
    context was built from, whatever the model writes.
    """

    name = "gemini"

    def __init__(self, extractor: GeminiExtractor) -> None:
        self.extractor = extractor

    def _generate(self, instruction: str, contents: str) -> str:
        config = types.GenerateContentConfig(system_instruction=instruction, temperature=0.2)
        try:
            response = self.extractor.client.models.generate_content(
                model=self.extractor.settings.model, contents=contents, config=config
            )
        except (errors.APIError, *TIMEOUT_ERRORS, *TRANSPORT_ERRORS) as error:
            raise ExtractionError(f"Vertex AI could not write the text: {error}") from error
        return (response.text or "").strip()

    def compose(self, question: str, context: Any) -> str:
        """An answer from the question's context (a ``questions.QuestionContext``)."""
        return self._generate(ANSWER_INSTRUCTION, f"Question: {question}\nContext: {context.model_dump_json()}")

    def phrase_question(self, question: str, last_exchange: str) -> str:
        """The catalog's elicitation question, phrased to follow the conversation."""
        return self._generate(PHRASE_INSTRUCTION, f"Last exchange:\n{last_exchange}\nQuestion to ask: {question}") or question
