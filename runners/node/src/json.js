// The JSON convenience (protocol §3.6): a JSON document to or from the byte-string variant only.
// Opt-in: never applied to a tagged value the caller passed or to an accepted step result.

import canonicalize from 'canonicalize';
import { sdkError } from './errors.js';
import { parseJson, decodeUtf8, JsonSyntaxError } from './jsonparse.js';

function refuse(message) {
  return sdkError('sdk.json', message);
}

function checkDocument(value, depth) {
  if (depth > 10_000) throw refuse('JSON document nested too deeply');
  if (value === null || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw refuse(`${value} is not a JSON number`);
    return;
  }
  if (typeof value === 'string') {
    if (!value.isWellFormed()) throw refuse('a string with a lone surrogate is not JSON text');
    return;
  }
  if (typeof value !== 'object') throw refuse(`a ${typeof value} is not JSON`);
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) throw refuse('not a plain array');
    for (let k = 0; k < value.length; k++) {
      if (!(k in value)) throw refuse('a sparse array is not JSON');
      checkDocument(value[k], depth + 1);
    }
    return;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) {
    const what = value instanceof Map ? 'a Map (use a plain object with string keys)' : `an instance of ${value.constructor?.name ?? 'a class'}`;
    throw refuse(`${what} is not JSON`);
  }
  if (Object.getOwnPropertySymbols(value).length > 0) throw refuse('symbol keys are not JSON');
  for (const key of Object.keys(value)) {
    if (!key.isWellFormed()) throw refuse('a key with a lone surrogate is not JSON text');
    if (value[key] === undefined) throw refuse(`member ${JSON.stringify(key)} is undefined, not JSON`);
    checkDocument(value[key], depth + 1);
  }
}

/**
 * Serialize a language-native JSON document as RFC 8785 canonical JSON, UTF-8.
 * Refuses non-finite numbers, non-string keys and anything that is not JSON (`sdk.json`).
 * @param {unknown} document
 * @returns {Uint8Array}
 */
export function toBytes(document) {
  checkDocument(document, 0);
  let text;
  try {
    text = canonicalize(document);
  } catch (error) {
    throw refuse(String(error?.message ?? error));
  }
  return new TextEncoder().encode(text);
}

/**
 * Parse one UTF-8 JSON text (RFC 8259: no byte-order mark, no duplicate keys, no lone surrogate
 * escapes, no NaN/Infinity, no literal that overflows a double). Numbers become doubles (an
 * integer beyond 2^53 the nearest one). Refusals are `sdk.json`.
 * @param {Uint8Array} bytes
 * @returns {unknown}
 */
export function fromBytes(bytes) {
  if (!(bytes instanceof Uint8Array)) throw refuse('the JSON convenience reads bytes (a Uint8Array)');
  try {
    const text = decodeUtf8(bytes);
    return parseJson(text, { rejectDuplicates: true, rejectLoneSurrogates: true, rejectOverflow: true }).value;
  } catch (error) {
    if (error instanceof JsonSyntaxError) throw refuse(`not a JSON document: ${error.message}`);
    throw error;
  }
}

/**
 * An author's JSON document, marked explicitly for `emit` (§10.1, D-EMIT-PAYLOAD): serialized as
 * given, never confused with a protocol value the workflow happens to hold.
 */
export class JsonDocument {
  /** @param {unknown} document */
  constructor(document) {
    this.document = document;
  }
}

/**
 * The document's JSON text as given (§10.1): its own member order, no insignificant whitespace,
 * ECMAScript number text, RFC 8785 string escapes, UTF-8: what `JSON.stringify` writes.
 * Refuses what is not JSON (`sdk.json`).
 * @param {unknown} document
 * @returns {Uint8Array}
 */
export function asGivenBytes(document) {
  checkDocument(document, 0);
  return new TextEncoder().encode(JSON.stringify(document));
}
