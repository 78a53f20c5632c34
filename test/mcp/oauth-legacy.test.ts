/**
 * Authorization discovery of the 2025-03-26 revision (no protected resource metadata: the MCP server's
 * origin is the authorization server, its metadata at the origin's well-known location, default
 * endpoints without it) next to the current revision's, whose issuer check must not be weakened. The
 * servers are real HTTP servers on loopback: an MCP endpoint with its authorization server beside it,
 * checking PKCE and the tokens it issued.
 */
import { createHash, randomBytes } from "node:crypto";
import { createMcpHandler, Server } from "@modelcontextprotocol/server";
import { describe, expect, test } from "vitest";
import type { ServerConfig } from "../../src/config/types.js";
import {
  beginAuthorization,
  createLoopbackCallback,
  MemoryCredentialStore,
  type OAuthCredentialStore,
} from "../../src/mcp/index.js";
import { createOAuthProvider } from "../../src/mcp/oauth-provider.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { serveWeb } from "../fixtures/servers/web-bridge.js";
import { serverConfig } from "./server-configs.js";

interface LegacyServerOptions {
  /** Protected resource metadata naming the origin as authorization server (the current revision). */
  resourceMetadata?: boolean;
  /** The issuer its metadata names, from its origin; `null`: no metadata (default endpoints). */
  issuer?: ((origin: string) => string) | null;
}

/** An MCP server that is its own authorization server, under `/oauth` (or at the root without metadata). */
async function startLegacyServer(options: LegacyServerOptions = {}) {
  const seen: string[] = [];
  const issued = new Set<string>();
  const challenges = new Map<string, string>();
  const withMetadata = options.issuer !== null;
  const prefix = withMetadata ? "/oauth" : "";
  let origin = "";
  const mcp = createMcpHandler(() => {
    const server = new Server({ name: "legacy", version: "1.0.0" }, { capabilities: { tools: {} } });
    server.setRequestHandler("tools/list", async () => ({
      tools: [{ name: "echo", inputSchema: { type: "object" as const } }],
    }));
    server.setRequestHandler("tools/call", async (request) => ({
      content: [{ type: "text" as const, text: `echo: ${String(request.params.arguments?.text ?? "")}` }],
    }));
    return server;
  });
  const web = await serveWeb(async (request) => {
    const url = new URL(request.url);
    seen.push(`${request.method} ${url.pathname}`);
    if (url.pathname.startsWith("/.well-known/oauth-protected-resource")) {
      if (!options.resourceMetadata) return new Response("not found", { status: 404 });
      return Response.json({ resource: `${origin}/mcp`, authorization_servers: [origin] });
    }
    if (url.pathname === "/.well-known/oauth-authorization-server" && withMetadata) {
      return Response.json({
        issuer: (options.issuer ?? ((at: string) => `${at}/oauth`))(origin),
        authorization_endpoint: `${origin}${prefix}/authorize`,
        token_endpoint: `${origin}${prefix}/token`,
        registration_endpoint: `${origin}${prefix}/register`,
        response_types_supported: ["code"],
        grant_types_supported: ["authorization_code", "refresh_token"],
        code_challenge_methods_supported: ["S256"],
        token_endpoint_auth_methods_supported: ["none"],
      });
    }
    if (url.pathname === `${prefix}/register` && request.method === "POST") {
      const body = (await request.json()) as { redirect_uris?: string[] };
      return Response.json(
        {
          client_id: "legacy-client",
          redirect_uris: body.redirect_uris ?? [],
          token_endpoint_auth_method: "none",
        },
        { status: 201 },
      );
    }
    if (url.pathname === `${prefix}/authorize`) {
      const code = randomBytes(8).toString("hex");
      challenges.set(code, url.searchParams.get("code_challenge") ?? "");
      const back = new URL(url.searchParams.get("redirect_uri") ?? "");
      back.searchParams.set("code", code);
      back.searchParams.set("state", url.searchParams.get("state") ?? "");
      return new Response(null, { status: 302, headers: { location: back.href } });
    }
    if (url.pathname === `${prefix}/token` && request.method === "POST") {
      const form = new URLSearchParams(await request.text());
      const challenge = challenges.get(form.get("code") ?? "");
      const verifier = form.get("code_verifier") ?? "";
      if (
        challenge === undefined ||
        createHash("sha256").update(verifier).digest("base64url") !== challenge
      ) {
        return Response.json({ error: "invalid_grant" }, { status: 400 });
      }
      const token = `legacy-${randomBytes(12).toString("hex")}`;
      issued.add(token);
      return Response.json({ access_token: token, token_type: "Bearer", expires_in: 3600 });
    }
    if (url.pathname !== "/mcp") return new Response("not found", { status: 404 });
    const token = /^Bearer (.+)$/.exec(request.headers.get("authorization") ?? "")?.[1];
    if (token === undefined || !issued.has(token)) {
      const metadata = options.resourceMetadata
        ? `, resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`
        : "";
      return Response.json(
        { error: "invalid_token" },
        { status: 401, headers: { "www-authenticate": `Bearer error="invalid_token"${metadata}` } },
      );
    }
    return mcp.fetch(request);
  });
  origin = web.origin;
  return { ...web, url: `${origin}/mcp`, seen };
}

