import { test } from 'node:test';
import assert from 'node:assert/strict';
import { json, RyusenError } from '../src/index.js';

const text = (bytes) => new TextDecoder().decode(bytes);
const enc = (s) => new TextEncoder().encode(s);

function refused(fn, what) {
  assert.throws(fn, (e) => e instanceof RyusenError && e.category === 'sdk.json' && e.retryable === false, what);
}

test('to bytes is RFC 8785 canonical JSON', () => {
  assert.equal(text(json.toBytes({ b: 1, a: [true, null, 'x'], c: 1e21, d: 0.1 })), '{"a":[true,null,"x"],"b":1,"c":1e+21,"d":0.1}');
  assert.equal(text(json.toBytes({ '\u20ac': 1, '\r': 2, '\ud83d\ude00': 3, ö: 4 })), '{"\\r":2,"ö":4,"€":1,"😀":3}');
  for (const bad of [NaN, Infinity, { a: -Infinity }, new Map([[1, 2]]), new (class X {})(), 1n, () => 1, '\ud800', { a: undefined }, new Date(0), new Uint8Array(1)]) {
    refused(() => json.toBytes(bad), String(bad));
  }
});

test('from bytes is strict RFC 8259', () => {
  assert.deepEqual(json.fromBytes(enc('{"a": [1, 2.5, "x", null, true]}')), { a: [1, 2.5, 'x', null, true] });
  assert.equal(json.fromBytes(enc('18446744073709551617')), 18446744073709552000);
  assert.equal(Object.getPrototypeOf(json.fromBytes(enc('{"__proto__": 1}'))), Object.prototype);
  for (const bad of ['NaN', 'Infinity', '-Infinity', '{"a":1,"a":2}', '"\\ud800"', '{"\\udc00":1}', '\ufeff{}', '', '{', '[1,]', "{'a':1}", '01', '1 2', '"\t"']) {
    refused(() => json.fromBytes(enc(bad)), bad);
  }
  refused(() => json.fromBytes(new Uint8Array([0x22, 0xff, 0x22])), 'invalid UTF-8');
  refused(() => json.fromBytes('{}'), 'a string is not bytes');
});

test('round trip through the convenience canonicalizes', () => {
  assert.equal(text(json.toBytes(json.fromBytes(enc('{ "b" : 1 , "a" : 2.50 }')))), '{"a":2.5,"b":1}');
});

test('emit payload: a JsonDocument is written as given (§10.1, D-EMIT-PAYLOAD)', async () => {
  const { asGivenBytes, JsonDocument } = await import('../src/json.js');
  const text = new TextDecoder().decode(asGivenBytes({ z: 1, é: [1.5, true, null, 'x'], a: { k: 100.0 }, n: 1e21 }));
  assert.equal(text, '{"z":1,"é":[1.5,true,null,"x"],"a":{"k":100},"n":1e+21}');
  assert.equal(new TextDecoder().decode(asGivenBytes('order-1')), '"order-1"');
  assert.throws(() => asGivenBytes({ a: Infinity }), (e) => e.category === 'sdk.json');
  assert.ok(new JsonDocument({}).document !== undefined);
});

test('error records the wire cannot carry are refused with sdk.conversion (§5.1)', async () => {
  const { RyusenError } = await import('../src/errors.js');
  for (const build of [
    () => new RyusenError('Not Valid'),
    () => new RyusenError('app.x', '', { details: { code: 51 } }),
    () => new RyusenError('app.x', 5),
    () => new RyusenError('app.x', '', { retryable: 'yes' }),
  ]) {
    assert.throws(build, (e) => e instanceof RyusenError && e.category === 'sdk.conversion' && e.retryable === false);
  }
});
