import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { mkdtempSync, copyFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { FrameReader, FrameWriter, hashBytes, PROTOCOL_VERSION } from '../src/index.js';
import { plain } from '../testing/helpers.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONFORM = path.join(HERE, '..', 'conform');

function startHost() {
  const child = spawn(CONFORM, [], { cwd: tmpdir(), stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const reader = new FrameReader(child.stdout);
  const writer = new FrameWriter(child.stdin);
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    stderr: () => stderr,
    exited,
    send: (kind, id, body, version = '1.0') => writer.write(Buffer.from(JSON.stringify({ version, kind, id, body }))),
    sendRaw: (text) => writer.write(Buffer.from(text)),
    receive: async () => JSON.parse((await reader.next()).toString('utf8')),
  };
}

const SCOPE = { workspace_id: 'ws-conform', application_id: 'app-conform' };

test('handshake: reset, register, negotiate, invoke, shutdown', async () => {
  const host = startHost();
  await host.send('conform.reset', 'h#1', {});
  assert.deepEqual(await host.receive(), { version: PROTOCOL_VERSION, kind: 'conform.ack', id: 'h#1', body: {} });

  await host.send('conform.register', 'h#2', { scope: SCOPE, release_id: 'rel-conform-1', instance_id: 'conform-instance-1' });
  const register = await host.receive();
  assert.equal(register.kind, 'register');
  assert.equal(register.id, 'h#2');
  assert.deepEqual(register.body.release, { kind: 'versioned', id: 'rel-conform-1' });
  assert.deepEqual(register.body.functions, ['conform.echo', 'conform.program', 'conform.saga', 'conform.unportable']);
  assert.equal(register.body.manifest_hash, 'sha256:26c9cc78cf5b7797aa49fd09132a80f12520ab4a9ff4aced560d664debbeec2d');
  assert.deepEqual(register.body.sdk.name, 'ryusen-node');
  assert.equal(register.body.sdk.language, 'javascript');
  await host.send('register_ack', 'h#2', { version: '1.3', capabilities: ['timers', 'compensation', 'teleport'], required_capabilities: [] });
  assert.deepEqual((await host.receive()).body, { status: 'registered', version: '1.3', capabilities: ['compensation', 'timers'] });

  await host.send('conform.register', 'h#3', { scope: SCOPE, release_id: null, instance_id: 'i' });
  assert.match((await host.receive()).body.release.group, /^unversioned:sha256:[0-9a-f]{64}$/);
  await host.send('register_ack', 'h#3', { version: '1.0', capabilities: [], required_capabilities: ['timers', 'warp'] });
  assert.deepEqual((await host.receive()).body.error.details, { pointer: '/body/required_capabilities/1' });

  await host.send('conform.publish', 'h#4', { scope: SCOPE, expected_parent: null });
  const publish = await host.receive();
  assert.equal(publish.kind, 'publish_manifest');
  assert.equal(hashBytes(Buffer.from(publish.body.contents, 'base64')), register.body.manifest_hash);
  const gen = `sha256:${'a'.repeat(64)}`;
  await host.send('manifest_activated', 'h#4', { application_generation: gen, workspace_generation: gen, commit_order: 1 });
  assert.deepEqual((await host.receive()).body, { status: 'activated', application_generation: gen, workspace_generation: gen });

  await host.send('conform.publish', 'h#5', { scope: SCOPE, expected_parent: null, registry: { functions: [{ id: 'a' }, { id: 'a' }], triggers: [] } });
  assert.deepEqual((await host.receive()).body.error.details, { code: 'duplicate_function_id' });

  await host.send('invoke', 'h#6', {
    run_id: 'run-1', function_id: 'conform.saga', mode: 'discover', input: plain({ order: 'A-1' }), history: [],
  });
  const declared = await host.receive();
  assert.deepEqual(declared, {
    version: PROTOCOL_VERSION, kind: 'declared', id: 'h#6',
    body: { declaration: { type: 'step', step_id: 'reserve', name: 'Reserve stock', retry: { max_attempts: 3, backoff_ms: '1000' }, has_compensation: true } },
  });

  await host.sendRaw('not json');
  const error = await host.receive();
  assert.equal(error.id, '-');
  assert.equal(error.body.error.category, 'protocol.malformed');

  await host.send('conform.shutdown', 'h#7', {});
  assert.equal(await host.exited, 0);
  assert.doesNotMatch(host.stderr(), /fatal/);
});

test('the host exits 0 at the end of input', async () => {
  const host = startHost();
  host.child.stdin.end();
  assert.equal(await host.exited, 0);
});

test('conform refuses to start without node_modules and says how to fix it', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ryusen-node-'));
  try {
    copyFileSync(CONFORM, path.join(dir, 'conform'));
    const result = spawnSync('sh', [path.join(dir, 'conform')], { encoding: 'utf8' });
    assert.equal(result.status, 1);
    assert.match(result.stderr, /npm ci --prefix runners\/node/);
    assert.equal(result.stdout, '');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('exchanges survive garbage and are abandoned when the bench moves on', async () => {
  const host = startHost();
  await host.send('conform.register', 'x#1', { scope: SCOPE, release_id: 'r', instance_id: 'i' });
  assert.equal((await host.receive()).kind, 'register');
  await host.sendRaw('{garbage');
  assert.deepEqual((await host.receive()).id, '-');
  await host.send('register_ack', 'x#1', { version: '1', capabilities: [], required_capabilities: [] });
  assert.deepEqual((await host.receive()).body.error.details, { pointer: '/body/version' });

  // A server answer of another request's kind fails the open exchange (D-SERVER-ANSWER-DECODE).
  await host.send('conform.register', 'x#4', { scope: SCOPE, release_id: 'r', instance_id: 'i' });
  assert.equal((await host.receive()).kind, 'register');
  await host.send('manifest_activated', 'x#4', { application_generation: 'x', workspace_generation: 'y', commit_order: 1 });
  const wrongKind = await host.receive();
  assert.equal(wrongKind.kind, 'conform.registration_outcome');
  assert.equal(wrongKind.body.status, 'failed');
  assert.deepEqual(wrongKind.body.error.details, { pointer: '/kind' });

  await host.send('conform.publish', 'x#2', { scope: SCOPE, expected_parent: null });
  assert.equal((await host.receive()).kind, 'publish_manifest');
  await host.send('conform.reset', 'x#3', {});
  assert.deepEqual(await host.receive(), { version: PROTOCOL_VERSION, kind: 'conform.ack', id: 'x#3', body: {} });
  host.child.stdin.end();
  assert.equal(await host.exited, 0);
});
