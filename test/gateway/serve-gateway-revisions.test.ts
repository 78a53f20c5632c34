/**
 * `sciencegate serve gateway` on stdio answers clients of both revisions: the SDK v2 client pinned to
 * 2026-07-28 and in `auto` mode, and the 1.x client (2025-11-25). Pinned or in `auto` mode the SDK's own
 * `StdioClientTransport` sends its `server/discover` probe to a disposable sibling process it spawns
 * (the client's design, for servers that exit on a pre-`initialize` request); a subclass of it probes
 * in place, on the session's one process. Either way the gateway answers the probe and the client
 * settles on 2026-07-28. A dangerous call is approved by a multi-round-trip
 * request for 2026-07-28 (`input_required`, the retry with the answer), by elicitation for 2025-11-25;
 * each runs once with one ledger row and one authorization.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Client as ClientV2 } from "@modelcontextprotocol/client";
import { StdioClientTransport as StdioV2 } from "@modelcontextprotocol/client/stdio";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, test } from "vitest";
import { SqliteLedger } from "../../src/governance/audit/index.js";
import { tempDir } from "../cli/cli-harness.js";
import { GATEWAY_COMMAND, type GatewayProject, writeGatewayProject } from "./gateway-project.js";

const ECHO = "mcp__local__echo";

/** The stdio transport of a gateway process for the project, its stderr collected. */
function spawnOptions(project: GatewayProject) {
  return {
    command: GATEWAY_COMMAND.command,
    args: [...GATEWAY_COMMAND.args, ...project.args],
    env: project.env,
    cwd: project.dir,
    stderr: "pipe" as const,
  };
}

async function ledgerOf(project: GatewayProject) {
  const ledger = await SqliteLedger.open(join(project.dataDir, "ledger.sqlite"));
  try {
    const rows = await ledger.query({ toolId: "echo" });
    const authorizations = await ledger.listAuthorizations({});
    return { rows, authorizations };
  } finally {
    await ledger.close();
  }
}

/** The SDK transport, as a subclass: the v2 client then probes in place instead of on a sibling. */
class InPlaceProbeStdio extends StdioV2 {}

/** The gateway processes that started (each starts the test server once). */
function gatewayStarts(log: string): number {
  if (!existsSync(log)) return 0;
  return readFileSync(log, "utf8")
    .split("\n")
    .filter((line) => line.includes('"started":true')).length;
}

async function v2Client(mode: "pin" | "auto" | "auto-in-place", manual = false) {
  const log = join(tempDir(), "calls.jsonl");
  const project = writeGatewayProject({ dangerousEcho: true, serverEnv: { TEST_SERVER_CALL_LOG: log } });
  const transport =
    mode === "auto-in-place"
      ? new InPlaceProbeStdio(spawnOptions(project))
      : new StdioV2(spawnOptions(project));
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const client = new ClientV2(
    { name: "stdio-v2", version: "1.0.0" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: mode === "pin" ? { pin: "2026-07-28" } : "auto" },
      ...(manual ? { inputRequired: { autoFulfill: false } } : {}),
    },
  );
  const asked: string[] = [];
  client.setRequestHandler("elicitation/create", async (request) => {
    asked.push(String((request.params as { message?: string }).message));
    return { action: "accept", content: { decision: "allow_once" } } as never;
  });
  await client.connect(transport).catch((error: unknown) => {
    throw new Error(`${String(error)}; gateway stderr: ${stderr}`);
  });
  return { project, transport, client, asked, stderr: () => stderr, starts: () => gatewayStarts(log) };
}

