/**
 * The OAuth client of a protected MCP server, built on the SDK's provider model (`OAuthClientProvider`,
 * `ClientCredentialsProvider`, `auth()`): the SDK does discovery (protected resource and authorization
 * server metadata, with their fallbacks), registration (pre-registered, client metadata document or
 * dynamic), PKCE, scope selection and step-up, and refresh; this file decides what is stored where and
 * when a person must be asked (ARCHITECTURE.md "Protected servers").
 *
 * At run time a provider never registers a client or sends anyone to a browser: it sends the stored
 * tokens, refreshes them, and otherwise fails with `UNAUTHORIZED` naming `sciencegate auth <server>`.
 * The client credentials grant needs nobody and runs at any time.
 */
import { randomBytes } from "node:crypto";
import {
  ClientCredentialsProvider,
  CrossAppAccessProvider,
  discoverAndRequestJwtAuthGrant,
  type FetchLike,
  type OAuthClientMetadata,
  type OAuthClientProvider,
  type OAuthDiscoveryState,
  PrivateKeyJwtProvider,
  requestJwtAuthorizationGrant,
} from "@modelcontextprotocol/client";
import type { OAuthConfig, ServerConfig } from "../config/index.js";
import { type Clock, GovernanceError, redactUrls, systemClock } from "../core/index.js";
import {
  type CredentialKey,
  DEFAULT_PRINCIPAL,
  type OAuthCredentialStore,
  type StoredCredentials,
} from "./oauth-credential-store.js";
import { legacyDiscoveryState } from "./oauth-discovery.js";

/** The redirect URI a run-time provider names when none was stored (it never sends anyone there). */
const PLACEHOLDER_REDIRECT = "http://127.0.0.1/callback";

/** Options of {@link createOAuthProvider}. */
export interface OAuthProviderOptions {
  /** The server (its id, URL and `oauth` settings). */
  server: Pick<ServerConfig, "id" | "url" | "oauth">;
  store: OAuthCredentialStore;
  /** Where `clientSecretEnv` is looked up. @default process.env */
  env?: Record<string, string | undefined> | undefined;
  /** @default systemClock */
  clock?: Clock | undefined;
  /** Whose credentials. @default "default" */
  principal?: string | undefined;
  /** Sends the requests that tell a 2025-03-26 server (see `oauth-discovery.ts`). @default the global fetch */
  fetch?: FetchLike | undefined;
  /**
   * A person is there: dynamic registration is allowed and the authorization URL goes to
   * `onAuthorizationUrl` (the CLI prints it, the console redirects to it). @default none: run time
   */
  interactive?:
    | {
        /** Where the browser comes back with the code (a loopback listener, or the console's page). */
        redirectUri: string;
        onAuthorizationUrl: (url: URL) => void | Promise<void>;
      }
    | undefined;
}

/** A provider, with what the caller checks after an interactive authorization. */
export interface SciencegateOAuthProvider extends OAuthClientProvider {
  /** The `state` sent with the last authorization request (the callback must bring it back). */
  readonly expectedState: string | undefined;
}

/**
 * The OAuth provider of one server: client credentials when configured so, else authorization code
 * with PKCE (interactive only to obtain the first tokens).
 * @param options the server, the store, the environment and whether a person is there
 * @returns the provider for the SDK's transports and `auth()`
 * @throws GovernanceError `INVALID_CONFIG` when `clientSecretEnv` names an unset variable
 */
export function createOAuthProvider(options: OAuthProviderOptions): SciencegateOAuthProvider {
  const oauth: OAuthConfig = options.server.oauth || { grant: "authorization_code" };
  const key: CredentialKey = {
    serverId: options.server.id,
    principal: options.principal ?? DEFAULT_PRINCIPAL,
  };
  const records = new CredentialRecord(
    options.store,
    key,
    options.server.url ?? "",
    options.clock ?? systemClock,
    options.fetch ?? fetch,
  );
  const env = options.env ?? process.env;
  const secret = clientSecret(options.server.id, oauth, env);
  if (oauth.grant === "client_credentials") {
    return clientCredentialsProvider(oauth, secret, privateKey(options.server.id, oauth, env), records);
  }
  if (oauth.grant === "cross_app_access") {
    return crossAppAccessProvider(options.server.id, oauth, secret, env, records);
  }
  return authorizationCodeProvider(options, oauth, secret, records);
}

