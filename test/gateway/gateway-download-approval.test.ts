import { afterEach, describe, expect, test } from "vitest";
import { createGatewayServer, type GatewayServer } from "../../src/gateway/index.js";
import {
  connectDeciding,
  createDownloadLab,
  type DownloadLab,
  PAPER_ID,
  PDF,
} from "./gateway-downloads-harness.js";

let lab: DownloadLab | undefined;
let gateway: GatewayServer | undefined;
afterEach(async () => {
  await gateway?.close();
  await lab?.close();
  gateway = undefined;
  lab = undefined;
});

/** A session whose client answers each question with the next decision (no elicitation without any). */
async function setup(decisions: string[] | undefined) {
  lab = await createDownloadLab();
  gateway = createGatewayServer({ governance: lab.governance, eager: true });
  const { asked, call, sessionId } = await connectDeciding(gateway, decisions);
  const prepared = await call("mcp__arxiv__prepare_paper_download", { id: PAPER_ID });
  expect(prepared.isError).toBeUndefined();
  const { mcpInvocationId, artifacts } = prepared.structuredContent as {
    mcpInvocationId: string;
    artifacts: { candidateId: string }[];
  };
  const candidate = { mcpInvocationId, candidateId: artifacts[0]?.candidateId ?? "" };
  return { lab, asked, call, candidate, sessionId };
}

describe("gateway: approving a download by elicitation", () => {
  test("allow once: the client is asked with the download's card, the file arrives, user_once is recorded", async () => {
    const { lab, asked, call, candidate, sessionId } = await setup(["allow_once"]);
    expect(asked).toEqual([]); // preparing the candidate is a safe call
    const result = await call("artifact_download", candidate);
    expect(result.isError, JSON.stringify(result.content)).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ status: "completed", bytesDownloaded: PDF.length });
    expect(asked).toHaveLength(1);
    expect(asked[0]?.message).toContain("artifact_download");
    const sources = (await lab.governance.ledger.listAuthorizations({ sessionId })).map(
      (a) => a.decisionSource,
    );
    expect(sources).toContain("user_once");
  });

  test("deny: nothing is downloaded and the model gets PERMISSION_DENIED; user_deny is recorded", async () => {
    const { lab, asked, call, candidate, sessionId } = await setup(["deny"]);
    const result = await call("artifact_download", candidate);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: "PERMISSION_DENIED" });
    expect(asked).toHaveLength(1);
    const sources = (await lab.governance.ledger.listAuthorizations({ sessionId })).map(
      (a) => a.decisionSource,
    );
    expect(sources).toContain("user_deny");
    // The only rows of the session: the prepare call (ok) and the refused download.
    const rows = await lab.governance.ledger.query({ sessionId });
    expect(rows.map((r) => r.status).sort()).toEqual(["error", "ok"]);
    expect(rows.find((r) => r.status === "error")?.error?.code).toBe("PERMISSION_DENIED");
  });

  test("a client without elicitation is not asked: the download is refused as before", async () => {
    const { call, candidate } = await setup(undefined);
    const result = await call("artifact_download", candidate);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toMatchObject({ code: "PERMISSION_DENIED" });
  });
});
