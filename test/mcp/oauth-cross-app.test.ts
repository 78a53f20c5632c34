/**
 * Enterprise-managed authorization (`grant: "cross_app_access"`) against real loopback servers: an
 * enterprise identity provider (OpenID metadata, RFC 8693 token exchange of its ID token for an
 * identity assertion grant, ID-JAG), the MCP server's authorization server (RFC 7523 JWT bearer grant
 * checking the grant's signature, audience, resource and client) and the MCP server, which accepts
 * only the authorization server's JWT access tokens for its own URL.
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair, jwtVerify, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { OAuthConfig, ServerConfig } from "../../src/config/index.js";
import { validateExtensionsConfig } from "../../src/config/index.js";
import { beginAuthorization, FileCredentialStore, type OAuthCredentialStore } from "../../src/mcp/index.js";
import { createOAuthProvider } from "../../src/mcp/oauth-provider.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { serveWeb, type WebServer } from "../fixtures/servers/web-bridge.js";
import { type ProtectedMcpServer, startProtectedMcpServer } from "./oauth-fixture.js";

const MCP_CLIENT = { id: "sciencegate-xaa", secret: "xaa-secret-0123456789" };
const IDP_CLIENT = { id: "sciencegate-at-idp", secret: "idp-secret-0123456789" };
const JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer";
const TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange";

type Keys = Awaited<ReturnType<typeof generateKeyPair>>;
let idpKeys: Keys;
let asKeys: Keys;
let idp: WebServer;
let as: WebServer;
let mcp: ProtectedMcpServer;
const exchanges: URLSearchParams[] = [];
const bearerGrants: URLSearchParams[] = [];
const grantsIssued: string[] = [];

/** An ID token of the identity provider for `sub`, for Sciencegate's client there. */
async function idToken(sub = "alice@example.com", key = idpKeys.privateKey): Promise<string> {
  return new SignJWT({ email: sub })
    .setProtectedHeader({ alg: "ES256" })
    .setIssuer(idp.origin)
    .setSubject(sub)
    .setAudience(IDP_CLIENT.id)
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(key);
}

