import { mkdtempSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js";
import { afterEach, describe, expect, test } from "vitest";
import { z } from "zod";
import {
  createScienceGovernance as createGovernance,
  type ScienceGovernance as Governance,
} from "../../src/adk/index.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";

const SECRET = "s3cret-remote-token";

/** A remote MCP server that only speaks the older SSE transport and checks the Bearer token. */
async function sseOnlyServer() {
  const sessions = new Map<string, SSEServerTransport>();
  const seen: { method: string | undefined; path: string; authorization: string | undefined }[] = [];
  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    seen.push({
      method: req.method,
      path: new URL(req.url ?? "/", "http://127.0.0.1").pathname,
      authorization: req.headers.authorization,
    });
    if (req.headers.authorization !== `Bearer ${SECRET}`) return void res.writeHead(401).end();
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (req.method === "GET" && url.pathname === "/mcp") {
      const transport = new SSEServerTransport("/messages", res);
      sessions.set(transport.sessionId, transport);
      const mcp = new McpServer({ name: "remote-compute", version: "1.0.0" });
      mcp.registerTool(
        "square",
        {
          description: "Squares a number.",
          inputSchema: { x: z.number() },
          annotations: { readOnlyHint: true },
        },
        async ({ x }) => ({ content: [{ type: "text", text: String(x * x) }] }),
      );
      await mcp.connect(transport);
    } else if (req.method === "POST" && url.pathname === "/messages") {
      await sessions.get(url.searchParams.get("sessionId") ?? "")?.handlePostMessage(req, res);
    } else {
      // No streamable HTTP endpoint: a POST to /mcp is refused, so the client must fall back to SSE.
      res.writeHead(405).end();
    }
  };
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    seen,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const step of cleanup.reverse()) await step();
  cleanup = [];
});

describe("a remote science.toml provider", () => {
  test("falls back from streamable HTTP to SSE, sends the token_env Bearer token, and keeps it out of the ledger", async () => {
    const remote = await sseOnlyServer();
    cleanup.push(remote.stop);
    const dir = mkdtempSync(join(tmpdir(), "sciencegate-remote-"));
    writeFileSync(
      join(dir, "science.toml"),
      `[project]\nname = "remote"\n\n[tools.remote_compute]\nurl = "${remote.url}"\ntoken_env = "COMPUTE_API_TOKEN"\n`,
    );
    const warnings: string[] = [];
    const governance: Governance = await createGovernance({
      cwd: dir,
      env: { COMPUTE_API_TOKEN: SECRET },
      storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
      permissions: { authorize: () => ({ allowed: true }) },
      onWarning: (line) => warnings.push(line),
    });
    cleanup.push(() => governance.close());
    expect(warnings).toEqual([]);
    const outcome = await governance.callTool("remote_compute.square", { x: 7 }, { runId: "r1" });
    expect(JSON.stringify(outcome.result.data)).toContain("49");
    // First a streamable-HTTP POST to the URL (refused), then the SSE stream and its message posts.
    const firstPost = remote.seen.findIndex((r) => r.method === "POST" && r.path === "/mcp");
    const firstGet = remote.seen.findIndex((r) => r.method === "GET" && r.path === "/mcp");
    expect(firstPost).toBeGreaterThanOrEqual(0);
    expect(firstGet).toBeGreaterThan(firstPost);
    expect(remote.seen.some((r) => r.method === "POST" && r.path === "/messages")).toBe(true);
    expect(remote.seen.every((r) => r.authorization === `Bearer ${SECRET}`)).toBe(true);
    const rows = await governance.ledger.query({});
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ status: "ok", runId: "r1" });
    expect(JSON.stringify(rows)).not.toContain(SECRET);
  });
});
