"""Reading program members out of tagged values, and building the values a program returns."""

from __future__ import annotations

from fakepeer.oracle.model import BadProgram, Unmodeled
from fakepeer.protocol.errors import CATEGORY

NULL: dict = {"t": "null"}


def members(value: object) -> dict | None:
    """The members of a tagged `object`, or None for any other value."""
    if isinstance(value, dict) and value.get("t") == "object" and isinstance(value.get("v"), dict):
        return value["v"]
    return None


def items(value: object) -> list | None:
    """The items of a tagged `array`, or None."""
    if isinstance(value, dict) and value.get("t") == "array" and isinstance(value.get("v"), list):
        return value["v"]
    return None


def text(value: object) -> str | None:
    """The payload of a tagged `str`, or None."""
    if isinstance(value, dict) and value.get("t") == "str" and isinstance(value.get("v"), str):
        return value["v"]
    return None


def integer(value: object) -> int | None:
    """The payload of a tagged `i64`, or None."""
    if isinstance(value, dict) and value.get("t") == "i64":
        return int(value["v"])
    return None


def is_true(value: object) -> bool:
    """True only for the tagged boolean true."""
    return isinstance(value, dict) and value.get("t") == "bool" and value.get("v") is True


def string(value: str) -> dict:
    """A tagged `str`."""
    return {"t": "str", "v": value}


def obj(fields: dict) -> dict:
    """A tagged `object` of tagged members."""
    return {"t": "object", "v": fields}


def record_value(record: dict) -> dict:
    """An error record as the value a program stores: `{"category", "message", ...}` (§13.2)."""
    fields = {
        "category": string(record["category"]),
        "message": string(record["message"]),
        "retryable": {"t": "bool", "v": record["retryable"]},
        "details": obj({key: string(val) for key, val in record["details"].items()}),
    }
    if "cause" in record:
        fields["cause"] = record_value(record["cause"])
    return obj(fields)


def need_text(op: dict, name: str) -> str:
    """A required string member of an op; a missing or mistyped one is a malformed op."""
    found = text(op.get(name))
    if found is None:
        raise BadProgram(f"member {name!r} must be a string")
    return found


def written_record(value: object) -> dict | None:
    """The record a program writes (`fail`, `raise`, `compensate.fail`) as the SDK's public
    constructor would build it, or None when the constructor refuses it (`sdk.conversion`, §5.1).

    The host checks only that it is an object (else a malformed op) and applies the defaults.
    """
    fields = members(value)
    if fields is None:
        raise BadProgram("an error record must be an object")
    category = text(fields.get("category"))
    if category is None or not CATEGORY.fullmatch(category):
        return None
    message = fields.get("message", string(""))
    retryable = fields.get("retryable", {"t": "bool", "v": False})
    details = members(fields.get("details", obj({})))
    if text(message) is None or retryable.get("t") != "bool" or details is None:
        return None
    if any(text(item) is None for item in details.values()):
        return None
    record = {
        "category": category,
        "message": text(message),
        "retryable": retryable["v"],
        "details": {key: text(item) for key, item in details.items()},
    }
    if "cause" in fields:
        if members(fields["cause"]) is None:
            return None
        cause = written_record(fields["cause"])
        if cause is None:
            return None
        record["cause"] = cause
    return record


def sdk_value(value: dict) -> dict:
    """A value after the SDK's two conversions (§3.5): decoded to a language value (unknown
    members dropped), then encoded again (limits checked: a refusal is `sdk.conversion`)."""
    from fakepeer.oracle.model import sdk_error
    from fakepeer.protocol.values import ConversionError, from_python, to_python

    try:
        return from_python(to_python(value))
    except ConversionError:
        raise sdk_error("sdk.conversion") from None
    except RecursionError:
        raise Unmodeled("a value nested too deeply to convert here") from None


def wire_record(record: dict) -> dict:
    """A server-supplied record as it reaches the workflow: its §5.1 members, unknown ones
    dropped (§2), otherwise unchanged."""
    kept = {key: record[key] for key in ("category", "message", "retryable", "details")}
    if "cause" in record:
        kept["cause"] = wire_record(record["cause"])
    return kept
