// Length-prefixed frames over a byte stream (protocol §1): a 4-byte unsigned big-endian length,
// then that many payload bytes. Reads tolerate arbitrary chunking; writes respect backpressure.

import { once } from 'node:events';

export const MAX_FRAME_BYTES = 16_777_216;

/** The stream is broken: a frame announced more than 16 MiB, or input ended inside a frame. */
export class FramingError extends Error {
  constructor(message) {
    super(message);
    this.name = 'FramingError';
  }
}

export class FrameReader {
  /** @param {import('node:stream').Readable} stream */
  constructor(stream) {
    this.iterator = stream[Symbol.asyncIterator]();
    /** @type {Buffer[]} */
    this.chunks = [];
    this.buffered = 0;
    this.eof = false;
  }

  async #fill(n) {
    while (this.buffered < n) {
      if (this.eof) return false;
      const { value, done } = await this.iterator.next();
      if (done) {
        this.eof = true;
        return false;
      }
      const chunk = Buffer.isBuffer(value) ? value : Buffer.from(value);
      if (chunk.length > 0) {
        this.chunks.push(chunk);
        this.buffered += chunk.length;
      }
    }
    return true;
  }

  #take(n) {
    const joined = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.buffered);
    const out = joined.subarray(0, n);
    const rest = joined.subarray(n);
    this.chunks = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return out;
  }

  /**
   * The next frame's payload, or null at a clean end of input.
   * @returns {Promise<Buffer | null>}
   */
  async next() {
    if (!(await this.#fill(4))) {
      if (this.buffered > 0) throw new FramingError('input ended inside a frame header');
      return null;
    }
    const header = this.#take(4);
    const length = header.readUInt32BE(0);
    if (length > MAX_FRAME_BYTES) {
      // Never buffer the announced payload: the peer is broken.
      throw new FramingError(`frame of ${length} bytes exceeds the ${MAX_FRAME_BYTES}-byte limit`);
    }
    if (!(await this.#fill(length))) throw new FramingError('input ended inside a frame payload');
    return Buffer.from(this.#take(length));
  }
}

export class FrameWriter {
  /** @param {import('node:stream').Writable} stream */
  constructor(stream) {
    this.stream = stream;
  }

  /**
   * Write one frame, waiting for the stream to drain when it asks to.
   * @param {Uint8Array} payload
   */
  async write(payload) {
    if (payload.length < 1 || payload.length > MAX_FRAME_BYTES) throw new FramingError(`cannot frame ${payload.length} bytes`);
    const header = Buffer.alloc(4);
    header.writeUInt32BE(payload.length, 0);
    const frame = Buffer.concat([header, payload]);
    if (!this.stream.write(frame)) await once(this.stream, 'drain');
  }

  /** Resolve once everything written so far is flushed. */
  flush() {
    return new Promise((resolve) => {
      if (this.stream.writableLength === 0) resolve();
      else this.stream.write('', () => resolve());
    });
  }
}
