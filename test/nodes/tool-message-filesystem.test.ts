/**
 * What the model reads from a real server without a manifest (`@modelcontextprotocol/server-filesystem`,
 * stdio): the file's text once, after the invocation id; the full result is the message's artifact.
 */
import { mkdtemp, realpath, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, expect, test } from "vitest";
import type { InvokeOutcome } from "../../src/governance/broker/index.js";
import { executeGovernedToolCall } from "../../src/nodes/execute-tool-call.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { promote, promotionReducer } from "../../src/visibility/promotion.js";
import { serverConfig } from "../mcp/server-configs.js";

const filesystemServer = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js", import.meta.url),
);

let governance: Governance | undefined;
afterEach(async () => {
  await governance?.close();
  governance = undefined;
});

test("read_text_file: the text once after the invocation id, no JSON envelope; the artifact keeps everything", async () => {
  const root = await realpath(await mkdtemp(join(tmpdir(), "sciencegate-msg-")));
  const file = join(root, "notes.txt");
  const text = "Line one of the notes.\nLine two: BRAF V600E.\n".repeat(20);
  await writeFile(file, text);
  governance = await createGovernance({
    config: {
      servers: [
        serverConfig({
          id: "filesystem",
          transport: "stdio",
          command: process.execPath,
          args: [filesystemServer, root],
        }),
      ],
    },
    manifests: { builtin: false, dirs: [] },
    storage: { dataDir: await mkdtemp(join(tmpdir(), "sciencegate-msg-data-")) },
    permissions: { authorize: () => ({ allowed: true }) },
  });
  const name = "mcp__filesystem__read_text_file";
  const promotion = promotionReducer(undefined, promote([name], governance.tools("s1")));
  const { message } = await executeGovernedToolCall(
    governance,
    { id: "c1", name, args: { path: file } },
    { sessionId: "s1", threadId: "t1", promotion },
  );
  const outcome = message.artifact as InvokeOutcome;
  expect(message.status).not.toBe("error");
  expect(message.content).toBe(`mcpInvocationId: ${outcome.invocationId}\n${text}`);
  // The server sends the text twice (content and structuredContent); code still finds both.
  expect(outcome.result.data).toEqual({
    content: [{ type: "text", text }],
    structuredContent: { content: text },
  });
  expect(outcome.result).toMatchObject({ records: [], license: "unknown", sourceId: "filesystem" });
});
