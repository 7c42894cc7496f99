"""Hypothesis strategies for `fuzz --semantics`: programs, histories, modes, targets, ambient.

Why bytes: hypothesis draws one byte string and every choice below reads one byte of it (a
missing byte reads 0, the simplest option), so hypothesis shrinks a case by shrinking the bytes
(fewer ops, simpler choices) while drawing stays cheap: one draw per case instead of hundreds.

Why this shape: SDKs diverge in the long tail of replay semantics (repeated step IDs, caught
suspensions, targets after a code change), so every op of `conform.program` (host-contract
§13.2) is drawn, step IDs come from a small pool (repeats and removed or renamed steps are
common), and histories mix consistent entries, failures and values of the wrong shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hypothesis import strategies as st

STEP_IDS = ("a", "b", "c", "d")
#: History may also name steps no program has (removed or renamed in a deployment).
HISTORY_IDS = (*STEP_IDS, "gone")
VARIABLES = ("x", "y", "z")
AMBIENT_KEY = "flag"


def s(text: str) -> dict:
    """A tagged str."""
    return {"t": "str", "v": text}


def i(number: int) -> dict:
    """A tagged i64."""
    return {"t": "i64", "v": str(number)}


def b(flag: bool) -> dict:
    """A tagged bool."""
    return {"t": "bool", "v": flag}


def o(**fields: dict) -> dict:
    """A tagged object (Python keywords as member names)."""
    return {"t": "object", "v": fields}


def arr(values: list) -> dict:
    """A tagged array."""
    return {"t": "array", "v": values}


@dataclass(frozen=True)
class SemanticCase:
    """One invocation to play: the host state, then one `invoke` body (tagged throughout)."""

    body: dict
    ambient: tuple[tuple[str, str], ...] = ()
    admission: bool = True
    notes: tuple[str, ...] = field(default=(), compare=False)


# ------------------------------------------------------------------------- choices


class Choices:
    """Reads choices from a byte string; past its end every choice is 0 (the simplest)."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.at = 0

    def int(self, count: int) -> int:
        """A choice in range(count)."""
        byte = self.data[self.at] if self.at < len(self.data) else 0
        self.at += 1
        return byte % count

    def pick(self, options: tuple | list):  # type: ignore[no-untyped-def]
        """One of `options`; the first is the simplest."""
        return options[self.int(len(options))]

    def flag(self, odds: int = 2) -> bool:
        """True once in `odds` (False on a 0 byte)."""
        return self.int(odds) == odds - 1


# ------------------------------------------------------------------------- values


def _nested(depth: int) -> dict:
    value: dict = {"t": "null"}
    for _ in range(depth - 1):
        value = {"t": "array", "v": [value]}
    return value


SMALL_VALUES = (
    {"t": "null"},
    s("v"),
    s(""),
    i(7),
    i(-1),
    {"t": "u64", "v": "18446744073709551615"},
    {"t": "f64", "v": "-0"},
    {"t": "f64", "v": "1.5"},
    b(True),
    {"t": "bytes", "v": "eyJpZCI6MX0="},
    {"t": "instant", "v": "1767225600000"},
    {"t": "duration", "v": "1500"},
    arr([i(1), {"t": "null"}]),
    o(k=s("v")),
    o(),
    # edge values of §3 a codec may get wrong on the way through a program
    {"t": "bytes", "v": "AP8="},
    {"t": "bytes", "v": ""},
    {"t": "i64", "v": "-9223372036854775808"},
    {"t": "f64", "v": "1e+21"},
    {"t": "f64", "v": "1e-7"},
    {"t": "f64", "v": "100"},
    s("na\u0131\u0308ve \u2603 a\u0000b"),
    s("e\u0301"),
    o(a={"t": "null"}, b=arr([])),
    {
        "t": "blob",
        "v": {
            "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "size": "0",
            "media_type": "text/plain",
        },
    },
    {
        "t": "blob",
        "v": {
            "sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            "size": "0",
        },
    },
    {"t": "instant", "v": "-1"},
    {"t": "duration", "v": "-9223372036854775808"},
    {"t": "f64", "v": "0.000001"},
    _nested(62),  # with the program's own nesting, values about the §4.3 depth limit
    _nested(63),
    _nested(64),
    # unknown members of a tagged value are ignored (protocol §3.3, D-TAGGED-UNKNOWN-MEMBERS)
    {"t": "str", "v": "v", "note": "ignored"},
    {"t": "null", "v": 5},
)
CATEGORIES = ("app.boom", "payments.declined", "sdk.timeout", "app.unhandled")
DURATIONS = (
    s("1s"), s("1.5s"), s("0"), s("-5s"), s("200ms"), s("1h30m"), s("1ns"), i(1500), i(0),
    i(-1), s("5"), s("1S"), s("1.1s"), s("4.03s"), s("1.0001ms"), s("90m"), s("1\u00b5s"),
    s("2ms"), s("1d"), s(" 1s"), s("9223372036854775808ms"), s("-0s"), s(".5s"), s("1s1s"),
)  # fmt: skip
STRING_MAPS = (o(), o(order=s("A-1")), o(order=i(1)), s("not a map"))
#: JSON texts for the §3.6 convenience; the last is an escaped lone surrogate (refused).
JSON_TEXTS = ('{"b":1,"a":[true,null]}', '"x"', "[1.5,-0]", '{"a":{}}', '"\u00e9\u2603"',
              "1e21", "NaN", "", "1 2", "1e999", '{"a":1,"a":2}', "nope",
              '["\\ud800"]')  # fmt: skip
