import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeEnvelope, ProtocolFault } from '../src/index.js';
import { plain, target } from '../testing/helpers.js';

const bytes = (doc) => Buffer.from(typeof doc === 'string' ? doc : JSON.stringify(doc), 'utf8');
const invokeBody = (extra = {}) => ({ run_id: 'run-1', function_id: 'conform.echo', mode: 'discover', input: plain('x'), history: [], ...extra });
const env = (body, extra = {}) => ({ version: '1.0', kind: 'invoke', id: 'e#1', body, ...extra });

function fault(doc, category, pointer, id = 'e#1') {
  assert.throws(() => decodeEnvelope(bytes(doc)), (e) => {
    assert.ok(e instanceof ProtocolFault);
    assert.deepEqual(
      { category: e.error.category, pointer: e.error.details.pointer, id: e.id, retryable: e.error.retryable },
      { category, pointer, id, retryable: false },
    );
    return true;
  });
}

test('decoding order and pointers (§2)', () => {
  fault('{not json', 'protocol.malformed', '', '-');
  fault('[1]', 'protocol.malformed', '', '-');
  fault(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes(env(invokeBody()))]).toString('latin1'), 'protocol.malformed', '', '-');
  fault({ kind: 'invoke', id: 'e#1', body: {} }, 'protocol.malformed', '/version');
  fault(env(invokeBody(), { version: '01.0' }), 'protocol.malformed', '/version');
  fault(env(invokeBody(), { version: 1 }), 'protocol.malformed', '/version');
  fault(env(invokeBody(), { id: 7 }), 'protocol.malformed', '/id', '-');
  fault(env(invokeBody(), { id: 'x'.repeat(257) }), 'protocol.malformed', '/id', '-');
  fault({ version: '1.0', kind: 'invoke', id: 'e#1' }, 'protocol.malformed', '/body');
  fault(env(invokeBody(), { version: '2.0' }), 'protocol.unsupported_version', '/version');
  fault(env(invokeBody(), { kind: 'nope' }), 'protocol.unknown_variant', '/kind');
  fault(env(invokeBody({ mode: 'replay' })), 'protocol.unknown_variant', '/body/mode');
  fault(env({ ...invokeBody(), run_id: undefined }), 'protocol.malformed', '/body/run_id');
  fault(env(invokeBody({ history: [{ step_id: 'a', status: 'completed', value: plain(1) }, { step_id: 'a', status: 'completed', value: plain(1) }] })),
    'protocol.malformed', '/body/history/1/step_id');
  fault(env(invokeBody({ history: [{ step_id: 'a', status: 'skipped' }] })), 'protocol.unknown_variant', '/body/history/0/status');
  fault(env(invokeBody({ mode: 'forward' })), 'protocol.malformed', '/body/target');
  fault(env(invokeBody({ mode: 'forward', target: target('a', 'compensation') })), 'protocol.malformed', '/body/target/phase');
  fault(env(invokeBody({ mode: 'forward', target: target('a', 'forward', { attempt: 0 }) })), 'protocol.malformed', '/body/target/attempt');
  fault(env(invokeBody({ mode: 'forward', target: target('a', 'forward', { fencing_generation: '011' }) })), 'protocol.malformed', '/body/target/fencing_generation');
  fault(env(invokeBody({ history: Array.from({ length: 1025 }, (_, i) => ({ step_id: `s${i}`, status: 'completed', value: plain(null) })) })),
    'protocol.limit_exceeded', '/body/history');
  fault(env(invokeBody({ input: { t: 'array', v: [{ t: 'i64', v: 'x' }] } })), 'protocol.invalid_value', '/body/input/v/0');
  fault(env(invokeBody({ history: [{ step_id: 'a', status: 'completed', value: { t: 'f64', v: 'NaN' } }] })), 'protocol.invalid_value', '/body/history/0/value');
  fault(env(invokeBody({ input: plain('x'.repeat(4_194_304)) })), 'protocol.limit_exceeded', '');
});

test('unknown members are ignored; higher minors accepted; discover ignores target', () => {
  const decoded = decodeEnvelope(bytes(env(invokeBody({ extra: { deep: 1 }, target: 'junk' }), { version: '1.7', trace: 'x' })));
  assert.equal(decoded.kind, 'invoke');
  assert.equal(decoded.body.input, 'x');
  assert.equal(decoded.body.target, undefined);
});

test('a key twice in any one object does not decode: malformed at "" (§3.3)', () => {
  const raw = '{"version":"1.0","kind":"invoke","id":"e#1","body":{"run_id":"r","function_id":"f","mode":"discover","history":[],' +
    '"input":{"t":"object","v":{"a":{"t":"null"},"a":{"t":"null"}}}}}';
  fault(raw, 'protocol.malformed', '', '-');
  fault('{"version":"1.0","version":"1.0","kind":"invoke","id":"e#1","body":{}}', 'protocol.malformed', '', '-');
});

test('the innermost invalid value is reported even when its container is also invalid', () => {
  fault(env(invokeBody({ input: { t: 'array', v: [{ t: 'i64', v: 'x' }], extra: 1 } })), 'protocol.invalid_value', '/body/input/v/0');
  const loneKey = '{"version":"1.0","kind":"invoke","id":"e#1","body":{"run_id":"r","function_id":"f","mode":"discover","history":[],' +
    '"input":{"t":"object","v":{"\\ud800":{"t":"i64","v":"1"}}}}}';
  fault(loneKey, 'protocol.invalid_value', '/body/input');
});
