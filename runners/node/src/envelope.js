// Envelopes (protocol §2) and message bodies (§9.1, §7.2, §8.5, §12.3), decoded strictly in the
// order of §2: JSON text, envelope shape, version major, kind, body members (presence and type,
// then enum variants), limits, tagged values. Unknown members are ignored at every level.

import { parseJson, decodeUtf8, JsonNumber, JsonSyntaxError } from './jsonparse.js';
import { RyusenError, protocolError, isCategory } from './errors.js';
import { fromTagged, parseU64Text, pointerSegment, MAX_VALUE_BYTES } from './values.js';

export const PROTOCOL_VERSION = '1.1';
export const PROTOCOL_MAJOR = 1;
export const MAX_INVOKE_BYTES = 4_194_304;
export const MAX_HISTORY = 1024;

const VERSION = /^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$/;
const INT31_MAX = 2 ** 31 - 1;

/** Every kind of the §14 catalog. */
export const KINDS = new Set([
  'register', 'register_ack', 'register_refused',
  'publish_manifest', 'manifest_activated', 'manifest_conflict', 'manifest_rejected',
  'invoke', 'declared', 'completed', 'failed', 'definition_blocked',
  'step_completed', 'step_failed', 'compensation_completed', 'compensation_failed',
  'target_not_found', 'rejected_before_start', 'protocol_error',
  'conform.reset', 'conform.register', 'conform.publish', 'conform.set_ambient',
  'conform.set_admission', 'conform.shutdown', 'conform.ack',
  'conform.registration_outcome', 'conform.publication_outcome', 'conform.trace',
]);

/**
 * The kinds an SDK can receive: the server's (§14 S→W) and, in a conformance session, the
 * bench's. Any other kind, even one of the catalog, is the wrong direction: an unknown variant of
 * the kinds this receiver acts on.
 */
export const RECEIVABLE_KINDS = new Set([
  'register_ack', 'register_refused', 'manifest_activated', 'manifest_conflict', 'manifest_rejected',
  'invoke', 'protocol_error',
  'conform.reset', 'conform.register', 'conform.publish', 'conform.set_ambient', 'conform.set_admission',
  'conform.shutdown', 'conform.trace',
]);

/** The server's answers within an exchange (registration, publication). */
export const ANSWER_KINDS = new Set(['register_ack', 'register_refused', 'manifest_activated', 'manifest_conflict', 'manifest_rejected']);

/** The kinds a server (or bench) sends as requests, as opposed to answers of an exchange. */
export const REQUEST_KINDS = new Set([
  'invoke', 'conform.reset', 'conform.register', 'conform.publish', 'conform.set_ambient',
  'conform.set_admission', 'conform.shutdown', 'conform.trace',
]);

/** A frame that does not decode: answer `protocol_error` with `error` under envelope id `id`. */
export class ProtocolFault extends Error {
  /**
   * @param {RyusenError} error a `protocol.*` error with details.pointer
   * @param {string} id the offending frame's id, or "-"
   * @param {string} [kind] the frame's `kind` when it had a string one
   */
  constructor(error, id, kind) {
    super(error.message);
    this.name = 'ProtocolFault';
    this.error = error;
    this.id = id;
    this.kind = kind;
  }
}

/**
 * @typedef {object} Envelope
 * @property {string} version
 * @property {string} kind
 * @property {string} id
 * @property {any} body the decoded body (tagged values decoded to language values)
 */

/** True for a valid envelope id: a string of 1 to 256 characters. */
export function isValidId(id) {
  if (typeof id !== 'string' || !id.isWellFormed()) return false;
  let count = 0;
  for (const _ of id) if (++count > 256) return false;
  return count >= 1;
}

/** Parse `MAJOR.MINOR`; undefined when it does not match the grammar. */
export function parseVersion(text) {
  if (typeof text !== 'string') return undefined;
  const m = VERSION.exec(text);
  return m === null ? undefined : { major: Number(m[1]), minor: Number(m[2]) };
}

// ---------------------------------------------------------------------------------------------
// Member checks. Each takes the JSON pointer of the member it checks.

const malformed = (pointer, message) => protocolError('protocol.malformed', pointer, message);

class Checker {
  object(value, pointer) {
    if (value === null || typeof value !== 'object' || Array.isArray(value) || value instanceof JsonNumber) {
      throw malformed(pointer, 'expected a JSON object');
    }
    return value;
  }

  member(object, name, pointer) {
    if (!Object.hasOwn(object, name)) throw malformed(`${pointer}/${pointerSegment(name)}`, `missing member ${name}`);
    return object[name];
  }