#: JSON documents an emission writes (§10.1): the portable ones above, and negative zeros
#: spelled as a double (`-0.0`, `-0e0`), whose text is the SDK language's (JSON.stringify writes
#: `0`, a Python SDK `-0`): the oracle leaves their payload bytes open (D-EMIT-PAYLOAD).
EMIT_JSON_TEXTS = (*JSON_TEXTS[:6], '{"a":-0.0,"b":[-0e0,1]}', "-0.0")
#: Messages a program throws: the empty one is reported empty, never as a class name (§11.5).
THROWN = ("thrown", "")
#: Child timeouts: the typed numeric 0 (an immediate durable timeout, §6.2) more often.
CHILD_TIMEOUTS = (i(0), *DURATIONS)


def wire_record(c: Choices) -> dict:
    """An error record as history holds it: always complete."""
    return {"category": c.pick(CATEGORIES), "message": c.pick(("no", "", "boom")),
            "retryable": c.flag(), "details": {"code": "51"} if c.flag() else {}}  # fmt: skip


def written_record(c: Choices) -> dict:
    """An error record as a program writes it: members may be missing, or bad (§13.2)."""
    category = c.pick(CATEGORIES)
    if c.flag(10):
        category = c.pick(("Bad Category", ""))
    fields = {"category": s(category)}
    if c.flag(12):
        del fields["category"]  # handed on all the same: the SDK's constructor refuses it
    if c.flag():
        fields["message"] = s(c.pick(("no", "", "boom")))
    if c.flag():
        fields["retryable"] = b(c.flag())
    if c.flag():
        details = {"code": s("51")} if c.flag() else {}
        if c.flag(10):
            details = {"code": i(51)}  # not a string: the SDK's constructor refuses it
        fields["details"] = o(**details)
    return {"t": "object", "v": fields}


# ------------------------------------------------------------------------- ops


def _step_common(c: Choices, fields: dict, catch: bool = True) -> dict:
    fields["id"] = s("" if c.flag(16) else c.pick(STEP_IDS))  # "" is a step ID (§10.1)
    if c.flag():
        fields["as"] = s(c.pick(VARIABLES))
    if catch and c.flag(4):
        fields["catch"] = b(True)
    return o(**fields)


