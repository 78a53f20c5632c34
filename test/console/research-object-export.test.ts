/**
 * "Export research object" in the console: the button on a session's invocations and on a reviewed
 * answer, and `POST /research-object`, which answers the session's RO-Crate as a zip that verifies
 * (answer, claims and review included), refuses a POST without the CSRF token and says when a session
 * has no calls. The console is read-only: exporting is not a write.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openResearchObject, verifyResearchObject } from "../../src/research-object/index.js";
import { type ConsoleRuntime, elementById, startConsoleRuntime } from "./console-runtime.js";

const IMATINIB_URL = "https://www.ebi.ac.uk/chembl/explore/compound/CHEMBL941";
const ANSWER = `- Imatinib is in ChEMBL [CHEMBL941](${IMATINIB_URL}).`;
let runtime: ConsoleRuntime;
let csrf = "";

beforeAll(async () => {
  runtime = await startConsoleRuntime();
  await runtime.governance.broker.invoke({
    sourceId: "chembl",
    toolId: "search_molecules",
    input: { query: "imatinib" },
    sessionId: "s-export",
  });
  csrf = /name="_csrf" value="([0-9a-f]+)"/.exec((await runtime.get("/evidence")).body)?.[1] ?? "";
}, 60_000);
afterAll(() => runtime?.close());

/** A POST of the export form, answered as bytes. */
async function exportZip(fields: Record<string, string>) {
  const response = await fetch(`${runtime.server.url}/research-object`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", origin: runtime.server.url },
    body: new URLSearchParams(fields).toString(),
  });
  return { response, bytes: new Uint8Array(await response.arrayBuffer()) };
}

describe("the Export research object action", () => {
  test("is offered on a session's invocations and on a reviewed answer", async () => {
    const invocations = await runtime.get("/invocations?session=s-export");
    const form = invocations.body.slice(
      invocations.body.indexOf('<form method="post" action="/research-object"'),
    );
    expect(form).toContain('<input type="hidden" name="session" value="s-export">');
    expect(form).toContain(`<input type="hidden" name="_csrf" value="${csrf}">`);
    expect(elementById(invocations.body, "export-research-object")).toContain("Export research object");
    // no session chosen, no button
    expect((await runtime.get("/invocations")).body).not.toContain('action="/research-object"');

    const reviewed = await runtime.post("/evidence", { _csrf: csrf, answer: ANSWER, session: "s-export" });
    expect(elementById(reviewed.body, "evidence-result")).toContain('data-accepted="true"');
    const withAnswer = reviewed.body.slice(reviewed.body.indexOf('action="/research-object"'));
    expect(withAnswer).toContain('<input type="hidden" name="session" value="s-export">');
    expect(withAnswer).toContain(
      `<textarea name="answer" hidden>- Imatinib is in ChEMBL [CHEMBL941](${IMATINIB_URL}).</textarea>`,
    );
  });

  test("answers the session's crate as a zip that verifies, with the answer's claims and the preview", async () => {
    const { response, bytes } = await exportZip({ _csrf: csrf, session: "s-export", answer: ANSWER });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("application/zip");
    expect(response.headers.get("content-disposition")).toBe(
      'attachment; filename="research-object-s-export.zip"',
    );
    const zip = join(runtime.dataDir, "exported.zip");
    await writeFile(zip, bytes);
    const report = await verifyResearchObject(zip);
    expect(report).toMatchObject({
      ok: true,
      invocations: 1,
      review: { facts: 1, accepted: 1, sameAsExport: true },
    });
    const crate = await openResearchObject(zip);
    expect(crate.paths).toContain("ro-crate-preview.html");
    const preview = new TextDecoder().decode(await crate.read("ro-crate-preview.html"));
    expect(preview).toContain("✓ accepted");
  });

  test("refuses a POST without the CSRF token, and says when the session has no calls", async () => {
    expect((await exportZip({ session: "s-export" })).response.status).toBe(403);
    const none = await runtime.post("/research-object", { _csrf: csrf, session: "nobody" });
    expect(none.status).toBe(404);
    expect(elementById(none.body, "export-error")).toContain(
      "No governed call is recorded for session &#39;nobody&#39;.",
    );
  });
});
