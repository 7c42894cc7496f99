// The Ryusen conformance host (protocol §12) for the JavaScript SDK.
//
// It registers the conformance registry (§13) and serves framed envelopes on stdin/stdout, one
// frame at a time. Logs go to stderr only. Importing this module (tests) does not start serving.

import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import {
  Registry,
  Worker,
  Session,
  RyusenError,
  RegistrationRefused,
  FramingError,
  errorToRecord,
  toMillis,
  json,
  JsonDocument,
  I64,
  U64,
  Instant,
  DEFAULT_SDK,
  isSuspensionSignal,
} from './src/index.js';

function log(message) {
  process.stderr.write(`[ryusen-node host] ${message}\n`);
}

// ---------------------------------------------------------------------------------------------
// §12.4 the effect trace: what the workflow did, recorded by the host for `conform.trace`

export class Trace {
  constructor() {
    /** @type {object[]} */
    this.events = [];
  }

  /** A callback (`forward`) or compensator (`compensation`) began, with what the SDK gave it. */
  started(s, phase) {
    this.events.push({ event: 'started', step_id: s.stepId, phase, operation_id: s.operationId, attempt: s.attempt });
  }

  /** Program code (`catch` or `catch_all`) caught `thrown`: the SDK's suspension or an error. */
  caught(by, thrown) {
    if (isSuspensionSignal(thrown)) this.events.push({ event: 'caught', by, what: 'suspension' });
    else this.events.push({ event: 'caught', by, what: 'error', category: errorToRecord(thrown).category });
  }

  /** The events so far; the trace starts empty again. */
  drain() {
    const events = this.events;
    this.events = [];
    return events;
  }
}

/** `callback(s)` that records its start first; `compensate(forward, s)` likewise. */
const tracedCallback = (trace, body) => (s) => {
  trace.started(s, 'forward');
  return body(s);
};
const tracedCompensator = (trace, body) => (forward, s) => {
  trace.started(s, 'compensation');
  return body(forward, s);
};

// ---------------------------------------------------------------------------------------------
// §13.3 conform.saga, written with the idiomatic API

const sagaWith = (trace) => async (ctx, input) => {
  const order = input?.order;
  if (typeof order !== 'string') throw new TypeError('conform.saga takes {"order": string}');
  const reservation = await ctx.step.run('reserve', tracedCallback(trace, () => `reserved:${order}`), {
    name: 'Reserve stock',
    retry: { maxAttempts: 3, backoff: 1000 },
    compensate: tracedCompensator(trace, (forward) => `released:${forward}`),
  });
  const charge = await ctx.step.run('charge', tracedCallback(trace, () => ({ charged: order })), {
    name: 'Charge card',
    retry: { maxAttempts: 5, backoff: 1000 },
    compensate: tracedCompensator(trace, (forward) => ({ refunded: forward.charged })),
  });
  await ctx.step.run('notify', tracedCallback(trace, () => null), {
    name: 'Notify customer',
    retry: { maxAttempts: 3, backoff: 1000 },
  });
  return { reservation, charge };
};

// ---------------------------------------------------------------------------------------------
// §13.1 conform.echo and §13.4 conform.unportable

async function echo(ctx, input) {
  return input;
}

class PlainApplicationClass {
  constructor() {
    this.field = 1;
  }
}

async function unportable(ctx, input) {
  return unportableValue(input);
}

/** The value §13.4 names: conform.unportable's return value and run.unportable's result. */
function unportableValue(input) {
  switch (input) {
    case 'nan':
      return NaN;
    case 'infinity':
      return Infinity;
    case 'non_string_keys':
      return new Map([[1, 'one']]);
    case 'object':
      return new PlainApplicationClass();
    case 'closure':
      return () => input;
    default:
      return input;
  }
}

// ---------------------------------------------------------------------------------------------
// §13.2 conform.program, the data-driven interpreter

/** A malformed or unknown op: the function fails with `conform.bad_program` (never caught by `catch`). */
class BadProgram extends RyusenError {
  constructor(message) {
    super('conform.bad_program', message, { retryable: false });
  }
}

const isObject = (v) => v !== null && typeof v === 'object' && !Array.isArray(v) && Object.getPrototypeOf(v) === Object.prototype;

function member(op, name, check, { optional = false } = {}) {
  if (!Object.hasOwn(op, name)) {
    if (optional) return undefined;
    throw new BadProgram(`op ${JSON.stringify(op.op)} needs member ${name}`);
  }
  const value = op[name];
  if (check !== undefined && !check(value)) throw new BadProgram(`op ${JSON.stringify(op.op)}: member ${name} has the wrong type`);
  return value;
}

