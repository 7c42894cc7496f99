// The conformance host over HTTP (docs/protocol.md "HTTP"), with node:http only.
//
// One envelope per POST body; the frame the host writes in answer is the response body (200),
// none is a 204. The §12 host loop (`serve` in host.js) is unchanged: its session's `receive`
// takes the next request's body where it would read a frame, and what it sent since the last
// `receive` is that request's answer. Every refusal (too large, unauthenticated, not JSON) is a
// `protocol_error` envelope with status 200, never a bare status (D-HTTP-STATUS).
//
// Started as `conform --http`: listens on 127.0.0.1 on a free port, prints its URL (and
// `request_authentication` when RYUSEN_CONFORM_HTTP_SECRET gives it a secret) as its first
// stdout line, logs to stderr, and exits on `conform.shutdown` or when its stdin ends.

import { createServer } from 'node:net';
import { STATUS_CODES } from 'node:http';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { Session, decodeEnvelope, encodeEnvelope, ProtocolFault, RyusenError } from './src/index.js';

export const PATH = '/ryusen';
export const MAX_BODY_BYTES = 16_777_216;
export const REPLAY_WINDOW_SECONDS = 300;

/** A Session whose frames are HTTP requests: `receive` ends the answer to the previous one. */
export class HttpSession extends Session {
  constructor() {
    super(new PassThrough(), new PassThrough());
    /** @type {Buffer[]} */
    this.written = [];
    this.waiting = null; // resolve of the host's pending receive
    this.queued = []; // request bodies not yet taken (null: end)
    this.answering = null; // resolve of the request being served
  }

  send(kind, id, body) {
    this.written.push(Buffer.from(encodeEnvelope(kind, id, body)));
    return Promise.resolve();
  }

  /** The request being served is answered completely: hand over what was written. */
  finish() {
    if (this.answering === null) return false;
    const answer = this.answering;
    this.answering = null;
    const written = this.written;
    this.written = [];
    answer(written);
    return true;
  }

  /** Serve one request body; resolves with the frames the host wrote in answer. */
  request(body) {
    return new Promise((resolve) => {
      this.queued.push({ body, resolve });
      this.#wake();
    });
  }

  end() {
    this.queued.push(null);
    this.#wake();
  }

  #wake() {
    if (this.waiting !== null && this.queued.length > 0) {
      const wake = this.waiting;
      this.waiting = null;
      wake();
    }
  }

  async receive(expecting = []) {
    if (this.pushedBack !== undefined) {
      const received = this.pushedBack;
      this.pushedBack = undefined;
      return received;
    }
    this.finish();
    if (this.queued.length === 0) await new Promise((resolve) => (this.waiting = resolve));
    const next = this.queued.shift();
    if (next === null) return null;
    this.answering = next.resolve;
    try {
      return { envelope: decodeEnvelope(next.body, { expecting }) };
    } catch (error) {
      if (error instanceof ProtocolFault) return { fault: error };
      throw error;
    }
  }
}

/** Request authentication (D-HTTP-AUTH): why a request is refused, or null. */
export class Guard {
  constructor(secret) {
    this.secret = Buffer.from(secret, 'ascii');
    this.seen = new Map();
  }

  refusal(headers, body) {
    const timestamp = headers['ryusen-timestamp'];
    const nonce = headers['ryusen-nonce'];
    const signature = headers['ryusen-signature'];
    if (!timestamp || !nonce || !signature) return 'unsigned request';
    // the forms D-HTTP-AUTH gives the headers: anything else fails authentication (D-HTTP-ORDER)
    if (!/^[0-9]{1,12}$/.test(timestamp) || !/^[0-9a-f]{32}$/.test(nonce)) return 'malformed authentication headers';
    if (!/^v1=[0-9a-f]{64}$/.test(signature)) return 'malformed signature header';
    const mac = createHmac('sha256', this.secret);
    mac.update(`${timestamp}.${nonce}.`, 'ascii');
    mac.update(body);
    const expected = Buffer.from(`v1=${mac.digest('hex')}`, 'ascii');
    const given = Buffer.from(signature, 'utf8');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'bad signature';
    const now = Date.now() / 1000;
    if (Math.abs(now - Number(timestamp)) > REPLAY_WINDOW_SECONDS) return 'stale timestamp';
    // oldest first (a Map keeps insertion order): forget the expired, stop at the first kept, so no
    // request walks every nonce kept
    for (const [seen, when] of this.seen) {
      if (now - when <= 2 * REPLAY_WINDOW_SECONDS) break;
      this.seen.delete(seen);
    }
    if (this.seen.has(nonce)) return 'replayed request';
    this.seen.set(nonce, now);
    return null;
  }
}

