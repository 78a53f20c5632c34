/** Turns one raw `mcpServers` entry into a validated, env-substituted `ServerConfig`. */
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";
import { redactUrl } from "../core/index.js";
import { type ConfigIssue, describeValue, formatFieldPath, fromZodIssues } from "./config-issues.js";
import { type EnvMap, lookup, missingVariableFix, substituteEnv } from "./env-substitution.js";
import { type RawOAuth, type RawRouting, rawServerSchema } from "./extensions-schema.js";
import { isReservedId, reservedIdMessage, SERVER_ID_PATTERN } from "./server-id.js";
import type {
  IdentityProviderConfig,
  OAuthConfig,
  RoutingConfig,
  ServerConfig,
  TransportKind,
} from "./types.js";

/** Accepted transport spellings (`type` or `transport`), and what each one means. */
export const TRANSPORT_ALIASES: Readonly<Record<string, TransportKind>> = {
  stdio: "stdio",
  sse: "sse",
  http: "http",
  streamable_http: "http",
  "streamable-http": "http",
};

/** Priority of a routing block that does not say. @default 50 */
export const DEFAULT_ROUTING_PRIORITY = 50;

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FALSE_LOOKING = /^\s*(false|no|off|0)\s*$/i;

/** The outcome of normalizing one server: the config when it is valid, and every issue found. */
export interface NormalizedServer {
  server?: ServerConfig;
  issues: ConfigIssue[];
}

type Segment = string | number;

/**
 * Validates, substitutes and normalizes one `mcpServers.<id>` entry.
 * @param id the key in `mcpServers`
 * @param raw the entry as parsed from JSON (or given in code)
 * @param env the environment for `$VAR` substitution
 * @returns the `ServerConfig`, or the issues (paths like `mcpServers.<id>.args[1]`); never throws
 */
