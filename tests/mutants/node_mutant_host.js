#!/usr/bin/env node
// A conformance host running the Node reference SDK with ONE mutant fault:
// `node tests/mutants/node_mutant_host.js NAME`.
//
// Why: the bench must catch broken SDKs in every language it ships a reference for. Each mutant is
// runners/node/host.js with one patch below applied in memory (the SDK's files are never modified).
// ES module exports cannot be rebound, so every patch wraps a prototype method of a class the SDK
// exports (`Pass`, `DecisionMachine`, `WorkflowContext`) or reaches through one. `none` runs the
// unpatched reference through this same wrapper: the Node baseline of the kill matrix.
// The catalog (names and faults) is node_mutants.json, read by the Python kill matrix too.

import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Pass, WorkflowContext, isSuspended } from '../../runners/node/src/context.js';
import { DecisionMachine } from '../../runners/node/src/machine.js';
import { Instant } from '../../runners/node/src/values.js';
import { JsonDocument } from '../../runners/node/src/json.js';
import { sdkError } from '../../runners/node/src/errors.js';
import { createHmac } from 'node:crypto';
import { Trace, serve, serveProcess } from '../../runners/node/host.js';
import { Session } from '../../runners/node/src/worker.js';
import { FrameReader } from '../../runners/node/src/framing.js';
import { Guard, HttpSession, hooks as httpHooks, refusal as httpRefusal, serveHttp } from '../../runners/node/http.js';

const SELF = fileURLToPath(import.meta.url);
const CATALOG = JSON.parse(readFileSync(new URL('./node_mutants.json', import.meta.url), 'utf8'));
const USAGE = 'usage: node_mutant_host.js NAME | none | --check [NAME...] | --help';

/** Replace `proto[method]` with `make(original)`; throws when the SDK no longer has the method. */
function wrap(proto, method, make) {
  const original = proto[method];
  if (typeof original !== 'function') throw new Error(`the mutant patch found no method ${method}`);
  proto[method] = make(original);
}

/** Run a callback for its effect alone: its result and any failure are thrown away. */
function quietly(run) {
  try {
    const result = run();
    if (result !== null && typeof result?.then === 'function') result.then(undefined, () => {});
  } catch {
    // the fault under test discards everything
  }
}

/** A step context as the SDK builds it, for a step the SDK would never run. */
function contextFor(pass, stepId, operationId, attempt, phase) {
  return Object.freeze({ runId: pass.runId, functionId: pass.functionId, stepId, operationId, attempt, phase });
}

const isTarget = (pass, stepId) => pass.mode !== 'discover' && stepId === pass.target.step_id;

/** The SDK's suspension signal held by a suspended promise (found by its symbol's name). */
function signalOf(promise) {
  const symbol = Object.getOwnPropertySymbols(promise).find((s) => s.description === 'ryusen.suspended');
  if (symbol === undefined) throw new Error('a suspended promise holds no ryusen.suspended signal');
  return promise[symbol];
}

/** Wrap `Pass.prototype.decide(declaration, step, decision)` with `body(original, ...)`. */
function wrapDecide(body) {
  wrap(Pass.prototype, 'decide', (original) =>
    function decide(declaration, step, decision) {
      return body.call(this, original, declaration, step, decision);
    },
  );
}

/** Answer the envelopes `matches` picks with a bare `status` instead (D-HTTP-STATUS). */
function bareStatus(status, headers, matches) {
  const original = httpHooks.responseFor;
  httpHooks.responseFor = (written, log) => {
    if (written.length > 0 && matches(JSON.parse(written[0].toString('utf8')))) {
      return { status, data: Buffer.alloc(0), headers: { ...headers } };
    }
    return original(written, log);
  };
}

const categoryOf = (envelope) => (envelope.kind === 'protocol_error' ? envelope.body?.error?.category : undefined);