function legacyServer(url: string): ServerConfig {
  return serverConfig({ id: "legacy", transport: "http", url });
}

/** `sciencegate auth legacy`, with a browser that signs in at once. */
async function authorize(server: ServerConfig, store: OAuthCredentialStore): Promise<URL> {
  const callback = await createLoopbackCallback();
  try {
    const begun = await beginAuthorization({ server, store, redirectUri: callback.redirectUri });
    if (begun.status !== "redirect") throw new Error("expected a page to open");
    const page = await fetch(begun.pending.url, { redirect: "manual" });
    await page.body?.cancel();
    const back = await fetch(new URL(page.headers.get("location") ?? "", begun.pending.url));
    await back.body?.cancel();
    await begun.pending.complete(await callback.received);
    return begun.pending.url;
  } finally {
    await callback.close();
  }
}

async function callEcho(server: ServerConfig, store: OAuthCredentialStore): Promise<unknown> {
  const pool = new ServerPool([server], {
    authorization: (config) => createOAuthProvider({ server: config, store }),
  });
  try {
    const result = await pool.callTool("legacy", "echo", { text: "old" });
    return (result.content[0] as { text: string }).text;
  } catch (error) {
    return error;
  } finally {
    await pool.close();
  }
}

describe("authorization discovery of a 2025-03-26 server", () => {
  test("no resource metadata: the origin's metadata is used although its issuer has a path, then the endpoints it names", async () => {
    const legacy = await startLegacyServer();
    const store = new MemoryCredentialStore();
    try {
      const server = legacyServer(legacy.url);
      expect(await callEcho(server, store)).toMatchObject({ code: "UNAUTHORIZED" });
      const page = await authorize(server, store);
      expect(page.origin + page.pathname).toBe(`${legacy.origin}/oauth/authorize`);
      expect(page.searchParams.get("code_challenge_method")).toBe("S256");
      expect(legacy.seen).toContain("POST /oauth/register");
      expect(legacy.seen).toContain("POST /oauth/token");
      expect(await callEcho(server, store)).toBe("echo: old");
      const stored = await store.get({ serverId: "legacy" });
      expect(stored?.discoveryState?.authorizationServerUrl).toBe(`${legacy.origin}/`);
      expect(stored?.discoveryState?.authorizationServerMetadata?.issuer).toBe(`${legacy.origin}/oauth`);
    } finally {
      await legacy.close();
    }
  });

  test("no metadata either: the default endpoints /authorize, /token and /register of the origin", async () => {
    const legacy = await startLegacyServer({ issuer: null });
    const store = new MemoryCredentialStore();
    try {
      const server = legacyServer(legacy.url);
      const page = await authorize(server, store);
      expect(page.origin + page.pathname).toBe(`${legacy.origin}/authorize`);
      expect(legacy.seen).toEqual(expect.arrayContaining(["POST /register", "POST /token"]));
      expect(await callEcho(server, store)).toBe("echo: old");
    } finally {
      await legacy.close();
    }
  });

  test("metadata at the origin naming an issuer on another origin is refused: nothing is registered", async () => {
    const legacy = await startLegacyServer({ issuer: () => "https://auth.example.com" });
    try {
      const server = legacyServer(legacy.url);
      await expect(
        beginAuthorization({
          server,
          store: new MemoryCredentialStore(),
          redirectUri: "http://127.0.0.1:1/cb",
        }),
      ).rejects.toMatchObject({ code: "UNAUTHORIZED", message: expect.stringMatching(/issuer mismatch/i) });
      expect(await callEcho(server, new MemoryCredentialStore())).toMatchObject({ code: "UNAUTHORIZED" });
      expect(legacy.seen.filter((line) => line.startsWith("POST /oauth"))).toEqual([]);
    } finally {
      await legacy.close();
    }
  });
});

describe("the current revision keeps its issuer check", () => {
  test("a server with resource metadata whose authorization server's metadata names another issuer is refused", async () => {
    // The same metadata the 2025-03-26 server above is accepted with, behind resource metadata.
    const current = await startLegacyServer({ resourceMetadata: true });
    try {
      const server = legacyServer(current.url);
      await expect(
        beginAuthorization({
          server,
          store: new MemoryCredentialStore(),
          redirectUri: "http://127.0.0.1:1/cb",
        }),
      ).rejects.toMatchObject({ code: "UNAUTHORIZED", message: expect.stringMatching(/issuer mismatch/i) });
      expect(await callEcho(server, new MemoryCredentialStore())).toMatchObject({
        code: "UNAUTHORIZED",
        message: expect.stringMatching(/issuer mismatch/i),
      });
      expect(current.seen).toContain("GET /.well-known/oauth-authorization-server");
      expect(current.seen.filter((line) => line.startsWith("POST /oauth"))).toEqual([]);
    } finally {
      await current.close();
    }
  });
});
