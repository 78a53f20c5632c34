/**
 * The console in a real headless Chromium over the data directory the offline demo produced: each page
 * loads (screenshots in test-output/console/), invocations are filtered and one is opened, a citation
 * link is checked against the stored result, the demo's answer is reviewed, a grant is revoked and the
 * next dangerous call asks again, a download is cancelled and retried while its progress streams, the
 * extracted paper is shown, and a record title with markup renders as text.
 */

import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MemorySaver, START, StateGraph } from "@langchain/langgraph";
import type { Browser, Page } from "playwright-core";
import { createApprovalGate } from "sciencegate";
import { serveConsole } from "sciencegate/console";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { createOfflinePaperFetch, demoPaperPdf } from "../../examples/demo/offline-paper-fetch.js";
import { downloadArtifact } from "../../src/artifacts/artifact-download-tool.js";
import type { ConsoleServer } from "../../src/console/index.js";
import { executeGovernedToolCall } from "../../src/nodes/index.js";
import { promote, promotionReducer } from "../../src/visibility/index.js";
import { launchChromium, runOfflineDemo, screenshot } from "./browser/console-browser.js";
import { type DemoRuntime, openDemoRuntime } from "./browser/demo-runtime.js";

const DEMO_THREAD = "agent-demo";
let browser: Browser;
let runtime: DemoRuntime;
let server: ConsoleServer;
let answer = "";
/** While true, the paced paper fetch holds each part for `partDelayMs`. */
const pacing = { partDelayMs: 0 };

beforeAll(async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), "sciencegate-console-browser-")), "data");
  const demo = await runOfflineDemo(dataDir);
  expect(demo.output).toContain("citations checked");
  answer = demo.answer;
  runtime = await openDemoRuntime(dataDir, { fetch: pacedPaperFetch() });
  server = await serveConsole({ governance: runtime.governance, port: 0, writable: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await runtime?.close();
});

const pageProblems = new Map<Page, string[]>();

/** Closes a page, failing the test if it had a script error or a failed resource. */
async function closePage(page: Page): Promise<void> {
  const problems = pageProblems.get(page) ?? [];
  await page.close();
  expect(problems, `script errors or failed resources on ${page.url()}`).toEqual([]);
}

/** A page whose script errors and failed resources are collected (see closePage). */
async function openPage(path: string, viewport = { width: 1280, height: 800 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  const problems: string[] = [];
  page.on("pageerror", (error) => problems.push(`page error: ${error.message}`));
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(`console: ${message.text()}`);
  });
  pageProblems.set(page, problems);
  page.on("dialog", (dialog) => dialog.accept());
  const response = await page.goto(`${server.url}${path}`);
  expect(response?.status(), path).toBe(200);
  return page;
}