export function normalizeServer(id: string, raw: unknown, env: EnvMap): NormalizedServer {
  const base: Segment[] = ["mcpServers", id];
  const at = (...rest: Segment[]) => formatFieldPath([...base, ...rest]);
  const issues: ConfigIssue[] = [];
  if (isReservedId(id)) {
    issues.push({ path: at(), message: reservedIdMessage(id) });
  } else if (!SERVER_ID_PATTERN.test(id)) {
    const suggestion =
      id
        .replace(/[^A-Za-z0-9_-]+/g, "-")
        .replace(/^[-_]+/, "")
        .slice(0, 64) || "my-server";
    issues.push({
      path: at(),
      message: `has an id with characters other than letters, digits, "-" and "_" (or over 64 characters). Rename it, e.g. "${suggestion}".`,
    });
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    issues.push({
      path: at(),
      message: `must be an object with the server's settings, not ${describeValue(raw)}. E.g. {"command": "node", "args": ["server.js"]}.`,
    });
    return { issues };
  }
  const enabled = readEnabled((raw as { enabled?: unknown }).enabled);
  if (enabled.issue !== undefined) issues.push({ path: at("enabled"), message: enabled.issue });
  const parsed = rawServerSchema.safeParse(raw);
  if (!parsed.success) return { issues: [...issues, ...fromZodIssues(parsed.error.issues, raw, base)] };
  const data = parsed.data;

  // Unset variables matter only for a server that will be started; a disabled one keeps `$VAR` as written.
  const unresolved = new Set<string>();
  const sub = (value: string | null | undefined, ...path: Segment[]): string | undefined => {
    if (value === null || value === undefined) return undefined;
    const result = substituteEnv(value, env);
    if (result.syntaxError !== undefined)
      issues.push({ path: at(...path), message: `${result.syntaxError}.` });
    if (result.missing.length > 0) {
      unresolved.add(at(...path));
      if (enabled.value) {
        for (const name of new Set(result.missing)) {
          issues.push({
            path: at(...path),
            message: `needs environment variable ${name}, which is not set. ${missingVariableFix(name)}`,
          });
        }
      }
    }
    return result.value;
  };
  const subMap = (map: Record<string, string> | null | undefined, field: string) =>
    Object.fromEntries(Object.entries(map ?? {}).map(([key, value]) => [key, sub(value, field, key) ?? ""]));

  const command = sub(data.command, "command");
  const url = sub(data.url, "url");
  const headers = subMap(data.headers, "headers");
  const transport = resolveTransport(sub(data.type, "type"), sub(data.transport, "transport"), command, url);
  for (const issue of transport.issues) issues.push({ path: at(...issue.path), message: issue.message });

  if (transport.kind === "stdio" && (command === undefined || command.trim() === "")) {
    issues.push({
      path: at("command"),
      message: 'is required for a stdio server. Add the executable to run, e.g. "command": "node".',
    });
  }
  if (transport.kind === "sse" || transport.kind === "http") {
    if (url === undefined || url.trim() === "") {
      issues.push({
        path: at("url"),
        message: `is required for an ${transport.kind} server. Add the endpoint, e.g. "url": "https://example.org/mcp".`,
      });
    } else if (!unresolved.has(at("url")) && !isHttpUrl(url)) {
      issues.push({
        path: at("url"),
        message: `must be an http:// or https:// URL, not ${describeValue(redactUrl(url))}. Write the full endpoint, e.g. "https://example.org/mcp".`,
      });
    }
  }
  const bearer = sub(data.bearer_token_env, "bearer_token_env");
  if (bearer !== undefined) {
    const issue = applyBearerToken(bearer, transport.kind, headers, env, enabled.value);
    if (issue !== undefined) issues.push({ path: at("bearer_token_env"), message: issue });
  }

  if (data.protocol === "2026-07-28" && transport.kind === "sse") {
    issues.push({
      path: at("protocol"),
      message:
        'is "2026-07-28", which the sse transport cannot speak. Use "type": "http" (streamable HTTP), or remove protocol.',
    });
  }
  const roots: string[] = [];
  for (const [index, root] of (data.roots ?? []).entries()) {
    const uri = rootUri(sub(root, "roots", index) ?? "");
    if (uri === undefined) {
      issues.push({
        path: at("roots", index),
        message: `must be an absolute path or a file:// URI, not ${describeValue(root)}. E.g. "/data/papers".`,
      });
    } else roots.push(uri);
  }
  let oauth: OAuthConfig | false | undefined;
  if (data.oauth === false) oauth = false;
  else if (data.oauth !== null && data.oauth !== undefined) {
    const resolved = normalizeOAuth(data.oauth, transport.kind, headers, env, enabled.value);
    for (const issue of resolved.issues)
      issues.push({ path: at("oauth", ...issue.path), message: issue.message });
    oauth = resolved.oauth;
  }

  const routing = (r: RawRouting | null | undefined, ...path: Segment[]) =>
    r === null || r === undefined
      ? undefined
      : normalizeRouting(r, (k, i) => sub(k, ...path, "keywords", i) ?? "");
  const serverRouting = routing(data.routing, "routing");
  // Keyed by MCP tool names the server chooses: no prototype, so `constructor` is just a tool name.
  const tools: ServerConfig["tools"] = Object.create(null);
  for (const [name, tool] of Object.entries(data.tools ?? {})) {
    const toolRouting = routing(tool.routing, "tools", name, "routing");
    tools[name] = toolRouting === undefined ? {} : { routing: toolRouting };
  }
  const cwd = sub(data.cwd, "cwd");
  const description = sub(data.description, "description");
  const args = (data.args ?? []).map((arg, i) => sub(arg, "args", i) ?? "");
  const serverEnv = subMap(data.env, "env");

  if (issues.length > 0 || transport.kind === undefined) return { issues };
  const server: ServerConfig = {
    id,
    transport: transport.kind,
    args,
    env: serverEnv,
    headers,
    enabled: enabled.value,
    tools,
  };
  if (command !== undefined) server.command = command;
  if (cwd !== undefined) server.cwd = cwd;
  if (url !== undefined) server.url = url;
  if (description !== undefined) server.description = description;
  // tool_call_timeout (seconds) wins over MultiServerMCPClient's per-server defaultToolTimeout (ms).
  const timeoutMs = data.tool_call_timeout != null ? data.tool_call_timeout * 1000 : data.defaultToolTimeout;
  if (timeoutMs !== undefined && timeoutMs !== null) server.toolCallTimeoutMs = Math.round(timeoutMs);
  if (serverRouting !== undefined) server.routing = serverRouting;
  if (data.protocol !== null && data.protocol !== undefined) server.protocol = data.protocol;
  if (roots.length > 0) server.roots = roots;
  if (oauth !== undefined) server.oauth = oauth;
  if (data.gateway_tool_names != null) server.gatewayToolNames = data.gateway_tool_names;
  return { server, issues };
}

