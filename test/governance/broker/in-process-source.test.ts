/**
 * A source served in process (the built-ins' seam, `BrokerOptions.inProcess`) takes the broker's one
 * call path: validation against its manifest, its preparation before the permission step, the
 * permission hook on the prepared subject, its own run in place of the MCP request, and one row for
 * every outcome.
 */
import { afterEach, describe, expect, test } from "vitest";
import type { McpToolResult } from "../../../src/contract/result-types.js";
import { GovernanceError } from "../../../src/core/errors.js";
import type { InProcessSource } from "../../../src/governance/broker/in-process-source.js";
import { parseManifest } from "../../../src/governance/manifests/manifest-loader.js";
import type { AuthorizationRequest, AuthorizeResult } from "../../../src/governance/permissions/index.js";
import { makeSource, makeTool } from "../manifests/manifest-factory.js";
import { createHarness, type Harness } from "./broker-harness.js";

const opened: Harness[] = [];
afterEach(async () => {
  for (const harness of opened.splice(0)) await harness.close();
});

/** An in-process source `local` with a tool `echo` (`{word}`) that counts its runs. */
function localSource() {
  const runs: string[] = [];
  const manifest = parseManifest(
    makeSource({
      id: "local",
      tools: [
        makeTool({
          id: "echo",
          inputSchema: {
            type: "object",
            properties: { word: { type: "string" } },
            required: ["word"],
            additionalProperties: false,
          },
        }),
      ],
    }),
  );
  const source: InProcessSource = {
    manifest,
    async prepare(call) {
      const word = String(call.input.word);
      if (word === "refused") throw new GovernanceError("INVALID_INPUT", "Refused while preparing.");
      return {
        subject: { word, length: word.length },
        async run({ tally }) {
          tally.attempts = 1;
          runs.push(word);
          const result: McpToolResult = {
            records: [],
            warnings: [],
            data: { echoed: word },
            attribution: "test",
            license: "CC0",
            retrievedAt: new Date(0).toISOString(),
            sourceId: "local",
            toolId: "echo",
            untrusted: true,
          };
          return result;
        },
      };
    },
  };
  return { source, runs };
}

async function harness(authorize?: (request: AuthorizationRequest) => AuthorizeResult) {
  const { source, runs } = localSource();
  const seen: AuthorizationRequest[] = [];
  const h = await createHarness({
    inProcess: [source],
    authorize: (request) => {
      seen.push(request);
      return authorize?.(request) ?? { allowed: true };
    },
  });
  opened.push(h);
  const call = (word: unknown, key?: { threadId: string; toolCallId: string; session?: string }) =>
    h.broker.invoke({
      sourceId: "local",
      toolId: "echo",
      input: { word },
      sessionId: key?.session ?? "s1",
      ...(key ? { threadId: key.threadId, toolCallId: key.toolCallId } : {}),
    });
  return { h, runs, seen, call };
}

describe("an in-process source through Broker.invoke", () => {
  test("runs once authorized on the prepared subject, with one row; its key replays it", async () => {
    const { h, runs, seen, call } = await harness();
    const outcome = await call("braf", { threadId: "t1", toolCallId: "k1" });
    expect(outcome.result.data).toEqual({ echoed: "braf" });
    expect(seen).toHaveLength(1);
    expect(seen[0]).toMatchObject({ sourceId: "local", toolId: "echo", input: { word: "braf", length: 4 } });
    const again = await call("braf", { threadId: "t1", toolCallId: "k1" });
    expect(again).toMatchObject({ replayed: true, invocationId: outcome.invocationId });
    expect(runs).toEqual(["braf"]);
    expect(await h.ledger.query({})).toMatchObject([
      { sourceId: "local", toolId: "echo", status: "ok", toolCallId: "k1", attempts: 1 },
    ]);
  });

  test("a denial runs nothing and is recorded as the call's row", async () => {
    const { h, runs, call } = await harness(() => ({ allowed: false, reason: "no" }) as AuthorizeResult);
    await expect(call("braf")).rejects.toMatchObject({ code: "PERMISSION_DENIED" });
    expect(runs).toEqual([]);
    expect(await h.ledger.query({})).toMatchObject([
      { status: "error", error: { code: "PERMISSION_DENIED" } },
    ]);
  });

  test("invalid arguments and a refusal of its preparation are rows too, and nothing runs", async () => {
    const { h, runs, seen, call } = await harness();
    await expect(call(42)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(call("refused")).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: "Refused while preparing.",
    });
    expect(runs).toEqual([]);
    expect(seen).toEqual([]);
    expect((await h.ledger.query({})).map((row) => row.status)).toEqual(["error", "error"]);
  });

  test("its key reused with other arguments or by another session is refused as for an MCP tool", async () => {
    const { h, runs, call } = await harness();
    await call("braf", { threadId: "t1", toolCallId: "k1" });
    for (const refused of [
      call("kras", { threadId: "t1", toolCallId: "k1" }),
      call("braf", { threadId: "t1", toolCallId: "k1", session: "s2" }),
    ]) {
      await expect(refused).rejects.toMatchObject({
        code: "PERMISSION_DENIED",
        data: { reason: "tool_call_id_reused" },
      });
    }
    expect(runs).toEqual(["braf"]);
    const rows = await h.ledger.query({});
    expect(rows.map((row) => row.toolCallId ?? null)).toEqual(["k1", null, null]);
  });

  test("a source switched off for the session is SOURCE_DISABLED", async () => {
    const { h, runs, call } = await harness();
    await h.broker.sessions.disableSource("s1", "local");
    await expect(call("braf")).rejects.toMatchObject({ code: "SOURCE_DISABLED" });
    expect(runs).toEqual([]);
  });
});
