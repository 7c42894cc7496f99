"""The RFD 2 sentences the model server implements, where, and the tests that check them.

`S<n>` in the server's docstrings is RFD 2 sentence n as `ryusen-conform coverage` numbers them;
each row here quotes its sentence exactly. `ryusen-conform coverage` counts a sentence as covered
by the server's tests when a row quotes it (tests/server/test_rules.py checks every quote occurs
in RFD 2 and every named test exists). Lifecycle scenarios cite their own rules as fixtures do.
"""

# ruff: noqa: E501 -- exact RFD 2 sentences are quoted whole

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ServerRule:
    sentence: int
    quote: str
    implemented_in: str
    tests: tuple[str, ...]


RULES: tuple[ServerRule, ...] = (
    ServerRule(
        3,
        "The server owns run state, scheduling, retries, timers, flow control, compensation order, and history.",
        "loop.py (the whole loop)",
        (
            "tests/server/test_simulate.py::test_saga_with_injected_failure_compensates_reserve",
            "tests/server/test_loop.py::test_declaration_is_persisted_with_its_work",
        ),
    ),
    ServerRule(
        5,
        "Callbacks are never serialized into server storage.",
        "state.py (protocol values only)",
        ("tests/server/test_loop.py::test_nothing_but_protocol_values_is_stored",),
    ),
    ServerRule(
        6,
        "Execution targets declare whether work is repeatable orchestration or an effectful callback.",
        "discovery._discover / attempts._attempt_unknown",
        ("tests/server/test_loop.py::test_discovery_is_repeated_but_a_forward_attempt_is_not",),
    ),
    ServerRule(
        8,
        "The protocol classification controls lease recovery and is not inferred from transport behavior.",
        "discovery._discover / attempts._attempt_unknown",
        ("tests/server/test_loop.py::test_discovery_is_repeated_but_a_forward_attempt_is_not",),
    ),
    ServerRule(
        14,
        "An application remains the deployment and execution boundary.",
        "children._start_child",
        ("tests/server/test_loop.py::test_child_of_another_application_is_not_started",),
    ),
    ServerRule(
        15,
        "An application manifest is the complete desired set of logical function identifiers and trigger declarations for one application inside one workspace.",
        "ManifestStore via publication._publish",
        ("tests/server/test_control_plane.py::test_a_manifest_is_one_applications_complete_set",),
    ),
    ServerRule(
        17,
        "Activation also creates an immutable workspace routing generation that maps every application in the workspace to its active application-manifest generation.",
        "ManifestStore via publication._publish",
        (
            "tests/server/test_control_plane.py::test_publication_activates_both_heads_with_the_complete_declarations",
        ),
    ),
    ServerRule(
        18,
        "The server fences and atomically activates both heads.",
        "ManifestStore via publication._publish",
        (
            "tests/server/test_control_plane.py::test_identical_content_is_idempotent_and_a_stale_parent_changes_nothing",
        ),
    ),
    ServerRule(
        19,
        "The publication protocol is a durable control-plane operation separate from worker registration.",
        "host.py restart / publication._register_worker",
        (
            "tests/server/test_control_plane.py::test_worker_restart_adds_or_removes_no_trigger_and_moves_no_head",
        ),
    ),
    ServerRule(
        20,
        "Reconnecting, draining, or disconnecting a worker never adds or removes triggers.",
        "host.py restart / publication._register_worker",
        (
            "tests/server/test_control_plane.py::test_worker_restart_adds_or_removes_no_trigger_and_moves_no_head",
        ),
    ),
    ServerRule(
        24,
        "The authenticated principal must be authorized before request-selected resources are looked up or their existence is disclosed.",
        "ManifestStore.publish, releases.register",
        (
            "tests/server/test_control_plane.py::test_authorization_comes_before_any_lookup",
            "tests/server/test_releases.py::test_conflicting_contract_and_foreign_scope_are_refused",
        ),
    ),
    ServerRule(
        25,
        "Stored manifest generations, release groups, endpoint capabilities, and function identities include workspace and application scope in their durable identity.",
        "ManifestStore generation ids, releases keyed by scope",
        ("tests/server/test_control_plane.py::test_generation_identity_includes_scope_and_parent",),
    ),
    ServerRule(
        27,
        "Identical content is idempotent.",
        "ManifestStore.publish",
        (
            "tests/server/test_control_plane.py::test_identical_content_is_idempotent_and_a_stale_parent_changes_nothing",
        ),
    ),
    ServerRule(
        28,
        "The server reads and compare-and-sets the workspace routing head internally.",
        "ManifestStore.publish",
        (
            "tests/server/test_control_plane.py::test_workspace_head_conflict_from_another_application_is_rebuilt_internally",
        ),
    ),
    ServerRule(
        29,
        "It retries a workspace-head conflict caused by an unrelated application deployment by rebuilding the routing generation over the newer workspace parent; publishers need not synchronize application deployments themselves.",
        "ManifestStore.publish",
        (
            "tests/server/test_control_plane.py::test_workspace_head_conflict_from_another_application_is_rebuilt_internally",
        ),
    ),
    ServerRule(
        31,
        "Activating a complete application generation gives omission explicit meaning: a function or trigger absent from the new desired state is removed for events that acknowledge the new workspace routing generation.",
        "publication.triggers_at / waits._route",
        (
            "tests/server/test_control_plane.py::test_routing_is_frozen_per_event_and_omission_removes_triggers",
        ),
    ),
    ServerRule(
        32,
        "Old application and workspace routing generations remain available for audit and for fan-out work that already references them.",
        "publication.triggers_at",
        (
            "tests/server/test_control_plane.py::test_routing_is_frozen_per_event_and_omission_removes_triggers",
        ),
    ),
    ServerRule(
        35,
        "The payload carries the complete desired function declarations, trigger bindings, and the application’s opaque manifest contents.",
        "publication._publish",
        (
            "tests/server/test_control_plane.py::test_publication_activates_both_heads_with_the_complete_declarations",
        ),
    ),
    ServerRule(
        38,
        "A generation’s identity hashes the scope, the expected parent, the contents, and the canonical declarations, so two publications with identical content but different parents are distinct generations.",
        "ManifestStore generation ids",
        ("tests/server/test_control_plane.py::test_generation_identity_includes_scope_and_parent",),
    ),
    ServerRule(
        42,
        "A workspace routing generation logically contains the workspace ID, generation ID, expected parent, canonical content hash, server commit order, and the map of application IDs to immutable application-manifest generations.",
        "ManifestStore WorkspaceGeneration",
        (
            "tests/server/test_control_plane.py::test_publication_activates_both_heads_with_the_complete_declarations",
        ),
    ),
    ServerRule(
        43,
        "It is a frozen routing/configuration snapshot selected when an event is acknowledged, not a worker build or release pin.",
        "events.AcceptedEvent.routing_generation, waits._route",
        (
            "tests/server/test_control_plane.py::test_routing_is_frozen_per_event_and_omission_removes_triggers",
        ),
    ),
    ServerRule(
        44,
        "Runs created from it continue to execute on current compatible worker code under the optimistic live-code rules.",
        "waits._route / loop._new_run",
        (
            "tests/server/test_loop.py::test_runs_created_from_an_old_generation_run_on_current_code",
        ),
    ),
    ServerRule(
        46,
        "Its absence means no deadline unless a visible deployment policy supplies an inherited default.",
        "loop._new_run",
        (
            "tests/server/test_loop.py::test_run_without_timeout_has_no_deadline_unless_a_policy_supplies_one",
        ),
    ),
    ServerRule(
        48,
        "Event fan-out resolves the effective absolute deadline and records whether it came from the function or policy; SDK clocks do not participate in deadline enforcement.",
        "loop._new_run (deadline_ms, deadline_source)",
        ("tests/server/test_loop.py::test_fan_out_resolves_the_absolute_deadline_and_its_source",),
    ),
    ServerRule(
        52,
        "The first successful registration of a release records a durable server commit position.",
        "releases.ReleaseRegistry.register",
        (
            "tests/server/test_releases.py::test_first_registration_records_a_commit_position_kept_on_reconnect",
        ),
    ),
    ServerRule(
        53,
        "That position, rather than a client timestamp or sortable release ID, orders releases and does not change when an old worker reconnects.",
        "releases.ReleaseRegistry.register / route",
        (
            "tests/server/test_releases.py::test_first_registration_records_a_commit_position_kept_on_reconnect",
        ),
    ),
    ServerRule(
        54,
        "The release record contains coordination metadata, not an executable artifact.",
        "releases.ReleaseRecord",
        ("tests/server/test_releases.py::test_release_record_is_coordination_metadata_only",),
    ),
    ServerRule(
        56,
        "Connection and capacity records are ephemeral and affect dispatch availability only.",
        "releases.Connection",
        (
            "tests/server/test_releases.py::test_connections_are_ephemeral_and_affect_dispatch_only",
            "tests/server/test_releases.py::test_routing_honours_capacity_and_history_requirements",
        ),
    ),
    ServerRule(
        57,
        "Runs target a logical function, never a historical release.",
        "state.RunState (no release), releases.route per dispatch",
        (
            "tests/server/test_releases.py::test_a_run_targets_the_function_so_the_newest_release_serves_it",
        ),
    ),
    ServerRule(
        58,
        "Connected routing first requires an exact credential-derived workspace and application match, then excludes workers that cannot satisfy the current contract and durable history requirements, prefers the newest compatible release, and balances across its healthy instances.",
        "releases.route",
        (
            "tests/server/test_releases.py::test_routing_needs_exact_scope_and_a_compatible_contract",
            "tests/server/test_releases.py::test_routing_honours_capacity_and_history_requirements",
            "tests/server/test_releases.py::test_newest_release_is_balanced_across_its_healthy_instances",
        ),
    ),
    ServerRule(
        59,
        "Older compatible instances may serve as rollout fallback until they enter drain.",
        "releases.route",
        ("tests/server/test_releases.py::test_older_release_is_a_fallback_until_it_drains",),
    ),
    ServerRule(
        60,
        "Lack of a compatible authorized live worker leaves addressed work durable and queued.",
        "publication._worker_for / _register_worker, attempts._attempt_unknown",
        (
            "tests/server/test_loop.py::test_work_without_a_compatible_worker_stays_queued_until_one_registers",
            "tests/server/test_releases.py::test_connections_are_ephemeral_and_affect_dispatch_only",
        ),
    ),
    ServerRule(
        61,
        "An explicitly identified release is preferred over a compatible unversioned group; when every candidate is unversioned, Ryusen balances capacity without recency claims.",
        "releases.route",
        (
            "tests/server/test_releases.py::test_identified_release_preferred_over_unversioned_group",
        ),
    ),
    ServerRule(
        65,
        "An event freezes W12 for routing, not R17 for execution.",
        "events.AcceptedEvent.routing_generation, releases.route",
        (
            "tests/server/test_control_plane.py::test_routing_is_frozen_per_event_and_omission_removes_triggers",
            "tests/server/test_loop.py::test_runs_created_from_an_old_generation_run_on_current_code",
        ),
    ),
    ServerRule(
        79,
        "The server persists the declaration and creates durable execution work atomically.",
        "discovery._declared",
        ("tests/server/test_loop.py::test_declaration_is_persisted_with_its_work",),
    ),
    ServerRule(
        109,
        "The server accepts the event through the same transactional event acceptance every submitted event uses — one event record, one idempotency claim, one workspace list entry, and one fan-out obligation — and settles the step with the acceptance receipt in the same transaction, so a lost acknowledgement, a rediscovery, a replay, or a restart can never accept a second event.",
        "events.EventLog.accept, waits._emit",
        ("tests/server/test_loop.py::test_an_emission_is_accepted_once_per_identity",),
    ),
    ServerRule(
        119,
        "Transport failure and application failure remain distinct from this response.",
        "attempts._attempt_unknown",
        (
            "tests/server/test_loop.py::test_lost_attempt_is_a_transport_failure_not_target_not_found",
        ),
    ),
    ServerRule(
        122,
        "It is authoritative only when it is a well-formed response from the authenticated worker endpoint.",
        "attempts._rejection_ok",
        (
            "tests/server/test_loop.py::test_rejection_is_authoritative_only_when_it_names_the_request",
        ),
    ),
    ServerRule(
        123,
        "The server may then apply the reason’s retry or obsolescence policy without treating the callback outcome as ambiguous.",
        "attempts._rejected",
        (
            "tests/server/test_loop.py::test_rejection_is_authoritative_only_when_it_names_the_request",
        ),
    ),
    ServerRule(
        126,
        "This section fixes the language-neutral semantics every SDK implements for one invocation, so Rust and Elixir can present different syntax over the same protocol outcomes.",
        "the model server drives every SDK alike",
        ("tests/server/test_simulate.py::test_both_reference_sdks_give_the_same_timeline",),
    ),
    ServerRule(
        148,
        "The protocol outcome is identical and only the language surface differs.",
        "the model server drives every SDK alike",
        ("tests/server/test_simulate.py::test_both_reference_sdks_give_the_same_timeline",),
    ),
    ServerRule(
        66,
        "Worker lifecycle changes registration only; it never moves a manifest or routing head.",
        "host.py restart / publication._register_worker",
        (
            "tests/server/test_control_plane.py::test_worker_restart_adds_or_removes_no_trigger_and_moves_no_head",
        ),
    ),
    ServerRule(
        7,
        "Discovery may be invoked again after an ambiguous transport failure even though ambient state or current code can change its declarations; user code must place tracked external effects inside forward or compensation callbacks.",
        "faults._rediscover, discovery._repeated",
        (
            "tests/server/test_budget.py::test_a_repeated_timer_declaration_keeps_the_recorded_anchor",
            "tests/server/test_server_kill_matrix.py::test_every_server_mutant_is_killed_by_two_scenarios",
        ),
    ),
    ServerRule(
        47,
        "Manifest activation rejects, rather than clamps, a duration above a configured policy maximum.",
        "ManifestStore(policy maximum) via publication._publish, publication._rejected_publication",
        (
            "tests/server/test_budget.py::test_policy_maximum_rejects_activation_and_no_run_starts",
            "tests/server/test_server_kill_matrix.py::test_every_server_mutant_is_killed_by_two_scenarios",
        ),
    ),
    ServerRule(
        84,
        "The declaration is a step, so it is declared once: a repeated declaration keeps the recorded anchor.",
        "discovery._repeated, timing._arm_timer (run.timers)",
        (
            "tests/server/test_budget.py::test_a_repeated_timer_declaration_keeps_the_recorded_anchor",
            "tests/server/test_server_kill_matrix.py::test_every_server_mutant_is_killed_by_two_scenarios",
        ),
    ),
    ServerRule(
        85,
        "The server owns the clock, the scheduling, restart, and cancellation, and the accepted wake is an ordinary accepted step result, so a later invocation replays the wait instead of arming it again.",
        "faults._server_restart, timing._schedule_wake",
        (
            "tests/server/test_budget.py::test_a_server_restart_keeps_durable_instants_and_rediscovers",
            "tests/server/test_server_kill_matrix.py::test_every_server_mutant_is_killed_by_two_scenarios",
        ),
    ),
    ServerRule(
        93,
        "The server anchors the timeout to the instant it accepted the declaration and records the instant the wait may time out at, so a repeated declaration keeps the registration and the anchor.",
        "discovery._repeated, waits._register_wait",
        (
            "tests/server/test_budget.py::test_a_server_restart_keeps_durable_instants_and_rediscovers",
            "tests/server/test_server_kill_matrix.py::test_every_server_mutant_is_killed_by_two_scenarios",
        ),
    ),
    ServerRule(
        94,
        "The server owns matching, the timeout, restart, and cancellation; the accepted match is the matched event’s payload as an ordinary accepted step result, and an elapsed timeout is an accepted step failure with the sdk.timeout category, so a later invocation replays either instead of registering again.",
        "faults._server_restart, waits._schedule_wait_timeout",
        (
            "tests/server/test_budget.py::test_a_server_restart_keeps_durable_instants_and_rediscovers",
            "tests/server/test_server_kill_matrix.py::test_every_server_mutant_is_killed_by_two_scenarios",
        ),
    ),
    ServerRule(
        95,
        "A matched payload the durable record cannot carry is an accepted step failure with the sdk.invalid_result category instead, so one unrecordable match never strands the wait or blocks the event’s own fan-out; a registration whose own timeout outcome the run’s replay budget cannot carry is refused before it commits, so no wait is ever registered unfinishable.",
        "discovery._within_budget, discovery._over_budget",
        (
            "tests/server/test_budget.py::test_a_run_past_the_history_limit_ends_failed_at_the_limit",
            "tests/server/test_budget.py::test_a_run_that_fills_the_budget_exactly_completes",
            "tests/server/test_server_kill_matrix.py::test_every_server_mutant_is_killed_by_two_scenarios",
        ),
    ),
    ServerRule(
        99,
        "The child’s identity is derived from durable facts — the storage scope, the parent run, and the step — so a repeated declaration of the same step names the same child whatever delivered it, and a declaration that disagrees with the recorded one is refused rather than adopted.",
        "discovery._repeated, children._start_child",
        (
            "tests/server/test_budget.py::test_a_disagreeing_declaration_is_refused_and_the_run_goes_on",
            "tests/server/test_server_kill_matrix.py::test_every_server_mutant_is_killed_by_two_scenarios",
        ),
    ),
    ServerRule(
        101,
        "The child is bounded by the tightest of the invoked function’s declared run timeout, the invoke timeout the declaration carries, and the parent run’s own remaining deadline.",
        "loop._new_run (bounds), timing._deadline",
        (
            "tests/server/test_budget.py::test_a_child_is_bounded_by_each_of_its_three_bounds",
            "tests/server/test_server_kill_matrix.py::test_every_server_mutant_is_killed_by_two_scenarios",
        ),
    ),
    ServerRule(
        143,
        "The operation ID identifies the logical forward or compensation operation across physical attempts; the attempt ordinal identifies one physical attempt.",
        "state.operation_id (incarnations), discovery._declared",
        (
            "tests/server/test_budget.py::test_a_redeclared_obsolete_step_is_a_new_operation",
            "tests/server/test_server_kill_matrix.py::test_every_server_mutant_is_killed_by_two_scenarios",
        ),
    ),
    ServerRule(
        164,
        "Stack traces are diagnostic and never control retry behavior.",
        "retry.RetryPolicy.retries_after",
        ("tests/server/test_loop.py::test_retry_decision_reads_the_retryable_flag_only",),
    ),
)


def server_citations() -> list[tuple[str, str]]:
    """(citing test id, quote) for every rule."""
    return [(f"server:{rule.tests[0]}", rule.quote) for rule in RULES]


def citations() -> list:
    """The rules as coverage citations (`fakepeer.authoring.coverage.CITATION_MODULES`): each
    justifies its sentence, because the named tests check the server does what it says."""
    from fakepeer.authoring.coverage import Citation

    return [Citation("server", ident, quote, justifies=True) for ident, quote in server_citations()]