/**
 * Reads `enabled`: only a literal `false` disables. A false-looking string or 0 is most likely a mistake
 * for `false`, so it is reported rather than silently leaving the server on.
 */
function readEnabled(value: unknown): { value: boolean; issue?: string } {
  if (value === false) return { value: false };
  if (typeof value === "string" && FALSE_LOOKING.test(value)) {
    return {
      value: false,
      issue: `is ${describeValue(value)}, which would leave the server enabled (only the boolean false disables). Write false without quotes to disable it, or remove the field.`,
    };
  }
  if (value === 0) {
    return {
      value: false,
      issue:
        "is the number 0, which would leave the server enabled (only the boolean false disables). Write false to disable it, or remove the field.",
    };
  }
  return { value: true };
}

interface TransportResolution {
  kind: TransportKind | undefined;
  issues: { path: Segment[]; message: string }[];
}

function resolveTransport(
  type: string | undefined,
  transport: string | undefined,
  command: string | undefined,
  url: string | undefined,
): TransportResolution {
  const issues: TransportResolution["issues"] = [];
  const accepted = Object.keys(TRANSPORT_ALIASES)
    .map((name) => `"${name}"`)
    .join(", ");
  const named = (field: "type" | "transport", value: string | undefined): TransportKind | undefined => {
    if (value === undefined) return undefined;
    const alias = value.trim().toLowerCase();
    const kind = Object.hasOwn(TRANSPORT_ALIASES, alias) ? TRANSPORT_ALIASES[alias] : undefined;
    if (kind === undefined) {
      issues.push({
        path: [field],
        message: `names an unknown transport ${JSON.stringify(value)}. Use one of ${accepted}.`,
      });
    }
    return kind;
  };
  const fromType = named("type", type);
  const fromTransport = named("transport", transport);
  if (fromType !== undefined && fromTransport !== undefined && fromType !== fromTransport) {
    issues.push({
      path: [],
      message: `has type ${JSON.stringify(type)} but transport ${JSON.stringify(transport)}. Keep only one of them.`,
    });
  }
  if (issues.length > 0) return { kind: undefined, issues };
  const explicit = fromType ?? fromTransport;
  if (explicit !== undefined) return { kind: explicit, issues };
  const hasCommand = command !== undefined && command !== "";
  const hasUrl = url !== undefined && url !== "";
  if (hasCommand && hasUrl) {
    issues.push({
      path: [],
      message:
        'has both command and url, so its transport is ambiguous. Add "type": "stdio" or "type": "http".',
    });
    return { kind: undefined, issues };
  }
  if (hasCommand) return { kind: "stdio", issues };
  if (hasUrl) return { kind: "http", issues };
  issues.push({
    path: [],
    message: 'needs either "command" (a stdio server) or "url" (an sse or http server). Add one of them.',
  });
  return { kind: undefined, issues };
}

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

/** Adds `Authorization: Bearer <token>` from the variable named by `bearer_token_env`; returns an issue or undefined. */
function applyBearerToken(
  name: string,
  transport: TransportKind | undefined,
  headers: Record<string, string>,
  env: EnvMap,
  enabled: boolean,
): string | undefined {
  if (!ENV_NAME.test(name)) {
    return `must be the name of an environment variable (letters, digits, "_"), not ${describeValue(name)}. Write e.g. "MY_SERVER_TOKEN".`;
  }
  if (transport === "stdio") {
    return `only applies to sse and http servers (it sets an HTTP header). For a stdio server pass the token in "env", e.g. {"TOKEN": "$${name}"}.`;
  }
  if (Object.keys(headers).some((key) => key.toLowerCase() === "authorization")) {
    return "conflicts with the Authorization header in headers. Keep only one of them.";
  }
  const token = lookup(env, name);
  if (token === undefined || token === "") {
    return enabled
      ? `names environment variable ${name}, which is not set. Set it to the bearer token, or remove bearer_token_env.`
      : undefined;
  }
  headers.Authorization = `Bearer ${token}`;
  return undefined;
}

/** A root as a `file://` URI: an absolute path is converted, a `file:` URI kept; anything else is refused. */
function rootUri(value: string): string | undefined {
  if (value.startsWith("file://")) {
    try {
      return new URL(value).href;
    } catch {
      return undefined;
    }
  }
  return isAbsolute(value) ? pathToFileURL(value).href : undefined;
}

