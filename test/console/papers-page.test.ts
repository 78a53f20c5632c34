/**
 * The Papers page over HTTP, over a real runtime (SQLite ledger and file CAS in a temporary data
 * directory): the bundled arXiv source offers a PDF through a governed call, the offline fetch seam
 * serves it, the download completes and `extractDownloadedPaper` extracts it. The page lists the paper
 * with its manifest's facts and shows its text as text; ids that are not an extracted job never reach
 * the file system, and a text swapped for a link is refused.
 */

import { readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createOfflinePaperFetch, offlineLookup } from "../../examples/demo/offline-paper-fetch.js";
import { downloadArtifact } from "../../src/artifacts/artifact-download-tool.js";
import { extractDownloadedPaper, paperTextPath } from "../../src/artifacts/index.js";
import { type ConsoleServer, serveConsole } from "../../src/console/index.js";
import { createGovernance, type Governance } from "../../src/runtime/index.js";
import { createSourcesServer, SOURCES_SERVER_ID } from "../../src/servers/sources/sources-server.js";
import {
  createInMemoryPool,
  type FakeProviderServer,
  providerEnvFor,
  startFakeProviderServer,
} from "../../src/testing/index.js";
import { makePdf } from "../fixtures/pdf/make-pdf.js";
import { arxivFakeRoutes } from "../fixtures/providers/arxiv/routes.js";
import { offerPaper } from "./console-client.js";

const SESSION = "papers-s1";
const HOSTILE = "<script>alert(1)</script>";
/** Four pages: a long first and second page, a figure page without text, and a short last page. */
const PDF = makePdf([
  [`Off-target prediction ${HOSTILE}`, ...lines("Methods", 40)],
  lines("Results", 40),
  [],
  ["Conclusion. Validated sites rank first."],
]);

function lines(label: string, count: number): string[] {
  return Array.from(
    { length: count },
    (_, i) => `${label} line ${i + 1}: base editors and their off-target sites.`,
  );
}

let provider: FakeProviderServer;
let governance: Governance;
let server: ConsoleServer;
let jobId: string;

beforeAll(async () => {
  provider = await startFakeProviderServer({ routes: arxivFakeRoutes() });
  governance = await createGovernance({
    config: { servers: [] },
    mcp: {
      pool: createInMemoryPool({
        [SOURCES_SERVER_ID]: () =>
          createSourcesServer({ only: ["arxiv"], env: providerEnvFor(provider.url) }),
      }),
    },
    storage: { dataDir: await mkdtemp(join(tmpdir(), "sciencegate-console-papers-")) },
    downloads: { lookup: offlineLookup, fetch: createOfflinePaperFetch({ host: "arxiv.org", body: PDF }) },
  });
  await governance.permissions.setApprovalMode(SESSION, "always_allow");
  server = await serveConsole({ governance, port: 0 });
});

afterAll(async () => {
  await server?.close();
  await governance?.close();
  await provider?.close();
});

async function get(path: string): Promise<{ status: number; type: string | null; text: string }> {
  const response = await fetch(`${server.url}${path}`, { redirect: "manual" });
  return { status: response.status, type: response.headers.get("content-type"), text: await response.text() };
}

describe("the Papers page", () => {
  test("before any extraction it says how a paper gets there", async () => {
    const page = await get("/papers");
    expect(page.status).toBe(200);
    expect(page.text).toContain("No paper extracted yet");
  });

  test("lists an extracted paper: job, record, pages, the pages that need vision, characters and parser", async () => {
    const offered = await offerPaper(governance, SESSION);
    const download = await downloadArtifact({ governance, ...offered, sessionId: SESSION });
    expect(download.status).toBe("completed");
    jobId = download.jobId;
    const extracted = await extractDownloadedPaper(governance, { artifactJobId: jobId, sessionId: SESSION });
    expect(extracted.pageCount).toBe(4);
    const manifest = JSON.parse(readFileSync(extracted.manifestPath, "utf8"));

    const page = await get("/papers");
    expect(page.status).toBe(200);
    const row = page.text.slice(page.text.indexOf(`<tr data-job-id="${jobId}">`));
    expect(row).toContain(`<a href="/papers/${jobId}"><code>${jobId}</code></a>`);
    expect(row).toContain("arxiv");
    expect(row).toContain(download.sourceRecordId);
    expect(row).toMatch(/<td class="num" data-pages>4<\/td>/);
    expect(row).toMatch(/<td data-vision-pages><span class="badge badge-warn">1 of 4<\/span> page 3<\/td>/);
    expect(row).toContain(`data-characters>${manifest.textCharacters.toLocaleString("en")}</td>`);
    expect(row).toContain(`<td>${manifest.parser}</td>`);
    expect(page.text).not.toContain(HOSTILE);
  });

  test("one paper: its manifest's facts and its text as text, cut at 4,000 characters with a link to the whole", async () => {
    const page = await get(`/papers/${jobId}`);
    expect(page.status).toBe(200);
    expect(page.text).toContain("<dt>Pages</dt><dd>4</dd>");
    expect(page.text).toContain(
      '<dt>Pages that need vision</dt><dd><span class="badge badge-warn">1 of 4</span> page 3</dd>',
    );
    expect(page.text).toContain("Off-target prediction &lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page.text).not.toContain(HOSTILE);
    expect(page.text).toContain("Showing 4,000 of");
    expect(page.text).toContain(`<a href="/papers/${jobId}/text" id="paper-text-link">`);
    expect(page.text).not.toContain("Conclusion. Validated sites rank first.");

    const whole = await get(`/papers/${jobId}/text`);
    expect(whole.status).toBe(200);
    expect(whole.type).toBe("text/plain; charset=utf-8");
    expect(whole.text).toBe(readFileSync(paperTextPath(governance.dataDir, jobId), "utf8"));
    expect(whole.text).toContain(HOSTILE);
    expect(whole.text).toContain("Conclusion. Validated sites rank first.");
  });

  test.each([["..%2F..%2Fetc%2Fpasswd"], ["..%2Fpapers"], ["%2e%2e%2fworkspace"], ["no-such-job"]])(
    "the job id %s is no extracted paper: 404, and the file system is not read",
    async (id) => {
      for (const path of [`/papers/${id}`, `/papers/${id}/text`]) {
        const page = await get(path);
        expect(page.status).toBe(404);
        expect(page.text).toContain("No extracted paper of download job");
      }
    },
  );

  test("a dot-dot path never reaches a paper", async () => {
    for (const path of ["/papers/%2e%2e", "/papers/../ledger.sqlite", "/papers/%2e%2e/text"]) {
      const page = await get(path);
      expect([303, 404]).toContain(page.status);
      expect(page.text).not.toContain("SQLite");
    }
  });

  test("a text swapped for a link is refused: the page says so and the text route is 400", async () => {
    const secret = join(governance.dataDir, "secret.txt");
    writeFileSync(secret, "the secret next door");
    const textPath = paperTextPath(governance.dataDir, jobId);
    const original = readFileSync(textPath);
    rmSync(textPath);
    symlinkSync(secret, textPath);
    try {
      const page = await get(`/papers/${jobId}`);
      expect(page.status).toBe(200);
      expect(page.text).toContain("fulltext.md is a symbolic link");
      expect(page.text).not.toContain("the secret next door");
      const whole = await get(`/papers/${jobId}/text`);
      expect(whole.status).toBe(400);
      expect(whole.text).not.toContain("the secret next door");
    } finally {
      rmSync(textPath);
      writeFileSync(textPath, original);
    }
  });
});
