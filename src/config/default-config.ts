import { fileURLToPath } from "node:url";

/** The server id of the bundled science-sources MCP server. */
export const BUNDLED_SOURCES_SERVER_ID = "sciencegate-sources";

/** The server id of the bundled LLM Wiki bridge (`mcpServers.llm-wiki`). */
export const BUNDLED_LLM_WIKI_SERVER_ID = "llm-wiki";

/**
 * The command line that starts a bundled Sciencegate MCP server (`sciencegate serve <name>`) with the
 * running Node binary. From TypeScript sources (development, tests) it runs the CLI through tsx.
 * @param name the bundled server (`sources`, `llm-wiki`)
 * @param extraArgs more arguments for `sciencegate serve`
 * @returns `{command, args}` for a stdio server entry
 */
export function bundledServerCommand(
  name: string,
  extraArgs: string[] = [],
): { command: string; args: string[] } {
  const fromSource = import.meta.url.endsWith(".ts");
  const entry = fileURLToPath(new URL(fromSource ? "../cli/main.ts" : "../cli/main.js", import.meta.url));
  const loader = fromSource ? ["--import", import.meta.resolve("tsx")] : [];
  return { command: process.execPath, args: [...loader, entry, "serve", name, ...extraArgs] };
}

/**
 * The configuration used when no `extensions_config.json` is found: the bundled science sources and the
 * LLM Wiki bridge. The bridge is spawned (its session switch stays off until the app enables the source);
 * its URL maps through `$SCIENCE_AGENT_LLM_WIKI_URL`, so the bridge and Node-side citation checks read
 * one value.
 * @returns raw `extensions_config.json` content
 */
export function defaultExtensionsConfigJson(): { mcpServers: Record<string, unknown> } {
  const sources = bundledServerCommand("sources");
  return {
    mcpServers: {
      [BUNDLED_SOURCES_SERVER_ID]: {
        type: "stdio",
        ...sources,
        description: "Sciencegate's bundled science sources (PubMed, arXiv, ...)",
      },
      [BUNDLED_LLM_WIKI_SERVER_ID]: {
        type: "stdio",
        ...bundledServerCommand("llm-wiki"),
        // These are config-file `${VAR:-default}` references, resolved by env substitution, not templates.
        env: {
          // biome-ignore lint/suspicious/noTemplateCurlyInString: env substitution syntax
          SCIENCE_AGENT_LLM_WIKI_URL: "${SCIENCE_AGENT_LLM_WIKI_URL:-http://127.0.0.1:8100}",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: env substitution syntax
          SCIENCE_AGENT_LLM_WIKI_TOKEN: "${SCIENCE_AGENT_LLM_WIKI_TOKEN:-}",
        },
        description: "Sciencegate's bridge to an LLM Wiki knowledge base (off per session by default)",
      },
    },
  };
}
