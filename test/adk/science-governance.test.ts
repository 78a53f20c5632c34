import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import {
  createScienceGovernance as createGovernance,
  type ScienceGovernance as Governance,
} from "../../src/adk/index.js";
import { isToolError } from "../../src/adk/tool-error.js";
import { toolUseVerified } from "../../src/adk/tool-use-verified.js";
import { GovernanceError, isGovernanceError, toErrorBody } from "../../src/core/errors.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { ManualClock } from "../../src/testing/manual-clock.js";

const FIXTURES = join(import.meta.dirname, "fixtures");

function project(toml: string): string {
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-adk-"));
  writeFileSync(join(dir, "science.toml"), toml);
  return dir;
}

async function open(
  dir: string,
  warnings: string[] = [],
  env: Record<string, string | undefined> = { PATH: process.env.PATH },
): Promise<Governance> {
  return createGovernance({
    cwd: dir,
    env,
    storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
    onWarning: (line) => warnings.push(line),
  });
}

describe("a science.toml project with TypeScript, Python and an unreachable stdio provider", () => {
  const warnings: string[] = [];
  // The Python interpreter is read from it at each call, so a test can take it away.
  const env: Record<string, string | undefined> = { PATH: process.env.PATH };
  let governance: Governance;
  beforeAll(async () => {
    const dir = project(`
[project]
name = "fixtures"

[tools.local]
path = ${JSON.stringify(join(FIXTURES, "ts-tools"))}

[tools.pylocal]
path = ${JSON.stringify(join(FIXTURES, "py-tools"))}

[tools.extra]
path = ${JSON.stringify(join(FIXTURES, "extra-tools"))}

[tools.pubchem]
command = '"${process.execPath}" -e "process.exit(3)"'
`);
    governance = await open(dir, warnings, env);
  }, 60_000);
  afterAll(() => governance?.close());

  test("the registry warns about the unreachable provider and goes on", () => {
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: tool provider 'pubchem' unavailable: .+/);
    expect(governance.science?.name).toBe("fixtures");
    expect(governance.catalog.source("local")?.status).toBe("ready");
  });

  test("a call of the unreachable provider's tool fails at the point of use and is recorded", async () => {
    await expect(governance.callTool("pubchem.search", {}, { runId: "r-pubchem" })).rejects.toMatchObject({
      code: "TOOL_UNAVAILABLE",
      message: expect.stringContaining("pubchem"),
    });
    const rows = await governance.ledger.query({ runId: "r-pubchem" });
    expect(rows).toMatchObject([{ status: "error", error: { code: "TOOL_UNAVAILABLE" } }]);
  });

  test("a blank session or thread is absent: the call is in the default session, without a thread", async () => {
    await governance.callTool(
      "local.takes_number",
      { value: 3 },
      { sessionId: " ", threadId: "", runId: "r-blank" },
    );
    const [row] = await governance.ledger.query({ runId: "r-blank" });
    expect(row).toMatchObject({ sessionId: "default", status: "ok" });
    expect(row?.threadId).toBeUndefined();
  });

  test("qualified names resolve to their provider; a unique bare name and a model-visible name resolve too", async () => {
    const ts = await governance.callTool("local.takes_number", { value: 2 });
    const py = await governance.callTool("pylocal.takes_number", { value: 5 });
    expect([ts.value, ts.qualifiedName]).toEqual([4, "local.takes_number"]);
    expect([py.value, py.qualifiedName]).toEqual([10, "pylocal.takes_number"]);
    const bare = await governance.callTool("scale", { value: 4 });
    expect([bare.value, bare.qualifiedName]).toEqual([8, "extra.scale"]);
    const visible = await governance.callTool("mcp__extra__scale", { value: 1 });
    expect([visible.value, visible.qualifiedName]).toEqual([2, "extra.scale"]);
  });

  test("an ambiguous bare name is an error listing the candidates", async () => {
    await expect(governance.callTool("takes_number", { value: 1 })).rejects.toMatchObject({
      code: "INVALID_INPUT",
      data: { candidates: ["local.takes_number", "pylocal.takes_number"] },
    });
  });

  test("arguments are validated by the broker against the extracted schema", async () => {
    await expect(governance.callTool("local.takes_union", { value: "cubic" })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });

  test.each([
    ["local.explode", "RangeError: refused: why"],
    ["pylocal.explode", "ValueError: refused: why"],
  ])(
    "%s raises: TOOL_FAILED with the tool's own error, not retried, and the ledger row says the same",
    async (name, message) => {
      const runId = `r-${name}`;
      const error = await governance.callTool(name, { reason: "why" }, { runId }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(isGovernanceError(error)).toBe(true);
      expect(error).toMatchObject({ code: "TOOL_FAILED", retryable: false, attempts: 1, message });
      const [row] = await governance.ledger.query({ runId });
      expect(row).toMatchObject({
        invocationId: (error as GovernanceError).data?.invocationId,
        status: "error",
        attempts: 1,
        error: { code: "TOOL_FAILED", message, retryable: false },
      });
      expect(row?.normalizedRef).toBeUndefined();
    },
  );

  test("a Python tool whose interpreter cannot start is UPSTREAM_UNAVAILABLE (it never ran), in the row too", async () => {
    env.SCIENCEGATE_PYTHON = join(FIXTURES, "no-such-python");
    try {
      const runId = "r-no-python";
      const error = await governance.callTool("pylocal.takes_number", { value: 1 }, { runId }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: "UPSTREAM_UNAVAILABLE",
        retryable: false,
        message: expect.stringContaining("cannot start"),
      });
      const [row] = await governance.ledger.query({ runId });
      expect(row?.error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE", message: (error as Error).message });
    } finally {
      delete env.SCIENCEGATE_PYTHON;
    }
  });

  test("the gate passes a node with a successful call of its own and fails a node without one", async () => {
    await governance.callTool("local.takes_string", { value: "a" }, { runId: "run-gate", nodeId: "analyze" });
    await expect(
      governance.callTool("pylocal.explode", { reason: "x" }, { runId: "run-gate", nodeId: "cross_check" }),
    ).rejects.toThrow();
    const nodes = [
      { id: "load", kind: "data" },
      { id: "analyze", kind: "algorithm", tools: ["local.takes_string"] },
    ];
    expect(await toolUseVerified({ governance, runId: "run-gate", declarations: nodes })).toEqual({
      passed: true,
      score: 1,
      failures: [],
    });
    const failing = await toolUseVerified({
      governance,
      runId: "run-gate",
      declarations: [
        ...nodes,
        { id: "cross_check", kind: "algorithm", tools: ["pylocal.explode", "pubchem.search"] },
      ],
    });
    expect(failing).toMatchObject({ passed: false, score: 0 });
    expect(failing.failures).toEqual([
      {
        nodeId: "cross_check",
        tools: ["pylocal.explode", "pubchem.search"],
        message: expect.stringMatching(
          /node 'cross_check' declared tools \[pylocal.explode, pubchem.search\]/,
        ),
      },
    ]);
  });

  test("a declared tool resolves like callTool: an ambiguous bare name is INVALID_INPUT naming the node", async () => {
    await expect(
      toolUseVerified({
        governance,
        runId: "run-gate",
        declarations: [{ id: "analyze", tools: ["takes_string"] }],
      }),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining("Node 'analyze': Tool name 'takes_string' is ambiguous"),
      data: { candidates: ["local.takes_string", "pylocal.takes_string"] },
    });
  });

  test("a call of another node, or of no node, does not count for a node", async () => {
    await governance.callTool("local.takes_number", { value: 1 }, { runId: "run-nodes", nodeId: "load" });
    await governance.callTool("local.takes_number", { value: 2 }, { runId: "run-nodes" });
    const { failures } = await toolUseVerified({
      governance,
      runId: "run-nodes",
      declarations: [{ id: "analyze", tools: ["local.takes_number"] }],
    });
    expect(failures).toEqual([
      {
        nodeId: "analyze",
        tools: ["local.takes_number"],
        message: expect.stringContaining(
          "1 successful call(s) of them in the run were made outside any node",
        ),
      },
    ]);
  });
});

