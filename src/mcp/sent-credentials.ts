/**
 * The credentials an HTTP server was sent (its configured headers, the `Authorization` of every request:
 * OAuth access tokens, bearer keys, a client's basic credentials), kept out of what that server answers.
 * A hostile server that echoes its token in a result or an error text would otherwise have it written
 * to the ledger, the content store, the model's context and logs, where OAuth tokens must never be
 * (ARCHITECTURE.md, "Protected servers"). Only verbatim copies are found: a server that encodes the
 * token can still carry it out, as it can anyway with its own copy.
 */
import type { FetchLike } from "@modelcontextprotocol/client";
import type { PoolCallOptions, UpstreamRelay, UpstreamRequestContext } from "./types.js";

/** What stands where a credential was. */
export const REDACTED_CREDENTIAL = "[credential redacted]";

/** Shorter header values (`1`, `json`) are not secrets worth a false match. */
const MIN_SECRET_CHARS = 8;

/** An `Authorization`-style value: a scheme, then the credential. */
const SCHEME_VALUE = /^[A-Za-z][\w.+-]*\s+(\S+)$/;

/** The credentials sent to one server, and their redaction from its answers. */
export class SentCredentials {
  readonly #secrets = new Set<string>();
  /** Longest first, so that a value is replaced whole before the credential inside it. */
  #ordered: string[] = [];

  /**
   * Notes a header value sent to the server (and, after an auth scheme, the credential alone).
   * @param value the header's value
   */
  addHeaderValue(value: string): void {
    const trimmed = value.trim();
    this.#add(trimmed);
    const credential = SCHEME_VALUE.exec(trimmed)?.[1];
    if (credential !== undefined) this.#add(credential);
  }

  /**
   * A fetch that notes the `Authorization` header of every request before `base` sends it.
   * @param base the fetch that sends
   * @returns the noting fetch
   */
  observe(base: FetchLike): FetchLike {
    return (url, init) => {
      const authorization =
        init?.headers === undefined ? null : new Headers(init.headers).get("authorization");
      if (authorization !== null) this.addHeaderValue(authorization);
      return base(url, init);
    };
  }

  /**
   * A copy of `value` (any JSON value: a tool result) with every credential replaced in its strings.
   * @param value what the server answered
   * @returns the value itself when it holds no credential, else a redacted copy
   */
  redact<T>(value: T): T {
    return this.#ordered.length === 0 ? value : (redactValue(value, this.#ordered) as T);
  }

  /**
   * Replaces the credentials in an error's message and stack, and in those of its causes.
   * @param error what a request failed with
   * @returns the same error
   */
  redactError(error: unknown): unknown {
    const seen = new Set<unknown>();
    for (let at = error; at instanceof Error && !seen.has(at); at = at.cause) {
      seen.add(at);
      at.message = redactText(at.message, this.#ordered);
      if (at.stack !== undefined) at.stack = redactText(at.stack, this.#ordered);
    }
    return error;
  }

  #add(secret: string): void {
    if (secret.length < MIN_SECRET_CHARS || this.#secrets.has(secret)) return;
    this.#secrets.add(secret);
    this.#ordered = [...this.#secrets].sort((a, b) => b.length - a.length);
  }
}

/**
 * A call's options whose relay and progress listener see what the server asks and tells with the
 * credentials redacted (a question is shown to a person and recorded in an authorization row). A
 * round's `requestState` is left as it came: it goes back to the server byte for byte.
 * @param options the call's options
 * @param credentials what the server was sent, if anything
 * @returns options to call with
 */
export function redactCallOptions(
  options: PoolCallOptions,
  credentials: SentCredentials | undefined,
): PoolCallOptions {
  if (credentials === undefined) return options;
  const { relay, onProgress } = options;
  return {
    ...options,
    ...(relay === undefined ? {} : { relay: redactingRelay(relay, credentials) }),
    ...(onProgress === undefined
      ? {}
      : { onProgress: (progress) => onProgress(credentials.redact(progress)) }),
  };
}

function redactingRelay(relay: UpstreamRelay, credentials: SentCredentials): UpstreamRelay {
  const context = (given: UpstreamRequestContext): UpstreamRequestContext =>
    given.round?.inputRequests === undefined
      ? given
      : { ...given, round: { ...given.round, inputRequests: credentials.redact(given.round.inputRequests) } };
  const out: UpstreamRelay = {};
  if (relay.elicit !== undefined) {
    const elicit = relay.elicit.bind(relay);
    out.elicit = (params, given) => elicit(credentials.redact(params), context(given));
  }
  if (relay.sample !== undefined) {
    const sample = relay.sample.bind(relay);
    out.sample = (params, given) => sample(credentials.redact(params), context(given));
  }
  if (relay.onLog !== undefined) {
    const onLog = relay.onLog.bind(relay);
    out.onLog = (params) => onLog(credentials.redact(params));
  }
  return out;
}

function redactText(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED_CREDENTIAL);
  return out;
}

function redactValue(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === "string") return redactText(value, secrets);
  if (Array.isArray(value)) {
    const items = value.map((item) => redactValue(item, secrets));
    return items.every((item, i) => item === value[i]) ? value : items;
  }
  if (value === null || typeof value !== "object") return value;
  let changed = false;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) {
    const redacted = redactValue(item, secrets);
    const redactedKey = redactText(key, secrets);
    changed ||= redacted !== item || redactedKey !== key;
    out[redactedKey] = redacted;
  }
  return changed ? out : value;
}
