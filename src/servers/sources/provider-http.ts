/**
 * The one HTTP path from a source tool to its provider: base URLs from the environment, identification
 * (`User-Agent`, NCBI `tool`/`email`/`api_key`), no silent redirects, a request timeout, a streaming size cap,
 * and the mapping of HTTP failures to structured `ProviderError`s.
 */
import { parseRetryAfterMs } from "../../contract/index.js";
import { type Clock, PACKAGE_VERSION, systemClock } from "../../core/index.js";
import { resolveBaseUrls, type SourceEnv } from "./provider-env.js";
import { isProviderError, ProviderError } from "./provider-error.js";
import { readCappedBody } from "./read-capped-body.js";
import type {
  ProviderAnswer,
  ProviderRequest,
  ProviderResponse,
  SourceEndpoint,
  SourceHttp,
  SourceModule,
} from "./source-module.js";

/** Default cap of one provider response. */
export const DEFAULT_MAX_RESPONSE_BYTES = 5 * 1024 * 1024;
/** Default time a provider has to answer one request, body included. */
export const DEFAULT_PROVIDER_TIMEOUT_MS = 20_000;

/** Options of a `ProviderHttp`. */
export interface ProviderHttpOptions {
  /** @default globalThis.fetch */
  fetch?: typeof fetch;
  /** Times the request timeout and HTTP-date `Retry-After` values. @default systemClock */
  clock?: Clock;
  /** Base URL overrides (see ./provider-env.ts), `NCBI_EMAIL`, `NCBI_API_KEY`, `SCIENCEGATE_CONTACT_EMAIL`. @default {} */
  env?: SourceEnv;
  /** @default DEFAULT_PROVIDER_TIMEOUT_MS */
  timeoutMs?: number;
  /** @default DEFAULT_MAX_RESPONSE_BYTES */
  maxResponseBytes?: number;
}

/** The provider HTTP client of the sources server. */
export class ProviderHttp {
  readonly #fetch: typeof fetch;
  readonly #clock: Clock;
  readonly #env: SourceEnv;
  readonly #timeoutMs: number;
  readonly #maxBytes: number;
  readonly #baseUrls = new Map<string, Map<string, string>>();

  /** @param options fetch, clock, environment, timeout and size cap */
  constructor(options: ProviderHttpOptions = {}) {
    this.#fetch = options.fetch ?? globalThis.fetch;
    this.#clock = options.clock ?? systemClock;
    this.#env = options.env ?? {};
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_PROVIDER_TIMEOUT_MS;
    this.#maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  }

  /**
   * The base URLs of a source's endpoints, read from the environment once.
   * @param source the source module
   * @returns endpoint key → base URL
   * @throws GovernanceError `INVALID_CONFIG` when an override is not an http(s) URL
   */
  baseUrlsOf(source: SourceModule): Map<string, string> {
    let urls = this.#baseUrls.get(source.id);
    if (!urls) {
      urls = resolveBaseUrls(source, this.#env);
      this.#baseUrls.set(source.id, urls);
    }
    return urls;
  }

  /**
   * HTTP to one source, for one tool call.
   * @param source the source module
   * @param signal the MCP request's cancellation signal
   * @returns the bound client
   */
  forSource(source: SourceModule, signal?: AbortSignal): SourceHttp {
    const urls = this.baseUrlsOf(source);
    return {
      request: (endpointKey, path, request = {}) => {
        const endpoint = source.endpoints.find((e) => e.key === endpointKey);
        const base = urls.get(endpointKey);
        if (!endpoint || base === undefined)
          throw new Error(`Source ${source.id} has no endpoint '${endpointKey}'.`);
        return this.#send(this.#url(endpoint, base, path, request), request, signal);
      },
    };
  }

  #url(endpoint: SourceEndpoint, base: string, path: string, request: ProviderRequest): URL {
    const url = new URL(base + path);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.append(name, String(value));
    }
    if (endpoint.ncbi) {
      // NCBI asks every E-utilities client to identify itself; the key raises the limit from 3 to 10 req/s.
      url.searchParams.set("tool", "sciencegate");
      const email = this.#env.NCBI_EMAIL?.trim();
      const apiKey = this.#env.NCBI_API_KEY?.trim();
      if (email) url.searchParams.set("email", email);
      if (apiKey) url.searchParams.set("api_key", apiKey);
    }
    return url;
  }

