/**
 * A real OAuth 2.1 / OpenID authorization server on loopback (the npm `oidc-provider`), for the identity
 * tests: users log in headlessly (authorization code with PKCE, the user named by `login_hint`), each
 * user is granted only its own scopes, and access tokens are JWTs (`at+jwt`, ES256) whose audience is
 * the resource the client names (RFC 8707).
 */
import { createHash, randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import Provider from "oidc-provider";

/** The scopes the tests use (the resource server's defaults). */
export const SCOPES = {
  call: "sciencegate:call",
  approve: "sciencegate:approve",
  administer: "sciencegate:admin",
} as const;

const CLIENT_ID = "sciencegate-test-app";
const REDIRECT_URI = "http://127.0.0.1:9/callback";

/** A running issuer. */
export interface LoopbackIssuer {
  issuer: string;
  jwksUrl: string;
  /** The signing key (private), for tests that forge a token with the right key. */
  jwk: JWK;
  /**
   * Logs `user` in and returns an access token for `resource`.
   * @param user the account (its allowed scopes were given to `startLoopbackIssuer`)
   * @param resource the audience
   * @param scope the scopes asked for @default every scope the tests know
   */
  token(user: string, resource: string, scope?: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Starts an issuer on a free loopback port.
 * @param users each account's allowed scopes
 * @param options `jwk`: sign with this key (an issuer that shares another's key) @default a new ES256 key
 */
export async function startLoopbackIssuer(
  users: Record<string, readonly string[]>,
  options: { jwk?: JWK } = {},
): Promise<LoopbackIssuer> {
  const jwk =
    options.jwk ??
    (await (async () => {
      const { privateKey } = await generateKeyPair("ES256", { extractable: true });
      return { ...(await exportJWK(privateKey)), alg: "ES256", use: "sig", kid: "loopback-es256" };
    })());
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const allScopes = Object.values(SCOPES).join(" ");
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code"],
        response_types: ["code"],
        redirect_uris: [REDIRECT_URI],
      },
    ],
    jwks: { keys: [jwk] },
    clientDefaults: { id_token_signed_response_alg: "ES256" },
    scopes: ["openid", ...Object.values(SCOPES)],
    ttl: { AccessToken: 600, Grant: 600, Interaction: 600, Session: 600 },
    pkce: { required: () => true },
    features: {
      devInteractions: { enabled: false },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined as never,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: allScopes,
          audience: resource,
          accessTokenTTL: 600,
          accessTokenFormat: "jwt",
          jwt: { sign: { alg: "ES256" } },
        }),
      },
    },
    findAccount: (_ctx: unknown, sub: string) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
  });
  // A silent provider: its development warnings are not test output.
  provider.on("server_error", () => {});
  const callback = provider.callback();
  server.on("request", (request, response) => {
    if (!request.url?.startsWith("/interaction/")) {
      callback(request, response);
      return;
    }
    void (async () => {
      const details = await provider.interactionDetails(request, response);
      const user = String(details.params.login_hint ?? "");
      if (details.prompt.name === "login") {
        return provider.interactionFinished(
          request,
          response,
          { login: { accountId: user } },
          { mergeWithLastSubmission: false },
        );
      }
      const account = String(details.session?.accountId ?? "");
      const grant = details.grantId
        ? await provider.Grant.find(details.grantId)
        : new provider.Grant({ accountId: account, clientId: String(details.params.client_id) });
      if (!grant) throw new Error("no grant");
      const prompt = details.prompt.details as {
        missingOIDCScope?: string[];
        missingResourceScopes?: Record<string, string[]>;
      };
      if (prompt.missingOIDCScope?.length) grant.addOIDCScope(prompt.missingOIDCScope.join(" "));
      // The user consents to what it is allowed: its token never carries another scope.
      const allowed = new Set(users[account] ?? []);
      for (const [resource, asked] of Object.entries(prompt.missingResourceScopes ?? {})) {
        const granted = asked.filter((scope) => allowed.has(scope));
        const refused = asked.filter((scope) => !allowed.has(scope));
        if (granted.length > 0) grant.addResourceScope(resource, granted.join(" "));
        if (refused.length > 0) grant.rejectResourceScope(resource, refused.join(" "));
      }
      return provider.interactionFinished(
        request,
        response,
        { consent: { grantId: await grant.save() } },
        { mergeWithLastSubmission: true },
      );
    })().catch((error: unknown) => {
      response.statusCode = 500;
      response.end(String(error));
    });
  });
  const metadata = (await (await fetch(`${issuer}/.well-known/openid-configuration`)).json()) as {
    authorization_endpoint: string;
    token_endpoint: string;
    jwks_uri: string;
  };

  return {
    issuer,
    jwksUrl: metadata.jwks_uri,
    jwk,
    async token(user, resource, scope = allScopes) {
      const verifier = randomBytes(32).toString("base64url");
      let url = new URL(metadata.authorization_endpoint);
      const query = {
        client_id: CLIENT_ID,
        response_type: "code",
        redirect_uri: REDIRECT_URI,
        scope: `openid ${scope}`,
        code_challenge: createHash("sha256").update(verifier).digest("base64url"),
        code_challenge_method: "S256",
        resource,
        login_hint: user,
        state: randomBytes(8).toString("hex"),
      };
      for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
      const cookies = new Map<string, string>();
      for (let hop = 0; hop < 12 && !url.href.startsWith(REDIRECT_URI); hop++) {
        const answer = await fetch(url, {
          redirect: "manual",
          headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") },
        });
        for (const line of answer.headers.getSetCookie()) {
          const pair = line.split(";", 1)[0] ?? "";
          const eq = pair.indexOf("=");
          cookies.set(pair.slice(0, eq), pair.slice(eq + 1));
        }
        const location = answer.headers.get("location");
        if (!location) throw new Error(`login stuck at ${url.href}: ${answer.status} ${await answer.text()}`);
        url = new URL(location, url);
      }
      const code = url.searchParams.get("code");
      if (!code) throw new Error(`no code: ${url.href}`);
      const answer = await fetch(metadata.token_endpoint, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "authorization_code",
          client_id: CLIENT_ID,
          code,
          redirect_uri: REDIRECT_URI,
          code_verifier: verifier,
          resource,
        }),
      });
      const body = (await answer.json()) as { access_token?: string };
      if (!body.access_token) throw new Error(`no token: ${answer.status} ${JSON.stringify(body)}`);
      return body.access_token;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
