/**
 * `paper_extract_pdf` is a broker call of the built-ins' in-process source: when the permission policy
 * makes it dangerous (`strict`), a client that declared elicitation is asked about it like any call, and
 * the broker consumes the recorded decision; the call's principal reaches its rows and its permission
 * decision, so one principal's approval never covers another's download or extraction in a shared session.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import { createGatewayServer, type GatewayServer, serveGatewayHttp } from "../../src/gateway/index.js";
import {
  connectDeciding,
  createDownloadLab,
  type DownloadLab,
  PAPER_ID,
} from "./gateway-downloads-harness.js";

let lab: DownloadLab | undefined;
let gateway: GatewayServer | undefined;
afterEach(async () => {
  await gateway?.close();
  await lab?.close();
  gateway = undefined;
  lab = undefined;
});

/** A strict runtime and an eager gateway. */
async function strictGateway() {
  lab = await createDownloadLab({ permissions: { policy: { strict: true } } });
  gateway = createGatewayServer({ governance: lab.governance, eager: true });
  return { lab, gateway };
}

/** Prepares the candidate and downloads it; returns the job id. */
async function download(call: (name: string, args: object) => Promise<CallToolResult>): Promise<string> {
  const prepared = await call("mcp__arxiv__prepare_paper_download", { id: PAPER_ID });
  expect(prepared.isError, JSON.stringify(prepared.content)).toBeUndefined();
  const { mcpInvocationId, artifacts } = prepared.structuredContent as {
    mcpInvocationId: string;
    artifacts: { candidateId: string }[];
  };
  const downloaded = await call("artifact_download", {
    mcpInvocationId,
    candidateId: artifacts[0]?.candidateId ?? "",
  });
  expect(downloaded.isError, JSON.stringify(downloaded.content)).toBeUndefined();
  return (downloaded.structuredContent as { jobId: string }).jobId;
}

describe("gateway: a dangerous extraction has the normal approval", () => {
  test("strict policy, allow once: the client is asked with the extraction's card, it runs, and its row names the user_once authorization", async () => {
    const { lab, gateway } = await strictGateway();
    const { asked, call, sessionId } = await connectDeciding(gateway, [
      "allow_once",
      "allow_once",
      "allow_once",
    ]);
    const jobId = await download(call);
    expect(asked).toHaveLength(2); // the prepare call and the download
    const result = await call("paper_extract_pdf", { artifactJobId: jobId });
    expect(result.isError, JSON.stringify(result.content)).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ artifactJobId: jobId, pageCount: 2 });
    expect(asked).toHaveLength(3);
    expect(asked[2]?.message).toContain("paper_extract_pdf");
    const rows = await lab.governance.ledger.query({ sessionId, toolId: "paper_extract_pdf" });
    expect(rows).toMatchObject([{ status: "ok", sourceId: "sciencegate" }]);
    const authorizations = await lab.governance.ledger.listAuthorizations({ sessionId });
    const authorization = authorizations.find((a) => a.id === rows[0]?.authorizationId);
    expect(authorization).toMatchObject({ toolId: "paper_extract_pdf", decisionSource: "user_once" });
  });

  test("strict policy, deny: nothing is extracted, the model gets PERMISSION_DENIED, one error row and user_deny", async () => {
    const { lab, gateway } = await strictGateway();
    const { asked, call, sessionId } = await connectDeciding(gateway, ["allow_once", "allow_once", "deny"]);
    const jobId = await download(call);
    const result = await call("paper_extract_pdf", { artifactJobId: jobId });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(asked).toHaveLength(3);
    expect(existsSync(join(lab.dataDir, "papers", jobId))).toBe(false);
    const rows = await lab.governance.ledger.query({ sessionId, toolId: "paper_extract_pdf" });
    expect(rows).toMatchObject([{ status: "error", error: { code: "PERMISSION_DENIED" } }]);
    const sources = (await lab.governance.ledger.listAuthorizations({ sessionId }))
      .filter((a) => a.toolId === "paper_extract_pdf")
      .map((a) => a.decisionSource);
    expect(sources).toContain("user_deny");
  });
});

