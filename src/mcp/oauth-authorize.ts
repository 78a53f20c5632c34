/**
 * Obtaining tokens for a protected MCP server with a person there: what `sciencegate auth <server>` and
 * the console run. The SDK's `auth()` does the protocol; this file begins it (the URL to open), checks
 * the browser's callback (`state`), finishes it (code exchange with the PKCE verifier, `iss` checked),
 * and offers a loopback listener for the callback.
 */
import { timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { auth, type FetchLike } from "@modelcontextprotocol/client";
import type { ServerConfig } from "../config/index.js";
import { type Clock, GovernanceError, redactUrls } from "../core/index.js";
import type { OAuthCredentialStore } from "./oauth-credential-store.js";
import { unauthenticatedChallenge } from "./oauth-discovery.js";
import { createOAuthProvider } from "./oauth-provider.js";
import { createCappedFetch } from "./response-cap.js";

/** Options of {@link beginAuthorization}. */
export interface BeginAuthorizationOptions {
  /** The server: an http or sse server of the configuration. */
  server: ServerConfig;
  store: OAuthCredentialStore;
  /** Where the browser comes back (`createLoopbackCallback().redirectUri`, or the console's page). */
  redirectUri: string;
  /** Scopes to ask for beyond what the server names (e.g. those a step-up asked for). */
  scope?: string | undefined;
  /** @default process.env */
  env?: Record<string, string | undefined> | undefined;
  clock?: Clock | undefined;
  /** @default the global fetch, each answer read under `UNCAPPED_REQUEST_MAX_BYTES` (`createCappedFetch`) */
  fetch?: FetchLike | undefined;
  /** Whose credentials. @default "default" */
  principal?: string | undefined;
}

/** An authorization waiting for the browser's callback. */
export interface PendingAuthorization {
  /** The authorization server's page to open. */
  url: URL;
  /**
   * Finishes with the callback's query (`code`, `state`, `iss`, or `error`): the tokens are stored.
   * @throws GovernanceError `UNAUTHORIZED` when the state does not match, the server sent an error, or
   *   the code exchange failed
   */
  complete(callback: URLSearchParams): Promise<void>;
}

/**
 * Begins an authorization: the client credentials grant (and a refresh of stored tokens) needs nobody
 * and finishes at once; the authorization code grant returns the page to open.
 * @param options the server, the store, the redirect URI and the environment
 * @returns `authorized`, or the pending authorization
 * @throws GovernanceError `INVALID_CONFIG` for a stdio server or an `oauth: false` one; `UNAUTHORIZED`
 *   when discovery or registration fails
 */
export async function beginAuthorization(
  options: BeginAuthorizationOptions,
): Promise<{ status: "authorized" } | { status: "redirect"; pending: PendingAuthorization }> {
  const { server } = options;
  if (server.transport === "stdio" || server.url === undefined || server.oauth === false) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `MCP server '${server.id}' is not authorized with OAuth (${server.transport === "stdio" ? "a stdio server gets its credentials in env" : 'its "oauth" is false'}).`,
    );
  }
  // The server's and its authorization server's answers are theirs: read under a bound.
  const fetchFn = createCappedFetch(options.fetch);
  const challenge = await unauthenticatedChallenge(server.url, fetchFn);
  const scope = joinScopes(challenge.scope, options.scope);
  await forgetOutgrownRegistration(options, scope);
  let opened: URL | undefined;
  const provider = createOAuthProvider({
    server,
    store: options.store,
    env: options.env,
    clock: options.clock,
    principal: options.principal,
    fetch: fetchFn,
    interactive: {
      redirectUri: options.redirectUri,
      onAuthorizationUrl: (url) => {
        opened = url;
      },
    },
  });
  const common = {
    serverUrl: server.url,
    ...(challenge.resourceMetadataUrl === undefined
      ? {}
      : { resourceMetadataUrl: challenge.resourceMetadataUrl }),
    ...(scope === undefined ? {} : { scope }),
    fetchFn,
  };
  const started = await wrap(server.id, () => auth(provider, { ...common, forceReauthorization: true }));
  if (started === "AUTHORIZED") return { status: "authorized" };
  if (opened === undefined) throw unauthorized(server.id, "the authorization server gave no page to open");
  const expected = provider.expectedState;
  return {
    status: "redirect",
    pending: {
      url: opened,
      complete: async (callback) => {
        const error = callback.get("error");
        if (error !== null) {
          const description = callback.get("error_description");
          throw unauthorized(
            server.id,
            `the authorization server answered ${error}${description ? `: ${description}` : ""}`,
          );
        }
        if (expected === undefined || !sameText(callback.get("state") ?? "", expected)) {
          throw unauthorized(server.id, "the callback's state does not match the authorization this started");
        }
        const code = callback.get("code");
        if (code === null) throw unauthorized(server.id, "the callback brought no code");
        const iss = callback.get("iss");
        const finished = await wrap(server.id, () =>
          auth(provider, { ...common, authorizationCode: code, ...(iss === null ? {} : { iss }) }),
        );
        if (finished !== "AUTHORIZED") throw unauthorized(server.id, "the code exchange did not authorize");
      },
    },
  };
}

