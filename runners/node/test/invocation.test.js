import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RyusenError, Instant, DecisionMachine, json } from '../src/index.js';
import { fileURLToPath } from 'node:url';
import { plain, invoke, target, registryWith } from '../testing/helpers.js';

const STEP_A = { type: 'step', step_id: 'a', name: 'a', retry: { max_attempts: 3, backoff_ms: '1000' }, has_compensation: false };
const discover = (fn, history = [], input = plain(null)) =>
  invoke(registryWith(fn), { run_id: 'run-1', function_id: 'wf', mode: 'discover', input, history });
const ok = (step_id, v) => ({ step_id, status: 'completed', value: plain(v) });
const bad = (step_id, category = 'app.boom') => ({ step_id, status: 'failed', error: { category, message: 'boom', retryable: false, details: { k: 'v' } } });

test('discovery declares the first unresolved step and runs no callback', async () => {
  let ran = 0;
  const answer = await discover(async (ctx) => {
    await ctx.step.run('a', () => ran++);
    await ctx.step.run('b', () => ran++);
  });
  assert.deepEqual(answer, { kind: 'declared', body: { declaration: STEP_A } });
  assert.equal(ran, 0);
});

test('replay returns recorded values without running callbacks, then completes', async () => {
  let ran = 0;
  const answer = await discover(async (ctx) => {
    const a = await ctx.step.run('a', () => ran++);
    const b = await ctx.step.run('b', () => ran++);
    return { a, b };
  }, [ok('a', 'x'), ok('b', 5)]);
  assert.deepEqual(answer, { kind: 'completed', body: { value: plain({ a: 'x', b: 5 }) } });
  assert.equal(ran, 0);
});

test('a replayed failure is reproduced unchanged; uncaught it fails the function', async () => {
  const answer = await discover(async (ctx) => {
    await ctx.step.run('a', () => 1);
  }, [bad('a')]);
  assert.deepEqual(answer, { kind: 'failed', body: { error: bad('a').error } });
  const caught = await discover(async (ctx) => {
    try {
      await ctx.step.run('a', () => 1);
    } catch (error) {
      assert.ok(error instanceof RyusenError);
      return error.toRecord();
    }
  }, [bad('a', 'sdk.timeout')]);
  assert.deepEqual(caught, { kind: 'completed', body: { value: plain(bad('a', 'sdk.timeout').error) } });
});

test('duplicate step IDs return definition_blocked', async () => {
  for (const history of [[ok('a', 1)], [bad('a')]]) {
    const answer = await discover(async (ctx) => {
      try {
        await ctx.step.run('a', () => 1);
      } catch {}
      await ctx.step.run('a', () => 2);
    }, history);
    const { first_source: first, duplicate_source: duplicate, ...body } = answer.body;
    assert.deepEqual({ kind: answer.kind, body }, { kind: 'definition_blocked', body: { reason: 'duplicate_step_id', step_id: 'a' } });
    // Diagnostic source metadata points at the workflow's own calls.
    assert.equal(first.file, fileURLToPath(import.meta.url));
    assert.equal(duplicate.file, fileURLToPath(import.meta.url));
    assert.ok(duplicate.line > first.line);
  }
  // The decision machine keeps answering: a duplicate of the boundary itself is blocked there.
  const machine = new DecisionMachine(new Map());
  assert.deepEqual(machine.declare('a'), { kind: 'unresolved' });
  assert.deepEqual(machine.declare('a'), { kind: 'blocked', stepId: 'a' });
});

test('a stopped pass answers its first boundary, whatever the workflow catches', async () => {
  let after = 0;
  const answer = await discover(async (ctx) => {
    try {
      await Promise.race([ctx.step.run('a', () => 1), new Promise((r) => setTimeout(r, 5))]);
    } catch {
      after++;
    }
    after++;
    await ctx.step.run('a', () => 1); // would be a duplicate on the machine
    await ctx.step.run('b', () => 1);
    return 'done';
  });
  assert.deepEqual(answer, { kind: 'declared', body: { declaration: STEP_A } });
  // An unawaited boundary followed by a return still answers the boundary.
  const unawaited = await discover(async (ctx) => {
    ctx.step.run('a', () => 1);
    return 'returned';
  });
  assert.equal(unawaited.kind, 'declared');
});

test('a catch-everything around a suspended step never catches the suspension', async () => {
  const answer = await discover(async (ctx) => {
    try {
      await ctx.step.run('a', () => 1);
    } catch (error) {
      return `caught ${error}`;
    }
  });
  assert.deepEqual(answer, { kind: 'declared', body: { declaration: STEP_A } });
});