/** A `protocol_error` on "-": the host has not decoded the request it refuses. */
export function refusal(category, message) {
  const error = new RyusenError(category, message, { details: { pointer: '' } });
  return Buffer.from(encodeEnvelope('protocol_error', '-', { error: error.toRecord() }));
}

/**
 * The HTTP response carrying what the host wrote for one request (D-HTTP-STATUS): one envelope
 * is a 200 with it as the body, none a 204; never another status, whatever the envelope says.
 * An object of functions so a mutant host can replace one (tests/mutants/node_mutant_host.js).
 */
export const hooks = {
  /** D-HTTP-ORDER step 1, from the headers alone: no decimal length, or over 16 MiB. */
  lengthRefusal(headers) {
    const length = headers['content-length'];
    if (length === undefined || !/^[0-9]+$/.test(length)) return refusal('protocol.malformed', 'no Content-Length');
    if (Number(length) > MAX_BODY_BYTES) return refusal('protocol.limit_exceeded', 'request too large');
    return null;
  },

  /** D-HTTP-ORDER steps 3 and 4, the body read: authentication (every request), then the content type. */
  requestRefusal(guard, headers, body, log) {
    if (guard !== null) {
      const why = guard.refusal(headers, body);
      if (why !== null) {
        log(`refused: ${why}`);
        return refusal('protocol.unauthenticated', why);
      }
    }
    const contentType = (headers['content-type'] || '').split(';')[0].trim().toLowerCase();
    if (contentType !== 'application/json') return refusal('protocol.malformed', 'not application/json');
    return null;
  },

  responseFor(written, log) {
    if (written.length > 1) log(`wrote ${written.length} frames for one request; answering the first`);
    if (written.length === 0) return { status: 204, data: Buffer.alloc(0), headers: {} };
    return { status: 200, data: written[0], headers: { 'Content-Type': 'application/json' } };
  },
};

function respond(response, written, log, close = false) {
  const { status, data, headers } = hooks.responseFor(written, log);
  response.write(status, status === 204 ? Buffer.alloc(0) : data, headers, close || response.close);
}

/** Longest request head (request line and headers) an endpoint reads. */
const MAX_HEAD_BYTES = 65_536;
/** Milliseconds a connection closed after a refusal is still drained (the client reads the refusal
 * before the unread rest of its request could reset the connection). */
const LINGER_MS = 2_000;

/**
 * One client connection: its unread bytes, one request at a time (a response is written before
 * the next request on the same connection is looked at, so responses keep their order), and
 * each response as one write.
 */
class Connection {
  constructor(socket, onRequest) {
    this.socket = socket;
    this.onRequest = onRequest;
    this.parts = []; // unread bytes, joined only when a head or a whole body is there to take
    this.size = 0;
    this.pending = null; // { request, length }: a request whose body is still coming
    this.busy = false; // a request is being answered
    this.closing = false;
    socket.setNoDelay(true);
    socket.on('data', (chunk) => this.#data(chunk));
    socket.on('error', () => socket.destroy());
  }

  #data(chunk) {
    if (this.closing) return; // the unread rest of a refused request
    this.parts.push(chunk);
    this.size += chunk.length;
    if (this.pending !== null && this.size < this.pending.length) return; // a body still coming
    this.#next();
  }

  /** The unread bytes as one buffer (a body that came in many chunks is copied once). */
  #joined() {
    if (this.parts.length > 1) this.parts = [Buffer.concat(this.parts, this.size)];
    return this.parts[0] ?? Buffer.alloc(0);
  }

  /** Drop the first `count` unread bytes. */
  #consume(count) {
    const rest = this.#joined().subarray(count);
    this.parts = rest.length === 0 ? [] : [rest];
    this.size = rest.length;
  }

  /** Look at the next request the buffer holds, unless one is being answered. */
  #next() {
    while (!this.busy && !this.closing) {
      if (this.pending === null) {
        const buffer = this.#joined();
        const end = buffer.indexOf('\r\n\r\n');
        if (end < 0) {
          if (buffer.length > MAX_HEAD_BYTES) this.write(431, Buffer.alloc(0), {}, true);
          return;
        }
        const request = parseHead(buffer.toString('latin1', 0, end));
        this.#consume(end + 4);
        if (request === null) {
          this.write(400, Buffer.alloc(0), {}, true);
          return;
        }
        this.busy = true;
        this.onRequest(request, this);
        continue;
      }
      const { request, length } = this.pending;
      if (this.size < length) return;
      const body = this.#joined().subarray(0, length);
      this.#consume(length);
      this.pending = null;
      this.busy = true;
      request.onBody(Buffer.from(body));
    }
  }

  /** Wait for the request's body of `length` bytes, then call `onBody` with it. */
  readBody(request, length, onBody) {
    request.onBody = onBody;
    this.pending = { request, length };
    if (this.size < length && request.headers.expect?.toLowerCase() === '100-continue') {
      this.socket.write('HTTP/1.1 100 Continue\r\n\r\n');
    }
    this.busy = false; // the loop in #next, which called the handler, reads the body on
  }

  /** The whole response in one write; `close` ends the connection after it. */
  write(status, data, headers, close) {
    if (this.socket.destroyed) return;
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Status'}\r\n`;
    for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
    if (status !== 204) head += `Content-Length: ${data.length}\r\n`;
    if (close) head += 'Connection: close\r\n';
    head += '\r\n';
    this.socket.write(data.length === 0 ? head : Buffer.concat([Buffer.from(head, 'latin1'), data]));
    if (close) {
      this.closing = true;
      this.socket.end();
      setTimeout(() => this.socket.destroy(), LINGER_MS).unref();
      return;
    }
    this.busy = false;
    setImmediate(() => this.#next()); // a request that came meanwhile, on a fresh stack
  }
}

