import { afterEach, beforeEach, describe, expect, test } from "vitest";
import { isGovernanceError } from "../../../src/core/errors.js";
import { baseUrlEnvVar, resolveBaseUrls } from "../../../src/servers/sources/provider-env.js";
import { isProviderError, type ProviderError } from "../../../src/servers/sources/provider-error.js";
import { ProviderHttp, type ProviderHttpOptions } from "../../../src/servers/sources/provider-http.js";
import type { SourceModule } from "../../../src/servers/sources/source-module.js";
import {
  type FakeProviderServer,
  providerEnvFor,
  startFakeProviderServer,
} from "../../../src/testing/fake-provider-server.js";
import { flushMicrotasks, ManualClock } from "../../../src/testing/manual-clock.js";

const source: SourceModule = {
  id: "demo-src",
  attribution: "a",
  license: "l",
  endpoints: [
    { key: "eutils", defaultBaseUrl: "https://eutils.example.org/entrez", ncbi: true },
    { key: "files", defaultBaseUrl: "https://files.example.org" },
  ],
  tools: [],
};
const PATH = "/demo-src/eutils/thing";

let provider: FakeProviderServer;
beforeEach(async () => {
  provider = await startFakeProviderServer({
    routes: [
      { path: PATH, body: "hello", headers: { "content-type": "text/plain" } },
      { path: "/demo-src/files/data", body: "file" },
    ],
  });
});
afterEach(() => provider.close());

function client(options: ProviderHttpOptions = {}, signal?: AbortSignal) {
  const env = { ...providerEnvFor(provider.url, [source]), ...options.env };
  return new ProviderHttp({ ...options, env }).forSource(source, signal);
}

async function failure(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isProviderError(error)) throw new Error(`expected a ProviderError, got ${String(error)}`);
  return error;
}

describe("base URLs", () => {
  test.each([
    ["pubmed", undefined, "SCIENCEGATE_PUBMED_BASE_URL"],
    ["pubmed", "pmc-oa", "SCIENCEGATE_PUBMED_PMC_OA_BASE_URL"],
    ["europe-pmc", undefined, "SCIENCEGATE_EUROPE_PMC_BASE_URL"],
  ])("%s endpoint %s is overridden by %s", (sourceId, endpoint, name) => {
    expect(baseUrlEnvVar(sourceId, endpoint)).toBe(name);
  });

  test("the default applies when the variable is unset or empty; an override loses its trailing slash", () => {
    const urls = resolveBaseUrls(source, {
      SCIENCEGATE_DEMO_SRC_BASE_URL: "",
      SCIENCEGATE_DEMO_SRC_FILES_BASE_URL: "http://127.0.0.1:9/x/",
    });
    expect(Object.fromEntries(urls)).toEqual({
      eutils: "https://eutils.example.org/entrez",
      files: "http://127.0.0.1:9/x",
    });
  });

  test("an override that is not an http(s) URL fails early with INVALID_CONFIG naming the variable", () => {
    let error: unknown;
    try {
      resolveBaseUrls(source, { SCIENCEGATE_DEMO_SRC_BASE_URL: "ftp://x" });
    } catch (e) {
      error = e;
    }
    expect(isGovernanceError(error) && error.code).toBe("INVALID_CONFIG");
    expect((error as Error).message).toContain("SCIENCEGATE_DEMO_SRC_BASE_URL");
  });
});

describe("requests", () => {
  test("NCBI endpoints get tool, email and api_key; other endpoints do not; empty values are ignored", async () => {
    const http = client({ env: { NCBI_EMAIL: "me@example.org", NCBI_API_KEY: "" } });
    const answer = await http.request("eutils", "/thing", { query: { q: "x", skip: undefined } });
    expect(answer).toMatchObject({ status: 200, text: "hello", contentType: "text/plain" });
    await http.request("files", "/data");
    expect(provider.requests.map((r) => r.query)).toEqual([
      { q: "x", tool: "sciencegate", email: "me@example.org" },
      {},
    ]);
    expect(provider.requests[0]?.headers["user-agent"]).toMatch(
      /^sciencegate\/\S+ \(\+https:\/\/\S+; mailto:me@example\.org\)$/,
    );
  });

  test("a POST carries its body and content type", async () => {
    await failure(
      client().request("eutils", "/post", { method: "POST", body: "a=1", contentType: "text/plain" }),
    );
    expect(provider.requests[0]).toMatchObject({
      method: "POST",
      body: "a=1",
      headers: { "content-type": "text/plain" },
    });
  });
});

