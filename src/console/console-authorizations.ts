/**
 * Authorizing a protected MCP server from the console: the Sources page's "Authorize" button begins the
 * authorization (the runtime's own credentials, as `sciencegate auth` obtains them), the browser goes to
 * the authorization server, and comes back to `<basePath>/oauth/callback`, which finishes it.
 *
 * The callback is the one console address that needs no console credentials: the authorization server
 * sends the browser there, and the console's cookie is `SameSite=Strict`, so a browser does not send it
 * on that cross-site navigation. What lets a callback in is its `state`, a single-use secret that only an
 * authenticated operator's request created, held here for a few minutes; a callback with any other
 * state changes nothing. Pending authorizations live in this process: with several console replicas
 * the callback must reach the replica that began it (see ARCHITECTURE.md, "The console").
 */
import type { ServerConfig } from "../config/index.js";
import { type Clock, GovernanceError, isGovernanceError } from "../core/index.js";
import { beginAuthorization, type PendingAuthorization } from "../mcp/index.js";
import type { Governance } from "../runtime/index.js";
import { recordConsoleChange } from "./console-audit.js";

/** The console path the authorization server sends the browser back to. */
export const OAUTH_CALLBACK_PATH = "/oauth/callback";

/** How long a begun authorization waits for its callback. */
export const PENDING_AUTHORIZATION_MS = 10 * 60_000;

/** How many authorizations may wait at once; beginning one more drops the oldest. */
export const MAX_PENDING_AUTHORIZATIONS = 16;

/** The session the console's authorization rows are filed under. */
export const CONSOLE_AUTHORIZATION_SESSION = "console";

interface Waiting {
  server: ServerConfig;
  sourceId: string;
  pending: PendingAuthorization;
  expiresAt: number;
  actor: string | undefined;
}

/** What a callback came to. */
export type AuthorizationOutcome =
  | { status: "authorized"; serverId: string; sourceId: string }
  | { status: "refused"; serverId?: string | undefined; message: string };

/** The console's authorizations in flight, keyed by their `state`. */
export class ConsoleAuthorizations {
  readonly #governance: Governance;
  readonly #clock: Clock;
  readonly #env: Record<string, string | undefined> | undefined;
  readonly #waiting = new Map<string, Waiting>();

  /**
   * @param governance the runtime whose credential store receives the tokens
   * @param clock expires waiting authorizations
   * @param env where a server's `clientSecretEnv` and `privateKeyEnv` are read @default process.env
   */
  constructor(governance: Governance, clock: Clock, env?: Record<string, string | undefined>) {
    this.#governance = governance;
    this.#clock = clock;
    this.#env = env;
  }

  /**
   * Begins the authorization of the server behind `sourceId`: a client credentials server is authorized
   * at once; otherwise the page to send the browser to is returned.
   * @param sourceId a source of the live catalog
   * @param redirectUri the console's callback URL
   * @param actor the operator (an access token's subject), recorded on the audit row
   * @returns `authorized`, or the authorization server's page
   * @throws GovernanceError `UNKNOWN_ID` for a source not in the catalog, `INVALID_INPUT` for a server
   *   that is not authorized with OAuth, `UNAUTHORIZED` when discovery or registration fails
   */
  async begin(
    sourceId: string,
    redirectUri: string,
    actor: string | undefined,
  ): Promise<{ status: "authorized"; serverId: string } | { status: "redirect"; url: URL }> {
    const server = this.#serverOf(sourceId);
    let begun: Awaited<ReturnType<typeof beginAuthorization>>;
    try {
      begun = await beginAuthorization({
        server,
        store: this.#governance.oauthCredentials,
        redirectUri,
        env: this.#env,
        clock: this.#clock,
      });
    } catch (error) {
      // A server that is not OAuth-protected is the operator's wrong button, not a console failure.
      if (isGovernanceError(error) && error.code === "INVALID_CONFIG") {
        throw new GovernanceError("INVALID_INPUT", error.message);
      }
      throw error;
    }
    if (begun.status === "authorized") {
      await this.#audit(server, sourceId, actor);
      return { status: "authorized", serverId: server.id };
    }
    const state = begun.pending.url.searchParams.get("state");
    if (state === null || state === "") {
      throw new GovernanceError(
        "UNAUTHORIZED",
        `MCP server '${server.id}': the authorization page carries no state to come back with.`,
      );
    }
    this.#expire();
    while (this.#waiting.size >= MAX_PENDING_AUTHORIZATIONS) {
      const oldest = this.#waiting.keys().next().value as string;
      this.#waiting.delete(oldest);
    }
    this.#waiting.set(state, {
      server,
      sourceId,
      pending: begun.pending,
      expiresAt: this.#clock.now() + PENDING_AUTHORIZATION_MS,
      actor,
    });
    return { status: "redirect", url: begun.pending.url };
  }

  /**
   * Finishes the authorization a callback belongs to (its `state`), once: the code is exchanged and the
   * tokens stored. Any other callback (unknown, used or expired state) changes nothing.
   * @param query the callback's query (`code`, `state`, `iss`, or `error`)
   * @returns what happened, for the page to say
   */
  async finish(query: URLSearchParams): Promise<AuthorizationOutcome> {
    this.#expire();
    const state = query.get("state") ?? "";
    const waiting = this.#waiting.get(state);
    if (waiting === undefined) {
      return {
        status: "refused",
        message:
          "This authorization is not waiting here (already finished, expired after 10 minutes, or begun by another console process). Start it again from the Sources page.",
      };
    }
    this.#waiting.delete(state);
    try {
      await waiting.pending.complete(query);
    } catch (error) {
      if (!isGovernanceError(error)) throw error;
      return { status: "refused", serverId: waiting.server.id, message: error.message };
    }
    await this.#audit(waiting.server, waiting.sourceId, waiting.actor);
    return { status: "authorized", serverId: waiting.server.id, sourceId: waiting.sourceId };
  }

  /** How many authorizations wait for their callback. */
  get waiting(): number {
    this.#expire();
    return this.#waiting.size;
  }

  #serverOf(sourceId: string): ServerConfig {
    const source = this.#governance.catalog.snapshot()?.sources.find((s) => s.id === sourceId);
    if (source === undefined)
      throw new GovernanceError("UNKNOWN_ID", `No source '${sourceId}' in the catalog.`);
    const server = this.#governance.config.servers.find((s) => s.id === source.serverId);
    if (server === undefined) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `Source '${sourceId}' is not served by a configured MCP server, so there is nothing to authorize.`,
      );
    }
    return server;
  }

  #expire(): void {
    const now = this.#clock.now();
    for (const [state, waiting] of this.#waiting) {
      if (waiting.expiresAt <= now) this.#waiting.delete(state);
    }
  }

  /** One `operator_console` row per authorization obtained: who authorized which server (never a token). */
  async #audit(server: ServerConfig, sourceId: string, actor: string | undefined): Promise<void> {
    await recordConsoleChange(
      this.#governance,
      {
        sessionId: CONSOLE_AUTHORIZATION_SESSION,
        sourceId,
        toolId: "*",
        action: "authorize_server",
        resource: `server:${server.id}`,
      },
      { clock: this.#clock, actor },
    );
  }
}

/**
 * Whether the Sources page offers to authorize this server: an http or sse server whose `oauth` is not
 * `false`.
 * @param server a configured server
 */
export function authorizable(server: ServerConfig): boolean {
  return server.transport !== "stdio" && server.url !== undefined && server.oauth !== false;
}
