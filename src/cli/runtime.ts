import { createScienceGovernance, type ScienceGovernance } from "../adk/index.js";
import type { CliIo } from "./io.js";
import { terminalLine } from "./terminal-text.js";

/** The governed runtime a CLI command works with, and where its config came from. */
export interface CliRuntime extends ScienceGovernance {
  /** A file path, or "(built-in default)". */
  configSource: string;
}

/**
 * Builds the runtime from `--config` (`extensions_config.json` or `science.toml`; else env,
 * `./extensions_config.json` and `./science.toml`, else the built-in default that starts the bundled
 * sources) and the manifests. Unreachable `science.toml` providers are warned about on stderr.
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` naming the file and the problem; ToolError
 *   for an unset `token_env` variable
 */
export async function openRuntime(
  io: CliIo,
  options: {
    configPath?: string;
    manifestDirs?: string[];
    builtinManifests?: boolean;
    /** Declare sampling to the servers (the gateway relays it to its own clients). */
    relaysSampling?: boolean;
  },
): Promise<CliRuntime> {
  const governance = await createScienceGovernance({
    env: io.env,
    cwd: io.cwd,
    ...(options.configPath ? { config: options.configPath } : {}),
    manifests: {
      ...(options.manifestDirs ? { dirs: options.manifestDirs } : {}),
      ...(options.builtinManifests === undefined ? {} : { builtin: options.builtinManifests }),
    },
    onWarning: (line) => io.stderr(terminalLine`${line}\n`),
    ...(options.relaysSampling ? { mcp: { sampling: { declare: true } } } : {}),
    downloads: { ...(io.fetch ? { fetch: io.fetch } : {}), ...(io.lookup ? { lookup: io.lookup } : {}) },
  });
  const files = [governance.science?.path, governance.config.path].filter((p) => p !== undefined);
  return { ...governance, configSource: files.join(" + ") || "(built-in default)" };
}
