/**
 * A 2026-07-28 client's `tools/call` whose upstream server asks something that needs its live
 * connection: a 2025-11-25 server's mid-call elicitation, or a sampling request of either revision (a
 * 2026-07-28 server's elicitation round pauses the call instead; see `gateway-stateless.ts`). The
 * upstream call is in flight and its question is a pending request: the call is held open on this
 * replica, the question goes to the client as `input_required`, and the retry that carries the answer
 * resumes the same call, which then answers, or asks again. Nothing is started twice: a retry that
 * reaches another replica, or comes after the question's timeout, finds no held call and is refused;
 * the held call itself ended with its one ledger row (see ARCHITECTURE.md, "The governed MCP gateway").
 */
import { randomUUID } from "node:crypto";
import { GovernanceError } from "../core/index.js";
import { roundOf, type StatelessRound, withRound } from "./gateway-round.js";
import type { GatewayRequestExtra } from "./gateway-session.js";

/** One question of the upstream server, as the client is asked it. */
export interface HeldQuestion {
  /** Its key in `inputRequests` and `inputResponses`. */
  key: string;
  method: "elicitation/create" | "sampling/createMessage";
  params: Record<string, unknown>;
  /** The revision the upstream server asked in (`2025-11-25`: mid-call; `2026-07-28`: a round). */
  era?: string | undefined;
}

/** What a round of a held call ends with: the call's result, or the question to answer first. */
export type HeldStep<R> =
  | { kind: "done"; result: R }
  | { kind: "failed"; error: unknown }
  | { kind: "ask"; call: string; seq: number; question: HeldQuestion };

/** Why a retry cannot resume a held call. */
export type HeldRefusal = "not_held" | "stale" | "busy";

/** Options of {@link HeldCalls}. */
export interface HeldCallsOptions {
  /** How long a question waits for the retry that answers it. @default 5 minutes */
  timeoutMs?: number | undefined;
  /** Most calls held at once on this replica; a question beyond it is refused. @default 256 */
  maxHeld?: number | undefined;
}

interface Pending {
  question: HeldQuestion;
  parse: (value: unknown) => { success: true; data: unknown } | { success: false };
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** One call held across round trips. */
class HeldCall<R> {
  readonly id = randomUUID();
  /** Advances with each answer, so a state answers its own question once. */
  seq = 0;
  readonly controller = new AbortController();
  readonly round: StatelessRound;
  /** The request of the round attached now; notifications go there, else nowhere. */
  attached: GatewayRequestExtra | undefined;
  readonly questions: Pending[] = [];
  outcome: HeldStep<R> | undefined;
  #wake: (() => void) | undefined;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #busy = false;

  constructor(round: StatelessRound) {
    this.round = round;
  }

  /** Wakes the round waiting on this call (a question came, or the call ended). */
  wake(): void {
    const wake = this.#wake;
    this.#wake = undefined;
    wake?.();
  }

  /**
   * Attaches a round, waits until the call ends or asks, and detaches before the round answers (the
   * round's request signal fires when its response closes; the held call must outlive it).
   */
  async step(request: GatewayRequestExtra, timeoutMs: number): Promise<HeldStep<R>> {
    if (this.#busy) throw new Error("a round is attached already");
    this.#busy = true;
    this.#clearTimer();
    this.attached = request;
    const round = roundOf(request);
    if (round) this.round.logLevel = round.logLevel;
    // The client cancelled this round (or went away while it waited): the call is cancelled.
    const cancel = () => this.controller.abort(request.signal.reason);
    if (request.signal.aborted) cancel();
    request.signal.addEventListener("abort", cancel, { once: true });
    try {
      while (this.outcome === undefined && this.questions.length === 0) {
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
      }
    } finally {
      request.signal.removeEventListener("abort", cancel);
      this.attached = undefined;
      this.#busy = false;
    }
    if (this.outcome) return this.outcome;
    const head = this.questions[0] as Pending;
    // Unanswered for too long: the question fails upstream and the call ends (with its row).
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      this.fail(
        new GovernanceError(
          "TIMEOUT",
          `Nobody answered the upstream server's ${head.question.method} within ${timeoutMs} ms; the call was stopped.`,
          { data: { reason: "upstream_input_timeout" } },
        ),
      );
    }, timeoutMs);
    this.#timer.unref?.();
    return { kind: "ask", call: this.id, seq: this.seq, question: head.question };
  }

  /** Whether a round may attach now (none is attached). */
  get isBusy(): boolean {
    return this.#busy;
  }

  /**
   * Answers the head question with the retry's response; a missing or malformed one leaves it asked.
   * @returns whether the question was answered
   */
  answer(responses: Record<string, unknown> | undefined): boolean {
    const head = this.questions[0];
    if (head === undefined) return false;
    const parsed = head.parse(responses?.[head.question.key]);
    if (!parsed.success) return false;
    this.questions.shift();
    this.seq += 1;
    head.resolve(parsed.data);
    return true;
  }

  /** Fails every unanswered question (timeout, gateway closing); the call then ends upstream. */
  fail(error: unknown): void {
    this.#clearTimer();
    for (const pending of this.questions.splice(0)) pending.reject(error);
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}

/**
 * The calls of 2026-07-28 clients held open on this replica while their upstream server waits for an
 * answer (see the module documentation).
 */
export class HeldCalls {
  readonly #calls = new Map<string, HeldCall<unknown>>();
  readonly #timeoutMs: number;
  readonly #maxHeld: number;

