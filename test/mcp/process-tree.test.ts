import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { descendantPids, isProcessAlive } from "../../src/mcp/process-tree.js";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { repoRoot, serverConfig } from "./server-configs.js";

const onLinux = process.platform === "linux";
const wrappedServer = fileURLToPath(new URL("../fixtures/servers/wrapped-server.ts", import.meta.url));

describe.skipIf(!onLinux)("descendantPids (Linux /proc)", () => {
  test("lists children and grandchildren, nearest first, and nothing for a leaf", async () => {
    const script =
      "const c = require('node:child_process').spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });" +
      "console.log(c.pid); setInterval(() => {}, 1000);";
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "ignore"] });
    try {
      const grandchild = Number(
        await new Promise<string>((resolve) => child.stdout.once("data", (d) => resolve(String(d)))),
      );
      expect(descendantPids(child.pid as number)).toEqual([grandchild]);
      expect(descendantPids(process.pid)).toEqual(expect.arrayContaining([child.pid, grandchild]));
      expect(descendantPids(process.pid).indexOf(child.pid as number)).toBeLessThan(
        descendantPids(process.pid).indexOf(grandchild),
      );
      expect(descendantPids(grandchild)).toEqual([]);
      process.kill(grandchild, "SIGKILL");
    } finally {
      child.kill("SIGKILL");
    }
  });
});

describe.skipIf(!onLinux)("ServerPool and wrapped stdio servers", () => {
  test("close() also ends the server's own children (a wrapper's grandchild that ignores SIGTERM)", async () => {
    const pool = new ServerPool(
      [
        serverConfig({
          id: "wrapped",
          transport: "stdio",
          command: process.execPath,
          args: ["--import", "tsx", wrappedServer],
          cwd: repoRoot,
        }),
      ],
      { killGraceMs: 500 },
    );
    try {
      expect((await pool.listTools("wrapped")).length).toBeGreaterThan(0);
      const line = pool.state("wrapped").stderrTail?.find((l) => l.startsWith("grandchild "));
      const grandchild = Number(line?.slice("grandchild ".length));
      expect(isProcessAlive(grandchild)).toBe(true);
      await pool.close();
      await expect.poll(() => isProcessAlive(grandchild), { timeout: 5_000 }).toBe(false);
    } finally {
      await pool.close();
    }
  });
});
