/**
 * `npx tsx examples/console.ts`: the console over an app's runtime, offline. One governed PubMed search
 * (against the loopback stand-in of ./offline/providers.ts) is recorded; `serveConsole` then serves the
 * console on a free loopback port with an access token, and `fetch` reads it as a browser would: a
 * request without the token is refused, the Invocations page lists the call, its own page shows the
 * records it returned with their citation links and its stored objects re-hashed. Closing the console
 * stops the listener. Every outcome is asserted: the process exits non-zero when one is wrong.
 * (`npx sciencegate console` serves the same pages over the data directory from the command line.)
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createGovernance } from "sciencegate";
import { serveConsole } from "sciencegate/console";
import { startOfflineProviders } from "./offline/providers.js";

const providers = await startOfflineProviders();
const governance = await createGovernance({
  env: { ...process.env, ...providers.env },
  storage: { dataDir: mkdtempSync(join(tmpdir(), "sciencegate-console-")) },
});
// A token of at least 16 characters: needed for any bind but loopback, and good practice on loopback too.
const token = randomBytes(24).toString("base64url");
const consoleServer = await serveConsole({ governance, port: 0, token }); // 127.0.0.1, read-only by default

try {
  const { invocationId } = await governance.broker.invoke({
    sourceId: "pubmed",
    toolId: "search",
    input: { query: "crispr base editing", max_results: 2 },
    sessionId: "console-thread",
    threadId: "console-thread",
    toolCallId: "call_1",
  });

  const anonymous = await fetch(`${consoleServer.url}/invocations`);
  assert.equal(anonymous.status, 401, "no token, no page");
  console.log(`without the token: ${anonymous.status}`);

  const get = (path: string) =>
    fetch(`${consoleServer.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
  const list = await get("/invocations?session=console-thread");
  const listHtml = await list.text();
  assert.equal(list.status, 200);
  assert.ok(listHtml.includes(invocationId), "the Invocations page lists the call");
  console.log(`invocations page: ${list.status}, lists the call`);

  const one = await get(`/invocations/${invocationId}`);
  const oneHtml = await one.text();
  assert.equal(one.status, 200);
  assert.ok(
    oneHtml.includes('href="https://pubmed.ncbi.nlm.nih.gov/39000001/"'),
    "the record's citation link",
  );
  assert.ok(oneHtml.includes("verified"), "the stored objects re-hashed against their references");
  assert.equal(one.headers.get("x-frame-options"), "DENY");
  console.log(`invocation page: ${one.status}, citation link and verified objects`);
} finally {
  await consoleServer.close();
  await governance.close();
  await providers.server.close();
}
const closed = await fetch(`${consoleServer.url}/`).then(
  () => "still listening",
  () => "refused",
);
assert.equal(closed, "refused");
console.log(`after close: ${closed}`);
