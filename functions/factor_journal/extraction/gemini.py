"""The Vertex AI Gemini extractor, through the maintained ``google-genai`` SDK in Vertex mode.

One ``generate_content`` call per turn with structured output (the ``ExtractionOutput`` schema).  The system
instruction is the static prefix (the reader's rules and the whole catalog, ``prompts.reader_instruction``),
the same for every call so Gemini 2.5's implicit cache applies; the user content is the per-turn part
(``prompts.turn_prompt``).  The model may name any catalog factor and judges for itself what a turn is evidence
of (``sees_whole_catalog``).  Thinking is set explicitly (``GeminiSettings.thinking_budget``, default 0: off;
thinking tokens are billed as output, the largest cost line).  With ``GeminiSettings.readings = 2`` every turn is
read twice, the second reading sampled (``second_temperature``, a fixed ``seed``), in parallel, and the second can veto:
the turn is evidence only when both say so, and only the factors both name are stored (``agreement.agree``).  With
``GeminiSettings.evidence_check`` a second, small request asks in parallel only what the turn is (``EVIDENCE_RULES``,
``TurnVerdict``); when it says the turn is no evidence about this organisation today, nothing is stored.

``GeminiIntentReader``, on the same client and settings, is the model as intent router for "Ask why" (docs/ask.md):
one structured call per question (``IntentOutput``), its static prefix the router's rules and the catalog
(``prompts.intent_instruction``), its per-question part the person's journal index and the question.

Transient failures are retried by the SDK itself (``HttpRetryOptions``: exponential backoff with jitter on
408/429/5xx and on timeouts and refused connections); after the last attempt an ``ExtractionError`` says what
failed and how many attempts were made.  Model output is returned *untrusted*: malformed JSON becomes a
rejection reason, never an exception, and entries are passed on as plain dictionaries for the pipeline to
screen.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import json
import os
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from google.auth.credentials import Credentials
from google.auth.exceptions import GoogleAuthError
from google.genai import Client, errors, types
from google.oauth2.credentials import Credentials as TokenCredentials
from pydantic import BaseModel, Field, ValidationError

from factor_journal.catalog import Catalog, load_catalog
from factor_journal.extraction.agreement import ModelReading, agree
from factor_journal.extraction.base import (
    ExtractionError,
    ExtractionOutput,
    ExtractionRequest,
    ExtractionResult,
    TurnKind,
    TurnVerdict,
)
from factor_journal.extraction.prompts import (
    ANSWER_INSTRUCTION,
    EVIDENCE_RULES,
    PHRASE_INSTRUCTION,
    IndexLine,
    IntentOutput,
    evidence_prompt,
    intent_instruction,
    intent_prompt,
    reader_instruction,
    turn_prompt,
)

RETRIED_STATUS_CODES = (408, 429, 500, 502, 503, 504)


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


def vertex_mode() -> dict[str, Any]:
    """The ``Client`` keyword that selects Vertex AI: ``enterprise=True`` where the SDK has it (3.x),
    else the older ``vertexai=True`` (the project allows google-genai >= 1.20)."""
    return {"enterprise": True} if "enterprise" in inspect.signature(Client.__init__).parameters else {"vertexai": True}


def stand_in_credentials() -> Credentials:
    """Credentials for a local stand-in only: a fixed bearer token, never refreshed.

    ``AnonymousCredentials`` do not work here: in Vertex mode the SDK refreshes a
    credential that has no token, and anonymous ones refuse to refresh.
    """
    return TokenCredentials(token="local-stand-in")


class GeminiSettings(BaseModel):
    """How to reach Gemini on Vertex AI; ``from_env`` reads them from FJ_GEMINI_* variables."""

    model: str = "gemini-2.5-flash"
    project: str | None = None  # None: the SDK falls back to GOOGLE_CLOUD_PROJECT or the ADC project
    location: str = "europe-west1"
    timeout_seconds: float = Field(default=30.0, gt=0)  # per attempt
    max_attempts: int = Field(default=4, ge=1, le=10)  # including the first
    initial_backoff_seconds: float = Field(default=1.0, ge=0)  # doubled after each failed attempt
    max_backoff_seconds: float = Field(default=20.0, ge=0)
    temperature: float = 0.0
    # Thinking tokens are billed as output tokens, the largest cost line: off (0) by default, set explicitly in
    # every request; FJ_GEMINI_THINKING_BUDGET sets another (Gemini 2.5 Flash: 0-24576, -1 lets the model decide)
    thinking_budget: int = Field(default=0, ge=-1, le=24576)
    # How many readings of a turn are asked for (FJ_GEMINI_READINGS): 1, the model's reading at ``temperature``; 2,
    # that reading and a second one sampled at ``second_temperature`` with a fixed seed (so a turn read again is read
    # the same), sent in parallel, which vetoes what it does not confirm (``agreement.agree``)
    readings: int = Field(default=1, ge=1, le=2)
    second_temperature: float = Field(default=1.0, ge=0, le=2)
    second_seed: int = 2
    # Whether a second, small request asks in parallel only what the turn is (FJ_GEMINI_EVIDENCE_CHECK, on unless
    # set to 0): a turn it says is no evidence about this organisation today stores nothing, whatever the reading
    # found in it (kept by the rule in eval/HISTORY.md, "The evidence check")
    evidence_check: bool = True
    base_url: str | None = None  # a local stand-in for tests; None in production

    @classmethod
    def from_env(cls) -> GeminiSettings:
        """Settings from FJ_GEMINI_MODEL, _LOCATION, _PROJECT (else GOOGLE_CLOUD_PROJECT, GCLOUD_PROJECT),
        _TIMEOUT (seconds), _MAX_ATTEMPTS, _THINKING_BUDGET, _READINGS, _EVIDENCE_CHECK and _BASE_URL; unset or empty
        variables keep the defaults."""
        env = os.environ
        return cls.model_validate(
            vertex_env(
                model=env.get("FJ_GEMINI_MODEL"),
                thinking_budget=env.get("FJ_GEMINI_THINKING_BUDGET"),
                readings=env.get("FJ_GEMINI_READINGS"),
                evidence_check=env.get("FJ_GEMINI_EVIDENCE_CHECK"),
            )
        )


def vertex_env(**more: str | None) -> dict[str, Any]:
    """The Vertex AI connection every Gemini client here shares, from FJ_GEMINI_PROJECT (else GOOGLE_CLOUD_PROJECT,
    GCLOUD_PROJECT), _LOCATION, _TIMEOUT, _MAX_ATTEMPTS and _BASE_URL, with ``more`` fields; unset or empty
    variables are left out, so the settings model's defaults apply."""
    env = os.environ
    values = {
        "project": env.get("FJ_GEMINI_PROJECT") or env.get("GOOGLE_CLOUD_PROJECT") or env.get("GCLOUD_PROJECT"),
        "location": env.get("FJ_GEMINI_LOCATION"),
        "timeout_seconds": env.get("FJ_GEMINI_TIMEOUT"),
        "max_attempts": env.get("FJ_GEMINI_MAX_ATTEMPTS"),
        "base_url": env.get("FJ_GEMINI_BASE_URL"),
        **more,
    }
    return {key: value for key, value in values.items() if value not in (None, "")}


