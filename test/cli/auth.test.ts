/**
 * `sciencegate auth <server>` against a real authorization server (`oidc-provider`) on loopback: the
 * person's browser is a headless sign-in that follows the printed page back to the CLI's loopback
 * callback. Then a governed `sciencegate call` reaches the protected server with the stored token,
 * and the token is found nowhere but in its private store: not in the ledger or any other file of the
 * data directory, not in any output.
 */
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { main } from "../../src/cli/main.js";
import {
  type AuthorizationServer,
  type ProtectedMcpServer,
  SERVICE_CLIENT,
  signInHeadlessly,
  startAuthorizationServer,
  startProtectedMcpServer,
} from "../mcp/oauth-fixture.js";
import { type CliRun, runCli, tempDir, writeEchoManifests, writeJson } from "./cli-harness.js";

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

/** A project whose server `local` (the echo source's server) is the protected MCP server. */
function project(oauth?: Record<string, unknown>): { dir: string; args: string[]; config: string } {
  const dir = tempDir();
  const manifests = writeEchoManifests(dir);
  const config = writeJson(dir, "extensions_config.json", {
    mcpServers: {
      local: { type: "http", url: mcp.url, ...(oauth === undefined ? {} : { oauth }) },
      child: { command: "node", args: ["-e", "0"] },
    },
  });
  return { dir, config, args: ["--config", config, "--manifests", manifests] };
}

/**
 * Runs `sciencegate auth` like a person at a terminal: when the page to open is printed, the browser
 * opens it, signs in and comes back to the CLI's callback.
 */
async function authWithBrowser(argv: string[], dir: string, env: Record<string, string> = {}) {
  let stdout = "";
  let stderr = "";
  let browser: Promise<URL> | undefined;
  const code = await main(argv, {
    stdout: (t) => {
      stdout += t;
    },
    stderr: (t) => {
      stderr += t;
      const page = /https?:\/\/\S+\/auth\?\S+/.exec(t)?.[0];
      if (page !== undefined && browser === undefined) browser = signInHeadlessly(page);
    },
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      SCIENCEGATE_HOME: join(dir, ".sciencegate"),
      ...env,
    },
    cwd: dir,
    isTty: false,
  });
  return { code, stdout, stderr, landed: await browser };
}

/** Every file under `dir`, with its bytes. */
async function filesUnder(dir: string): Promise<{ path: string; bytes: Buffer }[]> {
  const out: { path: string; bytes: Buffer }[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    out.push({ path, bytes: await readFile(path) });
  }
  return out;
}

function expectNoSecret(runs: CliRun[], secrets: string[]): void {
  for (const run of runs) {
    for (const secret of secrets) {
      expect(run.stdout).not.toContain(secret);
      expect(run.stderr).not.toContain(secret);
    }
  }
}

