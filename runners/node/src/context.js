// One invocation pass (protocol §11.2–§11.4) and the workflow context the function sees.
//
// Suspension design (§11.2 item 5). A call that stops the pass (the unresolved boundary in
// discovery, a reached target, a duplicate, a missing target) decides the pass's answer at once,
// synchronously, and returns a promise that never settles. The workflow is simply abandoned at
// that await: nothing is thrown into it, so no application try/catch — not even one that catches
// everything — can swallow the stop or turn it into an application error, and a callback failure
// (an ordinary rejection) stays distinguishable from it. Once the pass has stopped, every later
// call of any step kind is suspended the same way and never reaches the decision machine, so the
// answer stays the first boundary.

import { DecisionMachine } from './machine.js';
import { RyusenError, errorToRecord, sdkError } from './errors.js';
import { toTagged, Instant } from './values.js';
import { toMillis } from './durations.js';
import { JsonDocument, asGivenBytes } from './json.js';
import { fileURLToPath } from 'node:url';

/** The private suspension signal: the SDK-internal marker of a stopped pass. */
class Suspension {
  constructor(reason) {
    this.reason = reason;
  }
}

const SUSPENDED = Symbol('ryusen.suspended');

/** A promise that never settles: the await a stopped workflow is abandoned at. */
function suspended(reason) {
  const promise = new Promise(() => {});
  promise[SUSPENDED] = new Suspension(reason);
  return promise;
}

/**
 * True when `thrown` is the SDK's suspension signal itself. The reference SDK never throws it
 * into a workflow; a conformance host uses this to report one that did (§12.4 effect trace).
 */
export function isSuspensionSignal(thrown) {
  return thrown instanceof Suspension;
}

/** True for the promise a suspended step call returned (for diagnostics and tests). */
export function isSuspended(promise) {
  return promise !== null && typeof promise === 'object' && promise[SUSPENDED] instanceof Suspension;
}

/**
 * The first check of every step API: a callback cannot declare durable steps (an error it sees);
 * a stopped pass answers no later declaration (a suspended promise). Undefined when open.
 */
function closed(pass) {
  if (pass.inCallback) return rejected(invalidDeclaration('a callback cannot declare durable steps'));
  if (pass.stopped) return suspended('stopped');
  return undefined;
}

/** A rejected promise that does not count as an unhandled rejection when the workflow ignores it. */
function rejected(error) {
  const promise = Promise.reject(error);
  promise.catch(() => {});
  return promise;
}

const SDK_DIR = new URL('.', import.meta.url).href;

/** Frames recorded above `call`: `#declare` (not for step.run), the API method, the workflow. */
const CALLER_FRAMES = 3;

/**
 * The call stack at a step API call, captured for `sourceOf`. V8 records the frames here and
 * formats them only when `.stack` is read, so a declaration that is never a duplicate (nearly
 * all of them) costs no stack text and no parsing. Recording costs time per frame, and replay
 * declares every step again on every invocation, so only the few frames between `call` and the
 * workflow's own call are recorded (V8 skips the frames up to `call` without recording them).
 */
function captureCaller() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = CALLER_FRAMES;
  const capture = {};
  Error.captureStackTrace(capture, call);
  Error.stackTraceLimit = limit;
  return capture;
}

/**
 * Where the workflow called a step API: the first stack frame outside this SDK (diagnostic
 * source metadata for definition_blocked, §10.5). Undefined when it cannot be told.
 * @param {Error | undefined} capture from `captureCaller`
 */
function sourceOf(capture) {
  if (capture === undefined) return undefined;
  const stack = capture.stack ?? '';
  for (const line of stack.split('\n').slice(1)) {
    const m = /\(?((?:file:\/\/|\/|[A-Za-z]:\\)[^()]*?):(\d+):\d+\)?\s*$/.exec(line);
    if (m === null) continue;
    const file = m[1];
    if (file.startsWith(SDK_DIR) || file.startsWith(fileURLToPath(SDK_DIR))) continue;
    const lineNumber = Number(m[2]);
    if (!(lineNumber >= 1)) return undefined;
    return { file: file.startsWith('file://') ? fileURLToPath(file) : file, line: lineNumber };
  }
  return undefined;
}

function invalidDeclaration(message) {
  return sdkError('sdk.invalid_declaration', message);
}

const DEFAULT_RETRY = Object.freeze({ max_attempts: 3, backoff_ms: '1000' });

