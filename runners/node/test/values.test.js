import { test } from 'node:test';
import assert from 'node:assert/strict';
import canonicalize from 'canonicalize';
import { toTagged, fromTagged, fromTaggedText, I64, U64, Instant, Duration, BlobRef, RyusenError } from '../src/index.js';

const roundTrip = (text) => canonicalize(toTagged(fromTaggedText(text)));
const canonical = (text) => canonicalize(JSON.parse(text));

const VALID = [
  '{"t":"null"}',
  '{"t":"bool","v":true}',
  '{"t":"bool","v":false}',
  '{"t":"i64","v":"-9223372036854775808"}',
  '{"t":"i64","v":"9223372036854775807"}',
  '{"t":"i64","v":"1"}',
  '{"t":"u64","v":"1"}',
  '{"t":"u64","v":"18446744073709551615"}',
  '{"t":"f64","v":"1"}',
  '{"t":"f64","v":"1.5"}',
  '{"t":"f64","v":"-0"}',
  '{"t":"f64","v":"0"}',
  '{"t":"f64","v":"1e+21"}',
  '{"t":"f64","v":"1e-7"}',
  '{"t":"f64","v":"5e-324"}',
  '{"t":"f64","v":"1.7976931348623157e+308"}',
  '{"t":"f64","v":"0.1"}',
  '{"t":"str","v":"naïve ☃ 𝄞"}',
  '{"t":"bytes","v":"AP8="}',
  '{"t":"bytes","v":""}',
  '{"t":"array","v":[{"t":"i64","v":"1"},{"t":"null"}]}',
  '{"t":"object","v":{"a":{"t":"null"},"__proto__":{"t":"u64","v":"2"}}}',
  '{"t":"object","v":{}}',
  '{"t":"instant","v":"1700000000000"}',
  '{"t":"duration","v":"-1500"}',
  '{"t":"blob","v":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":"0","media_type":"text/plain"}}',
  '{"t":"blob","v":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":"18446744073709551615"}}',
];

test('decode then encode gives back the same canonical bytes', () => {
  for (const text of VALID) assert.equal(roundTrip(text), canonical(text), text);
});

test('language mapping keeps the model distinctions', () => {
  assert.ok(fromTaggedText('{"t":"i64","v":"1"}') instanceof I64);
  assert.ok(fromTaggedText('{"t":"u64","v":"1"}') instanceof U64);
  assert.equal(fromTaggedText('{"t":"f64","v":"1"}'), 1);
  assert.ok(Object.is(fromTaggedText('{"t":"f64","v":"-0"}'), -0));
  assert.ok(fromTaggedText('{"t":"instant","v":"5"}') instanceof Instant);
  assert.ok(fromTaggedText('{"t":"duration","v":"5"}') instanceof Duration);
  assert.ok(fromTaggedText('{"t":"blob","v":{"sha256":"' + 'a'.repeat(64) + '","size":"1"}}') instanceof BlobRef);
  assert.deepEqual(fromTaggedText('{"t":"bytes","v":"AP8="}'), new Uint8Array([0, 255]));
  const big = fromTaggedText('{"t":"i64","v":"9223372036854775807"}');
  assert.equal(big.value, 9223372036854775807n);
  assert.equal(fromTaggedText('{"t":"i64","v":"42"}').value, 42);
  const obj = fromTaggedText('{"t":"object","v":{"__proto__":{"t":"null"}}}');
  assert.ok(Object.hasOwn(obj, '__proto__'));
  assert.equal(Object.getPrototypeOf(obj), Object.prototype);
});

test('encoding language values', () => {
  assert.deepEqual(toTagged(1), { t: 'f64', v: '1' });
  assert.deepEqual(toTagged(-0), { t: 'f64', v: '-0' });
  assert.deepEqual(toTagged(1n), { t: 'i64', v: '1' });
  assert.deepEqual(toTagged(new U64(2n ** 64n - 1n)), { t: 'u64', v: '18446744073709551615' });
  assert.deepEqual(toTagged(undefined), { t: 'null' });
  assert.deepEqual(toTagged(new Map([['k', true]])), { t: 'object', v: { k: { t: 'bool', v: true } } });
  assert.deepEqual(toTagged({ a: undefined, b: null }), { t: 'object', v: { b: { t: 'null' } } });
  assert.deepEqual(toTagged(Buffer.from('hi')), { t: 'bytes', v: 'aGk=' });
  assert.deepEqual(toTagged(new Date(5)), { t: 'instant', v: '5' });
  assert.deepEqual(toTagged(Object.assign(Object.create(null), { x: 'y' })), { t: 'object', v: { x: { t: 'str', v: 'y' } } });
});

function refusedToEncode(value) {
  assert.throws(() => toTagged(value), (e) => e instanceof RyusenError && e.category === 'sdk.conversion' && e.retryable === false);
}

