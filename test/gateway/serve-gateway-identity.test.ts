/**
 * `sciencegate serve gateway --http --oauth-issuer` as a real process (the CLI from source through tsx)
 * behind a real authorization server on loopback (`oidc-provider`): a user's access token is accepted
 * and the ledger rows name the user; the shared token is not; identity flags that cannot work are
 * refused before anything starts.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, test, vi } from "vitest";
import { SqliteLedger } from "../../src/governance/audit/index.js";
import { runCli } from "../cli/cli-harness.js";
import { type LoopbackIssuer, SCOPES, startLoopbackIssuer } from "../identity/loopback-issuer.js";
import { GATEWAY_COMMAND, writeGatewayProject } from "./gateway-project.js";
import { connectHttpClient, MCP_POST_HEADERS, rawRequest } from "./http-client.js";

let issuer: LoopbackIssuer;
let child: ChildProcess | undefined;

beforeAll(async () => {
  issuer = await startLoopbackIssuer({ alice: [SCOPES.call, SCOPES.approve] });
});
afterAll(async () => {
  await issuer?.close();
});
afterEach(() => {
  if (child && child.exitCode === null) child.kill("SIGKILL");
  child = undefined;
});

describe("sciencegate serve gateway: identity flags refused before anything starts (exit 2)", () => {
  test.each([
    ["--oauth-issuer without --http", ["--oauth-issuer", "http://127.0.0.1:9"], "go with --http"],
    [
      "--oauth-audience without --oauth-issuer",
      ["--http", "0", "--oauth-audience", "http://x/mcp"],
      "go with --oauth-issuer",
    ],
    [
      "an issuer that is not a URL",
      ["--http", "0", "--oauth-issuer", "id.example.org"],
      "not an http(s) URL",
    ],
    [
      "a scope list that names no ability",
      ["--http", "0", "--oauth-issuer", "http://127.0.0.1:9", "--oauth-scopes", "read=x"],
      "--oauth-scopes takes call=NAME",
    ],
  ])("%s", async (_name, args, message) => {
    const run = await runCli(["serve", "gateway", "--config", "/nonexistent/not-read.json", ...args]);
    expect(run).toMatchObject({ code: 2, stdout: "" });
    expect(run.stderr).toContain(message);
    expect(run.stderr).not.toContain("/nonexistent/not-read.json");
  });
});

describe("sciencegate serve gateway --http --oauth-issuer (process)", () => {
  test("a user's token is served and its rows name the user; the shared token and no token are refused", async () => {
    const project = writeGatewayProject();
    const proc = spawn(
      GATEWAY_COMMAND.command,
      [
        ...GATEWAY_COMMAND.args,
        ...project.args,
        "--http",
        "127.0.0.1:0",
        "--eager",
        "--oauth-issuer",
        issuer.issuer,
      ],
      // The shared token is set but not used: the identity provider replaces it.
      {
        cwd: project.dir,
        env: {
          ...project.env,
          SCIENCEGATE_GATEWAY_TOKEN: "shared-token-0123456789",
          SCIENCEGATE_QUOTAS: "local/echo=1/1h",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child = proc;
    let stderr = "";
    proc.stderr?.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8");
    });
    const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
    const url = await vi.waitFor(
      () => {
        const match = /listening on (http:\/\/\S+)/.exec(stderr);
        if (!match?.[1]) throw new Error(`not listening yet: ${stderr}`);
        return match[1];
      },
      { timeout: 60_000, interval: 100 },
    );
    expect(stderr).toContain(`OAuth access tokens of ${issuer.issuer}`);
    for (const token of [undefined, "shared-token-0123456789"]) {
      const refused = await rawRequest(url, {
        method: "POST",
        headers: { ...MCP_POST_HEADERS, ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: "{}",
      });
      expect(refused.status).toBe(401);
      expect(refused.headers["www-authenticate"]).toContain("resource_metadata=");
    }
    const alice = await connectHttpClient(url, await issuer.token("alice", url));
    const result = await alice.call("mcp__local__echo", { text: "hello" });
    expect(result.isError, JSON.stringify(result)).toBeFalsy();
    // The user's quota (from SCIENCEGATE_QUOTAS) holds: the second echo in the hour is refused.
    const second = await alice.call("mcp__local__echo", { text: "again" });
    expect(second.structuredContent).toMatchObject({ code: "QUOTA_EXCEEDED" });
    await alice.client.close();
    proc.kill("SIGTERM");
    expect(await exited).toBe(0);
    const ledger = await SqliteLedger.open(join(project.dataDir, "ledger.sqlite"));
    try {
      const rows = await ledger.query();
      expect(rows.map((row) => [row.toolId, row.principal, row.status, row.error?.code])).toEqual([
        ["echo", "alice", "ok", undefined],
        ["echo", "alice", "error", "QUOTA_EXCEEDED"],
      ]);
    } finally {
      await ledger.close();
    }
  }, 120_000);
});
