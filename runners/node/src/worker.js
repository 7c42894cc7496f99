// Worker registration and negotiation (protocol §7), manifest publication (§8.4, §8.5), and a
// framed session that carries them and serves invocations.

import { RyusenError, protocolError } from './errors.js';
import { hashDocument, compareCodePoints } from './canonical.js';
import { ANSWER_KINDS, PROTOCOL_MAJOR, PROTOCOL_VERSION, REQUEST_KINDS, parseVersion, decodeEnvelope, encodeEnvelope, ProtocolFault } from './envelope.js';
import { executeInvocation } from './invocation.js';
import { FrameReader, FrameWriter } from './framing.js';

export const VALUE_CODEC = 'ryusen.tagged/1';

/** Every optional capability of versions 1.0 and 1.1 (§7.3), sorted. */
export const CAPABILITIES = Object.freeze([
  'child_invocations',
  'compensation',
  'event_emission',
  'event_waits',
  'json_convenience',
  'timers',
]);

export const DEFAULT_SDK = Object.freeze({
  name: 'ryusen-node',
  version: '0.1.0',
  language: 'javascript',
  runtime: `node ${process.version}`,
});

const CAPABILITY_NAME = /^[a-z][a-z0-9_.]*$/;

/** The server refused the registration (`register_refused`); `code` is the server's code. */
export class RegistrationRefused extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'RegistrationRefused';
    this.code = code;
  }
}

/**
 * @typedef {{workspace_id: string, application_id: string}} Scope
 * @typedef {{version: string, capabilities: string[]}} Registration
 * @typedef {{status: 'activated', applicationGeneration: string, workspaceGeneration: string, commitOrder: number}
 *   | {status: 'conflict', activeGeneration: string, message: string}
 *   | {status: 'rejected', code: string, message: string}} PublicationResult
 */

export class Worker {
  /**
   * @param {import('./registry.js').Registry} registry
   * @param {{capabilities?: string[], sdk?: object, maxConcurrent?: number}} [options]
   */
  constructor(registry, options = {}) {
    const { capabilities = CAPABILITIES, sdk = DEFAULT_SDK, maxConcurrent = 1 } = options;
    for (const name of capabilities) {
      if (typeof name !== 'string' || !CAPABILITY_NAME.test(name)) throw new TypeError(`invalid capability ${JSON.stringify(name)}`);
    }
    this.registry = registry;
    this.capabilities = [...new Set(capabilities)].sort(compareCodePoints);
    this.sdk = { ...sdk };
    this.maxConcurrent = maxConcurrent;
  }

  /** The execution contract (§7.1). */
  contract() {
    return { protocol_major: PROTOCOL_MAJOR, value_codec: VALUE_CODEC, capabilities: [...this.capabilities] };
  }

  /**
   * The `register` body (§7.1). A null or absent release ID registers in the unversioned group.
   * Throws `sdk.invalid_registry` for an invalid registry.
   * @param {{scope: Scope, releaseId?: string | null, instanceId: string}} config
   */
  registration({ scope, releaseId = null, instanceId }) {
    const manifest = this.registry.manifest();
    const functions = manifest.functions.map((f) => f.id);
    const contract = this.contract();
    const release =
      releaseId === null || releaseId === undefined
        ? { kind: 'unversioned', group: `unversioned:${hashDocument({ contract, functions, manifest_hash: manifest.hash })}` }
        : { kind: 'versioned', id: releaseId };
    return {
      scope: { workspace_id: scope.workspace_id, application_id: scope.application_id },
      release,
      instance_id: instanceId,
      manifest_hash: manifest.hash,
      functions,
      contract,
      versions: [PROTOCOL_VERSION],
      capabilities: [...this.capabilities],
      capacity: { max_concurrent: this.maxConcurrent },
      sdk: { ...this.sdk },
    };
  }

  /**
   * Negotiate from the server's answer to `register` (§7.2).
   * Resolves the registration; throws RegistrationRefused, or a RyusenError `protocol.*`.
   * @param {import('./envelope.js').Envelope} answer
   * @returns {Registration}
   */
  negotiate(answer) {
    if (answer.kind === 'register_refused') throw new RegistrationRefused(answer.body.code, answer.body.message);
    if (answer.kind === 'protocol_error') throw RyusenError.fromRecord(answer.body.error);
    if (answer.kind !== 'register_ack') throw protocolError('protocol.malformed', '/kind', `expected register_ack, got ${answer.kind}`);
    const { version, capabilities, required_capabilities: required } = answer.body;
    const parsed = parseVersion(version);
    if (parsed === undefined) throw protocolError('protocol.malformed', '/body/version', 'a version is MAJOR.MINOR');
    if (parsed.major !== PROTOCOL_MAJOR) {
      throw protocolError('protocol.unsupported_version', '/body/version', `the server negotiated ${version}; this worker speaks ${PROTOCOL_VERSION}`);
    }
    const offered = new Set(this.capabilities);
    const missing = required.findIndex((name) => !offered.has(name));
    if (missing !== -1) {
      throw protocolError('protocol.unknown_capability', `/body/required_capabilities/${missing}`, `required capability ${JSON.stringify(required[missing])} is not implemented`);
    }
    const accepted = new Set(capabilities);
    return { version, capabilities: this.capabilities.filter((name) => accepted.has(name)) };
  }

  /**
   * The `publish_manifest` body (§8.4) for a registry (this worker's by default).
   * Throws `sdk.invalid_registry` before anything is sent for an invalid registry.
   * @param {{scope: Scope, expectedParent?: string | null}} config
   * @param {import('./registry.js').Registry} [registry]
   */
  publication({ scope, expectedParent = null }, registry = this.registry) {
    const manifest = registry.manifest();
    return {
      scope: { workspace_id: scope.workspace_id, application_id: scope.application_id },
      expected_parent: expectedParent,
      functions: manifest.functions,
      triggers: manifest.triggers,
      contents: Buffer.from(manifest.contents).toString('base64'),
    };
  }