test('declarations: timers, waits, invocations, emissions, retry and names', async () => {
  const declared = async (fn) => (await discover(fn)).body.declaration;
  assert.deepEqual(await declared((ctx) => ctx.sleep('t', '1.1s')), { type: 'timer', step_id: 't', delay_ms: '1100' });
  assert.deepEqual(await declared((ctx) => ctx.sleep('t', -5)), { type: 'timer', step_id: 't', delay_ms: '0' });
  assert.deepEqual(await declared((ctx) => ctx.sleepUntil('t', new Instant(1767225600000n))), { type: 'timer', step_id: 't', deadline_ms: '1767225600000' });
  assert.deepEqual(await declared((ctx) => ctx.waitForEvent('w', 'order.approved', { correlation: { order: 'A-1' }, timeout: '1d'.replace('1d', '24h') })),
    { type: 'wait', step_id: 'w', event: 'order.approved', correlation: { order: 'A-1' }, timeout_ms: '86400000' });
  assert.deepEqual(await declared((ctx) => ctx.waitForEvent('w', 'e', { timeout: '-1s' })), { type: 'wait', step_id: 'w', event: 'e', correlation: {}, timeout_ms: '0' });
  assert.deepEqual(await declared((ctx) => ctx.invoke('c', 'conform.echo', 'hi', { timeout: '10s' })),
    { type: 'invoke', step_id: 'c', function_id: 'conform.echo', input: { t: 'str', v: 'hi' }, timeout_ms: '10000' });
  assert.deepEqual(await declared((ctx) => ctx.invoke('c', 'f', null)), { type: 'invoke', step_id: 'c', function_id: 'f', input: { t: 'null' } });
  assert.deepEqual(await declared((ctx) => ctx.emit('e', 'order.shipped', json.toBytes({ id: 1 }))),
    { type: 'emit', step_id: 'e', event: 'order.shipped', payload: { t: 'bytes', v: 'eyJpZCI6MX0=' }, metadata: {} });
  assert.deepEqual(await declared((ctx) => ctx.step.run('s', () => 1, { name: 'S', retry: { maxAttempts: 5, backoff: '2s' }, compensate: () => 0 })),
    { type: 'step', step_id: 's', name: 'S', retry: { max_attempts: 5, backoff_ms: '2000' }, has_compensation: true });
});

test('SDK refusals reach the workflow as catchable errors', async () => {
  const refusal = async (fn) => {
    const answer = await discover(async (ctx) => {
      try {
        await fn(ctx);
      } catch (error) {
        return error.category;
      }
      return 'no error';
    });
    return answer.body.value.v;
  };
  assert.equal(await refusal((ctx) => ctx.emit('e', 'ev', 'text')), 'sdk.invalid_declaration');
  assert.equal(await refusal((ctx) => ctx.emit('e', 'ev', new Uint8Array(), { retry: { maxAttempts: 2 } })), 'sdk.invalid_declaration');
  assert.equal(await refusal((ctx) => ctx.sleep('t', '5')), 'sdk.invalid_duration');
  assert.equal(await refusal((ctx) => ctx.invoke('c', 'f', NaN)), 'sdk.conversion');
});

test('function results: undefined is null, unportable values fail with sdk.conversion, thrown errors map', async () => {
  assert.deepEqual(await discover(async () => {}), { kind: 'completed', body: { value: { t: 'null' } } });
  assert.equal((await discover(async () => NaN)).body.error.category, 'sdk.conversion');
  assert.deepEqual(await discover(async () => { throw new TypeError('nope'); }),
    { kind: 'failed', body: { error: { category: 'app.unhandled', message: 'nope', retryable: true, details: {} } } });
  const cause = { category: 'io.timeout', message: 'gateway', retryable: true, details: {} };
  assert.deepEqual(await discover(async () => { throw new RyusenError('payments.card_declined', 'card declined', { details: { code: '51' }, cause }); }),
    { kind: 'failed', body: { error: { category: 'payments.card_declined', message: 'card declined', retryable: false, details: { code: '51' }, cause } } });
});

const sagaLike = async (ctx) => {
  const a = await ctx.step.run('a', (s) => ({ op: s.operationId, attempt: s.attempt, phase: s.phase }), { compensate: (forward, s) => ({ undo: forward, op: s.operationId }) });
  await ctx.sleep('nap', '1s');
  await ctx.step.run('b', () => { throw new RyusenError('app.fail', 'b failed', { retryable: true }); });
  await ctx.step.run('c', () => NaN, { compensate: () => { throw new Error('cannot undo'); } });
  return a;
};
const targeted = (mode, t, history = []) =>
  invoke(registryWith(sagaLike), { run_id: 'run-1', function_id: 'wf', mode, input: plain(null), history, target: t });
const ids = { operation_id: 'op-7', attempt: 2, fencing_generation: '11' };