  string(value, pointer, { nonEmpty = false } = {}) {
    if (typeof value !== 'string') throw malformed(pointer, 'expected a string');
    if (!value.isWellFormed()) throw malformed(pointer, 'a string has a lone surrogate');
    if (nonEmpty && value === '') throw malformed(pointer, 'expected a non-empty string');
    return value;
  }

  boolean(value, pointer) {
    if (typeof value !== 'boolean') throw malformed(pointer, 'expected a boolean');
    return value;
  }

  array(value, pointer) {
    if (!Array.isArray(value)) throw malformed(pointer, 'expected an array');
    return value;
  }

  smallInteger(value, pointer, min = 0) {
    if (!(value instanceof JsonNumber) || !value.isInteger) throw malformed(pointer, 'expected an integer');
    const number = Number(value.text);
    if (number < min || number > INT31_MAX) throw malformed(pointer, `expected an integer from ${min} to ${INT31_MAX}`);
    return number;
  }

  u64String(value, pointer) {
    if (parseU64Text(value) === undefined) throw malformed(pointer, 'expected a canonical u64 decimal string');
    return value;
  }

  enumeration(value, pointer, variants) {
    this.string(value, pointer);
    if (!variants.includes(value)) {
      throw protocolError('protocol.unknown_variant', pointer, `unknown variant ${JSON.stringify(value)}`);
    }
    return value;
  }

