// The tagged value model (protocol §3) and its language mapping, both directions.
//
// Language mapping (decode → encode is the identity on canonical bytes):
//
//   null      ↔ null                 (a function or callback returning undefined gives null)
//   bool      ↔ boolean
//   i64       ↔ I64                  (a bare bigint also encodes as i64)
//   u64       ↔ U64
//   f64       ↔ number               (every JS number is a double; -0 is kept)
//   str       ↔ string               (well-formed Unicode only)
//   bytes     ↔ Uint8Array           (Buffer included; exact bytes, never transcoded)
//   array     ↔ Array
//   object    ↔ plain object         (a Map with string keys also encodes; undefined members are absent)
//   instant   ↔ Instant              (a valid Date also encodes)
//   duration  ↔ Duration
//   blob      ↔ BlobRef
//
// Anything else (NaN, ±Infinity, a Map with a non-string key, a class instance, a function, a
// symbol, a Set, another typed array...) is refused with `sdk.conversion`, never coerced.

import canonicalize from 'canonicalize';
import { RyusenError, sdkError, protocolError } from './errors.js';
import { parseJson, setOwn } from './jsonparse.js';

export const I64_MIN = -(2n ** 63n);
export const I64_MAX = 2n ** 63n - 1n;
export const U64_MAX = 2n ** 64n - 1n;
export const MAX_VALUE_BYTES = 1_048_576;
export const MAX_DEPTH = 64;

const INTEGER_TEXT = /^(?:0|-?[1-9][0-9]*)$/;
const SHA256_HEX = /^[0-9a-f]{64}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function toBigInt(value, what) {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (typeof value === 'string' && INTEGER_TEXT.test(value)) return BigInt(value);
  throw new RangeError(`${what} needs a bigint, a safe integer or a canonical decimal string`);
}

function narrow(big) {
  return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
}

class IntegerBox {
  constructor(value, min, max, what) {
    const big = toBigInt(value, what);
    if (big < min || big > max) throw new RangeError(`${big} is outside the ${what} domain`);
    /** The exact value. */
    this.big = big;
    Object.freeze(this);
  }

  /** A number when the value is within the safe range, a bigint otherwise. */
  get value() {
    return narrow(this.big);
  }

  valueOf() {
    return this.value;
  }

  toString() {
    return this.big.toString();
  }

  toJSON() {
    return this.big.toString();
  }

  equals(other) {
    return other instanceof this.constructor && other.big === this.big;
  }
}

/** A signed 64-bit integer (tag `i64`). */
export class I64 extends IntegerBox {
  /** @param {bigint | number | string} value */
  constructor(value) {
    super(value, I64_MIN, I64_MAX, 'i64');
  }
}

/** An unsigned 64-bit integer (tag `u64`). */
export class U64 extends IntegerBox {
  /** @param {bigint | number | string} value */
  constructor(value) {
    super(value, 0n, U64_MAX, 'u64');
  }
}

/** A point in time: signed 64-bit milliseconds since the Unix epoch (tag `instant`). */
export class Instant extends IntegerBox {
  /** @param {bigint | number | string} ms */
  constructor(ms) {
    super(ms, I64_MIN, I64_MAX, 'instant');
  }

  /** Milliseconds since the epoch, exact. */
  get ms() {
    return this.big;
  }

  /** @param {Date} date */
  static fromDate(date) {
    const ms = date.getTime();
    if (!Number.isFinite(ms)) throw new RangeError('invalid Date');
    return new Instant(ms);
  }

  /** A Date (throws when outside the Date range). */
  toDate() {
    const date = new Date(Number(this.big));
    if (Number.isNaN(date.getTime())) throw new RangeError('instant outside the Date range');
    return date;
  }
}

/** A signed 64-bit count of milliseconds (tag `duration`); a value, never rounded. */
export class Duration extends IntegerBox {
  /** @param {bigint | number | string} ms */
  constructor(ms) {
    super(ms, I64_MIN, I64_MAX, 'duration');
  }

  /** Milliseconds, exact. */
  get ms() {
    return this.big;
  }
}