def run_op(c: Choices) -> dict:
    """`run`: a step with or without compensator, retry policy and each kind of callback."""
    fields: dict = {"op": s("run")}
    if c.flag(4):
        fields["name"] = s(c.pick(("", "Charge card")))  # an empty name is a name (§10.1)
    if c.flag(4):
        fields["attempts"] = i(c.pick((1, 5, 1000, 0, 1001)))
    callback = c.pick(("result", "result", "fail", "echo", "throw", "unportable"))
    if callback == "result" and c.flag():
        fields["result"] = c.pick(SMALL_VALUES)
    elif callback == "fail":
        fields["fail"] = written_record(c)
    elif callback == "echo":
        fields["echo"] = b(True)
    elif callback == "throw":
        fields["throw"] = s(c.pick(THROWN))
    elif callback == "unportable":
        fields["unportable"] = s(c.pick(("nan", "closure", "plain", "non_string_keys",
                                          "infinity", "object")))  # fmt: skip
    compensate = c.pick((None, "true", None, "fail", "throw"))
    if compensate == "true":
        fields["compensate"] = b(True)
    elif compensate == "fail":
        fields["compensate"] = o(fail=written_record(c))
    elif compensate == "throw":
        fields["compensate"] = o(throw=s(c.pick(("undo failed", ""))))
    return _step_common(c, fields)


def other_step_op(c: Choices) -> dict:
    """Timers, waits, child invocations and emissions."""
    kind = c.pick(("sleep", "wait", "invoke", "emit", "sleep_until"))
    fields: dict = {"op": s(kind)}
    if kind == "sleep":
        fields["duration"] = c.pick(DURATIONS)
    elif kind == "sleep_until":
        fields["deadline"] = {"t": "instant", "v": c.pick(("1767225600000", "-1"))}
    elif kind == "wait":
        fields["event"] = s("order.approved")
        if c.flag():
            fields["correlation"] = c.pick(STRING_MAPS)
        fields["timeout"] = c.pick(DURATIONS)
    elif kind == "invoke":
        fields["function"] = s(c.pick(("conform.echo", "other.app")))
        fields["input"] = c.pick(SMALL_VALUES)
        if c.flag():
            fields["timeout"] = c.pick(CHILD_TIMEOUTS)
    else:
        fields["event"] = s("order.shipped")
        if c.flag(3):
            fields["json"] = s(c.pick(EMIT_JSON_TEXTS))
        else:
            fields["payload"] = c.pick(({"t": "bytes", "v": "AP8="}, s("text")))
        if c.flag():
            fields["metadata"] = c.pick(STRING_MAPS)
        if c.flag(4):
            fields["attempts"] = i(c.pick((1, 2, 0)))
    return _step_common(c, fields, catch=kind != "sleep_until")  # §13.2: sleep_until has no catch


def plain_op(c: Choices) -> dict:
    """Ops that are not step calls: duration, json_bytes, raise, throw, return."""
    kind = c.pick(("return", "throw", "raise", "duration", "json_bytes"))
    if kind == "return":
        return o(op=s("return"), value=c.pick(SMALL_VALUES))
    if kind == "raise":
        return o(op=s("raise"), error=written_record(c))
    fields: dict = {"op": s(kind)}
    if kind == "duration":
        fields["value"] = c.pick(DURATIONS)
    elif kind == "json_bytes":
        fields["text"] = s(c.pick(JSON_TEXTS))
    else:
        fields["message"] = s(c.pick(THROWN))
    if c.flag():
        fields["as"] = s(c.pick(VARIABLES))
    if c.flag(3):
        fields["catch"] = b(True)
    return o(**fields)


#: Op kinds by theme: a theme concentrates a case on one area where SDKs go wrong (values
#: through replay, duration conversion, emission payloads); "mixed" draws from everything.
THEMES: dict[str, tuple[str, ...]] = {
    "mixed": ("run", "run", "step", "plain", "block"),
    "replay": ("run", "run", "run", "block"),
    "values": ("value", "value", "json"),
    "durations": ("duration",),
    "emit": ("emit",),
}


def op_list(c: Choices, depth: int = 0, theme: str = "mixed") -> list:
    """A list of ops; nested blocks (if_ambient, catch_all) up to two levels deep."""
    ops = []
    kinds = THEMES[theme] if depth < 2 else tuple(k for k in THEMES[theme] if k != "block")
    for _ in range(c.int(6 if depth == 0 else 4)):
        kind = c.pick(kinds or ("run",))
        if kind == "run":
            ops.append(run_op(c))
        elif kind == "step":
            ops.append(other_step_op(c))
        elif kind == "plain":
            ops.append(plain_op(c))
        elif kind == "value":
            ops.append(value_op(c))
        elif kind == "json":
            ops.append(o(op=s("json_bytes"), text=s(c.pick(JSON_TEXTS)), catch=b(True),
                         **{"as": s(c.pick(VARIABLES))}))  # fmt: skip
        elif kind == "duration":
            ops.append(duration_op(c))
        elif kind == "emit":
            ops.append(emit_op(c))
        elif c.flag():
            ops.append(o(op=s("catch_all"), ops=arr(op_list(c, depth + 1, theme))))
        else:
            then, other = op_list(c, depth + 1, theme), op_list(c, depth + 1, theme)
            equals = s(c.pick(("on", "off")))
            block = {"op": s("if_ambient"), "key": s(AMBIENT_KEY), "equals": equals,
                     "then": arr(then), "else": arr(other)}  # fmt: skip
            ops.append(o(**block))
    return ops