  stringMap(value, pointer) {
    this.object(value, pointer);
    const out = {};
    for (const key of Object.keys(value)) {
      this.string(key, pointer);
      const member = this.string(value[key], `${pointer}/${pointerSegment(key)}`);
      Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }

  /** An error record (§5.1) supplied by the peer. */
  errorRecord(value, pointer) {
    this.object(value, pointer);
    const category = this.string(this.member(value, 'category', pointer), `${pointer}/category`);
    if (!isCategory(category)) throw malformed(`${pointer}/category`, 'not a valid error category');
    const message = this.string(this.member(value, 'message', pointer), `${pointer}/message`);
    const retryable = this.boolean(this.member(value, 'retryable', pointer), `${pointer}/retryable`);
    const details = this.stringMap(this.member(value, 'details', pointer), `${pointer}/details`);
    const record = { category, message, retryable, details };
    if (Object.hasOwn(value, 'cause')) record.cause = this.errorRecord(value.cause, `${pointer}/cause`);
    return record;
  }

  scope(value, pointer) {
    this.object(value, pointer);
    return {
      workspace_id: this.string(this.member(value, 'workspace_id', pointer), `${pointer}/workspace_id`, { nonEmpty: true }),
      application_id: this.string(this.member(value, 'application_id', pointer), `${pointer}/application_id`, { nonEmpty: true }),
    };
  }
}

// ---------------------------------------------------------------------------------------------
// Bodies

function decodeInvoke(c, body, size) {
  const p = '/body';
  const runId = c.string(c.member(body, 'run_id', p), '/body/run_id', { nonEmpty: true });
  const functionId = c.string(c.member(body, 'function_id', p), '/body/function_id');
  const mode = c.enumeration(c.member(body, 'mode', p), '/body/mode', ['discover', 'forward', 'compensate']);
  c.member(body, 'input', p);
  const rawHistory = c.array(c.member(body, 'history', p), '/body/history');
  const entries = [];
  const seen = new Set();
  rawHistory.forEach((raw, i) => {
    const ep = `/body/history/${i}`;
    c.object(raw, ep);
    const stepId = c.string(c.member(raw, 'step_id', ep), `${ep}/step_id`);
    if (seen.has(stepId)) throw malformed(`${ep}/step_id`, `step ${JSON.stringify(stepId)} appears twice in the history`);
    seen.add(stepId);
    const status = c.enumeration(c.member(raw, 'status', ep), `${ep}/status`, ['completed', 'failed']);
    if (status === 'completed') {
      c.member(raw, 'value', ep);
      entries.push({ stepId, status, raw: raw.value, pointer: `${ep}/value` });
    } else {
      entries.push({ stepId, status, error: c.errorRecord(c.member(raw, 'error', ep), `${ep}/error`) });
    }
  });
  let target;
  if (mode !== 'discover') {
    const tp = '/body/target';
    const raw = c.object(c.member(body, 'target', p), tp);
    const targetRunId = c.string(c.member(raw, 'run_id', tp), `${tp}/run_id`);
    if (targetRunId !== runId) throw malformed(`${tp}/run_id`, "the target's run_id differs from the invocation's");
    const stepId = c.string(c.member(raw, 'step_id', tp), `${tp}/step_id`);
    const phase = c.enumeration(c.member(raw, 'phase', tp), `${tp}/phase`, ['forward', 'compensation']);
    if (phase !== (mode === 'forward' ? 'forward' : 'compensation')) {
      throw malformed(`${tp}/phase`, `phase ${phase} does not match mode ${mode}`);
    }
    const attempt = c.smallInteger(c.member(raw, 'attempt', tp), `${tp}/attempt`, 1);
    const operationId = c.string(c.member(raw, 'operation_id', tp), `${tp}/operation_id`, { nonEmpty: true });
    const fencing = c.u64String(c.member(raw, 'fencing_generation', tp), `${tp}/fencing_generation`);
    target = { run_id: targetRunId, step_id: stepId, phase, attempt, operation_id: operationId, fencing_generation: fencing };
  }
  // (6) limits
  if (size > MAX_INVOKE_BYTES) throw protocolError('protocol.limit_exceeded', '', `invoke payload is ${size} bytes, over ${MAX_INVOKE_BYTES}`);
  if (rawHistory.length > MAX_HISTORY) {
    throw protocolError('protocol.limit_exceeded', '/body/history', `history has ${rawHistory.length} entries, over ${MAX_HISTORY}`);
  }
  // (7) tagged values, in document order
  // A value's canonical text is never longer than its text in the frame (canonical JSON drops
  // whitespace and escapes no more than any JSON must), so a small frame holds no value over
  // the limit and the sizes need not be computed (the Python SDK reasons the same way).
  const checkSize = size > MAX_VALUE_BYTES;
  const input = fromTagged(body.input, '/body/input', checkSize);
  const history = new Map();
  for (const entry of entries) {
    if (entry.status === 'completed') {
      history.set(entry.stepId, { status: 'completed', value: fromTagged(entry.raw, entry.pointer, checkSize) });
    } else {
      history.set(entry.stepId, { status: 'failed', error: entry.error });
    }
  }
  return { run_id: runId, function_id: functionId, mode, input, history, target };
}

function decodeRegistrySpec(c, raw, pointer) {
  c.object(raw, pointer);
  const functions = [];
  const triggers = [];
  if (Object.hasOwn(raw, 'functions')) {
    c.array(raw.functions, `${pointer}/functions`).forEach((f, i) => {
      const fp = `${pointer}/functions/${i}`;
      c.object(f, fp);
      const spec = { id: c.string(c.member(f, 'id', fp), `${fp}/id`) };
      if (Object.hasOwn(f, 'timeout') && f.timeout !== null) {
        if (f.timeout instanceof JsonNumber && f.timeout.isInteger) spec.timeout = Number(f.timeout.text);
        else spec.timeout = c.string(f.timeout, `${fp}/timeout`);
      }
      functions.push(spec);
    });
  }
  if (Object.hasOwn(raw, 'triggers')) {
    c.array(raw.triggers, `${pointer}/triggers`).forEach((t, i) => {
      const tp = `${pointer}/triggers/${i}`;
      c.object(t, tp);
      triggers.push({
        id: c.string(c.member(t, 'id', tp), `${tp}/id`),
        event: c.string(c.member(t, 'event', tp), `${tp}/event`),
        function: c.string(c.member(t, 'function', tp), `${tp}/function`),
      });
    });
  }
  return { functions, triggers };
}

const BODY_DECODERS = {
  invoke: decodeInvoke,
  'conform.reset': () => ({}),
  'conform.shutdown': () => ({}),
  'conform.trace': () => ({}),
  'conform.register': (c, b) => {
    const scope = c.scope(c.member(b, 'scope', '/body'), '/body/scope');
    const release = c.member(b, 'release_id', '/body');
    const releaseId = release === null ? null : c.string(release, '/body/release_id', { nonEmpty: true });
    const instanceId = c.string(c.member(b, 'instance_id', '/body'), '/body/instance_id');
    return { scope, release_id: releaseId, instance_id: instanceId };
  },
  'conform.publish': (c, b) => {
    const scope = c.scope(c.member(b, 'scope', '/body'), '/body/scope');
    const parent = c.member(b, 'expected_parent', '/body');
    const expectedParent = parent === null ? null : c.string(parent, '/body/expected_parent', { nonEmpty: true });
    const out = { scope, expected_parent: expectedParent };
    if (Object.hasOwn(b, 'registry')) out.registry = decodeRegistrySpec(c, b.registry, '/body/registry');
    return out;
  },
  'conform.set_ambient': (c, b) => ({
    key: c.string(c.member(b, 'key', '/body'), '/body/key'),
    value: c.string(c.member(b, 'value', '/body'), '/body/value'),
  }),
  'conform.set_admission': (c, b) => ({ open: c.boolean(c.member(b, 'open', '/body'), '/body/open') }),
  register_ack: (c, b) => {
    const version = c.string(c.member(b, 'version', '/body'), '/body/version');
    const strings = (name) =>
      c.array(c.member(b, name, '/body'), `/body/${name}`).map((s, i) => c.string(s, `/body/${name}/${i}`));
    return { version, capabilities: strings('capabilities'), required_capabilities: strings('required_capabilities') };
  },
  register_refused: (c, b) => ({
    code: c.string(c.member(b, 'code', '/body'), '/body/code'),
    message: c.string(c.member(b, 'message', '/body'), '/body/message'),
  }),
  manifest_activated: (c, b) => ({
    application_generation: c.string(c.member(b, 'application_generation', '/body'), '/body/application_generation'),
    workspace_generation: c.string(c.member(b, 'workspace_generation', '/body'), '/body/workspace_generation'),
    commit_order: c.smallInteger(c.member(b, 'commit_order', '/body'), '/body/commit_order'),
  }),
  manifest_conflict: (c, b) => ({
    active_generation: ((g) => (g === null ? null : c.string(g, '/body/active_generation')))(c.member(b, 'active_generation', '/body')),
    message: c.string(c.member(b, 'message', '/body'), '/body/message'),
  }),
  manifest_rejected: (c, b) => ({
    code: c.string(c.member(b, 'code', '/body'), '/body/code'),
    message: c.string(c.member(b, 'message', '/body'), '/body/message'),
  }),
  protocol_error: (c, b) => ({ error: c.errorRecord(c.member(b, 'error', '/body'), '/body/error') }),
};

/**
 * Decode one frame payload into an envelope, or throw a ProtocolFault.
 * An answer kind (`register_ack`, `manifest_*`) outside `expecting` is out of turn: its body is
 * left undecoded for the caller to refuse.
 * @param {Uint8Array} payload
 * @param {{receivable?: Set<string>, expecting?: Iterable<string>}} [options] the kinds this
 *   receiver acts on (default: an SDK's), and the answer kinds of the exchange in progress
 * @returns {Envelope}
 */
export function decodeEnvelope(payload, options = {}) {
  const { receivable = RECEIVABLE_KINDS } = options;
  const expecting = new Set(options.expecting ?? ANSWER_KINDS);
  let root;
  // (1) JSON text: UTF-8, no byte-order mark, no key twice in any one object (§3.3)
  try {
    root = parseJson(decodeUtf8(payload), { wrapNumbers: true, nullPrototype: true, rejectDuplicates: true }).value;
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    throw new ProtocolFault(malformed('', `not a UTF-8 JSON text: ${error.message}`), '-');
  }
  const isObject = root !== null && typeof root === 'object' && !Array.isArray(root);
  const replyId = isObject && isValidId(root.id) ? root.id : '-';
  const rawKind = isObject && typeof root.kind === 'string' ? root.kind : undefined;
  const fault = (error) => new ProtocolFault(error, replyId, rawKind);
  const c = new Checker();
  try {
    // (2) envelope shape, member by member
    c.object(root, '');
    const version = c.string(c.member(root, 'version', ''), '/version');
    const parsedVersion = parseVersion(version);
    if (parsedVersion === undefined) throw malformed('/version', 'a version is MAJOR.MINOR');
    const kind = c.string(c.member(root, 'kind', ''), '/kind');
    const id = c.member(root, 'id', '');
    if (!isValidId(id)) throw malformed('/id', 'an id is a string of 1 to 256 characters');
    const body = c.object(c.member(root, 'body', ''), '/body');
    // (3) version major
    if (parsedVersion.major !== PROTOCOL_MAJOR) {
      throw protocolError('protocol.unsupported_version', '/version', `protocol version ${version} is not supported (this SDK speaks ${PROTOCOL_MAJOR}.x)`);
    }
    // (4) kind
    if (!KINDS.has(kind) || !receivable.has(kind)) {
      throw protocolError('protocol.unknown_variant', '/kind', `unknown kind ${JSON.stringify(kind)}`);
    }
    // (5)–(7) body
    const decoder = ANSWER_KINDS.has(kind) && !expecting.has(kind) ? undefined : BODY_DECODERS[kind];
    const decoded = decoder === undefined ? body : decoder(c, body, payload.length);
    return { version, kind, id, body: decoded };
  } catch (error) {
    if (error instanceof RyusenError) throw fault(error);
    throw error;
  }
}

/**
 * Encode one envelope as a frame payload (UTF-8 JSON).
 * @param {string} kind
 * @param {string} id
 * @param {object} body
 * @returns {Uint8Array}
 */
export function encodeEnvelope(kind, id, body) {
  return Buffer.from(JSON.stringify({ version: PROTOCOL_VERSION, kind, id, body }), 'utf8');
}
