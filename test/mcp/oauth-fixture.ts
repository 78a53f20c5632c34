/**
 * A real OAuth 2.1 authorization server (`oidc-provider`) and an MCP server it protects (the SDK's v2
 * server with its bearer-token gate and protected resource metadata), both on loopback free ports, and
 * a headless browser that signs a person in.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import {
  createMcpHandler,
  OAuthError,
  OAuthErrorCode,
  requireBearerAuth,
  Server,
} from "@modelcontextprotocol/server";
import { createRemoteJWKSet, exportJWK, exportPKCS8, generateKeyPair, jwtVerify } from "jose";
import Provider, { errors as oidcErrors } from "oidc-provider";
import { serveWeb, type WebServer } from "../fixtures/servers/web-bridge.js";

/** The client of the client credentials grant, pre-registered at the authorization server. */
export const SERVICE_CLIENT = { clientId: "svc", secret: "svc-secret-0123456789" };

/** A client of the client credentials grant that authenticates with a signed JWT (`private_key_jwt`). */
export const JWT_CLIENT = { clientId: "svc-jwt" };

/** The key pair of {@link JWT_CLIENT}: the private key as PEM (what the client holds). */
export async function jwtClientKeys(): Promise<{
  privateKeyPem: string;
  publicJwk: Record<string, unknown>;
}> {
  jwtKeys ??= (async () => {
    const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
    return {
      privateKeyPem: await exportPKCS8(privateKey),
      publicJwk: { ...(await exportJWK(publicKey)), alg: "ES256", use: "sig", kid: "svc-jwt" },
    };
  })();
  return jwtKeys;
}
let jwtKeys: Promise<{ privateKeyPem: string; publicJwk: Record<string, unknown> }> | undefined;

/** The authorization server, with a count of the grants it answered. */
export interface AuthorizationServer {
  issuer: string;
  /** Successful token requests by `grant_type`. */
  grants: Record<string, number>;
  close(): Promise<void>;
}

/**
 * Starts `oidc-provider` on a free loopback port: dynamic registration, PKCE required, JWT access
 * tokens whose audience is the resource (RFC 8707), refresh tokens for the authorization code grant,
 * and a headless sign-in (the person is "alice" and grants what is asked).
 * @param resource the MCP server URL (the only resource it issues tokens for)
 * @param scopes the scopes of that resource
 */
export async function startAuthorizationServer(resource: string, scopes = ["mcp:read", "mcp:write"]) {
  const { privateKey } = await generateKeyPair("ES256", { extractable: true });
  const key = { ...(await exportJWK(privateKey)), alg: "ES256", use: "sig", kid: "fixture" };
  const http = createServer();
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const issuer = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: SERVICE_CLIENT.clientId,
        client_secret: SERVICE_CLIENT.secret,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: "client_secret_basic",
      },
      {
        client_id: JWT_CLIENT.clientId,
        grant_types: ["client_credentials"],
        redirect_uris: [],
        response_types: [],
        token_endpoint_auth_method: "private_key_jwt",
        token_endpoint_auth_signing_alg: "ES256",
        jwks: { keys: [(await jwtClientKeys()).publicJwk] },
      },
    ],
    jwks: { keys: [key] },
    clientDefaults: { id_token_signed_response_alg: "ES256" },
    scopes: ["openid", "offline_access", ...scopes],
    pkce: { required: () => true },
    issueRefreshToken: async (_ctx, client) => client.grantTypeAllowed("refresh_token"),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      registration: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => resource,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, indicator) => {
          if (indicator !== resource) throw new oidcErrors.InvalidTarget();
          return {
            scope: scopes.join(" "),
            audience: indicator,
            accessTokenTTL: 600,
            accessTokenFormat: "jwt",
            jwt: { sign: { alg: "ES256" } },
          };
        },
      },
    },
    findAccount: (_ctx, sub) => ({ accountId: sub, claims: () => ({ sub }) }),
    interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
    ttl: {
      AccessToken: 600,
      AuthorizationCode: 60,
      RefreshToken: 3600,
      Grant: 3600,
      Interaction: 600,
      Session: 3600,
      ClientCredentials: 600,
    },
  });
  const grants: Record<string, number> = {};
  provider.on("grant.success", (ctx) => {
    const type = String(ctx.oidc.params?.grant_type ?? "unknown");
    grants[type] = (grants[type] ?? 0) + 1;
  });
  const callback = provider.callback();
  http.on("request", async (req, res) => {
    if (!req.url?.startsWith("/interaction/")) {
      callback(req, res);
      return;
    }
    const details = await provider.interactionDetails(req, res);
    if (details.prompt.name === "login") {
      await provider.interactionFinished(
        req,
        res,
        { login: { accountId: "alice" } },
        { mergeWithLastSubmission: false },
      );
      return;
    }
    const grant = details.grantId
      ? await provider.Grant.find(details.grantId)
      : new provider.Grant({
          accountId: details.session?.accountId,
          clientId: String(details.params.client_id),
        });
    if (grant === undefined) throw new Error("no grant");
    const missing = details.prompt.details as {
      missingOIDCScope?: string[];
      missingOIDCClaims?: string[];
      missingResourceScopes?: Record<string, string[]>;
    };
    if (missing.missingOIDCScope?.length) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims?.length) grant.addOIDCClaims(missing.missingOIDCClaims);
    for (const [target, granted] of Object.entries(missing.missingResourceScopes ?? {})) {
      grant.addResourceScope(target, granted.join(" "));
    }
    const grantId = await grant.save();
    await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true });
  });
  const server: AuthorizationServer = {
    issuer,
    grants,
    close: () =>
      new Promise<void>((resolve) => {
        http.closeAllConnections();
        http.close(() => resolve());
      }),
  };
  return server;
}

