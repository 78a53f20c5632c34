import { mkdtemp, readdir, readFile, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import {
  beginAuthorization,
  createLoopbackCallback,
  FileCredentialStore,
  MemoryCredentialStore,
  type OAuthCredentialStore,
} from "../../src/mcp/index.js";
import { createOAuthProvider } from "../../src/mcp/oauth-provider.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { serveWeb } from "../fixtures/servers/web-bridge.js";
import {
  type AuthorizationServer,
  JWT_CLIENT,
  jwtClientKeys,
  type ProtectedMcpServer,
  SERVICE_CLIENT,
  signInHeadlessly,
  startAuthorizationServer,
  startProtectedMcpServer,
} from "./oauth-fixture.js";
import { serverConfig } from "./server-configs.js";

let as: AuthorizationServer;
let mcp: ProtectedMcpServer;
beforeAll(async () => {
  let issuer = "";
  mcp = await startProtectedMcpServer(() => issuer);
  as = await startAuthorizationServer(mcp.url);
  issuer = as.issuer;
});
afterAll(async () => {
  await mcp?.close();
  await as?.close();
});

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;

function protectedServer(oauth?: ServerConfig["oauth"]): ServerConfig {
  return serverConfig({
    id: "prot",
    transport: "http",
    url: mcp.url,
    ...(oauth === undefined ? {} : { oauth }),
  });
}

/** A pool whose http servers go through the OAuth provider over `store`, as `createGovernance` wires it. */
function oauthPool(server: ServerConfig, store: OAuthCredentialStore, env: Record<string, string> = {}) {
  return new ServerPool([server], {
    authorization: (config) => createOAuthProvider({ server: config, store, env }),
  });
}

/** Authorizes like `sciencegate auth`: a loopback callback, and a person who signs in. */
async function authorizeWithBrowser(server: ServerConfig, store: OAuthCredentialStore): Promise<void> {
  const callback = await createLoopbackCallback();
  try {
    const begun = await beginAuthorization({ server, store, redirectUri: callback.redirectUri });
    if (begun.status !== "redirect") throw new Error("expected a page to open");
    expect(begun.pending.url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(begun.pending.url.searchParams.get("resource")).toBe(mcp.url);
    await signInHeadlessly(begun.pending.url);
    await begun.pending.complete(await callback.received);
  } finally {
    await callback.close();
  }
}

describe("connecting to an MCP server protected by OAuth 2.1", () => {
  test("without tokens, a call fails UNAUTHORIZED naming the command that authorizes the server", async () => {
    const pool = oauthPool(protectedServer(), new MemoryCredentialStore());
    try {
      await expect(pool.callTool("prot", "echo", { text: "x" })).rejects.toMatchObject({
        code: "UNAUTHORIZED",
        message: expect.stringContaining("sciencegate auth prot"),
      });
      expect(pool.state("prot").status).toBe("failed");
    } finally {
      await pool.close();
    }
  });

  test("with oauth: false, the 401 is UNAUTHORIZED too, and nothing is registered anywhere", async () => {
    const registrations = as.grants.authorization_code ?? 0;
    const pool = new ServerPool([protectedServer(false)]);
    try {
      await expect(pool.callTool("prot", "echo", { text: "x" })).rejects.toMatchObject({
        code: "UNAUTHORIZED",
      });
      expect(as.grants.authorization_code ?? 0).toBe(registrations);
    } finally {
      await pool.close();
    }
  });

  test("client credentials: the pool gets a token itself, stores it 0600 in the data directory, and sends it", async () => {
    const dir = join(await mkdtemp(join(tmpdir(), "sciencegate-oauth-")), "oauth");
    const store = new FileCredentialStore(dir);
    const server = protectedServer({
      grant: "client_credentials",
      clientId: SERVICE_CLIENT.clientId,
      clientSecretEnv: "SVC_SECRET",
      issuer: as.issuer,
    });
    const before = as.grants.client_credentials ?? 0;
    const pool = oauthPool(server, store, { SVC_SECRET: SERVICE_CLIENT.secret });
    try {
      expect(text(await pool.callTool("prot", "echo", { text: "machine" }))).toBe("echo: machine");
      expect(as.grants.client_credentials).toBe(before + 1);
      const stored = await store.get({ serverId: "prot" });
      expect(stored?.tokens?.access_token).toBe(mcp.accepted.at(-1));
      expect((await stat(dir)).mode & 0o777).toBe(0o700);
      expect((await stat(join(dir, "prot.json"))).mode & 0o777).toBe(0o600);
      // The secret is named, never stored.
      expect(await readFile(join(dir, "prot.json"), "utf8")).not.toContain(SERVICE_CLIENT.secret);
      expect(await readdir(dir)).toEqual(["prot.json"]);
    } finally {
      await pool.close();
    }
  });

  test("client credentials with a signed JWT (private_key_jwt): no secret at all, the key stays in the environment", async () => {
    const store = new MemoryCredentialStore();
    const { privateKeyPem } = await jwtClientKeys();
    const server = protectedServer({
      grant: "client_credentials",
      clientId: JWT_CLIENT.clientId,
      privateKeyEnv: "SVC_KEY",
      issuer: as.issuer,
    });
    const before = as.grants.client_credentials ?? 0;
    const pool = oauthPool(server, store, { SVC_KEY: privateKeyPem });
    try {
      expect(text(await pool.callTool("prot", "echo", { text: "signed" }))).toBe("echo: signed");
      expect(as.grants.client_credentials).toBe(before + 1);
      const stored = await store.get({ serverId: "prot" });
      expect(stored?.tokens?.access_token).toBe(mcp.accepted.at(-1));
      expect(JSON.stringify(stored)).not.toContain("PRIVATE KEY");
    } finally {
      await pool.close();
    }
  });

  test("authorization code with PKCE and dynamic registration, then calls with the stored token", async () => {
    const store = new MemoryCredentialStore();
    await authorizeWithBrowser(protectedServer(), store);
    const stored = await store.get({ serverId: "prot" });
    expect(stored?.tokens?.access_token).toEqual(expect.any(String));
    expect(stored?.tokens?.refresh_token).toEqual(expect.any(String));
    expect(stored?.clientInformation?.client_id).toEqual(expect.any(String));
    const pool = oauthPool(protectedServer(), store);
    try {
      expect(text(await pool.callTool("prot", "echo", { text: "person" }))).toBe("echo: person");
      expect(mcp.accepted.at(-1)).toBe(stored?.tokens?.access_token);
    } finally {
      await pool.close();
    }
  });

  test("an expired token is refreshed with the refresh token, stored, and the call goes on", async () => {
    const store = new MemoryCredentialStore();
    await authorizeWithBrowser(protectedServer(), store);
    const first = (await store.get({ serverId: "prot" }))?.tokens;
    const pool = oauthPool(protectedServer(), store);
    try {
      expect(text(await pool.callTool("prot", "echo", { text: "one" }))).toBe("echo: one");
      mcp.expireIssuedTokens();
      const refreshes = as.grants.refresh_token ?? 0;
      const refused = mcp.refused;
      // The same connection: its next request is refused, the token refreshed, the request sent again.
      expect(text(await pool.callTool("prot", "echo", { text: "two" }))).toBe("echo: two");
      expect(mcp.refused).toBeGreaterThan(refused);
      expect(as.grants.refresh_token).toBe(refreshes + 1);
      const second = (await store.get({ serverId: "prot" }))?.tokens;
      expect(second?.access_token).not.toBe(first?.access_token);
      expect(mcp.accepted.at(-1)).toBe(second?.access_token);
    } finally {
      await pool.close();
    }
  });

  test("the state of a callback must be the one the authorization sent", async () => {
    const store = new MemoryCredentialStore();
    const callback = await createLoopbackCallback();
    try {
      const begun = await beginAuthorization({
        server: protectedServer(),
        store,
        redirectUri: callback.redirectUri,
      });
      if (begun.status !== "redirect") throw new Error("expected a page to open");
      await signInHeadlessly(begun.pending.url);
      const params = new URLSearchParams(await callback.received);
      params.set("state", "forged");
      await expect(begun.pending.complete(params)).rejects.toMatchObject({ code: "UNAUTHORIZED" });
      expect((await store.get({ serverId: "prot" }))?.tokens).toBeUndefined();
    } finally {
      await callback.close();
    }
  });

  test("credentials stored for another URL of the same server id are not sent", async () => {
    const store = new MemoryCredentialStore();
    await authorizeWithBrowser(protectedServer(), store);
    const elsewhere = serverConfig({ id: "prot", transport: "http", url: `${mcp.url}?moved=1` });
    const accepted = mcp.accepted.length;
    const pool = oauthPool(elsewhere, store);
    try {
      await expect(pool.callTool("prot", "echo", { text: "x" })).rejects.toMatchObject({
        code: "UNAUTHORIZED",
      });
      expect(mcp.accepted.length).toBe(accepted);
    } finally {
      await pool.close();
    }
  });

  test("step-up: a call that needs more scope fails UNAUTHORIZED naming that scope; authorizing it lets the call through", async () => {
    let issuer = "";
    const strict = await startProtectedMcpServer(() => issuer, { callScopes: ["mcp:write"] });
    const strictAs = await startAuthorizationServer(strict.url);
    issuer = strictAs.issuer;
    const server = serverConfig({ id: "prot", transport: "http", url: strict.url });
    const store = new MemoryCredentialStore();
    const authorize = async (scope: string) => {
      const callback = await createLoopbackCallback();
      try {
        const begun = await beginAuthorization({ server, store, redirectUri: callback.redirectUri, scope });
        if (begun.status !== "redirect") throw new Error("expected a page to open");
        await signInHeadlessly(begun.pending.url);
        await begun.pending.complete(await callback.received);
      } finally {
        await callback.close();
      }
    };
    try {
      await authorize("mcp:read");
      expect((await store.get({ serverId: "prot" }))?.tokens?.scope).toBe("mcp:read");
      const first = oauthPool(server, store);
      let refusal: unknown;
      try {
        expect((await first.listTools("prot")).map((tool) => tool.name)).toEqual(["echo"]);
        refusal = await first.callTool("prot", "echo", { text: "x" }).catch((error: unknown) => error);
      } finally {
        await first.close();
      }
      // The scope the server named, plus what the client asks for anyway (offline_access for a refresh token).
      const wanted = (refusal as { data?: { scope?: string } }).data?.scope ?? "";
      expect(wanted.split(" ")).toEqual(expect.arrayContaining(["mcp:read", "mcp:write"]));
      expect(refusal).toMatchObject({
        code: "UNAUTHORIZED",
        data: { authorize: `sciencegate auth prot --scope '${wanted}'` },
      });
      await authorize((refusal as { data: { scope: string } }).data.scope);
      const second = oauthPool(server, store);
      try {
        expect(text(await second.callTool("prot", "echo", { text: "more" }))).toBe("echo: more");
      } finally {
        await second.close();
      }
    } finally {
      await strict.close();
      await strictAs.close();
    }
  });

  test("a server whose metadata names another authorization server never gets the client secret sent there when issuer is set", async () => {
    // The attacker's authorization server: metadata naming itself, a token endpoint that keeps what it gets.
    const received: string[] = [];
    const attacker = await serveWeb(async (request) => {
      const url = new URL(request.url);
      if (url.pathname.startsWith("/.well-known/")) {
        return Response.json({
          issuer: url.origin,
          authorization_endpoint: `${url.origin}/authorize`,
          token_endpoint: `${url.origin}/token`,
          response_types_supported: ["code"],
          grant_types_supported: ["client_credentials"],
        });
      }
      received.push(`${request.headers.get("authorization") ?? ""} ${await request.text()}`);
      return Response.json({ error: "invalid_client" }, { status: 400 });
    });
    const lure = await startProtectedMcpServer(() => attacker.origin);
    const oauth = {
      grant: "client_credentials" as const,
      clientId: SERVICE_CLIENT.clientId,
      clientSecretEnv: "SVC_SECRET",
    };
    const env = { SVC_SECRET: SERVICE_CLIENT.secret };
    const basic = Buffer.from(`${SERVICE_CLIENT.clientId}:${SERVICE_CLIENT.secret}`).toString("base64");
    const call = async (pinned: boolean) => {
      const server = serverConfig({
        id: "prot",
        transport: "http",
        url: lure.url,
        oauth: pinned ? { ...oauth, issuer: as.issuer } : oauth,
      });
      const pool = oauthPool(server, new MemoryCredentialStore(), env);
      try {
        return await pool.callTool("prot", "echo", { text: "x" }).then(
          () => "called",
          (error: unknown) => error,
        );
      } finally {
        await pool.close();
      }
    };
    try {
      expect(await call(true)).toMatchObject({
        code: "UNAUTHORIZED",
        message: expect.stringContaining("Authorization server mismatch"),
      });
      expect(received).toEqual([]);
      // Without issuer the secret goes where the server's metadata says: the attack is real.
      expect(await call(false)).toMatchObject({ code: "UNAUTHORIZED" });
      expect(received.join("\n")).toContain(basic);
    } finally {
      await lure.close();
      await attacker.close();
    }
  });
});
