import { createGovernance, type Governance } from "../adapters/create-governance.js";
import type { CliIo } from "./io.js";

/** The governed runtime a CLI command works with, and where its config came from. */
export interface CliRuntime extends Governance {
  /** A file path, or "(built-in default)". */
  configSource: string;
}

/**
 * Builds the runtime from `--config` (else env, `./extensions_config.json`, else the built-in
 * default that starts the bundled sources) and the manifests.
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` naming the file and the problem
 */
export async function openRuntime(
  io: CliIo,
  options: { configPath?: string; manifestDirs?: string[] },
): Promise<CliRuntime> {
  const governance = await createGovernance({
    env: io.env,
    cwd: io.cwd,
    ...(options.configPath ? { config: options.configPath } : {}),
    ...(options.manifestDirs ? { manifestDirs: options.manifestDirs } : {}),
  });
  return { ...governance, configSource: governance.config.path ?? "(built-in default)" };
}
