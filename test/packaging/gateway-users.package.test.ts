/**
 * The gateway as users install it, for two revisions, two users and two replicas: the packed tarball
 * installed in a fresh app, its `sciencegate serve gateway --http` started twice on one PostgreSQL with
 * one request-state secret, each an OAuth resource server of a real authorization server on loopback
 * (`oidc-provider`). The SDK v2 client pinned to 2026-07-28 and the 1.x client (2025-11-25), as alice
 * and as bob: each user's approval (a round trip asked on one replica and answered on the other; an
 * elicitation), alice's grant never covering bob, one ledger row and one upstream call per call, each
 * row and authorization naming its user.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Client as ClientV2, StreamableHTTPClientTransport as HttpV2 } from "@modelcontextprotocol/client";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { openPostgres } from "../../src/core/index.js";
import { PostgresLedger } from "../../src/governance/audit/index.js";
import { type GatewayProject, writeGatewayProject } from "../gateway/gateway-project.js";
import { type LoopbackIssuer, SCOPES, startLoopbackIssuer } from "../identity/loopback-issuer.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";
import {
  childEnv,
  type PackageJson,
  packRepo,
  provideSqliteBinding,
  REPO,
  readJson,
  repoSpec,
  run,
  step,
  timingReport,
} from "./packaging-harness.js";

const ECHO = "mcp__local__echo";
const SECRET = "the replicas' shared request-state secret, 32+ bytes";
/** One audience for both replicas (behind one load balancer): a user's token is good on either. */
const AUDIENCE = "https://gateway.example.org/mcp";

let tmp = "";
let app = "";
let issuer: LoopbackIssuer;
let postgres: TestPostgres;
const children: ChildProcess[] = [];
const closers: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "sciencegate-package-users-"));
  issuer = await startLoopbackIssuer({
    alice: [SCOPES.call, SCOPES.approve],
    bob: [SCOPES.call, SCOPES.approve],
  });
  postgres = await openTestPostgres();
}, 120_000);

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await issuer?.close();
  await postgres?.stop();
  if (tmp) await rm(tmp, { recursive: true, force: true });
  console.log(timingReport());
});

/** The installed gateway, listening; its own data directory, the shared database and secret. */
async function replica(project: GatewayProject, database: string) {
  const bin = join(app, "node_modules", ".bin", "sciencegate");
  const proc = spawn(
    bin,
    [
      "serve",
      "gateway",
      ...project.args,
      "--http",
      "127.0.0.1:0",
      "--oauth-issuer",
      issuer.issuer,
      "--oauth-audience",
      AUDIENCE,
    ],
    {
      cwd: project.dir,
      env: childEnv({
        HOME: project.env.HOME ?? "",
        SCIENCEGATE_HOME: await mkdtemp(join(tmp, "home-")),
        SCIENCEGATE_DATABASE_URL: database,
        SCIENCEGATE_REQUEST_STATE_SECRET: SECRET,
      }),
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  children.push(proc);
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
    { timeout: 90_000, interval: 200 },
  );
  return { url, exited, stop: () => proc.kill("SIGTERM"), stderr: () => stderr };
}

/** A v2 client pinned to 2026-07-28 for `user` on `url`, the round trips answered by hand. */
async function v2Client(url: string, token: string, conversation: string) {
  const client = new ClientV2(
    { name: "package-v2", version: "1" },
    {
      capabilities: { elicitation: { form: {} } },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
      inputRequired: { autoFulfill: false },
    },
  );
  await client.connect(
    new HttpV2(new URL(url), {
      requestInit: {
        headers: { Authorization: `Bearer ${token}`, "Sciencegate-Conversation": conversation },
      },
    }),
  );
  closers.push(() => client.close());
  return client;
}

/** A 1.x client (2025-11-25) for a user on `url`, answering each approval with `decision`. */
async function v1Client(url: string, token: string, decision: string) {
  const client = new Client({ name: "package-v1", version: "1" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params.message);
    return { action: "accept", content: { decision } };
  });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { Authorization: `Bearer ${token}` } },
    }),
  );
  closers.push(() => client.close());
  return { client, asked };
}

