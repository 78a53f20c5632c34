import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { serverConfig, stdioTestServer } from "./server-configs.js";
import { effectsFile, httpUpstream, stdioUpstream, upstreamServerPath } from "./upstream-fixture.js";

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;
const starts = (lines: string[]) => lines.filter((line) => line.startsWith("start ")).length;

describe("the pool speaks the revision each server speaks", () => {
  test("over stdio, auto speaks 2025-11-25 to a 2025 server and to a server of both revisions", async () => {
    const effects = effectsFile();
    const pool = new ServerPool([stdioTestServer("v1"), stdioUpstream("both", { effects: effects.path })]);
    try {
      expect(text(await pool.callTool("v1", "echo", { text: "hi" }))).toBe("hi");
      expect(text(await pool.callTool("both", "echo", { text: "hi" }))).toBe("hi");
      expect(pool.state("v1")).toMatchObject({ era: "2025-11-25", protocolVersion: "2025-11-25" });
      expect(pool.state("both")).toMatchObject({ era: "2025-11-25", starts: 1 });
      expect(starts(effects.lines())).toBe(1);
    } finally {
      await pool.close();
    }
  });

  test("over stdio, auto reaches a 2026-07-28-only server on the same process it started", async () => {
    const effects = effectsFile();
    const pool = new ServerPool([stdioUpstream("modern", { modernOnly: true, effects: effects.path })]);
    try {
      expect((await pool.listTools("modern")).map((tool) => tool.name)).toContain("ask_name");
      expect(text(await pool.callTool("modern", "echo", { text: "new" }))).toBe("new");
      expect(pool.state("modern")).toMatchObject({
        era: "2026-07-28",
        protocolVersion: "2026-07-28",
        starts: 1,
      });
      // One process: the `initialize` it refused and the `server/discover` that followed went to the same child.
      expect(effects.lines().filter((line) => line.startsWith("start "))).toEqual([
        `start ${pool.state("modern").pid}`,
      ]);
    } finally {
      await pool.close();
    }
  });

  test("the SDK's own auto negotiation over stdio would have started the server twice", async () => {
    // The baseline the pool's in-place order avoids: the SDK probes on a disposable sibling process.
    const effects = effectsFile();
    const client = new Client({ name: "baseline", version: "1" }, { versionNegotiation: { mode: "auto" } });
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", upstreamServerPath, "--stdio", "--modern-only"],
      env: { PATH: process.env.PATH ?? "", UPSTREAM_EFFECTS: effects.path },
      cwd: new URL("../../", import.meta.url).pathname,
      stderr: "ignore",
    });
    await client.connect(transport);
    try {
      expect(client.getProtocolEra()).toBe("modern");
      expect((await client.listTools()).tools.length).toBeGreaterThan(0);
      expect(starts(effects.lines())).toBe(2);
    } finally {
      await client.close();
    }
  });

  test.each([
    ["2025-11-25", false, "2025-11-25"],
    ["2026-07-28", false, "2026-07-28"],
    ["2026-07-28", true, "2026-07-28"],
  ] as const)(
    "over stdio, protocol %s (modern-only server: %s) speaks %s",
    async (protocol, modernOnly, era) => {
      const pool = new ServerPool([stdioUpstream("s", { modernOnly, config: { protocol } })]);
      try {
        expect(text(await pool.callTool("s", "echo", { text: "x" }))).toBe("x");
        expect(pool.state("s").era).toBe(era);
      } finally {
        await pool.close();
      }
    },
  );

  test("over stdio, protocol 2025-11-25 against a 2026-07-28-only server fails naming the version", async () => {
    const pool = new ServerPool([
      stdioUpstream("s", { modernOnly: true, config: { protocol: "2025-11-25" } }),
    ]);
    try {
      const error = await pool.callTool("s", "echo", { text: "x" }).then(
        () => undefined,
        (caught: unknown) => caught,
      );
      expect(error).toMatchObject({ code: "UPSTREAM_UNAVAILABLE" });
      expect(String((error as Error).message)).toMatch(/Unsupported protocol version/);
    } finally {
      await pool.close();
    }
  });

  describe("over streamable HTTP", () => {
    let both: Awaited<ReturnType<typeof httpUpstream>>;
    let modern: Awaited<ReturnType<typeof httpUpstream>>;
    beforeAll(async () => {
      [both, modern] = await Promise.all([httpUpstream(), httpUpstream({ modernOnly: true })]);
    });
    afterAll(async () => {
      await Promise.all([both?.stop(), modern?.stop()]);
    });

    test.each([
      ["both", "auto", "2026-07-28"],
      ["both", "2025-11-25", "2025-11-25"],
      ["modern", "auto", "2026-07-28"],
      ["modern", "2026-07-28", "2026-07-28"],
    ] as const)("a server of %s revisions with protocol %s speaks %s", async (which, protocol, era) => {
      const url = which === "both" ? both.url : modern.url;
      const pool = new ServerPool([serverConfig({ id: "h", transport: "http", url, protocol })]);
      try {
        expect(text(await pool.callTool("h", "echo", { text: "web" }))).toBe("web");
        expect(pool.state("h").era).toBe(era);
      } finally {
        await pool.close();
      }
    });
  });
});