/** Checks an `oauth` block against the transport and the environment. */
function normalizeOAuth(
  raw: RawOAuth,
  transport: TransportKind | undefined,
  headers: Record<string, string>,
  env: EnvMap,
  enabled: boolean,
): { oauth?: OAuthConfig; issues: { path: Segment[]; message: string }[] } {
  const issues: { path: Segment[]; message: string }[] = [];
  if (transport === "stdio") {
    issues.push({
      path: [],
      message: 'only applies to http and sse servers. A stdio server gets its credentials in "env".',
    });
  }
  if (Object.keys(headers).some((key) => key.toLowerCase() === "authorization")) {
    issues.push({
      path: [],
      message:
        "conflicts with the Authorization header (headers or bearer_token_env). Keep only one way to authorize.",
    });
  }
  const grant = raw.grant ?? "authorization_code";
  const oauth: OAuthConfig = { grant };
  const blank = (value: string | null | undefined) =>
    value === null || value === undefined || value.trim() === "" ? undefined : value.trim();
  const clientId = blank(raw.clientId);
  if (clientId !== undefined) oauth.clientId = clientId;
  const scope = blank(raw.scope);
  if (scope !== undefined) oauth.scope = scope;
  const envName = (
    field: "clientSecretEnv" | "privateKeyEnv",
    what: string,
    example: string,
    from: { clientSecretEnv?: string | null | undefined; privateKeyEnv?: string | null | undefined } = raw,
    path: Segment[] = [field],
  ) => {
    const name = blank(from[field]);
    if (name === undefined) return undefined;
    if (!ENV_NAME.test(name)) {
      issues.push({
        path,
        message: `must be the name of an environment variable (letters, digits, "_"), not ${describeValue(name)}. Write e.g. "${example}".`,
      });
    } else if (enabled && (lookup(env, name) ?? "") === "") {
      issues.push({
        path,
        message: `names environment variable ${name}, which is not set. Set it to ${what}.`,
      });
    }
    return name;
  };
  const secretEnv = envName("clientSecretEnv", "the client secret", "MY_CLIENT_SECRET");
  if (secretEnv !== undefined) oauth.clientSecretEnv = secretEnv;
  const keyEnv = envName("privateKeyEnv", "the client's private key (PEM)", "MY_CLIENT_KEY");
  if (keyEnv !== undefined) {
    oauth.privateKeyEnv = keyEnv;
    if (grant !== "client_credentials" || secretEnv !== undefined) {
      issues.push({
        path: ["privateKeyEnv"],
        message:
          'applies to the client_credentials grant, instead of "clientSecretEnv". Keep one way for the client to authenticate.',
      });
    }
  }
  const algorithm = blank(raw.signingAlgorithm);
  if (algorithm !== undefined) {
    if (keyEnv === undefined || !/^(RS|PS|ES)(256|384|512)$|^EdDSA$/.test(algorithm)) {
      issues.push({
        path: ["signingAlgorithm"],
        message: `must go with "privateKeyEnv" and be a JWS algorithm such as "ES256" or "RS256", not ${describeValue(algorithm)}.`,
      });
    }
    oauth.signingAlgorithm = algorithm;
  }
  if (
    grant === "client_credentials" &&
    (clientId === undefined || (secretEnv === undefined && keyEnv === undefined))
  ) {
    issues.push({
      path: [],
      message:
        'uses the client_credentials grant, which needs "clientId" and "clientSecretEnv" (the variable holding the secret) or "privateKeyEnv" (the variable holding a private key).',
    });
  }
  if (grant === "cross_app_access") {
    if (clientId === undefined || secretEnv === undefined) {
      issues.push({
        path: [],
        message:
          'uses the cross_app_access grant, which needs "clientId" and "clientSecretEnv" (the client at the server\'s authorization server).',
      });
    }
    const idp = normalizeIdentityProvider(raw.idp ?? undefined, (field, what, example, path) =>
      envName("clientSecretEnv", what, example, { clientSecretEnv: field }, path),
    );
    issues.push(...idp.issues);
    if (idp.idp !== undefined) oauth.idp = idp.idp;
  } else if (raw.idp !== null && raw.idp !== undefined) {
    issues.push({
      path: ["idp"],
      message: 'only applies to the cross_app_access grant. Set "grant": "cross_app_access" or remove it.',
    });
  }
  const metadataUrl = blank(raw.clientMetadataUrl);
  if (metadataUrl !== undefined) {
    if (!isHttpsUrlWithPath(metadataUrl)) {
      issues.push({
        path: ["clientMetadataUrl"],
        message: `must be an https:// URL with a path (the client's metadata document), not ${describeValue(redactUrl(metadataUrl))}.`,
      });
    }
    oauth.clientMetadataUrl = metadataUrl;
  }
  const issuer = blank(raw.issuer);
  if (issuer !== undefined) {
    if (!isHttpUrl(issuer)) {
      issues.push({
        path: ["issuer"],
        message: `must be the authorization server's issuer URL (https://...), not ${describeValue(redactUrl(issuer))}.`,
      });
    }
    oauth.issuer = issuer;
  }
  const redirect = blank(raw.redirectUri);
  if (redirect !== undefined) {
    if (!isLoopbackHttpUrl(redirect)) {
      issues.push({
        path: ["redirectUri"],
        message: `must be an http:// URL on 127.0.0.1, [::1] or localhost (where sciencegate auth listens), not ${describeValue(redactUrl(redirect))}.`,
      });
    }
    oauth.redirectUri = redirect;
  }
  return { oauth, issues };
}

