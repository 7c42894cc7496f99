// The per-pass decision machine (protocol §11.2 item 3).
//
// It sees every declaration of one pass, in call order, and decides: replay a completed entry,
// reproduce a failed one, report the unresolved boundary, or block a step ID met a second time.
// It never stops by itself: "the blocker is the decision machine's response even when the first
// encounter already suspended the pass". Stopping the pass is the SDK layer's job (context.js).

/**
 * @typedef {{status: 'completed', value: unknown} | {status: 'failed', error: import('./errors.js').ErrorRecord}} HistoryEntry
 * @typedef {{kind: 'replay', value: unknown}
 *   | {kind: 'replay_failed', error: import('./errors.js').ErrorRecord}
 *   | {kind: 'unresolved'}
 *   | {kind: 'blocked', stepId: string, firstSource?: unknown, duplicateSource?: unknown}} Decision
 * @typedef {{file: string, line: number}} Source where a declaration was made (diagnostic only)
 */

export class DecisionMachine {
  /** @param {Map<string, HistoryEntry>} history accepted results and terminal failures by step ID */
  constructor(history) {
    this.history = history;
    /** Step IDs declared in this pass, in order, with where each was first declared. */
    this.seen = new Map();
  }

  /**
   * Decide one declaration.
   * @param {string} stepId
   * @param {unknown} [source] where it was declared (opaque here: the caller captures and reads it)
   * @returns {Decision}
   */
  declare(stepId, source) {
    if (this.seen.has(stepId)) {
      const decision = { kind: 'blocked', stepId };
      const first = this.seen.get(stepId);
      if (first !== undefined) decision.firstSource = first;
      if (source !== undefined) decision.duplicateSource = source;
      return decision;
    }
    this.seen.set(stepId, source);
    const entry = this.history.get(stepId);
    if (entry === undefined) return { kind: 'unresolved' };
    if (entry.status === 'completed') return { kind: 'replay', value: entry.value };
    return { kind: 'replay_failed', error: entry.error };
  }
}
