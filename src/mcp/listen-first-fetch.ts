/**
 * The order of a streamable HTTP connection's first requests. Once the server accepts
 * `notifications/initialized`, the SDK's transport opens its standalone event stream (a GET) without
 * waiting for it, so the first request after connecting could reach the server before that stream did.
 * A server sends on that stream what answers no request of the client's own stream (an elicitation or
 * sampling request raised inside a tool, a list change) and drops it while no stream is open: the call
 * would wait for an answer to a question nobody saw. A resumed call's reconnection would likewise be
 * taken for the first GET. So every other request waits until that GET is answered or fails
 * (ARCHITECTURE.md, "Upstream requests").
 */
import type { FetchLike } from "@modelcontextprotocol/client";
import { type Clock, systemClock } from "../core/index.js";
import { raceWithClock } from "./race-with-clock.js";

/** Options of {@link createListenFirstFetch}. */
export interface ListenFirstFetchOptions {
  /**
   * The longest a request waits for the event stream to be answered; past it, it goes anyway (a server
   * that holds the stream's headers back must not stall the connection).
   * @default 2000
   */
  maxWaitMs?: number;
  /** The clock that measures `maxWaitMs`. @default the system clock */
  clock?: Clock;
}

/** The initialized notification is a few dozen bytes: longer bodies are never parsed. */
const MAX_INITIALIZED_BYTES = 1024;

/**
 * A `fetch` for the streamable HTTP transport that holds requests back from the moment the server
 * accepted `notifications/initialized` (202) until the event-stream GET that follows has been answered
 * (or failed), for at most `maxWaitMs`.
 * @param base the fetch that sends the requests
 * @param options the wait's bound and clock
 * @returns the ordering fetch
 */
export function createListenFirstFetch(base: FetchLike, options: ListenFirstFetchOptions = {}): FetchLike {
  const maxWaitMs = options.maxWaitMs ?? 2000;
  const clock = options.clock ?? systemClock;
  /** Settles once the expected event stream has been answered; set while it has not. */
  let listening: { promise: Promise<void>; settle: () => void } | undefined;
  let isStreamSent = false;

  return async (url, init) => {
    if (listening !== undefined) {
      if (!isStreamSent && isEventStreamRequest(init)) {
        isStreamSent = true;
        const { settle } = listening;
        const answer = base(url, init);
        answer.then(settle, settle);
        return answer;
      }
      await raceWithClock(listening.promise, clock, maxWaitMs, init?.signal ?? undefined);
    }
    const response = await base(url, init);
    if (response.status === 202 && isInitializedNotification(init)) {
      let settle: () => void = () => undefined;
      const promise = new Promise<void>((resolve) => {
        settle = resolve;
      });
      const expected = { promise, settle };
      listening = expected;
      isStreamSent = false;
      void promise.then(() => {
        if (listening === expected) listening = undefined;
      });
    }
    return response;
  };
}

function isEventStreamRequest(init: RequestInit | undefined): boolean {
  if ((init?.method ?? "GET").toUpperCase() !== "GET") return false;
  return new Headers(init?.headers).get("accept")?.includes("text/event-stream") ?? false;
}

function isInitializedNotification(init: RequestInit | undefined): boolean {
  const body = init?.body;
  if (init?.method?.toUpperCase() !== "POST" || typeof body !== "string") return false;
  if (body.length > MAX_INITIALIZED_BYTES || !body.includes("notifications/initialized")) return false;
  try {
    const message = JSON.parse(body) as { method?: unknown; id?: unknown };
    return message.method === "notifications/initialized" && message.id === undefined;
  } catch {
    return false;
  }
}
