/**
 * A `paper_extract_pdf` the permission policy makes dangerous (`strict`) gets the approval card every
 * governed call gets, in the call's own graph task, before it runs; the broker's permission step then
 * consumes the recorded decision.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { ToolMessage } from "@langchain/core/messages";
import { Command, type Interrupt, MemorySaver, START, StateGraph } from "@langchain/langgraph";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { z } from "zod";
import { createArtifactBuiltins } from "../../src/adapters/artifact-builtins.js";
import { createGatewayServer, type GatewayServer } from "../../src/gateway/index.js";
import type { ApprovalHitlRequest } from "../../src/nodes/index.js";
import { createDownloadLab, type DownloadLab, PAPER_ID } from "../gateway/gateway-downloads-harness.js";
import { interruptsOf } from "./filesystem-executors.js";

let lab: DownloadLab | undefined;
let gateway: GatewayServer | undefined;
afterEach(async () => {
  await gateway?.close();
  await lab?.close();
  gateway = undefined;
  lab = undefined;
});

/** A strict runtime with one completed download of session `s1`, made through the gateway (approved). */
async function downloaded() {
  lab = await createDownloadLab({ permissions: { policy: { strict: true } } });
  gateway = createGatewayServer({ governance: lab.governance, eager: true });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.connect(serverSide, { sessionId: "s1" });
  const client = new Client(
    { name: "extraction-card-test", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  client.setRequestHandler(ElicitRequestSchema, () => ({
    action: "accept",
    content: { decision: "allow_once" },
  }));
  await client.connect(clientSide);
  const call = async (name: string, args: object) =>
    (await client.callTool({ name, arguments: { ...args } })) as CallToolResult;
  const prepared = await call("mcp__arxiv__prepare_paper_download", { id: PAPER_ID });
  const { mcpInvocationId, artifacts } = prepared.structuredContent as {
    mcpInvocationId: string;
    artifacts: { candidateId: string }[];
  };
  const download = await call("artifact_download", {
    mcpInvocationId,
    candidateId: artifacts[0]?.candidateId,
  });
  expect(download.isError, JSON.stringify(download.content)).toBeUndefined();
  return { lab, jobId: (download.structuredContent as { jobId: string }).jobId };
}

/** A graph whose one task runs the executor's `paper_extract_pdf` built-in for session `s1`. */
function extractionGraph(governance: DownloadLab["governance"], jobId: string) {
  const builtins = createArtifactBuiltins(governance, { artifactTools: true, sessionId: () => "s1" });
  const extract = builtins.find((tool) => tool.name === "paper_extract_pdf");
  if (!extract) throw new Error("no paper_extract_pdf built-in");
  return new StateGraph(z.object({ status: z.string().optional(), content: z.string().optional() }))
    .addNode("extract", async (_state, config) => {
      const message = (await extract.invoke(
        { id: "x-1", name: "paper_extract_pdf", args: { artifactJobId: jobId }, type: "tool_call" },
        config,
      )) as ToolMessage;
      return { status: message.status ?? "success", content: String(message.content) };
    })
    .addEdge(START, "extract")
    .compile({ checkpointer: new MemorySaver() });
}

describe("paper_extract_pdf under a strict policy: the normal approval card", () => {
  test("the task pauses with one HITL card naming paper_extract_pdf (approve and reject only); approve extracts, and the row names the user_once authorization", async () => {
    const { lab, jobId } = await downloaded();
    const graph = extractionGraph(lab.governance, jobId);
    const config = { configurable: { thread_id: "t1" } };
    const paused = await graph.invoke({}, config);
    const cards = interruptsOf(paused) as Interrupt<ApprovalHitlRequest>[];
    expect(cards).toHaveLength(1);
    expect(cards[0]?.value?.reviewConfigs).toEqual([
      { actionName: "paper_extract_pdf", allowedDecisions: ["approve", "reject"] },
    ]);
    expect(existsSync(join(lab.dataDir, "papers", jobId))).toBe(false);
    const done = await graph.invoke(new Command({ resume: { decisions: [{ type: "approve" }] } }), config);
    expect(done.status, done.content).toBe("success");
    expect(JSON.parse(done.content ?? "{}")).toMatchObject({ artifactJobId: jobId, pageCount: 2 });
    const rows = await lab.governance.ledger.query({ sessionId: "s1", toolId: "paper_extract_pdf" });
    expect(rows).toMatchObject([{ status: "ok", threadId: "t1", toolCallId: "x-1" }]);
    const authorization = (await lab.governance.ledger.listAuthorizations({ sessionId: "s1" })).find(
      (a) => a.id === rows[0]?.authorizationId,
    );
    expect(authorization).toMatchObject({ toolId: "paper_extract_pdf", decisionSource: "user_once" });
  });

  test("reject: the card was shown, nothing is extracted; the model gets PERMISSION_DENIED and the call has one error row", async () => {
    const { lab, jobId } = await downloaded();
    const graph = extractionGraph(lab.governance, jobId);
    const config = { configurable: { thread_id: "t1" } };
    expect(interruptsOf(await graph.invoke({}, config))).toHaveLength(1);
    const done = await graph.invoke(
      new Command({ resume: { decisions: [{ type: "reject", message: "not now" }] } }),
      config,
    );
    expect(done.status).toBe("error");
    expect(JSON.parse(done.content ?? "{}")).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(existsSync(join(lab.dataDir, "papers", jobId))).toBe(false);
    const rows = await lab.governance.ledger.query({ sessionId: "s1", toolId: "paper_extract_pdf" });
    expect(rows).toMatchObject([{ status: "error", error: { code: "PERMISSION_DENIED" } }]);
  });
});
