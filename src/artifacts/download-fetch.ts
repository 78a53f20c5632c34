/**
 * One transfer attempt of a governed download: follows at most 5 redirects by hand (each target is
 * re-checked, so a redirect cannot leave HTTPS, the allowlist or the public addresses), resumes with an
 * HTTP Range request from the bytes already staged, and enforces the size cap, the headers timeout and
 * the idle timeout while streaming.
 */
import { type Clock, GovernanceError } from "../core/index.js";
import { downloadUrlProblem } from "./download-candidate.js";
import { DeadlineTimer, downloadTimeout, stoppedError, untilAborted } from "./download-deadline.js";
import type { StagingFile } from "./staging-file.js";

/**
 * The fetch seam: called with `redirect: "manual"`, an optional `range` header and the attempt's signal;
 * must return 3xx unfollowed. The default is `createPinnedHttpsFetch`; an injected one is responsible for
 * connecting only to the addresses the address check passed.
 */
export type DownloadFetch = (url: string, init: RequestInit) => Promise<Response>;

/** Redirects one attempt may follow. */
export const MAX_DOWNLOAD_REDIRECTS = 5;

/** Input of {@link transferOnce}. */
export interface TransferOptions {
  fetch: DownloadFetch;
  url: string;
  hosts: ReadonlySet<string>;
  staging: StagingFile;
  /** Bytes already in the staging file from an earlier attempt. */
  offset: number;
  maxBytes: number;
  /** Times the headers and idle timeouts. */
  clock: Clock;
  /** Per request, until its response headers (the address check included). */
  headersTimeoutMs: number;
  /** Per wait for the next body bytes. */
  idleTimeoutMs: number;
  /** Refuses a host that resolves to a non-public address; run before every request. */
  checkHost: (hostname: string) => Promise<void>;
  /** Cancellation and the job deadline (its reason, a `TIMEOUT`, is what the attempt throws). */
  signal: AbortSignal;
  /** Called with the running total after each chunk. */
  onBytes: (total: number) => void;
}

/**
 * Streams the URL into the staging file, appending from `offset` when the server honours Range.
 * @param options the fetch seam, URL, allowlist, address check, staging file, offset, cap, deadlines,
 *   signal and progress hook
 * @returns the total bytes in the staging file
 * @throws GovernanceError `PERMISSION_DENIED` for a redirect off HTTPS or the allowlist, or too many, or
 *   a host resolving to a non-public address; `RESPONSE_TOO_LARGE` over `maxBytes`;
 *   `NOT_FOUND`/`UPSTREAM_UNAVAILABLE` for HTTP errors (5xx and 429 retryable); `UPSTREAM_UNAVAILABLE`
 *   (retryable) for a dropped connection; `TIMEOUT` (retryable) when the headers or idle timeout hits,
 *   or the signal's `TIMEOUT` (the job deadline); `CANCELLED` on abort
 */
export async function transferOnce(options: TransferOptions): Promise<number> {
  const timer = new DeadlineTimer(options.clock, options.signal);
  try {
    return await transferTimed({ ...options, signal: timer.signal }, timer);
  } finally {
    timer.disarm();
  }
}

async function transferTimed(options: TransferOptions, timer: DeadlineTimer): Promise<number> {
  const response = await fetchFollowingRedirects(options, timer);
  let total = options.offset;
  if (response.status === 200 && total > 0) total = 0; // the server ignored Range: start over
  if (response.status !== 200 && response.status !== 206) {
    throw httpError(response.status);
  }
  const announced = Number(response.headers.get("content-length") ?? Number.NaN);
  if (Number.isFinite(announced) && total + announced > options.maxBytes) {
    await response.body?.cancel().catch(() => undefined);
    throw tooLarge(options.maxBytes);
  }
  const file = await options.staging.open({ truncateTo: total });
  const reader = response.body?.getReader();
  const idleMs = options.idleTimeoutMs;
  const host = new URL(response.url || options.url).hostname;
  try {
    if (reader === undefined) return total;
    for (;;) {
      timer.arm(idleMs, () =>
        downloadTimeout(
          "idleTimeoutMs",
          idleMs,
          `No body bytes from ${host} for ${idleMs} ms after ${total} bytes`,
          {
            bytesDownloaded: total,
          },
        ),
      );
      const { done, value: chunk } = await untilAborted(reader.read(), options.signal);
      timer.disarm();
      if (done) break;
      if (options.signal.aborted) throw stoppedError(options.signal);
      if (total + chunk.byteLength > options.maxBytes) throw tooLarge(options.maxBytes);
      await file.write(chunk);
      total += chunk.byteLength;
      options.onBytes(total);
    }
  } catch (cause) {
    reader?.cancel().catch(() => undefined);
    if (options.signal.aborted) throw stoppedError(options.signal);
    if (cause instanceof GovernanceError) throw cause;
    throw new GovernanceError("UPSTREAM_UNAVAILABLE", `The connection dropped after ${total} bytes.`, {
      retryable: true,
      cause,
      data: { bytesDownloaded: total },
    });
  } finally {
    await file.close();
  }
  return total;
}

async function fetchFollowingRedirects(options: TransferOptions, timer: DeadlineTimer): Promise<Response> {
  let url = options.url;
  const { signal, headersTimeoutMs: headersMs } = options;
  for (let hop = 0; ; hop++) {
    const problem = downloadUrlProblem(url, options.hosts);
    if (problem !== undefined) {
      throw new GovernanceError(
        "PERMISSION_DENIED",
        `Refused ${hop === 0 ? "URL" : "redirect"}: ${problem}.`,
      );
    }
    const host = new URL(url).hostname;
    timer.arm(headersMs, () =>
      downloadTimeout(
        "headersTimeoutMs",
        headersMs,
        `No response headers from ${host} within ${headersMs} ms`,
      ),
    );
    const headers: Record<string, string> = {};
    if (options.offset > 0) headers.range = `bytes=${options.offset}-`;
    let response: Response;
    try {
      await untilAborted(options.checkHost(host), signal);
      response = await untilAborted(options.fetch(url, { redirect: "manual", headers, signal }), signal);
    } catch (cause) {
      if (signal.aborted) throw stoppedError(signal);
      if (cause instanceof GovernanceError) throw cause;
      throw new GovernanceError("UPSTREAM_UNAVAILABLE", `Fetching ${url} failed.`, {
        retryable: true,
        cause,
      });
    }
    timer.disarm();
    if (response.status < 300 || response.status >= 400 || response.status === 304) return response;
    const location = response.headers.get("location");
    await response.body?.cancel().catch(() => undefined);
    if (location === null) throw httpError(response.status);
    if (hop >= MAX_DOWNLOAD_REDIRECTS) {
      throw new GovernanceError("PERMISSION_DENIED", `More than ${MAX_DOWNLOAD_REDIRECTS} redirects.`);
    }
    url = new URL(location, url).href;
  }
}

function httpError(status: number): GovernanceError {
  if (status === 404 || status === 410) {
    return new GovernanceError("NOT_FOUND", `The server answered HTTP ${status}.`);
  }
  const retryable = status === 429 || status === 408 || status >= 500;
  return new GovernanceError("UPSTREAM_UNAVAILABLE", `The server answered HTTP ${status}.`, { retryable });
}

function tooLarge(maxBytes: number): GovernanceError {
  return new GovernanceError("RESPONSE_TOO_LARGE", `The file is larger than the ${maxBytes}-byte cap.`);
}