/** One server's stored record, read once and written through. */
class CredentialRecord {
  readonly #store: OAuthCredentialStore;
  readonly #key: CredentialKey;
  readonly #serverUrl: string;
  readonly #clock: Clock;
  readonly #fetch: FetchLike;
  #cached: Promise<StoredCredentials> | undefined;

  constructor(
    store: OAuthCredentialStore,
    key: CredentialKey,
    serverUrl: string,
    clock: Clock,
    fetchFn: FetchLike,
  ) {
    this.#store = store;
    this.#key = key;
    this.#serverUrl = serverUrl;
    this.#clock = clock;
    this.#fetch = fetchFn;
  }

  /**
   * Where discovery found the authorization server: the stored state, else (for a server of the
   * 2025-03-26 revision, which the SDK's discovery does not know) the state of that revision, kept.
   * Undefined lets the SDK discover.
   */
  async discoveryState(): Promise<OAuthDiscoveryState | undefined> {
    const stored = (await this.read()).discoveryState;
    if (stored !== undefined) return stored;
    const legacy = await legacyDiscoveryState(this.#serverUrl, this.#fetch);
    if (legacy !== undefined) await this.saveDiscoveryState(legacy);
    return legacy;
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    await this.update((record) => ({ ...record, discoveryState: state }));
  }

  /** The record; one of another server URL counts as none (its credentials are not sent here). */
  read(): Promise<StoredCredentials> {
    this.#cached ??= this.#store
      .get(this.#key)
      .then((stored) =>
        stored !== undefined && stored.serverUrl === this.#serverUrl
          ? stored
          : { serverUrl: this.#serverUrl },
      );
    return this.#cached;
  }

  async update(change: (record: StoredCredentials) => StoredCredentials): Promise<void> {
    const next = change(await this.read());
    this.#cached = Promise.resolve(next);
    await this.#store.set(this.#key, next);
  }

  now(): number {
    return this.#clock.now();
  }
}

function clientSecret(serverId: string, oauth: OAuthConfig, env: Record<string, string | undefined>) {
  return fromEnv(serverId, "clientSecretEnv", oauth.clientSecretEnv, env, "the client secret");
}

function privateKey(serverId: string, oauth: OAuthConfig, env: Record<string, string | undefined>) {
  return fromEnv(serverId, "privateKeyEnv", oauth.privateKeyEnv, env, "the client's private key (PEM)");
}

function fromEnv(
  serverId: string,
  field: string,
  name: string | undefined,
  env: Record<string, string | undefined>,
  what: string,
): string | undefined {
  if (name === undefined) return undefined;
  const value = env[name];
  if (value === undefined || value === "") {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `MCP server '${serverId}' names ${name} as its oauth.${field}, which is not set. Set it to ${what}.`,
    );
  }
  return value;
}

/**
 * The SDK's client credentials provider (a secret, or a signed JWT with the private key), its tokens
 * kept in the store.
 */
function clientCredentialsProvider(
  oauth: OAuthConfig,
  secret: string | undefined,
  key: string | undefined,
  records: CredentialRecord,
): SciencegateOAuthProvider {
  // The configuration requires a client id and one credential for this grant; with `issuer` the
  // credential only ever goes there.
  const common = {
    clientId: oauth.clientId ?? "",
    clientName: "Sciencegate",
    ...(oauth.scope === undefined ? {} : { scope: oauth.scope }),
    ...(oauth.issuer === undefined ? {} : { expectedIssuer: oauth.issuer }),
  };
  const inner =
    key === undefined
      ? new ClientCredentialsProvider({ ...common, clientSecret: secret ?? "" })
      : new PrivateKeyJwtProvider({
          ...common,
          privateKey: key,
          algorithm: oauth.signingAlgorithm ?? "ES256",
        });
  const provider = nonInteractiveProvider(inner, records);
  if (inner instanceof PrivateKeyJwtProvider)
    provider.addClientAuthentication = inner.addClientAuthentication;
  return provider;
}

/**
 * A provider of the SDK's non-interactive flow (no redirect URL; `prepareTokenRequest` makes the token
 * request) over `inner`, whose tokens and discovery state live in the credential store.
 */
function nonInteractiveProvider(
  inner: OAuthClientProvider,
  records: CredentialRecord,
): SciencegateOAuthProvider {
  return {
    expectedState: undefined,
    get redirectUrl() {
      return inner.redirectUrl;
    },
    get clientMetadata() {
      return inner.clientMetadata;
    },
    clientInformation: () => inner.clientInformation(),
    prepareTokenRequest: (scope) => inner.prepareTokenRequest?.(scope),
    redirectToAuthorization: (url) => inner.redirectToAuthorization(url),
    saveCodeVerifier: () => undefined,
    codeVerifier: () => inner.codeVerifier(),
    async tokens() {
      return (await records.read()).tokens;
    },
    async saveTokens(tokens) {
      await records.update((record) => ({ ...record, tokens, tokensSavedAt: records.now() }));
    },
    saveDiscoveryState: (state) => records.saveDiscoveryState(state),
    discoveryState: () => records.discoveryState(),
    async invalidateCredentials(scope) {
      if (scope === "all" || scope === "tokens") {
        await records.update(({ tokens: _tokens, tokensSavedAt: _at, ...rest }) => rest);
      }
    },
  };
}

/**
 * Enterprise-managed authorization: at each token request the person's ID token (read from the
 * environment then, so a renewed one is used) is exchanged at the identity provider for an identity
 * assertion grant (RFC 8693) naming the MCP server's authorization server and resource, which that
 * authorization server exchanges for tokens (RFC 7523 JWT bearer grant), the client authenticating
 * with its secret. Needs nobody, like client credentials. Neither the ID token nor the grant is kept;
 * the tokens are, like any other.
 */
function crossAppAccessProvider(
  serverId: string,
  oauth: OAuthConfig,
  secret: string | undefined,
  env: Record<string, string | undefined>,
  records: CredentialRecord,
): SciencegateOAuthProvider {
  const idp = oauth.idp;
  if (idp === undefined) {
    throw new GovernanceError(
      "INVALID_CONFIG",
      `MCP server '${serverId}' uses the cross_app_access grant without oauth.idp. Name the enterprise identity provider there.`,
    );
  }
  const idpSecret = fromEnv(
    serverId,
    "idp.clientSecretEnv",
    idp.clientSecretEnv,
    env,
    "the client secret at the identity provider",
  );
  const inner = new CrossAppAccessProvider({
    clientId: oauth.clientId ?? "",
    clientSecret: secret ?? "",
    clientName: "Sciencegate",
    ...(oauth.issuer === undefined ? {} : { expectedIssuer: oauth.issuer }),
    assertion: async (context) => {
      const idToken =
        fromEnv(
          serverId,
          "idp.idTokenEnv",
          idp.idTokenEnv,
          env,
          "the ID token the identity provider issued",
        ) ?? "";
      const request = {
        audience: context.authorizationServerUrl,
        resource: context.resourceUrl,
        idToken,
        clientId: idp.clientId,
        ...(idpSecret === undefined ? {} : { clientSecret: idpSecret }),
        ...(context.scope === undefined ? {} : { scope: context.scope }),
        fetchFn: context.fetchFn,
      };
      try {
        const granted =
          idp.tokenEndpoint === undefined
            ? await discoverAndRequestJwtAuthGrant({ ...request, idpUrl: idp.issuer })
            : await requestJwtAuthorizationGrant({ ...request, tokenEndpoint: idp.tokenEndpoint });
        return granted.jwtAuthGrant;
      } catch (error) {
        // A refusal of the identity provider is one of authorization (a new ID token fixes it), not an
        // outage of the MCP server.
        throw new GovernanceError(
          "UNAUTHORIZED",
          `MCP server '${serverId}' could not be authorized: the identity provider did not exchange the ID token in ${idp.idTokenEnv} (${redactUrls(error instanceof Error ? error.message : String(error))}).`,
          { data: { serverId }, cause: error },
        );
      }
    },
  });
  const provider = nonInteractiveProvider(inner, records);
  // The grant names the authorization server and resource the SDK discovered: it hands them over here.
  provider.saveAuthorizationServerUrl = (url) => inner.saveAuthorizationServerUrl(url);
  provider.saveResourceUrl = (url) => inner.saveResourceUrl?.(url);
  return provider;
}

/** Authorization code with PKCE: interactive to get the first tokens, then refresh at run time. */
function authorizationCodeProvider(
  options: OAuthProviderOptions,
  oauth: OAuthConfig,
  secret: string | undefined,
  records: CredentialRecord,
): SciencegateOAuthProvider {
  const { interactive } = options;
  const serverId = options.server.id;
  let codeVerifier: string | undefined;
  let expectedState: string | undefined;
  // The scope the server asked for (a step-up names more than the stored tokens carry): the command
  // that fixes it asks for exactly that.
  const needsAuthorization = (scope?: string | null) => {
    const command = `sciencegate auth ${serverId}${scope ? ` --scope ${quoteScope(scope)}` : ""}`;
    return new GovernanceError(
      "UNAUTHORIZED",
      `MCP server '${serverId}' requires authorization${scope ? ` (scope ${scope})` : ""}, and Sciencegate holds no valid token for it. Run \`${command}\` (or authorize it on the console's Sources page), then try again.`,
      { data: { serverId, authorize: command, ...(scope ? { scope } : {}) } },
    );
  };
  const provider: SciencegateOAuthProvider = {
    get expectedState() {
      return expectedState;
    },
    get redirectUrl() {
      return interactive?.redirectUri ?? oauth.redirectUri ?? PLACEHOLDER_REDIRECT;
    },
    get clientMetadata(): OAuthClientMetadata {
      return {
        client_name: "Sciencegate",
        redirect_uris: [interactive?.redirectUri ?? oauth.redirectUri ?? PLACEHOLDER_REDIRECT],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: secret === undefined ? "none" : "client_secret_basic",
        ...(oauth.scope === undefined ? {} : { scope: oauth.scope }),
      };
    },
    ...(oauth.clientMetadataUrl === undefined ? {} : { clientMetadataUrl: oauth.clientMetadataUrl }),
    state: () => {
      expectedState = randomBytes(24).toString("base64url");
      return expectedState;
    },
    async clientInformation() {
      const record = await records.read();
      if (oauth.clientId !== undefined) {
        return {
          client_id: oauth.clientId,
          ...(secret === undefined ? {} : { client_secret: secret }),
          ...(oauth.issuer === undefined ? {} : { issuer: oauth.issuer }),
        };
      }
      // Without tokens there is nothing to refresh: only a person can authorize.
      if (interactive === undefined && record.tokens === undefined) throw needsAuthorization();
      return record.clientInformation;
    },
    async tokens() {
      return (await records.read()).tokens;
    },
    async saveTokens(tokens) {
      await records.update((record) => ({
        ...record,
        tokens,
        tokensSavedAt: records.now(),
        ...(interactive === undefined ? {} : { redirectUri: interactive.redirectUri }),
      }));
    },
    async redirectToAuthorization(url) {
      if (interactive === undefined) throw needsAuthorization(url.searchParams.get("scope"));
      await interactive.onAuthorizationUrl(url);
    },
    saveCodeVerifier(verifier) {
      codeVerifier = verifier;
    },
    codeVerifier() {
      if (codeVerifier === undefined)
        throw new GovernanceError("UNAUTHORIZED", "No authorization is in progress.");
      return codeVerifier;
    },
    saveDiscoveryState: (state: OAuthDiscoveryState) => records.saveDiscoveryState(state),
    discoveryState: () => records.discoveryState(),
    async invalidateCredentials(scope) {
      if (scope === "verifier") {
        codeVerifier = undefined;
        return;
      }
      await records.update((record) => {
        const next = { ...record };
        if (scope === "all" || scope === "tokens") {
          delete next.tokens;
          delete next.tokensSavedAt;
        }
        if (scope === "all" || scope === "client") delete next.clientInformation;
        if (scope === "all" || scope === "discovery") delete next.discoveryState;
        return next;
      });
    },
  };
  // Dynamic registration only with a person there: at run time a server must not make us register.
  if (interactive !== undefined && oauth.clientId === undefined) {
    provider.saveClientInformation = async (information) => {
      await records.update((record) => ({ ...record, clientInformation: information }));
    };
  }
  return provider;
}

/** A scope list as one shell word: scope tokens are printable ASCII without spaces or quotes. */
function quoteScope(scope: string): string {
  return /^[A-Za-z0-9:._/-]+$/.test(scope) ? scope : `'${scope.replace(/[^\x21-\x7e ]|'/g, "")}'`;
}