const isString = (v) => typeof v === 'string';
const isBool = (v) => typeof v === 'boolean';
const isInteger = (v) => v instanceof I64;
const isStringOrInteger = (v) => typeof v === 'string' || v instanceof I64;
const isArray = (v) => Array.isArray(v);
const isAny = () => true;

function smallInteger(value) {
  return value === undefined ? undefined : Number(value.big);
}

/**
 * An emit op's payload (§13.2): `payload`, a protocol value passed as is, or `json`, JSON text
 * parsed into a native document and passed as a JsonDocument; exactly one of them.
 */
function emitPayload(op) {
  if (Object.hasOwn(op, 'payload') === Object.hasOwn(op, 'json')) throw new BadProgram('emit takes exactly one of payload and json');
  if (Object.hasOwn(op, 'payload')) return op.payload;
  const text = member(op, 'json', isString);
  try {
    return new JsonDocument(JSON.parse(text));
  } catch (error) {
    throw new BadProgram(`emit json is not JSON text: ${error.message}`);
  }
}

/** A program duration: a string is human-readable, an integer the typed form in milliseconds. */
function programDuration(value) {
  return typeof value === 'string' ? value : value.big;
}

/**
 * An error record written as a plain object (§13.2) → a RyusenError built with the SDK's public
 * constructor. Only the shape is checked here: the SDK itself refuses a category outside the
 * grammar or a non-string detail (`sdk.conversion`, §5.1), so call this where the error is raised.
 */
function errorFromValue(value) {
  if (!isObject(value)) throw new BadProgram('an error record is an object');
  const cause = Object.hasOwn(value, 'cause') ? errorFromValue(value.cause) : undefined;
  return new RyusenError(value.category, Object.hasOwn(value, 'message') ? value.message : '', {
    retryable: Object.hasOwn(value, 'retryable') ? value.retryable : false,
    details: Object.hasOwn(value, 'details') ? value.details : {},
    cause,
  });
}

/** An error record as a value (§13.2): `{category, message, retryable, details}` plus `cause`. */
function recordToValue(record) {
  const value = {
    category: record.category,
    message: record.message,
    retryable: record.retryable,
    details: { ...record.details },
  };
  if (record.cause !== undefined) value.cause = recordToValue(record.cause);
  return value;
}

function setVariable(vars, name, value) {
  if (name !== undefined) vars.set(name, value);
}

class Program {
  constructor(ctx, ambient, trace) {
    this.ctx = ctx;
    this.ambient = ambient;
    this.trace = trace;
    /** @type {Map<string, unknown>} */
    this.vars = new Map();
    /** What `repeat` appends to step IDs (§13.2). */
    this.suffix = '';
    /** Each `run` op object reached, prepared (see `step`). */
    this.runs = new Map();
  }

  /** An op's step ID, with the suffix of the repeats it runs in. */
  stepId(op) {
    return member(op, 'id', isString) + this.suffix;
  }

  /** Run `ops` `times` times, iteration k declaring every step ID with `.k` appended. */
  async repeat(times, ops) {
    const outer = this.suffix;
    try {
      for (let k = 0; k < times; k++) {
        this.suffix = `${outer}.${k}`;
        const returned = await this.run(ops);
        if (returned !== undefined) return returned;
      }
    } finally {
      this.suffix = outer;
    }
    return undefined;
  }

  /** Run ops in order; resolves `{value}` when a `return` ran, undefined when the ops ran out. */
  async run(ops) {
    if (!Array.isArray(ops)) throw new BadProgram('ops is an array');
    for (const op of ops) {
      if (!isObject(op) || typeof op.op !== 'string') throw new BadProgram('an op is an object with a string "op"');
      const returned = await this.step(op);
      if (returned !== undefined) return returned;
    }
    return undefined;
  }

  /** Run one op that yields a result, honouring `catch` and `as`. */
  async guarded(op, action) {
    const as = member(op, 'as', isString, { optional: true });
    const catching = member(op, 'catch', isBool, { optional: true }) === true;
    let result;
    try {
      result = await action();
    } catch (error) {
      if (!catching || error instanceof BadProgram) throw error;
      this.trace.caught('catch', error);
      setVariable(this.vars, as, { caught: recordToValue(errorToRecord(error)) });
      return;
    }
    setVariable(this.vars, as, result);
  }

