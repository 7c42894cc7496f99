"""The mutant catalog: each mutant is the Python reference SDK with exactly ONE deliberate fault.

Why this exists: a conformance bench is only as good as the SDK bugs it catches. Each entry
below monkeypatches one thing in `ryusen_sdk` / `conform_host` (never their files) at start-up
of a wrapper host (`mutant_host.py NAME`). This module imports nothing from the SDK at import
time, so the test harness can list the mutants without `runners/python` on `sys.path`.

Because the SDK imports names (`from .values import to_tagged`), a patch that replaces a
function must replace every binding of it: `replace_everywhere` does that.
"""

from __future__ import annotations

import functools
import importlib
import math
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

SDK_PACKAGES = ("ryusen_sdk", "conform_host")


@dataclass(frozen=True)
class Mutant:
    """One deliberate fault: its name, what it breaks (for the kill matrix) and the patch.

    `recommended_only` names the decision (docs/decisions.md) when the fault breaks only
    behaviour the corpus checks at the `recommended` level (the server could tolerate either
    answer): such a mutant is caught as a warning, by design not a gate failure, and the kill
    matrix reports it apart, requiring two recommended fixtures to catch it.
    """

    name: str
    fault: str
    apply: Callable[[], None]
    recommended_only: str | None = None


MUTANTS: dict[str, Mutant] = {}