test('targeted forward execution', async () => {
  assert.deepEqual(await targeted('forward', target('a')), { kind: 'step_completed', body: { ...ids, value: plain({ op: 'op-7', attempt: { $tagged: { t: 'f64', v: '2' } }, phase: 'forward' }) } });
  // A target with a history entry is still executed.
  assert.equal((await targeted('forward', target('a'), [ok('a', 1)])).kind, 'step_completed');
  assert.deepEqual(await targeted('forward', target('b'), [ok('a', 1), ok('nap', null)]),
    { kind: 'step_failed', body: { ...ids, error: { category: 'app.fail', message: 'b failed', retryable: true, details: {} } } });
  assert.equal((await targeted('forward', target('c'), [ok('a', 1), ok('nap', null), ok('b', 1)])).body.error.category, 'sdk.conversion');
  // Unresolved step before the target, or a target the code never reaches.
  assert.deepEqual(await targeted('forward', target('b'), [ok('a', 1)]), { kind: 'target_not_found', body: { run_id: 'run-1', step_id: 'b', phase: 'forward' } });
  assert.equal((await targeted('forward', target('zzz'), [ok('a', 1), ok('nap', null), ok('b', 1), ok('c', 1)])).kind, 'target_not_found');
  // A timer target.
  assert.deepEqual(await targeted('forward', target('nap'), [ok('a', 1)]), {
    kind: 'rejected_before_start',
    body: { request_id: 'case#1', attempt: 2, fencing_generation: '11', reason: { code: 'unsupported_target', message: 'step "nap" is a timer, not a step.run', retryable: false } },
  });
});

test('targeted compensation', async () => {
  const c = target('a', 'compensation');
  assert.deepEqual(await targeted('compensate', c, [ok('a', 'fwd')]), { kind: 'compensation_completed', body: { ...ids, value: plain({ undo: 'fwd', op: 'op-7' }) } });
  assert.deepEqual(await targeted('compensate', c, []), { kind: 'target_not_found', body: { run_id: 'run-1', step_id: 'a', phase: 'compensation' } });
  assert.equal((await targeted('compensate', c, [bad('a')])).kind, 'target_not_found');
  assert.equal((await targeted('compensate', target('b', 'compensation'), [ok('a', 1), ok('nap', null), ok('b', 1)])).kind, 'target_not_found');
  assert.equal((await targeted('compensate', target('nap', 'compensation'), [ok('a', 1), ok('nap', null)])).body.reason.code, 'unsupported_target');
  assert.deepEqual((await targeted('compensate', target('c', 'compensation'), [ok('a', 1), ok('nap', null), ok('b', 1), ok('c', 1)])).body.error,
    { category: 'app.unhandled', message: 'cannot undo', retryable: true, details: {} });
});

test('unknown functions and closed admission', async () => {
  const registry = registryWith(sagaLike);
  const discovery = await invoke(registry, { run_id: 'run-1', function_id: 'nope', mode: 'discover', input: plain(null) });
  assert.equal(discovery.kind, 'protocol_error');
  assert.deepEqual(discovery.body.error.details, { pointer: '/body/function_id' });
  assert.equal(discovery.body.error.category, 'protocol.unknown_function');
  const forward = await invoke(registry, { run_id: 'run-1', function_id: 'nope', mode: 'forward', input: plain(null), target: target('a') });
  assert.equal(forward.body.reason.code, 'unknown_function');
  const closed = await invoke(registry, { run_id: 'run-1', function_id: 'wf', mode: 'forward', input: plain(null), target: target('a') }, { admissionOpen: false });
  assert.deepEqual(closed.body.reason, { code: 'admission_refused', message: 'admission is closed', retryable: true });
});

test('a callback cannot declare durable steps', async () => {
  const wf = async (ctx) => {
    await ctx.step.run('a', () => ctx.step.run('inner', () => 1));
  };
  const answer = await invoke(registryWith(wf), { run_id: 'run-1', function_id: 'wf', mode: 'forward', input: plain(null), target: target('a') });
  assert.equal(answer.kind, 'step_failed');
  assert.equal(answer.body.error.category, 'sdk.invalid_declaration');
});

test('a call refused for its arguments has still claimed its step ID (§11.2 item 3)', async () => {
  const answer = await discover(async (ctx) => {
    try {
      await ctx.sleep('s', 'bogus');
    } catch (error) {
      assert.equal(error.category, 'sdk.invalid_duration');
    }
    await ctx.sleep('s', '1s');
  });
  assert.equal(answer.kind, 'definition_blocked');
  assert.equal(answer.body.step_id, 's');
  // Conversion comes before replay: a recorded wake does not hide a malformed duration.
  const replayed = await discover(async (ctx) => {
    try {
      await ctx.sleep('s', 'bogus');
    } catch (error) {
      return error.category;
    }
  }, [ok('s', null)]);
  assert.deepEqual(replayed.body.value, { t: 'str', v: 'sdk.invalid_duration' });
});

test('an empty display name is a name; an empty step ID is a step ID', async () => {
  const answer = await discover((ctx) => ctx.step.run('', () => 1, { name: '' }));
  assert.deepEqual(answer.body.declaration, { ...STEP_A, step_id: '', name: '' });
});

test('a duplicate met through a timer still names the workflow lines (only a few frames are recorded)', async () => {
  const answer = await discover(async (ctx) => {
    await ctx.sleep('t', '1s');
    await ctx.step.run('t', () => 2);
  }, [ok('t', null)]);
  assert.equal(answer.kind, 'definition_blocked');
  assert.equal(answer.body.first_source.file, fileURLToPath(import.meta.url));
  assert.equal(answer.body.duplicate_source.file, fileURLToPath(import.meta.url));
  assert.ok(answer.body.duplicate_source.line === answer.body.first_source.line + 1);
});
