/** Normalized configuration types shared by the config loader and the server pool. */

/** How Sciencegate talks to an MCP server. `http` is streamable HTTP. */
export type TransportKind = "stdio" | "sse" | "http";

/** Keyword routing of a server or one of its tools. */
export interface RoutingConfig {
  /** Words that, found in a user message, auto-promote the tool. */
  keywords: string[];
  /** `prefer` enables keyword auto-promotion; `off` disables it. */
  mode: "prefer" | "off";
  /** 0–100; higher wins when more than three tools match. Out-of-range values are clamped. */
  priority: number;
}

/**
 * Which MCP revision to speak with a server: `auto` finds out (over stdio the `initialize` handshake
 * first, moving to 2026-07-28 only when the server answers that it does not support 2025-11-25; over
 * HTTP a `server/discover` probe first, falling back to `initialize`), or one revision only.
 */
export type ProtocolSetting = "auto" | "2025-11-25" | "2026-07-28";

/**
 * The enterprise identity provider of the `cross_app_access` grant: the person's ID token from it is
 * exchanged there (token exchange) for an identity assertion grant (ID-JAG) for the MCP server's
 * authorization server.
 */
export interface IdentityProviderConfig {
  /** The identity provider's issuer URL (its token endpoint is discovered from its metadata). */
  issuer: string;
  /** Its token endpoint, when discovery is not wanted. @default the one its metadata names */
  tokenEndpoint?: string;
  /** Sciencegate's client id at the identity provider. */
  clientId: string;
  /** The name of the environment variable that holds the client secret there, if it has one. */
  clientSecretEnv?: string;
  /** The name of the environment variable that holds the person's ID token (never the token itself). */
  idTokenEnv: string;
}

/** How Sciencegate obtains OAuth tokens for a protected http or sse server. */
export interface OAuthConfig {
  /**
   * `authorization_code` (a person signs in once with `sciencegate auth <server>`), `client_credentials`,
   * or `cross_app_access` (enterprise-managed: an ID token of `idp` exchanged for a grant, then for
   * tokens at the server's authorization server with `clientId` and `clientSecretEnv`).
   */
  grant: "authorization_code" | "client_credentials" | "cross_app_access";
  /** A pre-registered client id; without one, a client metadata document or dynamic registration is used. */
  clientId?: string;
  /** The name of the environment variable that holds the client secret (never the secret itself). */
  clientSecretEnv?: string;
  /**
   * client_credentials: the name of the environment variable that holds the client's private key (PEM),
   * to authenticate with a signed JWT (`private_key_jwt`) instead of a secret.
   */
  privateKeyEnv?: string;
  /** The algorithm of `privateKeyEnv`'s signatures. @default "ES256" */
  signingAlgorithm?: string;
  /** The scopes to ask for; without them, those the server's challenge or metadata names. */
  scope?: string;
  /** An HTTPS URL of this client's metadata document, used as its client id where the server supports it. */
  clientMetadataUrl?: string;
  /** The loopback redirect URI of `sciencegate auth` (a pre-registered client needs the registered one). */
  redirectUri?: string;
  /**
   * The authorization server's issuer URL: the client's credentials are only ever sent to it, whatever
   * the MCP server's metadata names. @default the one discovery finds
   */
  issuer?: string;
  /** cross_app_access: the enterprise identity provider. */
  idp?: IdentityProviderConfig;
}

/** One MCP server, after env substitution and validation. */
export interface ServerConfig {
  /** The key of the server in `mcpServers`. */
  id: string;
  transport: TransportKind;
  /** stdio: the executable. */
  command?: string;
  /** stdio: its arguments. */
  args: string[];
  /** stdio: working directory. */
  cwd?: string;
  /** stdio: extra environment variables for the child process. */
  env: Record<string, string>;
  /** sse/http: the endpoint URL. */
  url?: string;
  /** sse/http: request headers (after `$VAR` substitution). */
  headers: Record<string, string>;
  description?: string;
  /** Only a literal `enabled: false` in the file disables a server. */
  enabled: boolean;
  /** `tool_call_timeout` in the file is seconds; this is milliseconds. */
  toolCallTimeoutMs?: number;
  routing?: RoutingConfig;
  /** The MCP revision to speak. @default "auto" */
  protocol?: ProtocolSetting;
  /** The roots (`file://` URIs) the server is told about when it asks. @default none */
  roots?: string[];
  /**
   * http/sse: OAuth settings, or `false` to never authorize (a server answering 401 then fails with
   * `UNAUTHORIZED`). Absent: tokens stored by `sciencegate auth <id>` are used, and refreshed.
   */
  oauth?: OAuthConfig | false;
  /**
   * `gateway_tool_names` in the file: how the gateway names this server's tools to its clients,
   * `upstream` (the server's own names, where no other tool of the session has that name) or
   * `qualified` (`mcp__<server>__<tool>`). Absent: the gateway's own setting.
   */
  gatewayToolNames?: "qualified" | "upstream";
  /** Per-tool overrides keyed by the MCP tool name. */
  tools: Record<string, { routing?: RoutingConfig }>;
}

/** The parsed `extensions_config.json` (or `MultiServerMCPClient` config). */
export interface ExtensionsConfig {
  /** The file it came from, when it came from a file. */
  path?: string;
  servers: ServerConfig[];
  /**
   * `throwOnLoadError` of the file (the `MultiServerMCPClient` key): `true` makes a server that cannot
   * start fail `createGovernance` (`GovernanceOptions.mcp.failOnError`). Absent when the file omits it.
   */
  throwOnLoadError?: boolean | undefined;
}