  /**
   * The caller-facing result of a publication answer (§8.5).
   * @param {import('./envelope.js').Envelope} answer
   * @returns {PublicationResult}
   */
  publicationResult(answer) {
    switch (answer.kind) {
      case 'manifest_activated':
        return {
          status: 'activated',
          applicationGeneration: answer.body.application_generation,
          workspaceGeneration: answer.body.workspace_generation,
          commitOrder: answer.body.commit_order,
        };
      case 'manifest_conflict':
        return { status: 'conflict', activeGeneration: answer.body.active_generation, message: answer.body.message };
      case 'manifest_rejected':
        return { status: 'rejected', code: answer.body.code, message: answer.body.message };
      case 'protocol_error':
        throw RyusenError.fromRecord(answer.body.error);
      default:
        throw protocolError('protocol.malformed', '/kind', `expected a publication answer, got ${answer.kind}`);
    }
  }

  /**
   * Answer one decoded `invoke` (§10).
   * @param {import('./envelope.js').Envelope} envelope
   * @param {{admissionOpen?: boolean}} [options]
   */
  execute(envelope, options) {
    return executeInvocation(this.registry, envelope, options);
  }
}

/** A framed session over a pair of byte streams (stdin/stdout for a conformance host). */
export class Session {
  /**
   * @param {import('node:stream').Readable} input
   * @param {import('node:stream').Writable} output
   */
  constructor(input, output) {
    this.reader = new FrameReader(input);
    this.writer = new FrameWriter(output);
  }

  /** Send one envelope. */
  send(kind, id, body) {
    return this.writer.write(encodeEnvelope(kind, id, body));
  }

  /**
   * The next envelope: `{envelope}` decoded, `{fault}` for a frame that does not decode, or null
   * at the end of input. Throws FramingError when the stream is broken.
   * @param {string[]} [expecting] the answer kinds of the exchange in progress (others are out of
   *   turn and keep their raw body)
   */
  async receive(expecting = []) {
    if (this.pushedBack !== undefined) {
      const received = this.pushedBack;
      this.pushedBack = undefined;
      return received;
    }
    const payload = await this.reader.next();
    if (payload === null) return null;
    try {
      return { envelope: decodeEnvelope(payload, { expecting }) };
    } catch (error) {
      if (error instanceof ProtocolFault) return { fault: error };
      throw error;
    }
  }

  /** Answer a frame that does not decode (§10.9). */
  sendFault(fault) {
    return this.send('protocol_error', fault.id, { error: fault.error.toRecord() });
  }

  /**
   * Send a request and wait for its answer: one of `kinds`, or the peer's `protocol_error`.
   * An answer of one of `kinds` that does not decode (§2, §14) fails the exchange with that
   * `protocol.*` error (§12.3). Any other frame that does not decode, or an answer of another kind,
   * is answered with `protocol_error` and the wait goes on. A new request (the peer moved on) or
   * the end of input abandons the exchange: null, and the request is served next.
   */
  async #exchange(kind, id, body, kinds) {
    await this.send(kind, id, body);
    for (;;) {
      const received = await this.receive(kinds);
      if (received === null) return null;
      if (received.fault) {
        const { fault } = received;
        if (fault.id !== '-' && kinds.includes(fault.kind)) throw fault.error;
        await this.sendFault(fault);
        continue;
      }
      const answer = received.envelope;
      if (REQUEST_KINDS.has(answer.kind)) {
        this.pushedBack = received;
        return null;
      }
      if (ANSWER_KINDS.has(answer.kind) && !kinds.includes(answer.kind)) {
        // A server answer that cannot answer this request fails it (D-SERVER-ANSWER-DECODE).
        throw protocolError('protocol.malformed', '/kind', `${answer.kind} does not answer ${kind}`);
      }
      if (answer.kind !== 'protocol_error' && !kinds.includes(answer.kind)) {
        const error = protocolError('protocol.malformed', '/kind', `${answer.kind} does not answer ${kind}`);
        await this.send('protocol_error', answer.id, { error: error.toRecord() });
        continue;
      }
      return answer;
    }
  }

  /**
   * Register a worker (§7): send `register`, negotiate from the answer.
   * @param {Worker} worker
   * @param {{scope: Scope, releaseId?: string | null, instanceId: string}} config
   * @param {string} id the exchange id
   * @returns {Promise<Registration | null>} null when the exchange was abandoned; rejects with
   *   RegistrationRefused, or a RyusenError when the answer does not decode or negotiation fails
   */
  async register(worker, config, id) {
    const answer = await this.#exchange('register', id, worker.registration(config), ['register_ack', 'register_refused']);
    return answer === null ? null : worker.negotiate(answer);
  }

  /**
   * Publish a registry's complete manifest (§8.4).
   * @param {Worker} worker
   * @param {{scope: Scope, expectedParent?: string | null}} config
   * @param {string} id the exchange id
   * @param {import('./registry.js').Registry} [registry]
   * @returns {Promise<PublicationResult | null>} null when the exchange was abandoned; rejects
   *   with a RyusenError when the answer does not decode or the peer answered `protocol_error`
   */
  async publish(worker, config, id, registry) {
    const kinds = ['manifest_activated', 'manifest_conflict', 'manifest_rejected'];
    const answer = await this.#exchange('publish_manifest', id, worker.publication(config, registry), kinds);
    return answer === null ? null : worker.publicationResult(answer);
  }
}
