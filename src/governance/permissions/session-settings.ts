/** Per-session switches that the app controls: which sources a session may use. */

/** Per-session source enablement. A session's sources default to each manifest's `enabledByDefault`. */
export class SessionSettings {
  readonly #overrides = new Map<string, Map<string, boolean>>();

  /**
   * Switches a source on for one session (for example the private LLM Wiki, off by default).
   * @param sessionId the session (a LangGraph thread unless the app says otherwise)
   * @param sourceId the source manifest id
   */
  enableSource(sessionId: string, sourceId: string): void {
    this.#set(sessionId, sourceId, true);
  }

  /** Switches a source off for one session. */
  disableSource(sessionId: string, sourceId: string): void {
    this.#set(sessionId, sourceId, false);
  }

  /**
   * Whether the session may call the source.
   * @param sessionId the session
   * @param source the source id and its manifest default
   */
  isSourceEnabled(sessionId: string, source: { id: string; enabledByDefault: boolean }): boolean {
    return this.#overrides.get(sessionId)?.get(source.id) ?? source.enabledByDefault;
  }

  #set(sessionId: string, sourceId: string, enabled: boolean): void {
    let map = this.#overrides.get(sessionId);
    if (!map) {
      map = new Map();
      this.#overrides.set(sessionId, map);
    }
    map.set(sourceId, enabled);
  }
}