/**
 * Drops a dynamically registered client that cannot serve this authorization: registered for another
 * redirect URI (each `sciencegate auth` listens on a free port) or for less scope than is asked now (a
 * step-up). The authorization server would refuse it; a new registration is made instead. A configured
 * client id is never dropped.
 */
async function forgetOutgrownRegistration(
  options: BeginAuthorizationOptions,
  scope: string | undefined,
): Promise<void> {
  const { server, store } = options;
  if (server.oauth && server.oauth.clientId !== undefined) return;
  const key = { serverId: server.id, principal: options.principal };
  const stored = await store.get(key);
  const client = stored?.clientInformation as { redirect_uris?: unknown; scope?: unknown } | undefined;
  if (stored === undefined || client === undefined) return;
  const redirects = Array.isArray(client.redirect_uris) ? client.redirect_uris : undefined;
  const registered = typeof client.scope === "string" ? new Set(client.scope.split(" ")) : undefined;
  const wanted = (scope ?? "").split(" ").filter(Boolean);
  const fits =
    (redirects === undefined || redirects.includes(options.redirectUri)) &&
    (registered === undefined || wanted.every((one) => registered.has(one)));
  if (fits) return;
  const { clientInformation: _dropped, ...rest } = stored;
  await store.set(key, rest);
}

/** A loopback HTTP listener for one authorization callback. */
export interface LoopbackCallback {
  redirectUri: string;
  /** The callback's query once the browser came back (the page it shows says to return to the terminal). */
  received: Promise<URLSearchParams>;
  /** Stops listening for the browser's redirect and ends its open connections. */
  close(): Promise<void>;
}

/**
 * Listens on 127.0.0.1 for the authorization callback.
 * @param options the redirect URI to listen on (its port and path; a pre-registered client needs the
 *   registered one) @default a free port, path `/callback`
 * @returns the listener
 */
export async function createLoopbackCallback(
  options: { redirectUri?: string | undefined } = {},
): Promise<LoopbackCallback> {
  const wanted = options.redirectUri === undefined ? undefined : new URL(options.redirectUri);
  const path = wanted?.pathname ?? "/callback";
  let deliver: (params: URLSearchParams) => void = () => undefined;
  const received = new Promise<URLSearchParams>((resolve) => {
    deliver = resolve;
  });
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method !== "GET" || url.pathname !== path) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" });
    res.end("Sciencegate received the authorization. You can close this page and return to the terminal.\n");
    deliver(url.searchParams);
  });
  const port = wanted?.port === undefined || wanted.port === "" ? 0 : Number(wanted.port);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
  const bound = (server.address() as AddressInfo).port;
  const host = wanted?.hostname === "localhost" ? "localhost" : "127.0.0.1";
  return {
    redirectUri: `http://${host}:${bound}${path}`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/**
 * Waits for the callback, at most `timeoutMs`.
 * @param callback the listener
 * @param clock measures the wait
 * @param timeoutMs how long a person may take
 * @returns the callback's query
 * @throws GovernanceError `TIMEOUT` when nobody came back in time
 */
export async function waitForCallback(
  callback: LoopbackCallback,
  clock: Clock,
  timeoutMs: number,
): Promise<URLSearchParams> {
  const timer = new AbortController();
  const sleeping = clock.sleep(timeoutMs, timer.signal).then(
    () => "timeout" as const,
    () => "stopped" as const,
  );
  try {
    const outcome = await Promise.race([callback.received, sleeping]);
    if (outcome === "timeout" || outcome === "stopped") {
      throw new GovernanceError(
        "TIMEOUT",
        `No authorization came back within ${Math.round(timeoutMs / 1000)} s.`,
      );
    }
    return outcome;
  } finally {
    timer.abort();
  }
}

async function wrap<T>(serverId: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (error instanceof GovernanceError) throw error;
    throw unauthorized(serverId, error instanceof Error ? redactUrls(error.message) : String(error), error);
  }
}

function unauthorized(serverId: string, why: string, cause?: unknown): GovernanceError {
  return new GovernanceError("UNAUTHORIZED", `Authorizing MCP server '${serverId}' failed: ${why}.`, {
    data: { serverId },
    ...(cause === undefined ? {} : { cause }),
  });
}

function joinScopes(...scopes: (string | undefined)[]): string | undefined {
  const all = [...new Set(scopes.flatMap((scope) => (scope ?? "").split(" ").filter(Boolean)))];
  return all.length === 0 ? undefined : all.join(" ");
}

function sameText(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}