class GeminiExtractor:
    """The ``Extractor`` backed by Gemini on Vertex AI (``name = "gemini"``).  It is shown the whole catalog and
    judges for itself what a turn is evidence of (``sees_whole_catalog``)."""

    name = "gemini"
    sees_whole_catalog = True

    def __init__(
        self,
        settings: GeminiSettings | None = None,
        credentials: Credentials | None = None,
        catalog: Catalog | None = None,
    ) -> None:
        """A client for ``settings`` (default: ``GeminiSettings.from_env()``), reading against ``catalog`` (default:
        the packaged one), whose factors make the system instruction, built once here.

        Without ``credentials`` the SDK uses Application Default Credentials, except
        against a stand-in (``base_url`` set), which gets ``stand_in_credentials()``.
        """
        self.settings = settings = settings or GeminiSettings.from_env()
        self.system_instruction = reader_instruction(catalog if catalog is not None else load_catalog())
        # what the eval counts test scorings by: the model, the version of the static prefix it reads, the readings
        prefix = hashlib.sha256(self.system_instruction.encode("utf-8")).hexdigest()[:8]
        twice = f"+{settings.readings}-readings" if settings.readings > 1 else ""
        checked = "+evidence-check" if settings.evidence_check else ""
        self.model = f"{settings.model}+reader-{prefix}{twice}{checked}"
        if credentials is None and settings.base_url:
            credentials = stand_in_credentials()
        retry = types.HttpRetryOptions(
            attempts=settings.max_attempts,
            initial_delay=settings.initial_backoff_seconds,
            max_delay=settings.max_backoff_seconds,
            http_status_codes=list(RETRIED_STATUS_CODES),
        )
        http_options = types.HttpOptions(
            timeout=max(1, round(settings.timeout_seconds * 1000)),  # milliseconds
            retry_options=retry,
            base_url=settings.base_url,
        )
        self.client = Client(
            **vertex_mode(),
            project=settings.project,
            location=settings.location,
            credentials=credentials,
            http_options=http_options,
        )

    @contextmanager
    def _failures_as_extraction_errors(self) -> Iterator[None]:
        """Turns what the SDK raises once its retries are spent into an ``ExtractionError`` that names the
        HTTP status or the timeout and the attempts made."""
        attempts = self.settings.max_attempts
        try:
            yield
        except errors.APIError as error:
            made = attempts if error.code in RETRIED_STATUS_CODES else 1
            raise ExtractionError(
                f"Vertex AI answered HTTP {error.code} ({error.status or 'error'}) after {made} "
                f"attempt{'s' if made > 1 else ''}: {error.message or ''}".rstrip(": ")
            ) from error
        except TIMEOUT_ERRORS as error:
            raise ExtractionError(
                f"Vertex AI did not answer within {self.settings.timeout_seconds:g}s, {attempts} attempts"
            ) from error
        except TRANSPORT_ERRORS as error:
            raise ExtractionError(f"could not reach Vertex AI ({attempts} attempts): {error}") from error
        except GoogleAuthError as error:
            raise ExtractionError(f"could not authenticate to Vertex AI: {error}") from error

    def generate(self, contents: str, config: types.GenerateContentConfig) -> types.GenerateContentResponse:
        """One ``generate_content`` call (with the SDK's retries); raises ``ExtractionError`` on failure."""
        with self._failures_as_extraction_errors():
            return self.client.models.generate_content(model=self.settings.model, contents=contents, config=config)

    def json_config(self, instruction: str, schema: type[BaseModel], **sampling: Any) -> types.GenerateContentConfig:
        """The generation config of a structured call: ``instruction`` as its static system instruction, JSON output
        in ``schema``, the settings' temperature (or ``sampling``'s) and thinking budget, set explicitly."""
        return types.GenerateContentConfig(
            system_instruction=instruction,
            response_mime_type="application/json",
            response_schema=schema,
            **({"temperature": self.settings.temperature} | sampling),
            thinking_config=types.ThinkingConfig(thinking_budget=self.settings.thinking_budget),
        )

    def config(self, second: bool = False) -> types.GenerateContentConfig:
        """The generation config of a reading: the reader's static system instruction and ``ExtractionOutput``; for
        the ``second`` reading the second temperature and its fixed seed."""
        sampled = {"temperature": self.settings.second_temperature, "seed": self.settings.second_seed}
        return self.json_config(self.system_instruction, ExtractionOutput, **(sampled if second else {}))

    def evidence_config(self) -> types.GenerateContentConfig:
        """The generation config of the evidence check: its own static system instruction and ``TurnVerdict``."""
        return self.json_config(EVIDENCE_RULES, TurnVerdict)

    def extract(self, request: ExtractionRequest) -> ExtractionResult:
        """The model's reading of the turn: one call, or two in parallel with ``readings = 2`` (the second vetoing
        what it does not confirm, ``agreement.agree``); beside them, with ``evidence_check`` (the default), the
        evidence check, whose "no evidence" sets the turn aside as the kind it names and stores nothing (not asked of
        a turn its person lifted, ``request.screen_lifted``).  Returns the entries under "updates" as plain,
        unscreened dictionaries with the token counts of all calls (prompt, of which cached, response, thinking) and
        model version; output that is not a JSON object with an "updates" list gives no updates and a ``rejected``
        reason.  Raises ``ExtractionError`` once the retries of any call are spent."""
        prompt = turn_prompt(request)
        calls = [(prompt, self.config(second=second)) for second in (False, True)[: self.settings.readings]]
        # a turn its person lifted ("It was about us") has had the check's question answered by them: not asked
        check = self.settings.evidence_check and not request.screen_lifted
        if check:
            calls.append((evidence_prompt(request), self.evidence_config()))
        if len(calls) == 1:
            responses = [self.generate(*calls[0])]
        else:
            with ThreadPoolExecutor(max_workers=len(calls)) as pool:
                responses = [call.result() for call in [pool.submit(self.generate, *c) for c in calls]]
        result = ExtractionResult(
            raw_updates=[], extractor=self.name, model=responses[0].model_version or self.settings.model
        )
        for response in responses:
            if usage := response.usage_metadata:
                result.prompt_tokens += usage.prompt_token_count or 0
                result.response_tokens += usage.candidates_token_count or 0
                result.cached_tokens += usage.cached_content_token_count or 0
                result.thinking_tokens += usage.thoughts_token_count or 0
        checked = responses.pop() if check else None
        readings = []
        for response in responses:
            updates, reason, kind = read_updates(response)
            readings.append(ModelReading(kind, updates))
            if reason:
                result.rejected.append(reason if len(responses) == 1 else f"reading {len(readings)}: {reason}")
        if len(readings) == 1:
            result.raw_updates = readings[0].updates
            result.set_aside_as = None if readings[0].kind == TurnKind.evidence else readings[0].kind.value
        else:
            agreed = agree(readings[0], readings[1])
            result.raw_updates, result.set_aside_as = agreed.updates, agreed.set_aside_as
            result.rejected.extend(agreed.rejected)
        if checked is not None:
            verdict, reason = read_verdict(checked)
            if reason:
                result.rejected.append(f"evidence check: {reason}; the reading stands")
            elif verdict != TurnKind.evidence and result.set_aside_as is None:
                if result.raw_updates:
                    result.rejected.append(f"the evidence check says the turn is {verdict.value}: nothing stored")
                result.raw_updates, result.set_aside_as = [], verdict.value
        return result


