/** Which approval tasks of a session are still reading their answer (see `SessionAnswers`). */

/**
 * Tasks per session that have not yet peeked or are recording an answer. A task without an answer
 * waits for them before checking grants, so `allow_matching` on one card releases the others on the
 * same resume. `begin` returns an idempotent release.
 */
export class SessionAnswers {
  readonly #inFlight = new Map<string, { count: number; waiters: Array<() => void> }>();

  /**
   * Registers a task that has yet to read its answer.
   * @param sessionId the session
   * @returns the idempotent release
   */
  begin(sessionId: string): () => void {
    const entry = this.#inFlight.get(sessionId) ?? { count: 0, waiters: [] };
    entry.count += 1;
    this.#inFlight.set(sessionId, entry);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      entry.count -= 1;
      if (entry.count > 0) return;
      this.#inFlight.delete(sessionId);
      for (const wake of entry.waiters) wake();
    };
  }

  /**
   * Waits until every registered task of the session has released.
   * @param sessionId the session
   */
  async settled(sessionId: string): Promise<void> {
    // One macrotask turn: every task of the step starts (and registers its answer) in microtasks.
    await new Promise<void>((resolve) => setImmediate(resolve));
    const entry = this.#inFlight.get(sessionId);
    if (entry) await new Promise<void>((resolve) => entry.waiters.push(resolve));
  }
}