def mutant(
    name: str, fault: str, recommended_only: str | None = None
) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Register a patch function under `name` (`recommended_only`: see `Mutant`)."""

    def register(apply: Callable[[], None]) -> Callable[[], None]:
        if name in MUTANTS:
            raise ValueError(f"mutant {name!r} is defined twice")
        MUTANTS[name] = Mutant(name, fault, apply, recommended_only)
        return apply

    return register


def load_sdk() -> None:
    """Import every SDK and host module, so `replace_everywhere` sees every binding."""
    for name in (
        "ryusen_sdk",
        "ryusen_sdk.values",
        "ryusen_sdk.codec",
        "ryusen_sdk.workflow",
        "ryusen_sdk.invocation",
        "ryusen_sdk.durations",
        "ryusen_sdk.registry",
        "ryusen_sdk.worker",
        "ryusen_sdk.answers",
        "conform_host.host",
        "conform_host.program",
        "conform_host.registry",
        "conform_host.trace",
        "conform_host.http_serve",
    ):
        importlib.import_module(name)


def replace_everywhere(old: object, new: object) -> int:
    """Rebind every module-level name in the SDK and host that refers to `old`; the count."""
    count = 0
    for module_name, module in list(sys.modules.items()):
        if module is None or not module_name.startswith(SDK_PACKAGES):
            continue
        for attribute, value in list(vars(module).items()):
            if value is old:
                setattr(module, attribute, new)
                count += 1
    if count == 0:
        raise RuntimeError(f"the mutant patch found no binding of {old!r}")
    return count


def apply_mutant(name: str) -> None:
    """Load the SDK and apply one mutant ("none" applies nothing: the baseline)."""
    load_sdk()
    if name == "none":
        return
    MUTANTS[name].apply()


def _m(module: str) -> Any:
    return importlib.import_module(module)


# --------------------------------------------------------------------------------- replay


@mutant("replay-reruns-callback", "a completed step's callback runs again on replay")
def _replay_reruns_callback() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        value = original(self, step_id, kind, declaration, callback, compensate)
        if callback is not None:
            context = workflow.StepContext(self.run_id, step_id, "replay", 1, "forward")
            return callback(context)
        return value

    workflow.Pass.decide = decide


@mutant("drop-replayed-failure", "a replayed terminal failure returns null instead of raising")
def _drop_replayed_failure() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow._replay
    workflow._replay = lambda entry: None if entry.status == "failed" else original(entry)


@mutant("replayed-failure-rewritten", "a replayed failure reaches the workflow as app.unhandled")
def _replayed_failure_rewritten() -> None:
    workflow = _m("ryusen_sdk.workflow")
    errors = _m("ryusen_sdk.errors")
    original = workflow._replay

    def replay(entry):
        if entry.status == "failed":
            raise errors.RyusenError("app.unhandled", entry.error["message"], True, {})
        return original(entry)

    workflow._replay = replay


# ------------------------------------------------------------------------- duplicates, stop


@mutant("no-duplicate-blocker", "a step ID met twice in one pass is not blocked")
def _no_duplicate_blocker() -> None:
    workflow = _m("ryusen_sdk.workflow")
    workflow.DecisionMachine.encounter = lambda self, step_id, source: None


@mutant("answer-after-stop", "a declaration after the pass stopped replaces the answer")
def _answer_after_stop() -> None:
    workflow = _m("ryusen_sdk.workflow")
    errors = _m("ryusen_sdk.errors")

    def check_open(self):
        if self._in_callback:
            raise errors.InvalidDeclarationError("a callback cannot declare durable steps")

    workflow.Pass.check_open = check_open


@mutant("suspension-is-app-error", "the suspension signal escapes step.run as an application error")
def _suspension_is_app_error() -> None:
    workflow = _m("ryusen_sdk.workflow")
    invocation = _m("ryusen_sdk.invocation")

    class Suspended(Exception):  # an ordinary exception: `except Exception` catches it
        def __init__(self, answer=None):
            super().__init__("suspended")
            self.answer = answer

    def stop(self, answer):
        return Suspended(answer)  # the pass itself keeps no answer: the exception carries it

    workflow.Pass._stop = stop
    workflow.Suspension = Suspended
    invocation.Suspension = Suspended
    original = invocation.execute

    def execute(registry, request, admission_open=True):
        try:
            return original(registry, request, admission_open)
        except Suspended as signal:
            return signal.answer

    replace_everywhere(original, execute)


# ------------------------------------------------------------------------- failure kinds


@mutant("callback-failure-as-failed", "a callback failure is answered `failed` (workflow failure)")
def _callback_failure_as_failed() -> None:
    workflow = _m("ryusen_sdk.workflow")
    answers = _m("ryusen_sdk.answers")
    original = workflow.Pass._execute

    def execute(self, function, extra, kind):
        answer = original(self, function, extra, kind)
        if answer.kind.endswith("_failed"):
            return answers.Answer("failed", {"error": answer.body["error"]})
        return answer

    workflow.Pass._execute = execute


@mutant("workflow-failure-as-step-failed", "an uncaught workflow failure is answered step_failed")
def _workflow_failure_as_step_failed() -> None:
    answers = _m("ryusen_sdk.answers")

    def failed(error):
        body = {"operation_id": "-", "attempt": 1, "fencing_generation": "0", "error": error}
        return answers.Answer("step_failed", body)

    answers.failed = failed


# ------------------------------------------------------------------------- targets, identity


@mutant("invented-operation-id", "the SDK derives its own operation ID from run and step")
def _invented_operation_id() -> None:
    answers = _m("ryusen_sdk.answers")
    workflow = _m("ryusen_sdk.workflow")
    original_identity = answers.Target.identity
    original_context = workflow.StepContext

    def identity(self):
        return original_identity(self) | {"operation_id": f"{self.run_id}/{self.step_id}"}

    def context(**fields):
        fields["operation_id"] = f"{fields['run_id']}/{fields['step_id']}"
        return original_context(**fields)

    answers.Target.identity = identity
    workflow.StepContext = context


@mutant("attempt-off-by-one", "the callback sees the server's attempt as zero-based (attempt - 1)")
def _attempt_off_by_one() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original_context = workflow.StepContext

    def context(**fields):
        fields["attempt"] = fields["attempt"] - 1
        return original_context(**fields)

    workflow.StepContext = context


@mutant("compensate-without-forward", "a compensator runs (with null) without a completed entry")
def _compensate_without_forward() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        target, entry = self.target, self.history.get(step_id)
        if (
            self.mode == "compensate"
            and target is not None
            and step_id == target.step_id
            and kind == "step"
            and compensate is not None
            and (entry is None or entry.status != "completed")
        ):
            raise self._stop(self._execute(compensate, (None,), "compensation"))
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


def _declare_unresolved_in(mode: str) -> None:
    """Patch: a targeted pass in `mode` declares an unresolved non-target step (new work)."""
    workflow = _m("ryusen_sdk.workflow")
    answers = _m("ryusen_sdk.answers")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        target = self.target
        if (
            self.mode == mode
            and target is not None
            and step_id != target.step_id
            and step_id not in self.history
        ):
            raise self._stop(answers.declared(declaration))
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


@mutant("compensation-discovers-work", "compensation declares an unresolved step instead of 404")
def _compensation_discovers_work() -> None:
    _declare_unresolved_in("compensate")


@mutant("forward-runs-other-callbacks", "forward mode runs an unresolved non-target step too")
def _forward_runs_other_callbacks() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        target = self.target
        if (
            self.mode == "forward"
            and target is not None
            and step_id != target.step_id
            and step_id not in self.history
            and callback is not None
        ):
            context = workflow.StepContext(self.run_id, step_id, target.operation_id, 1, "forward")
            return callback(context)
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


# ------------------------------------------------------------------------- effect-only faults
# Each of these leaves every answer as it was: only the effect trace (protocol §12.4) shows them.


def _quietly(function: Callable[..., Any], *arguments: Any) -> None:
    """Run a callback for its effect alone: its result and any failure are thrown away."""
    try:
        function(*arguments)
    except Exception:  # noqa: BLE001 - the fault under test discards everything
        pass


@mutant("replay-reruns-discarded", "a replayed step's callback runs again, its result discarded")
def _replay_reruns_discarded() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        entry = self.history.get(step_id)
        target = self.target
        is_target = target is not None and step_id == target.step_id
        if entry is not None and callback is not None and not is_target:
            operation = target.operation_id if target is not None else f"replay-{step_id}"
            context = workflow.StepContext(self.run_id, step_id, operation, 1, "forward")
            _quietly(callback, context)  # "the card was charged twice"
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


@mutant("suspension-catchable", "`catch: true` catches the suspension signal (answer unchanged)")
def _suspension_catchable() -> None:
    workflow = _m("ryusen_sdk.workflow")

    class CatchableSuspension(Exception):  # noqa: N818 - the SDK's signal, now an Exception
        """The pass still keeps its answer; only workflow code can now swallow the signal."""

    replace_everywhere(workflow.Suspension, CatchableSuspension)


@mutant(
    "discovery-runs-next-callback", "discovery runs the next step's callback after the boundary"
)
def _discovery_runs_next_callback() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original_decide = workflow.Pass.decide
    original_check = workflow.Pass.check_open

    def check_open(self):
        if getattr(self, "_runs_on", False):  # let exactly one more step call through
            return
        original_check(self)

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        if self.mode == "discover" and getattr(self, "_runs_on", False):
            self._runs_on = False
            if callback is not None and step_id not in self.history:
                context = workflow.StepContext(
                    self.run_id, step_id, f"next-{step_id}", 1, "forward"
                )
                _quietly(callback, context)
            raise workflow.Suspension()
        try:
            return original_decide(self, step_id, kind, declaration, callback, compensate)
        except workflow.Suspension:
            if (
                self.mode == "discover"
                and self.answer is not None
                and self.answer.kind == "declared"
            ):
                self._runs_on = True  # the pass goes on past its first boundary
                return None
            raise

    workflow.Pass.check_open = check_open
    workflow.Pass.decide = decide


@mutant("compensates-replayed-steps", "compensation also runs the compensator of a replayed step")
def _compensates_replayed_steps() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        entry = self.history.get(step_id)
        target = self.target
        if (
            self.mode == "compensate"
            and target is not None
            and step_id != target.step_id
            and compensate is not None
            and entry is not None
            and entry.status == "completed"
        ):
            context = workflow.StepContext(
                self.run_id, step_id, target.operation_id, target.attempt, "compensation"
            )
            _quietly(compensate, context, entry.value)
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


@mutant("target-duplicate-unchecked", "the duplicate check is skipped for the target's own id")
def _target_duplicate_unchecked() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.claim

    def claim(self, step_id, source):
        target = self.target
        if self.mode != "discover" and target is not None and step_id == target.step_id:
            self.check_open()
            return  # the target's id is never claimed: a repeat of it is not a duplicate
        original(self, step_id, source)

    workflow.Pass.claim = claim


# ------------------------------------------------------------------------- durations


@mutant("duration-rounds-down", "a positive duration is rounded down (a wait wakes early)")
def _duration_rounds_down() -> None:
    durations = _m("ryusen_sdk.durations")
    original = durations.to_wire_millis

    def to_wire_millis(duration):
        original(duration)  # keep the refusals
        exact = durations.exact_millis(duration)
        return max(0, math.floor(exact))

    replace_everywhere(original, to_wire_millis)


@mutant("duration-float-arithmetic", "durations are summed in binary floating point")
def _duration_float_arithmetic() -> None:
    durations = _m("ryusen_sdk.durations")
    original = durations._decimal
    durations._decimal = lambda number: durations.Fraction(float(original(number)))
    original_units = dict(durations._UNITS)
    for unit, size in original_units.items():
        durations._UNITS[unit] = durations.Fraction(float(size))


@mutant("negative-duration-refused", "a negative duration is refused instead of due immediately")
def _negative_duration_refused() -> None:
    durations = _m("ryusen_sdk.durations")
    errors = _m("ryusen_sdk.errors")
    original = durations.to_wire_millis

    def to_wire_millis(duration):
        if durations.exact_millis(duration) < 0:
            raise errors.InvalidDurationError("negative duration")
        return original(duration)

    replace_everywhere(original, to_wire_millis)


# ------------------------------------------------------------------------- values


def _wrap_encode(transform: Callable[[Callable, object, int], dict | None]) -> None:
    """Patch `values._encode`: `transform` may return a replacement encoding or None."""
    values = _m("ryusen_sdk.values")
    original = values._encode

    @functools.wraps(original)
    def encode(value, depth):
        replaced = transform(original, value, depth)
        return replaced if replaced is not None else original(value, depth)

    values._encode = encode


def _careful_decoding_only() -> None:
    """Send every invoke value through `from_tagged`, as if `decode_quickly` refused it.

    The quick decoder skips `from_tagged` for valid values; a mutant of `from_tagged` models a
    decoder fault, which must reach every value, nested ones included.
    """
    values = _m("ryusen_sdk.values")

    def decode_quickly(node, level=1):
        raise values.Refused()

    replace_everywhere(values.decode_quickly, decode_quickly)


def _wrap_decode(transform: Callable[[object, object], object]) -> None:
    """Patch `from_tagged` (every binding): `transform(document, decoded)` gives the result."""
    values = _m("ryusen_sdk.values")
    _careful_decoding_only()
    original = values.from_tagged

    def from_tagged(document, pointer=""):
        return transform(document, original(document, pointer))

    replace_everywhere(original, from_tagged)


@mutant("nan-becomes-null", "a NaN or infinite float is encoded as null instead of refused")
def _nan_becomes_null() -> None:
    def transform(original, value, depth):
        if type(value) is float and not math.isfinite(value):
            return {"t": "null"}
        return None

    _wrap_encode(transform)


@mutant("non-string-keys-stringified", "a map with non-string keys is encoded with str(key)")
def _non_string_keys_stringified() -> None:
    def transform(original, value, depth):
        if type(value) is dict and any(type(key) is not str for key in value):
            return original({str(key): item for key, item in value.items()}, depth)
        return None

    _wrap_encode(transform)


@mutant("bytes-transcoded", "bytes are decoded as UTF-8 text (with replacement) and re-encoded")
def _bytes_transcoded() -> None:
    values = _m("ryusen_sdk.values")
    original = values._bytes_text

    def bytes_text(payload):
        data = original(payload)
        return None if data is None else data.decode("utf-8", "replace").encode("utf-8")

    values._bytes_text = bytes_text


@mutant("null-member-dropped", "an object member holding null is conflated with an absent one")
def _null_member_dropped() -> None:
    def transform(document, decoded):
        if isinstance(decoded, dict) and document.get("t") == "object":  # type: ignore[union-attr]
            return {key: item for key, item in decoded.items() if item is not None}
        return decoded

    _wrap_decode(transform)


@mutant("u64-decoded-as-i64", "a u64 value is decoded as a plain int (and comes back as i64)")
def _u64_decoded_as_i64() -> None:
    values = _m("ryusen_sdk.values")

    def transform(document, decoded):
        return int(decoded) if isinstance(decoded, values.U64) else decoded

    _wrap_decode(transform)


@mutant("negative-zero-lost", 'f64 negative zero is encoded as "0"')
def _negative_zero_lost() -> None:
    def transform(original, value, depth):
        if type(value) is float and value == 0:
            return {"t": "f64", "v": "0"}
        return None

    _wrap_encode(transform)


@mutant("whole-float-as-i64", "an integral f64 (1.0) is encoded as i64")
def _whole_float_as_i64() -> None:
    def transform(original, value, depth):
        if type(value) is float and math.isfinite(value) and value == int(value):
            if math.copysign(1.0, value) > 0 and abs(value) < 2**63:
                return {"t": "i64", "v": str(int(value))}
        return None

    _wrap_encode(transform)


@mutant("lone-surrogates-accepted", "strings with lone surrogates are accepted everywhere")
def _lone_surrogates_accepted() -> None:
    jsontext = _m("ryusen_sdk.jsontext")
    replace_everywhere(jsontext.has_lone_surrogate, lambda text: False)


@mutant("lenient-base64", "non-canonical base64 (unpadded, url alphabet, dirty bits) is accepted")
def _lenient_base64() -> None:
    values = _m("ryusen_sdk.values")
    import base64
    import binascii

    def bytes_text(payload):
        if not isinstance(payload, str):
            return None
        text = payload.replace("-", "+").replace("_", "/")
        try:
            return base64.b64decode(text + "=" * (-len(text) % 4))
        except (binascii.Error, ValueError):
            return None

    values._bytes_text = bytes_text


@mutant("lenient-integers", 'integer text such as "007" or "+1" is accepted')
def _lenient_integers() -> None:
    values = _m("ryusen_sdk.values")

    def int_text(payload, low, high):
        if not isinstance(payload, str):
            return None
        try:
            number = int(payload.strip())
        except ValueError:
            return None
        return number if low <= number <= high else None

    values._int_text = int_text


@mutant("depth-limit-off-by-one", "values nested 65 deep are accepted (limit checked as > 65)")
def _depth_limit_off_by_one() -> None:
    values = _m("ryusen_sdk.values")
    values.MAX_DEPTH = 65


@mutant(
    "extra-value-members-refused", "a tagged value with an unknown member is refused, not ignored"
)
def _extra_value_members_refused() -> None:
    values = _m("ryusen_sdk.values")

    def transform(original, document, pointer):
        if isinstance(document, dict) and isinstance(document.get("t"), str):
            allowed = {"t"} if document["t"] == "null" else {"t", "v"}
            payload = document.get("v")
            if set(document) - allowed or (
                document["t"] == "blob"
                and isinstance(payload, dict)
                and set(payload) - {"sha256", "size", "media_type"}
            ):
                raise values._invalid(pointer, "unknown member in a tagged value")
        return original(document, pointer)

    _wrap_decode_before(transform)


@mutant(
    "extra-value-members-refused-but-null-v",
    "a tagged value with an unknown member is refused, except a `v` on null",
)
def _extra_value_members_refused_but_null_v() -> None:
    values = _m("ryusen_sdk.values")

    def transform(original, document, pointer):
        if isinstance(document, dict) and isinstance(document.get("t"), str):
            if set(document) - {"t", "v"}:
                raise values._invalid(pointer, "unknown member in a tagged value")
        return original(document, pointer)

    _wrap_decode_before(transform)


# ------------------------------------------------------------------------- envelopes


@mutant("unknown-fields-refused", "unknown envelope and body members are refused as malformed")
def _unknown_fields_refused() -> None:
    codec = _m("ryusen_sdk.codec")
    jsontext = _m("ryusen_sdk.jsontext")
    errors = _m("ryusen_sdk.errors")
    original = codec.decode_envelope
    known_body = {
        "invoke": {"run_id", "function_id", "mode", "input", "history", "target"},
    }

    def decode_envelope(payload, receivable=codec.RECEIVABLE_KINDS):
        envelope = original(payload, receivable)
        document = jsontext.parse(payload)
        extra = sorted(set(document) - {"version", "kind", "id", "body"})
        if not extra:
            known = known_body.get(envelope.kind, set(envelope.body))
            extra = [f"body/{member}" for member in sorted(set(envelope.body) - known)]
        if extra:
            error = errors.ProtocolError("protocol.malformed", f"/{extra[0]}", "unknown member")
            raise codec.FrameError(error, envelope.id)
        return envelope

    replace_everywhere(original, decode_envelope)


@mutant("unknown-mode-as-discover", "an unknown `mode` variant is treated as discover")
def _unknown_mode_as_discover() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.decode_invoke

    def decode_invoke(envelope, payload_size):
        if envelope.body.get("mode") not in codec.MODES:
            body = dict(envelope.body, mode="discover")
            envelope = codec.Envelope(envelope.version, envelope.kind, envelope.id, body)
        return original(envelope, payload_size)

    replace_everywhere(original, decode_invoke)


@mutant("any-major-accepted", "an unsupported major version is accepted (envelope and ack)")
def _any_major_accepted() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.version_major

    def version_major(text):
        return None if original(text) is None else codec.PROTOCOL_MAJOR

    replace_everywhere(original, version_major)


@mutant("required-capability-ignored", "required capabilities the worker lacks are ignored")
def _required_capability_ignored() -> None:
    worker = _m("ryusen_sdk.worker")
    original = worker.negotiate

    def negotiate(ack, offered):
        return original(dict(ack, required_capabilities=[]), offered)

    replace_everywhere(original, negotiate)


@mutant("history-limit-off-by-one", "an invoke with 1,024 history entries is refused")
def _history_limit_off_by_one() -> None:
    codec = _m("ryusen_sdk.codec")
    codec.MAX_HISTORY = 1023


# ------------------------------------------------------------------------- manifests


@mutant("manifest-unsorted", "the manifest keeps author order instead of sorting")
def _manifest_unsorted() -> None:
    registry = _m("ryusen_sdk.registry")
    registry.sorted = lambda items, key=None: list(items)


@mutant("manifest-utf16-order", "the manifest is sorted by UTF-16 code units (JavaScript's sort)")
def _manifest_utf16_order() -> None:
    registry = _m("ryusen_sdk.registry")

    def utf16(item):
        if isinstance(item, tuple):
            return tuple(utf16(part) for part in item)
        return item.encode("utf-16-be", "surrogatepass") if isinstance(item, str) else item

    registry.sorted = lambda items, key=None: sorted(items, key=lambda x: utf16(key(x)))


@mutant("manifest-partial", "the manifest omits functions that no trigger selects (a delta)")
def _manifest_partial() -> None:
    registry = _m("ryusen_sdk.registry")
    original = registry.Registry.manifest

    def manifest(self):
        full = original(self)
        selected = {trigger["function"] for trigger in full.triggers}
        if not selected:
            return full
        functions = [doc for doc in full.functions if doc["id"] in selected]
        contents = registry.rfc8785.dumps(
            {"format": registry.MANIFEST_FORMAT, "functions": functions, "triggers": full.triggers}
        )
        return registry.Manifest(functions, full.triggers, contents, registry.hash_bytes(contents))

    registry.Registry.manifest = manifest


@mutant("manifest-default-timeout", "functions without a timeout get a default of 24h")
def _manifest_default_timeout() -> None:
    registry = _m("ryusen_sdk.registry")
    original = registry.Registry.add_function

    def add_function(self, id, handler, timeout=None):
        original(self, id, handler, "24h" if timeout is None else timeout)

    registry.Registry.add_function = add_function


@mutant("trigger-duplicates-merged", "duplicate trigger bindings are collapsed into one")
def _trigger_duplicates_merged() -> None:
    registry = _m("ryusen_sdk.registry")
    registry.sorted = lambda items, key=None: (
        sorted({key(item): item for item in items}.values(), key=key)
        if key is not None
        else sorted(items)
    )


# ------------------------------------------------------------------------- declarations


@mutant(
    "wrong-default-retry",
    "the default retry is one attempt instead of {3, 1000}",
    recommended_only="D-DEFAULT-RETRY",
)
def _wrong_default_retry() -> None:
    workflow = _m("ryusen_sdk.workflow")
    workflow.DEFAULT_RETRY = workflow.Retry(max_attempts=1, backoff=1000)


@mutant("emit-inherits-metadata", "an emit without metadata reuses the previous wait/emit's")
def _emit_inherits_metadata() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original_emit = workflow.Workflow.emit
    original_wait = workflow.Workflow.wait_for_event

    def wait_for_event(self, id, event, correlation=None, *, timeout):
        self._mutant_metadata = dict(correlation or {})
        return original_wait(self, id, event, correlation, timeout=timeout)

    def emit(self, id, event, payload, metadata=None, retry=None):
        if metadata is None:
            metadata = getattr(self, "_mutant_metadata", None)
        else:
            self._mutant_metadata = dict(metadata)
        return original_emit(self, id, event, payload, metadata, retry)

    workflow.Workflow.wait_for_event = wait_for_event
    workflow.Workflow.emit = emit


@mutant("emit-serializes-objects", "emit serializes a non-bytes payload as JSON, not refusing")
def _emit_serializes_objects() -> None:
    workflow = _m("ryusen_sdk.workflow")
    convenience = _m("ryusen_sdk.json_convenience")
    original_emit = workflow.Workflow.emit

    def emit(self, id, event, payload, metadata=None, retry=None):
        if type(payload) not in (bytes, bytearray):
            try:
                payload = convenience.to_bytes(payload)
            except Exception:  # noqa: BLE001 - leave the original refusal in place
                pass
        return original_emit(self, id, event, payload, metadata, retry)

    workflow.Workflow.emit = emit


@mutant("error-details-dropped", "a raised error record loses its details and cause on the wire")
def _error_details_dropped() -> None:
    errors = _m("ryusen_sdk.errors")
    original = errors.RyusenError.to_record

    def to_record(self):
        record = original(self)
        if not record["category"].startswith(("sdk.", "protocol.")):
            record["details"] = {}
            record.pop("cause", None)
        return record

    errors.RyusenError.to_record = to_record


@mutant(
    "json-not-canonical",
    "the JSON convenience writes json.dumps text, not RFC 8785",
    recommended_only="D-JSON-CONVENIENCE",
)
def _json_not_canonical() -> None:
    convenience = _m("ryusen_sdk.json_convenience")
    import json

    def dumps(document):
        return json.dumps(document, ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    convenience.rfc8785 = type("NoJcs", (), {"dumps": staticmethod(dumps)})


# ------------------------------------------------------------------------- cheap extras


@mutant("admission-ignored", "conform.set_admission closed does not refuse targeted work")
def _admission_ignored() -> None:
    invocation = _m("ryusen_sdk.invocation")
    original = invocation.execute

    def execute(registry, request, admission_open=True):
        return original(registry, request, True)

    replace_everywhere(original, execute)


@mutant("unknown-function-not-rejected", "a target in an unknown function is target_not_found")
def _unknown_function_not_rejected() -> None:
    invocation = _m("ryusen_sdk.invocation")
    answers = _m("ryusen_sdk.answers")
    original = invocation.execute

    def execute(registry, request, admission_open=True):
        if registry.handler(request.function_id) is None and request.mode != "discover":
            if request.target is not None:
                return answers.target_not_found(request.target)
        return original(registry, request, admission_open)

    replace_everywhere(original, execute)


@mutant("unsupported-target-not-found", "a target naming a timer/wait/child/emit is 404")
def _unsupported_target_not_found() -> None:
    workflow = _m("ryusen_sdk.workflow")
    answers = _m("ryusen_sdk.answers")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        target = self.target
        if target is not None and self.mode != "discover" and step_id == target.step_id:
            if kind != "step":
                raise self._stop(answers.target_not_found(target))
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


@mutant("registry-not-validated", "an invalid registry is published instead of refused")
def _registry_not_validated() -> None:
    registry = _m("ryusen_sdk.registry")
    errors = _m("ryusen_sdk.errors")
    durations = _m("ryusen_sdk.durations")
    original = registry.Registry.manifest

    def manifest(self):
        try:
            return original(self)
        except errors.InvalidRegistryError:
            pass
        functions = []
        for declaration in sorted(self._functions, key=lambda f: f.id):
            doc = {"id": declaration.id}
            if declaration.timeout is not None:
                try:
                    doc["timeout_ms"] = str(durations.to_wire_millis(declaration.timeout))
                except errors.RyusenError:
                    pass
            functions.append(doc)
        triggers = [
            {"id": t.id, "event": t.event, "function": t.function}
            for t in sorted(self._triggers, key=lambda t: (t.id, t.event, t.function))
        ]
        contents = registry.rfc8785.dumps(
            {"format": registry.MANIFEST_FORMAT, "functions": functions, "triggers": triggers}
        )
        return registry.Manifest(functions, triggers, contents, registry.hash_bytes(contents))

    registry.Registry.manifest = manifest


@mutant("lenient-version-grammar", 'versions such as "01.0", "1.0.0" or "1" are accepted')
def _lenient_version_grammar() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.version_major

    def version_major(text):
        if not isinstance(text, str):
            return None
        head = text.split(".", 1)[0]
        return int(head) if head.isdigit() else original(text)

    replace_everywhere(original, version_major)


@mutant("garbage-frame-ends-session", "an undecodable frame makes the host exit, not answer")
def _garbage_frame_ends_session() -> None:
    host = _m("conform_host.host")
    framing = _m("ryusen_sdk.framing")
    original = host.Host.send_error

    def send_error(self, error, frame_id):
        if frame_id == "-" or error.category == "protocol.malformed" and error.pointer == "":
            raise framing.BrokenStream("garbage frame")
        original(self, error, frame_id)

    host.Host.send_error = send_error


@mutant("limits-unchecked", "history, request and value size limits are not enforced")
def _limits_unchecked() -> None:
    codec = _m("ryusen_sdk.codec")
    values = _m("ryusen_sdk.values")
    codec.MAX_HISTORY = 10**9
    codec.MAX_INVOKE_BYTES = 10**12
    values.MAX_VALUE_BYTES = 10**12


@mutant("lenient-f64-text", 'non-canonical f64 text ("1.0", "1E21") is accepted')
def _lenient_f64_text() -> None:
    values = _m("ryusen_sdk.values")

    def float_text(payload):
        if not isinstance(payload, str):
            return None
        try:
            number = float(payload)
        except ValueError:
            return None
        return number if math.isfinite(number) else None

    values._float_text = float_text


@mutant("i64-range-unchecked", "i64 text above 2^63-1 is accepted on decode")
def _i64_range_unchecked() -> None:
    values = _m("ryusen_sdk.values")
    original = values._int_text
    values._int_text = lambda payload, low, high: original(payload, low, max(high, values.U64_MAX))


@mutant("lenient-blob", "a blob with an uppercase hash is accepted")
def _lenient_blob() -> None:
    values = _m("ryusen_sdk.values")
    original = values._blob

    def blob(payload, pointer):
        if isinstance(payload, dict) and isinstance(payload.get("sha256"), str):
            payload = dict(payload, sha256=payload["sha256"].lower())
        return original(payload, pointer)

    values._blob = blob


@mutant("past-deadline-clamped", "a sleep_until deadline in the past is clamped to 0")
def _past_deadline_clamped() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow._instant_millis
    workflow._instant_millis = lambda instant: max(0, original(instant))


@mutant("capabilities-not-intersected", "the negotiated set is the offer, not offer ∩ accepted")
def _capabilities_not_intersected() -> None:
    worker = _m("ryusen_sdk.worker")
    original = worker.negotiate

    def negotiate(ack, offered):
        registration = original(ack, offered)
        return worker.Registration(registration.version, sorted(set(offered)))

    replace_everywhere(original, negotiate)


@mutant("empty-maps-omitted", "an empty correlation or emit metadata is omitted, not `{}`")
def _empty_maps_omitted() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        for member in ("correlation", "metadata"):
            if declaration.get(member) == {}:
                declaration = {k: v for k, v in declaration.items() if k != member}
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


@mutant("lenient-json-convenience", "the JSON convenience accepts NaN, BOMs and repeated keys")
def _lenient_json_convenience() -> None:
    convenience = _m("ryusen_sdk.json_convenience")
    import json

    def parse(data, parse_int=None, parse_float=None):
        text = bytes(data).decode("utf-8-sig", "replace")
        try:
            return json.loads(text)
        except ValueError as exc:
            raise convenience.JsonTextError(str(exc)) from None

    convenience.parse = parse


@mutant("strings-nfc-normalized", "str values are NFC-normalized on decode")
def _strings_nfc_normalized() -> None:
    import unicodedata

    def transform(document, decoded):
        return unicodedata.normalize("NFC", decoded) if isinstance(decoded, str) else decoded

    _wrap_decode(transform)


@mutant("error-id-not-dash", 'a protocol_error for a frame without a usable id uses ""')
def _error_id_not_dash() -> None:
    codec = _m("ryusen_sdk.codec")
    codec.NO_ID = "?"


# ------------------------------------------------------------------------- more declarations


def _rewrite_declarations(rewrite: Callable[[dict], dict]) -> None:
    """Patch `Pass.decide` so every declaration passes through `rewrite` first."""
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        return original(self, step_id, kind, rewrite(dict(declaration)), callback, compensate)

    workflow.Pass.decide = decide


@mutant("step-name-ignored", "the declared display name is always the step ID")
def _step_name_ignored() -> None:
    def rewrite(declaration):
        if declaration.get("type") == "step":
            declaration["name"] = declaration["step_id"]
        return declaration

    _rewrite_declarations(rewrite)


@mutant("has-compensation-false", "has_compensation is always false")
def _has_compensation_false() -> None:
    def rewrite(declaration):
        if "has_compensation" in declaration:
            declaration["has_compensation"] = False
        return declaration

    _rewrite_declarations(rewrite)


@mutant("optional-members-dropped", "wait correlation, emit metadata and child timeout are dropped")
def _optional_members_dropped() -> None:
    def rewrite(declaration):
        if declaration.get("type") in ("wait", "emit"):
            for member in ("correlation", "metadata"):
                if member in declaration:
                    declaration[member] = {}
        if declaration.get("type") == "invoke":
            declaration.pop("timeout_ms", None)
        return declaration

    _rewrite_declarations(rewrite)


@mutant("sleep-until-as-delay", "sleep_until declares a relative delay instead of a deadline")
def _sleep_until_as_delay() -> None:
    def rewrite(declaration):
        if declaration.get("type") == "timer" and "deadline_ms" in declaration:
            deadline = int(declaration.pop("deadline_ms"))
            declaration["delay_ms"] = str(max(0, deadline))
        return declaration

    _rewrite_declarations(rewrite)


@mutant("retry-range-unchecked", "max_attempts outside 1..1000 is declared instead of refused")
def _retry_range_unchecked() -> None:
    workflow = _m("ryusen_sdk.workflow")
    durations = _m("ryusen_sdk.durations")

    def to_wire(self):
        return {
            "max_attempts": self.max_attempts,
            "backoff_ms": str(durations.to_wire_millis(self.backoff)),
        }

    workflow.Retry.to_wire = to_wire


@mutant("retry-limit-999", "max_attempts of 1000 is refused (range checked as < 1000)")
def _retry_limit_999() -> None:
    workflow = _m("ryusen_sdk.workflow")
    errors = _m("ryusen_sdk.errors")
    original = workflow.Retry.to_wire

    def to_wire(self):
        if self.max_attempts == 1000:
            raise errors.InvalidDeclarationError("max_attempts must be below 1000")
        return original(self)

    workflow.Retry.to_wire = to_wire


@mutant(
    "emit-attempts-below-one-accepted",
    "an emission asking for 0 or a negative number of attempts is emitted once, not refused",
    # RFD 2 refuses more than one attempt; below one, the server never sees the count and
    # accepts at most one event either way, so the refusal is recommended (D-EMISSION-ATTEMPTS).
    recommended_only="D-EMISSION-ATTEMPTS",
)
def _emit_attempts_below_one_accepted() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Workflow.emit

    def emit(self, id, event, payload, metadata=None, retry=None):
        attempts = retry.max_attempts if isinstance(retry, workflow.Retry) else retry
        if type(attempts) is int and attempts < 1:
            retry = None
        return original(self, id, event, payload, metadata, retry)

    workflow.Workflow.emit = emit


@mutant(
    "targeted-duplicate-not-found",
    "a duplicate step id met before a target answers target_not_found, not definition_blocked",
)
def _targeted_duplicate_not_found() -> None:
    workflow = _m("ryusen_sdk.workflow")
    answers = _m("ryusen_sdk.answers")
    original = workflow.Pass.claim

    def claim(self, step_id, source):
        duplicate = step_id in self.machine._first  # the ids met so far in this pass
        if duplicate and self.target is not None and not self.stopped:
            raise self._stop(answers.target_not_found(self.target))  # taken as "not reached"
        return original(self, step_id, source)

    workflow.Pass.claim = claim


@mutant(
    "compensation-target-retry-converted",
    "a compensation target's forward retry is converted first: out of range, target_not_found",
)
def _compensation_target_retry_converted() -> None:
    workflow = _m("ryusen_sdk.workflow")
    workflow.Pass.is_compensation_target = lambda self, step_id: False


@mutant("emit-retry-allowed", "emit accepts a retry of more than one attempt")
def _emit_retry_allowed() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Workflow.emit

    def emit(self, id, event, payload, metadata=None, retry=None):
        return original(self, id, event, payload, metadata, None)

    workflow.Workflow.emit = emit


# ------------------------------------------------------------------------- more durations


@mutant("typed-duration-as-seconds", "a typed integer duration is read as seconds, not ms")
def _typed_duration_as_seconds() -> None:
    durations = _m("ryusen_sdk.durations")
    original = durations.exact_millis

    def exact_millis(duration):
        if isinstance(duration, int) and not isinstance(duration, bool):
            return durations.Fraction(duration) * 1000
        return original(duration)

    durations.exact_millis = exact_millis


@mutant("minute-unit-as-millis", "the unit `m` is read as milliseconds")
def _minute_unit_as_millis() -> None:
    durations = _m("ryusen_sdk.durations")
    durations._UNITS["m"] = durations.Fraction(1)


@mutant("lenient-duration-grammar", "bare numbers, spaces, `d` and upper-case units are accepted")
def _lenient_duration_grammar() -> None:
    durations = _m("ryusen_sdk.durations")
    original = durations.parse_exact

    def parse_exact(text):
        if isinstance(text, str):
            cleaned = text.replace(" ", "").lower()
            if cleaned.endswith("d") and cleaned[:-1].isdigit():
                return durations.Fraction(int(cleaned[:-1]) * 86_400_000)
            if cleaned.lstrip("+-").isdigit():
                return durations.Fraction(int(cleaned))
            text = cleaned
        return original(text)

    durations.parse_exact = parse_exact


@mutant("duration-range-unchecked", "durations past the portable range are clamped, not refused")
def _duration_range_unchecked() -> None:
    durations = _m("ryusen_sdk.durations")
    original = durations.to_wire_millis

    def to_wire_millis(duration):
        exact = durations.exact_millis(duration)
        if exact > durations.PORTABLE_MAX_MS:
            return durations.PORTABLE_MAX_MS
        return original(duration) if exact >= -durations.PORTABLE_MAX_MS else 0

    replace_everywhere(original, to_wire_millis)


# ------------------------------------------------------------------------- more values


@mutant("instant-duration-as-i64", "instant and duration values decode to plain ints (→ i64)")
def _instant_duration_as_i64() -> None:
    values = _m("ryusen_sdk.values")

    def transform(document, decoded):
        if isinstance(decoded, values.Instant | values.Duration):
            return decoded.ms
        return decoded

    _wrap_decode(transform)


@mutant("blob-media-type-dropped", "a blob's media_type is dropped on decode")
def _blob_media_type_dropped() -> None:
    values = _m("ryusen_sdk.values")

    def transform(document, decoded):
        if isinstance(decoded, values.BlobRef) and decoded.media_type is not None:
            return values.BlobRef(decoded.sha256, decoded.size)
        return decoded

    _wrap_decode(transform)


@mutant("empty-bytes-as-null", "an empty byte string is encoded as null")
def _empty_bytes_as_null() -> None:
    def transform(original, value, depth):
        return {"t": "null"} if type(value) in (bytes, bytearray) and not value else None

    _wrap_encode(transform)


@mutant("f64-python-repr", "f64 text is Python's repr (1e-07, 1e+21 as 1e+21, 100.0)")
def _f64_python_repr() -> None:
    def transform(original, value, depth):
        if type(value) is float and math.isfinite(value) and value != 0:
            return {"t": "f64", "v": repr(value)}
        return None

    _wrap_encode(transform)


@mutant("depth-limit-63", "values of depth 64 are refused (limit checked as >= 64)")
def _depth_limit_63() -> None:
    values = _m("ryusen_sdk.values")
    values.MAX_DEPTH = 63


@mutant("size-limit-strict", "a value of exactly 1 MiB is refused")
def _size_limit_strict() -> None:
    values = _m("ryusen_sdk.values")
    codec = _m("ryusen_sdk.codec")
    values.MAX_VALUE_BYTES = 1_048_575
    codec.MAX_VALUE_BYTES = 1_048_575


@mutant(
    "pointer-not-escaped",
    "JSON pointers do not escape `~` and `/` in keys",
    recommended_only="D-POINTERS",
)
def _pointer_not_escaped() -> None:
    jsontext = _m("ryusen_sdk.jsontext")
    replace_everywhere(jsontext.pointer_join, lambda pointer, token: f"{pointer}/{token}")


@mutant("history-values-unchecked", "history values are not validated (decoded leniently)")
def _history_values_unchecked() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.from_tagged

    def from_tagged(document, pointer=""):
        if pointer.startswith("/body/history/"):
            try:
                return original(document, pointer)
            except Exception:  # noqa: BLE001 - the fault: swallow the refusal
                return None
        return original(document, pointer)

    codec.from_tagged = from_tagged


# ------------------------------------------------------------------------- more envelopes


@mutant("unknown-variant-as-malformed", "unknown enum variants are refused as protocol.malformed")
def _unknown_variant_as_malformed() -> None:
    errors = _m("ryusen_sdk.errors")
    original = errors.ProtocolError.__init__

    def init(self, category, pointer, message=""):
        if category == "protocol.unknown_variant":
            category = "protocol.malformed"
        original(self, category, pointer, message)

    errors.ProtocolError.__init__ = init


@mutant("higher-minor-refused", "a 1.x version other than 1.0 is refused as unsupported")
def _higher_minor_refused() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.version_major

    def version_major(text):
        major = original(text)
        return major if text == "1.0" or major is None else major + 1

    replace_everywhere(original, version_major)


@mutant("missing-members-defaulted", "a missing history, run_id or target gets a default")
def _missing_members_defaulted() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.decode_invoke

    def decode_invoke(envelope, payload_size):
        body = dict(envelope.body)
        body.setdefault("history", [])
        body.setdefault("run_id", "run")
        if body.get("mode") in ("forward", "compensate") and "target" not in body:
            body["mode"] = "discover"
        envelope = codec.Envelope(envelope.version, envelope.kind, envelope.id, body)
        return original(envelope, payload_size)

    replace_everywhere(original, decode_invoke)


@mutant(
    "duplicate-history-last-wins", "a repeated history step_id is accepted; the last entry wins"
)
def _duplicate_history_last_wins() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.decode_invoke

    def decode_invoke(envelope, payload_size):
        history = envelope.body.get("history")
        if isinstance(history, list):
            kept: dict = {}
            for entry in history:
                key = entry.get("step_id") if isinstance(entry, dict) else id(entry)
                kept.pop(key, None)
                kept[key] = entry
            body = dict(envelope.body, history=list(kept.values()))
            envelope = codec.Envelope(envelope.version, envelope.kind, envelope.id, body)
        return original(envelope, payload_size)

    replace_everywhere(original, decode_invoke)


@mutant("target-phase-unchecked", "a target phase that does not match the mode is accepted")
def _target_phase_unchecked() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec._target

    def target(body, run_id, mode):
        raw = body.get("target")
        if isinstance(raw, dict) and raw.get("phase") in ("forward", "compensation"):
            body = dict(body, target=dict(raw, phase=codec.PHASE_OF_MODE[mode]))
        return original(body, run_id, mode)

    codec._target = target


@mutant("unknown-function-discovery-failed", "a discovery of an unknown function is `failed`")
def _unknown_function_discovery_failed() -> None:
    invocation = _m("ryusen_sdk.invocation")
    answers = _m("ryusen_sdk.answers")
    original = invocation.execute

    def execute(registry, request, admission_open=True):
        if registry.handler(request.function_id) is None and request.mode == "discover":
            record = {"category": "sdk.unknown_function", "message": "unknown function",
                      "retryable": False, "details": {}}  # fmt: skip
            return answers.failed(record)
        return original(registry, request, admission_open)

    replace_everywhere(original, execute)


@mutant("registration-refusal-as-failure", "register_refused is surfaced as a failed registration")
def _registration_refusal_as_failure() -> None:
    host = _m("conform_host.host")
    original = host.Host.send

    def send(self, kind, frame_id, body):
        if kind == "conform.registration_outcome" and body.get("status") == "refused":
            error = {"category": "sdk.registration_refused", "message": str(body.get("code")),
                     "retryable": False, "details": {}}  # fmt: skip
            body = {"status": "failed", "error": error}
        original(self, kind, frame_id, body)

    host.Host.send = send


@mutant("manifest-rejection-code-lost", "a manifest_rejected code is not surfaced (generic code)")
def _manifest_rejection_code_lost() -> None:
    worker = _m("ryusen_sdk.worker")
    original = worker.publication_result

    def publication_result(kind, body):
        result = original(kind, body)
        if result.status == "rejected":
            return worker.Publication("rejected", code="rejected")
        return result

    replace_everywhere(original, publication_result)


# ------------------------------------------------------------------------- JSON convenience


def _convenience_parse(loads: Callable[..., Any]) -> None:
    """Patch the JSON convenience's text parser (not the frame codec's): `loads(text, **hooks)`."""
    convenience = _m("ryusen_sdk.json_convenience")
    jsontext = _m("ryusen_sdk.jsontext")

    def parse(data, parse_int=None, parse_float=None):
        try:
            text = bytes(data).decode("utf-8")
            hooks = {
                "object_pairs_hook": jsontext._pairs,
                "parse_int": parse_int,
                "parse_float": parse_float,
                "parse_constant": jsontext._refuse_constant,
            }
            return loads(text, **hooks)
        except ValueError as exc:
            raise jsontext.JsonTextError(str(exc)) from None

    convenience.parse = parse


@mutant(
    "json-nonfinite-literal-as-null", "the JSON convenience reads NaN/Infinity literals as null"
)
def _json_nonfinite_literal_as_null() -> None:
    import json

    def loads(text, **hooks):
        return json.loads(text, **(hooks | {"parse_constant": lambda name: None}))

    _convenience_parse(loads)


@mutant(
    "json-trailing-text-ignored", "the JSON convenience parses the first value, ignoring the rest"
)
def _json_trailing_text_ignored() -> None:
    import json

    def loads(text, **hooks):
        return json.JSONDecoder(**hooks).raw_decode(text)[0]

    _convenience_parse(loads)


@mutant("json-empty-text-as-null", "the JSON convenience reads empty text as null")
def _json_empty_text_as_null() -> None:
    import json

    _convenience_parse(lambda text, **hooks: json.loads(text, **hooks) if text else None)


@mutant(
    "json-overflow-as-null", "an overflowing JSON number literal is read as null (JS semantics)"
)
def _json_overflow_as_null() -> None:
    convenience = _m("ryusen_sdk.json_convenience")
    convenience._parse_float = lambda text: float(text) if math.isfinite(float(text)) else None


@mutant("json-refusal-as-conversion", "JSON convenience refusals use sdk.conversion, not sdk.json")
def _json_refusal_as_conversion() -> None:
    convenience = _m("ryusen_sdk.json_convenience")
    errors = _m("ryusen_sdk.errors")
    convenience.JsonConvenienceError = errors.ConversionError


@mutant(
    "json-ascii-escapes",
    "the JSON convenience writes non-ASCII characters as \\u escapes",
    recommended_only="D-JSON-CONVENIENCE",
)
def _json_ascii_escapes() -> None:
    convenience = _m("ryusen_sdk.json_convenience")
    import json

    original = convenience.to_bytes

    def to_bytes(document):
        canonical = json.loads(original(document))
        return json.dumps(canonical, ensure_ascii=True, separators=(",", ":")).encode("ascii")

    replace_everywhere(original, to_bytes)


@mutant("json-strings-auto-parsed", "a str value holding a JSON object is decoded as that object")
def _json_strings_auto_parsed() -> None:
    import json

    def transform(document, decoded):
        if isinstance(decoded, str) and decoded.startswith("{"):
            try:
                return json.loads(decoded)
            except ValueError:
                return decoded
        return decoded

    _wrap_decode(transform)


# ------------------------------------------------------------------------- value decoding


def _wrap_int_text(transform: Callable[[Callable, object, int, int], int | None]) -> None:
    """Patch `values._int_text` (integer payloads): `transform(original, payload, low, high)`."""
    values = _m("ryusen_sdk.values")
    original = values._int_text
    values._int_text = lambda payload, low, high: transform(original, payload, low, high)


@mutant("u64-strtoull", "u64 text is parsed like strtoull: -1 wraps, overflow saturates")
def _u64_strtoull() -> None:
    values = _m("ryusen_sdk.values")

    def transform(original, payload, low, high):
        if high == values.U64_MAX and isinstance(payload, str):
            number = original(payload.removeprefix("-"), 0, 2**80)
            if number is not None:
                return -number % 2**64 if payload.startswith("-") else min(number, high)
        return original(payload, low, high)

    _wrap_int_text(transform)


@mutant("i64-lower-bound-unchecked", "i64 text below -2^63 is accepted (only the top is checked)")
def _i64_lower_bound_unchecked() -> None:
    values = _m("ryusen_sdk.values")

    def transform(original, payload, low, high):
        if low == values.I64_MIN:
            low = -(2**80)
        return original(payload, low, high)

    _wrap_int_text(transform)


@mutant("i64-min-symmetric", "the i64 minimum is taken as -(2^63 - 1)")
def _i64_min_symmetric() -> None:
    values = _m("ryusen_sdk.values")
    values.I64_MIN = -(2**63 - 1)


@mutant("integer-text-via-float", 'integer payloads are parsed as doubles ("1e3" is 1000)')
def _integer_text_via_float() -> None:
    values = _m("ryusen_sdk.values")

    def transform(original, payload, low, high):
        if not isinstance(payload, str) or not values._F64_TEXT.fullmatch(payload):
            return None
        number = float(payload)
        if not math.isfinite(number) or number != int(number):
            return None
        return int(number) if low <= number <= high else None

    _wrap_int_text(transform)


@mutant("json-number-payload-accepted", "an integer payload given as a JSON number is accepted")
def _json_number_payload_accepted() -> None:
    def transform(original, payload, low, high):
        if type(payload) is int:
            payload = str(payload)
        return original(payload, low, high)

    _wrap_int_text(transform)


def _wrap_decode_before(transform: Callable[[Callable, object, str], object]) -> None:
    """Patch `from_tagged` (every binding): `transform(original, document, pointer)`."""
    values = _m("ryusen_sdk.values")
    _careful_decoding_only()
    original = values.from_tagged

    def from_tagged(document, pointer=""):
        return transform(original, document, pointer)

    replace_everywhere(original, from_tagged)


@mutant("unknown-tag-as-null", "a value with an unknown tag decodes as null")
def _unknown_tag_as_null() -> None:
    values = _m("ryusen_sdk.values")

    def transform(original, document, pointer):
        if isinstance(document, dict) and isinstance(document.get("t"), str):
            if document["t"] not in values._TAGS:
                return None
        return original(document, pointer)

    _wrap_decode_before(transform)


@mutant("missing-payload-empty", 'a str value without "v" decodes as the empty string')
def _missing_payload_empty() -> None:
    def transform(original, document, pointer):
        if isinstance(document, dict) and document.get("t") == "str" and "v" not in document:
            return ""
        return original(document, pointer)

    _wrap_decode_before(transform)


@mutant("f64-text-round-trip-only", 'f64 text is checked by String(Number(v)) == v ("NaN" passes)')
def _f64_text_round_trip_only() -> None:
    values = _m("ryusen_sdk.values")
    original = values._float_text
    names = {"NaN": math.nan, "Infinity": math.inf, "-Infinity": -math.inf}

    def float_text(payload):
        if isinstance(payload, str) and payload in names:
            return names[payload]
        return original(payload)

    values._float_text = float_text


@mutant("f64-overflow-infinite", 'an overflowing f64 text ("1e999") decodes as infinity')
def _f64_overflow_infinite() -> None:
    values = _m("ryusen_sdk.values")
    original = values._float_text

    def float_text(payload):
        if isinstance(payload, str) and values._F64_TEXT.fullmatch(payload):
            if math.isinf(float(payload)):
                return float(payload)
        return original(payload)

    values._float_text = float_text


@mutant("str-truncated-at-nul", "str values are truncated at the first NUL (C strings)")
def _str_truncated_at_nul() -> None:
    def transform(document, decoded):
        return decoded.split("\0", 1)[0] if isinstance(decoded, str) else decoded

    _wrap_decode(transform)


@mutant("blob-default-media-type", "a blob without media_type gets application/octet-stream")
def _blob_default_media_type() -> None:
    values = _m("ryusen_sdk.values")

    def transform(document, decoded):
        if isinstance(decoded, values.BlobRef) and decoded.media_type is None:
            return values.BlobRef(decoded.sha256, decoded.size, "application/octet-stream")
        return decoded

    _wrap_decode(transform)


@mutant("empty-dict-as-array", "an empty dict is encoded as an empty array (PHP's array)")
def _empty_dict_as_array() -> None:
    def transform(original, value, depth):
        return {"t": "array", "v": []} if type(value) is dict and not value else None

    _wrap_encode(transform)


@mutant("utf8-bytes-as-str", "bytes holding valid UTF-8 decode as str")
def _utf8_bytes_as_str() -> None:
    def transform(document, decoded):
        if isinstance(decoded, bytes) and decoded:
            try:
                return decoded.decode("utf-8")
            except UnicodeDecodeError:
                return decoded
        return decoded

    _wrap_decode(transform)


# ------------------------------------------------------------------------- envelopes, requests


@mutant("missing-body-defaulted", "an envelope without body gets an empty body")
def _missing_body_defaulted() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.parse

    def parse(payload):
        document = original(payload)
        if isinstance(document, dict) and "body" not in document:
            document["body"] = {}
        return document

    codec.parse = parse


@mutant("version-number-coerced", "a version given as a JSON number is read as its text")
def _version_number_coerced() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.version_major

    def version_major(text):
        if isinstance(text, int | float) and not isinstance(text, bool):
            text = str(text)
        return original(text)

    replace_everywhere(original, version_major)


@mutant("history-iterated-anyway", "a history that is not an array is iterated as one")
def _history_iterated_anyway() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.decode_invoke

    def decode_invoke(envelope, payload_size):
        history = envelope.body.get("history")
        if isinstance(history, dict):
            body = dict(envelope.body, history=list(history))
            envelope = codec.Envelope(envelope.version, envelope.kind, envelope.id, body)
        return original(envelope, payload_size)

    replace_everywhere(original, decode_invoke)


@mutant("request-limit-decimal-mb", "the invoke size limit is 4 MB (4,000,000), not 4 MiB")
def _request_limit_decimal_mb() -> None:
    codec = _m("ryusen_sdk.codec")
    codec.MAX_INVOKE_BYTES = 4_000_000


def _id_length_measured(measure: Callable[[str], int]) -> None:
    """Patch envelope decoding so an id of more than 256 `measure` units is refused."""
    codec = _m("ryusen_sdk.codec")
    original = codec.decode_envelope

    def decode_envelope(payload, receivable=codec.RECEIVABLE_KINDS):
        envelope = original(payload, receivable)
        if measure(envelope.id) > 256:
            error = codec._malformed("/id", "id must be a string of 1 to 256 characters")
            raise codec.FrameError(error, codec.NO_ID, envelope.kind)
        return envelope

    replace_everywhere(original, decode_envelope)


@mutant("id-length-utf16", "an id's length is counted in UTF-16 code units (JavaScript)")
def _id_length_utf16() -> None:
    _id_length_measured(lambda text: len(text.encode("utf-16-le")) // 2)


@mutant("id-length-utf8", "an id's length is counted in UTF-8 bytes")
def _id_length_utf8() -> None:
    _id_length_measured(lambda text: len(text.encode("utf-8")))


# ------------------------------------------------------------------------- timers, targets


@mutant("ms-unit-as-seconds", "the unit `ms` is read as seconds (copied table row)")
def _ms_unit_as_seconds() -> None:
    durations = _m("ryusen_sdk.durations")
    durations._UNITS["ms"] = durations.Fraction(1_000)


@mutant("duration-fraction-dropped", 'the fractional part of a duration number is dropped ("1.5s")')
def _duration_fraction_dropped() -> None:
    durations = _m("ryusen_sdk.durations")
    durations._decimal = lambda number: durations.Fraction(int(number.split(".")[0] or "0"))


@mutant("zero-sleep-skipped", "a sleep that is due immediately is skipped, not declared")
def _zero_sleep_skipped() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Workflow.sleep

    def sleep(self, id, duration):
        if workflow.to_wire_millis(duration) == 0:
            return None
        return original(self, id, duration)

    workflow.Workflow.sleep = sleep


@mutant("target-not-found-phase-from-mode", "target_not_found carries the mode, not the phase")
def _target_not_found_phase_from_mode() -> None:
    answers = _m("ryusen_sdk.answers")
    original = answers.target_not_found

    def target_not_found(target):
        answer = original(target)
        if target.phase == "compensation":
            answer.body["phase"] = "compensate"
        return answer

    replace_everywhere(original, target_not_found)


@mutant("missing-compensator-no-op", "a target without a compensator completes with null")
def _missing_compensator_no_op() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        target = self.target
        if self.mode == "compensate" and target is not None and step_id == target.step_id:
            compensate = compensate or (lambda context, value: None)
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


@mutant("missing-compensator-runs-forward", "a target without a compensator runs its callback")
def _missing_compensator_runs_forward() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        target = self.target
        if self.mode == "compensate" and target is not None and step_id == target.step_id:
            if compensate is None and callback is not None:
                compensate = lambda context, value: callback(context)  # noqa: E731
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


# ------------------------------------------------------------------------- targeted passes


def _wrap_targeted_end(answer_for: Callable[[Any, dict], Any]) -> None:
    """Patch `execute`: a targeted pass whose function ended on its own (no pass answer) is
    answered `answer_for(request, outcome)` (outcome: {"returned": v} or {"raised": exc}) when
    that gives an answer, instead of target_not_found."""
    invocation = _m("ryusen_sdk.invocation")
    original = invocation.execute

    def execute(registry, request, admission_open=True):
        outcome: dict = {}

        class Registry:
            def handler(self, function_id):
                handler = registry.handler(function_id)
                if handler is None:
                    return None

                def run(workflow, input):
                    outcome["pass"] = workflow._pass
                    try:
                        outcome["returned"] = handler(workflow, input)
                    except Exception as exc:
                        outcome["raised"] = exc
                        raise
                    return outcome["returned"]

                return run

        answer = original(Registry(), request, admission_open)
        if request.mode == "discover" or request.target is None or "pass" not in outcome:
            return answer
        if outcome["pass"].answer is not None or isinstance(
            outcome.get("raised"), invocation.Suspension
        ):
            return answer
        return answer_for(request, outcome) or answer

    replace_everywhere(original, execute)


@mutant("targeted-return-completed", "a targeted pass whose function returns is answered completed")
def _targeted_return_completed() -> None:
    answers = _m("ryusen_sdk.answers")
    values = _m("ryusen_sdk.values")

    def answer_for(request, outcome):
        if "returned" in outcome:
            return answers.completed(values.to_tagged(outcome["returned"]))
        return None

    _wrap_targeted_end(answer_for)


@mutant("targeted-raise-failed", "a targeted pass whose function raises is answered failed")
def _targeted_raise_failed() -> None:
    answers = _m("ryusen_sdk.answers")
    errors = _m("ryusen_sdk.errors")

    def answer_for(request, outcome):
        if "raised" in outcome:
            return answers.failed(errors.error_from_exception(outcome["raised"]).to_record())
        return None

    _wrap_targeted_end(answer_for)


@mutant("forward-discovers-work", "forward mode declares an unresolved non-target step")
def _forward_discovers_work() -> None:
    _declare_unresolved_in("forward")


# ------------------------------------------------------------------------- sessions


@mutant("ack-required-list-defaulted", "a register_ack without required_capabilities registers")
def _ack_required_list_defaulted() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.string_array

    def string_array(body, name, pointer):
        if name == "required_capabilities" and name not in body:
            return []
        return original(body, name, pointer)

    codec.string_array = string_array


@mutant("refusal-sticks", "after an invalid_value refusal the next invoke is refused the same way")
def _refusal_sticks() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.decode_invoke
    state: dict = {}

    def decode_invoke(envelope, payload_size):
        if state.get("error") is not None:
            raise state.pop("error")
        try:
            return original(envelope, payload_size)
        except codec.ProtocolError as error:
            if error.category == "protocol.invalid_value":
                state["error"] = error
            raise

    replace_everywhere(original, decode_invoke)


@mutant("answers-keyed-by-run", "an invoke is answered on the first request id seen for its run")
def _answers_keyed_by_run() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.decode_envelope
    first_ids: dict = {}

    def decode_envelope(payload, receivable=codec.RECEIVABLE_KINDS):
        envelope = original(payload, receivable)
        if envelope.kind == "conform.reset":
            first_ids.clear()
        run_id = envelope.body.get("run_id")
        if envelope.kind == "invoke" and isinstance(run_id, str):
            frame_id = first_ids.setdefault(run_id, envelope.id)
            return codec.Envelope(envelope.version, envelope.kind, frame_id, envelope.body)
        return envelope

    replace_everywhere(original, decode_envelope)


@mutant("invoke-never-replayed", "a child invoke is declared again even when history has it")
def _invoke_never_replayed() -> None:
    workflow = _m("ryusen_sdk.workflow")
    answers = _m("ryusen_sdk.answers")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        if kind == "invoke" and self.mode == "discover" and step_id in self.history:
            raise self._stop(answers.declared(declaration))
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


# ------------------------------------------------------- issue 16: decisions and omissions


@mutant("run-timeout-zero-refused", "a whole-run timeout of zero (or negative) is refused")
def _run_timeout_zero_refused() -> None:
    registry = _m("ryusen_sdk.registry")
    errors = _m("ryusen_sdk.errors")
    original = registry.to_wire_millis

    def to_wire_millis(duration):
        count = original(duration)
        if count < 1:
            raise errors.InvalidDurationError("a whole-run timeout is at least 1 ms")
        return count

    registry.to_wire_millis = to_wire_millis


@mutant("emit-json-document-refused", "emit refuses a JSON document as not bytes")
def _emit_json_document_refused() -> None:
    payloads = _m("ryusen_sdk.payloads")
    errors = _m("ryusen_sdk.errors")
    original = payloads.event_payload_bytes

    def event_payload_bytes(payload):
        if isinstance(payload, payloads.JsonDocument):
            raise errors.InvalidDeclarationError("an emission payload must be bytes")
        return original(payload)

    replace_everywhere(original, event_payload_bytes)


@mutant(
    "emit-json-canonicalized", "emit writes a JSON document as RFC 8785 (sorted keys), not as given"
)
def _emit_json_canonicalized() -> None:
    payloads = _m("ryusen_sdk.payloads")
    convenience = _m("ryusen_sdk.json_convenience")
    original = payloads.event_payload_bytes

    def event_payload_bytes(payload):
        if isinstance(payload, payloads.JsonDocument):
            return convenience.to_bytes(payload.document)
        return original(payload)

    replace_everywhere(original, event_payload_bytes)


@mutant("string-maps-coerced", "non-string correlation and metadata values are coerced with str()")
def _string_maps_coerced() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow._string_map

    def string_map(mapping, what):
        if isinstance(mapping, dict):
            mapping = {
                key: value if isinstance(value, str) else str(value)
                for key, value in mapping.items()
            }
        return original(mapping, what)

    workflow._string_map = string_map


@mutant(
    "correlation-values-coerced",
    "non-string wait correlation values are coerced with str() (emit metadata still refused)",
)
def _correlation_values_coerced() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow._string_map

    def string_map(mapping, what):
        if "correlation" in what and isinstance(mapping, dict):
            mapping = {k: v if isinstance(v, str) else str(v) for k, v in mapping.items()}
        return original(mapping, what)

    workflow._string_map = string_map


@mutant(
    "sleep-until-deadline-via-double",
    "a sleep_until deadline is converted through a double (exact only up to 2^53)",
)
def _sleep_until_deadline_via_double() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow._instant_millis
    workflow._instant_millis = lambda instant: int(float(original(instant)))


@mutant(
    "error-record-unchecked",
    "an error record with a bad category or non-string detail is sent as given",
)
def _error_record_unchecked() -> None:
    errors = _m("ryusen_sdk.errors")
    original = errors._check_record_fields

    def check(category, message, retryable, details, cause):
        if isinstance(details, dict):
            details = {key: str(value) for key, value in details.items()}
        if isinstance(category, str) and not errors.CATEGORY_PATTERN.fullmatch(category):
            category = "app.ok"
        return original(category, message, retryable, details, cause)

    errors._check_record_fields = check
    original_init = errors.RyusenError.__init__

    def init(self, category, message="", retryable=False, details=None, cause=None):
        if isinstance(details, dict):
            details = {key: str(value) for key, value in details.items()}
        original_init(self, category, message, retryable, details, cause)

    errors.RyusenError.__init__ = init


@mutant("target-history-replayed", "a forward target that has history answers from it, not running")
def _target_history_replayed() -> None:
    workflow = _m("ryusen_sdk.workflow")
    answers = _m("ryusen_sdk.answers")
    values = _m("ryusen_sdk.values")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        entry = self.history.get(step_id)
        target = self.target
        if self.mode == "forward" and target is not None and step_id == target.step_id:
            if kind == "step" and entry is not None:
                if entry.status == "completed":
                    body = target.identity() | {"value": values.to_tagged(entry.value)}
                    raise self._stop(answers.Answer("step_completed", body))
                body = target.identity() | {"error": dict(entry.error)}
                raise self._stop(answers.Answer("step_failed", body))
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


# ------------------------------------------------------------- issue 15: protocol gaps


@mutant(
    "unhandled-not-retryable", "a plain language error maps to app.unhandled with retryable false"
)
def _unhandled_not_retryable() -> None:
    errors = _m("ryusen_sdk.errors")
    original = errors.error_from_exception

    def error_from_exception(exc):
        record = original(exc)
        if not isinstance(exc, errors.RyusenError):
            return errors.RyusenError(record.category, record.message, False, record.details)
        return record

    replace_everywhere(original, error_from_exception)


@mutant("unhandled-message-lost", "a plain language error's message is replaced by its class name")
def _unhandled_message_lost() -> None:
    errors = _m("ryusen_sdk.errors")
    original = errors.error_from_exception

    def error_from_exception(exc):
        if not isinstance(exc, errors.RyusenError):
            return errors.RyusenError("app.unhandled", type(exc).__name__, True, {})
        return original(exc)

    replace_everywhere(original, error_from_exception)


@mutant("program-input-as-empty", "a conform.program input that is not {ops: [...]} runs no ops")
def _program_input_as_empty() -> None:
    program = _m("conform_host.program")
    original = program.Program.main

    def main(self, program_input):
        if not isinstance(program_input, dict) or not isinstance(program_input.get("ops"), list):
            program_input = {"ops": []}
        return original(self, program_input)

    program.Program.main = main


@mutant("control-bodies-coerced", "malformed conform.* bodies are coerced to defaults, not refused")
def _control_bodies_coerced() -> None:
    codec = _m("ryusen_sdk.codec")
    errors = _m("ryusen_sdk.errors")
    original = codec.decode_body
    scope = {"workspace_id": "ws-conform", "application_id": "app-conform"}

    def decode_body(envelope):
        try:
            return original(envelope)
        except errors.ProtocolError:
            body, kind = envelope.body, envelope.kind
            if kind == "conform.set_admission":
                return {"open": bool(body.get("open"))}
            if kind == "conform.set_ambient":
                return {"key": str(body.get("key", "")), "value": str(body.get("value", ""))}
            if kind == "conform.register":
                return {
                    "scope": body.get("scope", scope),
                    "release_id": body.get("release_id"),
                    "instance_id": str(body.get("instance_id", "")),
                }
            if kind == "conform.publish":
                return {"scope": body.get("scope", scope), "expected_parent": None}
            raise

    replace_everywhere(original, decode_body)


def _patch_number_text(layout) -> None:
    numbers = _m("ryusen_sdk.numbers")
    original = numbers.number_text

    def number_text(value):
        if math.isfinite(value) and value > 0:
            digits, n = numbers.shortest_digits(value)
            text = layout(digits, n)
            if text is not None:
                return text
        if math.isfinite(value) and value < 0:
            return "-" + number_text(-value)
        return original(value)

    numbers.number_text = number_text


@mutant("f64-plain-up-to-1e22", "f64 text stays plain up to 1e22 (1e21 printed in full)")
def _f64_plain_up_to_1e22() -> None:
    def layout(digits, n):
        return digits + "0" * (n - len(digits)) if n == 22 and len(digits) <= n else None

    _patch_number_text(layout)


@mutant("f64-exponent-from-1e-6", "f64 text switches to exponent form at 1e-6, not 1e-7")
def _f64_exponent_from_1e_6() -> None:
    def layout(digits, n):
        if n == -5:
            head = digits if len(digits) == 1 else digits[0] + "." + digits[1:]
            return f"{head}e-6"
        return None

    _patch_number_text(layout)


@mutant("f64-exponent-sign-dropped", "f64 exponent text drops the + sign (1e21, not 1e+21)")
def _f64_exponent_sign_dropped() -> None:
    numbers = _m("ryusen_sdk.numbers")
    original = numbers.number_text
    numbers.number_text = lambda value: original(value).replace("e+", "e")


# ============================================================================================
# Faults only a whole run shows (issue 12). Each keeps state in the host process across
# invocations of one run; a single exchange never meets it (`conform.reset` clears it between
# cases), a lifecycle scenario played by the model server does.
# ============================================================================================


def _on_reset(clear: Callable[[], None]) -> None:
    """Call `clear` whenever the host handles `conform.reset`."""
    host = _m("conform_host.host")
    original = host.Host.control

    def control(self, envelope, body):
        if envelope.kind == "conform.reset":
            clear()
        return original(self, envelope, body)

    host.Host.control = control


@mutant(
    "retry-replays-cached-failure", "a retry answers the first attempt's failure, callback not run"
)
def _retry_replays_cached_failure() -> None:
    workflow = _m("ryusen_sdk.workflow")
    answers = _m("ryusen_sdk.answers")
    original = workflow.Pass._execute
    failures: dict = {}

    def _execute(self, function, extra, kind):
        target = self.target
        cached = failures.get(target.operation_id)
        if cached is not None:
            return answers.Answer(f"{kind}_failed", target.identity() | {"error": cached})
        answer = original(self, function, extra, kind)
        if answer.kind.endswith("_failed"):
            failures[target.operation_id] = answer.body["error"]
        return answer

    workflow.Pass._execute = _execute
    _on_reset(failures.clear)


@mutant(
    "discovery-raises-cached-failure",
    "a step whose callback failed in this process is reproduced as failed even once completed",
)
def _discovery_raises_cached_failure() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original_execute = workflow.Pass._execute
    original_decide = workflow.Pass.decide
    failed: dict = {}

    def _execute(self, function, extra, kind):
        answer = original_execute(self, function, extra, kind)
        if answer.kind == "step_failed":
            failed[(self.run_id, self.target.step_id)] = answer.body["error"]
        return answer

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        error = failed.get((self.run_id, step_id))
        if error is not None and self.mode == "discover" and step_id in self.history:
            self.history = {**self.history, step_id: workflow.HistoryEntry("failed", None, error)}
        return original_decide(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass._execute = _execute
    workflow.Pass.decide = decide
    _on_reset(failed.clear)


@mutant(
    "operation-result-cached",
    "a redelivered operation that completed in this process answers from a cache, not run",
)
def _operation_result_cached() -> None:
    workflow = _m("ryusen_sdk.workflow")
    answers = _m("ryusen_sdk.answers")
    original = workflow.Pass._execute
    completed: dict = {}

    def _execute(self, function, extra, kind):
        target = self.target
        cached = completed.get((target.operation_id, kind))
        if cached is not None:  # an "idempotency cache": the redelivery is not executed
            return answers.Answer(f"{kind}_completed", target.identity() | {"value": cached})
        answer = original(self, function, extra, kind)
        if answer.kind.endswith("_completed"):
            completed[(target.operation_id, kind)] = answer.body["value"]
        return answer

    workflow.Pass._execute = _execute
    _on_reset(completed.clear)


# ------------------------------------------------------------------- stray kinds and counts


@mutant(
    "worker-kinds-receivable",
    "a worker kind sent to the SDK (a stray `declared`) reaches dispatch: out of turn, not unknown",
)
def _worker_kinds_receivable() -> None:
    codec = _m("ryusen_sdk.codec")
    decode = codec.decode_envelope

    def decode_any_kind(payload, receivable=codec.ALL_KINDS):
        return decode(payload, receivable)

    replace_everywhere(decode, decode_any_kind)


@mutant(
    "out-of-turn-answers-dropped",
    "a server answer with no request open is dropped silently",
    # A correct server never sends such a frame and acts on no answer to it; the SDK takes
    # nothing from it (nothing is registered or activated), so dropping it changes no state the
    # server reads. RFD 2 names no answer: the refusal is recommended behaviour.
    recommended_only="D-OUT-OF-TURN",
)
def _out_of_turn_answers_dropped() -> None:
    host = _m("conform_host.host")
    codec = _m("ryusen_sdk.codec")
    original = host.Host.handle

    def handle(self, payload):
        try:
            kind = codec.decode_envelope(payload).kind
        except codec.FrameError:
            kind = None
        if kind in ("register_ack", "register_refused") or (kind or "").startswith("manifest_"):
            return None
        return original(self, payload)

    host.Host.handle = handle


@mutant("count-fraction-accepted", "a count spelled with a fraction (`attempt: 1.0`) is accepted")
def _count_fraction_accepted() -> None:
    codec = _m("ryusen_sdk.codec")

    def is_small_int(value):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return type(value) is int and 0 <= value <= codec.SMALL_INT_MAX

    replace_everywhere(codec.is_small_int, is_small_int)


# ----------------------------------------------------- faults the idle fixtures of the matrix catch


def _wrap_member(loosen: Callable[[str, str, Any], bool]) -> None:
    """Replace `codec.member` with one that accepts a value when `loosen(name, pointer, value)`."""
    codec = _m("ryusen_sdk.codec")
    original = codec.member

    def member(body, name, pointer, check):
        return original(body, name, pointer, lambda v: loosen(name, pointer, v) or check(v))

    replace_everywhere(original, member)


@mutant("target-attempt-zero-accepted", "a target attempt of 0 is accepted (attempts start at 1)")
def _target_attempt_zero_accepted() -> None:
    _wrap_member(lambda name, pointer, value: name == "attempt" and value == 0)


@mutant("target-run-id-unchecked", "a target whose run_id differs from the invoke's is served")
def _target_run_id_unchecked() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec._target

    def _target(body, run_id, mode):
        raw = body.get("target")
        if isinstance(raw, dict) and "run_id" in raw:
            body = {**body, "target": {**raw, "run_id": run_id}}
        return original(body, run_id, mode)

    replace_everywhere(original, _target)


@mutant(
    "history-record-unchecked",
    "a failed history entry's error record is taken as it comes (bad category or details)",
)
def _history_record_unchecked() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.error_record

    def error_record(value, pointer, depth=0):
        if pointer.startswith("/body/history/") and isinstance(value, dict):
            return dict(value)
        return original(value, pointer, depth)

    replace_everywhere(original, error_record)


@mutant("unregistered-child-refused", "a child invocation of a function not registered here fails")
def _unregistered_child_refused() -> None:
    workflow = _m("ryusen_sdk.workflow")
    errors = _m("ryusen_sdk.errors")
    original = workflow.Workflow.invoke

    def invoke(self, id, function_id, input, timeout=None):
        if isinstance(function_id, str) and not function_id.startswith("conform."):
            raise errors.InvalidDeclarationError(f"{function_id} is not registered by this worker")
        return original(self, id, function_id, input, timeout)

    workflow.Workflow.invoke = invoke


@mutant("timer-value-dropped", "a replayed timer returns null whatever value history recorded")
def _timer_value_dropped() -> None:
    workflow = _m("ryusen_sdk.workflow")
    for name in ("sleep", "sleep_until"):
        original = getattr(workflow.Workflow, name)

        def replaced(self, id, when, _original=original):
            _original(self, id, when)
            return None

        setattr(workflow.Workflow, name, replaced)


@mutant(
    "program-record-category-defaulted",
    "the conformance host gives a program error record without category the category app.error",
)
def _program_record_category_defaulted() -> None:
    program = _m("conform_host.program")
    original = program.parse_record

    def parse_record(value):
        record = original(value)
        if record["category"] is None:
            record["category"] = "app.error"
        return record

    replace_everywhere(original, parse_record)


# ----------------------------------------------------------------------- the decoding order


@mutant("kind-before-version", "an unknown kind is reported before an unsupported major version")
def _kind_before_version() -> None:
    codec = _m("ryusen_sdk.codec")
    errors = _m("ryusen_sdk.errors")
    original = codec.decode_envelope

    def decode_envelope(payload, receivable=codec.RECEIVABLE_KINDS):
        try:
            return original(payload, receivable)
        except codec.FrameError as exc:
            if exc.error.category != "protocol.unsupported_version":
                raise
            kind = exc.kind
            if kind not in codec.ALL_KINDS or kind not in receivable:
                error = errors.ProtocolError("protocol.unknown_variant", "/kind", "unknown kind")
                raise codec.FrameError(error, exc.reply_id, kind) from None
            raise

    replace_everywhere(original, decode_envelope)


@mutant(
    "values-before-body",
    "an invoke's input value is converted before its body is checked",
    recommended_only="D-DECODE-ORDER",
)
def _values_before_body() -> None:
    codec = _m("ryusen_sdk.codec")
    values = _m("ryusen_sdk.values")
    original = codec.decode_invoke

    def decode_invoke(envelope, payload_size):
        if "input" in envelope.body:
            values.from_tagged(envelope.body["input"], "/body/input")
        return original(envelope, payload_size)

    replace_everywhere(original, decode_invoke)


# ------------------------------------------------------------------- issue 20: effect gaps


@mutant(
    "target-with-history-runs-twice",
    "a forward target that already has a completed entry runs its callback twice",
)
def _target_with_history_runs_twice() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass._execute

    def _execute(self, function, extra, kind):
        entry = self.history.get(self.target.step_id)
        if kind == "step" and entry is not None and entry.status == "completed":
            original(self, function, extra, kind)  # the first run's result is thrown away
        return original(self, function, extra, kind)

    workflow.Pass._execute = _execute


# ------------------------------------------------------------------------------- HTTP (§1.1)
# Mutants named `http.*` are served over HTTP (mutant_host.py sets RYUSEN_CONFORM_TRANSPORT);
# the kill matrix runs them, and their baseline `http.none`, through `--sdk http+cmd:`.


def _bare_status(status: int, headers: dict[str, str], matches: Callable[[dict], bool]) -> None:
    """Answer the envelopes `matches` picks with a bare `status` instead (D-HTTP-STATUS)."""
    import json

    http = _m("conform_host.http_serve")
    original = http.response_for

    def response_for(written: list[bytes]) -> tuple[int, bytes, dict[str, str]]:
        if written and matches(json.loads(written[0])):
            return status, b"", dict(headers)
        return original(written)

    http.response_for = response_for


def _category(envelope: dict) -> str | None:
    error = envelope.get("body", {}).get("error")
    return error.get("category") if envelope.get("kind") == "protocol_error" and error else None


@mutant("http.bare-503-admission", "closed admission is a bare 503 with Retry-After, no envelope")
def _http_bare_503_admission() -> None:
    def admission(envelope: dict) -> bool:
        reason = envelope.get("body", {}).get("reason", {})
        return envelope.get("kind") == "rejected_before_start" and (
            reason.get("code") == "admission_refused"
        )

    _bare_status(503, {"Retry-After": "1"}, admission)


@mutant("http.unknown-function-404", "a discovery of an unknown function is a bare 404")
def _http_unknown_function_404() -> None:
    _bare_status(404, {}, lambda e: _category(e) == "protocol.unknown_function")


@mutant("http.malformed-400", "a request body that does not decode is a bare 400")
def _http_malformed_400() -> None:
    _bare_status(400, {}, lambda e: _category(e) == "protocol.malformed" and e.get("id") == "-")


@mutant("http.oversized-413", "a request over 16 MiB is a bare 413")
def _http_oversized_413() -> None:
    _bare_status(413, {}, lambda e: _category(e) == "protocol.limit_exceeded")


@mutant("http.unauthenticated-401", "an authentication refusal is a bare 401")
def _http_unauthenticated_401() -> None:
    _bare_status(401, {}, lambda e: _category(e) == "protocol.unauthenticated")


@mutant("http.answer-in-header", "the answer envelope travels in a response header, body empty")
def _http_answer_in_header() -> None:
    http = _m("conform_host.http_serve")
    original = http.response_for

    def response_for(written: list[bytes]) -> tuple[int, bytes, dict[str, str]]:
        status, data, headers = original(written)
        if status == 200:
            import base64

            return 200, b"", {**headers, "Ryusen-Answer": base64.b64encode(data).decode()}
        return status, data, headers

    http.response_for = response_for


@mutant("http.oversized-body-read", "an oversized request is read whole before it is refused")
def _http_oversized_body_read() -> None:
    http = _m("conform_host.http_serve")
    http.MAX_BODY_BYTES = 2**62  # the announced length is never refused: the read waits


@mutant("http.auth-skipped", "requests are never authenticated (the capability is still offered)")
def _http_auth_skipped() -> None:
    _m("conform_host.http_serve").Guard.refusal = lambda self, headers, body: None


def _guard_without(check: str) -> None:
    """Authentication with one of its checks left out (D-HTTP-AUTH)."""
    import hashlib
    import hmac
    import time

    http = _m("conform_host.http_serve")

    def refusal(self: Any, headers: Any, body: bytes) -> str | None:
        timestamp = headers.get("Ryusen-Timestamp")
        nonce = headers.get("Ryusen-Nonce")
        signature = headers.get("Ryusen-Signature")
        if not timestamp or not nonce or not signature or not timestamp.isdigit():
            return "unsigned request"
        signed = f"{timestamp}.{nonce}.".encode() + (body.strip() if check == "body" else body)
        mac = "v1=" + hmac.new(self.secret, signed, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(signature.encode(), mac.encode()):
            return "bad signature"
        age = time.time() - int(timestamp)
        if check != "timestamp" and (age > 300 or (check != "future" and age < -300)):
            return "stale timestamp"
        if check != "nonce":
            if nonce in self._seen:
                return "replayed request"
            self._seen[nonce] = time.time()
        return None

    http.Guard.refusal = refusal


@mutant("http.timestamp-unchecked", "the signed timestamp is never held against the clock")
def _http_timestamp_unchecked() -> None:
    _guard_without("timestamp")


@mutant(
    "http.future-accepted", "a timestamp ahead of the clock is accepted (only the past is checked)"
)
def _http_future_accepted() -> None:
    _guard_without("future")


@mutant("http.body-trimmed", "the signature is checked over the trimmed body (whitespace passes)")
def _http_body_trimmed() -> None:
    _guard_without("body")


@mutant("http.replay-accepted", "a nonce already accepted is accepted again (no replay check)")
def _http_replay_accepted() -> None:
    _guard_without("nonce")


@mutant(
    "http.answer-cache-by-operation", "a retried operation is answered from a cache by operation_id"
)
def _http_answer_cache_by_operation() -> None:
    import json

    http = _m("conform_host.http_serve")
    original = http.HttpHost.handle
    cache: dict[str, dict] = {}

    def handle(self: Any, payload: bytes) -> None:
        try:
            envelope = json.loads(payload)
            key = (
                envelope["body"]["target"]["operation_id"] if envelope["kind"] == "invoke" else None
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            key = None
        if isinstance(key, str) and key in cache:
            self._written.append(json.dumps({**cache[key], "id": envelope["id"]}).encode())
            return
        before = len(self._written)
        original(self, payload)
        if isinstance(key, str) and len(self._written) == before + 1:
            cache[key] = json.loads(self._written[-1])

    http.HttpHost.handle = handle


@mutant(
    "empty-message-class-name",
    "a language error with an empty message is reported with its class name as the message",
)
def _empty_message_class_name() -> None:
    errors = _m("ryusen_sdk.errors")
    original = errors.error_from_exception

    def error_from_exception(exc):
        record = original(exc)
        if not isinstance(exc, errors.RyusenError) and not str(exc):
            return errors.RyusenError("app.unhandled", type(exc).__name__, True, {})
        return record

    replace_everywhere(original, error_from_exception)


@mutant(
    "child-zero-timeout-dropped",
    "a typed 0 child timeout is tested for truthiness and dropped (the child is unbounded)",
)
def _child_zero_timeout_dropped() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Workflow.invoke

    def invoke(self, id, function_id, input, timeout=None):
        return original(self, id, function_id, input, timeout if timeout else None)

    workflow.Workflow.invoke = invoke


@mutant(
    "compensator-result-by-position",
    "a compensator gets the forward result of the history entry at its step's call position",
)
def _compensator_result_by_position() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Pass.decide

    def decide(self, step_id, kind, declaration, callback=None, compensate=None):
        position = getattr(self, "_mutant_calls", 0)
        self._mutant_calls = position + 1
        target = self.target
        entries = list(self.history.values())
        is_target = target is not None and step_id == target.step_id
        if self.mode == "compensate" and is_target and position < len(entries):
            saved = self.history
            self.history = dict(saved, **{step_id: entries[position]})
            try:
                return original(self, step_id, kind, declaration, callback, compensate)
            finally:
                self.history = saved
        return original(self, step_id, kind, declaration, callback, compensate)

    workflow.Pass.decide = decide


@mutant("empty-step-id-refused", "an empty step id is refused as an invalid declaration")
def _empty_step_id_refused() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow._check_step_id

    def _check_step_id(step_id):
        if step_id == "":
            raise workflow.InvalidDeclarationError("a step ID is a non-empty string")
        return original(step_id)

    replace_everywhere(original, _check_step_id)


@mutant(
    "empty-name-as-step-id", "an empty display name is taken as no name: the step id is declared"
)
def _empty_name_as_step_id() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.StepApi.run

    def run(self, id, callback, name=None, retry=None, compensate=None):
        return original(self, id, callback, name=name or None, retry=retry, compensate=compensate)

    workflow.StepApi.run = run


@mutant(
    "base64-padding-optional", "base64 without its `=` padding is accepted (otherwise canonical)"
)
def _base64_padding_optional() -> None:
    values = _m("ryusen_sdk.values")
    original = values._bytes_text

    def _bytes_text(payload):
        if isinstance(payload, str) and len(payload) % 4 and "=" not in payload:
            return original(payload + "=" * (-len(payload) % 4))
        return original(payload)

    values._bytes_text = _bytes_text


@mutant(
    "wait-timeout-before-correlation",
    "a wait converts its timeout before its correlation (a bad duration outranks a bad map)",
    recommended_only="D-ARGUMENT-ORDER",
)
def _wait_timeout_before_correlation() -> None:
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.Workflow.wait_for_event

    def wait_for_event(self, id, event, correlation=None, *, timeout):
        try:
            return original(self, id, event, correlation, timeout=timeout)
        except workflow.InvalidDeclarationError:
            workflow.to_wire_millis(timeout)  # the timeout's refusal, had it come first
            raise

    workflow.Workflow.wait_for_event = wait_for_event


@mutant(
    "size-counts-unknown-members",
    "the 1 MiB value limit counts ignored unknown members (text as sent, not canonical)",
)
def _size_counts_unknown_members() -> None:
    values = _m("ryusen_sdk.values")
    replace_everywhere(values.canonical_size, values._json_size)


def _check_generation_ids(members: tuple[str, ...]) -> None:
    """Patch `decode_body`: the named generation-ID members must look like `sha256:` hashes."""
    import re

    codec = _m("ryusen_sdk.codec")
    original = codec.decode_body
    shaped = re.compile(r"sha256:[0-9a-f]{64}")

    def decode_body(envelope):  # noqa: ANN001, ANN202 - the SDK's own signature
        body = original(envelope)
        for name in members:
            value = body.get(name)
            if isinstance(value, str) and not shaped.fullmatch(value):
                raise codec._malformed(f"/body/{name}", f"{name} is not a sha256 hash")
        return body

    replace_everywhere(original, decode_body)


@mutant("generation-ids-checked", "server-sent generation IDs must be `sha256:` hashes (§2)")
def _generation_ids_checked() -> None:
    _check_generation_ids(("application_generation", "workspace_generation", "active_generation"))


@mutant("expected-parent-checked", "the expected parent given to publish must be a `sha256:` hash")
def _expected_parent_checked() -> None:
    _check_generation_ids(("expected_parent",))


@mutant("null-active-generation-refused", "a conflict whose active generation is null is refused")
def _null_active_generation_refused() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.decode_body

    def decode_body(envelope):  # noqa: ANN001, ANN202 - the SDK's own signature
        body = original(envelope)
        if envelope.kind == "manifest_conflict" and body.get("active_generation") is None:
            raise codec._malformed("/body/active_generation", "member has the wrong type")
        return body

    replace_everywhere(original, decode_body)


@mutant(
    "json-lone-surrogate-replaced",
    "the JSON convenience replaces a lone surrogate escape with U+FFFD (as Go's parser does)",
)
def _json_lone_surrogate_replaced() -> None:
    convenience = _m("ryusen_sdk.json_convenience")

    def replace(node):  # noqa: ANN001, ANN202 - any parsed JSON
        if isinstance(node, str):
            return "".join("\ufffd" if "\ud800" <= c <= "\udfff" else c for c in node)
        if isinstance(node, list):
            return [replace(item) for item in node]
        if isinstance(node, dict):
            return {replace(key): replace(value) for key, value in node.items()}
        return node

    convenience._check_parsed = lambda node: None  # no refusal: the parse is kept, replaced
    original = convenience.from_bytes
    replace_everywhere(original, lambda data: replace(original(data)))


@mutant(
    "emit-big-integer-refused",
    "an integer with no exact double in an emitted JSON document is refused (sdk.json)",
)
def _emit_big_integer_refused() -> None:
    convenience = _m("ryusen_sdk.json_convenience")
    original = convenience.checked_document

    def checked_document(document):  # noqa: ANN001, ANN202 - the SDK's own signature
        stack = [document]
        while stack:
            node = stack.pop()
            if type(node) is int and float(node) != node:
                raise convenience.JsonConvenienceError(f"{node} has no exact IEEE-754 double")
            if isinstance(node, list):
                stack.extend(node)
            elif isinstance(node, dict):
                stack.extend(node.values())
        return original(document)

    replace_everywhere(original, checked_document)


# ------------------------------------------------------------- host contract §13.5 answers


@mutant("compensate-both-takes-fail", "a compensate with both fail and throw takes fail (§13.5)")
def _compensate_both_takes_fail() -> None:
    program = _m("conform_host.program")
    original = program.Program._run

    def _run(self, op):  # noqa: ANN001, ANN202 - the host's own signature
        spec = op.get("compensate")
        if isinstance(spec, dict) and "fail" in spec and "throw" in spec:
            op = {**op, "compensate": {"fail": spec["fail"]}}
        return original(self, op)

    program.Program._run = _run


@mutant(
    "compensate-empty-bad-program", "a compensate object with neither fail nor throw is refused"
)
def _compensate_empty_bad_program() -> None:
    program = _m("conform_host.program")
    original = program.Program._run

    def _run(self, op):  # noqa: ANN001, ANN202 - the host's own signature
        spec = op.get("compensate")
        if isinstance(spec, dict) and not {"fail", "throw"} & spec.keys():
            raise program.BadProgram("compensate needs fail or throw")
        return original(self, op)

    program.Program._run = _run


@mutant("attempts-rounded", 'a non-integer `attempts` (2.5, "3") is rounded or parsed (§13.5)')
def _attempts_rounded() -> None:
    program = _m("conform_host.program")
    original = program.Program._run

    def _run(self, op):  # noqa: ANN001, ANN202 - the host's own signature
        attempts = op.get("attempts")
        if isinstance(attempts, float | str) and not isinstance(attempts, bool):
            op = {**op, "attempts": round(float(attempts))}
        return original(self, op)

    program.Program._run = _run


@mutant(
    "cause-defaults-top-only",
    "a program's record defaults are applied at the top, not in its cause",
)
def _cause_defaults_top_only() -> None:
    program = _m("conform_host.program")
    original = program.parse_record

    def parse_record(value):  # noqa: ANN001, ANN202 - the host's own signature
        record = original(value)
        if isinstance(value, dict) and isinstance(value.get("cause"), dict):
            record["cause"] = dict(value["cause"])  # as written: no defaults
        return record

    replace_everywhere(original, parse_record)


@mutant(
    "json-text-unparsable-as-sdk-json", "an emit json text that does not parse fails as sdk.json"
)
def _json_text_unparsable_as_sdk_json() -> None:
    program = _m("conform_host.program")
    errors = _m("ryusen_sdk.errors")
    original = program._emit_payload

    def _emit_payload(op):  # noqa: ANN001, ANN202 - the host's own signature
        try:
            return original(op)
        except program.BadProgram as exc:
            if "json" in op and "payload" not in op:
                raise errors.JsonConvenienceError(str(exc)) from None
            raise

    replace_everywhere(original, _emit_payload)


@mutant("registry-spec-ids-coerced", "a registry spec's non-string function id is coerced to text")
def _registry_spec_ids_coerced() -> None:
    host = _m("conform_host.host")
    original = host._registry_spec

    def _registry_spec(spec):  # noqa: ANN001, ANN202 - the host's own signature
        if isinstance(spec, dict) and isinstance(spec.get("functions"), list):
            functions = [
                {**item, "id": str(item["id"])} if isinstance(item, dict) and "id" in item else item
                for item in spec["functions"]
            ]
            spec = {**spec, "functions": functions}
        return original(spec)

    replace_everywhere(original, _registry_spec)


@mutant(
    "server-answer-wrong-kind-ignored",
    "a server answer of another request's kind is refused and the wait goes on (not failed)",
    # A correct server never sends it; the SDK registers or activates nothing from it either
    # way, so the server could tolerate both answers (D-SERVER-ANSWER-DECODE: recommended).
    recommended_only="D-SERVER-ANSWER-DECODE",
)
def _server_answer_wrong_kind_ignored() -> None:
    host = _m("conform_host.host")
    host.SERVER_ANSWER_KINDS = frozenset()


# ------------------------------------------------- faults the corpus did not see (issue 36)


def _drop_empty_values(kind: str, member: str) -> None:
    """Declarations of `kind` lose the pairs of their string map `member` whose value is ""."""

    def rewrite(declaration):
        if declaration.get("type") == kind and isinstance(declaration.get(member), dict):
            declaration[member] = {k: v for k, v in declaration[member].items() if v != ""}
        return declaration

    _rewrite_declarations(rewrite)


@mutant(
    "correlation-empty-values-dropped",
    'a wait\'s correlation pairs whose value is "" are dropped (taken as unset)',
)
def _correlation_empty_values_dropped() -> None:
    _drop_empty_values("wait", "correlation")


@mutant(
    "metadata-empty-values-dropped",
    'an emission\'s metadata pairs whose value is "" are dropped (taken as unset)',
)
def _metadata_empty_values_dropped() -> None:
    _drop_empty_values("emit", "metadata")


@mutant(
    "duration-rounded-per-component",
    "each component of a duration is rounded up on its own before the sum (500us500us is 2 ms)",
)
def _duration_rounded_per_component() -> None:
    durations = _m("ryusen_sdk.durations")
    original = durations.parse_exact

    def parse_exact(text):
        exact = original(text)  # keep the grammar and its refusals
        if exact <= 0:
            return exact
        body = text.lstrip("+")
        return sum(
            math.ceil(durations._decimal(number) * durations._UNITS[unit])
            for number, unit in durations._COMPONENT.findall(body)
        )

    replace_everywhere(original, parse_exact)


@mutant("micro-greek-refused", "the Greek spelling μs (U+03BC) of microseconds is malformed")
def _micro_greek_refused() -> None:
    import re

    durations = _m("ryusen_sdk.durations")
    unit = "(?:ns|us|\u00b5s|ms|s|m|h)"
    durations._COMPONENT = re.compile(f"({durations._NUMBER})({unit})")
    durations._WHOLE = re.compile(f"[+-]?(?:0|(?:{durations._NUMBER}{unit})+)")


@mutant(
    "child-negative-timeout-refused",
    "a negative child invoke timeout is refused (sdk.invalid_duration), not declared as 0",
)
def _child_negative_timeout_refused() -> None:
    workflow = _m("ryusen_sdk.workflow")
    durations = _m("ryusen_sdk.durations")
    errors = _m("ryusen_sdk.errors")
    original = workflow.Workflow.invoke

    def invoke(self, id, function_id, input, timeout=None):
        if timeout is not None:
            try:
                negative = durations.exact_millis(timeout) < 0
            except errors.RyusenError:
                negative = False  # malformed: the SDK's own refusal
            if negative:
                raise errors.InvalidDurationError("a child timeout cannot be negative")
        return original(self, id, function_id, input, timeout)

    workflow.Workflow.invoke = invoke


@mutant(
    "json-top-level-scalar-refused",
    'the JSON convenience refuses a document that is a scalar (3, "x", true), as RFC 4627 did',
)
def _json_top_level_scalar_refused() -> None:
    convenience = _m("ryusen_sdk.json_convenience")
    errors = _m("ryusen_sdk.errors")
    original = convenience.from_bytes

    def from_bytes(data):
        document = original(data)
        if not isinstance(document, dict | list):
            raise errors.JsonConvenienceError("a JSON text is an object or an array")
        return document

    replace_everywhere(original, from_bytes)


@mutant(
    "emit-json-string-unquoted",
    "an emitted JSON document that is a string is written as its bare text, without quotes",
)
def _emit_json_string_unquoted() -> None:
    payloads = _m("ryusen_sdk.payloads")
    original = payloads.as_given_json

    def as_given_json(document):
        if type(document) is str:
            return document.encode("utf-8")
        return original(document)

    replace_everywhere(original, as_given_json)


@mutant(
    "version-major-first-char",
    'a version\'s major is read from its first character ("10.0" is taken for major 1)',
)
def _version_major_first_char() -> None:
    codec = _m("ryusen_sdk.codec")
    original = codec.version_major

    def version_major(text):
        return None if original(text) is None else int(text[0])

    replace_everywhere(original, version_major)


@mutant(
    "reset-keeps-trace",
    "conform.reset leaves the effect trace in place (only conform.trace empties it)",
)
def _reset_keeps_trace() -> None:
    trace = _m("conform_host.trace")
    trace.Trace.clear = lambda self: None


def _rewrite_blocker_sources(rewrite: Callable[[dict], None]) -> None:
    """Patch the decision machine so every `definition_blocked` body passes through `rewrite`."""
    workflow = _m("ryusen_sdk.workflow")
    original = workflow.DecisionMachine.encounter

    def encounter(self, step_id, source):
        answer = original(self, step_id, source)
        if answer is not None and answer.kind == "definition_blocked":
            rewrite(answer.body)
        return answer

    workflow.DecisionMachine.encounter = encounter


@mutant(
    "blocker-sources-swapped",
    "definition_blocked names the repeated declaration as first_source and the first as duplicate",
    # optional metadata the server only shows: D-BLOCKER-SOURCES makes its fixtures recommended
    recommended_only="D-BLOCKER-SOURCES",
)
def _blocker_sources_swapped() -> None:
    def swap(body: dict) -> None:
        body["first_source"], body["duplicate_source"] = (
            body["duplicate_source"],
            body["first_source"],
        )

    _rewrite_blocker_sources(swap)


@mutant(
    "blocker-sources-both-duplicate",
    "definition_blocked gives the repeated declaration's source as first_source too",
    recommended_only="D-BLOCKER-SOURCES",
)
def _blocker_sources_both_duplicate() -> None:
    def both(body: dict) -> None:
        body["first_source"] = dict(body["duplicate_source"])

    _rewrite_blocker_sources(both)


def _kind_of(body: bytes) -> str | None:
    """The `kind` of a request body, peeked at without the SDK's decoder (None if not JSON)."""
    import json

    try:
        document = json.loads(body)
    except ValueError:
        return None
    return document.get("kind") if isinstance(document, dict) else None