/** Request authentication with one of its checks left out (D-HTTP-AUTH). */
function guardWithout(check) {
  wrap(Guard.prototype, 'refusal', () =>
    function refusal(headers, body) {
      const timestamp = headers['ryusen-timestamp'];
      const nonce = headers['ryusen-nonce'];
      const signature = headers['ryusen-signature'];
      if (!timestamp || !nonce || !signature || !/^[0-9]+$/.test(timestamp)) return 'unsigned request';
      const mac = createHmac('sha256', this.secret);
      mac.update(`${timestamp}.${nonce}.`, 'ascii');
      mac.update(check === 'body' ? Buffer.from(body.toString('latin1').trim(), 'latin1') : body);
      if (signature !== `v1=${mac.digest('hex')}`) return 'bad signature';
      const age = Date.now() / 1000 - Number(timestamp);
      if (check !== 'timestamp' && (age > 300 || (check !== 'future' && age < -300))) return 'stale timestamp';
      if (check !== 'nonce') {
        if (this.seen.has(nonce)) return 'replayed request';
        this.seen.set(nonce, Date.now() / 1000);
      }
      return null;
    },
  );
}

/** The `kind` of a request body, peeked at without the SDK's decoder (undefined if not JSON). */
function kindOf(body) {
  try {
    return JSON.parse(body.toString('utf8'))?.kind;
  } catch {
    return undefined;
  }
}

/** Authentication applied only to the requests whose kind `picks` (D-HTTP-AUTH says all). */
function authenticatedOnly(picks) {
  wrap(Guard.prototype, 'refusal', (original) =>
    function refusal(headers, body) {
      return picks(kindOf(body)) ? original.call(this, headers, body) : null;
    },
  );
}

const SERVER_ANSWERS = ['register_ack', 'register_refused', 'manifest_activated', 'manifest_conflict', 'manifest_rejected'];

/** The (unexported) class of `ctx.step`, reached through a context built on a stand-in pass. */
const StepApi = Object.getPrototypeOf(new WorkflowContext({ runId: '', functionId: '' }).step).constructor;

/** A JSON document with every object's members sorted by key (RFC 8785's order), deeply. */
function sortedDocument(value) {
  if (Array.isArray(value)) return value.map(sortedDocument);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.keys(value).sort().map((key) => [key, sortedDocument(value[key])]));
  }
  return value;
}