def read_updates(response: types.GenerateContentResponse) -> tuple[list[Any], str | None, TurnKind]:
    """The response's "updates" entries as plain values with what the model said the turn is, or
    ``([], reason, evidence)`` when the output is unusable.

    The SDK's ``parsed`` (an ``ExtractionOutput``, set only when the output fits the schema) is used
    when present; otherwise the text is decoded here, and each entry is passed on as it is, however
    malformed: screening it is the pipeline's job.  A "turn" that is not one of ``TurnKind``'s values is
    taken as evidence (the readings are then screened as any others), with a reason.
    """
    if isinstance(response.parsed, ExtractionOutput):
        parsed = response.parsed
        return [update.model_dump() for update in parsed.updates], None, parsed.turn
    text = response.text
    if not text:
        finish = response.candidates[0].finish_reason if response.candidates else None
        return [], f"empty output from model (finish reason: {finish or 'none'})", TurnKind.evidence
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as error:
        return [], f"malformed JSON from model: {error.msg} (at {error.pos}): {text[:120]!r}", TurnKind.evidence
    updates = payload.get("updates") if isinstance(payload, dict) else None
    if not isinstance(updates, list):
        return [], f"model output has no 'updates' list: {text[:120]!r}", TurnKind.evidence
    said = payload.get("turn", TurnKind.evidence.value)
    try:
        return updates, None, TurnKind(said)
    except (ValueError, TypeError):  # not one of the kinds, or not even a string (a list, an object)
        return updates, f"model output's 'turn' is not a kind of turn: {str(said)[:40]!r}", TurnKind.evidence


