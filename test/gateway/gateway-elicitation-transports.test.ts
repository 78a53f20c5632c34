/**
 * Approvals by elicitation over the transports users run, with the real SDK client: `sciencegate serve
 * gateway` as a process on stdio, and `serveGatewayHttp` over Streamable HTTP, where the question
 * travels on the tool call's own response stream. Each client declares `elicitation` and answers.
 */

import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult,
} from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { createGatewayServer, serveGatewayHttp } from "../../src/gateway/index.js";
import { SqliteLedger } from "../../src/governance/audit/index.js";
import { createLab } from "./gateway-harness.js";
import { GATEWAY_COMMAND, writeGatewayProject } from "./gateway-project.js";

/** A client that declares elicitation and answers each question with the next decision. */
async function answeringClient(transport: Transport, decisions: string[]) {
  const client = new Client(
    { name: "elicitation-client", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  const asked: ElicitRequest["params"][] = [];
  client.setRequestHandler(ElicitRequestSchema, (request): ElicitResult => {
    asked.push(request.params);
    const decision = decisions[asked.length - 1];
    if (decision === undefined) throw new Error(`unexpected question #${asked.length}`);
    return {
      action: "accept",
      content: { decision, ...(decision === "deny" ? { message: "not now" } : {}) },
    };
  });
  await client.connect(transport);
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult;
  return { client, asked, call };
}

describe("approvals by elicitation over stdio and Streamable HTTP", () => {
  test("stdio: the spawned gateway asks; allow once runs the call (echo, not declared read-only), deny refuses the next with the user's message", async () => {
    const project = writeGatewayProject({ dangerousEcho: true });
    const transport = new StdioClientTransport({
      command: GATEWAY_COMMAND.command,
      args: [...GATEWAY_COMMAND.args, "--eager", ...project.args],
      env: project.env,
      cwd: project.dir,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const { client, asked, call } = await answeringClient(transport, ["allow_once", "deny"]).catch(
      (error: unknown) => {
        throw new Error(`${String(error)}; gateway stderr: ${stderr}`);
      },
    );
    let sessionId = "";
    try {
      const ran = await call("mcp__local__echo", { text: "hello" });
      expect(ran.isError).toBeUndefined();
      expect(ran.content).toMatchObject([{ type: "text", text: expect.stringContaining("hello") }]);
      const refused = await call("mcp__local__echo", { text: "again" });
      expect(refused.isError).toBe(true);
      expect(refused.structuredContent).toMatchObject({
        code: "PERMISSION_DENIED",
        message: expect.stringContaining("not now"),
      });
      expect(asked).toHaveLength(2);
      expect(asked[0]?.message).toContain("mcp__local__echo");
    } finally {
      await client.close();
    }
    const ledger = await SqliteLedger.open(join(project.dataDir, "ledger.sqlite"));
    try {
      const rows = (await ledger.query()).sort((a, b) => a.startedAt.localeCompare(b.startedAt));
      expect(rows.map((r) => [r.toolId, r.status, r.error?.code])).toEqual([
        ["echo", "ok", undefined],
        ["echo", "error", "PERMISSION_DENIED"],
      ]);
      sessionId = rows[0]?.sessionId ?? "";
      const sources = (await ledger.listAuthorizations({ sessionId })).map((a) => a.decisionSource);
      expect(sources).toEqual(["user_once", "user_deny"]);
      expect(rows.map((r) => r.authorizationId)).toEqual(
        (await ledger.listAuthorizations({ sessionId })).map((a) => a.id),
      );
    } finally {
      await ledger.close();
    }
  }, 60_000);

  test("Streamable HTTP: the question arrives on the call's stream; allow matching runs it and covers the next call without asking", async () => {
    const lab = await createLab();
    const gateway = createGatewayServer({ governance: lab.governance, eager: true });
    const http = await serveGatewayHttp(gateway, { onError: () => {} });
    const transport = new StreamableHTTPClientTransport(new URL(http.url));
    const { client, asked, call } = await answeringClient(transport, ["allow_matching"]);
    try {
      const first = await call("mcp__lab__write", { query: "x" });
      expect(first.isError).toBeUndefined();
      const second = await call("mcp__lab__write", { query: "y" });
      expect(second.isError).toBeUndefined();
      expect(asked).toHaveLength(1);
      expect(lab.calls.write).toBe(2);
      const sessionId = gateway.sessions()[0]?.sessionId as string;
      expect(sessionId).not.toContain(transport.sessionId);
      const sources = (await lab.governance.ledger.listAuthorizations({ sessionId })).map(
        (a) => a.decisionSource,
      );
      expect(sources).toEqual(["user_grant", "existing_grant"]);
      expect(await lab.governance.permissions.listGrants({ sessionId })).toHaveLength(1);
    } finally {
      await client.close();
      await http.close();
      await gateway.close();
      await lab.governance.close();
    }
  });
});