describe("token_env", () => {
  const toml = `
[tools.remote_compute]
url = "http://127.0.0.1:9/mcp"
token_env = "COMPUTE_API_TOKEN"
`;

  test("an unset variable fails fast with the exact ToolError text", async () => {
    const error = await open(project(toml)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isToolError(error)).toBe(true);
    expect(String(error)).toBe(
      "ToolError: Tool provider 'remote_compute' needs COMPUTE_API_TOKEN environment variable, which is not set.",
    );
    // One error family: callers that branch on governance codes handle it like any config error.
    expect(isGovernanceError(error)).toBe(true);
    expect(error).toBeInstanceOf(GovernanceError);
    expect(toErrorBody(error as GovernanceError)).toMatchObject({
      code: "INVALID_CONFIG",
      retryable: false,
      data: { provider: "remote_compute" },
    });
  });

  test("a set variable is used for the connection but never lands in the config", async () => {
    const secret = "s3cret-token-value";
    const warnings: string[] = [];
    const governance = await createGovernance({
      cwd: project(toml),
      env: { COMPUTE_API_TOKEN: secret },
      storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
      onWarning: (line) => warnings.push(line),
    });
    try {
      expect(governance.config.servers).toMatchObject([
        { id: "remote_compute", transport: "http", headers: {} },
      ]);
      expect(JSON.stringify(governance.config)).not.toContain(secret);
      expect(JSON.stringify(governance.science)).not.toContain(secret);
      expect(warnings[0]).toMatch(/^warning: tool provider 'remote_compute' unavailable: /);
      expect(warnings.join("\n")).not.toContain(secret);
      await expect(governance.callTool("remote_compute.run", {}, { runId: "r" })).rejects.toThrow();
      expect(JSON.stringify(await governance.ledger.query({}))).not.toContain(secret);
    } finally {
      await governance.close();
    }
  });
});

