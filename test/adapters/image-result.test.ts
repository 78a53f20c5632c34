/**
 * An image a server returns reaches the model as an image: through `createGovernedAgent`, the tool
 * message the model is sent on its next turn carries the text (with the invocation id to cite) and the
 * image as a LangChain standard content block, byte for byte, with its hash; the ledger keeps the call.
 */
import { createHash } from "node:crypto";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AIMessage, HumanMessage, type ToolMessage } from "@langchain/core/messages";
import { MemorySaver } from "@langchain/langgraph";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { afterEach, expect, test } from "vitest";
import { z } from "zod";
import { createGovernedAgent } from "../../src/adapters/create-governed-agent.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { RecordingModel } from "./recording-model.js";

// A real 1×1 PNG (signature, IHDR, IDAT, IEND).
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

let governance: Governance | undefined;
afterEach(async () => {
  await governance?.close();
  governance = undefined;
});

test("an image result reaches the model as an image block next to the text, not as a placeholder", async () => {
  const manifestDir = await mkdtemp(join(tmpdir(), "sciencegate-image-m-"));
  await writeFile(
    join(manifestDir, "demo.json"),
    JSON.stringify(
      makeSource({
        tools: [
          makeTool({
            id: "render",
            kind: "lookup",
            inputSchema: { type: "object", properties: { id: { type: "string" } }, required: ["id"] },
          }),
        ],
      }),
    ),
  );
  const server = () => {
    const s = new McpServer({ name: "demo", version: "1.0.0" });
    s.registerTool("render", { inputSchema: { id: z.string() } }, async ({ id }) => ({
      content: [
        { type: "text", text: `Structure ${id}` },
        { type: "image", data: PNG.toString("base64"), mimeType: "image/png" },
      ],
    }));
    return s;
  };
  governance = await createGovernance({
    config: { servers: [] },
    manifests: { builtin: false, dirs: [manifestDir] },
    mcp: { pool: createInMemoryPool({ demo: server }) },
    storage: { dataDir: await mkdtemp(join(tmpdir(), "sciencegate-image-d-")) },
  });
  await governance.permissions.setApprovalMode("img", "always_allow");
  const model = new RecordingModel()
    .respond(
      new AIMessage({
        id: "m-1",
        content: "",
        tool_calls: [{ id: "search-1", name: "tool_search", args: { query: "select:mcp__demo__render" } }],
      }),
    )
    .respond(
      new AIMessage({
        id: "m-2",
        content: "",
        tool_calls: [{ id: "call-1", name: "mcp__demo__render", args: { id: "1abc" } }],
      }),
    )
    .respond(new AIMessage({ id: "m-3", content: "done" }));
  const agent = createGovernedAgent({ model, governance, checkpointer: new MemorySaver() });
  await agent.invoke(
    { messages: [new HumanMessage("show me 1abc")] },
    { configurable: { thread_id: "img" } },
  );

  // What the model was sent on the turn after the call.
  const lastTurn = model.calls.at(-1)?.messages ?? [];
  const reply = lastTurn.find((m) => (m as ToolMessage).tool_call_id === "call-1") as ToolMessage | undefined;
  expect(reply?.status).not.toBe("error");
  const blocks = reply?.content as Array<Record<string, unknown>>;
  expect(Array.isArray(blocks)).toBe(true);
  expect(blocks[0]).toMatchObject({ type: "text" });
  expect(String(blocks[0]?.text)).toContain("Structure 1abc");
  expect(String(blocks[0]?.text)).not.toContain("image omitted");
  const images = blocks.filter((block) => block.type === "image");
  expect(images).toHaveLength(1);
  expect(images[0]).toMatchObject({ mimeType: "image/png", data: PNG.toString("base64") });
  expect((images[0]?.metadata as { sha256?: string } | undefined)?.sha256).toContain(
    createHash("sha256").update(PNG).digest("hex"),
  );

  const rows = await governance.ledger.query({ sessionId: "img" });
  expect(rows.filter((row) => row.toolId === "render")).toMatchObject([{ status: "ok" }]);
});
