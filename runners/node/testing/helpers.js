// Shared test helpers: plain notation (§13.1) and invocation through the full decode path.
import { decodeEnvelope, encodeEnvelope, Worker, Registry } from '../src/index.js';

/** The tagged value of plain JSON (§13.1): strings str, integers i64, other numbers f64. */
export function plain(x) {
  if (x === null) return { t: 'null' };
  if (typeof x === 'boolean') return { t: 'bool', v: x };
  if (typeof x === 'number') return Number.isInteger(x) ? { t: 'i64', v: String(x) } : { t: 'f64', v: String(x) };
  if (typeof x === 'string') return { t: 'str', v: x };
  if (Array.isArray(x)) return { t: 'array', v: x.map(plain) };
  if (Object.hasOwn(x, '$tagged')) return x.$tagged;
  return { t: 'object', v: Object.fromEntries(Object.entries(x).map(([k, v]) => [k, plain(v)])) };
}

export function envelopeOf(kind, body, id = 'case#1') {
  return decodeEnvelope(encodeEnvelope(kind, id, body));
}

/** Run one invoke body against a registry; resolves the answer {kind, body}. */
export function invoke(registry, body, options) {
  return new Worker(registry).execute(envelopeOf('invoke', { history: [], ...body }), options);
}

export function target(stepId, phase = 'forward', extra = {}) {
  return { run_id: 'run-1', step_id: stepId, phase, attempt: 2, operation_id: 'op-7', fencing_generation: '11', ...extra };
}

export function registryWith(fn, id = 'wf') {
  return new Registry().function(id, fn);
}
