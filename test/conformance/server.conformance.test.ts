/**
 * The official MCP conformance suite's server scenarios (`@modelcontextprotocol/conformance`, the
 * active suite of spec 2025-11-25) against `sciencegate serve gateway --http --eager --upstream-names`
 * in front of Sciencegate's fixture server (test/fixtures/conformance/), run three times in a row
 * against one gateway: the suite's client never ends its sessions, so the later runs also show that
 * short-lived clients do not lock others out. Scenarios listed in `server-expected-failures.yml` must
 * fail, every other one must pass, in each run.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { node22, REPO_ROOT } from "./node22.js";

const CONFORMANCE = join(
  REPO_ROOT,
  "node_modules",
  "@modelcontextprotocol",
  "conformance",
  "dist",
  "index.js",
);
const RUNS = 3;
const children: ChildProcess[] = [];

afterAll(() => {
  for (const child of children) child.kill("SIGTERM");
});

/** The scenario names under `server:` (a YAML list, or `[]`). */
function expectedFailures(): string[] {
  const text = readFileSync(join(REPO_ROOT, "test", "conformance", "server-expected-failures.yml"), "utf8");
  return [...text.matchAll(/^\s+-\s+(\S+)\s*$/gm)].map((match) => match[1] as string);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/** Polls until something accepts connections on the port (the processes take seconds to start). */
async function waitForPort(port: number, child: ChildProcess, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 240; attempt++) {
    if (child.exitCode !== null) throw new Error(`exited ${child.exitCode} before listening:\n${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once("connect", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
      socket.connect(port, "127.0.0.1");
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`nothing listens on ${port}:\n${log()}`);
}

function start(args: string[], env: NodeJS.ProcessEnv): { child: ChildProcess; log: () => string } {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], { cwd: REPO_ROOT, env });
  children.push(child);
  let output = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    output += chunk.toString();
  });
  return { child, log: () => output };
}

describe("the conformance suite's server scenarios against the gateway", () => {
  test(`every active scenario passes except the listed ones, in ${RUNS} runs against one gateway`, async () => {
    const node = node22();
    const work = mkdtempSync(join(tmpdir(), "sciencegate-server-conformance-"));
    const fixturePort = await freePort();
    const fixture = start(
      ["test/fixtures/conformance/conformance-fixture-server.ts", String(fixturePort)],
      process.env,
    );
    await waitForPort(fixturePort, fixture.child, fixture.log);
    const config = join(work, "extensions_config.json");
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: {
          fixture: { type: "http", url: `http://127.0.0.1:${fixturePort}/mcp`, tool_call_timeout: 30 },
        },
      }),
    );
    const gatewayPort = await freePort();
    const gateway = start(
      [
        "src/cli/main.ts",
        "serve",
        "gateway",
        "--config",
        config,
        "--http",
        `127.0.0.1:${gatewayPort}`,
        "--eager",
        "--upstream-names",
      ],
      { ...process.env, SCIENCEGATE_HOME: join(work, "home") },
    );
    await waitForPort(gatewayPort, gateway.child, gateway.log);
    const expected = expectedFailures();
    const tables: string[] = [];
    for (let run = 1; run <= RUNS; run++) {
      const suite = spawnSync(
        node,
        [
          CONFORMANCE,
          "server",
          "--url",
          `http://127.0.0.1:${gatewayPort}/mcp`,
          "--suite",
          "active",
          "--spec-version",
          "2025-11-25",
          "-o",
          join(work, `run-${run}`),
        ],
        { cwd: REPO_ROOT, encoding: "utf8", timeout: 600_000 },
      );
      const output = `${suite.stdout}\n${suite.stderr}`;
      const rows = [...output.matchAll(/^([✓✗]) (\S+): (\d+) passed, (\d+) failed/gm)].map((match) => ({
        scenario: match[2] as string,
        passed: Number(match[3]),
        failed: Number(match[4]),
      }));
      const table = rows
        .map(
          (row) =>
            `${row.failed === 0 ? "pass" : "FAIL"}  ${row.scenario}  ${row.passed}/${row.passed + row.failed}`,
        )
        .join("\n");
      tables.push(
        `run ${run}: ${rows.filter((row) => row.failed === 0).length}/${rows.length} scenarios\n${table}`,
      );
      expect(rows.length, output).toBeGreaterThanOrEqual(30);
      expect(output, "a client was locked out").not.toMatch(/Too many sessions|\b503\b/);
      const failing = rows.filter((row) => row.failed > 0).map((row) => row.scenario);
      expect(failing.sort(), `run ${run}\n${table}\n${gateway.log().slice(-4000)}`).toEqual(
        [...expected].sort(),
      );
    }
    process.stderr.write(
      `server conformance through the gateway (results in ${work})\n${tables.join("\n")}\n`,
    );
  });
});
