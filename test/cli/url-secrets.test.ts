/**
 * A secret in a configured URL (a query token, user information, the LLM Wiki URL's path) never reaches a message, the
 * `sciencegate tools` output or a ledger row: each place shows the URL redacted by `redactUrl`.
 */
import { describe, expect, test } from "vitest";
import { bundledServerCommand } from "../../src/config/default-config.js";
import { runCli, tempDir, writeJson } from "./cli-harness.js";

const QUERY_URL = "https://wiki.example/?token=SECRET";
const USERINFO_URL = "https://alice:hunter2pass@wiki.example/";
/** A capability URL: the secret is the path. The variable takes an origin only, so it is refused, unquoted. */
const PATH_URL = "http://wiki.example:8100/capability-SECRET/api";

/** Fails when `text` holds either secret. */
function expectNoSecret(text: string): void {
  expect(text).not.toContain("SECRET");
  expect(text).not.toContain("hunter2pass");
}

/** A project whose LLM Wiki bridge gets `url`. */
function wikiProject(url: string): { dir: string; config: string; env: Record<string, string> } {
  const dir = tempDir();
  const config = writeJson(dir, "extensions_config.json", {
    mcpServers: {
      "llm-wiki": {
        type: "stdio",
        ...bundledServerCommand("llm-wiki"),
        env: { SCIENCE_AGENT_LLM_WIKI_URL: "$SCIENCE_AGENT_LLM_WIKI_URL" },
      },
    },
  });
  return { dir, config, env: { SCIENCE_AGENT_LLM_WIKI_URL: url } };
}

describe("secrets in configured URLs", () => {
  test.each([
    [QUERY_URL, "https://wiki.example/?token=***"],
    [USERINFO_URL, "https://***@wiki.example/"],
    [PATH_URL, "http://wiki.example:8100/***"],
  ])("serve llm-wiki: the INVALID_CONFIG message shows %s redacted", async (url, shown) => {
    const run = await runCli(["serve", "llm-wiki"], { SCIENCE_AGENT_LLM_WIKI_URL: url });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("INVALID_CONFIG");
    expect(run.stderr).toContain(shown);
    expectNoSecret(run.stderr);
  });

  test("an invalid server url in extensions_config.json is reported redacted", async () => {
    const dir = tempDir();
    const config = writeJson(dir, "extensions_config.json", {
      mcpServers: { remote: { type: "http", url: "ftp://a:hunter2pass@h/?t=SECRET" } },
    });
    const run = await runCli(["tools", "--config", config], {}, dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("INVALID_CONFIG");
    expect(run.stderr).toContain("ftp://***@h/?t=***");
    expectNoSecret(run.stderr);
  });

  test.each([QUERY_URL, USERINFO_URL, PATH_URL])(
    "sciencegate tools and the ledger's error row do not show the secret of %s",
    async (url) => {
      const { dir, config, env } = wikiProject(url);
      const tools = await runCli(["tools", "--config", config, "--json"], env, dir);
      expect(tools.code).toBe(0);
      const report = JSON.parse(tools.stdout);
      const wiki = report.servers.find((s: { id: string }) => s.id === "llm-wiki");
      expect(wiki.status).toBe("failed");
      expect(wiki.stderrTail.join("\n")).toContain("INVALID_CONFIG");
      expectNoSecret(tools.stdout + tools.stderr);

      const human = await runCli(["tools", "--config", config], env, dir);
      expect(human.stdout).toContain("INVALID_CONFIG");
      expectNoSecret(human.stdout + human.stderr);

      const call = await runCli(
        [
          "call",
          "mcp__llm-wiki__search",
          "--config",
          config,
          "--enable-source",
          "llm-wiki",
          "--approve",
          "once",
          "--args",
          '{"query":"base editing"}',
        ],
        env,
        dir,
      );
      expect(call.code).toBe(1);
      expectNoSecret(call.stdout + call.stderr);

      const audit = await runCli(["audit", "--json", "--config", config], env, dir);
      expect(audit.code).toBe(0);
      const rows = JSON.parse(audit.stdout).invocations;
      expect(rows).toHaveLength(1);
      expect(rows[0].status).toBe("error");
      expect(JSON.stringify(rows[0])).toContain("INVALID_CONFIG");
      expectNoSecret(audit.stdout);
    },
    60_000,
  );
});