describe("the console over the demo's data directory", () => {
  test("Sources and tools: every source's status and tools, in light, dark and a narrow window", async () => {
    const page = await openPage("/");
    expect(page.url()).toBe(`${server.url}/sources`);
    expect(await page.locator("h1").textContent()).toBe("Sources and tools");
    expect(await page.locator("#source-pubmed h2").textContent()).toContain("ready");
    expect(await page.locator("#source-pubmed table").textContent()).toContain("mcp__pubmed__search");
    await screenshot(page, "01-sources-light");
    const background = () => page.evaluate<string>("getComputedStyle(document.body).backgroundColor");
    expect(await background()).toBe("rgb(255, 255, 255)");
    await page.emulateMedia({ colorScheme: "dark" });
    expect(await background()).toBe("rgb(20, 24, 31)");
    await screenshot(page, "01-sources-dark");
    // The switch overrides the system's scheme, and the choice survives a reload.
    await page.click("[data-theme-toggle]");
    expect(await background()).toBe("rgb(255, 255, 255)");
    await page.reload();
    expect(await background()).toBe("rgb(255, 255, 255)");
    await page.click("[data-theme-toggle]");
    expect(await background()).toBe("rgb(20, 24, 31)");
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, "01-sources-narrow");
    await closePage(page);
  });

  test("Invocations: filter by source in the form, open one, and its citation links are the stored result's", async () => {
    const page = await openPage("/invocations");
    const all = Number(
      (await page.locator("#match-count").textContent())?.match(/[\d,]+/)?.[0]?.replace(/,/g, ""),
    );
    expect(all).toBe(await runtime.governance.ledger.count({}));
    await screenshot(page, "02-invocations");
    await page.selectOption('select[name="source"]', "pubmed");
    await page.fill('input[name="tool"]', "search");
    await Promise.all([page.waitForURL(/source=pubmed/), page.click('#filters button[type="submit"]')]);
    const sources = await page.locator("#invocations tbody tr td:nth-child(2)").allTextContents();
    expect(sources.length).toBeGreaterThan(0);
    for (const text of sources) expect(text).toContain("pubmed / search");
    await screenshot(page, "02-invocations-filtered");

    const firstId = await page.locator("#invocations tbody tr").first().getAttribute("data-id");
    await Promise.all([
      page.waitForURL(/\/invocations\/.+/),
      page.locator("#invocations tbody tr a").first().click(),
    ]);
    expect(await page.locator("#invocation").getAttribute("data-id")).toBe(firstId);
    expect(await page.locator("#objects").textContent()).toContain("verified");
    await screenshot(page, "03-invocation");

    // Every external link of the result is a URL the stored normalized result carries.
    const row = await runtime.governance.ledger.get(firstId as string);
    const stored = await runtime.governance.store.get(row?.normalizedRef as string);
    const urls = new Set(
      JSON.stringify(JSON.parse(Buffer.from(stored as Uint8Array).toString("utf8"))).match(
        /https?:\/\/[^"\\]+/g,
      ),
    );
    const links = await page
      .locator('#result a[href^="http"]')
      .evaluateAll((anchors) => anchors.map((a) => a.getAttribute("href") ?? ""));
    expect(links.length).toBeGreaterThan(0);
    for (const href of links) expect(urls.has(href), href).toBe(true);
    await closePage(page);
  });

  test("Evidence: the demo's answer, pasted, has every claim backed and linked to its invocation", async () => {
    const page = await openPage("/evidence");
    await page.fill("#answer", answer);
    await page.selectOption("#session-select", DEMO_THREAD);
    await Promise.all([page.waitForLoadState("load"), page.click("#review-button")]);
    await page.waitForSelector("#evidence-result");
    expect(await page.locator("#evidence-result").getAttribute("data-accepted")).toBe("true");
    const claims = page.locator("#claims > li");
    expect(await claims.count()).toBeGreaterThan(1);
    expect(await page.locator('#claims > li[data-accepted="false"]').count()).toBe(0);
    await screenshot(page, "04-evidence");
    const cited = page.locator('.evidence-item[data-accepted="true"][data-invocation]').first();
    const invocationId = await cited.getAttribute("data-invocation");
    await Promise.all([
      page.waitForURL(/\/invocations\/.+/),
      cited.locator(`a[href$="/invocations/${invocationId}"]`).first().click(),
    ]);
    expect(await page.locator("#invocation").getAttribute("data-id")).toBe(invocationId);
    expect(await page.locator("#invocation").textContent()).toContain("ok");
    await closePage(page);
  });

  test("a record title with markup renders as text, and no script runs", async () => {
    const { governance } = runtime;
    const [source] = await governance.ledger.query({
      sourceId: "pubmed",
      toolId: "search",
      status: "ok",
      limit: 1,
    });
    if (!source?.normalizedRef) throw new Error("no stored pubmed search");
    const normalized = JSON.parse(
      Buffer.from((await governance.store.get(source.normalizedRef)) as Uint8Array).toString("utf8"),
    );
    const hostile = `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
    normalized.records[0].title = hostile;
    const { ref } = await governance.store.put(JSON.stringify(normalized));
    // A row of its own (no tool call id: the demo's call keeps its key) that names the altered result.
    const { toolCallId: _call, threadId: _thread, ...rest } = source;
    await governance.ledgerWriter.append({ ...rest, invocationId: "hostile-title-row", normalizedRef: ref });
    const page = await openPage("/invocations/hostile-title-row");
    expect(await page.locator("#result").textContent()).toContain(hostile);
    expect(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned)).toBeUndefined();
    expect(await page.locator("#result script, #result img").count()).toBe(0);
    await screenshot(page, "05-hostile-title");
    await closePage(page);
  });

  test("Permissions: revoking the demo's grant makes the next dangerous call ask again", async () => {
    const grants = await runtime.governance.permissions.listGrants({ sessionId: DEMO_THREAD });
    const grant = grants.find((g) => g.resource.startsWith("europe-pmc"));
    expect(grant, "the demo answered a card allow_matching").toBeDefined();
    expect(await dangerousCallAsks("before-revoke")).toBe(false);

    const page = await openPage(`/permissions?session=${DEMO_THREAD}`);
    await screenshot(page, "06-permissions");
    const row = page.locator(`#grants tr[data-id="${grant?.id}"]`);
    await Promise.all([
      page.waitForURL(/done=revoked/),
      row.locator("button", { hasText: "Revoke" }).click(),
    ]);
    expect(await page.locator(".notice").textContent()).toContain("evoked");
    expect(await page.locator(`#grants tr[data-id="${grant?.id}"]`).count()).toBe(0);
    expect(await page.locator('#authorizations [data-decision="operator_console"]').count()).toBeGreaterThan(
      0,
    );
    await screenshot(page, "06-permissions-revoked");
    expect(await dangerousCallAsks("after-revoke")).toBe(true);
    await closePage(page);
  });

  test("Downloads: a job's progress streams in; it is cancelled and retried from the page", async () => {
    const { governance } = runtime;
    const session = "console-downloads";
    await governance.permissions.setApprovalMode(session, "always_allow");
    const offered = await governance.broker.invoke({
      sourceId: "arxiv",
      toolId: "prepare_paper_download",
      input: { id: "2403.01234v2" },
      sessionId: session,
    });
    const candidateId = offered.result.artifacts?.[0]?.candidateId as string;
    pacing.partDelayMs = 400;
    const first = downloadArtifact({
      governance,
      mcpInvocationId: offered.invocationId,
      candidateId,
      destinationPath: "console-test/paper.pdf",
      sessionId: session,
    });
    const page = await openPage("/jobs");
    const jobId = await waitForJob(session);
    const row = page.locator(`tr[data-job-id="${jobId}"]`);
    // Bytes move on the open page (server-sent events; no reload).
    await expect
      .poll(async () => row.locator("[data-job-bytes]").textContent(), { timeout: 20_000 })
      .not.toMatch(/^0 B/);
    await screenshot(page, "07-jobs-running");
    await Promise.all([
      page.waitForURL(/done=cancelled/),
      row.locator('[data-job-action="cancel"] button').click(),
    ]);
    expect((await first).status).toBe("cancelled");
    expect(await page.locator(`tr[data-job-id="${jobId}"] [data-job-status]`).textContent()).toBe(
      "cancelled",
    );
    await screenshot(page, "07-jobs-cancelled");
    pacing.partDelayMs = 150;
    await Promise.all([
      page.waitForURL(/done=retrying/),
      page.locator(`tr[data-job-id="${jobId}"] [data-job-action="retry"] button`).click(),
    ]);
    await expect
      .poll(async () => page.locator(`tr[data-job-id="${jobId}"] [data-job-status]`).textContent(), {
        timeout: 30_000,
      })
      .toBe("completed");
    await screenshot(page, "07-jobs-retried");
    const audit = (await governance.ledger.listAuthorizations({ sessionId: session })).filter(
      (row) => row.decisionSource === "operator_console",
    );
    expect(audit.map((row) => row.action)).toEqual(["cancel_job", "retry_job"]);
    await closePage(page);
  });

  test("Papers: the demo's extracted paper with its pages, the page that needs vision, and its text", async () => {
    const page = await openPage("/papers");
    const rows = page.locator("#papers tbody tr");
    expect(await rows.count()).toBeGreaterThan(0);
    await screenshot(page, "08-papers");
    await Promise.all([page.waitForURL(/\/papers\/.+/), rows.first().locator("a").first().click()]);
    expect(await page.locator("main").textContent()).toMatch(/needs? vision/i);
    expect(await page.locator("#paper-text").textContent()).toContain(
      "Base editors convert single nucleotides",
    );
    await screenshot(page, "08-paper");
    await closePage(page);
  });
});

