/**
 * A gateway session's research object as an MCP resource (`researchObjects: true`): listed, read by a
 * real SDK client as a zip blob that verifies, holding that session's calls only; another session reads
 * its own, and a session without calls is told so (resource not found).
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createGatewayServer, type GatewayServer } from "../../src/gateway/create-gateway-server.js";
import { RESEARCH_OBJECT_URI } from "../../src/gateway/gateway-research-object.js";
import { verifyResearchObject } from "../../src/research-object/index.js";
import { connectClient, createLab, type Lab } from "./gateway-harness.js";

let lab: Lab;
let gateway: GatewayServer;
const scratch = await mkdtemp(join(tmpdir(), "sciencegate-gateway-ro-"));

beforeAll(async () => {
  lab = await createLab();
  gateway = createGatewayServer({
    governance: lab.governance,
    eager: true,
    approval: false,
    tools: () => [],
    researchObjects: true,
  });
});
afterAll(async () => {
  await gateway.close();
  await lab.governance.close();
  await rm(scratch, { recursive: true, force: true });
});

test("a session reads its own research object; another session's is its own; none before a call", async () => {
  const a = await connectClient(gateway, { sessionId: "ro-a" });
  const b = await connectClient(gateway, { sessionId: "ro-b" });
  expect(a.client.getServerCapabilities()?.resources).toEqual({ listChanged: true });
  expect((await a.client.listResources()).resources).toEqual([
    expect.objectContaining({ uri: RESEARCH_OBJECT_URI, mimeType: "application/zip" }),
  ]);
  await expect(b.client.readResource({ uri: RESEARCH_OBJECT_URI })).rejects.toThrow(
    /No governed call is recorded for session 'ro-b'/,
  );

  const called = await a.client.callTool({ name: "mcp__lab__search", arguments: { query: "brca1" } });
  expect(called.isError).toBeFalsy();
  const read = await a.client.readResource({ uri: RESEARCH_OBJECT_URI });
  const [content] = read.contents;
  expect(content).toMatchObject({ uri: RESEARCH_OBJECT_URI, mimeType: "application/zip" });
  const zip = join(scratch, "a.zip");
  await writeFile(zip, Buffer.from(String((content as { blob?: string }).blob), "base64"));
  expect(await verifyResearchObject(zip)).toMatchObject({ ok: true, invocations: 1 });

  await expect(b.client.readResource({ uri: "sciencegate://research-object/ro-a.zip" })).rejects.toThrow(
    /Resource not found/,
  );
  await a.client.close();
  await b.client.close();
});
