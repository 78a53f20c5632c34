/** Per-session switches that the app controls: which sources a session may use. */
import { MemorySessionStateStore, type SessionStateStore } from "./session-state-store.js";

/** Options of `SessionSettings`. */
export interface SessionSettingsOptions {
  /**
   * Where the switches live; pass the permission service's store so both share one view.
   * @default a `MemorySessionStateStore` (this process only)
   */
  state?: SessionStateStore | undefined;
}

/**
 * Per-session source enablement. A session's sources default to each manifest's `enabledByDefault`.
 * Checked on every broker call without I/O: a shared store answers from its local view.
 * @example
 * const sessions = new SessionSettings({ state: governance.sessionState });
 * await sessions.enableSource(threadId, "llm-wiki");
 */
export class SessionSettings {
  readonly #state: SessionStateStore;

  /** @param options the session state store */
  constructor(options: SessionSettingsOptions = {}) {
    this.#state = options.state ?? new MemorySessionStateStore();
  }

  /**
   * Switches a source on for one session (for example the private LLM Wiki, off by default). In
   * memory the switch applies at once; await it with a shared store (it resolves once every replica
   * can learn of it).
   * @param sessionId the session (a LangGraph thread unless the app says otherwise)
   * @param sourceId the source manifest id
   * @throws GovernanceError `UPSTREAM_UNAVAILABLE` (rejects) when the store is closed or unreachable
   */
  enableSource(sessionId: string, sourceId: string): Promise<void> {
    return this.#state.setSourceSwitch(sessionId, sourceId, true);
  }

  /** Switches a source off for one session (await it with a shared store, as `enableSource`). */
  disableSource(sessionId: string, sourceId: string): Promise<void> {
    return this.#state.setSourceSwitch(sessionId, sourceId, false);
  }

  /**
   * Whether the session may call the source; synchronous (a shared store's local view).
   * @param sessionId the session
   * @param source the source id and its manifest default
   */
  isSourceEnabled(sessionId: string, source: { id: string; enabledByDefault: boolean }): boolean {
    return this.#state.sourceSwitch(sessionId, source.id) ?? source.enabledByDefault;
  }
}