def read_verdict(response: types.GenerateContentResponse) -> tuple[TurnKind, str | None]:
    """What the evidence check says the turn is, or ``(evidence, reason)`` when its output does not read (the check
    then vetoes nothing)."""
    if isinstance(response.parsed, TurnVerdict):
        return response.parsed.turn, None
    try:
        return TurnVerdict.model_validate_json(response.text or "").turn, None
    except ValidationError as error:
        return TurnKind.evidence, f"its output does not read ({error.errors()[0].get('msg')})"


class GeminiWriter:
    """Gemini writing for people: answers to "why?" questions and the next interview question.

    Citations never come from the model: the app shows the journal evidence the
    context was built from, whatever the model writes.
    """

    name = "gemini"

    def __init__(self, extractor: GeminiExtractor) -> None:
        self.extractor = extractor

    def _generate(self, instruction: str, contents: str) -> str:
        thinking = types.ThinkingConfig(thinking_budget=self.extractor.settings.thinking_budget)
        config = types.GenerateContentConfig(system_instruction=instruction, temperature=0.2, thinking_config=thinking)
        return (self.extractor.generate(contents, config).text or "").strip()

    def compose(self, question: str, context: Any) -> str:
        """An answer from the question's context (a ``questions.QuestionContext``)."""
        return self._generate(ANSWER_INSTRUCTION, f"Question: {question}\nContext: {context.model_dump_json()}")

    def phrase_question(self, question: str, last_exchange: str) -> str:
        """The catalog's elicitation question, phrased to follow the conversation."""
        contents = f"Last exchange:\n{last_exchange}\nQuestion to ask: {question}"
        return self._generate(PHRASE_INSTRUCTION, contents) or question