/** The protected MCP server: its URL, what it saw, and a switch that expires every token issued so far. */
export interface ProtectedMcpServer extends WebServer {
  url: string;
  /** The bearer tokens it accepted, in order. */
  accepted: string[];
  /** Requests it refused with 401. */
  refused: number;
  /** From now on, every token issued so far counts as expired (a later one is accepted). */
  expireIssuedTokens(): void;
}

/**
 * Starts an MCP server (one `echo` tool, either protocol revision) that accepts only JWT access tokens
 * of `issuer` for its own URL, with its protected resource metadata at the RFC 9728 location.
 * @param issuer the authorization server
 * @param start where the server listens @default a free port
 */
export async function startProtectedMcpServer(
  issuerOf: () => string,
  options: {
    requiredScopes?: string[];
    /** Scopes a `tools/call` needs beyond those: without them it is refused 403 `insufficient_scope`. */
    callScopes?: string[];
  } = {},
): Promise<ProtectedMcpServer> {
  const expired = new Set<string>();
  const seen = new Set<string>();
  const accepted: string[] = [];
  let origin = "";
  const mcp = createMcpHandler(() => {
    const server = new Server({ name: "protected", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler("tools/list", async () => ({
      tools: [
        { name: "echo", inputSchema: { type: "object" as const, properties: { text: { type: "string" } } } },
      ],
    }));
    server.setRequestHandler("tools/call", async (request) => ({
      content: [{ type: "text" as const, text: `echo: ${String(request.params.arguments?.text ?? "")}` }],
    }));
    return server;
  });
  let gate: ((request: Request) => Promise<unknown>) | undefined;
  const state = { refused: 0 };
  const web = await serveWeb(async (request) => {
    const url = new URL(request.url);
    if (url.pathname === "/.well-known/oauth-protected-resource/mcp") {
      return Response.json({
        resource: `${origin}/mcp`,
        authorization_servers: [issuerOf()],
        scopes_supported: ["mcp:read", "mcp:write"],
      });
    }
    if (url.pathname !== "/mcp") return new Response("not found", { status: 404 });
    gate ??= requireBearerAuth({
      verifier: {
        async verifyAccessToken(token) {
          const jwks = createRemoteJWKSet(new URL(`${issuerOf()}/jwks`));
          const verified = await jwtVerify(token, jwks, {
            issuer: issuerOf(),
            audience: `${origin}/mcp`,
          }).catch((error: unknown) => {
            throw new OAuthError(OAuthErrorCode.InvalidToken, `invalid token (${String(error)})`);
          });
          const { payload } = verified;
          const id = String(payload.jti);
          seen.add(id);
          if (expired.has(id)) throw new OAuthError(OAuthErrorCode.InvalidToken, "Token has expired");
          return {
            token,
            clientId: String(payload.client_id),
            scopes: String(payload.scope ?? "")
              .split(" ")
              .filter(Boolean),
            ...(typeof payload.exp === "number" ? { expiresAt: payload.exp } : {}),
            resource: new URL(String(payload.aud)),
          };
        },
      },
      ...(options.requiredScopes ? { requiredScopes: options.requiredScopes } : {}),
      resourceMetadataUrl: `${origin}/.well-known/oauth-protected-resource/mcp`,
      expectedResource: new URL(`${origin}/mcp`),
    });
    const verdict = await gate(request);
    if (verdict instanceof Response) {
      if (verdict.status === 401) state.refused++;
      return verdict;
    }
    const granted = verdict as { token: string; scopes: string[] };
    const needed = options.callScopes ?? [];
    if (needed.length > 0 && !needed.every((scope) => granted.scopes.includes(scope))) {
      const body = (await request.clone().json()) as { method?: string };
      if (body.method === "tools/call") {
        const scope = [...new Set([...granted.scopes, ...needed])].join(" ");
        return new Response(null, {
          status: 403,
          headers: {
            "www-authenticate": `Bearer error="insufficient_scope", scope="${scope}", resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`,
          },
        });
      }
    }
    accepted.push(granted.token);
    return mcp.fetch(request, { authInfo: verdict as never });
  });
  origin = web.origin;
  return {
    ...web,
    url: `${origin}/mcp`,
    accepted,
    get refused() {
      return state.refused;
    },
    expireIssuedTokens: () => {
      for (const id of seen) expired.add(id);
    },
  };
}

/**
 * A person's browser without a screen: opens the authorization page, follows the sign-in and consent
 * redirects (keeping cookies by name), and finally opens the redirect back to the app.
 * @param authorizationUrl the page the app asked to open
 * @returns the final URL it opened (the app's callback, with `code` and `state`)
 */
export async function signInHeadlessly(authorizationUrl: URL | string): Promise<URL> {
  const cookies = new Map<string, string>();
  let next = new URL(authorizationUrl);
  const origin = next.origin;
  for (let hop = 0; hop < 20; hop++) {
    const response = await fetch(next, {
      redirect: "manual",
      headers: cookies.size === 0 ? {} : { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") },
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(";");
      const at = pair?.indexOf("=") ?? -1;
      if (pair && at > 0) cookies.set(pair.slice(0, at).trim(), pair.slice(at + 1).trim());
    }
    await response.body?.cancel();
    const location = response.headers.get("location");
    if (location === null) throw new Error(`the sign-in stopped at ${next.pathname} (${response.status})`);
    next = new URL(location, next);
    if (next.origin !== origin) {
      const back = await fetch(next);
      await back.body?.cancel();
      return next;
    }
  }
  throw new Error("too many redirects");
}
