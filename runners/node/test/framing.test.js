import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { FrameReader, FrameWriter, FramingError } from '../src/index.js';

function frame(text) {
  const payload = Buffer.from(text, 'utf8');
  const header = Buffer.alloc(4);
  header.writeUInt32BE(payload.length);
  return Buffer.concat([header, payload]);
}

test('reads frames split across arbitrary chunks', async () => {
  const stream = new PassThrough();
  const reader = new FrameReader(stream);
  const all = Buffer.concat([frame('{"a":1}'), frame('é'.repeat(70000)), frame('x')]);
  (async () => {
    for (let i = 0; i < all.length; i += 7) {
      stream.write(all.subarray(i, i + 7));
      if (i % 700 === 0) await new Promise((r) => setImmediate(r));
    }
    stream.end();
  })();
  assert.equal((await reader.next()).toString(), '{"a":1}');
  assert.equal((await reader.next()).toString(), 'é'.repeat(70000));
  assert.equal((await reader.next()).toString(), 'x');
  assert.equal(await reader.next(), null);
});

test('an announced length over 16 MiB breaks the stream without buffering', async () => {
  const stream = new PassThrough();
  const reader = new FrameReader(stream);
  const header = Buffer.alloc(4);
  header.writeUInt32BE(16_777_217);
  stream.end(header);
  await assert.rejects(reader.next(), FramingError);
});

test('input ending inside a frame is a broken stream', async () => {
  const stream = new PassThrough();
  const reader = new FrameReader(stream);
  stream.end(frame('hello').subarray(0, 6));
  await assert.rejects(reader.next(), FramingError);
});

test('writer prefixes the big-endian length and waits for drain', async () => {
  const stream = new PassThrough({ highWaterMark: 16 });
  const writer = new FrameWriter(stream);
  const chunks = [];
  const reading = (async () => {
    for await (const chunk of stream) chunks.push(chunk);
  })();
  await writer.write(Buffer.from('a'.repeat(100)));
  await writer.write(Buffer.from('b'));
  stream.end();
  await reading;
  const out = Buffer.concat(chunks);
  assert.equal(out.readUInt32BE(0), 100);
  assert.equal(out.subarray(4, 104).toString(), 'a'.repeat(100));
  assert.equal(out.readUInt32BE(104), 1);
});