def value_op(c: Choices) -> dict:
    """A value travelling through a program: a step result, a child's input, a return."""
    kind = c.pick(("run", "run", "invoke", "return"))
    value = c.pick(SMALL_VALUES)
    if kind == "return":
        return o(op=s("return"), value=value)
    if kind == "invoke":
        return o(op=s("invoke"), id=s(c.pick(STEP_IDS)), function=s("conform.echo"), input=value,
                 **{"as": s(c.pick(VARIABLES))})  # fmt: skip
    return o(op=s("run"), id=s(c.pick(STEP_IDS)), result=value, **{"as": s(c.pick(VARIABLES))})


def duration_op(c: Choices) -> dict:
    """A duration converted: directly, or as a sleep, a wait timeout or a child timeout."""
    kind = c.pick(("duration", "sleep", "wait", "invoke", "sleep_until"))
    value = c.pick(CHILD_TIMEOUTS if kind == "invoke" else DURATIONS)
    step = {"id": s(c.pick(STEP_IDS))}
    if c.flag(3):
        step["catch"] = b(True)
        step["as"] = s(c.pick(VARIABLES))
    if kind == "duration":
        return o(op=s("duration"), value=value, catch=b(True), **{"as": s(c.pick(VARIABLES))})
    if kind == "sleep":
        return o(op=s("sleep"), duration=value, **step)
    if kind == "wait":
        if c.flag(3):  # a bad map and a bad duration at once: D-ARGUMENT-ORDER
            step["correlation"] = c.pick(STRING_MAPS)
        return o(op=s("wait"), event=s("order.approved"), timeout=value, **step)
    if kind == "sleep_until":  # an absolute instant, never converted: a past one is kept (§10.1)
        step.pop("catch", None)
        step.pop("as", None)
        deadline = c.pick(("-1", "1767225600000", "0", "-9223372036854775808"))
        return o(op=s("sleep_until"), deadline={"t": "instant", "v": deadline}, **step)
    return o(op=s("invoke"), function=s("conform.echo"), input=s("x"), timeout=value, **step)


def emit_op(c: Choices) -> dict:
    """An emission or a wait: payload forms, JSON documents, routing maps, attempts."""
    if c.flag(4):
        return o(op=s("wait"), id=s(c.pick(STEP_IDS)), event=s("order.approved"),
                 correlation=c.pick(STRING_MAPS), timeout=s("1h"), catch=b(True),
                 **{"as": s(c.pick(VARIABLES))})  # fmt: skip
    fields = {"op": s("emit"), "id": s(c.pick(STEP_IDS)), "event": s("order.shipped")}
    if c.flag():
        fields["json"] = s(c.pick(EMIT_JSON_TEXTS))
    else:
        fields["payload"] = c.pick(({"t": "bytes", "v": "AP8="}, {"t": "bytes", "v": ""},
                                    s("text"), o(a=i(1)), {"t": "null"}))  # fmt: skip
    if c.flag():
        fields["metadata"] = c.pick(STRING_MAPS)
    if c.flag(3):
        fields["attempts"] = i(c.pick((1, 2, 0, -1)))
    fields["catch"] = b(True)
    fields["as"] = s(c.pick(VARIABLES))
    return o(**fields)


# ------------------------------------------------------------------------- histories, targets


def random_history(c: Choices) -> list:
    """Entries for some step IDs (removed or renamed ones too): completed or failed."""
    entries = []
    for step_id in HISTORY_IDS:
        if c.flag(3):
            entries.append(_entry(c, step_id))
    return entries


