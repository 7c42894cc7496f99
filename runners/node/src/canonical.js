// Canonical JSON (RFC 8785, via the maintained `canonicalize` package) and hashes (protocol §4).

import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/**
 * The canonical encoding of a JSON document, UTF-8 bytes.
 * @param {unknown} document
 * @returns {Uint8Array}
 */
export function canonicalBytes(document) {
  return new TextEncoder().encode(canonicalize(document));
}

/**
 * `sha256:` + 64 lowercase hex digits of SHA-256 over bytes (§4.2).
 * @param {Uint8Array} bytes
 */
export function hashBytes(bytes) {
  return `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
}

/** The hash of a JSON document's canonical encoding. */
export function hashDocument(document) {
  return hashBytes(canonicalBytes(document));
}

/**
 * Compare two strings by Unicode code point (the order of their UTF-8 bytes), not by UTF-16 code
 * unit as `Array.prototype.sort` does (§8.1).
 * @param {string} a
 * @param {string} b
 * @returns {number}
 */
export function compareCodePoints(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    // First differing UTF-16 unit. When it follows a shared high surrogate, the code points
    // start one unit earlier; compare whole code points (lone surrogates are their own value).
    const prev = i > 0 ? a.charCodeAt(i - 1) : 0;
    const at = prev >= 0xd800 && prev <= 0xdbff ? i - 1 : i;
    const diff = a.codePointAt(at) - b.codePointAt(at);
    return diff !== 0 ? diff : a.codePointAt(i) - b.codePointAt(i);
  }
  return a.length - b.length;
}
