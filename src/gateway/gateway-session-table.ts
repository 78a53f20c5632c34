/**
 * The gateway's open HTTP sessions and the rule that makes room for a new one: a client (its principal
 * and address) holds at most `maxSessionsPerClient`, the gateway at most `maxSessions`, and when either
 * is full the least recently used session with nothing running makes way (one left unused after
 * `initialize` for 10 s first), so clients that leave without `DELETE` never lock others out (see
 * ARCHITECTURE.md, "The governed MCP gateway").
 */
import type { HttpRefusal } from "./gateway-http-guard.js";
import type { GatewayHttpSession } from "./gateway-http-session.js";

/** How many sessions the table holds. */
export interface SessionTableLimits {
  maxSessions: number;
  maxSessionsPerClient: number;
}

/**
 * How long a session may sit unused after `initialize` before it is the first to make way: a client
 * sends its `initialized` notification within milliseconds, so one that has not after 10 s (a margin
 * for a loaded machine) is likely gone, or one of a flood of bare `initialize` requests.
 */
const UNUSED_FIRST_AFTER_MS = 10_000;

/** Room for one more session: the sessions to close for it, or why there is none. */
export type SessionRoom = { evicted: GatewayHttpSession[] } | { refusal: HttpRefusal };

/** The open sessions by their transport id. */
export class GatewaySessionTable {
  readonly #limits: SessionTableLimits;
  readonly #sessions = new Map<string, GatewayHttpSession>();

  /** @param limits the total and per-client bounds */
  constructor(limits: SessionTableLimits) {
    this.#limits = limits;
  }

  /** Open sessions. */
  get size(): number {
    return this.#sessions.size;
  }

  /** @returns the session of a transport id, if open */
  get(id: string): GatewayHttpSession | undefined {
    return this.#sessions.get(id);
  }

  /** @returns every open session */
  values(): GatewayHttpSession[] {
    return [...this.#sessions.values()];
  }

  /** Holds a session under its id (it counts towards the bounds from now on). */
  add(session: GatewayHttpSession): void {
    this.#sessions.set(session.id, session);
  }

  /** Forgets a session (only that one: an id is never reused, but a late callback must not drop another). */
  delete(session: GatewayHttpSession): void {
    if (this.#sessions.get(session.id) === session) this.#sessions.delete(session.id);
  }

  /**
   * Makes room for one more session of `client`, forgetting the sessions it evicts (the caller closes
   * them): first one of the client's own when it is at its bound, then anyone's when the table is full.
   * @param client the new session's client key
   * @param now the clock's time
   * @returns the evicted sessions, or the refusal (429 for the client's bound, 503 for the gateway's)
   */
  makeRoom(client: string, now: number): SessionRoom {
    const evicted: GatewayHttpSession[] = [];
    const { maxSessions, maxSessionsPerClient } = this.#limits;
    const own = this.values().filter((session) => session.client === client);
    if (own.length >= maxSessionsPerClient) {
      const victim = leastRecentlyUsed(own, now);
      if (victim === undefined) {
        return {
          refusal: {
            status: 429,
            code: -32000,
            message: `Too many sessions: this client has ${own.length} open, each with a request running (at most ${maxSessionsPerClient}); end one (DELETE) or retry later`,
            headers: { "Retry-After": "5" },
          },
        };
      }
      this.delete(victim);
      evicted.push(victim);
    }
    if (this.#sessions.size >= maxSessions) {
      const victim = leastRecentlyUsed(this.values(), now);
      if (victim === undefined) {
        return {
          refusal: {
            status: 503,
            code: -32000,
            message: `Too many sessions: this gateway serves at most ${maxSessions}, each with a request running now; retry later`,
            headers: { "Retry-After": "5" },
          },
        };
      }
      this.delete(victim);
      evicted.push(victim);
    }
    return { evicted };
  }
}

/**
 * The session to evict, among those with nothing running: one left unused after `initialize` for
 * `UNUSED_FIRST_AFTER_MS` first (a flood of `initialize` evicts its own), then the least recently used.
 */
function leastRecentlyUsed(
  sessions: readonly GatewayHttpSession[],
  now: number,
): GatewayHttpSession | undefined {
  const abandoned = (session: GatewayHttpSession) =>
    !session.isUsed && now - session.lastActiveAt >= UNUSED_FIRST_AFTER_MS;
  let best: GatewayHttpSession | undefined;
  for (const session of sessions) {
    if (!session.isEvictable) continue;
    if (
      best === undefined ||
      (abandoned(session) && !abandoned(best)) ||
      (abandoned(session) === abandoned(best) && session.lastActiveAt < best.lastActiveAt)
    ) {
      best = session;
    }
  }
  return best;
}
