// The conformance host's registry (§13): the conform.program interpreter, saga, echo, unportable.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conformanceRegistry, registryFromSpec } from '../host.js';
import { plain, invoke, target } from '../testing/helpers.js';

const ambient = new Map();
const registry = conformanceRegistry(ambient);
const run = (ops, history = [], extra = {}) =>
  invoke(registry, { run_id: 'run-1', function_id: 'conform.program', mode: 'discover', input: plain({ ops }), history, ...extra });
const ok = (step_id, v) => ({ step_id, status: 'completed', value: plain(v) });
const record = (category, extra = {}) => ({ category, message: 'm', retryable: false, details: {}, ...extra });

test('ops running out return every variable; return gives a value or a variable', async () => {
  assert.deepEqual(await run([]), { kind: 'completed', body: { value: plain({}) } });
  assert.deepEqual(await run([{ op: 'run', id: 'a', as: 'x' }, { op: 'sleep', id: 's', duration: '1s', as: 'y' }], [ok('a', 7), ok('s', null)]),
    { kind: 'completed', body: { value: plain({ x: 7, y: null }) } });
  assert.deepEqual(await run([{ op: 'run', id: 'a', as: 'x' }, { op: 'return', var: 'x' }, { op: 'raise', error: record('app.never') }], [ok('a', 'v')]),
    { kind: 'completed', body: { value: plain('v') } });
  assert.deepEqual(await run([{ op: 'return', value: { $tagged: { t: 'u64', v: '5' } } }]), { kind: 'completed', body: { value: { t: 'u64', v: '5' } } });
});

test('catch stores the error record; raise fails the function', async () => {
  const failure = record('payments.declined', { details: { code: '51' }, cause: record('io.timeout', { retryable: true }) });
  assert.deepEqual(await run([{ op: 'run', id: 'a', catch: true, as: 'x' }], [{ step_id: 'a', status: 'failed', error: failure }]),
    { kind: 'completed', body: { value: plain({ x: { caught: failure } }) } });
  assert.deepEqual(await run([{ op: 'raise', error: failure }]), { kind: 'failed', body: { error: failure } });
  assert.deepEqual(await run([{ op: 'duration', value: '5', catch: true, as: 'd' }]),
    { kind: 'completed', body: { value: plain({ d: { caught: record('sdk.invalid_duration', { message: 'malformed duration "5"' }) } }) } });
});

test('duration and json_bytes ops', async () => {
  const answer = await run([
    { op: 'duration', value: '1.1s', as: 'a' },
    { op: 'duration', value: -5, as: 'b' },
    { op: 'json_bytes', text: '{"b":1,"a":[2.50,1e21]}', as: 'c' },
    { op: 'json_bytes', text: '{"a":1,"a":2}', catch: true, as: 'd' },
  ]);
  const v = answer.body.value.v;
  assert.deepEqual(v.a, { t: 'u64', v: '1100' });
  assert.deepEqual(v.b, { t: 'u64', v: '0' });
  assert.deepEqual(v.c, { t: 'bytes', v: Buffer.from('{"a":[2.5,1e+21],"b":1}').toString('base64') });
  assert.equal(v.d.v.caught.v.category.v, 'sdk.json');
});

test('if_ambient follows the host state', async () => {
  const ops = [{ op: 'if_ambient', key: 'flag', equals: 'on', then: [{ op: 'run', id: 'on' }], else: [{ op: 'run', id: 'off' }] }];
  assert.equal((await run(ops)).body.declaration.step_id, 'off');
  ambient.set('flag', 'on');
  assert.equal((await run(ops)).body.declaration.step_id, 'on');
  ambient.clear();
});

test('catch_all never turns the boundary or the blocker into something else', async () => {
  const boundary = await run([{ op: 'catch_all', ops: [{ op: 'run', id: 'a' }] }, { op: 'return', value: 'x' }]);
  assert.equal(boundary.kind, 'declared');
  const blocked = await run([{ op: 'run', id: 'a' }, { op: 'catch_all', ops: [{ op: 'run', id: 'a' }] }, { op: 'return', value: 'x' }], [ok('a', 1)]);
  assert.equal(blocked.kind, 'definition_blocked');
  const caught = await run([{ op: 'catch_all', ops: [{ op: 'raise', error: record('app.x') }] }, { op: 'return', value: 'after' }]);
  assert.deepEqual(caught.body.value, plain('after'));
});