beforeAll(async () => {
  idpKeys = await generateKeyPair("ES256");
  asKeys = await generateKeyPair("ES256", { extractable: true });
  idp = await serveWeb(async (request) => {
    const url = new URL(request.url);
    if (url.pathname === "/.well-known/openid-configuration") {
      return Response.json({
        issuer: idp.origin,
        authorization_endpoint: `${idp.origin}/authorize`,
        token_endpoint: `${idp.origin}/token`,
        jwks_uri: `${idp.origin}/jwks`,
        response_types_supported: ["code"],
        subject_types_supported: ["public"],
        id_token_signing_alg_values_supported: ["ES256"],
        grant_types_supported: [TOKEN_EXCHANGE],
      });
    }
    if (url.pathname !== "/token" || request.method !== "POST") return new Response(null, { status: 404 });
    const form = new URLSearchParams(await request.text());
    exchanges.push(form);
    const ok =
      form.get("grant_type") === TOKEN_EXCHANGE &&
      form.get("requested_token_type") === "urn:ietf:params:oauth:token-type:id-jag" &&
      form.get("subject_token_type") === "urn:ietf:params:oauth:token-type:id_token" &&
      form.get("client_id") === IDP_CLIENT.id &&
      form.get("client_secret") === IDP_CLIENT.secret;
    if (!ok) return Response.json({ error: "invalid_request" }, { status: 400 });
    const subject = await jwtVerify(form.get("subject_token") ?? "", idpKeys.publicKey, {
      issuer: idp.origin,
      audience: IDP_CLIENT.id,
    }).catch(() => undefined);
    if (subject === undefined) {
      return Response.json(
        { error: "invalid_grant", error_description: "the ID token does not verify" },
        { status: 400 },
      );
    }
    const grant = await new SignJWT({ resource: form.get("resource"), client_id: MCP_CLIENT.id })
      .setProtectedHeader({ alg: "ES256", typ: "oauth-id-jag+jwt" })
      .setIssuer(idp.origin)
      .setSubject(String(subject.payload.sub))
      .setAudience(form.get("audience") ?? "")
      .setIssuedAt()
      .setExpirationTime("5m")
      .setJti(crypto.randomUUID())
      .sign(idpKeys.privateKey);
    grantsIssued.push(grant);
    return Response.json({
      access_token: grant,
      issued_token_type: "urn:ietf:params:oauth:token-type:id-jag",
      token_type: "N_A",
      expires_in: 300,
    });
  });
  const asJwk = { ...(await exportJWK(asKeys.publicKey)), alg: "ES256", use: "sig", kid: "as" };
  as = await serveWeb(async (request) => {
    const url = new URL(request.url);
    if (url.pathname === "/.well-known/oauth-authorization-server") {
      return Response.json({
        issuer: as.origin,
        authorization_endpoint: `${as.origin}/authorize`,
        token_endpoint: `${as.origin}/token`,
        jwks_uri: `${as.origin}/jwks`,
        response_types_supported: ["code"],
        grant_types_supported: [JWT_BEARER],
        token_endpoint_auth_methods_supported: ["client_secret_basic"],
      });
    }
    if (url.pathname === "/jwks") return Response.json({ keys: [asJwk] });
    if (url.pathname !== "/token" || request.method !== "POST") return new Response(null, { status: 404 });
    const form = new URLSearchParams(await request.text());
    bearerGrants.push(form);
    const basic = `Basic ${Buffer.from(`${MCP_CLIENT.id}:${MCP_CLIENT.secret}`).toString("base64")}`;
    if (request.headers.get("authorization") !== basic) {
      return Response.json({ error: "invalid_client" }, { status: 401 });
    }
    if (form.get("grant_type") !== JWT_BEARER)
      return Response.json({ error: "unsupported_grant_type" }, { status: 400 });
    const verified = await jwtVerify(form.get("assertion") ?? "", idpKeys.publicKey, {
      issuer: idp.origin,
      audience: as.origin,
      typ: "oauth-id-jag+jwt",
    }).catch(() => undefined);
    if (verified?.payload.client_id !== MCP_CLIENT.id || verified.payload.resource !== mcp.url) {
      return Response.json({ error: "invalid_grant" }, { status: 400 });
    }
    const access = await new SignJWT({ scope: "mcp:read", client_id: MCP_CLIENT.id })
      .setProtectedHeader({ alg: "ES256", kid: "as" })
      .setIssuer(as.origin)
      .setSubject(String(verified.payload.sub))
      .setAudience(mcp.url)
      .setIssuedAt()
      .setExpirationTime("10m")
      .setJti(crypto.randomUUID())
      .sign(asKeys.privateKey);
    return Response.json({ access_token: access, token_type: "Bearer", expires_in: 600, scope: "mcp:read" });
  });
  mcp = await startProtectedMcpServer(() => as.origin);
});
afterAll(async () => {
  await mcp?.close();
  await as?.close();
  await idp?.close();
});

function crossAppServer(oauth: Partial<OAuthConfig> = {}): ServerConfig {
  return {
    id: "xaa",
    transport: "http",
    url: mcp.url,
    args: [],
    env: {},
    headers: {},
    enabled: true,
    tools: {},
    oauth: {
      grant: "cross_app_access",
      clientId: MCP_CLIENT.id,
      clientSecretEnv: "XAA_SECRET",
      issuer: as.origin,
      idp: {
        issuer: idp.origin,
        clientId: IDP_CLIENT.id,
        clientSecretEnv: "IDP_SECRET",
        idTokenEnv: "ID_TOKEN",
      },
      ...oauth,
    },
  };
}

async function callEcho(server: ServerConfig, store: OAuthCredentialStore, env: Record<string, string>) {
  const pool = new ServerPool([server], {
    authorization: (config) => createOAuthProvider({ server: config, store, env }),
  });
  try {
    const result = await pool.callTool("xaa", "echo", { text: "enterprise" });
    return (result.content[0] as { text: string }).text;
  } catch (error) {
    return error;
  } finally {
    await pool.close();
  }
}

