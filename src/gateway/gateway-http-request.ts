/**
 * Reading a request to the gateway and answering one with a JSON-RPC error: the POST body, capped,
 * counted against the body budget and timed while it is read, then parsed as JSON; and the error body
 * the SDK's transport sends for its own refusals.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import { type Clock, startTimer } from "../core/index.js";
import type { HttpRefusal } from "./gateway-http-guard.js";
import type { BodyBudget } from "./gateway-http-limits.js";

/** How a body is read: its cap, the shared budget, the client it counts against and its deadline. */
export interface BodyReadLimits {
  /** The largest body. */
  maxBytes: number;
  /** Body bytes held at once, per client and in total. */
  budget: BodyBudget;
  /** The client key the bytes count against. */
  client: string;
  /** The whole body must arrive within this, from the moment its headers did. */
  timeoutMs: number;
  clock: Clock;
}

/**
 * A POST body as JSON: refused with 415 unless it says JSON, with 413 as soon as it is larger than the
 * cap, with 503 when the bodies being read would pass the budget, with 408 when it is not complete in
 * time (the connection is closed after each of these three), with 400 / -32700 when it does not parse.
 * @param limits cap, budget, client, deadline
 * @returns the parsed value, or `undefined` once the refusal is sent (or the client left)
 */
export async function readJsonBody(
  request: IncomingMessage,
  response: ServerResponse,
  limits: BodyReadLimits,
): Promise<{ value: unknown } | undefined> {
  if (!isJsonContentType(request.headers["content-type"])) {
    reply(response, {
      status: 415,
      code: -32000,
      message: "Unsupported Media Type: Content-Type must be application/json",
    });
    return undefined;
  }
  const read = await readLimited(request, limits);
  if (read === "gone") {
    // The client went away mid-body: nobody to answer.
    response.destroy();
    return undefined;
  }
  if (typeof read === "string") {
    // The rest of the body is never read: the connection cannot carry another request.
    response.shouldKeepAlive = false;
    reply(response, BODY_REFUSALS[read](limits));
    return undefined;
  }
  try {
    return { value: JSON.parse(read.text) };
  } catch {
    reply(response, { status: 400, code: -32700, message: "Parse error: Invalid JSON" });
    return undefined;
  }
}

type BodyRefusal = "too-large" | "over-budget" | "timeout";

const BODY_REFUSALS: Record<BodyRefusal, (limits: BodyReadLimits) => HttpRefusal> = {
  "too-large": ({ maxBytes }) => ({
    status: 413,
    code: -32000,
    message: `Payload Too Large: Request body must not exceed ${maxBytes} bytes`,
  }),
  "over-budget": () => ({
    status: 503,
    code: -32000,
    message: "Service Unavailable: too many request bodies are being received; retry later",
    headers: { "Retry-After": "5" },
  }),
  timeout: ({ timeoutMs }) => ({
    status: 408,
    code: -32000,
    message: `Request Timeout: the body did not arrive within ${timeoutMs} ms`,
  }),
};

/**
 * The body as text, holding its bytes in the budget while it is read; a refusal as soon as it is (or
 * declares to be) larger than the cap, passes the budget or its deadline; `gone` when the client left.
 */
function readLimited(
  request: IncomingMessage,
  limits: BodyReadLimits,
): Promise<{ text: string } | BodyRefusal | "gone"> {
  const { maxBytes, budget, client } = limits;
  if (Number(request.headers["content-length"]) > maxBytes) return Promise.resolve("too-large");
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (outcome: { text: string } | BodyRefusal | "gone") => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onGone);
      request.off("close", onGone);
      cancelDeadline();
      budget.give(client, size);
      if (typeof outcome === "string") {
        chunks.length = 0;
        request.pause();
      }
      resolve(outcome);
    };
    const onGone = () => finish("gone");
    const onData = (chunk: Buffer) => {
      if (size + chunk.length > maxBytes) return finish("too-large");
      if (!budget.take(client, chunk.length)) return finish("over-budget");
      size += chunk.length;
      chunks.push(chunk);
    };
    const onEnd = () => finish({ text: Buffer.concat(chunks).toString("utf8") });
    const cancelDeadline = startTimer(limits.clock, limits.timeoutMs, () => finish("timeout"));
    request.on("data", onData);
    request.on("end", onEnd);
    request.on("error", onGone);
    request.on("close", onGone);
  });
}

/** A JSON-RPC error as the SDK's transport sends it; a response already under way is cut instead. */
export function reply(response: ServerResponse, refusal: HttpRefusal): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  response.writeHead(refusal.status, { "Content-Type": "application/json", ...refusal.headers });
  response.end(
    JSON.stringify({ jsonrpc: "2.0", error: { code: refusal.code, message: refusal.message }, id: null }),
  );
}