  /** A `run` op's step ID (without the repeat suffix), callback and options. */
  prepareRun(op) {
    const id = member(op, 'id', isString);
    const name = member(op, 'name', isString, { optional: true });
    const attempts = smallInteger(member(op, 'attempts', isInteger, { optional: true }));
    const hasResult = Object.hasOwn(op, 'result');
    const result = hasResult ? op.result : null;
    const fail = member(op, 'fail', isObject, { optional: true });
    // Built inside the callback, so the SDK's refusal of a bad record is the callback's failure.
    const failure = fail === undefined ? undefined : () => errorFromValue(fail);
    // `throw`: a plain Error, not an SDK record; the callback returns a rejected promise (§13.2).
    const throwMessage = member(op, 'throw', isString, { optional: true });
    const echoIdentity = member(op, 'echo', isBool, { optional: true }) === true;
    const unportableName = member(op, 'unportable', isString, { optional: true });
    const compensateSpec = member(op, 'compensate', (v) => typeof v === 'boolean' || isObject(v), { optional: true });
    let compensate;
    const names = isObject(compensateSpec) ? ['fail', 'throw'].filter((name) => Object.hasOwn(compensateSpec, name)) : [];
    if (names.length === 2) throw new BadProgram('compensate takes fail or throw, not both (§13.5)');
    if (compensateSpec === true || (isObject(compensateSpec) && names.length === 0)) {
      // `{}`: neither fail nor throw is a returning compensator, as `true` (§13.5)
      compensate = tracedCompensator(this.trace, (forward, s) => ({
        phase: 'compensation',
        run_id: s.runId,
        step_id: s.stepId,
        operation_id: s.operationId,
        attempt: new I64(s.attempt),
        forward_result: forward,
      }));
    } else if (isObject(compensateSpec) && Object.hasOwn(compensateSpec, 'throw')) {
      const compensationMessage = member(compensateSpec, 'throw', isString);
      compensate = tracedCompensator(this.trace, () => Promise.reject(new Error(compensationMessage)));
    } else if (isObject(compensateSpec)) {
      const compensationFailure = member(compensateSpec, 'fail', isObject);
      compensate = tracedCompensator(this.trace, () => {
        throw errorFromValue(compensationFailure);
      });
    }
    const callback = tracedCallback(this.trace, (s) => {
      if (failure !== undefined) throw failure();
      if (throwMessage !== undefined) return Promise.reject(new Error(throwMessage));
      if (echoIdentity) {
        return { phase: 'forward', run_id: s.runId, step_id: s.stepId, operation_id: s.operationId, attempt: new I64(s.attempt) };
      }
      if (unportableName !== undefined) return unportableValue(unportableName);
      return result;
    });
    const options = { compensate };
    if (name !== undefined) options.name = name;
    if (attempts !== undefined) options.retry = { maxAttempts: attempts, backoff: 1000 };
    return { id, callback, options };
  }

