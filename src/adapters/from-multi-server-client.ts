/**
 * Governance for the servers of an existing `@langchain/mcp-adapters` `MultiServerMCPClient`: the
 * same `Governance` as `createGovernance` builds, with a pool over the client's raw SDK clients.
 * Servers that have no manifest get a derived, fail-closed one from their live tool list (the
 * catalog does that), so every tool of the client is governed, audited and deferred.
 */

import type { GovernanceMcpOptions, GovernanceOptions } from "../runtime/index.js";
import { createGovernance, type Governance } from "../runtime/index.js";
import { createMultiServerClientPool, type MultiServerClientLike } from "./multi-server-client-pool.js";

/**
 * Options of `fromMultiServerMCPClient`: those of `createGovernance` that do not build servers.
 * `config`, when given, only supplies routing overrides (server ids as in the client); the client's
 * own configuration decides how servers are reached. @default `config`: no overrides
 */
export type FromMultiServerClientOptions = Omit<GovernanceOptions, "mcp"> & {
  /** Start failures, OAuth tokens and sampling, as for `createGovernance` (the pool is the client's). */
  mcp?: Omit<GovernanceMcpOptions, "pool" | "createTransport"> | undefined;
};

/**
 * Builds a `Governance` over the servers of a `MultiServerMCPClient`. The client is used only
 * through `getClient(name)`; its LangChain tools are not used (give the model the governed surface
 * instead). `governance.close()` closes the client and every stdio child it started. A server that
 * cannot start fails it as the client itself would: with the client's `onConnectionError: "throw"` (its
 * default), else with its `throwOnLoadError` (default true); `"ignore"` makes it a warning
 * (`governance.warnings`), and `mcp.failOnError` in the options wins over both.
 * @param client the app's client, connected or not
 * @param options manifests, data directory, stores, permission hook and clock, as for `createGovernance`
 * @returns the governance runtime, with every server's tools listed once
 * @throws GovernanceError `INVALID_CONFIG` / `INVALID_MANIFEST` naming the file and the problem;
 *   `UPSTREAM_UNAVAILABLE` naming each server that could not start (see above)
 * @example
 * const client = new MultiServerMCPClient({ mcpServers: { chem: { command: "node", args: ["chem-server.js"] } } });
 * const governance = await fromMultiServerMCPClient(client, { storage: { dataDir: ".sciencegate" } });
 * const agent = createAgent({ model, tools: [], middleware: [governanceMiddleware({ governance })] });
 */
export async function fromMultiServerMCPClient(
  client: MultiServerClientLike,
  options: FromMultiServerClientOptions = {},
): Promise<Governance> {
  const pool = createMultiServerClientPool(client);
  try {
    const { onConnectionError, throwOnLoadError } = client.config;
    const clientFails =
      onConnectionError === "throw" || onConnectionError === "ignore"
        ? onConnectionError === "throw"
        : throwOnLoadError === true;
    return await createGovernance({
      config: { servers: [] },
      ...options,
      mcp: { ...options.mcp, failOnError: options.mcp?.failOnError ?? clientFails, pool },
    });
  } catch (error) {
    await pool.close();
    throw error;
  }
}
