// A strict RFC 8259 JSON parser (protocol §1, §3.3, §3.6).
//
// JSON.parse cannot be used on the wire: it keeps the last of two duplicate keys silently, loses
// the difference between `1` and `1.0`, and recurses on nesting. This parser is iterative, keeps
// the first value of a duplicated key and records the object in `duplicates` (or refuses it when
// asked), and can wrap numbers so callers see their exact text.

/** A JSON text that does not parse. `offset` is the UTF-16 index where parsing stopped. */
export class JsonSyntaxError extends Error {
  constructor(message, offset) {
    super(`${message} at offset ${offset}`);
    this.name = 'JsonSyntaxError';
    this.offset = offset;
  }
}

/** A JSON number kept as its exact source text (protocol mode). */
export class JsonNumber {
  constructor(text) {
    this.text = text;
    Object.freeze(this);
  }

  /** True when the text is an integer literal (no fraction, no exponent). */
  get isInteger() {
    return /^-?(?:0|[1-9][0-9]*)$/.test(this.text);
  }
}

const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPES = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

/** Set an own data property, even for the key "__proto__". */
export function setOwn(object, key, value) {
  if (key === '__proto__') {
    Object.defineProperty(object, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    object[key] = value;
  }
}

/**
 * Parse one JSON text.
 *
 * @param {string} text
 * @param {object} [options]
 * @param {boolean} [options.wrapNumbers] numbers become JsonNumber (exact text) instead of doubles
 * @param {boolean} [options.rejectDuplicates] a repeated key in one object is a syntax error
 * @param {boolean} [options.rejectLoneSurrogates] a string or key with a lone surrogate is an error
 * @param {boolean} [options.nullPrototype] objects have a null prototype
 * @param {boolean} [options.rejectOverflow] a number literal that overflows a double is an error
 * @returns {{value: unknown, duplicates: WeakSet<object>}}
 */
export function parseJson(text, options = {}) {
  const {
    wrapNumbers = false,
    rejectDuplicates = false,
    rejectLoneSurrogates = false,
    nullPrototype = false,
    rejectOverflow = false,
  } = options;
  const duplicates = new WeakSet();
  const n = text.length;
  let i = 0;

  const fail = (message) => {
    throw new JsonSyntaxError(message, i);
  };
  const skipWhitespace = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) i++;
      else break;
    }
  };
  const newObject = () => (nullPrototype ? Object.create(null) : {});

  const parseString = () => {
    // text[i] === '"'
    i++;
    let out = '';
    let start = i;
    for (;;) {
      if (i >= n) fail('unterminated string');
      const c = text.charCodeAt(i);
      if (c === 0x22) {
        out += text.slice(start, i);
        i++;
        break;
      }
      if (c === 0x5c) {
        out += text.slice(start, i);
        i++;
        if (i >= n) fail('unterminated escape');
        const e = text[i];
        if (e === 'u') {
          const hex = text.slice(i + 1, i + 5);
          if (!/^[0-9a-fA-F]{4}$/.test(hex)) fail('invalid \\u escape');
          out += String.fromCharCode(parseInt(hex, 16));
          i += 5;
        } else if (Object.hasOwn(ESCAPES, e)) {
          out += ESCAPES[e];
          i++;
        } else {
          fail('invalid escape');
        }
        start = i;
        continue;
      }
      if (c < 0x20) fail('unescaped control character in string');
      i++;
    }
    if (rejectLoneSurrogates && !out.isWellFormed()) fail('lone surrogate in string');
    return out;
  };

  const parseScalar = () => {
    const c = text[i];
    if (c === '"') return parseString();
    if (text.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (text.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (text.startsWith('null', i)) {
      i += 4;
      return null;
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (m === null) fail(i >= n ? 'unexpected end of input' : 'unexpected character');
    if (wrapNumbers) {
      i += m[0].length;
      return new JsonNumber(m[0]);
    }
    const number = Number(m[0]);
    if (rejectOverflow && !Number.isFinite(number)) fail('number literal overflows a double');
    i += m[0].length;
    return number;
  };

  const readKey = (frame) => {
    skipWhitespace();
    if (text[i] !== '"') fail('expected a string key');
    const key = parseString();
    skipWhitespace();
    if (text[i] !== ':') fail("expected ':'");
    i++;
    frame.key = key;
  };

  /** @type {{container: any, array: boolean, key?: string}[]} */
  const stack = [];
  let result;
  outer: for (;;) {
    skipWhitespace();
    let value;
    const c = text[i];
    if (c === '{') {
      i++;
      skipWhitespace();
      if (text[i] === '}') {
        i++;
        value = newObject();
      } else {
        const frame = { container: newObject(), array: false, key: '' };
        stack.push(frame);
        readKey(frame);
        continue;
      }
    } else if (c === '[') {
      i++;
      skipWhitespace();
      if (text[i] === ']') {
        i++;
        value = [];
      } else {
        stack.push({ container: [], array: true });
        continue;
      }
    } else {
      value = parseScalar();
    }
    // A value is complete: attach it, then close as many containers as end here.
    for (;;) {
      if (stack.length === 0) {
        result = value;
        break outer;
      }
      const top = stack[stack.length - 1];
      if (top.array) {
        top.container.push(value);
      } else if (Object.hasOwn(top.container, top.key)) {
        if (rejectDuplicates) fail(`duplicate key ${JSON.stringify(top.key)}`);
        duplicates.add(top.container);
      } else {
        setOwn(top.container, top.key, value);
      }
      skipWhitespace();
      const d = text[i];
      if (d === ',') {
        i++;
        if (!top.array) readKey(top);
        continue outer;
      }
      if (d === (top.array ? ']' : '}')) {
        i++;
        stack.pop();
        value = top.container;
        continue;
      }
      fail(top.array ? "expected ',' or ']'" : "expected ',' or '}'");
    }
  }
  skipWhitespace();
  if (i !== n) fail('unexpected text after the JSON value');
  return { value: result, duplicates };
}

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Decode bytes as UTF-8 (no byte-order mark, no invalid sequences).
 * @param {Uint8Array} bytes
 * @returns {string}
 */
export function decodeUtf8(bytes) {
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
    throw new JsonSyntaxError('byte-order mark', 0);
  }
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new JsonSyntaxError('invalid UTF-8', 0);
  }
}