  #userAgent(): string {
    const contact = (this.#env.SCIENCEGATE_CONTACT_EMAIL ?? this.#env.NCBI_EMAIL)?.trim();
    const mail = contact ? `; mailto:${contact}` : "";
    return `sciencegate/${PACKAGE_VERSION} (+https://www.npmjs.com/package/sciencegate${mail})`;
  }

  async #send(
    url: URL,
    request: ProviderRequest,
    signal: AbortSignal | undefined,
  ): Promise<ProviderResponse> {
    const host = url.host;
    const timeout = new AbortController();
    const stopTimer = new AbortController();
    let timedOut = false;
    this.#clock.sleep(this.#timeoutMs, stopTimer.signal).then(
      () => {
        timedOut = true;
        timeout.abort(new Error("provider timeout"));
      },
      () => {},
    );
    const headers: Record<string, string> = {
      "user-agent": this.#userAgent(),
      accept: request.accept ?? "*/*",
    };
    if (request.contentType) headers["content-type"] = request.contentType;
    try {
      const init: RequestInit = {
        method: request.method ?? "GET",
        headers,
        redirect: "manual",
        signal: signal ? AbortSignal.any([signal, timeout.signal]) : timeout.signal,
      };
      if (request.body !== undefined) init.body = request.body;
      const response = await this.#fetch(url, init);
      if (!response.ok && !request.acceptStatuses?.includes(response.status)) {
        await response.body?.cancel().catch(() => {});
        throw this.#statusError(response, url);
      }
      const text = await readCappedBody(response, this.#maxBytes, host);
      return {
        status: response.status,
        host,
        contentType: response.headers.get("content-type") ?? undefined,
        text,
        headers: response.headers,
      };
    } catch (error) {
      if (isProviderError(error)) throw error;
      if (timedOut) {
        throw new ProviderError(
          "upstream_unavailable",
          `${host} did not answer within ${this.#timeoutMs} ms.`,
          {
            cause: error,
          },
        );
      }
      if (signal?.aborted) throw error;
      throw new ProviderError("upstream_unavailable", `Could not reach ${host}.`, { cause: error });
    } finally {
      stopTimer.abort();
    }
  }

  #statusError(response: Response, url: URL): ProviderError {
    const { status } = response;
    const host = url.host;
    if (status >= 300 && status < 400) {
      const location = response.headers.get("location");
      // Name the target without its query string: it may repeat the user's query.
      const target = location ? new URL(location, url) : undefined;
      const where = target ? `${target.origin}${target.pathname}` : "an unnamed location";
      return new ProviderError(
        "upstream_unavailable",
        `${host} redirected (HTTP ${status}) to ${where}; redirects are not followed.`,
        { status },
      );
    }
    if (status === 429) {
      const retryAfterMs = parseRetryAfterMs(response.headers.get("retry-after"), this.#clock.now());
      return new ProviderError("rate_limited", `${host} rate-limited the request (HTTP 429).`, {
        status,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      });
    }
    if (status === 404)
      return new ProviderError("not_found", `${host} has no such record (HTTP 404).`, { status });
    if (status === 401 || status === 403) {
      return new ProviderError("unauthorized", `${host} refused the request (HTTP ${status}).`, { status });
    }
    if (status === 400 || status === 422) {
      return new ProviderError("invalid_input", `${host} rejected the request as invalid (HTTP ${status}).`, {
        status,
      });
    }
    return new ProviderError("upstream_unavailable", `${host} answered HTTP ${status}.`, { status });
  }
}

/**
 * Parses a JSON answer.
 * @param response the provider answer
 * @returns the parsed value
 * @throws ProviderError `upstream_unavailable` (with the status) when the body is not JSON
 */
export function parseJsonBody(response: ProviderAnswer): unknown {
  try {
    return JSON.parse(response.text);
  } catch (error) {
    throw new ProviderError("upstream_unavailable", `${response.host} sent a malformed JSON answer.`, {
      status: response.status,
      cause: error,
    });
  }
}