/** The units of §6.1 as exact fractions of a millisecond: [numerator, denominator]. */
const UNIT_MS = { ns: [1n, 1_000_000n], us: [1n, 1000n], 'µs': [1n, 1000n], 'μs': [1n, 1000n], ms: [1n, 1n], s: [1000n, 1n], m: [60_000n, 1n], h: [3_600_000n, 1n] };
const COMPONENT = /([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h)/gu;

/** `text` with each component rounded up to whole milliseconds on its own, as `"<sum>ms"`; a
 * text that is not a positive multi-part duration of the grammar is returned unchanged. */
function roundedPerComponent(text) {
  if (typeof text !== 'string' || !/^\+?(?:([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$/u.test(text)) return text;
  let sum = 0n;
  for (const [, number, unit] of text.matchAll(COMPONENT)) {
    const [whole, fraction = ''] = number.split('.');
    const numerator = BigInt((whole || '0') + fraction) * UNIT_MS[unit][0];
    const denominator = 10n ** BigInt(fraction.length) * UNIT_MS[unit][1];
    sum += (numerator + denominator - 1n) / denominator; // this component's ceiling
  }
  return `${sum}ms`;
}

/** Pass every author-facing duration of sleep, waitForEvent and invoke through `convert`
 * (which returns the duration to use, or throws a refusal). */
function wrapDurations(convert) {
  wrap(WorkflowContext.prototype, 'sleep', (original) =>
    function sleep(id, duration) {
      try {
        return original.call(this, id, convert(duration));
      } catch (error) {
        return Promise.reject(error);
      }
    },
  );
  for (const method of ['waitForEvent', 'invoke']) {
    wrap(WorkflowContext.prototype, method, (original) =>
      function withTimeout(...args) {
        const options = args[args.length - 1];
        if (options === null || typeof options !== 'object' || options.timeout === undefined) return original.apply(this, args);
        try {
          return original.apply(this, [...args.slice(0, -1), { ...options, timeout: convert(options.timeout) }]);
        } catch (error) {
          return Promise.reject(error);
        }
      },
    );
  }
}

/** Drop the pairs of a string map whose value is the empty string. */
const withoutEmptyValues = (map) =>
  map !== null && typeof map === 'object' && !Array.isArray(map) ? Object.fromEntries(Object.entries(map).filter(([, v]) => v !== '')) : map;

const PATCHES = {
  'node:replay-reruns-discarded'() {
    wrapDecide(function (original, declaration, step, decision) {
      const stepId = declaration.step_id;
      const replayed = decision.kind === 'replay' || decision.kind === 'replay_failed';
      if (replayed && typeof step?.callback === 'function' && !isTarget(this, stepId)) {
        const operation = this.target?.operation_id ?? `replay-${stepId}`;
        quietly(() => step.callback(contextFor(this, stepId, operation, 1, 'forward'))); // charged twice
      }
      return original.call(this, declaration, step, decision);
    });
  },

  'node:suspension-catchable'() {
    // The reference abandons a stopped workflow at a promise that never settles; here that
    // promise rejects with the signal itself, so workflow code can catch it. The answer is kept.
    const probe = new Pass({ mode: 'discover', runId: 'r', functionId: 'f', history: new Map() });
    signalOf(probe.decide({ type: 'step', step_id: 'probe' }, undefined, { kind: 'unresolved' }));
    const stepApi = Object.getPrototypeOf(new WorkflowContext(probe).step);
    const calls = [
      [stepApi, 'run'],
      ...['sleep', 'sleepUntil', 'waitForEvent', 'invoke', 'emit'].map((m) => [WorkflowContext.prototype, m]),
    ];
    for (const [proto, method] of calls) {
      wrap(proto, method, (original) =>
        function (...args) {
          const promise = original.apply(this, args);
          return isSuspended(promise) ? Promise.reject(signalOf(promise)) : promise;
        },
      );
    }
  },

  'node:discovery-runs-next-callback'() {
    const runsOn = Symbol('runs on');
    wrapDecide(function (original, declaration, step, decision) {
      if (this.mode !== 'discover') return original.call(this, declaration, step, decision);
      if (this[runsOn]) {
        this[runsOn] = false;
        this.stopped = true;
        const stepId = declaration.step_id;
        if (decision.kind === 'unresolved' && typeof step?.callback === 'function') {
          quietly(() => step.callback(contextFor(this, stepId, `next-${stepId}`, 1, 'forward')));
        }
        return original.call(this, declaration, step, { kind: 'unresolved' }); // suspended; answer kept
      }
      const result = original.call(this, declaration, step, decision);
      if (decision.kind !== 'unresolved' || this.answer?.kind !== 'declared') return result;
      this.stopped = false; // the pass goes on past its first boundary: one more call gets through
      this[runsOn] = true;
      return Promise.resolve(null);
    });
  },

  'node:compensates-replayed-steps'() {
    wrapDecide(function (original, declaration, step, decision) {
      const stepId = declaration.step_id;
      if (
        this.mode === 'compensate' &&
        !isTarget(this, stepId) &&
        decision.kind === 'replay' &&
        typeof step?.compensate === 'function'
      ) {
        const context = this.stepContext(stepId, 'compensation');
        quietly(() => step.compensate(decision.value, context));
      }
      return original.call(this, declaration, step, decision);
    });
  },

  'node:target-duplicate-unchecked'() {
    if (!(new DecisionMachine(new Map()).seen instanceof Map)) throw new Error('DecisionMachine has no seen map');
    wrap(Pass.prototype, 'claim', (original) =>
      function claim(stepId) {
        if (isTarget(this, stepId)) this.machine.seen.delete(stepId); // a repeat is not a duplicate
        return original.call(this, stepId);
      },
    );
  },

  'node:replay-reruns-callback'() {
    wrapDecide(function (original, declaration, step, decision) {
      const stepId = declaration.step_id;
      const result = original.call(this, declaration, step, decision);
      if (decision.kind !== 'replay' || typeof step?.callback !== 'function' || isTarget(this, stepId)) return result;
      const operation = this.target?.operation_id ?? 'replay';
      return Promise.resolve().then(() => step.callback(contextFor(this, stepId, operation, 1, 'forward')));
    });
  },

  'node:drop-replayed-failure'() {
    wrapDecide(function (original, declaration, step, decision) {
      if (decision.kind === 'replay_failed' && !isTarget(this, declaration.step_id)) return Promise.resolve(null);
      return original.call(this, declaration, step, decision);
    });
  },

  'node:no-duplicate-blocker'() {
    wrap(DecisionMachine.prototype, 'declare', (original) =>
      function declare(stepId, source) {
        this.seen.delete(stepId);
        return original.call(this, stepId, source);
      },
    );
  },

  'node:attempt-off-by-one'() {
    wrap(Pass.prototype, 'stepContext', (original) =>
      function stepContext(stepId, phase) {
        const context = original.call(this, stepId, phase);
        return Object.freeze({ ...context, attempt: context.attempt - 1 });
      },
    );
  },

  'node:compensate-without-forward'() {
    wrap(Pass.prototype, 'reachTarget', (original) =>
      function reachTarget(declaration, step, decision) {
        if (
          this.mode === 'compensate' &&
          declaration.type === 'step' &&
          decision.kind !== 'replay' &&
          typeof step?.compensate === 'function'
        ) {
          return original.call(this, declaration, step, { kind: 'replay', value: null });
        }
        return original.call(this, declaration, step, decision);
      },
    );
  },

  'node:forward-runs-other-callbacks'() {
    wrapDecide(function (original, declaration, step, decision) {
      const stepId = declaration.step_id;
      if (
        this.mode === 'forward' &&
        !isTarget(this, stepId) &&
        decision.kind === 'unresolved' &&
        typeof step?.callback === 'function'
      ) {
        const context = contextFor(this, stepId, this.target.operation_id, 1, 'forward');
        return Promise.resolve().then(() => step.callback(context));
      }
      return original.call(this, declaration, step, decision);
    });
  },
  'node:target-with-history-runs-twice'() {
    wrap(Pass.prototype, 'reachTarget', (original) =>
      function reachTarget(declaration, step, decision) {
        const completed = decision.kind === 'replay' && declaration.type === 'step';
        if (this.mode === 'forward' && completed && typeof step?.callback === 'function') {
          const context = this.stepContext(declaration.step_id, 'forward');
          quietly(() => step.callback(context)); // the first run's result is thrown away
        }
        return original.call(this, declaration, step, decision);
      },
    );
  },

  'node:compensator-result-by-position'() {
    wrap(Pass.prototype, 'claim', (original) =>
      function claim(stepId) {
        this.mutantCalls = (this.mutantCalls ?? 0) + 1;
        return original.call(this, stepId);
      },
    );
    wrap(Pass.prototype, 'reachTarget', (original) =>
      function reachTarget(declaration, step, decision) {
        const entries = [...this.history.values()];
        const position = (this.mutantCalls ?? 1) - 1; // the target's own call was just claimed
        if (this.mode === 'compensate' && decision.kind === 'replay' && position < entries.length) {
          const entry = entries[position];
          const found = entry.status === 'completed' ? { kind: 'replay', value: entry.value } : decision;
          return original.call(this, declaration, step, found);
        }
        return original.call(this, declaration, step, decision);
      },
    );
  },

  'node:child-zero-timeout-dropped'() {
    wrap(WorkflowContext.prototype, 'invoke', (original) =>
      function invoke(id, functionId, input, options = {}) {
        const timeout = options?.timeout;
        const dropped = timeout !== undefined && timeout !== null && !timeout; // 0 and 0n are falsy
        return original.call(this, id, functionId, input, dropped ? { ...options, timeout: undefined } : options);
      },
    );
  },

  'node:emit-json-canonicalized'() {
    wrap(WorkflowContext.prototype, 'emit', (original) =>
      function emit(id, event, payload, options = {}) {
        const sorted = payload instanceof JsonDocument ? new JsonDocument(sortedDocument(payload.document)) : payload;
        return original.call(this, id, event, sorted, options);
      },
    );
  },

  'node:empty-step-id-refused'() {
    wrap(StepApi.prototype, 'run', (original) =>
      function run(id, callback, options = {}) {
        if (id === '') return Promise.reject(sdkError('sdk.invalid_declaration', 'a step ID is a non-empty string'));
        return original.call(this, id, callback, options);
      },
    );
  },

  'node:empty-name-as-step-id'() {
    wrap(StepApi.prototype, 'run', (original) =>
      function run(id, callback, options = {}) {
        const unnamed = options?.name === '' ? { ...options, name: undefined } : options;
        return original.call(this, id, callback, unnamed);
      },
    );
  },

  'node:empty-message-class-name'() {
    wrap(Pass.prototype, 'finish', (original) =>
      function finish(kind, body) {
        const error = body?.error;
        if (error?.category === 'app.unhandled' && error.message === '') {
          return original.call(this, kind, { ...body, error: { ...error, message: 'Error' } });
        }
        return original.call(this, kind, body);
      },
    );
  },

  'node:correlation-values-coerced'() {
    wrap(WorkflowContext.prototype, 'waitForEvent', (original) =>
      function waitForEvent(id, event, options = {}) {
        const correlation = options?.correlation;
        if (correlation !== null && typeof correlation === 'object' && !Array.isArray(correlation)) {
          const coerced = Object.fromEntries(Object.entries(correlation).map(([k, v]) => [k, String(v)]));
          return original.call(this, id, event, { ...options, correlation: coerced });
        }
        return original.call(this, id, event, options);
      },
    );
  },

  'node:sleep-until-deadline-via-double'() {
    wrap(WorkflowContext.prototype, 'sleepUntil', (original) =>
      function sleepUntil(id, instant) {
        if (instant instanceof Instant) {
          const viaDouble = Object.create(instant); // still an Instant, its text through a Number
          viaDouble.toString = () => String(Number(instant.ms));
          return original.call(this, id, viaDouble);
        }
        return original.call(this, id, instant);
      },
    );
  },

  'node:http.bare-503-admission'() {
    bareStatus(503, { 'Retry-After': '1' }, (e) => e.kind === 'rejected_before_start' && e.body?.reason?.code === 'admission_refused');
  },
  'node:http.unknown-function-404'() {
    bareStatus(404, {}, (e) => categoryOf(e) === 'protocol.unknown_function');
  },
  'node:http.malformed-400'() {
    bareStatus(400, {}, (e) => categoryOf(e) === 'protocol.malformed' && e.id === '-');
  },
  'node:http.oversized-413'() {
    bareStatus(413, {}, (e) => categoryOf(e) === 'protocol.limit_exceeded');
  },
  'node:http.unauthenticated-401'() {
    bareStatus(401, {}, (e) => categoryOf(e) === 'protocol.unauthenticated');
  },
  'node:http.answer-in-header'() {
    const original = httpHooks.responseFor;
    httpHooks.responseFor = (written, log) => {
      const response = original(written, log);
      if (response.status !== 200) return response;
      const header = response.data.toString('base64');
      return { status: 200, data: Buffer.alloc(0), headers: { ...response.headers, 'Ryusen-Answer': header } };
    };
  },
  'node:http.auth-skipped'() {
    wrap(Guard.prototype, 'refusal', () => () => null);
  },
  'node:http.timestamp-unchecked'() {
    guardWithout('timestamp');
  },
  'node:http.future-accepted'() {
    guardWithout('future');
  },
  'node:http.body-trimmed'() {
    guardWithout('body');
  },
  'node:http.replay-accepted'() {
    guardWithout('nonce');
  },
  'node:http.no-length-411'() {
    bareStatus(411, {}, (e) => categoryOf(e) === 'protocol.malformed' && e.body?.error?.message === 'no Content-Length');
  },
  'node:http.auth-only-invoke'() {
    authenticatedOnly((kind) => kind === 'invoke');
  },
  'node:http.auth-skips-server-answers'() {
    authenticatedOnly((kind) => !SERVER_ANSWERS.includes(kind));
  },
  'node:http.auth-skips-reports'() {
    authenticatedOnly((kind) => kind !== 'protocol_error');
  },
  'node:http.auth-skips-control'() {
    authenticatedOnly((kind) => !String(kind ?? '').startsWith('conform.'));
  },
  'node:http.refused-request-spends-nonce'() {
    wrap(Guard.prototype, 'refusal', (original) =>
      function refusal(headers, body) {
        const nonce = headers['ryusen-nonce'];
        if (nonce && this.seen.has(nonce)) return 'replayed request';
        const why = original.call(this, headers, body);
        if (nonce) this.seen.set(nonce, Date.now() / 1000); // spent whatever the verdict
        return why;
      },
    );
  },
  'node:http.replay-keyed-by-signature'() {
    wrap(Guard.prototype, 'refusal', (original) =>
      function refusal(headers, body) {
        const signature = headers['ryusen-signature'] ?? '';
        if (this.seen.has(signature)) return 'replayed request';
        const why = original.call(this, headers, body);
        if (why === null) {
          const nonce = headers['ryusen-nonce'];
          this.seen.set(signature, this.seen.get(nonce)); // remembered by signature only
          this.seen.delete(nonce);
        }
        return why;
      },
    );
  },
  'node:http.content-type-before-auth'() {
    const original = httpHooks.requestRefusal;
    httpHooks.requestRefusal = (guard, headers, body, log) => {
      const contentType = (headers['content-type'] || '').split(';')[0].trim().toLowerCase();
      if (contentType !== 'application/json') return httpRefusal('protocol.malformed', 'not application/json');
      return original(guard, headers, body, log);
    };
  },
  'node:http.malformed-auth-header-is-malformed'() {
    const original = httpHooks.requestRefusal;
    httpHooks.requestRefusal = (guard, headers, body, log) => {
      const why = guard === null ? null : guard.refusal(headers, body);
      if (why !== null && why.startsWith('malformed')) return httpRefusal('protocol.malformed', why);
      if (why !== null) return httpRefusal('protocol.unauthenticated', why);
      return original(null, headers, body, log);
    };
  },
  'node:http.auth-before-length'() {
    const original = httpHooks.lengthRefusal;
    httpHooks.lengthRefusal = (headers) => {
      const signed = ['ryusen-timestamp', 'ryusen-nonce', 'ryusen-signature'].every((name) => headers[name]);
      if (process.env.RYUSEN_CONFORM_HTTP_SECRET && !signed) return httpRefusal('protocol.unauthenticated', 'unsigned request');
      return original(headers);
    };
  },
  'node:http.empty-200-for-no-answer'() {
    const original = httpHooks.responseFor;
    httpHooks.responseFor = (written, log) => {
      if (written.length === 0) return { status: 200, data: Buffer.alloc(0), headers: { 'Content-Type': 'application/json' } };
      return original(written, log);
    };
  },
  'node:http.answer-cache-by-operation'() {
    const cache = new Map();
    wrap(HttpSession.prototype, 'request', (original) =>
      async function request(body) {
        let envelope;
        try {
          envelope = JSON.parse(body.toString('utf8'));
        } catch {
          envelope = undefined;
        }
        const key = envelope?.kind === 'invoke' ? envelope.body?.target?.operation_id : undefined;
        if (typeof key === 'string' && cache.has(key)) {
          return [Buffer.from(JSON.stringify({ ...cache.get(key), id: envelope.id }))];
        }
        const written = await original.call(this, body);
        if (typeof key === 'string' && written.length === 1) cache.set(key, JSON.parse(written[0].toString('utf8')));
        return written;
      },
    );
  },
  'node:correlation-empty-values-dropped'() {
    wrap(WorkflowContext.prototype, 'waitForEvent', (original) =>
      function waitForEvent(id, event, options = {}) {
        if (options === null || typeof options !== 'object') return original.call(this, id, event, options);
        return original.call(this, id, event, { ...options, correlation: withoutEmptyValues(options.correlation) });
      },
    );
  },

  'node:metadata-empty-values-dropped'() {
    wrap(WorkflowContext.prototype, 'emit', (original) =>
      function emit(id, event, payload, options = {}) {
        if (options === null || typeof options !== 'object') return original.call(this, id, event, payload, options);
        return original.call(this, id, event, payload, { ...options, metadata: withoutEmptyValues(options.metadata) });
      },
    );
  },

  'node:duration-rounded-per-component'() {
    wrapDurations(roundedPerComponent);
  },

  'node:micro-greek-refused'() {
    wrapDurations((duration) => {
      if (typeof duration === 'string' && duration.includes('\u03bc')) throw sdkError('sdk.invalid_duration', `malformed duration ${JSON.stringify(duration)}`);
      return duration;
    });
  },

  'node:child-negative-timeout-refused'() {
    wrap(WorkflowContext.prototype, 'invoke', (original) =>
      function invoke(id, functionId, input, options = {}) {
        const timeout = options?.timeout;
        // a nonzero digit after a leading minus: a negative amount (the units hold no digits)
        const negative = typeof timeout === 'string' ? /^-.*[1-9]/u.test(timeout) : (typeof timeout === 'number' || typeof timeout === 'bigint') && timeout < 0;
        if (negative) return Promise.reject(sdkError('sdk.invalid_duration', 'a child timeout cannot be negative'));
        return original.call(this, id, functionId, input, options);
      },
    );
  },

  'node:emit-json-string-unquoted'() {
    wrap(WorkflowContext.prototype, 'emit', (original) =>
      function emit(id, event, payload, options = {}) {
        const bare = payload instanceof JsonDocument && typeof payload.document === 'string' ? new TextEncoder().encode(payload.document) : payload;
        return original.call(this, id, event, bare, options);
      },
    );
  },

  'node:reset-keeps-trace'() {
    // conform.reset drains the trace and answers conform.ack at once: the drained events go back
    let drained = null;
    wrap(Trace.prototype, 'drain', (original) =>
      function drain() {
        const events = original.call(this);
        drained = { trace: this, events };
        return events;
      },
    );
    for (const proto of [Session.prototype, HttpSession.prototype]) {
      wrap(proto, 'send', (original) =>
        function send(kind, id, body) {
          if (kind === 'conform.ack' && drained !== null) drained.trace.events.unshift(...drained.events);
          drained = null;
          return original.call(this, kind, id, body);
        },
      );
    }
  },
  'node:blocker-sources-swapped'() {
    wrap(DecisionMachine.prototype, 'declare', (original) =>
      function declare(stepId, source) {
        const decision = original.call(this, stepId, source);
        if (decision.kind === 'blocked') [decision.firstSource, decision.duplicateSource] = [decision.duplicateSource, decision.firstSource];
        return decision;
      },
    );
  },

  'node:blocker-sources-both-duplicate'() {
    wrap(DecisionMachine.prototype, 'declare', (original) =>
      function declare(stepId, source) {
        const decision = original.call(this, stepId, source);
        if (decision.kind === 'blocked') decision.firstSource = decision.duplicateSource;
        return decision;
      },
    );
  },
  'node:version-major-first-char'() {
    // The reference parses versions in ES module functions no patch can reach: the frame is
    // read as they would read it with the fault, a major taken from its first character ("10.0"
    // as "1.0"), in the envelope and in a register_ack's body.
    wrap(FrameReader.prototype, 'next', (original) =>
      async function next() {
        const payload = await original.call(this);
        if (payload === null) return payload;
        let document;
        try {
          document = JSON.parse(payload.toString('utf8'));
        } catch {
          return payload;
        }
        if (document === null || typeof document !== 'object') return payload;
        const misread = (version) => {
          const match = typeof version === 'string' ? /^([1-9])[0-9]+\.(0|[1-9][0-9]*)$/.exec(version) : null;
          return match === null ? version : `${match[1]}.${match[2]}`;
        };
        const body = document.body;
        // the envelope's version, and the version a register_ack names (§7.2)
        const ack = document.kind === 'register_ack' && body !== null && typeof body === 'object';
        const read = { ...document, version: misread(document.version), ...(ack ? { body: { ...body, version: misread(body.version) } } : {}) };
        if (read.version === document.version && (!ack || read.body.version === body.version)) return payload;
        return Buffer.from(JSON.stringify(read), 'utf8');
      },
    );
  },
};

/** The patch table and the catalog must name the same mutants (a stale one fails loudly). */
function catalogProblems() {
  const missing = Object.keys(CATALOG).filter((name) => !Object.hasOwn(PATCHES, name));
  const extra = Object.keys(PATCHES).filter((name) => !Object.hasOwn(CATALOG, name));
  return [
    ...missing.map((name) => `${name}: in node_mutants.json but has no patch`),
    ...extra.map((name) => `${name}: has a patch but is not in node_mutants.json`),
  ];
}

/** `--check NAME...`: each patch applied alone (one child process each); `NAME: problem` per failure. */
function check(names) {
  if (names.length === 1) {
    const [name] = names;
    if (!Object.hasOwn(PATCHES, name)) {
      console.log(`${name}: unknown mutant`);
      return 1;
    }
    try {
      PATCHES[name]();
    } catch (error) {
      console.log(`${name}: ${error?.name ?? 'Error'}: ${error?.message ?? error}`);
      return 1;
    }
    return 0;
  }
  const problems = catalogProblems();
  for (const problem of problems) console.log(problem);
  let failures = problems.length;
  for (const name of names.length > 0 ? names : Object.keys(CATALOG).sort()) {
    const done = spawnSync(process.execPath, [...process.execArgv, SELF, '--check', name], { encoding: 'utf8' });
    process.stdout.write(done.stdout);
    if (done.status !== 0) {
      failures += 1;
      if (done.stdout === '') console.log(`${name}: exited ${done.status}: ${done.stderr.trim().slice(-500)}`);
    }
  }
  return failures > 0 ? 1 : 0;
}

function help() {
  console.log(USAGE);
  console.log('\nThe Node reference host (runners/node/host.js) with one fault applied in memory.\n');
  console.log('  NAME          serve as the reference host with mutant NAME applied');
  console.log('  none          serve as the unpatched reference host (the baseline)');
  console.log('  --check [NAME...]  report each named patch (default: all) that no longer applies');
  console.log("\nUse it as an SDK: ryusen-conform run --sdk 'node tests/mutants/node_mutant_host.js NAME'");
  console.log('Check one mutant fast: python -m tests.mutants.kill_matrix --only NAME');
  const names = Object.keys(CATALOG).sort();
  console.log(`\n${names.length} mutants:`);
  for (const name of names) console.log(`  ${name}: ${CATALOG[name].fault ?? CATALOG[name]}`);
  return 0;
}

/** Apply the named mutant, then serve exactly as runners/node/host.js does when started. */
function main(args) {
  if (args[0] === '-h' || args[0] === '--help') return help();
  if (args[0] === '--check') return check(args.slice(1));
  if (args.length !== 1 || args[0].startsWith('-')) {
    process.stderr.write(`${USAGE}\n(node_mutant_host.js --help lists the mutants)\n`);
    return 2;
  }
  let [name] = args;
  const problems = catalogProblems();
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n`);
    return 2;
  }
  const overHttp = name.startsWith('node:http.'); // the HTTP surface (§1.1): served over HTTP
  if (name === 'node:http.none') name = 'none';
  if (name !== 'none' && !Object.hasOwn(PATCHES, name)) {
    process.stderr.write(`unknown mutant ${JSON.stringify(name)}; known: ${Object.keys(CATALOG).sort().join(', ')}\n`);
    return 2;
  }
  if (name !== 'none') PATCHES[name]();
  process.stderr.write(`mutant host: ${name}\n`);
  if (overHttp) serveHttp(serve, (message) => process.stderr.write(`[ryusen-node host] ${message}\n`));
  else serveProcess();
  return undefined;
}

const status = main(process.argv.slice(2));
if (status !== undefined) process.exitCode = status;
