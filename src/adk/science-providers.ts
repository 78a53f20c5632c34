/** `science.toml` providers as server-pool entries, and the registry's warnings about them. */
import { dirname } from "node:path";
import type { ServerConfig } from "../config/index.js";
import type { SourceCatalog } from "../governance/catalog/index.js";
import { derivedSourceId } from "../governance/manifests/index.js";
import type { ScienceProject, ScienceProvider } from "./science-toml.js";

/** The provider kind shown by `sciencegate tools`. */
export type ProviderKind = "local" | "stdio" | "remote" | "extensions_config";

/**
 * The server-pool entries of a project's providers. Local providers become in-process servers (their
 * transport is supplied by the extension in `create-science-governance.ts`); remote ones carry no secret: the bearer token is
 * read from `token_env` only when the transport is built.
 * @param project a parsed `science.toml`
 * @returns one `ServerConfig` per provider, in file order
 */
export function scienceServerConfigs(project: ScienceProject): ServerConfig[] {
  return project.providers.map((provider) => {
    const base = { id: provider.id, args: [], env: {}, headers: {}, enabled: true, tools: {} };
    if (provider.kind === "local") {
      return { ...base, transport: "stdio", description: `Local function tools in ${provider.path}` };
    }
    if (provider.kind === "stdio") {
      const { command, args } = provider;
      return { ...base, transport: "stdio", command, args, cwd: dirname(project.path) };
    }
    return { ...base, transport: "http", url: provider.url };
  });
}

/**
 * One `warning: tool provider '<id>' unavailable: <reason>` line per provider whose tools could not be
 * listed. The registry goes on without it; calls of its tools fail where they are made.
 * @param providers the project's providers
 * @param catalog a refreshed catalog
 * @returns the warning lines (without newline)
 */
export function providerWarnings(providers: readonly ScienceProvider[], catalog: SourceCatalog): string[] {
  return providers.flatMap((provider) => {
    const source = catalog.source(derivedSourceId(provider.id));
    if (source?.status !== "unavailable") return [];
    return [`warning: tool provider '${provider.id}' unavailable: ${source.reason ?? "unknown reason"}`];
  });
}