type RoundTrip = { resultType?: string; requestState?: string; isError?: boolean; content?: unknown };

async function firstRound(client: ClientV2, text: string): Promise<RoundTrip> {
  return (await client.callTool(
    { name: ECHO, arguments: { text } },
    { allowInputRequired: true },
  )) as unknown as RoundTrip;
}

async function answer(client: ClientV2, text: string, state: string, decision: string) {
  return (await client.callTool(
    {
      name: ECHO,
      arguments: { text },
      inputResponses: { approval: { action: "accept", content: { decision } } },
      requestState: state,
    } as never,
    { allowInputRequired: true },
  )) as unknown as RoundTrip;
}

function upstreamEchoes(log: string): string[] {
  if (!existsSync(log)) return [];
  return readFileSync(log, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { name: string; arguments: { text?: string } })
    .filter((call) => call.name === "echo")
    .map((call) => String(call.arguments.text));
}

describe("the installed gateway: two revisions × two users × two replicas", () => {
  it("packs the tarball and installs it in a fresh app", { timeout: 900_000 }, async () => {
    let tarball = "";
    await step("users a. npm pack", async () => {
      const packed = await packRepo(tmp);
      expect(packed.code, packed.stderr).toBe(0);
      tarball = join(tmp, packed.stdout.trim().split("\n").pop() ?? "");
      expect(tarball).toMatch(/\.tgz$/);
    });
    app = join(tmp, "app");
    await mkdir(app);
    await step("users b. npm install", async () => {
      const init = await run("npm", ["init", "-y"], app);
      expect(init.code, init.stderr).toBe(0);
      const appJson = await readJson<PackageJson>(join(app, "package.json"));
      appJson.type = "module";
      appJson.allowScripts = { "better-sqlite3": false, esbuild: true };
      await writeFile(join(app, "package.json"), `${JSON.stringify(appJson, null, 2)}\n`);
      const unpacked = await readJson<PackageJson>(join(REPO, "package.json"));
      const peers = Object.keys(unpacked.peerDependencies ?? {}).filter(
        (name) => unpacked.peerDependenciesMeta?.[name]?.optional !== true,
      );
      const specs = await Promise.all(peers.map(repoSpec));
      const flags = ["--no-audit", "--no-fund", "--prefer-offline"];
      const install = await run("npm", ["install", tarball, ...specs, ...flags], app);
      expect(install.code, install.stderr).toBe(0);
      await provideSqliteBinding(app);
    });
  });

  it("each user's approval on either replica, in either revision; alice's grant never covers bob; one row per call with its user", async () => {
    expect(app, "the install step did not run").not.toBe("");
    const database = await postgres.createDatabase();
    const log = join(tmp, "calls.jsonl");
    const project = writeGatewayProject({ dangerousEcho: true, serverEnv: { TEST_SERVER_CALL_LOG: log } });
    const [a, b] = await step("users c. two replicas of the installed gateway", () =>
      Promise.all([replica(project, database), replica(project, database)]),
    );
    expect(a.stderr()).toContain(`OAuth access tokens of ${issuer.issuer}`);
    const tokens = {
      alice: await issuer.token("alice", AUDIENCE),
      bob: await issuer.token("bob", AUDIENCE),
    };

    await step("users d. 2026-07-28: round trips across replicas, per user", async () => {
      // alice: asked on A, answered on B with "allow matching": a grant of hers.
      const aliceOnA = await v2Client(a.url, tokens.alice, "alice-chat");
      await aliceOnA.callTool({ name: "tool_search", arguments: { query: `select:${ECHO}` } });
      const asked = await firstRound(aliceOnA, "shared text");
      expect(asked.resultType).toBe("input_required");
      const aliceOnB = await v2Client(b.url, tokens.alice, "alice-chat");
      const ran = await answer(aliceOnB, "shared text", String(asked.requestState), "allow_matching");
      expect(ran.isError, JSON.stringify(ran)).toBeFalsy();
      // Her grant covers her next call at once, on either replica.
      const again = await firstRound(aliceOnA, "shared text");
      expect(again.resultType ?? "complete", JSON.stringify(again)).toBe("complete");
      expect(again.isError).toBeFalsy();

      // bob, the same call: alice's grant does not cover him; he is asked, on B, and answers on A.
      const bobOnB = await v2Client(b.url, tokens.bob, "bob-chat");
      await bobOnB.callTool({ name: "tool_search", arguments: { query: `select:${ECHO}` } });
      const bobAsked = await firstRound(bobOnB, "shared text");
      expect(bobAsked.resultType).toBe("input_required");
      // alice cannot answer bob's card: his state on her token is refused, nothing runs.
      const stolen = answer(aliceOnA, "shared text", String(bobAsked.requestState), "allow_once");
      await expect(stolen).rejects.toMatchObject({ code: -32602 });
      const bobOnA = await v2Client(a.url, tokens.bob, "bob-chat");
      const bobRan = await answer(bobOnA, "shared text", String(bobAsked.requestState), "allow_once");
      expect(bobRan.isError, JSON.stringify(bobRan)).toBeFalsy();
      // Replayed on the replica that did not run it: refused.
      const replay = answer(bobOnB, "shared text", String(bobAsked.requestState), "allow_once");
      await expect(replay).rejects.toMatchObject({ code: -32602 });
    });

    await step("users e. 2025-11-25: elicitation, per user, on each replica", async () => {
      const aliceV1 = await v1Client(b.url, tokens.alice, "allow_once");
      await aliceV1.client.callTool({ name: "tool_search", arguments: { query: `select:${ECHO}` } });
      const aliceResult = (await aliceV1.client.callTool({
        name: ECHO,
        arguments: { text: "alice 2025" },
      })) as CallToolResult;
      expect(aliceResult.isError, JSON.stringify(aliceResult)).toBeFalsy();
      const bobV1 = await v1Client(a.url, tokens.bob, "allow_once");
      await bobV1.client.callTool({ name: "tool_search", arguments: { query: `select:${ECHO}` } });
      const bobResult = (await bobV1.client.callTool({
        name: ECHO,
        arguments: { text: "bob 2025" },
      })) as CallToolResult;
      expect(bobResult.isError, JSON.stringify(bobResult)).toBeFalsy();
      expect(bobV1.asked).toHaveLength(1);
    });

    // One upstream call per call that ran, across both replicas' servers.
    expect(upstreamEchoes(log).sort()).toEqual(
      ["shared text", "shared text", "shared text", "alice 2025", "bob 2025"].sort(),
    );
    const db = await openPostgres(database, { maxConnections: 1 });
    try {
      const ledger = await PostgresLedger.open(db);
      const rows = await ledger.query({ toolId: "echo" });
      expect(rows.map((row) => [row.principal, row.status]).sort()).toEqual(
        [
          ["alice", "ok"],
          ["alice", "ok"],
          ["alice", "ok"],
          ["bob", "ok"],
          ["bob", "ok"],
        ].sort(),
      );
      const authorizations = await ledger.listAuthorizations({});
      for (const row of rows) {
        const authorization = authorizations.find((auth) => auth.id === row.authorizationId);
        expect(authorization, JSON.stringify(row)).toBeDefined();
        expect(authorization?.principal).toBe(row.principal);
      }
      // bob was asked for each of his calls: no grant of alice's ever decided one of them.
      const sourcesOf = (user: string) =>
        authorizations.filter((auth) => auth.principal === user).map((auth) => auth.decisionSource);
      expect(sourcesOf("bob").sort()).toEqual(["user_once", "user_once"]);
      expect(sourcesOf("alice")).toContain("user_grant");
      expect(sourcesOf("alice")).toContain("existing_grant");
      expect(sourcesOf("alice")).toHaveLength(3);
      await ledger.close();
    } finally {
      await db.close();
    }
    a.stop();
    b.stop();
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);
  }, 300_000);
});
