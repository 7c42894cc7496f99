import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Registry, RyusenError, compareCodePoints, Worker, hashDocument } from '../src/index.js';

function conformance() {
  const noop = async () => null;
  return new Registry()
    .function('conform.saga', noop, { timeout: '1h' })
    .function('conform.program', noop)
    .function('conform.echo', noop)
    .function('conform.unportable', noop)
    .trigger('conform.saga.order-retried', 'order.retried', 'conform.saga')
    .trigger('conform.saga.order-created', 'order.created', 'conform.saga')
    .trigger('conform.echo.requested', 'conform.echo.requested', 'conform.echo');
}

// Computed independently with Python's rfc8785 over the same document (§8.3).
const EXPECTED_CONTENTS =
  '{"format":"ryusen.manifest-contents/1","functions":[{"id":"conform.echo"},{"id":"conform.program"},' +
  '{"id":"conform.saga","timeout_ms":"3600000"},{"id":"conform.unportable"}],"triggers":[' +
  '{"event":"conform.echo.requested","function":"conform.echo","id":"conform.echo.requested"},' +
  '{"event":"order.created","function":"conform.saga","id":"conform.saga.order-created"},' +
  '{"event":"order.retried","function":"conform.saga","id":"conform.saga.order-retried"}]}';
const EXPECTED_HASH = 'sha256:26c9cc78cf5b7797aa49fd09132a80f12520ab4a9ff4aced560d664debbeec2d';

test('conformance manifest contents bytes and hash', () => {
  const manifest = conformance().manifest();
  assert.equal(Buffer.from(manifest.contents).toString('utf8'), EXPECTED_CONTENTS);
  assert.equal(manifest.hash, EXPECTED_HASH);
  assert.equal(manifest.hash, `sha256:${createHash('sha256').update(EXPECTED_CONTENTS).digest('hex')}`);
  assert.deepEqual(manifest.functions.map((f) => f.id), ['conform.echo', 'conform.program', 'conform.saga', 'conform.unportable']);
});

test('sorting is by code point, not UTF-16 code unit', () => {
  const a = '\uff61'; // U+FF61, one UTF-16 unit 0xFF61
  const b = '\u{1F600}'; // U+1F600, UTF-16 0xD83D 0xDE00 (sorts first by code unit)
  assert.ok(compareCodePoints(a, b) < 0);
  assert.deepEqual([b, a].sort(), [b, a]); // the default sort gets it wrong
  assert.deepEqual([b, a].sort(compareCodePoints), [a, b]);
  assert.ok(compareCodePoints('a', 'ab') < 0);
  assert.equal(compareCodePoints('x\u{1F600}', 'x\u{1F600}'), 0);
  assert.ok(compareCodePoints('\u{1F600}', '\u{1F601}') < 0);
  assert.ok(compareCodePoints('\ud800a', '\ud800b') < 0);
  const manifest = new Registry().function(b).function(a).function('z').trigger('t', 'e', b).trigger('t', 'e', a).manifest();
  assert.deepEqual(manifest.functions.map((f) => f.id), ['z', a, b]);
  assert.deepEqual(manifest.triggers.map((t) => t.function), [a, b]);
  // Canonical JSON (RFC 8785) still orders object members by UTF-16 unit; only arrays are ours.
});

function invalid(registry, code) {
  assert.throws(() => registry.manifest(), (e) => e instanceof RyusenError && e.category === 'sdk.invalid_registry' && e.details.code === code && !e.retryable);
}

test('validation codes in order', () => {
  invalid(new Registry().function('a').function('a').function(''), 'empty_function_id');
  invalid(new Registry().function('a', undefined, { timeout: 'bogus' }).function('a'), 'duplicate_function_id');
  invalid(new Registry().function('a', undefined, { timeout: 'bogus' }), 'invalid_timeout');
  // Zero and negative whole-run timeouts are kept as 0, never refused (D-RUN-TIMEOUT-ZERO).
  assert.deepEqual(new Registry().function('a', undefined, { timeout: '0s' }).manifest().functions, [{ id: 'a', timeout_ms: '0' }]);
  assert.deepEqual(new Registry().function('a', undefined, { timeout: '-1h' }).manifest().functions, [{ id: 'a', timeout_ms: '0' }]);
  invalid(new Registry().function('a', undefined, { timeout: '9223372036854775808ms' }), 'invalid_timeout');
  invalid(new Registry().function('a').trigger('', '', 'b'), 'empty_trigger_id');
  invalid(new Registry().function('a').trigger('t', '', 'b'), 'empty_event_name');
  invalid(new Registry().function('a').trigger('t', 'e', 'b'), 'undeclared_function');
  assert.equal(new Registry().function('a', undefined, { timeout: '0.5ms' }).manifest().functions[0].timeout_ms, '1');
  assert.equal(new Registry().function('a', undefined, { timeout: 1500 }).manifest().functions[0].timeout_ms, '1500');
});

test('registration body: versioned and unversioned group', () => {
  const worker = new Worker(conformance());
  const scope = { workspace_id: 'ws', application_id: 'app' };
  const versioned = worker.registration({ scope, releaseId: 'rel-1', instanceId: 'i-1' });
  assert.deepEqual(versioned.release, { kind: 'versioned', id: 'rel-1' });
  assert.equal(versioned.manifest_hash, EXPECTED_HASH);
  assert.deepEqual(versioned.versions, ['1.1']);
  assert.deepEqual(versioned.capabilities, ['child_invocations', 'compensation', 'event_emission', 'event_waits', 'json_convenience', 'timers']);
  assert.deepEqual(versioned.contract, { protocol_major: 1, value_codec: 'ryusen.tagged/1', capabilities: versioned.capabilities });
  const unversioned = worker.registration({ scope, releaseId: null, instanceId: 'i-1' });
  const group = hashDocument({ contract: unversioned.contract, functions: unversioned.functions, manifest_hash: EXPECTED_HASH });
  assert.deepEqual(unversioned.release, { kind: 'unversioned', group: `unversioned:${group}` });
  assert.match(unversioned.release.group, /^unversioned:sha256:[0-9a-f]{64}$/);
});

test('manifest bytes are byte-identical to the Python SDK for non-BMP IDs', () => {
  // The same registry through runners/python (ryusen_sdk.Registry) gives this hash.
  const r = new Registry()
    .function('\u{1F600}x', undefined, { timeout: '1.1s' })
    .function('\uff61')
    .function('é')
    .function('a')
    .function('Z', undefined, { timeout: '1ns' })
    .trigger('t\u{1F600}', 'e', 'a')
    .trigger('t\uff61', 'e', 'a')
    .trigger('t', 'e2', 'a')
    .trigger('t', 'e1', '\uff61')
    .trigger('t', 'e1', 'a');
  const manifest = r.manifest();
  assert.equal(manifest.hash, 'sha256:c4aea1f1fecb8865ac15a92b4f1e4dc338418b03f969056bcabb66de6d511b58');
  assert.deepEqual(manifest.functions.map((f) => f.id), ['Z', 'a', 'é', '\uff61', '\u{1F600}x']);
});
