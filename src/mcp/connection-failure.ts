/** Telling a broken connection apart from an answer the server gave. */
import { ProtocolError, SdkError, SdkErrorCode, SdkHttpError, SseError } from "@modelcontextprotocol/client";
import { redactUrls } from "../core/index.js";

/** SDK error codes that mean the connection itself is gone or unusable. */
const BROKEN_CONNECTION_CODES: ReadonlySet<string> = new Set([
  SdkErrorCode.ConnectionClosed,
  SdkErrorCode.NotConnected,
  SdkErrorCode.SendFailed,
  SdkErrorCode.ClientHttpFailedToOpenStream,
  SdkErrorCode.ClientHttpUnexpectedContent,
  SdkErrorCode.ClientHttpNotImplemented,
]);

/**
 * Whether an error thrown by the SDK means the connection to the server is broken (child exited, socket
 * refused, HTTP transport error), as opposed to a JSON-RPC error, a timeout or an abort, which the pool
 * hands back unchanged.
 * @param error anything the SDK threw
 * @returns true for closed or failed connections, HTTP failures of the transport other than auth
 *   walls, failed fetches and "Not connected"
 */
export function isConnectionFailure(error: unknown): boolean {
  if (error instanceof ProtocolError) return false;
  // An auth wall is an answer (UNAUTHORIZED), not a broken connection to reconnect.
  if (error instanceof SdkHttpError) {
    const status = error.data?.status;
    return status !== 401 && status !== 403;
  }
  if (error instanceof SdkError) return BROKEN_CONNECTION_CODES.has(error.code);
  if (error instanceof SseError) return true;
  if (!(error instanceof Error)) return false;
  // Node's fetch rejects with TypeError("fetch failed") when the socket cannot be opened.
  if (error instanceof TypeError && error.message === "fetch failed") return true;
  // Transports throw this when a message is sent after the peer went away.
  return error.message === "Not connected";
}

/**
 * The limit named by the stdio transport's read-buffer overflow: the SDK's `ReadBuffer` throws a plain
 * `Error` when one message from the child grows past `maxBufferSize` (10 MiB by default), hands it to
 * `onerror` and closes the transport. Its wording is the only signal, pinned by a test against the SDK.
 * @param error an error the transport reported
 * @returns the limit in bytes, or undefined for any other error
 */
export function readBufferLimitOf(error: unknown): number | undefined {
  if (!(error instanceof Error)) return undefined;
  const match = /^ReadBuffer exceeded maximum size of (\d+) bytes$/.exec(error.message);
  return match ? Number(match[1]) : undefined;
}

/**
 * A readable one-line description of a failure, for error messages.
 * @param error anything thrown
 * @returns the message, with the cause's message when it adds something (e.g. `ECONNREFUSED`)
 */
export function describeFailure(error: unknown): string {
  if (!(error instanceof Error)) return redactUrls(String(error));
  const cause = error.cause instanceof Error ? error.cause.message : undefined;
  // Transport errors may quote the endpoint URL; its query and user information stay out.
  return redactUrls(cause && !error.message.includes(cause) ? `${error.message} (${cause})` : error.message);
}
