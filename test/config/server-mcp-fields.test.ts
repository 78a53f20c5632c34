/** The per-server MCP fields of `extensions_config.json`: `protocol`, `roots` and `oauth`. */
import { describe, expect, test } from "vitest";
import { parseExtensionsConfig } from "../../src/config/extensions-config.js";
import type { ServerConfig } from "../../src/config/types.js";

const HTTP = { type: "http", url: "https://mcp.example/mcp" };

function parse(server: Record<string, unknown>, env: Record<string, string> = {}): ServerConfig {
  const config = parseExtensionsConfig({ mcpServers: { s: server } }, { env });
  return config.servers[0] as ServerConfig;
}

function issues(server: Record<string, unknown>, env: Record<string, string> = {}): string {
  try {
    parse(server, env);
  } catch (error) {
    return String((error as Error).message);
  }
  throw new Error("expected INVALID_CONFIG");
}

describe("protocol and roots", () => {
  test.each(["auto", "2025-11-25", "2026-07-28"])("protocol %s is kept", (protocol) => {
    expect(parse({ ...HTTP, protocol }).protocol).toBe(protocol);
  });

  test("an unknown revision, and 2026-07-28 over sse, are refused", () => {
    expect(issues({ ...HTTP, protocol: "2024-11-05" })).toContain("protocol");
    expect(issues({ type: "sse", url: "https://mcp.example/sse", protocol: "2026-07-28" })).toContain(
      "which the sse transport cannot speak",
    );
  });

  test("roots: absolute paths become file:// URIs, file:// URIs stay, anything else is refused", () => {
    expect(parse({ ...HTTP, roots: ["/data/papers", "file:///srv/x"] }).roots).toEqual([
      "file:///data/papers",
      "file:///srv/x",
    ]);
    expect(issues({ ...HTTP, roots: ["relative/dir"] })).toContain(
      "must be an absolute path or a file:// URI",
    );
    expect(issues({ ...HTTP, roots: ["https://example.org/"] })).toContain("roots[0]");
  });
});

describe("oauth", () => {
  test("absent, false, or a block with defaults", () => {
    expect(parse(HTTP).oauth).toBeUndefined();
    expect(parse({ ...HTTP, oauth: false }).oauth).toBe(false);
    expect(parse({ ...HTTP, oauth: { scope: " mcp:read " } }).oauth).toEqual({
      grant: "authorization_code",
      scope: "mcp:read",
    });
  });

  test("client credentials with a secret or a private key, each named by a variable that is set", () => {
    expect(
      parse(
        { ...HTTP, oauth: { grant: "client_credentials", clientId: "svc", clientSecretEnv: "SVC_SECRET" } },
        { SVC_SECRET: "s" },
      ).oauth,
    ).toEqual({ grant: "client_credentials", clientId: "svc", clientSecretEnv: "SVC_SECRET" });
    expect(
      parse(
        {
          ...HTTP,
          oauth: {
            grant: "client_credentials",
            clientId: "svc",
            privateKeyEnv: "SVC_KEY",
            signingAlgorithm: "RS256",
          },
        },
        { SVC_KEY: "pem" },
      ).oauth,
    ).toMatchObject({ privateKeyEnv: "SVC_KEY", signingAlgorithm: "RS256" });
  });

  test.each([
    [{ grant: "client_credentials", clientId: "svc" }, 'needs "clientId" and "clientSecretEnv"'],
    [{ grant: "client_credentials", clientSecretEnv: "SVC_SECRET" }, 'needs "clientId"'],
    [{ grant: "client_credentials", clientId: "svc", clientSecretEnv: "UNSET" }, "UNSET, which is not set"],
    [
      { grant: "client_credentials", clientId: "svc", clientSecretEnv: "not a name" },
      "name of an environment variable",
    ],
    [
      {
        grant: "client_credentials",
        clientId: "svc",
        clientSecretEnv: "SVC_SECRET",
        privateKeyEnv: "SVC_SECRET",
      },
      "Keep one way for the client to authenticate",
    ],
    [{ privateKeyEnv: "SVC_SECRET" }, "applies to the client_credentials grant"],
    [
      { grant: "client_credentials", clientId: "svc", privateKeyEnv: "SVC_SECRET", signingAlgorithm: "none" },
      "a JWS algorithm",
    ],
    [{ clientMetadataUrl: "http://client.example/meta.json" }, "must be an https:// URL with a path"],
    [{ redirectUri: "http://evil.example/callback" }, "on 127.0.0.1, [::1] or localhost"],
    [{ issuer: "not a url" }, "issuer URL"],
    [{ grant: "password" }, "oauth.grant"],
  ])("%j is refused", (oauth, message) => {
    expect(issues({ ...HTTP, oauth }, { SVC_SECRET: "s" })).toContain(message);
  });

  test("a stdio server, or one that sends its own Authorization header, takes no oauth", () => {
    expect(issues({ command: "node", oauth: {} })).toContain("only applies to http and sse servers");
    expect(issues({ ...HTTP, bearer_token_env: "T", oauth: {} }, { T: "t" })).toContain(
      "conflicts with the Authorization header",
    );
  });
});
