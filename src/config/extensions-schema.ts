/**
 * The raw shape of `extensions_config.json` (and of a `MultiServerMCPClient` config from
 * `@langchain/mcp-adapters`), before env substitution and normalization. Objects are loose: unknown
 * fields are kept going for forward compatibility, but every known field is type-checked. `null` counts
 * as absent, as configs written from Python often say `None`.
 */
import { z } from "zod";

/** Routing as written in the file; defaults and clamping happen in normalization. */
export const rawRoutingSchema = z.looseObject({
  keywords: z.array(z.string()).nullish(),
  mode: z.enum(["prefer", "off"]).nullish(),
  priority: z.number().nullish(),
});

/** `restart` / `reconnect` of `MultiServerMCPClient`: accepted and checked, not used (the pool has its own). */
const reconnectSchema = z.looseObject({
  enabled: z.boolean().nullish(),
  maxAttempts: z.number().nullish(),
  delayMs: z.number().nullish(),
});

const outputTargetSchema = z.enum(["content", "artifact"]);

/** `outputHandling` of `MultiServerMCPClient`: `"content"`, `"artifact"` or a map per content type. */
const outputHandlingSchema = z.union([outputTargetSchema, z.record(z.string(), outputTargetSchema)], {
  error: 'Use "content", "artifact" or an object such as {"resource": "artifact"}.',
});

/**
 * `oauth` of an http or sse server: how Sciencegate obtains tokens from the server's authorization
 * server. Secrets are named by environment variable, never written in the file.
 */
export const rawOAuthSchema = z.strictObject({
  grant: z.enum(["authorization_code", "client_credentials", "cross_app_access"]).nullish(),
  clientId: z.string().nullish(),
  clientSecretEnv: z.string().nullish(),
  privateKeyEnv: z.string().nullish(),
  signingAlgorithm: z.string().nullish(),
  scope: z.string().nullish(),
  clientMetadataUrl: z.string().nullish(),
  redirectUri: z.string().nullish(),
  issuer: z.string().nullish(),
  idp: z
    .strictObject({
      issuer: z.string().nullish(),
      tokenEndpoint: z.string().nullish(),
      clientId: z.string().nullish(),
      clientSecretEnv: z.string().nullish(),
      idTokenEnv: z.string().nullish(),
    })
    .nullish(),
});

/** One entry of `mcpServers`, as written. */
export const rawServerSchema = z.looseObject({
  type: z.string().nullish(),
  transport: z.string().nullish(),
  command: z.string().nullish(),
  args: z.array(z.string()).nullish(),
  cwd: z.string().nullish(),
  env: z.record(z.string(), z.string()).nullish(),
  url: z.string().nullish(),
  headers: z.record(z.string(), z.string()).nullish(),
  description: z.string().nullish(),
  /** Checked by hand: only a literal `false` disables, and a string "false" is reported as a likely mistake. */
  enabled: z.unknown().optional(),
  tool_call_timeout: z.number().positive().nullish(),
  gateway_tool_names: z.enum(["qualified", "upstream"]).nullish(),
  routing: rawRoutingSchema.nullish(),
  tools: z.record(z.string(), z.looseObject({ routing: rawRoutingSchema.nullish() })).nullish(),
  bearer_token_env: z.string().nullish(),
  protocol: z.enum(["auto", "2025-11-25", "2026-07-28"]).nullish(),
  roots: z.array(z.string()).nullish(),
  oauth: z.union([z.literal(false), rawOAuthSchema]).nullish(),
  // Per-server fields of MultiServerMCPClient.
  restart: reconnectSchema.nullish(),
  reconnect: reconnectSchema.nullish(),
  automaticSSEFallback: z.boolean().nullish(),
  defaultToolTimeout: z.number().positive().nullish(),
  outputHandling: outputHandlingSchema.nullish(),
  encoding: z.string().nullish(),
  stderr: z.enum(["overlapped", "pipe", "ignore", "inherit"]).nullish(),
});

/** A parsed `mcpServers` entry. */
export type RawServer = z.infer<typeof rawServerSchema>;

/** A parsed `oauth` block. */
export type RawOAuth = z.infer<typeof rawOAuthSchema>;

/** A parsed routing block. */
export type RawRouting = z.infer<typeof rawRoutingSchema>;

/**
 * The top level. The `MultiServerMCPClient` options are accepted so that a LangGraph app can reuse its
 * config file (`throwOnLoadError` keeps its meaning, the rest is ignored);
 * entries of `mcpServers` are checked one by one so that every issue is reported.
 */
export const rawExtensionsSchema = z.looseObject({
  mcpServers: z.record(z.string(), z.unknown()).nullish(),
  throwOnLoadError: z.boolean().nullish(),
  prefixToolNameWithServerName: z.boolean().nullish(),
  additionalToolNamePrefix: z.string().nullish(),
  useStandardContentBlocks: z.boolean().nullish(),
  outputHandling: outputHandlingSchema.nullish(),
  defaultToolTimeout: z.number().positive().nullish(),
});