/**
 * Checks the `idp` of a cross_app_access grant: an issuer URL, a client id, the variable of the ID
 * token, and optionally a token endpoint and the variable of a client secret.
 */
function normalizeIdentityProvider(
  raw: NonNullable<RawOAuth["idp"]> | undefined,
  envName: (
    name: string | null | undefined,
    what: string,
    example: string,
    path: Segment[],
  ) => string | undefined,
): { idp?: IdentityProviderConfig; issues: { path: Segment[]; message: string }[] } {
  const issues: { path: Segment[]; message: string }[] = [];
  const blank = (value: string | null | undefined) =>
    value === null || value === undefined || value.trim() === "" ? undefined : value.trim();
  const issuer = blank(raw?.issuer);
  const clientId = blank(raw?.clientId);
  const idTokenEnv = envName(
    raw?.idTokenEnv,
    "the ID token the identity provider issued",
    "ENTERPRISE_ID_TOKEN",
    ["idp", "idTokenEnv"],
  );
  if (raw === undefined || issuer === undefined || clientId === undefined || idTokenEnv === undefined) {
    issues.push({
      path: ["idp"],
      message:
        'must name the enterprise identity provider: {"issuer": "https://idp.example.com", "clientId": "...", "idTokenEnv": "ENTERPRISE_ID_TOKEN"} (and "clientSecretEnv" when it gave the client a secret).',
    });
    return { issues };
  }
  if (!isHttpUrl(issuer)) {
    issues.push({
      path: ["idp", "issuer"],
      message: `must be the identity provider's issuer URL (https://...), not ${describeValue(redactUrl(issuer))}.`,
    });
  }
  const idp: IdentityProviderConfig = { issuer, clientId, idTokenEnv };
  const tokenEndpoint = blank(raw.tokenEndpoint);
  if (tokenEndpoint !== undefined) {
    if (!isHttpUrl(tokenEndpoint)) {
      issues.push({
        path: ["idp", "tokenEndpoint"],
        message: `must be the identity provider's token endpoint URL (https://...), not ${describeValue(redactUrl(tokenEndpoint))}.`,
      });
    }
    idp.tokenEndpoint = tokenEndpoint;
  }
  const secretEnv = envName(
    raw.clientSecretEnv,
    "the client secret at the identity provider",
    "IDP_CLIENT_SECRET",
    ["idp", "clientSecretEnv"],
  );
  if (secretEnv !== undefined) idp.clientSecretEnv = secretEnv;
  return { idp, issues };
}

function isHttpsUrlWithPath(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "https:" && url.pathname !== "/";
  } catch {
    return false;
  }
}

function isLoopbackHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return url.protocol === "http:" && ["127.0.0.1", "[::1]", "localhost"].includes(url.hostname);
  } catch {
    return false;
  }
}

function normalizeRouting(
  raw: RawRouting,
  substitute: (keyword: string, index: number) => string,
): RoutingConfig {
  const priority = raw.priority ?? DEFAULT_ROUTING_PRIORITY;
  return {
    keywords: (raw.keywords ?? []).map(substitute),
    mode: raw.mode ?? "off",
    // Out-of-range priorities are clamped, not rejected.
    priority: Math.min(100, Math.max(0, priority)),
  };
}