def _authenticated_only(kinds: Callable[[str | None], bool]) -> None:
    """Authentication applied only to requests whose kind `kinds` picks (D-HTTP-AUTH says all)."""
    http = _m("conform_host.http_serve")
    original = http.Guard.refusal

    def refusal(self: Any, headers: Any, body: bytes) -> str | None:
        return original(self, headers, body) if kinds(_kind_of(body)) else None

    http.Guard.refusal = refusal


_SERVER_ANSWERS = ("register_ack", "register_refused", "manifest_activated", "manifest_conflict")


@mutant("http.auth-only-invoke", "only invoke requests are authenticated")
def _http_auth_only_invoke() -> None:
    _authenticated_only(lambda kind: kind == "invoke")


@mutant(
    "http.auth-skips-server-answers",
    "a server answer (register_ack, manifest_*) is taken without authentication",
)
def _http_auth_skips_server_answers() -> None:
    _authenticated_only(lambda kind: kind not in (*_SERVER_ANSWERS, "manifest_rejected"))


@mutant("http.auth-skips-reports", "a protocol_error report is taken without authentication")
def _http_auth_skips_reports() -> None:
    _authenticated_only(lambda kind: kind != "protocol_error")


@mutant("http.auth-skips-control", "conform.* control requests are not authenticated")
def _http_auth_skips_control() -> None:
    _authenticated_only(lambda kind: not (kind or "").startswith("conform."))