def _entry(c: Choices, step_id: str) -> dict:
    if c.flag(5):
        return {"step_id": step_id, "status": "failed", "error": wire_record(c)}
    return {"step_id": step_id, "status": "completed", "value": c.pick(SMALL_VALUES)}


def step_ids_in(program_input: dict) -> list[str]:
    """The step IDs a program's step ops name, in order of appearance, each once."""
    found: list[str] = []

    def walk(ops: list) -> None:
        for op in ops:
            fields = op["v"]
            name = fields["op"]["v"]
            if name == "catch_all":
                walk(fields["ops"]["v"])
            elif name == "if_ambient":
                walk(fields["then"]["v"])
                walk(fields["else"]["v"])
            elif "id" in fields and fields["id"]["v"] not in found:
                found.append(fields["id"]["v"])

    walk(program_input["v"]["ops"]["v"])
    return found


def saga_history(c: Choices) -> list:
    """A consistent saga prefix, sometimes ending in a failure."""
    entries = []
    values = {"reserve": s("reserved:A-1"), "charge": o(charged=s("A-1")), "notify": {"t": "null"}}
    for step_id in ("reserve", "charge", "notify")[: c.int(4)]:
        if c.flag(5):
            entries.append({"step_id": step_id, "status": "failed", "error": wire_record(c)})
            break
        entries.append({"step_id": step_id, "status": "completed", "value": values[step_id]})
    return entries


def build_case(data: bytes) -> SemanticCase:
    """The case these bytes choose: function, input, mode, target, history, ambient, admission."""
    c = Choices(data)
    theme = c.pick(tuple(THEMES))
    function = c.pick(("conform.program",) * 12 + ("conform.saga", "conform.echo", "no.such"))
    mode = c.pick(("discover", "forward", "compensate"))
    if theme in ("values", "durations", "emit") and c.int(4):
        mode = "discover"  # these themes are about what discovery declares and returns
    if function == "conform.program" and c.flag(24):
        program_input, met = c.pick((s("ops"), arr([]), {"t": "null"}, o(), o(ops=s("x")))), []
    elif function == "conform.program":
        program_input = o(ops=arr(op_list(c, theme=theme)))
        met = step_ids_in(program_input)
    elif function == "conform.saga":
        program_input, met = o(order=s("A-1")), ["reserve", "charge", "notify"]
    else:
        program_input, met = c.pick(SMALL_VALUES), []
    target_id = None
    if mode != "discover":
        target_id = c.pick(met) if met and not c.flag(5) else c.pick(STEP_IDS)
    if function == "conform.saga":
        history = saga_history(c)
    elif met and (theme == "replay" or not c.flag(3)):
        upto = met.index(target_id) if target_id in met else len(met)
        if mode == "compensate" or (target_id in met and c.flag(4)):
            upto += 1  # the target's own entry: a compensation needs it, a forward may have it
        count = upto if not c.flag(4) else c.int(upto + 1)
        history = [_entry(c, step_id) for step_id in met[:count]]
        if c.flag(4):
            history.append(_entry(c, "gone"))  # a step the current code no longer has
    else:
        history = random_history(c)
    body = {"run_id": "run-1", "function_id": function, "mode": mode, "input": program_input,
            "history": history}  # fmt: skip
    if c.flag(12):
        body["x_extension"] = {"ignored": True}  # unknown members are ignored (protocol §2)
    if mode != "discover":
        body["target"] = {
            "run_id": "run-1",
            "step_id": target_id,
            "phase": "forward" if mode == "forward" else "compensation",
            "attempt": 1 + c.int(3),
            "operation_id": "op-" + c.pick(("7f3a", "b")),
            "fencing_generation": "11",
        }
    ambient = c.pick(((), ((AMBIENT_KEY, "on"),), ((AMBIENT_KEY, "off"),)))
    return SemanticCase(body, ambient, admission=not c.flag(16))


CASE_BYTES = 160


def semantic_cases(size: int = CASE_BYTES) -> st.SearchStrategy[SemanticCase]:
    """Cases built from one hypothesis byte string of a fixed size (hypothesis draws short
    strings far more often than long ones, and a short string makes a trivial case); it still
    shrinks, towards zero bytes, the simplest choices."""
    return st.binary(min_size=size, max_size=size).map(build_case)