/**
 * Runs one dangerous call (a Europe PMC search, which the demo's policy says needs a human) in the
 * demo's session through the approval gate, in a one-node graph with a checkpointer.
 * @returns whether the gate raised a card
 */
async function dangerousCallAsks(threadId: string): Promise<boolean> {
  const { governance } = runtime;
  const gate = createApprovalGate({ governance });
  const name = "mcp__europe-pmc__search";
  const promotion = promotionReducer(undefined, promote([name], governance.tools(DEMO_THREAD)));
  const graph = new StateGraph(z.object({ result: z.string().optional() }))
    .addNode("call", async (_state, config) => {
      const outcome = await executeGovernedToolCall(
        governance,
        { id: `console-${threadId}`, name, args: { query: "crispr base editing" } },
        { sessionId: DEMO_THREAD, threadId, promotion, approval: { hook: gate, config } },
      );
      return { result: String(outcome.message.content) };
    })
    .addEdge(START, "call")
    .compile({ checkpointer: new MemorySaver() });
  const state = (await graph.invoke({}, { configurable: { thread_id: threadId } })) as {
    __interrupt__?: unknown[];
  };
  return (state.__interrupt__?.length ?? 0) > 0;
}

async function waitForJob(sessionId: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const job = (await runtime.governance.downloads.list()).find((j) => j.sessionId === sessionId);
    if (job) return job.jobId;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error("no download job started");
}

/** The demo's offline paper fetch, each of 12 parts held `pacing.partDelayMs` (so progress can be watched). */
function pacedPaperFetch(): typeof fetch {
  const inner = createOfflinePaperFetch({ host: "arxiv.org", body: demoPaperPdf(), chunks: 12 });
  return (async (url: string, init: RequestInit) => {
    const response = await inner(url, init);
    if (!response.body || pacing.partDelayMs === 0) return response;
    const reader = response.body.getReader();
    const paced = new ReadableStream<Uint8Array>({
      async pull(controller) {
        await new Promise((resolve) => setTimeout(resolve, pacing.partDelayMs));
        if (init.signal?.aborted) return controller.error(new Error("aborted"));
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
      cancel: () => reader.cancel(),
    });
    return new Response(paced, { status: response.status, headers: response.headers });
  }) as unknown as typeof fetch;
}