describe("serve gateway (stdio): both revisions", () => {
  test.each([
    ["pin", 2],
    ["auto", 2],
    ["auto-in-place", 1],
  ] as const)(
    "a v2 client in %s mode (%i gateway processes): 2026-07-28, tool_search, and the approval as a round trip that runs the call once",
    async (mode, processes) => {
      const { project, transport, client, asked, stderr, starts } = await v2Client(mode);
      const pid = transport.pid;
      try {
        expect(client.getProtocolEra()).toBe("modern");
        expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain(ECHO);
        await client.callTool({ name: "tool_search", arguments: { query: `select:${ECHO}` } });
        expect((await client.listTools()).tools.map((tool) => tool.name)).toContain(ECHO);
        const result = (await client.callTool({
          name: ECHO,
          arguments: { text: `hello ${mode}` },
        })) as CallToolResult;
        expect(result.isError, JSON.stringify(result)).toBeFalsy();
        expect(JSON.stringify(result.content)).toContain(`hello ${mode}`);
        expect(asked).toHaveLength(1);
        expect(asked[0]).toContain(ECHO);
        expect(transport.pid).toBe(pid);
        expect(stderr().match(/serving session/g)).toHaveLength(1);
        // The session's process, plus the sibling the SDK's own transport probes on (pinned or auto).
        expect(starts()).toBe(processes);
      } finally {
        await client.close();
      }
      const { rows, authorizations } = await ledgerOf(project);
      expect(rows.map((row) => row.status)).toEqual(["ok"]);
      expect(authorizations.map((auth) => auth.decisionSource)).toEqual(["user_once"]);
      expect(rows[0]?.authorizationId).toBe(authorizations[0]?.id);
    },
    90_000,
  );

  test("the round trip by hand: input_required with a signed requestState; the retry runs once; the replay is refused", async () => {
    const { project, client } = await v2Client("pin", true);
    try {
      await client.callTool({ name: "tool_search", arguments: { query: `select:${ECHO}` } });
      const round = (await client.callTool(
        { name: ECHO, arguments: { text: "by hand" } },
        { allowInputRequired: true },
      )) as unknown as { resultType: string; requestState: string; inputRequests: Record<string, unknown> };
      expect(round.resultType).toBe("input_required");
      expect(Object.keys(round.inputRequests)).toEqual(["approval"]);
      expect(typeof round.requestState).toBe("string");
      const retry = {
        name: ECHO,
        arguments: { text: "by hand" },
        inputResponses: { approval: { action: "accept", content: { decision: "allow_once" } } },
        requestState: round.requestState,
      };
      const result = (await client.callTool(retry as never, {
        allowInputRequired: true,
      })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      await expect(client.callTool(retry as never, { allowInputRequired: true })).rejects.toMatchObject({
        code: -32602,
      });
      // Another call's arguments under the same state: refused, nothing runs.
      await expect(
        client.callTool({ ...retry, arguments: { text: "other" } } as never, { allowInputRequired: true }),
      ).rejects.toMatchObject({ code: -32602 });
    } finally {
      await client.close();
    }
    const { rows, authorizations } = await ledgerOf(project);
    expect(rows.map((row) => row.status)).toEqual(["ok"]);
    expect(authorizations.map((auth) => auth.decisionSource)).toEqual(["user_once"]);
  }, 90_000);

  test("a 1.x client on the same command: a 2025-11-25 session, the approval by elicitation", async () => {
    const project = writeGatewayProject({ dangerousEcho: true });
    const transport = new StdioClientTransport(spawnOptions(project));
    const client = new Client({ name: "stdio-v1", version: "1.0.0" }, { capabilities: { elicitation: {} } });
    let asked = 0;
    client.setRequestHandler(ElicitRequestSchema, () => {
      asked++;
      return { action: "accept", content: { decision: "allow_once" } };
    });
    await client.connect(transport);
    try {
      expect(client.getServerVersion()?.name).toBe("sciencegate-gateway");
      await client.callTool({ name: "tool_search", arguments: { query: `select:${ECHO}` } });
      const result = (await client.callTool({ name: ECHO, arguments: { text: "v1" } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect(asked).toBe(1);
    } finally {
      await client.close();
    }
    const { rows, authorizations } = await ledgerOf(project);
    expect(rows.map((row) => row.status)).toEqual(["ok"]);
    expect(authorizations.map((auth) => auth.decisionSource)).toEqual(["user_once"]);
  }, 90_000);
});
