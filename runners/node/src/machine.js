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
 *   | {kind: 'blocked', stepId: string}} Decision
 */

export class DecisionMachine {
  /** @param {Map<string, HistoryEntry>} history accepted results and terminal failures by step ID */
  constructor(history) {
    this.history = history;
    /** Step IDs declared in this pass, in order. */
    this.seen = new Set();
  }

  /**
   * Decide one declaration.
   * @param {string} stepId
   * @returns {Decision}
   */
  declare(stepId) {
    if (this.seen.has(stepId)) return { kind: 'blocked', stepId };
    this.seen.add(stepId);
    const entry = this.history.get(stepId);
    if (entry === undefined) return { kind: 'unresolved' };
    if (entry.status === 'completed') return { kind: 'replay', value: entry.value };
    return { kind: 'replay_failed', error: entry.error };
  }
}