function retryMetadata(retry) {
  if (retry === undefined || retry === null) return { ...DEFAULT_RETRY };
  if (typeof retry !== 'object') throw invalidDeclaration('retry is {maxAttempts, backoff}');
  const maxAttempts = retry.maxAttempts ?? DEFAULT_RETRY.max_attempts;
  if (!Number.isInteger(maxAttempts) || maxAttempts < 1 || maxAttempts > 1000) {
    throw invalidDeclaration('retry.maxAttempts is an integer from 1 to 1000');
  }
  const backoff = retry.backoff ?? 1000;
  return { max_attempts: maxAttempts, backoff_ms: toMillis(backoff).toString() };
}

function stringMap(value, what) {
  const out = {};
  if (value === undefined || value === null) return out;
  if (typeof value !== 'object' || Array.isArray(value)) throw invalidDeclaration(`${what} is an object of strings`);
  const entries = value instanceof Map ? [...value] : Object.entries(value);
  for (const [key, member] of entries) {
    if (typeof key !== 'string' || typeof member !== 'string') throw invalidDeclaration(`${what} is an object of strings`);
    Object.defineProperty(out, key, { value: member, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * One step API call, in the order §11.2 item 3 fixes: a closed pass first, then the step ID is
 * claimed (the duplicate check), then the arguments are converted (a refusal rejects the call's
 * promise; the ID stays claimed), then the pass decides.
 * @param {Pass} pass
 * @param {unknown} id
 * @param {() => [object, object | undefined]} build the wire declaration and step.run functions
 */
function call(pass, id, build) {
  const refused = closed(pass);
  if (refused !== undefined) return refused;
  if (typeof id !== 'string') return rejected(invalidDeclaration('a step ID is an explicit string'));
  const decision = pass.claim(id);
  if (decision === null) return suspended('blocked');
  let declaration;
  let step;
  try {
    [declaration, step] = build();
  } catch (error) {
    return rejected(error);
  }
  return pass.decide(declaration, step, decision);
}

/**
 * What a callback or compensator receives (§11.1): server-supplied identity, unchanged.
 * @typedef {{runId: string, functionId: string, stepId: string, operationId: string, attempt: number, phase: 'forward' | 'compensation'}} StepContext
 */

/** One discovery pass or one targeted execution. */
export class Pass {
  /**
   * @param {object} options
   * @param {'discover' | 'forward' | 'compensate'} options.mode
   * @param {string} options.runId
   * @param {string} options.functionId
   * @param {Map<string, import('./machine.js').HistoryEntry>} options.history
   * @param {{run_id: string, step_id: string, phase: string, attempt: number, operation_id: string, fencing_generation: string}} [options.target]
   * @param {string} [options.requestId] the invoke's envelope id (for rejected_before_start)
   */
  constructor({ mode, runId, functionId, history, target, requestId }) {
    this.mode = mode;
    this.requestId = requestId;
    this.runId = runId;
    this.functionId = functionId;
    this.history = history;
    this.target = target;
    this.machine = new DecisionMachine(history);
    /** Once true, every later call is suspended without reaching the machine. */
    this.stopped = false;
    /** True while the target's callback or compensator runs: it cannot declare durable steps. */
    this.inCallback = false;
    this.answer = null;
    /** @type {Promise<{kind: string, body: object}>} */
    this.done = new Promise((resolve) => {
      this.resolveDone = resolve;
    });
  }

  /** Fix the answer (first one wins) and stop the pass. */
  finish(kind, body) {
    this.stopped = true;
    if (this.answer !== null) return;
    this.answer = { kind, body };
    this.resolveDone(this.answer);
  }

  targetNotFound() {
    const { run_id, step_id, phase } = this.target;
    this.finish('target_not_found', { run_id, step_id, phase });
  }

  identity() {
    const { operation_id, attempt, fencing_generation } = this.target;
    return { operation_id, attempt, fencing_generation };
  }

  stepContext(stepId, phase) {
    return Object.freeze({
      runId: this.runId,
      functionId: this.functionId,
      stepId,
      operationId: this.target.operation_id,
      attempt: this.target.attempt,
      phase,
    });
  }

  /**
   * Claim a step ID in this pass: the duplicate check, made before the call's arguments are
   * converted (§11.2 item 3). Returns the machine's decision, or null when the ID was already met
   * and the pass stopped with `definition_blocked`.
   * @param {string} stepId
   */
  claim(stepId) {
    const decision = this.machine.declare(stepId, captureCaller());
    if (decision.kind !== 'blocked') return decision;
    const body = { reason: 'duplicate_step_id', step_id: stepId };
    const firstSource = sourceOf(decision.firstSource);
    const duplicateSource = sourceOf(decision.duplicateSource);
    if (firstSource !== undefined) body.first_source = firstSource;
    if (duplicateSource !== undefined) body.duplicate_source = duplicateSource;
    this.finish('definition_blocked', body);
    return null;
  }

  /**
   * Act on a claimed declaration (§11.2–§11.4): replay it, or stop the pass with its answer.
   * @param {object} declaration the wire declaration (§10.1)
   * @param {{callback?: Function, compensate?: Function} | undefined} step the step.run functions
   * @param {import('./machine.js').Decision} decision what the machine decided at the claim
   * @returns {Promise<unknown>}
   */
  decide(declaration, step, decision) {
    const stepId = declaration.step_id;
    if (this.mode !== 'discover' && stepId === this.target.step_id) return this.reachTarget(declaration, step, decision);
    if (decision.kind === 'replay') return Promise.resolve(decision.value);
    if (decision.kind === 'replay_failed') return rejected(RyusenError.fromRecord(decision.error));
    // The first unresolved step: the boundary.
    if (this.mode === 'discover') this.finish('declared', { declaration });
    else this.targetNotFound();
    return suspended('boundary');
  }

  reachTarget(declaration, step, decision) {
    this.stopped = true;
    const stepId = declaration.step_id;
    if (declaration.type !== 'step') {
      this.finish('rejected_before_start', {
        request_id: this.requestId,
        attempt: this.target.attempt,
        fencing_generation: this.target.fencing_generation,
        reason: {
          code: 'unsupported_target',
          message: `step ${JSON.stringify(stepId)} is a ${declaration.type}, not a step.run`,
          retryable: false,
        },
      });
      return suspended('target');
    }
    if (this.mode === 'forward') {
      const context = this.stepContext(stepId, 'forward');
      this.runCallback(() => step.callback(context), 'step_completed', 'step_failed');
    } else if (decision.kind === 'replay' && typeof step.compensate === 'function') {
      const context = this.stepContext(stepId, 'compensation');
      this.runCallback(() => step.compensate(decision.value, context), 'compensation_completed', 'compensation_failed');
    } else {
      // No compensator in the current code, or no accepted forward result to compensate.
      this.targetNotFound();
    }
    return suspended('target');
  }

  async runCallback(call, okKind, failKind) {
    let result;
    this.inCallback = true;
    try {
      result = await call();
    } catch (error) {
      this.finish(failKind, { ...this.identity(), error: errorToRecord(error) });
      return;
    } finally {
      this.inCallback = false;
    }
    let value;
    try {
      value = toTagged(result);
    } catch (error) {
      this.finish(failKind, { ...this.identity(), error: errorToRecord(error) });
      return;
    }
    this.finish(okKind, { ...this.identity(), value });
  }

  /** The workflow function settled (returned or threw). Ignored once the pass has stopped. */
  settle(outcome) {
    if (this.stopped) return;
    if (this.mode !== 'discover') {
      this.targetNotFound();
      return;
    }
    if (!outcome.ok) {
      this.finish('failed', { error: errorToRecord(outcome.error) });
      return;
    }
    let value;
    try {
      value = toTagged(outcome.value);
    } catch (error) {
      this.finish('failed', { error: errorToRecord(error) });
      return;
    }
    this.finish('completed', { value });
  }

  /**
   * Run a workflow function for this pass and resolve with the answer.
   * @param {Function} fn
   * @param {unknown} input
   */
  run(fn, input) {
    const ctx = new WorkflowContext(this);
    Promise.resolve()
      .then(() => fn(ctx, input))
      .then(
        (value) => this.settle({ ok: true, value }),
        (error) => this.settle({ ok: false, error }),
      );
    return this.done;
  }
}

/** The step API of a workflow context. */
class StepApi {
  #pass;

  constructor(pass) {
    this.#pass = pass;
  }

  /**
   * Run (or replay) one durable step.
   * @template T
   * @param {string} id stable step ID
   * @param {(step: StepContext) => T | Promise<T>} callback the forward callback
   * @param {{name?: string, retry?: {maxAttempts?: number, backoff?: string | number}, compensate?: (forward: unknown, step: StepContext) => unknown}} [options]
   * @returns {Promise<T>} the accepted result; rejects with the recorded RyusenError on a terminal failure
   */
  run(id, callback, options = {}) {
    const pass = this.#pass;
    return call(pass, id, () => {
      if (typeof callback !== 'function') throw invalidDeclaration('step.run needs a callback function');
      const { name = id, retry, compensate } = options ?? {};
      if (compensate !== undefined && compensate !== null && typeof compensate !== 'function') {
        throw invalidDeclaration('compensate is a function');
      }
      if (pass.mode === 'compensate' && pass.target?.step_id === id) {
        // Compensation declares nothing: the target's name and retry describe its forward work and
        // are not converted, so a bad one never loses the undo (§11.4, D-CONVERT-BEFORE-REPLAY).
        return [{ type: 'step', step_id: id }, { callback, compensate: compensate ?? undefined }];
      }
      if (typeof name !== 'string') throw invalidDeclaration('a step name is a string');
      const declaration = {
        type: 'step',
        step_id: id,
        name,
        retry: retryMetadata(retry),
        has_compensation: typeof compensate === 'function',
      };
      return [declaration, { callback, compensate: compensate ?? undefined }];
    });
  }
}

/** What a workflow function receives: durable steps, timers, waits, child invocations, emissions. */
export class WorkflowContext {
  #pass;

  constructor(pass) {
    this.#pass = pass;
    this.runId = pass.runId;
    this.functionId = pass.functionId;
    /** `ctx.step.run(id, callback, {name, retry, compensate})` */
    this.step = new StepApi(pass);
    Object.freeze(this);
  }

  #declare(id, build) {
    return call(this.#pass, id, () => [build(), undefined]);
  }

  /**
   * A durable timer for a relative delay (§6: `"1.5s"`, or a number of milliseconds).
   * @returns {Promise<null>} null when it wakes
   */
  sleep(id, duration) {
    return this.#declare(id, () => {
      return { type: 'timer', step_id: id, delay_ms: toMillis(duration).toString() };
    });
  }

  /**
   * A durable timer until an absolute instant (an Instant or a Date), never converted by §6.
   * @returns {Promise<null>}
   */
  sleepUntil(id, instant) {
    return this.#declare(id, () => {
      let deadline;
      if (instant instanceof Instant) deadline = instant.toString();
      else if (instant instanceof Date && Number.isFinite(instant.getTime())) deadline = String(instant.getTime());
      else throw sdkError('sdk.conversion', 'sleepUntil takes an Instant or a valid Date');
      return { type: 'timer', step_id: id, deadline_ms: deadline };
    });
  }

  /**
   * A durable external event wait. Resolves with the matched payload bytes; rejects with
   * `sdk.timeout` when the timeout elapsed.
   * @param {string} id
   * @param {string} event exact event name
   * @param {{correlation?: Record<string, string>, timeout: string | number}} options
   * @returns {Promise<Uint8Array>}
   */
  waitForEvent(id, event, options = {}) {
    return this.#declare(id, () => {
      if (typeof event !== 'string') throw invalidDeclaration('an event name is a string');
      const { correlation, timeout } = options ?? {};
      if (timeout === undefined || timeout === null) throw invalidDeclaration('waitForEvent needs a timeout');
      return {
        type: 'wait',
        step_id: id,
        event,
        correlation: stringMap(correlation, 'correlation'),
        timeout_ms: toMillis(timeout).toString(),
      };
    });
  }

  /**
   * A durable child invocation of a function of the same application.
   * @param {string} id
   * @param {string} functionId
   * @param {unknown} input the child's input value
   * @param {{timeout?: string | number}} [options]
   * @returns {Promise<unknown>} the child's return value
   */
  invoke(id, functionId, input, options = {}) {
    return this.#declare(id, () => {
      if (typeof functionId !== 'string') throw invalidDeclaration('a function ID is a string');
      const declaration = { type: 'invoke', step_id: id, function_id: functionId, input: toTagged(input) };
      const timeout = options?.timeout;
      if (timeout !== undefined && timeout !== null) declaration.timeout_ms = toMillis(timeout).toString();
      return declaration;
    });
  }

  /**
   * A durable event emission. The payload is bytes (a Uint8Array, sent unchanged) or a
   * `JsonDocument` (serialized as given, §10.1); anything else is refused, as is a retry of more
   * than one attempt.
   * @param {string} id
   * @param {string} event
   * @param {Uint8Array | JsonDocument} payload bytes (sent unchanged) or a JSON document (serialized as given)
   * @param {{metadata?: Record<string, string>, retry?: {maxAttempts?: number}}} [options]
   * @returns {Promise<string>} the acceptance receipt (the event's identity)
   */
  emit(id, event, payload, options = {}) {
    return this.#declare(id, () => {
      if (typeof event !== 'string') throw invalidDeclaration('an event name is a string');
      const { metadata, retry } = options ?? {};
      if (retry !== undefined && retry !== null) {
        const attempts = typeof retry === 'number' ? retry : retry.maxAttempts ?? 1;
        if (attempts !== 1) throw invalidDeclaration('an emission is accepted once: it cannot ask for more than one attempt');
      }
      let bytes;
      if (payload instanceof JsonDocument) bytes = asGivenBytes(payload.document);
      else if (payload instanceof Uint8Array) bytes = payload;
      else throw invalidDeclaration('an emission payload is bytes (a Uint8Array) or a JsonDocument; anything else is refused, not reinterpreted');
      return {
        type: 'emit',
        step_id: id,
        event,
        payload: toTagged(bytes),
        metadata: stringMap(metadata, 'metadata'),
      };
    });
  }
}