@mutant(
    "http.refused-request-spends-nonce",
    "a request's nonce is used up before its signature and timestamp are checked",
)
def _http_refused_request_spends_nonce() -> None:
    import time

    http = _m("conform_host.http_serve")
    original = http.Guard.refusal

    def refusal(self: Any, headers: Any, body: bytes) -> str | None:
        nonce = headers.get("Ryusen-Nonce")
        if nonce and nonce in self._seen:
            return "replayed request"
        why = original(self, headers, body)
        if nonce:
            self._seen[nonce] = time.time()  # spent whatever the verdict
        return why

    http.Guard.refusal = refusal


@mutant(
    "http.replay-keyed-by-signature",
    "the replay memory holds signatures, not nonces: a used nonce signed afresh is accepted",
)
def _http_replay_keyed_by_signature() -> None:
    http = _m("conform_host.http_serve")
    original = http.Guard.refusal

    def refusal(self: Any, headers: Any, body: bytes) -> str | None:
        signature = headers.get("Ryusen-Signature") or ""
        if signature in self._seen:
            return "replayed request"
        why = original(self, headers, body)
        if why is None:
            nonce = headers.get("Ryusen-Nonce")
            self._seen[signature] = self._seen.pop(nonce)  # remembered by signature only
        return why

    http.Guard.refusal = refusal


