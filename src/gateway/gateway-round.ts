/**
 * What a 2026-07-28 request carries that a 2025-11-25 session keeps on its connection: the client's
 * capabilities and log level (in the request's `_meta`), and how the request may ask its user (by an
 * `input_required` result, never by a request to the client). The stateless face attaches it to the
 * request it hands a session method, so the one method table serves both faces (see ARCHITECTURE.md,
 * "The governed MCP gateway").
 */
import type { ClientCapabilities, LoggingLevel } from "@modelcontextprotocol/sdk/types.js";

/** One 2026-07-28 request, as the session's methods see it. */
export interface StatelessRound {
  /** What the client declared in this request's `_meta`. */
  capabilities: ClientCapabilities | undefined;
  /** The request's log level; absent: the client wants no log messages (the revision's rule). */
  logLevel: LoggingLevel | undefined;
  /**
   * How a read under an `approval` surface policy asks: resolves with the answer this request's retry
   * carried, or throws `SurfaceInputRequired` to be answered by an `input_required` round trip. Absent:
   * this method cannot ask (only `prompts/get` and `resources/read` may return `input_required`).
   */
  ask?: ((question: string) => Promise<boolean>) | undefined;
  /** The id the read's row is keyed by, so that the answered retry cannot be replayed. */
  callId?: string | undefined;
}

const rounds = new WeakMap<object, StatelessRound>();

/**
 * Marks a request object as a 2026-07-28 round.
 * @param request the request handed to a session method
 * @param round what the request carries
 * @returns the request
 */
export function withRound<T extends object>(request: T, round: StatelessRound): T {
  rounds.set(request, round);
  return request;
}

/**
 * @param request the request a session method was handed
 * @returns its 2026-07-28 round, or `undefined` for a 2025-11-25 session's request
 */
export function roundOf(request: object): StatelessRound | undefined {
  return rounds.get(request);
}

/**
 * Thrown by a round's `ask` when the question must go to the client as `input_required`: the read is
 * neither run nor recorded; the retry that carries the answer runs it (and writes its one row).
 */
export class SurfaceInputRequired extends Error {
  /** The question for the user. */
  readonly question: string;

  /** @param question the question for the user */
  constructor(question: string) {
    super(question);
    this.name = "SurfaceInputRequired";
    this.question = question;
  }
}
