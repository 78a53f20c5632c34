/** The console in a real Chromium: the Sources page over the offline demo's data directory. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { type ConsoleServer, serveConsole } from "sciencegate/console";
import { afterAll, beforeAll, expect, test } from "vitest";
import { launchChromium, runOfflineDemo, screenshot } from "./browser/console-browser.js";
import { type DemoRuntime, openDemoRuntime } from "./browser/demo-runtime.js";

let browser: Browser;
let runtime: DemoRuntime;
let server: ConsoleServer;

beforeAll(async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), "sciencegate-console-browser-")), "data");
  const demo = await runOfflineDemo(dataDir);
  expect(demo.output).toContain("citations checked");
  runtime = await openDemoRuntime(dataDir);
  server = await serveConsole(runtime.governance, { port: 0, writable: true });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await runtime?.close();
});

test("the Sources page shows every source's status and tools, in light and dark", async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  const errors: string[] = [];
  page.on("pageerror", (error) => errors.push(error.message));
  page.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  const response = await page.goto(`${server.url}/`);
  expect(response?.status()).toBe(200);
  expect(page.url()).toBe(`${server.url}/sources`);
  await expect(page.locator("h1").textContent()).resolves.toBe("Sources and tools");
  await expect(page.locator("#source-pubmed h2").textContent()).resolves.toContain("ready");
  await expect(page.locator("#source-pubmed table").textContent()).resolves.toContain("mcp__pubmed__search");
  await screenshot(page, "01-sources-light");
  await page.emulateMedia({ colorScheme: "dark" });
  await screenshot(page, "01-sources-dark");
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, "01-sources-narrow");
  expect(errors).toEqual([]);
  await page.close();
});