/** The request line and headers (names in lowercase), or null when they are not HTTP/1.x. */
function parseHead(text) {
  const lines = text.split('\r\n');
  const parts = lines[0].split(' ');
  if (parts.length !== 3 || !parts[2].startsWith('HTTP/1.')) return null;
  const headers = {};
  for (let i = 1; i < lines.length; i += 1) {
    const colon = lines[i].indexOf(':');
    if (colon <= 0) return null;
    const name = lines[i].slice(0, colon);
    if (name.trim() !== name) return null;
    const key = name.toLowerCase();
    const value = lines[i].slice(colon + 1).trim();
    headers[key] = key in headers ? `${headers[key]}, ${value}` : value;
  }
  const tokens = (headers.connection ?? '').toLowerCase().split(',').map((token) => token.trim());
  const keep = !tokens.includes('close') && (parts[2] !== 'HTTP/1.0' || tokens.includes('keep-alive'));
  return { method: parts[0], url: parts[1], httpVersion: parts[2], headers, close: !keep };
}

/** Serve HTTP on 127.0.0.1 with the host loop `serve` until `conform.shutdown` or stdin ends. */
export function serveHttp(serve, log) {
  const secret = process.env.RYUSEN_CONFORM_HTTP_SECRET || null;
  const guard = secret ? new Guard(secret) : null;
  const session = new HttpSession();
  let chain = Promise.resolve(); // one request at a time (§12.1)
  const connections = new Set();

  const handle = (request, response) => {
    if (request.method !== 'POST' || request.url !== PATH) {
      const declared = request.headers['content-length'] ?? '0';
      if (!/^[0-9]+$/.test(declared) || Number(declared) > MAX_BODY_BYTES) {
        response.write(404, Buffer.alloc(0), {}, true); // a body it cannot skip: close
        return;
      }
      response.readBody(request, Number(declared), () => response.write(404, Buffer.alloc(0), {}, request.close));
      return;
    }
    const tooLarge = hooks.lengthRefusal(request.headers);
    if (tooLarge !== null) {
      // refused from the headers alone: the body is never read (D-HTTP-LIMITS)
      respond(response, [tooLarge], log, true);
      return;
    }
    response.close = request.close;
    response.readBody(request, Number(request.headers['content-length']), (body) => {
      const refused = hooks.requestRefusal(guard, request.headers, body, log);
      if (refused !== null) {
        respond(response, [refused], log);
        return;
      }
      chain = chain.then(async () => {
        respond(response, await session.request(body), log);
      });
    });
  };

  const server = createServer({ noDelay: true }, (socket) => {
    connections.add(socket);
    socket.on('close', () => connections.delete(socket));
    new Connection(socket, handle); // eslint-disable-line no-new
  });

  process.on('unhandledRejection', (reason) => log(`unhandled rejection: ${reason?.stack ?? reason}`));
  server.listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    process.stdout.write(`http://127.0.0.1:${port}${PATH}${guard ? ' request_authentication' : ''}\n`);
    process.stdin.on('end', () => session.end());
    process.stdin.on('error', () => session.end());
    process.stdin.resume();
    serve(null, null, session).then(
      async (code) => {
        session.finish(); // the shutdown request is answered (204)
        await chain;
        server.close();
        for (const socket of connections) socket.destroy();
        process.exitCode = code;
        setImmediate(() => process.exit(code));
      },
      (error) => {
        log(`fatal: ${error?.stack ?? error}`);
        process.exit(1);
      },
    );
  });
}
