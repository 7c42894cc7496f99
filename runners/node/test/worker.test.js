import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Worker, Registry, RegistrationRefused, RyusenError } from '../src/index.js';
import { envelopeOf } from '../testing/helpers.js';

const worker = new Worker(new Registry().function('f', async () => null), { capabilities: ['timers', 'compensation', 'timers'] });
const ack = (body) => worker.negotiate(envelopeOf('register_ack', body));
const refusal = (check) => (error) => error instanceof RyusenError && check(error);

test('negotiation: any minor of 1, intersection of capabilities, required ones must be offered', () => {
  assert.deepEqual(worker.capabilities, ['compensation', 'timers']);
  assert.deepEqual(ack({ version: '1.9', capabilities: ['timers', 'warp'], required_capabilities: ['timers'] }), { version: '1.9', capabilities: ['timers'] });
  assert.throws(() => ack({ version: '2.0', capabilities: [], required_capabilities: [] }),
    refusal((e) => e.category === 'protocol.unsupported_version' && e.details.pointer === '/body/version'));
  assert.throws(() => ack({ version: '1', capabilities: [], required_capabilities: [] }),
    refusal((e) => e.category === 'protocol.malformed' && e.details.pointer === '/body/version'));
  assert.throws(() => ack({ version: '1.0', capabilities: [], required_capabilities: ['timers', 'event_waits'] }),
    refusal((e) => e.category === 'protocol.unknown_capability' && e.details.pointer === '/body/required_capabilities/1'));
});

test('a refusal surfaces the server code, known or not', () => {
  for (const code of ['unauthorized_scope', 'something_new']) {
    assert.throws(() => worker.negotiate(envelopeOf('register_refused', { code, message: 'no' })), (e) => e instanceof RegistrationRefused && e.code === code);
  }
});

test('publication answers surface to the caller', () => {
  const g = `sha256:${'1'.repeat(64)}`;
  assert.deepEqual(worker.publicationResult(envelopeOf('manifest_activated', { application_generation: g, workspace_generation: g, commit_order: 3 })),
    { status: 'activated', applicationGeneration: g, workspaceGeneration: g, commitOrder: 3 });
  assert.deepEqual(worker.publicationResult(envelopeOf('manifest_conflict', { active_generation: null, message: 'm' })),
    { status: 'conflict', activeGeneration: null, message: 'm' });
  assert.deepEqual(worker.publicationResult(envelopeOf('manifest_rejected', { code: 'undeclared_function', message: 'm' })),
    { status: 'rejected', code: 'undeclared_function', message: 'm' });
  const body = worker.publication({ scope: { workspace_id: 'w', application_id: 'a' }, expectedParent: g });
  assert.equal(body.expected_parent, g);
  assert.equal(Buffer.from(body.contents, 'base64').toString(), '{"format":"ryusen.manifest-contents/1","functions":[{"id":"f"}],"triggers":[]}');
});