test('unknown or malformed ops fail with conform.bad_program', async () => {
  for (const ops of [[{ op: 'teleport' }], [{ op: 'run' }], [{ op: 'sleep', id: 's', duration: true }], [{ nope: 1 }], [{ op: 'return', var: 'missing' }]]) {
    const answer = await run(ops);
    assert.equal(answer.kind, 'failed');
    assert.equal(answer.body.error.category, 'conform.bad_program');
  }
});

test('echo and compensation identity, forward_result', async () => {
  const ops = [{ op: 'run', id: 'a', echo: true, compensate: true }];
  const forward = await run(ops, [], { mode: 'forward', target: target('a') });
  assert.deepEqual(forward.body.value, plain({ phase: 'forward', run_id: 'run-1', step_id: 'a', operation_id: 'op-7', attempt: 2 }));
  const back = await run(ops, [ok('a', 'fwd')], { mode: 'compensate', target: target('a', 'compensation') });
  assert.deepEqual(back.body.value, plain({ phase: 'compensation', run_id: 'run-1', step_id: 'a', operation_id: 'op-7', attempt: 2, forward_result: 'fwd' }));
});

test('conform.saga, conform.echo and conform.unportable', async () => {
  const saga = (history) => invoke(registry, { run_id: 'run-1', function_id: 'conform.saga', mode: 'discover', input: plain({ order: 'A-1' }), history });
  assert.equal((await saga([ok('reserve', 'reserved:A-1')])).body.declaration.step_id, 'charge');
  assert.deepEqual((await saga([ok('reserve', 'r'), ok('charge', { charged: 'A-1' }), ok('notify', null)])).body.value,
    plain({ reservation: 'r', charge: { charged: 'A-1' } }));
  const echoed = { t: 'array', v: [{ t: 'u64', v: '1' }, { t: 'f64', v: '-0' }, { t: 'instant', v: '5' }] };
  assert.deepEqual(await invoke(registry, { run_id: 'r', function_id: 'conform.echo', mode: 'discover', input: echoed }), { kind: 'completed', body: { value: echoed } });
  for (const what of ['nan', 'infinity', 'non_string_keys', 'object', 'closure']) {
    const answer = await invoke(registry, { run_id: 'r', function_id: 'conform.unportable', mode: 'discover', input: plain(what) });
    assert.equal(answer.body.error.category, 'sdk.conversion', what);
  }
});

test('registry specs go through the public API', () => {
  const manifest = registryFromSpec({ functions: [{ id: 'b', timeout: '1h' }, { id: 'a' }], triggers: [{ id: 't1', event: 'order.created', function: 'a' }] }).manifest();
  assert.deepEqual(manifest.functions, [{ id: 'a' }, { id: 'b', timeout_ms: '3600000' }]);
});

test('repeat runs its ops again with .k appended to every step ID, nested repeats appending again', async () => {
  const ops = [{ op: 'repeat', times: 2, ops: [{ op: 'repeat', times: 2, ops: [{ op: 'run', id: 's', as: 'last' }] }, { op: 'sleep', id: 't', duration: '1s' }] }];
  const history = [ok('s.0.0', 1), ok('s.0.1', 2), ok('t.0', null), ok('s.1.0', 3)];
  assert.equal((await run(ops, history)).body.declaration.step_id, 's.1.1');
  const all = [...history, ok('s.1.1', 4), ok('t.1', null)];
  assert.deepEqual(await run(ops, all), { kind: 'completed', body: { value: plain({ last: 4 }) } });
  // A return inside a repeat ends the function; zero times runs nothing.
  assert.deepEqual(await run([{ op: 'repeat', times: 3, ops: [{ op: 'return', value: 'r' }] }]), { kind: 'completed', body: { value: plain('r') } });
  assert.deepEqual(await run([{ op: 'repeat', times: 0, ops: [{ op: 'run', id: 'x' }] }]), { kind: 'completed', body: { value: plain({}) } });
  assert.equal((await run([{ op: 'repeat', times: 'x', ops: [] }])).body.error.category, 'conform.bad_program');
});
