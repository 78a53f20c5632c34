/**
 * Authorizing a protected MCP server from the console's Sources page, against a real authorization
 * server (`oidc-provider`) and an MCP server that accepts only its tokens, both on loopback: the button
 * sends the browser to the authorization page, a headless person signs in, the authorization server
 * sends the browser back to the console's callback (without the console's cookie, as a browser does on
 * that cross-site navigation), and the runtime's next call reaches the server. Each defence of the
 * callback is tried with the request it stops.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { type ConsoleServer, serveConsole } from "../../src/console/index.js";
import { isGovernanceError } from "../../src/core/index.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import { writeEchoManifests } from "../cli/cli-harness.js";
import {
  type AuthorizationServer,
  type ProtectedMcpServer,
  signInHeadlessly,
  startAuthorizationServer,
  startProtectedMcpServer,
} from "../mcp/oauth-fixture.js";

const TOKEN = "console-token-0123456789abcdef0123456789";

let as: AuthorizationServer;
let mcp: ProtectedMcpServer;
beforeAll(async () => {
  let issuer = "";
  mcp = await startProtectedMcpServer(() => issuer);
  as = await startAuthorizationServer(mcp.url);
  issuer = as.issuer;
});
afterAll(async () => {
  await mcp?.close();
  await as?.close();
});

const opened: { governance: Governance; console: ConsoleServer; dir: string }[] = [];
afterEach(async () => {
  for (const { governance, console, dir } of opened.splice(0)) {
    await console.close();
    await governance.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A runtime whose source `echo-source` is served by the protected server, and a console over it. */
async function start(writable = true) {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-console-auth-"));
  const governance = await createGovernance({
    config: { mcpServers: { local: { type: "http", url: mcp.url } } },
    manifests: { dirs: [writeEchoManifests(dir)], builtin: false },
    storage: { dataDir: join(dir, "data") },
  });
  const console = await serveConsole({ governance, port: 0, writable, token: TOKEN });
  opened.push({ governance, console, dir });
  const headers = { authorization: `Bearer ${TOKEN}` };
  const get = async (path: string, withToken = true) => {
    const response = await fetch(`${console.url}${path}`, {
      redirect: "manual",
      headers: withToken ? headers : {},
    });
    return {
      status: response.status,
      location: response.headers.get("location"),
      body: await response.text(),
    };
  };
  const csrf = /name="_csrf" value="([0-9a-f]{64})"/.exec((await get("/sources")).body)?.[1] ?? "";
  const post = async (path: string, fields: Record<string, string>) => {
    const response = await fetch(`${console.url}${path}`, {
      method: "POST",
      redirect: "manual",
      headers: { ...headers, "content-type": "application/x-www-form-urlencoded", origin: console.url },
      body: new URLSearchParams(fields).toString(),
    });
    return {
      status: response.status,
      location: response.headers.get("location"),
      body: await response.text(),
    };
  };
  const call = (text: string) =>
    governance.broker
      .invoke({ sourceId: "echo-source", toolId: "echo", input: { text }, sessionId: "s-console-auth" })
      .then(
        (outcome) => JSON.stringify(outcome),
        (error: unknown) => (isGovernanceError(error) ? error.code : String(error)),
      );
  return { governance, console, dir, get, post, csrf, call };
}

/** Every file under `dir`, with its bytes. */
function filesUnder(dir: string): { path: string; bytes: Buffer }[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => ({ path, bytes: readFileSync(path) }));
}

describe("the console authorizes a protected MCP server", () => {
  test("Authorize → sign-in → callback without the console's cookie: tokens stored, the next call goes through, one audit row, no token in the ledger or page", async () => {
    const c = await start();
    expect(await c.call("before")).not.toContain("echo: before");
    const page = (await c.get("/sources")).body;
    expect(page).toContain("no token");
    expect(page).toContain(`action="/sources/echo-source/authorize"`);

    const begun = await c.post("/sources/echo-source/authorize", { _csrf: c.csrf });
    expect(begun.status).toBe(303);
    const authorizationPage = new URL(begun.location ?? "");
    expect(authorizationPage.origin).toBe(new URL(as.issuer).origin);
    expect(authorizationPage.searchParams.get("redirect_uri")).toBe(`${c.console.url}/oauth/callback`);

    // The browser comes back to the callback with no console credentials at all.
    const landed = await signInHeadlessly(authorizationPage);
    expect(landed.pathname).toBe("/oauth/callback");
    const stored = await c.governance.oauthCredentials.list();
    expect(stored).toMatchObject([{ serverId: "local", hasAccessToken: true }]);

    // Used once: the same callback again changes nothing and says so.
    const replayed = await c.get(`${landed.pathname}${landed.search}`, false);
    expect(replayed.status).toBe(400);
    expect(replayed.body).toContain("not waiting here");

    const after = await c.get("/sources?refresh=1");
    expect(after.body).toContain("token stored");
    expect(after.body).toContain("Authorize again");
    expect(await c.call("through the console")).toContain("echo: through the console");

    const rows = await c.governance.ledger.listAuthorizations({ sessionId: "console" });
    expect(rows.map((row) => [row.action, row.resource, row.decisionSource])).toEqual([
      ["authorize_server", "server:local", "operator_console"],
    ]);
    const access = mcp.accepted.at(-1) ?? "";
    expect(access.length).toBeGreaterThan(20);
    const leaks = filesUnder(join(c.dir, "data"))
      .filter(({ path }) => !path.includes(`${join("data", "oauth")}`))
      .filter(({ bytes }) => bytes.includes(access));
    expect(leaks.map(({ path }) => path)).toEqual([]);
    expect(after.body).not.toContain(access);
  });

  test("a callback whose state no authorization of this console began is refused and stores nothing", async () => {
    const c = await start();
    const begun = await c.post("/sources/echo-source/authorize", { _csrf: c.csrf });
    const state = new URL(begun.location ?? "").searchParams.get("state") ?? "";
    for (const forged of ["", "forged", `${state}x`, state.slice(1)]) {
      const answer = await c.get(`/oauth/callback?code=stolen&state=${encodeURIComponent(forged)}`, false);
      expect(answer.status, forged).toBe(400);
    }
    // Beginning registered the console as a client; no callback brought it a token.
    const stored = await c.governance.oauthCredentials.list();
    expect(stored.map((entry) => entry.hasAccessToken)).toEqual([false]);
    expect(await c.call("after forged callbacks")).not.toContain("echo:");
    expect(await c.governance.ledger.listAuthorizations({ sessionId: "console" })).toEqual([]);
  });

  test("beginning one needs a writable console, the console's credentials and its CSRF token", async () => {
    const readOnly = await start(false);
    expect((await readOnly.post("/sources/echo-source/authorize", { _csrf: readOnly.csrf })).status).toBe(
      403,
    );
    const c = await start();
    expect((await c.post("/sources/echo-source/authorize", { _csrf: "0".repeat(64) })).status).toBe(403);
    const anonymous = await fetch(`${c.console.url}/sources/echo-source/authorize`, {
      method: "POST",
      redirect: "manual",
      headers: { "content-type": "application/x-www-form-urlencoded", origin: c.console.url },
      body: new URLSearchParams({ _csrf: c.csrf }).toString(),
    });
    expect(anonymous.status).toBe(401);
    expect((await c.post("/sources/nope/authorize", { _csrf: c.csrf })).status).toBe(404);
  });
});
