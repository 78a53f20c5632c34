/**
 * HTTP to one LLM Wiki: the configured origin only, the Bearer token only when set, a timeout, a size cap,
 * no redirects, and failures as `ProviderError`s whose messages name the wiki URL and the reason.
 */

import { parseRetryAfterMs } from "../../contract/index.js";
import { type Clock, PACKAGE_VERSION, systemClock } from "../../core/index.js";
import { isProviderError, ProviderError } from "../sources/provider-error.js";
import { readCappedBody } from "../sources/read-capped-body.js";
import { WIKI_API_PREFIX } from "./wiki-origin.js";

/** Options of `WikiHttp`. */
export interface WikiHttpOptions {
  /** The validated origin (`parseWikiOrigin`). */
  origin: string;
  /** Sent as `Authorization: Bearer <token>` when set and non-empty. */
  token?: string | undefined;
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** @default systemClock */
  clock?: Clock;
  /** @default 20000 */
  timeoutMs?: number;
  /** @default 5 MiB */
  maxResponseBytes?: number;
}

/** A wiki answer that passed the status and size checks. */
export interface WikiResponse {
  status: number;
  /** The raw body, hashed for citation versions. */
  text: string;
  /** The parsed JSON body. */
  json: unknown;
}

/** The HTTP client of the LLM Wiki bridge. */
export class WikiHttp {
  readonly #o: Required<Omit<WikiHttpOptions, "token">> & { token: string | undefined };

  /** @param options origin, token, fetch, clock, timeout and size cap */
  constructor(options: WikiHttpOptions) {
    this.#o = {
      fetch: globalThis.fetch,
      clock: systemClock,
      timeoutMs: 20_000,
      maxResponseBytes: 5 * 1024 * 1024,
      ...options,
      token: options.token?.trim() || undefined,
    };
  }

  /** The configured origin. */
  get origin(): string {
    return this.#o.origin;
  }

  /**
   * Sends one request below `<origin>/api/v1`.
   * @param method GET or POST
   * @param path the path below the API prefix, already encoded, starting with `/`
   * @param body a JSON body for POST
   * @param signal the MCP request's cancellation signal
   * @returns the answer with its raw text and parsed JSON
   * @throws ProviderError `not_found` (404), `unauthorized` (401/403), `invalid_input` (400/422),
   *   `rate_limited` (429), `upstream_unavailable` (unreachable, timeout, 3xx, 5xx, non-JSON),
   *   `response_too_large`
   */
  async request(
    method: "GET" | "POST",
    path: string,
    body?: unknown,
    signal?: AbortSignal,
  ): Promise<WikiResponse> {
    const url = `${this.#o.origin}${WIKI_API_PREFIX}${path}`;
    const headers: Record<string, string> = {
      accept: "application/json",
      "user-agent": `sciencegate/${PACKAGE_VERSION} (llm-wiki bridge)`,
    };
    if (this.#o.token) headers.authorization = `Bearer ${this.#o.token}`;
    if (body !== undefined) headers["content-type"] = "application/json";
    const timeout = new AbortController();
    const stopTimer = new AbortController();
    let timedOut = false;
    this.#o.clock.sleep(this.#o.timeoutMs, stopTimer.signal).then(
      () => {
        timedOut = true;
        timeout.abort(new Error("wiki timeout"));
      },
      () => {},
    );
    try {
      const init: RequestInit = {
        method,
        headers,
        redirect: "manual",
        signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal,
      };
      if (body !== undefined) init.body = JSON.stringify(body);
      const response = await this.#o.fetch(url, init);
      if (!response.ok) {
        await response.body?.cancel().catch(() => {});
        throw this.#statusError(response);
      }
      const text = await readCappedBody(response, this.#o.maxResponseBytes, this.#o.origin);
      return { status: response.status, text, json: this.#parse(text, response.status) };
    } catch (error) {
      if (isProviderError(error)) throw error;
      if (timedOut) {
        throw new ProviderError(
          "upstream_unavailable",
          `The LLM Wiki at ${this.#o.origin} did not answer within ${this.#o.timeoutMs} ms.`,
          { cause: error },
        );
      }
      if (signal?.aborted) throw error;
      throw new ProviderError(
        "upstream_unavailable",
        `Could not reach the LLM Wiki at ${this.#o.origin} (${reasonOf(error)}). Check that it runs and that ${"SCIENCE_AGENT_LLM_WIKI_URL"} points at it from this machine.`,
        { cause: error },
      );
    } finally {
      stopTimer.abort();
    }
  }

  #parse(text: string, status: number): unknown {
    try {
      return JSON.parse(text);
    } catch (error) {
      throw new ProviderError(
        "upstream_unavailable",
        `The LLM Wiki at ${this.#o.origin} sent a malformed JSON answer.`,
        { status, cause: error },
      );
    }
  }

  #statusError(response: Response): ProviderError {
    const { status } = response;
    const wiki = `The LLM Wiki at ${this.#o.origin}`;
    if (status === 404)
      return new ProviderError("not_found", `${wiki} has no such page (HTTP 404).`, { status });
    if (status === 401 || status === 403) {
      const hint = this.#o.token
        ? "check SCIENCE_AGENT_LLM_WIKI_TOKEN"
        : "it may need a token in SCIENCE_AGENT_LLM_WIKI_TOKEN";
      return new ProviderError("unauthorized", `${wiki} refused the request (HTTP ${status}); ${hint}.`, {
        status,
      });
    }
    if (status === 429) {
      const retryAfterMs = parseRetryAfterMs(response.headers.get("retry-after"), this.#o.clock.now());
      return new ProviderError("rate_limited", `${wiki} rate-limited the request (HTTP 429).`, {
        status,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
    }
    if (status === 400 || status === 422) {
      return new ProviderError("invalid_input", `${wiki} rejected the request as invalid (HTTP ${status}).`, {
        status,
      });
    }
    if (status >= 300 && status < 400) {
      return new ProviderError(
        "upstream_unavailable",
        `${wiki} redirected (HTTP ${status}); redirects are not followed.`,
        { status },
      );
    }
    return new ProviderError("upstream_unavailable", `${wiki} answered HTTP ${status}.`, { status });
  }
}

/** The most specific reason of a fetch failure (`ECONNREFUSED`, `ENOTFOUND`, ...). */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; message?: unknown } } | undefined)?.cause;
  if (typeof cause?.code === "string") return cause.code;
  if (typeof cause?.message === "string" && cause.message !== "") return cause.message;
  return error instanceof Error ? error.message : String(error);
}
