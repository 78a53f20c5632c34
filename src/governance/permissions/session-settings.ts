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
   * The switches set for sessions (sources nobody switched keep their manifest default and are not
   * listed), from the local view, ordered by session and source id.
   * @param options `sessionId` to list only that session's switches
   * @returns one entry per session and source switched
   * @example
   * const off = governance.sessions.listSourceSwitches({ sessionId: threadId }).filter((s) => !s.enabled);
   */
  listSourceSwitches(
    options: { sessionId?: string | undefined } = {},
  ): { sessionId: string; sourceId: string; enabled: boolean }[] {
    const { sessionId } = options;
    return this.#state
      .listSessions()
      .filter((entry) => sessionId === undefined || entry.sessionId === sessionId)
      .flatMap((entry) =>
        entry.sourceSwitches.map(({ sourceId, enabled }) => ({
          sessionId: entry.sessionId,
          sourceId,
          enabled,
        })),
      );
  }

  /**
   * Whether the switches (and the approval modes of a permission service on the same store) are
   * shared with other processes (`PostgresSessionStateStore`); `false` when they live in this
   * process's memory only, so that another process's switches are not seen here.
   */
  get isShared(): boolean {
    return this.#state.isShared === true;
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