test('unportable language values are refused with sdk.conversion', () => {
  class Point { constructor() { this.x = 1; } }
  for (const value of [NaN, Infinity, -Infinity, new Map([[1, 'one']]), new Point(), () => 1, Symbol('s'), new Set([1]),
    new Float64Array(1), 2n ** 63n, [undefined], '\ud800', { '\udc00': 1 }, new Date(NaN), [1, , 3]]) {
    refusedToEncode(value);
  }
});

test('encoding limits: depth 64 accepted, 65 refused, 1 MiB canonical size', () => {
  let deep = null;
  for (let i = 1; i < 64; i++) deep = [deep];
  assert.doesNotThrow(() => toTagged(deep));
  refusedToEncode([deep]);
  const cyclic = [];
  cyclic.push(cyclic);
  refusedToEncode(cyclic);
  refusedToEncode('x'.repeat(1_048_576));
  assert.doesNotThrow(() => toTagged('x'.repeat(1_048_000)));
});

function refusedToDecode(text, category, pointer) {
  assert.throws(
    () => fromTagged(JSON.parse(text), '/body/input'),
    (e) => e instanceof RyusenError && e.category === category && e.details.pointer === pointer,
    text,
  );
}

test('strict decoding refuses outside the domain with the innermost pointer', () => {
  const bad = [
    '{"t":"i64","v":"007"}', '{"t":"i64","v":"+1"}', '{"t":"i64","v":"-0"}', '{"t":"i64","v":"1e3"}', '{"t":"i64","v":" 1"}',
    '{"t":"i64","v":"9223372036854775808"}', '{"t":"u64","v":"18446744073709551616"}', '{"t":"u64","v":"-1"}',
    '{"t":"i64","v":1}', '{"t":"f64","v":"NaN"}', '{"t":"f64","v":"Infinity"}', '{"t":"f64","v":"1e999"}', '{"t":"f64","v":"1.0"}',
    '{"t":"f64","v":"1.50"}', '{"t":"f64","v":"01"}', '{"t":"f64","v":"1E21"}', '{"t":"f64","v":"+1"}', '{"t":"f64","v":"-0.0"}',
    '{"t":"bytes","v":"AP9="}', '{"t":"bytes","v":"AP8"}', '{"t":"bytes","v":"AP8=\\n"}', '{"t":"str","v":"\\ud800"}',
    '{"t":"bool"}', '{"t":"bool","v":"true"}', '{"t":"nope","v":"1"}', '{"v":"1"}', '[]',
    '{"t":"blob","v":{"sha256":"E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855","size":"0"}}',
    '{"t":"blob","v":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":"0","media_type":""}}',
    '{"t":"instant","v":"9223372036854775808"}', '{"t":"object","v":[]}', '{"t":"array","v":{}}',
  ];
  for (const text of bad) refusedToDecode(text, 'protocol.invalid_value', '/body/input');
  refusedToDecode('{"t":"array","v":[{"t":"i64","v":"x"}]}', 'protocol.invalid_value', '/body/input/v/0');
  refusedToDecode('{"t":"object","v":{"a/b~":{"t":"u64","v":"-1"}}}', 'protocol.invalid_value', '/body/input/v/a~1b~0');
});

test('unknown members inside a tagged value are ignored (D-TAGGED-UNKNOWN-MEMBERS)', () => {
  assert.equal(fromTagged(JSON.parse('{"t":"null","v":null}')), null);
  assert.equal(fromTagged(JSON.parse('{"t":"str","v":"x","extra":1}')), 'x');
  const blob = fromTagged(JSON.parse('{"t":"blob","v":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855","size":"0","x":"y"}}'));
  assert.deepEqual(toTagged(blob), { t: 'blob', v: { sha256: 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855', size: '0' } });
});

test('decoding limits: the first value at depth 65, and size', () => {
  let text = '{"t":"null"}';
  for (let i = 1; i < 64; i++) text = `{"t":"array","v":[${text}]}`;
  assert.doesNotThrow(() => fromTagged(JSON.parse(text), ''));
  text = `{"t":"array","v":[${text}]}`;
  refusedToDecode(text, 'protocol.limit_exceeded', '/body/input' + '/v/0'.repeat(64));
  refusedToDecode(JSON.stringify({ t: 'str', v: 'x'.repeat(1_048_576) }), 'protocol.limit_exceeded', '/body/input');
});

test('the innermost invalid value wins over its invalid container', () => {
  refusedToDecode('{"t":"array","v":[{"t":"i64","v":"x"}],"extra":1}', 'protocol.invalid_value', '/body/input/v/0');
  refusedToDecode('{"t":"nope","v":[{"t":"i64","v":"x"}]}', 'protocol.invalid_value', '/body/input');
});