describe("gateway: the principal reaches download and extraction rows and decisions", () => {
  test("in a shared session, a download card alice answers allow_matching covers her later downloads, never bob's", async () => {
    const { lab, gateway } = await strictGateway();
    const shared = "gateway:shared";
    const alice = await connectDeciding(gateway, ["allow_matching", "allow_matching"], {
      sessionId: shared,
      principal: "alice",
    });
    const bob = await connectDeciding(gateway, undefined, { sessionId: shared, principal: "bob" });
    const prepared = await alice.call("mcp__arxiv__prepare_paper_download", { id: PAPER_ID });
    const { mcpInvocationId, artifacts } = prepared.structuredContent as {
      mcpInvocationId: string;
      artifacts: { candidateId: string }[];
    };
    const candidate = { mcpInvocationId, candidateId: artifacts[0]?.candidateId ?? "" };
    const hers = await alice.call("artifact_download", { ...candidate, destinationPath: "alice-1.pdf" });
    expect(hers.isError, JSON.stringify(hers.content)).toBeUndefined();
    // Her grant covers her next download of the same kind without a card.
    const again = await alice.call("artifact_download", { ...candidate, destinationPath: "alice-2.pdf" });
    expect(again.isError, JSON.stringify(again.content)).toBeUndefined();
    expect(alice.asked).toHaveLength(2);
    // Bob, in the same session, is not covered by it.
    const his = await bob.call("artifact_download", { ...candidate, destinationPath: "bob.pdf" });
    expect(his.isError).toBe(true);
    expect(his.structuredContent).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(existsSync(join(lab.dataDir, "workspace", "bob.pdf"))).toBe(false);
    const rows = await lab.governance.ledger.query({ sessionId: shared, toolId: "artifact_download" });
    expect(rows.map((r) => [r.principal, r.status]).sort()).toEqual([
      ["alice", "ok"],
      ["alice", "ok"],
      ["bob", "error"],
    ]);
    const grants = await lab.governance.permissions.listGrants({ sessionId: shared });
    expect(grants.filter((g) => g.action === "download").map((g) => g.principal)).toEqual(["alice"]);
  });

  test("in a shared session, alice's always_allow covers her extraction (its rows carry her) but never bob's", async () => {
    const { lab, gateway } = await strictGateway();
    const shared = "gateway:shared";
    await lab.governance.permissions.setApprovalMode(shared, "always_allow", "alice");
    const alice = await connectDeciding(gateway, undefined, { sessionId: shared, principal: "alice" });
    const bob = await connectDeciding(gateway, undefined, { sessionId: shared, principal: "bob" });
    const jobId = await download(alice.call);

    const hers = await alice.call("paper_extract_pdf", { artifactJobId: jobId });
    expect(hers.isError, JSON.stringify(hers.content)).toBeUndefined();
    const his = await bob.call("paper_extract_pdf", { artifactJobId: jobId });
    expect(his.isError).toBe(true);
    expect(his.structuredContent).toMatchObject({ code: "PERMISSION_DENIED" });

    const rows = await lab.governance.ledger.query({ sessionId: shared, toolId: "paper_extract_pdf" });
    expect(rows.map((r) => [r.principal, r.status]).sort()).toEqual([
      ["alice", "ok"],
      ["bob", "error"],
    ]);
    // Alice's call was authorized by her mode; nothing authorized bob's (his row names no authorization).
    const extractions = (await lab.governance.ledger.listAuthorizations({ sessionId: shared })).filter(
      (a) => a.toolId === "paper_extract_pdf",
    );
    const byId = new Map(extractions.map((a) => [a.id, a]));
    const aliceRow = rows.find((r) => r.principal === "alice");
    const bobRow = rows.find((r) => r.principal === "bob");
    expect(byId.get(aliceRow?.authorizationId ?? "")).toMatchObject({
      principal: "alice",
      decisionSource: "always_allow",
    });
    expect(extractions.filter((a) => a.principal !== "alice")).toEqual([]);
    expect(bobRow?.authorizationId).toBeUndefined();
  });
});

describe("gateway: a 2026-07-28 client approves a dangerous download and extraction by round trip", () => {
  /** A strict runtime served over HTTP, and a pinned v2 client answering each form with the next decision. */
  async function statelessClient(decisions: string[]) {
    const { lab, gateway } = await strictGateway();
    const http = await serveGatewayHttp(gateway);
    const client = new ClientV2(
      { name: "builtin-round-trip-test", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
    );
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push(String((request.params as { message?: string }).message));
      const decision = decisions[asked.length - 1];
      if (decision === undefined) throw new Error(`unexpected question #${asked.length}`);
      return { action: "accept", content: { decision } } as never;
    });
    await client.connect(new HttpV2(new URL(http.url)));
    const closeAll = async () => {
      await client.close();
      await http.close();
    };
    const call = async (name: string, args: object) =>
      (await client.callTool({ name, arguments: { ...args } })) as CallToolResult;
    return { lab, asked, call, closeAll };
  }

  test("allow once: the download and the extraction each ask once, run once, and name their user_once authorization", async () => {
    const { lab, asked, call, closeAll } = await statelessClient(["allow_once", "allow_once", "allow_once"]);
    try {
      const jobId = await download(call);
      expect(asked).toHaveLength(2);
      expect(asked[1]).toContain("artifact_download");
      const result = await call("paper_extract_pdf", { artifactJobId: jobId });
      expect(result.isError, JSON.stringify(result.content)).toBeUndefined();
      expect(result.structuredContent).toMatchObject({ artifactJobId: jobId, pageCount: 2 });
      expect(asked).toHaveLength(3);
      expect(asked[2]).toContain("paper_extract_pdf");
      const rows = (await lab.governance.ledger.query({})).filter((r) =>
        ["artifact_download", "paper_extract_pdf"].includes(r.toolId),
      );
      expect(rows.map((r) => [r.toolId, r.status]).sort()).toEqual([
        ["artifact_download", "ok"],
        ["paper_extract_pdf", "ok"],
      ]);
      const authorizations = await lab.governance.ledger.listAuthorizations({});
      for (const row of rows) {
        expect(authorizations.find((a) => a.id === row.authorizationId)).toMatchObject({
          decisionSource: "user_once",
        });
      }
    } finally {
      await closeAll();
    }
  });

  test("deny: the extraction runs nothing, and its refusal is the call's one row", async () => {
    const { lab, asked, call, closeAll } = await statelessClient(["allow_once", "allow_once", "deny"]);
    try {
      const jobId = await download(call);
      const result = await call("paper_extract_pdf", { artifactJobId: jobId });
      expect(result.isError).toBe(true);
      expect(result.structuredContent).toMatchObject({ code: "PERMISSION_DENIED" });
      expect(asked).toHaveLength(3);
      expect(existsSync(join(lab.dataDir, "papers", jobId))).toBe(false);
      const rows = await lab.governance.ledger.query({ toolId: "paper_extract_pdf" });
      expect(rows).toMatchObject([{ status: "error", error: { code: "PERMISSION_DENIED" } }]);
    } finally {
      await closeAll();
    }
  });
});
