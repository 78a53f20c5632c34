/**
 * The seam through which a layer above the runtime (the Science ADK's `science.toml` providers) adds
 * MCP servers to the one pool, broker and ledger without the runtime knowing about it.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { ServerConfig } from "../config/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";

/** Builds the transport of one server; `fallback` is the runtime's own factory for every other server. */
export type ExtensionTransport = (
  config: ServerConfig,
  fallback: (config: ServerConfig) => Transport | Promise<Transport>,
) => Transport | Promise<Transport>;

/** What an extension adds to a governance runtime. */
export interface GovernanceExtension {
  /** Names the extension in errors. */
  name: string;
  /** Servers that join the configured ones (after them, in this order). */
  servers: readonly ServerConfig[];
  /**
   * Whether these servers stand on their own: when no extensions config file was given or found, the
   * bundled science sources (and their manifests) are then left out instead of started by default.
   */
  standalone?: boolean | undefined;
  /** Transports for the extension's own servers; called for every server, `fallback` for the rest. */
  createTransport?: ExtensionTransport | undefined;
  /** Warning lines about the extension's servers once the catalog has listed them. */
  warnings?: ((catalog: SourceCatalog) => string[]) | undefined;
}