/** A reference to content stored elsewhere (tag `blob`). */
export class BlobRef {
  /**
   * @param {{sha256: string, size: bigint | number | string, mediaType?: string}} fields
   */
  constructor({ sha256, size, mediaType }) {
    if (typeof sha256 !== 'string' || !SHA256_HEX.test(sha256)) throw new RangeError('sha256 must be 64 lowercase hex digits');
    const big = toBigInt(size, 'blob size');
    if (big < 0n || big > U64_MAX) throw new RangeError('blob size outside the u64 domain');
    if (mediaType !== undefined && (typeof mediaType !== 'string' || mediaType === '' || !mediaType.isWellFormed())) {
      throw new RangeError('mediaType must be a non-empty string');
    }
    this.sha256 = sha256;
    this.size = big;
    this.mediaType = mediaType;
    Object.freeze(this);
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding: language value → tagged JSON

function conversion(message) {
  return sdkError('sdk.conversion', message);
}

/** A conversion refusal naming where in the language value it happened (a JSON pointer). */
function conversionAt(message, path) {
  return conversion(path === '' ? message : `${message} (at ${path})`);
}

function isPlainObject(value) {
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function bytesToBase64(bytes) {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
}

function describe(value) {
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (value === undefined) return 'undefined';
  const name = value?.constructor?.name;
  return name ? `an instance of ${name}` : 'an object';
}

function encodeNode(value, level, path) {
  const conversion = (message) => conversionAt(message, path);
  if (level > MAX_DEPTH) throw conversion(`value nesting deeper than ${MAX_DEPTH}`);
  switch (typeof value) {
    case 'boolean':
      return { t: 'bool', v: value };
    case 'string':
      if (!value.isWellFormed()) throw conversion('a string with a lone surrogate is not Unicode text');
      return { t: 'str', v: value };
    case 'number':
      if (!Number.isFinite(value)) throw conversion(`${value} is not a finite float`);
      return { t: 'f64', v: f64Text(value) };
    case 'bigint':
      if (value < I64_MIN || value > I64_MAX) throw conversion(`${value} is outside i64 (use U64 for unsigned values)`);
      return { t: 'i64', v: value.toString() };
    case 'object':
      break;
    default:
      throw conversion(`${describe(value)} cannot be carried by the tagged model`);
  }
  if (value === null) return { t: 'null' };
  if (value instanceof I64) return { t: 'i64', v: value.toString() };
  if (value instanceof U64) return { t: 'u64', v: value.toString() };
  if (value instanceof Instant) return { t: 'instant', v: value.toString() };
  if (value instanceof Duration) return { t: 'duration', v: value.toString() };
  if (value instanceof BlobRef) {
    const v = { sha256: value.sha256, size: value.size.toString() };
    if (value.mediaType !== undefined) v.media_type = value.mediaType;
    return { t: 'blob', v };
  }
  if (value instanceof Uint8Array) return { t: 'bytes', v: bytesToBase64(value) };
  if (value instanceof Date) {
    const ms = value.getTime();
    if (!Number.isFinite(ms)) throw conversion('an invalid Date is not an instant');
    return { t: 'instant', v: String(ms) };
  }
  if (Array.isArray(value)) {
    if (Object.getPrototypeOf(value) !== Array.prototype) throw conversion(`${describe(value)} cannot be carried by the tagged model`);
    const out = new Array(value.length);
    for (let k = 0; k < value.length; k++) {
      if (!(k in value) || value[k] === undefined) throw conversion(`array element ${k} is undefined`);
      out[k] = encodeNode(value[k], level + 1, `${path}/${k}`);
    }
    return { t: 'array', v: out };
  }
  if (value instanceof Map) {
    const out = {};
    for (const [key, member] of value) {
      if (typeof key !== 'string') throw conversion(`a map key of type ${typeof key} is not a string`);
      if (!key.isWellFormed()) throw conversion('a key with a lone surrogate is not Unicode text');
      if (member === undefined) continue;
      setOwn(out, key, encodeNode(member, level + 1, `${path}/${pointerSegment(key)}`));
    }
    return { t: 'object', v: out };
  }
  if (isPlainObject(value)) {
    if (Object.getOwnPropertySymbols(value).length > 0) throw conversion('an object with symbol keys cannot be carried');
    const out = {};
    for (const key of Object.keys(value)) {
      if (!key.isWellFormed()) throw conversion('a key with a lone surrogate is not Unicode text');
      const member = value[key];
      if (member === undefined) continue;
      setOwn(out, key, encodeNode(member, level + 1, `${path}/${pointerSegment(key)}`));
    }
    return { t: 'object', v: out };
  }
  throw conversion(`${describe(value)} cannot be carried by the tagged model`);
}

/** The canonical text of a finite double (§3.2). */
export function f64Text(number) {
  return Object.is(number, -0) ? '-0' : String(number);
}

/**
 * Convert a language value to its tagged JSON form (§3.1), enforcing §4.3 limits.
 * Refusals are RyusenError `sdk.conversion`. `undefined` at the top is null (returned nothing).
 * @param {unknown} value
 * @returns {object}
 */
export function toTagged(value) {
  const tagged = encodeNode(value === undefined ? null : value, 1, '');
  const size = taggedSize(tagged);
  if (size > MAX_VALUE_BYTES) throw conversion(`value is ${size} bytes canonically, over the ${MAX_VALUE_BYTES}-byte limit`);
  return tagged;
}

/**
 * The canonical encoding (§4.1) of a language value, as bytes.
 * @param {unknown} value
 * @returns {Uint8Array}
 */
export function canonicalValueBytes(value) {
  return new TextEncoder().encode(canonicalize(toTagged(value)));
}

// ---------------------------------------------------------------------------------------------
// Decoding: tagged JSON → language value

/** Escape one JSON pointer segment (RFC 6901). */
export function pointerSegment(key) {
  return String(key).replaceAll('~', '~0').replaceAll('/', '~1');
}

function isJsonObject(value) {
  return value !== null && typeof value === 'object' && !Array.isArray(value) && isPlainObject(value);
}

function parseInteger(text, min, max) {
  if (typeof text !== 'string' || !INTEGER_TEXT.test(text)) return undefined;
  const big = BigInt(text);
  return big < min || big > max ? undefined : big;
}

/** Parse a canonical u64 decimal string (§3.2); undefined when it is not one. */
export function parseU64Text(text) {
  return parseInteger(text, 0n, U64_MAX);
}

/** Parse a canonical i64 decimal string (§3.2); undefined when it is not one. */
export function parseI64Text(text) {
  return parseInteger(text, I64_MIN, I64_MAX);
}

/** Parse canonical f64 text (§3.2); undefined when it is not the canonical text of a finite double. */
export function parseF64Text(text) {
  if (typeof text !== 'string') return undefined;
  if (text === '-0') return -0;
  const number = Number(text);
  if (!Number.isFinite(number) || Object.is(number, -0)) return undefined;
  return String(number) === text ? number : undefined;
}

/** Decode canonical base64 (§3.3); undefined when it is not canonical. */
export function parseBase64(text) {
  if (typeof text !== 'string' || !BASE64.test(text)) return undefined;
  const buffer = Buffer.from(text, 'base64');
  if (buffer.toString('base64') !== text) return undefined;
  return new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);
}

/**
 * The JSON pointer of a value `decodeNode` is at: `at` is the pointer text of the outermost value,
 * or `[parent, index or key]` for an element or member under its parent's `/v`. Decoding builds
 * the text only for a refusal, not for each of the (many) values that decode.
 */
function pointerOf(at) {
  const segments = [];
  while (typeof at !== 'string') {
    segments.push(at[1]);
    at = at[0];
  }
  let text = at;
  for (let k = segments.length - 1; k >= 0; k--) text += `/v/${pointerSegment(segments[k])}`;
  return text;
}

function decodeNode(json, at, level) {
  if (level > MAX_DEPTH) {
    throw protocolError('protocol.limit_exceeded', pointerOf(at), `value nesting deeper than ${MAX_DEPTH}`);
  }
  const invalid = (why) => protocolError('protocol.invalid_value', pointerOf(at), why);
  if (!isJsonObject(json)) throw invalid('a tagged value must be a JSON object');
  const tag = json.t;
  const v = json.v;
  // Children before the container's own members, so the innermost invalid value is reported (§3.4).
  let elements;
  let members;
  if (tag === 'array' && Array.isArray(v)) {
    elements = new Array(v.length);
    for (let k = 0; k < v.length; k++) elements[k] = decodeNode(v[k], [at, k], level + 1);
  } else if (tag === 'object' && isJsonObject(v)) {
    members = [];
    for (const key of Object.keys(v)) members.push([key, decodeNode(v[key], [at, key], level + 1)]);
  }
  if (typeof tag !== 'string') throw invalid('a tagged value needs a string tag "t"');
  // Unknown members are ignored (§3.3, D-TAGGED-UNKNOWN-MEMBERS).
  if (tag === 'null') return null;
  if (!TAGS.has(tag)) throw invalid(`unknown tag ${JSON.stringify(tag)}`);
  if (!Object.hasOwn(json, 'v')) throw invalid(`a ${tag} value needs the member "v"`);
  switch (tag) {
    case 'bool':
      if (typeof v !== 'boolean') throw invalid('bool payload must be true or false');
      return v;
    case 'i64': {
      const big = parseI64Text(v);
      if (big === undefined) throw invalid('not a canonical i64');
      return new I64(big);
    }
    case 'u64': {
      const big = parseU64Text(v);
      if (big === undefined) throw invalid('not a canonical u64');
      return new U64(big);
    }
    case 'f64': {
      const number = parseF64Text(v);
      if (number === undefined) throw invalid('not the canonical text of a finite double');
      return number;
    }
    case 'str':
      if (typeof v !== 'string') throw invalid('str payload must be a string');
      if (!v.isWellFormed()) throw invalid('str payload has a lone surrogate');
      return v;
    case 'bytes': {
      const bytes = parseBase64(v);
      if (bytes === undefined) throw invalid('bytes payload must be canonical padded base64');
      return bytes;
    }
    case 'array':
      if (elements === undefined) throw invalid('array payload must be a JSON array');
      return elements;
    case 'object': {
      if (members === undefined) throw invalid('object payload must be a JSON object');
      const out = {};
      for (const [key, member] of members) {
        if (!key.isWellFormed()) throw invalid('object key has a lone surrogate');
        setOwn(out, key, member);
      }
      return out;
    }
    case 'instant': {
      const big = parseI64Text(v);
      if (big === undefined) throw invalid('not a canonical instant');
      return new Instant(big);
    }
    case 'duration': {
      const big = parseI64Text(v);
      if (big === undefined) throw invalid('not a canonical duration');
      return new Duration(big);
    }
    default: {
      // blob
      if (!isJsonObject(v)) throw invalid('blob payload must be an object');
      if (typeof v.sha256 !== 'string' || !SHA256_HEX.test(v.sha256)) throw invalid('blob sha256 must be 64 lowercase hex digits');
      const size = parseU64Text(v.size);
      if (size === undefined) throw invalid('blob size must be a canonical u64');
      let mediaType;
      if (Object.hasOwn(v, 'media_type')) {
        mediaType = v.media_type;
        if (typeof mediaType !== 'string' || mediaType === '' || !mediaType.isWellFormed()) {
          throw invalid('blob media_type must be a non-empty string');
        }
      }
      return new BlobRef({ sha256: v.sha256, size, mediaType });
    }
  }
}

const TAGS = new Set(['null', 'bool', 'i64', 'u64', 'f64', 'str', 'bytes', 'array', 'object', 'instant', 'duration', 'blob']);

/**
 * Decode one tagged value (§3) found at `pointer` of a message, applying §3.4 and §4.3.
 * Refusals are RyusenError `protocol.invalid_value` / `protocol.limit_exceeded` with `details.pointer`.
 * @param {unknown} json the parsed JSON of the value
 * @param {string} [pointer] its JSON pointer from the envelope root
 * @param {boolean} [checkSize] false when the whole frame is at most MAX_VALUE_BYTES long: a
 *   value's canonical text is never longer than its text in the frame, so it cannot be over
 */
export function fromTagged(json, pointer = '', checkSize = true) {
  let value;
  try {
    value = decodeNode(json, pointer, 1);
  } catch (error) {
    // Limits come before invalid encodings (§2 decoding order): report a limit if there is one.
    if (error instanceof RyusenError && error.category === 'protocol.invalid_value') {
      const limit = limitError(json, pointer);
      if (limit !== undefined) throw limit;
    }
    throw error;
  }
  const size = checkSize ? taggedSize(json) : 0;
  if (size > MAX_VALUE_BYTES) {
    throw protocolError('protocol.limit_exceeded', pointer, `value is ${size} bytes canonically, over ${MAX_VALUE_BYTES}`);
  }
  return value;
}

/**
 * The length of the canonical encoding (§4.1) of a well-formed tagged value. Such a value holds no
 * JSON numbers, and RFC 8785 writes strings exactly as JSON.stringify does, so only member order
 * differs, which does not change the length: JSON.stringify gives it without sorting.
 */
function taggedSize(tagged) {
  const size = Buffer.byteLength(JSON.stringify(tagged), 'utf8');
  // Unknown members are ignored (§3.3) and the canonical encoding does not carry them, so they
  // do not count toward the limit (§4.3): measure again without them only when over.
  return size > MAX_VALUE_BYTES ? Buffer.byteLength(JSON.stringify(knownMembers(tagged)), 'utf8') : size;
}

const BLOB_MEMBERS = ['sha256', 'size', 'media_type'];

/** `json` without the members §3.3 ignores, at every depth (non-tagged parts kept as they are). */
function knownMembers(json) {
  if (!isJsonObject(json) || typeof json.t !== 'string') return json;
  if (json.t === 'null' || !Object.hasOwn(json, 'v')) return { t: json.t };
  let v = json.v;
  if (json.t === 'array' && Array.isArray(v)) v = v.map(knownMembers);
  else if (json.t === 'object' && isJsonObject(v)) {
    const kept = Object.create(null);
    for (const key of Object.keys(v)) kept[key] = knownMembers(v[key]);
    v = kept;
  } else if (json.t === 'blob' && isJsonObject(v)) {
    const kept = {};
    for (const key of BLOB_MEMBERS) if (Object.hasOwn(v, key)) kept[key] = v[key];
    v = kept;
  }
  return { t: json.t, v };
}

/** The canonical size of a possibly invalid value (for limit checks); 0 when it has none. */
function canonicalSize(json) {
  try {
    const size = Buffer.byteLength(canonicalize(json), 'utf8');
    return size > MAX_VALUE_BYTES ? Buffer.byteLength(canonicalize(knownMembers(json)), 'utf8') : size;
  } catch {
    return 0;
  }
}

/** The first value at depth 65 in document order, walking a possibly invalid value leniently. */
function firstTooDeep(json, pointer, level) {
  if (level > MAX_DEPTH) return pointer;
  if (isJsonObject(json)) {
    if (json.t === 'array' && Array.isArray(json.v)) {
      for (let k = 0; k < json.v.length; k++) {
        const found = firstTooDeep(json.v[k], `${pointer}/v/${k}`, level + 1);
        if (found !== undefined) return found;
      }
    } else if (json.t === 'object' && isJsonObject(json.v)) {
      for (const key of Object.keys(json.v)) {
        const found = firstTooDeep(json.v[key], `${pointer}/v/${pointerSegment(key)}`, level + 1);
        if (found !== undefined) return found;
      }
    }
  }
  return undefined;
}

function limitError(json, pointer) {
  const deep = firstTooDeep(json, pointer, 1);
  if (deep !== undefined) return protocolError('protocol.limit_exceeded', deep, `value nesting deeper than ${MAX_DEPTH}`);
  const size = canonicalSize(json);
  if (size > MAX_VALUE_BYTES) return protocolError('protocol.limit_exceeded', pointer, `value is ${size} bytes canonically, over ${MAX_VALUE_BYTES}`);
  return undefined;
}

/** Decode the canonical bytes of a tagged value (a convenience for tests and tools). */
export function fromTaggedText(text) {
  return fromTagged(parseJson(text, { wrapNumbers: true, nullPrototype: true, rejectDuplicates: true }).value);
}

