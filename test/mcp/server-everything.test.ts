import { fileURLToPath } from "node:url";
import { expect, test } from "vitest";
import { ServerPool } from "../../src/mcp/server-pool.js";
import { isAlive, repoRoot, serverConfig } from "./server-configs.js";

const everything = fileURLToPath(
  new URL("../../node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url),
);

test("the third-party server-everything over stdio lists its tools and echoes", async () => {
  // dist/index.js picks its transport from argv[2]; "stdio" is also its default.
  const config = serverConfig({
    id: "everything",
    transport: "stdio",
    command: process.execPath,
    args: [everything, "stdio"],
    cwd: repoRoot,
  });
  const pool = new ServerPool([config]);
  try {
    const names = (await pool.listTools("everything")).map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(["echo", "get-sum", "trigger-long-running-operation"]));
    const result = await pool.callTool("everything", "echo", { message: "hello from sciencegate" });
    expect(result).toMatchObject({ content: [{ type: "text", text: "Echo: hello from sciencegate" }] });
    expect(pool.state("everything").stderrTail).toContain("Starting default (STDIO) server...");
    const pid = pool.state("everything").pid;
    expect(pid).toBeDefined();
    await pool.close();
    expect(isAlive(pid ?? 0)).toBe(false);
  } finally {
    await pool.close();
  }
});
