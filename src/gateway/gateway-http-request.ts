/**
 * Reading a request to the gateway and answering one with a JSON-RPC error: the POST body, capped while
 * it is read and parsed as JSON, and the error body the SDK's transport sends for its own refusals.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { isJsonContentType } from "@modelcontextprotocol/sdk/shared/mediaType.js";
import type { HttpRefusal } from "./gateway-http-guard.js";

/**
 * A POST body as JSON: refused with 415 unless it says JSON, with 413 as soon as it is larger than the
 * cap (the connection is then closed), with 400 / -32700 when it does not parse.
 * @param maxBytes the body cap
 * @returns the parsed value, or `undefined` once the refusal is sent (or the client left)
 */
export async function readJsonBody(
  request: IncomingMessage,
  response: ServerResponse,
  maxBytes: number,
): Promise<{ value: unknown } | undefined> {
  if (!isJsonContentType(request.headers["content-type"])) {
    reply(response, {
      status: 415,
      code: -32000,
      message: "Unsupported Media Type: Content-Type must be application/json",
    });
    return undefined;
  }
  const text = await readCapped(request, maxBytes);
  if (text === null) {
    // The client went away mid-body: nobody to answer.
    response.destroy();
    return undefined;
  }
  if (text === undefined) {
    // The rest of the body is never read: the connection cannot carry another request.
    response.shouldKeepAlive = false;
    reply(response, {
      status: 413,
      code: -32000,
      message: `Payload Too Large: Request body must not exceed ${maxBytes} bytes`,
    });
    return undefined;
  }
  try {
    return { value: JSON.parse(text) };
  } catch {
    reply(response, { status: 400, code: -32700, message: "Parse error: Invalid JSON" });
    return undefined;
  }
}

/**
 * The body as text; `undefined` once it is (or declares to be) larger than `maxBytes`; `null` when the
 * client went away before its end.
 */
function readCapped(request: IncomingMessage, maxBytes: number): Promise<string | undefined | null> {
  if (Number(request.headers["content-length"]) > maxBytes) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      request.off("data", onData);
      request.off("end", onEnd);
      request.off("error", onGone);
      request.off("close", onGone);
    };
    const onGone = () => {
      stop();
      resolve(null);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      stop();
      request.pause();
      resolve(undefined);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
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