@mutant(
    "http.content-type-before-auth",
    "the content type is checked before authentication (an unsigned text/plain is malformed)",
    recommended_only="D-HTTP-ORDER",
)
def _http_content_type_before_auth() -> None:
    http = _m("conform_host.http_serve")
    original = http.request_refusal

    def request_refusal(guard: Any, headers: Any, body: bytes) -> bytes | None:
        content_type = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
        if content_type != "application/json":
            return http.refusal_envelope("protocol.malformed", "not application/json")
        return original(guard, headers, body)

    http.request_refusal = request_refusal


@mutant(
    "http.malformed-auth-header-is-malformed",
    "a malformed authentication header is answered protocol.malformed, not unauthenticated",
    recommended_only="D-HTTP-ORDER",
)
def _http_malformed_auth_header_is_malformed() -> None:
    http = _m("conform_host.http_serve")
    original = http.refusal_envelope

    def refusal_envelope(category: str, message: str) -> bytes:
        if category == "protocol.unauthenticated" and message.startswith("malformed"):
            category = "protocol.malformed"
        return original(category, message)

    http.refusal_envelope = refusal_envelope


@mutant(
    "http.auth-before-length",
    "the authentication headers are checked before the length (an unsigned oversized request "
    "is unauthenticated)",
    recommended_only="D-HTTP-ORDER",
)
def _http_auth_before_length() -> None:
    http = _m("conform_host.http_serve")
    original = http.length_refusal

    import os

    def length_refusal(headers: Any) -> bytes | None:
        signed = all(
            headers.get(name) for name in ("Ryusen-Timestamp", "Ryusen-Nonce", "Ryusen-Signature")
        )
        if os.environ.get("RYUSEN_CONFORM_HTTP_SECRET") and not signed:
            return http.refusal_envelope("protocol.unauthenticated", "unsigned request")
        return original(headers)

    http.length_refusal = length_refusal


@mutant(
    "http.empty-200-for-no-answer",
    "a request without an answer is answered 200 with an empty body, not 204",
)
def _http_empty_200_for_no_answer() -> None:
    http = _m("conform_host.http_serve")
    original = http.response_for

    def response_for(written: list[bytes]) -> tuple[int, bytes, dict[str, str]]:
        if not written:
            return 200, b"", {"Content-Type": "application/json"}
        return original(written)

    http.response_for = response_for


@mutant("http.no-length-411", "a request without Content-Length is a bare 411 Length Required")
def _http_no_length_411() -> None:
    def no_length(envelope: dict) -> bool:
        error = envelope.get("body", {}).get("error", {})
        return _category(envelope) == "protocol.malformed" and error.get("message") == (
            "no Content-Length"
        )

    _bare_status(411, {}, no_length)