  /** @param options the question's timeout and the bound on held calls */
  constructor(options: HeldCallsOptions = {}) {
    this.#timeoutMs = options.timeoutMs ?? 5 * 60_000;
    this.#maxHeld = options.maxHeld ?? 256;
  }

  /** How many calls wait for an answer now. */
  #waiting(): number {
    let count = 0;
    for (const held of this.#calls.values()) if (held.questions.length > 0) count++;
    return count;
  }

  /**
   * Runs a call that may be held: its request asks the client by `input_required` instead of sending
   * a request, and its signal is its own (the round's cancellation, the question's timeout).
   * @param request the first round's request
   * @param run the call, given the request to run with
   * @returns the first round's step
   */
  async start<R>(
    request: GatewayRequestExtra,
    run: (request: GatewayRequestExtra) => Promise<R>,
  ): Promise<HeldStep<R>> {
    const first = roundOf(request);
    const held = new HeldCall<R>({
      capabilities: first?.capabilities,
      logLevel: first?.logLevel,
    });
    const proxy = withRound(this.#requestOf(held, request), held.round);
    this.#calls.set(held.id, held as HeldCall<unknown>);
    run(proxy).then(
      (result) => this.#settle(held, { kind: "done", result }),
      (error: unknown) => this.#settle(held, { kind: "failed", error }),
    );
    return this.#step(held, request);
  }

  /**
   * Resumes a held call with the retry's answer.
   * @param id the held call (from the verified state)
   * @param seq the question the state asked
   * @param responses the retry's `inputResponses`
   * @param request the retry's request
   * @returns the next step, or why the retry cannot resume it
   */
  async resume(
    id: string,
    seq: number,
    responses: Record<string, unknown> | undefined,
    request: GatewayRequestExtra,
  ): Promise<HeldStep<unknown> | { kind: "refused"; reason: HeldRefusal }> {
    const held = this.#calls.get(id);
    if (held === undefined || held.outcome !== undefined) return { kind: "refused", reason: "not_held" };
    if (held.isBusy) return { kind: "refused", reason: "busy" };
    if (held.seq !== seq) return { kind: "refused", reason: "stale" };
    held.answer(responses);
    return this.#step(held, request);
  }

  /** Fails every held question and cancels the calls (the gateway is closing). */
  close(): void {
    for (const held of this.#calls.values()) {
      held.fail(new GovernanceError("CANCELLED", "The gateway is closing."));
      held.controller.abort();
    }
  }

  async #step<R>(held: HeldCall<R>, request: GatewayRequestExtra): Promise<HeldStep<R>> {
    const step = await held.step(request, this.#timeoutMs);
    if (step.kind !== "ask") this.#calls.delete(held.id);
    return step;
  }

  #settle<R>(held: HeldCall<R>, outcome: HeldStep<R>): void {
    held.outcome = outcome;
    held.fail(new GovernanceError("CANCELLED", "The call ended before its question was answered."));
    // Nobody waits (the question timed out): the call ended with its row, and no retry can resume it.
    if (!held.isBusy) this.#calls.delete(held.id);
    held.wake();
  }

  /** The request the held call runs with: questions become `input_required`, the signal its own. */
  #requestOf<R>(held: HeldCall<R>, first: GatewayRequestExtra): GatewayRequestExtra {
    let keys = 0;
    const sendRequest = (
      message: { method: string; params?: unknown },
      schema: { safeParse(value: unknown): { success: true; data: unknown } | { success: false } },
      options?: { signal?: AbortSignal | undefined; upstreamEra?: string | undefined },
    ): Promise<unknown> => {
      if (message.method !== "elicitation/create" && message.method !== "sampling/createMessage") {
        return Promise.reject(
          new GovernanceError("PERMISSION_DENIED", `A 2026-07-28 client cannot be sent ${message.method}.`),
        );
      }
      if (held.questions.length === 0 && this.#waiting() >= this.#maxHeld) {
        return Promise.reject(
          new GovernanceError(
            "UPSTREAM_UNAVAILABLE",
            `The gateway holds ${this.#maxHeld} calls waiting for answers already; the upstream question was refused.`,
            { retryable: true },
          ),
        );
      }
      return new Promise((resolve, reject) => {
        const question: HeldQuestion = {
          key: `upstream_${++keys}`,
          method: message.method as HeldQuestion["method"],
          params: (message.params ?? {}) as Record<string, unknown>,
          ...(options?.upstreamEra === undefined ? {} : { era: options.upstreamEra }),
        };
        const pending: Pending = { question, parse: (value) => schema.safeParse(value), resolve, reject };
        const signal = options?.signal;
        const onAbort = () => {
          const index = held.questions.indexOf(pending);
          if (index >= 0) held.questions.splice(index, 1);
          reject(signal?.reason ?? new GovernanceError("CANCELLED", "The call was cancelled."));
        };
        if (signal?.aborted) return onAbort();
        signal?.addEventListener("abort", onAbort, { once: true });
        held.questions.push(pending);
        held.wake();
      });
    };
    return {
      ...first,
      signal: held.controller.signal,
      // Progress and log messages go to the round attached now, under its own progress token.
      sendNotification: async (notification: { method: string; params?: Record<string, unknown> }) => {
        const round = held.attached;
        if (round === undefined) return;
        if (notification.method === "notifications/progress") {
          const token = round._meta?.progressToken;
          if (token === undefined) return;
          await round.sendNotification({
            ...notification,
            params: { ...notification.params, progressToken: token },
          } as never);
          return;
        }
        await round.sendNotification(notification as never);
      },
      sendRequest,
    } as unknown as GatewayRequestExtra;
  }
}
