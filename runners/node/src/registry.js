// The registry and its manifest (protocol §8): functions by exact ID with an optional whole-run
// timeout, exact-name event triggers, validation (§8.2), canonical declarations sorted by code
// point (§8.1), contents bytes and the manifest hash (§8.3).

import { canonicalBytes, hashBytes, compareCodePoints } from './canonical.js';
import { sdkError, RyusenError } from './errors.js';
import { toMillis } from './durations.js';

export const MANIFEST_FORMAT = 'ryusen.manifest-contents/1';

/**
 * @callback WorkflowFunction
 * @param {import('./context.js').WorkflowContext} ctx
 * @param {unknown} input the run input, decoded
 * @returns {unknown | Promise<unknown>} the return value
 */

/**
 * @typedef {object} Manifest
 * @property {{id: string, timeout_ms?: string}[]} functions canonical function declarations, sorted
 * @property {{id: string, event: string, function: string}[]} triggers canonical trigger bindings, sorted
 * @property {Uint8Array} contents the contents bytes (RFC 8785 canonical JSON)
 * @property {string} hash `sha256:` of the contents bytes
 */

function invalidRegistry(code, message) {
  return sdkError('sdk.invalid_registry', message, { code });
}

/** Complete desired state of one application: functions and triggers, in author order. */
export class Registry {
  constructor() {
    /** @type {{id: string, handler: WorkflowFunction | undefined, timeout: unknown}[]} */
    this.functions = [];
    /** @type {{id: string, event: string, function: string}[]} */
    this.triggers = [];
  }

  /**
   * Declare a function. Validation happens when the manifest is built (§8.2 order).
   * @param {string} id exact logical function ID
   * @param {WorkflowFunction} [handler] the workflow
   * @param {{timeout?: string | number}} [options] optional whole-run timeout (§6 duration)
   * @returns {this}
   */
  function(id, handler, options = {}) {
    if (typeof id !== 'string') throw new TypeError('a function ID is a string');
    if (handler !== undefined && typeof handler !== 'function') throw new TypeError('a function handler is a function');
    this.functions.push({ id, handler, timeout: options.timeout });
    return this;
  }

  /**
   * Declare an exact-name event trigger.
   * @param {string} id trigger ID
   * @param {string} event exact event name
   * @param {string} functionId the function it selects
   * @returns {this}
   */
  trigger(id, event, functionId) {
    for (const [name, value] of [['trigger ID', id], ['event', event], ['function ID', functionId]]) {
      if (typeof value !== 'string') throw new TypeError(`a ${name} is a string`);
    }
    this.triggers.push({ id, event, function: functionId });
    return this;
  }

  /** The first declared function with this ID, or undefined. */
  lookup(id) {
    return this.functions.find((f) => f.id === id);
  }

  /**
   * Validate (§8.2, codes in order, first failure) and build the manifest (§8.1, §8.3).
   * Throws RyusenError `sdk.invalid_registry` with `details.code`.
   * @returns {Manifest}
   */
  manifest() {
    const ids = new Set();
    for (const f of this.functions) if (f.id === '') throw invalidRegistry('empty_function_id', 'a function ID is empty');
    for (const f of this.functions) {
      if (ids.has(f.id)) throw invalidRegistry('duplicate_function_id', `function ID ${JSON.stringify(f.id)} is declared twice`);
      ids.add(f.id);
    }
    const functions = [];
    for (const f of this.functions) {
      const declaration = { id: f.id };
      if (f.timeout !== undefined && f.timeout !== null) {
        let count;
        try {
          count = toMillis(f.timeout);
        } catch (error) {
          if (!(error instanceof RyusenError)) throw error;
          throw invalidRegistry('invalid_timeout', `function ${JSON.stringify(f.id)}: ${error.message}`);
        }
        declaration.timeout_ms = count.toString();
      }
      functions.push(declaration);
    }
    for (const t of this.triggers) if (t.id === '') throw invalidRegistry('empty_trigger_id', 'a trigger ID is empty');
    for (const t of this.triggers) if (t.event === '') throw invalidRegistry('empty_event_name', `trigger ${JSON.stringify(t.id)} has an empty event name`);
    for (const t of this.triggers) {
      if (!ids.has(t.function)) {
        throw invalidRegistry('undeclared_function', `trigger ${JSON.stringify(t.id)} names undeclared function ${JSON.stringify(t.function)}`);
      }
    }
    functions.sort((a, b) => compareCodePoints(a.id, b.id));
    const triggers = this.triggers
      .map((t) => ({ id: t.id, event: t.event, function: t.function }))
      .sort((a, b) => compareCodePoints(a.id, b.id) || compareCodePoints(a.event, b.event) || compareCodePoints(a.function, b.function));
    const contents = canonicalBytes({ format: MANIFEST_FORMAT, functions, triggers });
    return { functions, triggers, contents, hash: hashBytes(contents) };
  }
}
