/**
 * The response size cap applied while an HTTP answer is read: a tool call runs inside
 * {@link withResponseCap}, and the `fetch` of the streamable HTTP transport ({@link createCappedFetch})
 * stops reading an answer of that call once one message of it is larger than the cap allows, so that a
 * hostile or broken server cannot fill the client's memory before the broker measures the result.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { FetchLike } from "@modelcontextprotocol/client";
import { GovernanceError } from "../core/index.js";

/**
 * Wire bytes one message may take for a cap of `maxBytes` content bytes. The cap counts the UTF-8
 * bytes of the texts; on the wire they are JSON strings, where an escape can be up to six times as long
 * as the character (`\u0001`, or a Python server's `\u00e9` for a two-byte `é`), and a result usually
 * carries its data twice (text and `structuredContent`, which the cap counts twice as well). Four times
 * the cap plus 1 MiB of framing keeps every real answer readable; the broker's exact measurement follows.
 * @param maxBytes the source's cap
 * @returns the most wire bytes one message may take
 */
export function wireLimitBytes(maxBytes: number): number {
  return 4 * maxBytes + 1024 * 1024;
}

/** The cap of the call whose requests are being sent. */
interface CallCap {
  maxBytes: number;
  /** Ends the call with the error (the reading already stopped). */
  stop(error: GovernanceError): void;
  /** `maxBytes` counts wire bytes (no allowance for escapes): the cap of answers outside a call. */
  wire?: boolean;
}

/**
 * The content bytes one message may take when no call's cap applies (`initialize`, `tools/list`, the
 * standalone stream, OAuth metadata and token answers of the server or its authorization server): far
 * above any real list or document, but a server cannot fill the process's memory with one answer.
 */
export const UNCAPPED_REQUEST_MAX_BYTES = 16 * 1024 * 1024;

/** Outside a call (and for error answers): the wire bytes are counted as they are, and only the reading stops. */
const OUTSIDE_CALL: CallCap = { maxBytes: UNCAPPED_REQUEST_MAX_BYTES, wire: true, stop: () => {} };

const currentCap = new AsyncLocalStorage<CallCap>();

/**
 * Runs one call so that every HTTP answer its requests receive through {@link createCappedFetch} is read
 * under the cap. The context follows the call's promises, so concurrent calls on one connection each
 * keep their own cap.
 * @param maxBytes the source's cap (`governance.maxResponseBytes`)
 * @param stop called once when an answer of the call crossed it: it must end the call with the error
 * @param run the call
 * @returns what `run` returns
 */
export function withResponseCap<T>(
  maxBytes: number,
  stop: (error: GovernanceError) => void,
  run: () => Promise<T>,
): Promise<T> {
  return currentCap.run({ maxBytes, stop }, run);
}

/**
 * A `fetch` for the SDK's HTTP transports that reads a successful answer under the cap of the call that
 * sent the request (see {@link withResponseCap}). An SSE body (`text/event-stream`) is counted per event,
 * i.e. per JSON-RPC message, since one stream may carry progress notifications before the answer; any
 * other body is counted as a whole. Crossing the limit cancels the body (the socket is closed, so the
 * server stops sending) and ends the call with `RESPONSE_TOO_LARGE`. Requests sent outside a capped call
 * (initialize, `tools/list`, the standalone GET stream, OAuth discovery and tokens) are read under
 * {@link UNCAPPED_REQUEST_MAX_BYTES} per message; crossing it fails that request only.
 * @param base the underlying fetch (default: the global `fetch`)
 * @returns the capped fetch
 */
export function createCappedFetch(base: FetchLike = (url, init) => fetch(url, init)): FetchLike {
  return async (url, init) => {
    const response = await base(url, init);
    if (!response.body) return response;
    // An error answer is the SDK's to read (for its message), under the cap of answers outside a call.
    const cap = (response.ok ? currentCap.getStore() : undefined) ?? OUTSIDE_CALL;
    const isEventStream = response.headers.get("content-type")?.includes("text/event-stream") ?? false;
    const body = response.body.pipeThrough(countingStream(cap, isEventStream));
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Passes bytes through while the current message stays within the wire limit; past it, errors the
 * stream (which cancels the body) and stops the call.
 */
function countingStream(cap: CallCap, isEventStream: boolean): TransformStream<Uint8Array, Uint8Array> {
  const limit = cap.wire ? cap.maxBytes : wireLimitBytes(cap.maxBytes);
  let inMessage = 0;
  // SSE: an event ends at an empty line; `atLineStart` says the last byte ended a line, `afterCR` that it
  // was a CR (so that a following LF completes CRLF rather than making an empty line).
  let atLineStart = true;
  let afterCR = false;
  return new TransformStream({
    transform(chunk, controller) {
      if (!isEventStream || (chunk.indexOf(LF) === -1 && chunk.indexOf(CR) === -1)) {
        inMessage += chunk.length;
        if (chunk.length > 0) atLineStart = afterCR = false;
      } else {
        for (const byte of chunk) {
          if (byte === LF && afterCR) {
            afterCR = false;
            continue;
          }
          if (byte === LF || byte === CR) {
            if (atLineStart) inMessage = 0;
            else inMessage++;
            atLineStart = true;
            afterCR = byte === CR;
            continue;
          }
          atLineStart = afterCR = false;
          if (++inMessage > limit) break;
        }
      }
      if (inMessage > limit) {
        const error = cap.wire
          ? tooLargeOutsideCall(cap.maxBytes, inMessage)
          : tooLarge(cap.maxBytes, inMessage);
        cap.stop(error);
        controller.error(error);
        return;
      }
      controller.enqueue(chunk);
    },
  });
}

function tooLarge(maxBytes: number, read: number): GovernanceError {
  return new GovernanceError(
    "RESPONSE_TOO_LARGE",
    `The response is larger than the source's cap of ${maxBytes} bytes: reading stopped after ${read} bytes of one message. Ask the tool for less (a narrower query, fewer records or pages), or raise the source's governance.maxResponseBytes.`,
    { retryable: false, data: { bytes: read, maxBytes } },
  );
}

function tooLargeOutsideCall(maxBytes: number, read: number): GovernanceError {
  return new GovernanceError(
    "RESPONSE_TOO_LARGE",
    `An answer outside a tool call (the server's tool list or handshake, an error, OAuth metadata or a token) is larger than ${maxBytes} bytes in one message: reading stopped after ${read} bytes.`,
    { retryable: false, data: { bytes: read, maxBytes } },
  );
}
