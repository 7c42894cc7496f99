import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toMillis, RyusenError, Duration, I64 } from '../src/index.js';

test('human-readable durations convert exactly, rounding up', () => {
  const cases = {
    '1.1s': 1100n, '1.5s': 1500n, '200ms': 200n, '2h30m': 9_000_000n, '1ns': 1n, '1.0001ms': 2n, '0': 0n, '0s': 0n,
    '-0s': 0n, '+0': 0n, '-0': 0n, '0.000ms': 0n, '1s1s': 2000n, '1h': 3_600_000n, '1m': 60_000n, '1us': 1n, '1µs': 1n,
    '1μs': 1n, '1000us': 1n, '1001us': 2n, '999999ns': 1n, '1000000ns': 1n, '1000001ns': 2n, '.5s': 500n, '1.s': 1000n,
    '-5m': 0n, '-1ns': 0n, '+1.5s': 1500n, '0.1s': 100n, '0.3s': 300n, '2.675s': 2675n, '1h-0s': undefined,
    '9223372036854775807ms': 9223372036854775807n, '9223372036854775.807s': 9223372036854775807n,
    '-9223372036854775807ms': 0n,
  };
  for (const [text, expected] of Object.entries(cases)) {
    if (expected === undefined) continue;
    assert.equal(toMillis(text), expected, text);
  }
});

function refused(input) {
  assert.throws(() => toMillis(input), (e) => e instanceof RyusenError && e.category === 'sdk.invalid_duration' && e.retryable === false, String(input));
}

test('malformed and out-of-range durations are refused', () => {
  for (const text of ['', '5', '1S', '1d', '1h-5m', ' 1s', '1s ', '1 s', '--1s', '+-1s', '.s', 's', '1.2.3s', '00', '1e3ms',
    '9223372036854775808ms', '-9223372036854775808ms', '2562047788016h', 'NaN', 'Infinity', '1sm', '１s']) {
    refused(text);
  }
});

test('the typed numeric form: finite milliseconds, same rounding', () => {
  assert.equal(toMillis(1500), 1500n);
  assert.equal(toMillis(0.1), 1n);
  assert.equal(toMillis(-0), 0n);
  assert.equal(toMillis(-5), 0n);
  assert.equal(toMillis(1.5), 2n);
  assert.equal(toMillis(9223372036854775807n), 9223372036854775807n);
  assert.equal(toMillis(-9223372036854775807n), 0n);
  assert.equal(toMillis(new Duration(42)), 42n);
  assert.equal(toMillis(new I64(-42)), 0n);
  for (const bad of [NaN, Infinity, -Infinity, 2 ** 63, -(2 ** 63), 9223372036854775808n, -9223372036854775808n, null, undefined, {}, true]) refused(bad);
});
