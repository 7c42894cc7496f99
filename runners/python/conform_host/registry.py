"""The conformance registry of §13, declared in the stated author order (the SDK sorts it)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ryusen_sdk import Registry, Retry, StepContext, Workflow

from .program import Program, unportable_value
from .trace import Trace


def build_registry(ambient: Mapping[str, str], trace: Trace | None = None) -> Registry:
    """Declare conform.saga, conform.program, conform.echo, conform.unportable and triggers.

    Every callback and compensator records its start in `trace` (§12.4).
    """
    registry = Registry()
    trace = trace if trace is not None else Trace()

    def traced(phase: str, body: Any) -> Any:
        def callback(step: StepContext, *forward: Any) -> Any:
            trace.started(step, phase)
            return body(step, *forward)

        return callback

    @registry.function("conform.saga", timeout="1h")
    def saga(ctx: Workflow, input: dict[str, Any]) -> dict[str, Any]:
        order = input["order"]
        reservation = ctx.step.run(
            "reserve",
            traced("forward", lambda step: "reserved:" + order),
            name="Reserve stock",
            retry=Retry(max_attempts=3, backoff="1s"),
            compensate=traced("compensation", lambda step, forward: "released:" + forward),
        )
        charge = ctx.step.run(
            "charge",
            traced("forward", lambda step: {"charged": order}),
            name="Charge card",
            retry=Retry(max_attempts=5, backoff="1s"),
            compensate=traced(
                "compensation", lambda step, forward: {"refunded": forward["charged"]}
            ),
        )
        ctx.step.run(
            "notify",
            traced("forward", _notify),
            name="Notify customer",
            retry=Retry(max_attempts=3, backoff="1s"),
        )
        return {"reservation": reservation, "charge": charge}

    @registry.function("conform.program")
    def program(ctx: Workflow, input: Any) -> Any:
        return Program(ctx, ambient, trace).main(input)

    @registry.function("conform.echo")
    def echo(ctx: Workflow, input: Any) -> Any:
        return input

    @registry.function("conform.unportable")
    def unportable(ctx: Workflow, input: Any) -> Any:
        return unportable_value(input)

    registry.trigger("conform.saga.order-retried", "order.retried", saga)
    registry.trigger("conform.saga.order-created", "order.created", saga)
    registry.trigger("conform.echo.requested", "conform.echo.requested", echo)
    return registry


def _notify(step: StepContext) -> None:
    return None


def registry_from_spec(spec: Mapping[str, Any]) -> Registry:
    """Build a registry from a §12.3 registry spec with the public API, in author order.

    Shapes are validated by the host; the SDK's own validation (§8.2) runs when it builds.
    """
    registry = Registry()
    for function in spec.get("functions", []):
        registry.add_function(function["id"], _never_runs, function.get("timeout"))
    for trigger in spec.get("triggers", []):
        registry.trigger(trigger["id"], trigger["event"], trigger["function"])
    return registry


def _never_runs(ctx: Workflow, input: Any) -> None:
    return None
