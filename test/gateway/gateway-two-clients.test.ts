/**
 * Two clients of one gateway are two sessions: what Alice's client allows over elicitation (a matching
 * grant, the always-allow mode) never lets Bob's client run a dangerous call. Bob's client declares no
 * elicitation, so without a grant or mode of his own his call is refused and nothing runs upstream.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { createGatewayServer, type GatewayServer } from "../../src/gateway/index.js";
import { connectClient, createLab, type Lab } from "./gateway-harness.js";

let lab: Lab | undefined;
let gateway: GatewayServer | undefined;
afterEach(async () => {
  await gateway?.close();
  await lab?.governance.close();
  gateway = undefined;
  lab = undefined;
});

/** A client that answers every elicitation with `decision`. */
async function answeringClient(server: GatewayServer, decision: string) {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const session = await server.connect(serverSide);
  const client = new Client({ name: "alice", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  let asked = 0;
  client.setRequestHandler(ElicitRequestSchema, () => {
    asked += 1;
    return { action: "accept", content: { decision } };
  });
  await client.connect(clientSide);
  return { session, client, asked: () => asked };
}

const write = (client: Client, query: string) =>
  client.callTool({ name: "mcp__lab__write", arguments: { query } }) as Promise<CallToolResult>;

describe.each(["allow_matching", "allow_always"])(
  "two clients of one gateway: Alice answers %s",
  (decision) => {
    test("Bob's dangerous call is not covered: refused, nothing runs upstream, and Alice keeps her cover", async () => {
      lab = await createLab();
      gateway = createGatewayServer({ governance: lab.governance, eager: true });
      const alice = await answeringClient(gateway, decision);
      const bob = await connectClient(gateway);
      expect(bob.session.sessionId).not.toBe(alice.session.sessionId);

      expect((await write(alice.client, "a")).isError).toBeUndefined();
      expect(alice.asked()).toBe(1);
      expect(lab.calls.write).toBe(1);

      const refused = await write(bob.client, "b");
      expect(refused.isError).toBe(true);
      expect(JSON.stringify(refused.content)).toContain("PERMISSION_DENIED");
      expect(lab.calls.write).toBe(1);

      // Alice's next write runs under her own grant or mode, without a question.
      expect((await write(alice.client, "c")).isError).toBeUndefined();
      expect(alice.asked()).toBe(1);
      expect(lab.calls.write).toBe(2);
      const bobRows = await lab.governance.ledger.query({ sessionId: bob.session.sessionId });
      expect(bobRows.map((row) => [row.status, row.error?.code])).toEqual([["error", "PERMISSION_DENIED"]]);
    });
  },
);