  async step(op) {
    const ctx = this.ctx;
    switch (op.op) {
      case 'run': {
        // `repeat` reaches one op object many times: its members are read and checked once.
        let prepared = this.runs.get(op);
        if (prepared === undefined) {
          prepared = this.prepareRun(op);
          this.runs.set(op, prepared);
        }
        const { id, callback, options } = prepared;
        return this.guarded(op, () => ctx.step.run(id + this.suffix, callback, options));
      }
      case 'sleep': {
        const id = this.stepId(op);
        const duration = programDuration(member(op, 'duration', isStringOrInteger));
        return this.guarded(op, () => ctx.sleep(id, duration));
      }
      case 'sleep_until': {
        const id = this.stepId(op);
        const deadline = member(op, 'deadline', (v) => v instanceof Instant);
        return this.guarded(op, () => ctx.sleepUntil(id, deadline));
      }
      case 'wait': {
        const id = this.stepId(op);
        const event = member(op, 'event', isString);
        const correlation = member(op, 'correlation', isAny, { optional: true }) ?? {}; // the SDK checks it
        const timeout = programDuration(member(op, 'timeout', isStringOrInteger));
        return this.guarded(op, () => ctx.waitForEvent(id, event, { correlation, timeout }));
      }
      case 'invoke': {
        const id = this.stepId(op);
        const functionId = member(op, 'function', isString);
        const input = member(op, 'input', isAny);
        const timeout = member(op, 'timeout', isStringOrInteger, { optional: true });
        const options = timeout === undefined ? {} : { timeout: programDuration(timeout) };
        return this.guarded(op, () => ctx.invoke(id, functionId, input, options));
      }
      case 'emit': {
        const id = this.stepId(op);
        const event = member(op, 'event', isString);
        const payload = emitPayload(op);
        const metadata = member(op, 'metadata', isAny, { optional: true }); // the SDK checks it
        const attempts = smallInteger(member(op, 'attempts', isInteger, { optional: true }));
        const options = {};
        if (metadata !== undefined) options.metadata = metadata;
        if (attempts !== undefined) options.retry = { maxAttempts: attempts };
        return this.guarded(op, () => ctx.emit(id, event, payload, options));
      }
      case 'duration': {
        const value = programDuration(member(op, 'value', isStringOrInteger));
        return this.guarded(op, async () => new U64(toMillis(value)));
      }
      case 'json_bytes': {
        const text = member(op, 'text', isString);
        return this.guarded(op, async () => json.toBytes(json.fromBytes(new TextEncoder().encode(text))));
      }
      case 'raise':
        throw errorFromValue(member(op, 'error', isObject));
      case 'throw': {
        // The language's own failure: the async op's promise rejects with a plain Error (§13.2).
        const message = member(op, 'message', isString);
        return this.guarded(op, async () => {
          throw new Error(message);
        });
      }
      case 'return': {
        if (Object.hasOwn(op, 'value')) return { value: op.value };
        const name = member(op, 'var', isString);
        if (!this.vars.has(name)) throw new BadProgram(`variable ${JSON.stringify(name)} is not assigned`);
        return { value: this.vars.get(name) };
      }
      case 'if_ambient': {
        const key = member(op, 'key', isString);
        const equals = member(op, 'equals', isString);
        const then = member(op, 'then', isArray);
        const otherwise = member(op, 'else', isArray, { optional: true }) ?? [];
        return this.run(this.ambient.get(key) === equals ? then : otherwise);
      }
      case 'repeat':
        return this.repeat(smallInteger(member(op, 'times', isInteger)), member(op, 'ops', isArray));
      case 'catch_all': {
        const ops = member(op, 'ops', isArray);
        try {
          return await this.run(ops);
        } catch (thrown) {
          // Deliberately catches anything (a misbehaving workflow). The SDK's suspension is never
          // thrown into the workflow, so the pass still answers its first boundary.
          this.trace.caught('catch_all', thrown);
          return undefined;
        }
      }
      default:
        throw new BadProgram(`unknown op ${JSON.stringify(op.op)}`);
    }
  }