test("[run] of the ADK's complete config reaches the app: max_optimize_iterations for its own loop", async () => {
  const dir = project(`
[project]
name = "molecular-dynamics"

[tools.pylocal]
path = ${JSON.stringify(join(FIXTURES, "py-tools"))}

[run]
node_timeout_s = 900
max_optimize_iterations = 5
`);
  const governance = await open(dir);
  try {
    expect(governance.science?.run).toEqual({ nodeTimeoutS: 900, maxOptimizeIterations: 5 });
    expect(governance.warnings).toEqual([]);
  } finally {
    await governance.close();
  }
});

test("a local provider whose .py file cannot load (no interpreter) keeps its TypeScript tools; governance.warnings names the file and the interpreter", async () => {
  const dir = project(`
[tools.local]
path = ${JSON.stringify(join(FIXTURES, "ts-tools"))}

[tools.pylocal]
path = ${JSON.stringify(join(FIXTURES, "py-tools"))}
`);
  const python = join(dir, "no-such-python");
  const governance = await open(dir, [], { PATH: process.env.PATH, SCIENCEGATE_PYTHON: python });
  try {
    expect(governance.warnings).toEqual([
      expect.stringMatching(
        new RegExp(
          `^warning: tool provider 'pylocal': ${join(FIXTURES, "py-tools", "kinds.py")} is skipped: its tools need ${python}, which is not installed`,
        ),
      ),
    ]);
    expect((await governance.callTool("local.takes_number", { value: 2 })).value).toBe(4);
  } finally {
    await governance.close();
  }
});

describe("[run].node_timeout_s", () => {
  test("is the deadline of each callTool call, replacing the 60 s of a provider without a manifest", async () => {
    const dir = project(`
[tools.slow]
path = ${JSON.stringify(join(FIXTURES, "slow-tools"))}

[run]
node_timeout_s = 120
`);
    const clock = new ManualClock(0);
    const governance = await createGovernance({
      cwd: dir,
      env: { PATH: process.env.PATH },
      storage: { ledger: new MemoryLedger(), contentStore: new MemoryContentStore() },
      clock,
    });
    try {
      let settled = false;
      const call = governance.callTool("hang", {}, { runId: "r-deadline" });
      call
        .catch(() => {})
        .finally(() => {
          settled = true;
        });
      // The deadline timer starts once the call reaches the server.
      while (clock.pendingTimers === 0) await new Promise((resolve) => setImmediate(resolve));
      await clock.advance(61_000);
      expect(settled).toBe(false);
      await clock.advance(59_000);
      await expect(call).rejects.toMatchObject({ code: "TIMEOUT", data: { timeoutMs: 120_000 } });
      expect(await governance.ledger.query({ runId: "r-deadline" })).toMatchObject([
        { status: "error", error: { code: "TIMEOUT" } },
      ]);
    } finally {
      await governance.close();
    }
  });
});