class GeminiIntentReader:
    """Gemini as intent router for "Ask why" (docs/ask.md): one structured call per question says what it is about
    (``IntentOutput``: its type, the factors, project types and time it names, the factors whose evidence answers
    it, whether history and dependencies are needed).  The system instruction is the static prefix
    (``prompts.intent_instruction``: the rules and the catalog, built once, identical for every question, so the
    implicit cache applies); the user content is the person's journal index and the question (``intent_prompt``).
    Same client, settings and retries as the reader, thinking set explicitly.  What it returns is untrusted: the
    caller checks every id against the catalog (``questions.routing``)."""

    name = "gemini"

    def __init__(self, extractor: GeminiExtractor, catalog: Catalog | None = None) -> None:
        self.extractor = extractor
        self.system_instruction = intent_instruction(catalog if catalog is not None else load_catalog())

    def config(self) -> types.GenerateContentConfig:
        """The generation config of every intent call: the router's static system instruction, ``IntentOutput``, the
        reader's temperature and thinking budget (``GeminiExtractor.json_config``)."""
        return self.extractor.json_config(self.system_instruction, IntentOutput)

    def read_intent(self, question: str, index: Sequence[IndexLine]) -> IntentOutput:
        """What ``question`` is about, read against the person's journal ``index``.  Raises ``ExtractionError`` once
        the retries are spent, and when the output is not an intent in the schema (the caller falls back)."""
        response = self.extractor.generate(intent_prompt(question, index), self.config())
        if isinstance(response.parsed, IntentOutput):
            return response.parsed
        try:
            return IntentOutput.model_validate_json(response.text or "")
        except ValidationError as error:
            raise ExtractionError(f"the model's intent does not read: {error.errors()[0].get('msg')}") from error