describe("sciencegate auth", () => {
  test("a person authorizes in the browser; the call then goes through, and the tokens are only in the 0600 store", async () => {
    const { dir, args, config } = project();
    const before = await runCli(
      ["call", "mcp__echo-source__echo", ...args, "--args", '{"text":"x"}'],
      {},
      dir,
    );
    expect(before.code).toBe(1);
    // The catalog's tools/list is refused first: the tool is unavailable, and the message says why.
    expect(before.stderr).toContain("requires authorization");
    expect(before.stderr).toContain("sciencegate auth local");

    const authorized = await authWithBrowser(["auth", "local", "--config", config], dir);
    expect(authorized.stderr).toContain("Open this page in a browser to authorize 'local'");
    expect(authorized.landed?.searchParams.get("code")).toEqual(expect.any(String));
    expect(authorized.code).toBe(0);
    expect(authorized.stdout).toContain("Authorized: the tokens of 'local' are stored in");

    // Again (another free port for the callback): the client registered for the last one is replaced.
    const again = await authWithBrowser(["auth", "local", "--config", config], dir);
    expect(again.code, again.stderr).toBe(0);

    const home = join(dir, ".sciencegate");
    const storeFile = join(home, "oauth", "local.json");
    expect((await stat(join(home, "oauth"))).mode & 0o777).toBe(0o700);
    expect((await stat(storeFile)).mode & 0o777).toBe(0o600);
    const record = JSON.parse(await readFile(storeFile, "utf8")).default;
    const access: string = record.tokens.access_token;
    const refresh: string = record.tokens.refresh_token;
    expect(access.length).toBeGreaterThan(20);
    expect(refresh.length).toBeGreaterThan(20);

    const call = await runCli(
      ["call", "mcp__echo-source__echo", ...args, "--args", '{"text":"through oauth"}', "--json"],
      {},
      dir,
    );
    expect(call.code).toBe(0);
    expect(JSON.stringify(JSON.parse(call.stdout).result.data)).toContain("echo: through oauth");
    expect(mcp.accepted.at(-1)).toBe(access);

    const status = await runCli(["auth", "--status", "--json", "--config", config], {}, dir);
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout).servers).toEqual([
      expect.objectContaining({ server: "local", authorized: true, refreshable: true }),
    ]);
    const audit = await runCli(["audit", "--json", "--config", config], {}, dir);
    expect(audit.code).toBe(0);
    expect(JSON.parse(audit.stdout).summary).toMatchObject({ calls: 2, ok: 1, errors: 1 });

    // The ledger (and every other file of the data directory) never holds a token; only the store does.
    const files = await filesUnder(home);
    expect(files.some((file) => file.path.includes("ledger") || file.path.endsWith(".db"))).toBe(true);
    for (const file of files.filter((f) => f.path !== storeFile)) {
      expect(file.bytes.includes(access), file.path).toBe(false);
      expect(file.bytes.includes(refresh), file.path).toBe(false);
    }
    expectNoSecret([before, authorized, again, call, status, audit], [access, refresh]);

    const forget = await runCli(["auth", "local", "--forget", "--config", config], {}, dir);
    expect(forget.code).toBe(0);
    const after = await runCli(["auth", "--status", "--config", config], {}, dir);
    expect(after.stdout).toMatch(/^local {2}http:\/\/127\.0\.0\.1:\d+\/mcp {2}not authorized\n$/);
    const refused = await runCli(
      ["call", "mcp__echo-source__echo", ...args, "--args", '{"text":"x"}'],
      {},
      dir,
    );
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("sciencegate auth local");
  });

  test("client credentials: authorized at once, no page to open, the secret never stored", async () => {
    const { dir, config } = project({
      grant: "client_credentials",
      clientId: SERVICE_CLIENT.clientId,
      clientSecretEnv: "LOCAL_SECRET",
      issuer: as.issuer,
    });
    const before = as.grants.client_credentials ?? 0;
    const run = await runCli(
      ["auth", "local", "--config", config, "--json"],
      { LOCAL_SECRET: SERVICE_CLIENT.secret },
      dir,
    );
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(JSON.parse(run.stdout)).toMatchObject({ authorized: "local" });
    expect(as.grants.client_credentials).toBe(before + 1);
    const stored = await readFile(join(dir, ".sciencegate", "oauth", "local.json"), "utf8");
    expect(stored).not.toContain(SERVICE_CLIENT.secret);
    expect(JSON.parse(stored).default.tokens.access_token).toEqual(expect.any(String));
  });

  test("the callback must come back within --timeout-s; no token is stored then", async () => {
    const { dir, config } = project();
    const run = await runCli(["auth", "local", "--config", config, "--timeout-s", "1"], {}, dir);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("TIMEOUT");
    // The client registration and discovery are kept for the next attempt; no token.
    const stored = JSON.parse(await readFile(join(dir, ".sciencegate", "oauth", "local.json"), "utf8"));
    expect(stored.default.clientInformation.client_id).toEqual(expect.any(String));
    expect(stored.default.tokens).toBeUndefined();
  });

  test.each([
    [["auth"], 2, "use 'auth <server>"],
    [["auth", "a", "b"], 2, "use 'auth <server>"],
    [["auth", "--status", "local"], 2, "use 'auth <server>"],
    [["auth", "local", "--timeout-s", "0"], 2, "use 'auth <server>"],
    [["auth", "nosuch"], 1, "UNKNOWN_ID"],
    [["auth", "child"], 2, "INVALID_CONFIG"],
  ])("%j exits %i", async (argv, exit, message) => {
    const { dir, config } = project();
    const run = await runCli([...argv, "--config", config], {}, dir);
    expect(run.code).toBe(exit);
    expect(run.stderr).toContain(message);
  });
});