  variables() {
    const out = {};
    for (const [name, value] of this.vars) {
      Object.defineProperty(out, name, { value, enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
}

// ---------------------------------------------------------------------------------------------
// The conformance registry (§13), in author order

/**
 * The conformance registry, declared in §13's author order (the SDK sorts it).
 * @param {Map<string, string>} ambient the host's ambient state, read by `if_ambient`
 * @param {Trace} trace where every callback and compensator start and every catch is recorded
 */
export function conformanceRegistry(ambient = new Map(), trace = new Trace()) {
  const program = async (ctx, input) => {
    if (!isObject(input) || !Array.isArray(input.ops)) throw new BadProgram('the input is {"ops": [op, ...]}');
    const interpreter = new Program(ctx, ambient, trace);
    const returned = await interpreter.run(input.ops);
    return returned !== undefined ? returned.value : interpreter.variables();
  };
  return new Registry()
    .function('conform.saga', sagaWith(trace), { timeout: '1h' })
    .function('conform.program', program)
    .function('conform.echo', echo)
    .function('conform.unportable', unportable)
    .trigger('conform.saga.order-retried', 'order.retried', 'conform.saga')
    .trigger('conform.saga.order-created', 'order.created', 'conform.saga')
    .trigger('conform.echo.requested', 'conform.echo.requested', 'conform.echo');
}

/** A registry built from a registry spec (§12.3) with the public API; bodies never run. */
export function registryFromSpec(spec) {
  const registry = new Registry();
  const body = async () => null;
  for (const f of spec.functions) registry.function(f.id, body, f.timeout === undefined ? {} : { timeout: f.timeout });
  for (const t of spec.triggers) registry.trigger(t.id, t.event, t.function);
  return registry;
}

// ---------------------------------------------------------------------------------------------
// The serving loop (§12.1)

/**
 * Serve framed envelopes from `input` to `output` until `conform.shutdown` or the end of input,
 * one frame at a time. Resolves with the exit status. `session` may be any object with the
 * Session interface (the HTTP host passes one whose frames are requests, `http.js`).
 * @param {import('node:stream').Readable} input
 * @param {import('node:stream').Writable} output
 * @param {Session} [session]
 * @returns {Promise<number>}
 */
export async function serve(input, output, session = new Session(input, output)) {
  const ambient = new Map();
  let admissionOpen = true;
  const trace = new Trace();
  const worker = new Worker(conformanceRegistry(ambient, trace), { sdk: DEFAULT_SDK });

  const finish = async (code) => {
    await session.writer.flush();
    return code;
  };

  /** Handle one decoded frame; resolves with an exit status when the host must stop. */
  const handle = async (envelope) => {
    const { kind, id, body } = envelope;
    switch (kind) {
      case 'conform.reset':
        ambient.clear();
        admissionOpen = true;
        trace.drain();
        return session.send('conform.ack', id, {});
      case 'conform.trace':
        return session.send('conform.trace', id, { events: trace.drain() });
      case 'conform.set_ambient':
        ambient.set(body.key, body.value);
        return session.send('conform.ack', id, {});
      case 'conform.set_admission':
        admissionOpen = body.open;
        return session.send('conform.ack', id, {});
      case 'conform.register': {
        let outcome;
        try {
          const registration = await session.register(
            worker,
            { scope: body.scope, releaseId: body.release_id, instanceId: body.instance_id },
            id,
          );
          if (registration === null) return undefined; // the bench moved on
          outcome = { status: 'registered', version: registration.version, capabilities: registration.capabilities };
        } catch (error) {
          if (error instanceof RegistrationRefused) outcome = { status: 'refused', code: error.code };
          else if (error instanceof RyusenError) outcome = { status: 'failed', error: error.toRecord() };
          else throw error;
        }
        return session.send('conform.registration_outcome', id, outcome);
      }
      case 'conform.publish': {
        const registry = body.registry === undefined ? worker.registry : registryFromSpec(body.registry);
        try {
          registry.manifest();
        } catch (error) {
          if (!(error instanceof RyusenError)) throw error;
          return session.send('conform.publication_outcome', id, { status: 'invalid', error: error.toRecord() });
        }
        let result;
        try {
          result = await session.publish(worker, { scope: body.scope, expectedParent: body.expected_parent }, id, registry);
        } catch (error) {
          if (!(error instanceof RyusenError)) throw error;
          return session.send('conform.publication_outcome', id, { status: 'failed', error: error.toRecord() });
        }
        if (result === null) return undefined; // the bench moved on
        const outcome =
          result.status === 'activated'
            ? { status: 'activated', application_generation: result.applicationGeneration, workspace_generation: result.workspaceGeneration }
            : result.status === 'conflict'
              ? { status: 'conflict', active_generation: result.activeGeneration }
              : { status: 'rejected', code: result.code };
        return session.send('conform.publication_outcome', id, outcome);
      }
      case 'invoke': {
        const answer = await worker.execute(envelope, { admissionOpen });
        return session.send(answer.kind, id, answer.body);
      }
      case 'conform.shutdown':
        return 0;
      case 'protocol_error':
        log(`the bench reported a protocol error: ${JSON.stringify(body.error)}`);
        return undefined;
      default: {
        const error = new RyusenError('protocol.malformed', `${kind} out of turn`, { details: { pointer: '/kind' } });
        return session.send('protocol_error', id, { error: error.toRecord() });
      }
    }
  };

  log(`ready (${DEFAULT_SDK.runtime})`);
  for (;;) {
    let received;
    try {
      received = await session.receive();
    } catch (error) {
      if (error instanceof FramingError) {
        log(`broken stream: ${error.message}`);
        return finish(1);
      }
      throw error;
    }
    if (received === null) return finish(0);
    if (received.fault) {
      await session.sendFault(received.fault);
      continue;
    }
    const status = await handle(received.envelope);
    if (typeof status === 'number') return finish(status);
  }
}

/** True when this module is the program Node started (not imported by a test). */
function isMain() {
  if (!process.argv[1]) return false;
  try {
    return import.meta.url === pathToFileURL(realpathSync(process.argv[1])).href;
  } catch {
    return false;
  }
}

/** Serve stdin/stdout as this process's whole job: log stray rejections, exit with the status. */
export function serveProcess() {
  process.on('unhandledRejection', (reason) => log(`unhandled rejection: ${reason?.stack ?? reason}`));
  process.stdout.on('error', (error) => {
    log(`stdout: ${error.message}`);
    process.exit(1);
  });
  serve(process.stdin, process.stdout).then(
    (code) => process.exit(code),
    (error) => {
      log(`fatal: ${error?.stack ?? error}`);
      process.exit(1);
    },
  );
}

if (isMain()) {
  if (process.argv.includes('--http') || process.env.RYUSEN_CONFORM_TRANSPORT === 'http') {
    import('./http.js').then(({ serveHttp }) => serveHttp(serve, log));
  } else {
    serveProcess();
  }
}
