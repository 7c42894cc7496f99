"""Message shapes: the JSON Schema of each kind's body and the shared definitions (§2-§14).

Data only, part of the catalog: messages.py holds a row per kind (its direction, section and
role), this module what its body holds; the one function, `_settlement`, writes the four
settlement bodies from one template. The files in `schemas/` are generated from here by
`python scripts/generate_schemas.py`; never edit them by hand. A test fails when they drift.
"""

# ruff: noqa: E501  (schema text: long patterns and descriptions stay whole)

from __future__ import annotations

from typing import Any, Final

from fakepeer.protocol.values import TAGS

#: The shared `$defs` of common.schema.json, referenced as `common.schema.json#/$defs/<name>`.
COMMON_TITLE: Final = "Ryusen execution protocol 1.0: shared definitions (docs/protocol.md)"
COMMON_DEFS: Final[dict[str, Any]] = {
    "version": {
        "type": "string",
        "pattern": "^(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)$",
        "description": "MAJOR.MINOR (§2)",
    },
    "id": {
        "type": "string",
        "minLength": 1,
        "maxLength": 256,
        "description": "envelope correlation id (§2)",
    },
    "hash": {"type": "string", "pattern": "^sha256:[0-9a-f]{64}$", "description": "§4.2"},
    "hash_or_null": {"anyOf": [{"$ref": "#/$defs/hash"}, {"type": "null"}]},
    "generation_id": {
        "type": "string",
        "description": "a generation ID: opaque to an SDK, which never checks its format (§2, §8.5)",
    },
    "generation_id_or_null": {"anyOf": [{"$ref": "#/$defs/generation_id"}, {"type": "null"}]},
    "u64_string": {
        "type": "string",
        "pattern": (
            "^(0|[1-9][0-9]{0,18}|1[0-7][0-9]{18}|18[0-3][0-9]{17}|"
            "184[0-3][0-9]{16}|1844[0-5][0-9]{15}|18446[0-6][0-9]{14}|"
            "184467[0-3][0-9]{13}|1844674[0-3][0-9]{12}|184467440[0-6][0-9]{10}|"
            "1844674407[0-2][0-9]{9}|18446744073[0-6][0-9]{8}|"
            "1844674407370[0-8][0-9]{6}|18446744073709[0-4][0-9]{5}|"
            "184467440737095[0-4][0-9]{4}|18446744073709550[0-9]{3}|"
            "18446744073709551[0-5][0-9]{2}|1844674407370955160[0-9]|"
            "1844674407370955161[0-4]|18446744073709551615)$"
        ),
        "description": "canonical decimal u64 (§3.2)",
    },
    "i64_string": {
        "type": "string",
        "pattern": (
            "^(0|[1-9][0-9]{0,17}|[1-8][0-9]{18}|9[0-1][0-9]{17}|92[0-1][0-9]{16}|"
            "922[0-2][0-9]{15}|9223[0-2][0-9]{14}|92233[0-6][0-9]{13}|"
            "922337[0-1][0-9]{12}|92233720[0-2][0-9]{10}|922337203[0-5][0-9]{9}|"
            "9223372036[0-7][0-9]{8}|92233720368[0-4][0-9]{7}|"
            "922337203685[0-3][0-9]{6}|9223372036854[0-6][0-9]{5}|"
            "92233720368547[0-6][0-9]{4}|922337203685477[0-4][0-9]{3}|"
            "9223372036854775[0-7][0-9]{2}|922337203685477580[0-6]|"
            "9223372036854775807|-([1-9][0-9]{0,17}|[1-8][0-9]{18}|9[0-1][0-9]{17}|"
            "92[0-1][0-9]{16}|922[0-2][0-9]{15}|9223[0-2][0-9]{14}|"
            "92233[0-6][0-9]{13}|922337[0-1][0-9]{12}|92233720[0-2][0-9]{10}|"
            "922337203[0-5][0-9]{9}|9223372036[0-7][0-9]{8}|"
            "92233720368[0-4][0-9]{7}|922337203685[0-3][0-9]{6}|"
            "9223372036854[0-6][0-9]{5}|92233720368547[0-6][0-9]{4}|"
            "922337203685477[0-4][0-9]{3}|9223372036854775[0-7][0-9]{2}|"
            "922337203685477580[0-7]|9223372036854775808))$"
        ),
        "description": "canonical decimal i64 (§3.2)",
    },
    "small_count": {"type": "integer", "minimum": 0, "maximum": 2147483647},
    "attempt": {"type": "integer", "minimum": 1, "maximum": 2147483647},
    "non_empty_string": {"type": "string", "minLength": 1},
    "string_map": {"type": "object", "additionalProperties": {"type": "string"}},
    "capability": {"type": "string", "pattern": "^[a-z][a-z0-9_.]*$", "description": "§7.3"},
    "capability_list": {
        "type": "array",
        "items": {"$ref": "#/$defs/capability"},
        "uniqueItems": True,
    },
    "category": {"type": "string", "pattern": "^[a-z][a-z0-9_]*(\\.[a-z0-9_]+)*$"},
    "scope": {
        "type": "object",
        "required": ["workspace_id", "application_id"],
        "properties": {
            "workspace_id": {"$ref": "#/$defs/non_empty_string"},
            "application_id": {"$ref": "#/$defs/non_empty_string"},
        },
    },
    "error_record": {
        "type": "object",
        "description": "§5.1",
        "required": ["category", "message", "retryable", "details"],
        "properties": {
            "category": {"$ref": "#/$defs/category"},
            "message": {"type": "string"},
            "retryable": {"type": "boolean"},
            "details": {"$ref": "#/$defs/string_map"},
            "cause": {"$ref": "#/$defs/error_record"},
        },
    },
    "tag": {"enum": list(TAGS)},
    "value": {
        "description": "a tagged value (§3); exact members, no unknown ones. Canonical f64 text, depth and size are checked by fakepeer.protocol.values, not here.",
        "type": "object",
        "required": ["t"],
        "properties": {"t": {"$ref": "#/$defs/tag"}},
        "allOf": [
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "null"}}},
                "then": {"$ref": "#/$defs/value_null"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "bool"}}},
                "then": {"$ref": "#/$defs/value_bool"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "i64"}}},
                "then": {"$ref": "#/$defs/value_i64"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "u64"}}},
                "then": {"$ref": "#/$defs/value_u64"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "f64"}}},
                "then": {"$ref": "#/$defs/value_f64"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "str"}}},
                "then": {"$ref": "#/$defs/value_str"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "bytes"}}},
                "then": {"$ref": "#/$defs/value_bytes"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "array"}}},
                "then": {"$ref": "#/$defs/value_array"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "object"}}},
                "then": {"$ref": "#/$defs/value_object"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "instant"}}},
                "then": {"$ref": "#/$defs/value_instant"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "duration"}}},
                "then": {"$ref": "#/$defs/value_duration"},
            },
            {
                "if": {"required": ["t"], "properties": {"t": {"const": "blob"}}},
                "then": {"$ref": "#/$defs/value_blob"},
            },
        ],
    },
    # Tagged values carry no additionalProperties: false: unknown members inside a value are
    # ignored like any unknown field (protocol §3.3, docs/decisions.md D-TAGGED-UNKNOWN-MEMBERS).
    "value_null": {
        "type": "object",
        "required": ["t"],
        "properties": {"t": {"const": "null"}},
    },
    "value_bool": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {"t": {"const": "bool"}, "v": {"type": "boolean"}},
    },
    "value_i64": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {"t": {"const": "i64"}, "v": {"$ref": "#/$defs/i64_string"}},
    },
    "value_u64": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {"t": {"const": "u64"}, "v": {"$ref": "#/$defs/u64_string"}},
    },
    "value_f64": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {
            "t": {"const": "f64"},
            "v": {
                "type": "string",
                "pattern": "^-?(?:0|[1-9][0-9]*)(?:\\.[0-9]*[1-9])?(?:e[+-][1-9][0-9]*)?$",
            },
        },
    },
    "value_str": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {"t": {"const": "str"}, "v": {"type": "string"}},
    },
    "value_bytes": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {
            "t": {"const": "bytes"},
            "v": {
                "type": "string",
                "pattern": "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$",
            },
        },
    },
    "value_array": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {
            "t": {"const": "array"},
            "v": {"type": "array", "items": {"$ref": "#/$defs/value"}},
        },
    },
    "value_object": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {
            "t": {"const": "object"},
            "v": {"type": "object", "additionalProperties": {"$ref": "#/$defs/value"}},
        },
    },
    "value_instant": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {"t": {"const": "instant"}, "v": {"$ref": "#/$defs/i64_string"}},
    },
    "value_duration": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {"t": {"const": "duration"}, "v": {"$ref": "#/$defs/i64_string"}},
    },
    "value_blob": {
        "type": "object",
        "required": ["t", "v"],
        "properties": {
            "t": {"const": "blob"},
            "v": {
                "type": "object",
                "required": ["sha256", "size"],
                "properties": {
                    "sha256": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                    "size": {"$ref": "#/$defs/u64_string"},
                    "media_type": {"$ref": "#/$defs/non_empty_string"},
                },
            },
        },
    },
    "bytes_value": {"$ref": "#/$defs/value_bytes"},
    "function_declaration": {
        "type": "object",
        "required": ["id"],
        "description": "§8.1",
        "properties": {"id": {"type": "string"}, "timeout_ms": {"$ref": "#/$defs/u64_string"}},
    },
    "trigger_binding": {
        "type": "object",
        "required": ["id", "event", "function"],
        "description": "§8.1",
        "properties": {
            "id": {"type": "string"},
            "event": {"type": "string"},
            "function": {"type": "string"},
        },
    },
    "registry_spec": {
        "type": "object",
        "description": "§12.3 registry spec, author order, durations as author text",
        "required": ["functions", "triggers"],
        "properties": {
            "functions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id"],
                    "properties": {"id": {"type": "string"}, "timeout": {"type": "string"}},
                },
            },
            "triggers": {"type": "array", "items": {"$ref": "#/$defs/trigger_binding"}},
        },
    },
    "retry": {
        "type": "object",
        "required": ["max_attempts", "backoff_ms"],
        "properties": {
            "max_attempts": {"type": "integer", "minimum": 1, "maximum": 1000},
            "backoff_ms": {"$ref": "#/$defs/u64_string"},
        },
    },
    "declaration": {
        "type": "object",
        "description": "§10.1, selected by type",
        "required": ["type", "step_id"],
        "properties": {
            "type": {"enum": ["step", "timer", "wait", "invoke", "emit"]},
            "step_id": {"type": "string"},
        },
        "allOf": [
            {
                "if": {"required": ["type"], "properties": {"type": {"const": "step"}}},
                "then": {"$ref": "#/$defs/declaration_step"},
            },
            {
                "if": {"required": ["type"], "properties": {"type": {"const": "timer"}}},
                "then": {"$ref": "#/$defs/declaration_timer"},
            },
            {
                "if": {"required": ["type"], "properties": {"type": {"const": "wait"}}},
                "then": {"$ref": "#/$defs/declaration_wait"},
            },
            {
                "if": {"required": ["type"], "properties": {"type": {"const": "invoke"}}},
                "then": {"$ref": "#/$defs/declaration_invoke"},
            },
            {
                "if": {"required": ["type"], "properties": {"type": {"const": "emit"}}},
                "then": {"$ref": "#/$defs/declaration_emit"},
            },
        ],
    },
    "declaration_step": {
        "required": ["name", "retry", "has_compensation"],
        "properties": {
            "name": {"type": "string"},
            "retry": {"$ref": "#/$defs/retry"},
            "has_compensation": {"type": "boolean"},
        },
    },
    "declaration_timer": {
        "properties": {
            "delay_ms": {"$ref": "#/$defs/u64_string"},
            "deadline_ms": {"$ref": "#/$defs/i64_string"},
        },
        "oneOf": [
            {"required": ["delay_ms"], "not": {"required": ["deadline_ms"]}},
            {"required": ["deadline_ms"], "not": {"required": ["delay_ms"]}},
        ],
    },
    "declaration_wait": {
        "required": ["event", "correlation", "timeout_ms"],
        "properties": {
            "event": {"type": "string"},
            "correlation": {"$ref": "#/$defs/string_map"},
            "timeout_ms": {"$ref": "#/$defs/u64_string"},
        },
    },
    "declaration_invoke": {
        "required": ["function_id", "input"],
        "properties": {
            "function_id": {"type": "string"},
            "input": {"$ref": "#/$defs/value"},
            "timeout_ms": {"$ref": "#/$defs/u64_string"},
        },
    },
    "declaration_emit": {
        "required": ["event", "payload", "metadata"],
        "properties": {
            "event": {"type": "string"},
            "payload": {"$ref": "#/$defs/bytes_value"},
            "metadata": {"$ref": "#/$defs/string_map"},
        },
    },
    "history_entry": {
        "type": "object",
        "required": ["step_id", "status"],
        "description": "§9.1",
        "properties": {"step_id": {"type": "string"}, "status": {"enum": ["completed", "failed"]}},
        "allOf": [
            {
                "if": {"required": ["status"], "properties": {"status": {"const": "completed"}}},
                "then": {"required": ["value"], "properties": {"value": {"$ref": "#/$defs/value"}}},
            },
            {
                "if": {"required": ["status"], "properties": {"status": {"const": "failed"}}},
                "then": {
                    "required": ["error"],
                    "properties": {"error": {"$ref": "#/$defs/error_record"}},
                },
            },
        ],
    },
    "target": {
        "type": "object",
        "description": "§9.1",
        "required": ["run_id", "step_id", "phase", "attempt", "operation_id", "fencing_generation"],
        "properties": {
            "run_id": {"type": "string"},
            "step_id": {"type": "string"},
            "phase": {"$ref": "#/$defs/phase"},
            "attempt": {"$ref": "#/$defs/attempt"},
            "operation_id": {"$ref": "#/$defs/non_empty_string"},
            "fencing_generation": {"$ref": "#/$defs/u64_string"},
        },
    },
    "phase": {"enum": ["forward", "compensation"]},
    "source": {
        "type": "object",
        "required": ["file", "line"],
        "properties": {"file": {"type": "string"}, "line": {"type": "integer", "minimum": 1}},
    },
}


