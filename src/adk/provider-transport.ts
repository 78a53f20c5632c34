/**
 * The transports of `science.toml` providers for the shared server pool: local folders as in-process
 * MCP servers, remote providers over streamable HTTP (falling back to SSE) with the `token_env` bearer
 * token read only when connecting, so the secret never sits in a config object, a log or the ledger.
 */
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ServerConfig } from "../config/index.js";
import { FallbackHttpTransport } from "./fallback-http-transport.js";
import { loadLocalTools } from "./local-tools/load-local-tools.js";
import { createLocalToolTransport } from "./local-tools/local-tool-server.js";
import type { ScienceProvider } from "./science-toml.js";

/** Options of {@link providerTransportFactory}. */
export interface ProviderTransportOptions {
  /** Environment holding `token_env` variables and the Python interpreter. @default process.env */
  env?: Record<string, string | undefined>;
  /** Transports of every other server (`extensions_config.json`). */
  fallback: (config: ServerConfig) => Transport | Promise<Transport>;
}

/**
 * Wraps a pool's `createTransport` so that `science.toml` local and remote providers get their own.
 * @param providers the providers of `science.toml`
 * @param options environment and the transport factory for everything else
 * @returns a `createTransport` for `ServerPool`
 */
export function providerTransportFactory(
  providers: readonly ScienceProvider[],
  options: ProviderTransportOptions,
): (config: ServerConfig) => Promise<Transport> {
  const byId = new Map(providers.map((p) => [p.id, p]));
  const env = options.env ?? process.env;
  return async (config) => {
    const provider = byId.get(config.id);
    if (provider?.kind === "local") {
      return createLocalToolTransport(provider.id, await loadLocalTools(provider.path, { env }));
    }
    if (provider?.kind === "remote") {
      const token = provider.tokenEnv === undefined ? undefined : env[provider.tokenEnv];
      const requestInit: RequestInit = {
        headers: { ...config.headers, ...(token ? { Authorization: `Bearer ${token}` } : {}) },
      };
      const url = new URL(provider.url);
      return new FallbackHttpTransport(
        () => new StreamableHTTPClientTransport(url, { requestInit }),
        () => new SSEClientTransport(url, { requestInit }),
      );
    }
    return options.fallback(config);
  };
}
