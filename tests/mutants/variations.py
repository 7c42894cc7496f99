"""Legal variations of the Python reference SDK: each makes ONE choice RFD 2 leaves open otherwise.

Why (issue 33): a gate that fails an SDK for being right gets a known-failures list on day one.
Each variation here is the reference SDK with one such choice made differently, patched in
memory like a mutant (`patches.py`), and served by `mutant_host.py variation.NAME`. Run over
the corpus it must exit 0, with warnings only from the fixtures about that choice
(`tests/mutants/test_variations.py`); a mutant (a real fault) must still fail a required part.

`about` names what the fixtures that may warn are about: fixture-id patterns (fnmatch) whose
subject is the choice itself.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from patches import _m, replace_everywhere

PREFIX = "variation."


@dataclass(frozen=True)
class Variation:
    name: str
    choice: str
    apply: Callable[[], None]
    #: fnmatch patterns of the fixtures about this choice: only they may warn.
    about: tuple[str, ...]


VARIATIONS: dict[str, Variation] = {}


def variation(
    name: str, choice: str, about: tuple[str, ...]
) -> Callable[[Callable[[], None]], Callable[[], None]]:
    def register(apply: Callable[[], None]) -> Callable[[], None]:
        VARIATIONS[PREFIX + name] = Variation(PREFIX + name, choice, apply, about)
        return apply

    return register


@variation(
    "default-name",
    "a step declared without a name gets the display name `step <id>`",
    ("discovery.default-name-and-retry",),
)
def _default_name() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.StepApi.run

    def run(self, id, callback, name=None, retry=None, compensate=None):
        if name is None and isinstance(id, str):
            name = f"step {id}"
        return original(self, id, callback, name, retry, compensate)

    workflow.StepApi.run = run


@variation(
    "default-retry",
    "a step declared without a retry gets {max_attempts: 5, backoff_ms: 2000}",
    ("discovery.default-name-and-retry",),
)
def _default_retry() -> None:
    workflow = _m("ryusen_sdk.workflow")
    workflow.DEFAULT_RETRY = workflow.Retry(max_attempts=5, backoff=2000)


#: The two categories of a refusal of a malformed frame or value a correct server never sends.
_SWAPPED = {
    "protocol.malformed": "protocol.invalid_value",
    "protocol.invalid_value": "protocol.malformed",
}


def _patch_protocol_errors(rewrite: Callable[[str, str], tuple[str, str]]) -> None:
    """Every ProtocolError the SDK and host raise goes through `rewrite(category, pointer)`."""
    errors = _m("ryusen_sdk.errors")
    original = errors.ProtocolError.__init__

    def init(self, category, pointer, message=""):
        category, pointer = rewrite(category, pointer)
        original(self, category, pointer, message)

    errors.ProtocolError.__init__ = init


@variation(
    "refusal-category",
    "a malformed frame or value is refused with the other of protocol.malformed and "
    "protocol.invalid_value",
    (),
)
def _refusal_category() -> None:
    _patch_protocol_errors(lambda category, pointer: (_SWAPPED.get(category, category), pointer))


@variation(
    "refusal-pointer",
    "a malformed frame or value is refused naming the parent of the offending member",
    (),
)
def _refusal_pointer() -> None:
    def parent(category: str, pointer: str) -> tuple[str, str]:
        if category in _SWAPPED and pointer.count("/") > 1:
            pointer = pointer.rsplit("/", 1)[0]
        return category, pointer

    _patch_protocol_errors(parent)


@variation(
    "author-mistake-category",
    "an author's mistake (a malformed duration, a non-bytes emit payload, an error record the "
    "wire cannot carry, a bad declaration) is refused as sdk.invalid_argument",
    (),
)
def _author_mistake_category() -> None:
    errors = _m("ryusen_sdk.errors")
    for name in ("InvalidDurationError", "InvalidDeclarationError", "ConversionError"):
        cls = getattr(errors, name)

        def init(self, message, _base=errors.SdkError, _original=cls.__init__):
            if _original.__qualname__.startswith("ConversionError") and not message.startswith(
                "not an error record"
            ):
                _original(self, message)  # a value the model cannot carry: sdk.conversion
            else:
                _base.__init__(self, "sdk.invalid_argument", message)

        cls.__init__ = init


@variation(
    "json-spelling",
    "the JSON convenience writes members in the document's own order and numbers as Python "
    "spells them (every spelling parses back to the same document)",
    ("json.*",),
)
def _json_spelling() -> None:
    import json

    convenience = _m("ryusen_sdk.json_convenience")

    def to_bytes(document):
        checked = convenience.checked_document(document)
        return json.dumps(checked, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    replace_everywhere(convenience.to_bytes, to_bytes)


@variation(
    "emit-json-spelling",
    "an emitted JSON document is written with a space after each separator and ASCII escapes "
    "(its members in their own order: the same document)",
    ("emission.json-document*",),
)
def _emit_json_spelling() -> None:
    import json

    payloads = _m("ryusen_sdk.payloads")
    original = payloads.as_given_json

    def as_given_json(document):
        original(document)  # the same refusals
        return json.dumps(document, ensure_ascii=True).encode("ascii")

    replace_everywhere(original, as_given_json)


@variation(
    "unhandled-detail",
    "a plain language error's app.unhandled record carries the detail `exception` (its class)",
    ("errors.*unhandled*",),
)
def _unhandled_detail() -> None:
    errors = _m("ryusen_sdk.errors")
    original = errors.error_from_exception

    def error_from_exception(exc):
        record = original(exc)
        if not isinstance(exc, errors.RyusenError):
            record = errors.RyusenError(
                "app.unhandled", str(exc), True, {"exception": type(exc).__name__}
            )
        return record

    replace_everywhere(original, error_from_exception)


def apply_variation(name: str) -> None:
    """Load the SDK and apply one variation."""
    from patches import load_sdk

    load_sdk()
    VARIATIONS[name].apply()