def _settlement(member: str, definition: str) -> dict[str, Any]:
    """The body of a step's or compensation's settlement (a targeted answer, §10.4): which attempt of which
    operation under which fencing generation, and its result `member` (a value or an error)."""
    return {
        "type": "object",
        "required": ["operation_id", "attempt", "fencing_generation", member],
        "properties": {
            "operation_id": {"$ref": "common.schema.json#/$defs/non_empty_string"},
            "attempt": {"$ref": "common.schema.json#/$defs/attempt"},
            "fencing_generation": {"$ref": "common.schema.json#/$defs/u64_string"},
            member: {"$ref": f"common.schema.json#/$defs/{definition}"},
        },
    }


#: Each kind's `body` schema, keyed by kind (catalog order).
BODIES: Final[dict[str, dict[str, Any]]] = {
    "register": {
        "type": "object",
        "required": [
            "scope",
            "release",
            "instance_id",
            "manifest_hash",
            "functions",
            "contract",
            "versions",
            "capabilities",
            "capacity",
            "sdk",
        ],
        "properties": {
            "scope": {"$ref": "common.schema.json#/$defs/scope"},
            "release": {
                "type": "object",
                "required": ["kind"],
                "properties": {"kind": {"enum": ["versioned", "unversioned"]}},
                "allOf": [
                    {
                        "if": {
                            "required": ["kind"],
                            "properties": {"kind": {"const": "versioned"}},
                        },
                        "then": {
                            "required": ["id"],
                            "properties": {
                                "id": {"$ref": "common.schema.json#/$defs/non_empty_string"}
                            },
                        },
                    },
                    {
                        "if": {
                            "required": ["kind"],
                            "properties": {"kind": {"const": "unversioned"}},
                        },
                        "then": {
                            "required": ["group"],
                            "properties": {
                                "group": {
                                    "type": "string",
                                    "pattern": "^unversioned:sha256:[0-9a-f]{64}$",
                                }
                            },
                        },
                    },
                ],
            },
            "instance_id": {"$ref": "common.schema.json#/$defs/non_empty_string"},
            "manifest_hash": {"$ref": "common.schema.json#/$defs/hash"},
            "functions": {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            "contract": {
                "type": "object",
                "required": ["protocol_major", "value_codec", "capabilities"],
                "properties": {
                    "protocol_major": {"$ref": "common.schema.json#/$defs/small_count"},
                    "value_codec": {"const": "ryusen.tagged/1"},
                    "capabilities": {"$ref": "common.schema.json#/$defs/capability_list"},
                },
            },
            "versions": {
                "type": "array",
                "minItems": 1,
                "items": {"$ref": "common.schema.json#/$defs/version"},
                "uniqueItems": True,
            },
            "capabilities": {"$ref": "common.schema.json#/$defs/capability_list"},
            "capacity": {
                "type": "object",
                "required": ["max_concurrent"],
                "properties": {"max_concurrent": {"$ref": "common.schema.json#/$defs/attempt"}},
            },
            "sdk": {
                "type": "object",
                "required": ["name", "version", "language", "runtime"],
                "properties": {
                    "name": {"type": "string"},
                    "version": {"type": "string"},
                    "language": {"type": "string"},
                    "runtime": {"type": "string"},
                },
            },
        },
    },
    "register_ack": {
        "type": "object",
        "required": ["version", "capabilities", "required_capabilities"],
        "properties": {
            "version": {"$ref": "common.schema.json#/$defs/version"},
            "capabilities": {"type": "array", "items": {"type": "string"}},
            "required_capabilities": {"type": "array", "items": {"type": "string"}},
        },
    },
    "register_refused": {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
            "code": {
                "type": "string",
                "minLength": 1,
                "description": "unsupported_major, unknown_required_capability, conflicting_release, unauthorized_scope; an unknown code is still a refusal (§7.2)",
            },
            "message": {"type": "string"},
        },
    },
    "publish_manifest": {
        "type": "object",
        "required": ["scope", "expected_parent", "functions", "triggers", "contents"],
        "properties": {
            "scope": {"$ref": "common.schema.json#/$defs/scope"},
            "expected_parent": {"$ref": "common.schema.json#/$defs/generation_id_or_null"},
            "functions": {
                "type": "array",
                "items": {"$ref": "common.schema.json#/$defs/function_declaration"},
            },
            "triggers": {
                "type": "array",
                "items": {"$ref": "common.schema.json#/$defs/trigger_binding"},
            },
            "contents": {
                "type": "string",
                "pattern": "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$",
            },
        },
    },
    "manifest_activated": {
        "type": "object",
        "required": ["application_generation", "workspace_generation", "commit_order"],
        "properties": {
            "application_generation": {"$ref": "common.schema.json#/$defs/generation_id"},
            "workspace_generation": {"$ref": "common.schema.json#/$defs/generation_id"},
            "commit_order": {"type": "integer", "minimum": 1, "maximum": 2147483647},
        },
    },
    "manifest_conflict": {
        "type": "object",
        "required": ["active_generation", "message"],
        "properties": {
            "active_generation": {"$ref": "common.schema.json#/$defs/generation_id_or_null"},
            "message": {"type": "string"},
        },
    },
    "manifest_rejected": {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
            "code": {
                "enum": [
                    "empty_function_id",
                    "duplicate_function_id",
                    "invalid_timeout",
                    "empty_trigger_id",
                    "empty_event_name",
                    "undeclared_function",
                    "timeout_above_maximum",
                ]
            },
            "message": {"type": "string"},
        },
    },
    "invoke": {
        "type": "object",
        "required": ["run_id", "function_id", "mode", "input", "history"],
        "properties": {
            "run_id": {"$ref": "common.schema.json#/$defs/non_empty_string"},
            "function_id": {"type": "string"},
            "mode": {"enum": ["discover", "forward", "compensate"]},
            "input": {"$ref": "common.schema.json#/$defs/value"},
            "history": {
                "type": "array",
                "items": {"$ref": "common.schema.json#/$defs/history_entry"},
            },
            "target": {
                "description": "required when mode is forward or compensate; ignored for discover"
            },
        },
        "allOf": [
            {
                "if": {"required": ["mode"], "properties": {"mode": {"const": "forward"}}},
                "then": {
                    "required": ["target"],
                    "properties": {
                        "target": {
                            "allOf": [
                                {"$ref": "common.schema.json#/$defs/target"},
                                {"properties": {"phase": {"const": "forward"}}},
                            ]
                        }
                    },
                },
            },
            {
                "if": {"required": ["mode"], "properties": {"mode": {"const": "compensate"}}},
                "then": {
                    "required": ["target"],
                    "properties": {
                        "target": {
                            "allOf": [
                                {"$ref": "common.schema.json#/$defs/target"},
                                {"properties": {"phase": {"const": "compensation"}}},
                            ]
                        }
                    },
                },
            },
        ],
    },
    "declared": {
        "type": "object",
        "required": ["declaration"],
        "properties": {"declaration": {"$ref": "common.schema.json#/$defs/declaration"}},
    },
    "completed": {
        "type": "object",
        "required": ["value"],
        "properties": {"value": {"$ref": "common.schema.json#/$defs/value"}},
    },
    "failed": {
        "type": "object",
        "required": ["error"],
        "properties": {"error": {"$ref": "common.schema.json#/$defs/error_record"}},
    },
    "definition_blocked": {
        "type": "object",
        "required": ["reason", "step_id"],
        "properties": {
            "reason": {"enum": ["duplicate_step_id"]},
            "step_id": {"type": "string"},
            "first_source": {"$ref": "common.schema.json#/$defs/source"},
            "duplicate_source": {"$ref": "common.schema.json#/$defs/source"},
        },
    },
    "step_completed": _settlement("value", "value"),
    "step_failed": _settlement("error", "error_record"),
    "compensation_completed": _settlement("value", "value"),
    "compensation_failed": _settlement("error", "error_record"),
    "target_not_found": {
        "type": "object",
        "required": ["run_id", "step_id", "phase"],
        "properties": {
            "run_id": {"type": "string"},
            "step_id": {"type": "string"},
            "phase": {"$ref": "common.schema.json#/$defs/phase"},
        },
    },
    "rejected_before_start": {
        "type": "object",
        "required": ["request_id", "attempt", "fencing_generation", "reason"],
        "properties": {
            "request_id": {"type": "string"},
            "attempt": {"$ref": "common.schema.json#/$defs/attempt"},
            "fencing_generation": {"$ref": "common.schema.json#/$defs/u64_string"},
            "reason": {
                "type": "object",
                "required": ["code", "message", "retryable"],
                "properties": {
                    "code": {
                        "enum": ["unsupported_target", "unknown_function", "admission_refused"]
                    },
                    "message": {"type": "string"},
                    "retryable": {"type": "boolean"},
                },
            },
        },
    },
    "protocol_error": {
        "type": "object",
        "required": ["error"],
        "properties": {
            "error": {
                "allOf": [
                    {"$ref": "common.schema.json#/$defs/error_record"},
                    {
                        "type": "object",
                        "required": ["details"],
                        "properties": {
                            "category": {"type": "string", "pattern": "^protocol\\."},
                            "retryable": {"const": False},
                            "details": {
                                "type": "object",
                                "required": ["pointer"],
                                "properties": {"pointer": {"type": "string"}},
                            },
                        },
                    },
                ]
            }
        },
    },
    "conform.reset": {"type": "object"},
    "conform.register": {
        "type": "object",
        "required": ["scope", "release_id", "instance_id"],
        "properties": {
            "scope": {"$ref": "common.schema.json#/$defs/scope"},
            "release_id": {"type": ["string", "null"]},
            "instance_id": {"type": "string"},
        },
    },
    "conform.publish": {
        "type": "object",
        "required": ["scope", "expected_parent"],
        "properties": {
            "scope": {"$ref": "common.schema.json#/$defs/scope"},
            "expected_parent": {"$ref": "common.schema.json#/$defs/generation_id_or_null"},
            "registry": {"$ref": "common.schema.json#/$defs/registry_spec"},
        },
    },
    "conform.set_ambient": {
        "type": "object",
        "required": ["key", "value"],
        "properties": {"key": {"type": "string"}, "value": {"type": "string"}},
    },
    "conform.set_admission": {
        "type": "object",
        "required": ["open"],
        "properties": {"open": {"type": "boolean"}},
    },
    "conform.shutdown": {"type": "object"},
    "conform.trace": {
        "type": "object",
        "description": "The bench sends an empty body; the host answers with `events` (§12.4).",
        "properties": {
            "events": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["event"],
                    "properties": {"event": {"enum": ["started", "caught"]}},
                    "oneOf": [
                        {
                            "required": ["step_id", "phase", "operation_id", "attempt"],
                            "properties": {
                                "event": {"const": "started"},
                                "step_id": {"type": "string"},
                                "phase": {"enum": ["forward", "compensation"]},
                                "operation_id": {"type": "string"},
                                "attempt": {"type": "integer", "minimum": 0, "maximum": 2147483647},
                            },
                        },
                        {
                            "required": ["by", "what"],
                            "properties": {
                                "event": {"const": "caught"},
                                "by": {"enum": ["catch", "catch_all"]},
                                "what": {"enum": ["error", "suspension"]},
                                "category": {"type": "string"},
                            },
                            "if": {"properties": {"what": {"const": "error"}}},
                            "then": {"required": ["category"]},
                        },
                    ],
                },
            }
        },
    },
    "conform.ack": {"type": "object"},
    "conform.registration_outcome": {
        "type": "object",
        "required": ["status"],
        "properties": {"status": {"enum": ["registered", "refused", "failed"]}},
        "allOf": [
            {
                "if": {"required": ["status"], "properties": {"status": {"const": "registered"}}},
                "then": {
                    "required": ["version", "capabilities"],
                    "properties": {
                        "version": {"$ref": "common.schema.json#/$defs/version"},
                        "capabilities": {"$ref": "common.schema.json#/$defs/capability_list"},
                    },
                },
            },
            {
                "if": {"required": ["status"], "properties": {"status": {"const": "refused"}}},
                "then": {
                    "required": ["code"],
                    "properties": {"code": {"type": "string", "minLength": 1}},
                },
            },
            {
                "if": {"required": ["status"], "properties": {"status": {"const": "failed"}}},
                "then": {
                    "required": ["error"],
                    "properties": {"error": {"$ref": "common.schema.json#/$defs/error_record"}},
                },
            },
        ],
    },
    "conform.publication_outcome": {
        "type": "object",
        "required": ["status"],
        "properties": {
            "status": {"enum": ["activated", "conflict", "rejected", "invalid", "failed"]}
        },
        "allOf": [
            {
                "if": {"required": ["status"], "properties": {"status": {"const": "activated"}}},
                "then": {
                    "required": ["application_generation", "workspace_generation"],
                    "properties": {
                        "application_generation": {
                            "$ref": "common.schema.json#/$defs/generation_id"
                        },
                        "workspace_generation": {"$ref": "common.schema.json#/$defs/generation_id"},
                    },
                },
            },
            {
                "if": {"required": ["status"], "properties": {"status": {"const": "conflict"}}},
                "then": {
                    "required": ["active_generation"],
                    "properties": {
                        "active_generation": {
                            "$ref": "common.schema.json#/$defs/generation_id_or_null"
                        }
                    },
                },
            },
            {
                "if": {"required": ["status"], "properties": {"status": {"const": "rejected"}}},
                "then": {
                    "required": ["code"],
                    "properties": {"code": {"type": "string", "minLength": 1}},
                },
            },
            {
                "if": {"required": ["status"], "properties": {"status": {"const": "invalid"}}},
                "then": {
                    "required": ["error"],
                    "properties": {"error": {"$ref": "common.schema.json#/$defs/error_record"}},
                },
            },
            {
                "if": {"required": ["status"], "properties": {"status": {"const": "failed"}}},
                "then": {
                    "required": ["error"],
                    "properties": {"error": {"$ref": "common.schema.json#/$defs/error_record"}},
                },
            },
        ],
    },
}
