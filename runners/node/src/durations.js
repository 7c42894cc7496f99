// Author-facing durations → wire millisecond counts (protocol §6), with exact arithmetic.
//
// Every component is summed as an exact rational (BigInt numerator over a power-of-ten
// denominator, in nanoseconds), never a binary float: `1.1s` is exactly 1100 ms.

import { sdkError } from './errors.js';
import { Duration, I64_MAX, I64 } from './values.js';

const GRAMMAR = /^[+-]?(?:0|(?:(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:ns|us|µs|μs|ms|s|m|h))+)$/u;
const COMPONENT = /([0-9]*)(?:\.([0-9]*))?(ns|us|µs|μs|ms|s|m|h)/gu;

/** Unit sizes in nanoseconds (1 ms = 10^6 ns). */
const UNIT_NS = {
  ns: 1n,
  us: 1_000n,
  'µs': 1_000n, // U+00B5
  'μs': 1_000n, // U+03BC
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const NS_PER_MS = 1_000_000n;

function invalid(message) {
  return sdkError('sdk.invalid_duration', message);
}

/**
 * Parse a human-readable duration into an exact number of milliseconds, `num / den`.
 * @param {string} text
 * @returns {{num: bigint, den: bigint}}
 */
export function parseDuration(text) {
  if (typeof text !== 'string' || !GRAMMAR.test(text)) {
    throw invalid(`malformed duration ${JSON.stringify(text)}`);
  }
  let body = text;
  let negative = false;
  if (body[0] === '+' || body[0] === '-') {
    negative = body[0] === '-';
    body = body.slice(1);
  }
  if (body === '0') return { num: 0n, den: 1n };
  // Sum in nanoseconds over a common power-of-ten denominator.
  let num = 0n;
  let den = 1n;
  for (const m of body.matchAll(COMPONENT)) {
    const whole = m[1] ?? '';
    const fraction = m[2] ?? '';
    const scale = 10n ** BigInt(fraction.length);
    const digits = BigInt((whole + fraction) || '0');
    let termNum = digits * UNIT_NS[m[3]];
    if (scale > den) {
      num *= scale / den;
      den = scale;
    } else {
      termNum *= den / scale;
    }
    num += termNum;
  }
  if (negative) num = -num;
  return { num, den: den * NS_PER_MS };
}

function countFromExact(num, den, source) {
  const magnitude = num < 0n ? -num : num;
  if (magnitude > I64_MAX * den) throw invalid(`duration ${source} is past the portable range`);
  if (num <= 0n) return 0n;
  return (num + den - 1n) / den;
}

/**
 * Convert an author-facing duration into the wire count of milliseconds (§6.2): a positive value
 * is rounded up, zero stays zero, a negative value is due immediately (0).
 *
 * Accepts a human-readable string (`"200ms"`, `"1.5s"`, `"2h30m"`), a finite number of
 * milliseconds (the typed numeric form), a bigint of milliseconds, an I64, or a Duration value.
 * Malformed or out-of-range input is refused with `sdk.invalid_duration`.
 * @param {string | number | bigint | Duration | I64} duration
 * @returns {bigint} the count, 0 … 2^63 − 1
 */
export function toMillis(duration) {
  if (typeof duration === 'string') {
    const { num, den } = parseDuration(duration);
    return countFromExact(num, den, JSON.stringify(duration));
  }
  if (typeof duration === 'number') {
    if (!Number.isFinite(duration)) throw invalid(`${duration} is not a finite number of milliseconds`);
    if (Number.isInteger(duration)) return countFromExact(BigInt(duration), 1n, String(duration));
    // A non-integer double has magnitude below 2^52: Math.ceil is exact.
    return duration > 0 ? BigInt(Math.ceil(duration)) : 0n;
  }
  if (typeof duration === 'bigint') return countFromExact(duration, 1n, String(duration));
  if (duration instanceof Duration || duration instanceof I64) return countFromExact(duration.big, 1n, duration.toString());
  throw invalid('a duration is a string such as "1.5s" or a finite number of milliseconds');
}