describe("failures", () => {
  test.each([
    [
      { status: 429, retryAfter: "2" },
      { code: "rate_limited", status: 429, retryAfterMs: 2000 },
    ],
    [{ status: 429 }, { code: "rate_limited", status: 429, retryAfterMs: undefined }],
    [{ status: 404 }, { code: "not_found", status: 404 }],
    [{ status: 403 }, { code: "unauthorized", status: 403 }],
    [{ status: 400 }, { code: "invalid_input", status: 400 }],
    [{ status: 500 }, { code: "upstream_unavailable", status: 500 }],
    [{ status: 503 }, { code: "upstream_unavailable", status: 503 }],
    [{ status: 418 }, { code: "upstream_unavailable", status: 418 }],
  ])("HTTP %o becomes %o", async (fault, expected) => {
    provider.setFault({ path: PATH }, fault);
    expect(await failure(client().request("eutils", "/thing"))).toMatchObject(expected);
  });

  test("Retry-After as an HTTP date is measured on the injected clock", async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    provider.setFault({ path: PATH }, { status: 429, retryAfter: "Thu, 01 Jan 2026 12:00:07 GMT" });
    expect(await failure(client({ clock }).request("eutils", "/thing"))).toMatchObject({
      retryAfterMs: 7000,
    });
  });

  test("a fault applied N times fails N calls, then the route answers; nothing is retried", async () => {
    provider.setFault({ path: PATH }, { status: 503, times: 2 });
    const http = client();
    expect((await failure(http.request("eutils", "/thing"))).status).toBe(503);
    expect((await failure(http.request("eutils", "/thing"))).status).toBe(503);
    expect((await http.request("eutils", "/thing")).text).toBe("hello");
    expect(provider.requests).toHaveLength(3);
  });

  test("a redirect is not followed: upstream_unavailable names the target without its query", async () => {
    provider.setFault({ path: PATH }, { redirectTo: "/elsewhere/page?term=secret+query", status: 301 });
    const error = await failure(client().request("eutils", "/thing"));
    expect(error).toMatchObject({ code: "upstream_unavailable", status: 301 });
    expect(error.message).toContain(`${provider.url}/elsewhere/page`);
    expect(error.message).not.toContain("secret");
    expect(provider.requests).toHaveLength(1);
  });

  test("a body over the cap is response_too_large while streaming (no content-length)", async () => {
    provider.setFault({ path: PATH }, { oversizedBytes: 300_000 });
    const error = await failure(client({ maxResponseBytes: 100_000 }).request("eutils", "/thing"));
    expect(error).toMatchObject({ code: "response_too_large", status: 200 });
  });

  test("a declared content-length over the cap is refused before reading", async () => {
    provider.setFault({ path: PATH }, { status: 200, body: "x".repeat(2_000) });
    const error = await failure(client({ maxResponseBytes: 1_000 }).request("eutils", "/thing"));
    expect(error.code).toBe("response_too_large");
  });

  test("a provider slower than the timeout is upstream_unavailable without status (the clock is injected)", async () => {
    const clock = new ManualClock(0);
    provider.setFault({ path: PATH }, { delayMs: 60_000 });
    const pending = failure(client({ clock, timeoutMs: 5_000 }).request("eutils", "/thing"));
    while (provider.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    await clock.advance(5_000);
    const error = await pending;
    expect(error).toMatchObject({ code: "upstream_unavailable", status: undefined });
    expect(error.message).toMatch(/did not answer within 5000 ms/);
    await flushMicrotasks();
    expect(clock.pendingTimers).toBe(0);
  });

  test("an unreachable provider is upstream_unavailable without status", async () => {
    const closed = await startFakeProviderServer({ routes: [] });
    await closed.close();
    const env = { SCIENCEGATE_DEMO_SRC_BASE_URL: `${closed.url}/x` };
    const error = await failure(new ProviderHttp({ env }).forSource(source).request("eutils", "/thing"));
    expect(error).toMatchObject({ code: "upstream_unavailable", status: undefined });
  });

  test("a caller abort rejects with the abort, not a provider error", async () => {
    const controller = new AbortController();
    provider.setFault({ path: PATH }, { delayMs: 60_000 });
    const pending = client({}, controller.signal).request("eutils", "/thing");
    while (provider.requests.length === 0) await new Promise((resolve) => setImmediate(resolve));
    controller.abort();
    const error = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isProviderError(error)).toBe(false);
    expect((error as Error).name).toBe("AbortError");
  });

  test("statuses a source reads itself come back as answers", async () => {
    provider.setFault({ path: PATH }, { status: 400, body: "<feed/>" });
    const answer = await client().request("eutils", "/thing", { acceptStatuses: [400] });
    expect(answer).toMatchObject({ status: 400, text: "<feed/>" });
  });
});