describe("cross-app access (enterprise-managed authorization)", () => {
  test("the ID token is exchanged for a grant, the grant for tokens, and the call goes through; only the tokens are kept", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "sciencegate-xaa-")), "oauth");
    const store = new FileCredentialStore(dir);
    const token = await idToken();
    const env = { XAA_SECRET: MCP_CLIENT.secret, IDP_SECRET: IDP_CLIENT.secret, ID_TOKEN: token };
    const before = { exchanges: exchanges.length, grants: bearerGrants.length };
    expect(await callEcho(crossAppServer(), store, env)).toBe("echo: enterprise");
    expect(exchanges.length).toBe(before.exchanges + 1);
    const exchange = exchanges.at(-1);
    expect(exchange?.get("audience")).toBe(as.origin);
    expect(exchange?.get("resource")).toBe(mcp.url);
    expect(exchange?.get("subject_token")).toBe(token);
    expect(bearerGrants.length).toBe(before.grants + 1);
    expect(bearerGrants.at(-1)?.get("assertion")).toBe(grantsIssued.at(-1));
    const file = await readFile(join(dir, "xaa.json"), "utf8");
    expect(file).toContain(mcp.accepted.at(-1));
    expect(file).not.toContain(token);
    expect(file).not.toContain(grantsIssued.at(-1));
    expect(file).not.toContain(MCP_CLIENT.secret);
    // The stored token serves the next pool: no exchange.
    expect(await callEcho(crossAppServer(), store, env)).toBe("echo: enterprise");
    expect(exchanges.length).toBe(before.exchanges + 1);
    // An expired token is replaced the same way, with nobody there.
    mcp.expireIssuedTokens();
    expect(await callEcho(crossAppServer(), store, env)).toBe("echo: enterprise");
    expect(exchanges.length).toBe(before.exchanges + 2);
  });

  test("sciencegate auth needs nobody for it: the tokens are obtained at once", async () => {
    const store = new FileCredentialStore(join(await mkdtemp(join(tmpdir(), "sciencegate-xaa-")), "oauth"));
    const env = {
      XAA_SECRET: MCP_CLIENT.secret,
      IDP_SECRET: IDP_CLIENT.secret,
      ID_TOKEN: await idToken("bob"),
    };
    const begun = await beginAuthorization({
      server: crossAppServer(),
      store,
      redirectUri: "http://127.0.0.1:1/cb",
      env,
    });
    expect(begun.status).toBe("authorized");
    expect((await store.get({ serverId: "xaa" }))?.tokens?.access_token).toEqual(expect.any(String));
  });

  test("an ID token the identity provider does not accept: UNAUTHORIZED, without the token in the message", async () => {
    const forged = await idToken("mallory", (await generateKeyPair("ES256")).privateKey);
    const env = { XAA_SECRET: MCP_CLIENT.secret, IDP_SECRET: IDP_CLIENT.secret, ID_TOKEN: forged };
    const store = new FileCredentialStore(join(await mkdtemp(join(tmpdir(), "sciencegate-xaa-")), "oauth"));
    const before = bearerGrants.length;
    const error = (await callEcho(crossAppServer(), store, env)) as Error & { code?: string };
    expect(error).toMatchObject({ code: "UNAUTHORIZED" });
    expect(error.message).toContain("invalid_grant");
    expect(`${error.message}\n${error.stack ?? ""}`).not.toContain(forged);
    expect(bearerGrants.length).toBe(before);
  });

  test("the configuration names the identity provider, the client and the variables, never a token", () => {
    const check = (oauth: unknown, env: Record<string, string> = {}) =>
      validateExtensionsConfig(
        { mcpServers: { xaa: { type: "http", url: "https://mcp.example.com/mcp", oauth } } },
        { env },
      );
    const env = { XAA_SECRET: "s", ID_TOKEN: "t" };
    const good = check(
      {
        grant: "cross_app_access",
        clientId: "c",
        clientSecretEnv: "XAA_SECRET",
        idp: { issuer: "https://idp.example.com", clientId: "i", idTokenEnv: "ID_TOKEN" },
      },
      env,
    );
    expect(good.ok).toBe(true);
    if (good.ok) {
      expect(good.config.servers[0]?.oauth).toMatchObject({
        grant: "cross_app_access",
        idp: { issuer: "https://idp.example.com", clientId: "i", idTokenEnv: "ID_TOKEN" },
      });
    }
    const noIdp = check({ grant: "cross_app_access", clientId: "c", clientSecretEnv: "XAA_SECRET" }, env);
    expect(noIdp.ok).toBe(false);
    if (!noIdp.ok)
      expect(noIdp.issues.map((issue) => issue.message).join("\n")).toContain("identity provider");
    const tokenWritten = check(
      {
        grant: "cross_app_access",
        clientId: "c",
        clientSecretEnv: "XAA_SECRET",
        idp: { issuer: "https://idp.example.com", clientId: "i", idTokenEnv: "eyJhbGciOiJFUzI1NiJ9.e30.x" },
      },
      env,
    );
    expect(tokenWritten.ok).toBe(false);
    const idpElsewhere = check(
      { grant: "authorization_code", idp: { issuer: "https://idp.example.com" } },
      env,
    );
    expect(idpElsewhere.ok).toBe(false);
  });
});
