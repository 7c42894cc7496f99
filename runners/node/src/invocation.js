// Invocation execution (protocol §9, §10, §11): one decoded `invoke` → exactly one answer.

import { Pass } from './context.js';
import { protocolError } from './errors.js';

/**
 * Execute one decoded invocation against a registry.
 * @param {import('./registry.js').Registry} registry
 * @param {import('./envelope.js').Envelope} envelope a decoded `invoke`
 * @param {{admissionOpen?: boolean}} [options] while admission is closed, targeted work is refused
 * @returns {Promise<{kind: string, body: object}>}
 */
export async function executeInvocation(registry, envelope, options = {}) {
  const { admissionOpen = true } = options;
  const body = envelope.body;
  const entry = registry.lookup(body.function_id);
  const targeted = body.mode !== 'discover';
  const rejectedBeforeStart = (code, message, retryable) => ({
    kind: 'rejected_before_start',
    body: {
      request_id: envelope.id,
      attempt: body.target.attempt,
      fencing_generation: body.target.fencing_generation,
      reason: { code, message, retryable },
    },
  });
  if (entry === undefined || typeof entry.handler !== 'function') {
    const message = `function ${JSON.stringify(body.function_id)} is not in the registry`;
    if (targeted) return rejectedBeforeStart('unknown_function', message, false);
    const error = protocolError('protocol.unknown_function', '/body/function_id', message);
    return { kind: 'protocol_error', body: { error: error.toRecord() } };
  }
  if (targeted && !admissionOpen) return rejectedBeforeStart('admission_refused', 'admission is closed', true);
  const pass = new Pass({
    mode: body.mode,
    runId: body.run_id,
    functionId: body.function_id,
    history: body.history,
    target: body.target,
    requestId: envelope.id,
  });
  return pass.run(entry.handler, body.input);
}
