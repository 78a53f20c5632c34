/**
 * One transfer attempt of a governed download: follows at most 5 redirects by hand (each target is
 * re-checked, so a redirect cannot leave HTTPS or the allowlist), resumes with an HTTP Range request
 * from the bytes already staged, and enforces the size cap while streaming.
 */
import { GovernanceError } from "../core/index.js";
import { downloadUrlProblem } from "./download-candidate.js";
import type { StagingFile } from "./staging-file.js";

/** The fetch seam (the global `fetch` by default). */
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
  signal: AbortSignal;
  /** Called with the running total after each chunk. */
  onBytes: (total: number) => void;
}

/**
 * Streams the URL into the staging file, appending from `offset` when the server honours Range.
 * @param options the fetch seam, URL, allowlist, staging file, offset, cap, signal and progress hook
 * @returns the total bytes in the staging file
 * @throws GovernanceError `PERMISSION_DENIED` for a redirect off HTTPS or the allowlist, or too many;
 *   `RESPONSE_TOO_LARGE` over `maxBytes`; `NOT_FOUND`/`UPSTREAM_UNAVAILABLE` for HTTP errors (5xx and
 *   429 retryable); `UPSTREAM_UNAVAILABLE` (retryable) for a dropped connection; `CANCELLED` on abort
 */
export async function transferOnce(options: TransferOptions): Promise<number> {
  const response = await fetchFollowingRedirects(options);
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
  try {
    if (response.body === null) return total;
    for await (const chunk of response.body as AsyncIterable<Uint8Array>) {
      if (options.signal.aborted) throw cancelled();
      if (total + chunk.byteLength > options.maxBytes) throw tooLarge(options.maxBytes);
      await file.write(chunk);
      total += chunk.byteLength;
      options.onBytes(total);
    }
  } catch (cause) {
    if (cause instanceof GovernanceError) throw cause;
    if (options.signal.aborted) throw cancelled();
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

async function fetchFollowingRedirects(options: TransferOptions): Promise<Response> {
  let url = options.url;
  for (let hop = 0; ; hop++) {
    const problem = downloadUrlProblem(url, options.hosts);
    if (problem !== undefined) {
      throw new GovernanceError(
        "PERMISSION_DENIED",
        `Refused ${hop === 0 ? "URL" : "redirect"}: ${problem}.`,
      );
    }
    const headers: Record<string, string> = {};
    if (options.offset > 0) headers.range = `bytes=${options.offset}-`;
    let response: Response;
    try {
      response = await options.fetch(url, { redirect: "manual", headers, signal: options.signal });
    } catch (cause) {
      if (options.signal.aborted) throw cancelled();
      throw new GovernanceError("UPSTREAM_UNAVAILABLE", `Fetching ${url} failed.`, {
        retryable: true,
        cause,
      });
    }
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

function cancelled(): GovernanceError {
  return new GovernanceError("CANCELLED", "The download was cancelled.");
}
