// Structured errors (protocol §5): the error record as an Error subclass, both directions.

const CATEGORY = /^[a-z][a-z0-9_]*(\.[a-z0-9_]+)*$/;
const TRUSTED = Symbol('ryusen.trusted-record');

/**
 * @typedef {object} ErrorRecord
 * @property {string} category
 * @property {string} message
 * @property {boolean} retryable
 * @property {Record<string, string>} details
 * @property {ErrorRecord} [cause]
 */

/**
 * An error carrying a protocol error record: a stable category, a message, a retryable flag,
 * string details and an optional cause. Throw it from a callback or a workflow to fail with that
 * record; a replayed terminal failure reaches the workflow as one, unchanged.
 */
export class RyusenError extends Error {
  /**
   * @param {string} category stable, `[a-z][a-z0-9_]*(\.[a-z0-9_]+)*`
   * @param {string} [message]
   * @param {{retryable?: boolean, details?: Record<string, string>, cause?: RyusenError | ErrorRecord | Error}} [options]
   */
  constructor(category, message = '', options = {}) {
    const { retryable = false, details = {}, cause } = options;
    // A record supplied by the server reaches the workflow unchanged, whatever its category.
    const trusted = options[TRUSTED] === true;
    // A record the wire cannot carry is refused at construction with `sdk.conversion` (§5.1):
    // thrown in a callback it is that callback's failure, in the function body an uncaught one.
    const refuse = (why) => new RyusenError('sdk.conversion', `not an error record: ${why}`);
    if (typeof category !== 'string' || (!trusted && !CATEGORY.test(category))) {
      throw refuse(`invalid error category ${JSON.stringify(String(category))}`);
    }
    if (typeof message !== 'string') throw refuse('an error message must be a string');
    if (typeof retryable !== 'boolean') throw refuse('retryable must be a boolean');
    if (details !== null && details !== undefined && (typeof details !== 'object' || Array.isArray(details))) {
      throw refuse('error details are an object of strings');
    }
    const detailsCopy = {};
    for (const [key, value] of Object.entries(details ?? {})) {
      if (typeof value !== 'string') throw refuse(`error detail ${JSON.stringify(key)} must be a string`);
      Object.defineProperty(detailsCopy, key, { value, enumerable: true, writable: true, configurable: true });
    }
    let causeError;
    if (cause !== undefined && cause !== null) {
      causeError = cause instanceof Error ? cause : RyusenError.fromRecord(cause);
    }
    super(message, causeError === undefined ? undefined : { cause: causeError });
    this.name = 'RyusenError';
    this.category = category;
    this.retryable = retryable;
    this.details = detailsCopy;
  }

  /**
   * The error record of this error (§5.1). Stack traces never appear in it.
   * @returns {ErrorRecord}
   */
  toRecord() {
    const record = {
      category: this.category,
      message: this.message,
      retryable: this.retryable,
      details: { ...this.details },
    };
    if (this.cause !== undefined) record.cause = errorToRecord(this.cause);
    return record;
  }

  /**
   * The error for a record (a replayed terminal failure), unchanged.
   * @param {ErrorRecord} record
   * @returns {RyusenError}
   */
  static fromRecord(record) {
    if (record === null || typeof record !== 'object') throw new TypeError('an error record must be an object');
    return new RyusenError(record.category, record.message, {
      retryable: record.retryable,
      details: record.details ?? {},
      cause: record.cause,
      [TRUSTED]: true,
    });
  }
}

/**
 * Map anything a callback or workflow threw onto an error record (§5.1, §11.5): a RyusenError keeps
 * its record; any other thrown value is `app.unhandled`, retryable, with its message.
 * @param {unknown} thrown
 * @returns {ErrorRecord}
 */
export function errorToRecord(thrown) {
  if (thrown instanceof RyusenError) return thrown.toRecord();
  let message;
  if (thrown instanceof Error) message = thrown.message;
  else {
    try {
      message = String(thrown);
    } catch {
      message = 'a non-error value was thrown';
    }
  }
  return { category: 'app.unhandled', message: String(message ?? ''), retryable: true, details: {} };
}

/** An `sdk.*` error the SDK raises itself (retryable false, details as given). */
export function sdkError(category, message, details = {}) {
  return new RyusenError(category, message, { retryable: false, details });
}

/** A `protocol.*` error: retryable false, details `{pointer}` (§5.2). */
export function protocolError(category, pointer, message) {
  return new RyusenError(category, message, { retryable: false, details: { pointer } });
}

/** True for a well-formed error category. */
export function isCategory(text) {
  return typeof text === 'string' && CATEGORY.test(text);
}
