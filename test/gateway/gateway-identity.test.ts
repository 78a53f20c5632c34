/**
 * The gateway as an OAuth 2.1 resource server, against a real authorization server on loopback
 * (`oidc-provider`): users log in with the authorization code flow and PKCE, and call the gateway over
 * Streamable HTTP with the SDK client. Each user's rows, grants and quotas are its own; a user without
 * the `approve` scope is never asked; tokens with the wrong audience or issuer, expired, unsigned or
 * signed with another key are refused with nothing run.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { type CallToolResult, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { base64url, decodeJwt, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Clock } from "../../src/core/index.js";
import {
  createGatewayServer,
  type GatewayHttpServer,
  type GatewayServer,
  serveGatewayHttp,
} from "../../src/gateway/index.js";
import { type LoopbackIssuer, SCOPES, startLoopbackIssuer } from "../identity/loopback-issuer.js";
import { createLab, type Lab } from "./gateway-harness.js";
import { MCP_POST_HEADERS, rawRequest, textOf } from "./http-client.js";

/** The system clock, moved forward by the tests that need an expired token. */
const clock: Clock & { skewMs: number } = {
  skewMs: 0,
  now() {
    return Date.now() + this.skewMs;
  },
} as Clock & { skewMs: number };

let issuer: LoopbackIssuer;
let otherIssuer: LoopbackIssuer;
let lab: Lab;
let gateway: GatewayServer;
let http: GatewayHttpServer;
const tokens: Record<string, string> = {};

beforeAll(async () => {
  issuer = await startLoopbackIssuer({
    alice: [SCOPES.call, SCOPES.approve],
    bob: [SCOPES.call],
    eve: [SCOPES.approve],
  });
  // Another issuer that signs with the same key: only the issuer check tells its tokens apart.
  otherIssuer = await startLoopbackIssuer({ alice: [SCOPES.call, SCOPES.approve] }, { jwk: issuer.jwk });
  lab = await createLab({ quotas: "lab/search=2/1h" });
  gateway = createGatewayServer({ governance: lab.governance, eager: true });
  // No jwksUrl: the keys are found through the issuer's metadata.
  http = await serveGatewayHttp(gateway, { oauth: { issuer: issuer.issuer, clock } });
  for (const user of ["alice", "bob", "eve"]) tokens[user] = await issuer.token(user, http.url);
}, 60_000);

afterAll(async () => {
  await http?.close();
  await gateway?.close();
  await lab?.governance.close();
  await issuer?.close();
  await otherIssuer?.close();
});

interface UserClient {
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  /** The approval questions this client was asked. */
  asked: unknown[];
  mcpSessionId: string;
  close(): Promise<void>;
}

/** A user's SDK client that declares elicitation and answers every approval with `decision`. */
async function connectAs(token: string, decision = "allow_matching"): Promise<UserClient> {
  const transport = new StreamableHTTPClientTransport(new URL(http.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client(
    { name: "identity-test", version: "1.0.0" },
    { capabilities: { elicitation: {} } },
  );
  const asked: unknown[] = [];
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params);
    return { action: "accept", content: { decision } };
  });
  await client.connect(transport);
  return {
    asked,
    mcpSessionId: transport.sessionId as string,
    call: async (name, args = { query: "x" }) =>
      (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: () => client.close(),
  };
}

async function rowsOf(principal: string) {
  return lab.governance.ledger.query({ principal });
}

/** A JWT with the claims a valid token has, for forging. */
function claimsFor(resource: string) {
  const now = Math.floor(clock.now() / 1000);
  return {
    sub: "alice",
    scope: `${SCOPES.call} ${SCOPES.approve}`,
    iss: issuer.issuer,
    aud: resource,
    iat: now,
    exp: now + 600,
  };
}

describe("protected resource metadata (RFC 9728)", () => {
  test("the metadata names the resource and its issuer; a request without a token is told where it is", async () => {
    expect(http.resourceMetadataUrl).toBe(
      `${new URL(http.url).origin}/.well-known/oauth-protected-resource/mcp`,
    );
    const metadata = (await (await fetch(http.resourceMetadataUrl as string)).json()) as Record<
      string,
      unknown
    >;
    expect(metadata.resource).toBe(http.url);
    expect(metadata.authorization_servers).toEqual([issuer.issuer]);
    expect(metadata.scopes_supported).toEqual([SCOPES.call, SCOPES.approve, SCOPES.administer]);

    const refused = await rawRequest(http.url, { method: "POST", headers: MCP_POST_HEADERS, body: "{}" });
    expect(refused.status).toBe(401);
    expect(refused.headers["www-authenticate"]).toBe(
      `Bearer resource_metadata="${http.resourceMetadataUrl}", scope="${SCOPES.call}"`,
    );
  });
});

describe("two users with different scopes", () => {
  test("rows carry the user; one user's grant never covers the other; a user without approve is never asked", async () => {
    const alice = await connectAs(tokens.alice as string);
    const bob = await connectAs(tokens.bob as string);
    try {
      // Bob may call but not approve: his dangerous call is refused without a question, nothing runs.
      const bobFirst = await bob.call("mcp__lab__write");
      expect(bobFirst.isError).toBe(true);
      expect(textOf(bobFirst)).toContain("PERMISSION_DENIED");
      expect(bob.asked).toHaveLength(0);
      expect(lab.calls.write).toBeUndefined();

      // Alice approves "allow matching": her call runs, her grant is hers.
      const aliceCall = await alice.call("mcp__lab__write");
      expect(aliceCall.isError).toBeFalsy();
      expect(alice.asked).toHaveLength(1);
      expect(lab.calls.write).toBe(1);
      const grants = await lab.governance.permissions.listGrants();
      expect(grants.map((grant) => grant.principal)).toEqual(["alice"]);

      // Her grant does not cover Bob, though he asks for the same tool.
      const bobAgain = await bob.call("mcp__lab__write");
      expect(textOf(bobAgain)).toContain("PERMISSION_DENIED");
      expect(lab.calls.write).toBe(1);
      // And covers her next call without a question.
      expect((await alice.call("mcp__lab__write")).isError).toBeFalsy();
      expect(alice.asked).toHaveLength(1);
      expect(lab.calls.write).toBe(2);

      const aliceRows = await rowsOf("alice");
      const bobRows = await rowsOf("bob");
      expect(aliceRows.filter((row) => row.toolId === "write").map((row) => row.status)).toEqual([
        "ok",
        "ok",
      ]);
      expect(bobRows.filter((row) => row.toolId === "write").map((row) => row.status)).toEqual([
        "error",
        "error",
      ]);
      const authorizations = await lab.governance.ledger.listAuthorizations({ principal: "alice" });
      expect(authorizations.length).toBeGreaterThan(0);
      expect(authorizations.every((row) => row.principal === "alice")).toBe(true);
      expect(await lab.governance.ledger.listAuthorizations({ principal: "bob" })).toHaveLength(0);

      // Bob's token on Alice's MCP session finds nothing.
      const hijack = await rawRequest(http.url, {
        method: "POST",
        headers: {
          ...MCP_POST_HEADERS,
          "mcp-session-id": alice.mcpSessionId,
          authorization: `Bearer ${tokens.bob}`,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 99,
          method: "tools/call",
          params: { name: "mcp__lab__write", arguments: { query: "x" } },
        }),
      });
      expect(hijack.status).toBe(404);
      expect(lab.calls.write).toBe(2);
      // Alice's own token without the approve scope does not reach her session either: the session was
      // opened by a token that may approve.
      const narrower = await issuer.token("alice", http.url, SCOPES.call);
      const downgraded = await rawRequest(http.url, {
        method: "POST",
        headers: {
          ...MCP_POST_HEADERS,
          "mcp-session-id": alice.mcpSessionId,
          authorization: `Bearer ${narrower}`,
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 98, method: "tools/list" }),
      });
      expect(downgraded.status).toBe(404);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  test("quotas hold per user: each user's third search in the hour is refused, the other's are not", async () => {
    const alice = await connectAs(tokens.alice as string);
    const bob = await connectAs(tokens.bob as string);
    try {
      const before = lab.calls.search ?? 0;
      const outcomes = [];
      for (const user of [alice, alice, alice, bob, bob, bob]) {
        const result = await user.call("mcp__lab__search", { query: `q${outcomes.length}` });
        outcomes.push(result.isError ? (/"code":"(\w+)"/.exec(textOf(result))?.[1] ?? "error") : "ok");
      }
      expect(outcomes).toEqual(["ok", "ok", "QUOTA_EXCEEDED", "ok", "ok", "QUOTA_EXCEEDED"]);
      expect((lab.calls.search ?? 0) - before).toBe(4);
      const refused = (await rowsOf("alice")).filter((row) => row.error?.code === "QUOTA_EXCEEDED");
      expect(refused).toHaveLength(1);
    } finally {
      await alice.close();
      await bob.close();
    }
  });

  test("a token without the call scope is refused with 403 insufficient_scope", async () => {
    const refused = await rawRequest(http.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, authorization: `Bearer ${tokens.eve}` },
      body: "{}",
    });
    expect(refused.status).toBe(403);
    expect(refused.headers["www-authenticate"]).toContain('error="insufficient_scope"');
    expect(refused.headers["www-authenticate"]).toContain(`scope="${SCOPES.call}"`);
    expect(await rowsOf("eve")).toHaveLength(0);
  });
});

describe("one governance session shared by two users (the same session id)", () => {
  test("neither a grant nor an approval mode of one user covers the other", async () => {
    const shared = "gateway:shared-by-two";
    const [aliceSide, aliceServer] = InMemoryTransport.createLinkedPair();
    const [bobSide, bobServer] = InMemoryTransport.createLinkedPair();
    await gateway.connect(aliceServer, { sessionId: shared, principal: "alice" });
    await gateway.connect(bobServer, { sessionId: shared, principal: "bob" });
    const answers = { alice: [] as string[], bob: [] as string[] };
    const clients = await Promise.all(
      (["alice", "bob"] as const).map(async (user) => {
        const client = new Client({ name: user, version: "1" }, { capabilities: { elicitation: {} } });
        client.setRequestHandler(ElicitRequestSchema, () => {
          const decision = answers[user].shift() ?? "deny";
          return { action: "accept", content: { decision } };
        });
        await client.connect(user === "alice" ? aliceSide : bobSide);
        return client;
      }),
    );
    const [alice, bob] = clients as [Client, Client];
    const write = async (client: Client) =>
      (await client.callTool({ name: "mcp__lab__write", arguments: { query: "shared" } })) as CallToolResult;
    try {
      const before = lab.calls.write ?? 0;
      // Alice answers "allow always": her approval mode in this session becomes always_allow.
      answers.alice.push("allow_always");
      expect((await write(alice)).isError).toBeFalsy();
      expect(lab.calls.write).toBe(before + 1);
      const modes = lab.governance.permissions.listApprovalModes({ sessionId: shared });
      expect(modes).toEqual([
        expect.objectContaining({ sessionId: shared, mode: "always_allow", principal: "alice" }),
      ]);
      // Bob, in the same session, is asked (and denies): Alice's mode is not his.
      answers.bob.push("deny");
      const bobResult = await write(bob);
      expect(textOf(bobResult)).toContain("PERMISSION_DENIED");
      expect(lab.calls.write).toBe(before + 1);
      // Bob allows matching calls: his grant; it is not Alice's.
      answers.bob.push("allow_matching");
      expect((await write(bob)).isError).toBeFalsy();
      const grants = await lab.governance.permissions.listGrants({ sessionId: shared });
      expect(grants.map((grant) => grant.principal)).toEqual(["bob"]);
      expect(lab.calls.write).toBe(before + 2);
    } finally {
      await alice.close();
      await bob.close();
    }
  });
});

describe("tokens that are refused, with nothing run", () => {
  const forged: Record<string, () => Promise<string>> = {
    "for another resource (audience)": () => issuer.token("alice", "http://127.0.0.1:9/other/mcp"),
    "from another issuer with the same key": () => otherIssuer.token("alice", http.url),
    "unsigned (alg none)": async () => {
      const header = base64url.encode(JSON.stringify({ alg: "none", typ: "at+jwt" }));
      return `${header}.${base64url.encode(JSON.stringify(claimsFor(http.url)))}.`;
    },
    "signed with another key under the issuer's key id": async () => {
      const { privateKey } = await generateKeyPair("ES256", { extractable: true });
      return new SignJWT(claimsFor(http.url))
        .setProtectedHeader({ alg: "ES256", typ: "at+jwt", kid: issuer.jwk.kid as string })
        .sign(privateKey);
    },
    "signed with a symmetric key (HS256 over the issuer's public key)": async () => {
      const { x, y, crv, kty } = issuer.jwk;
      const secret = new TextEncoder().encode(JSON.stringify({ crv, kty, x, y }));
      return new SignJWT(claimsFor(http.url))
        .setProtectedHeader({ alg: "HS256", typ: "at+jwt", kid: issuer.jwk.kid as string })
        .sign(secret);
    },
  };

  test.each(Object.keys(forged))(
    "a token %s: 401 invalid_token, no session, no row, no upstream call",
    async (name) => {
      const token = await (forged[name] as () => Promise<string>)();
      const callsBefore = { ...lab.calls };
      const rowsBefore = (await lab.governance.ledger.query()).length;
      // A session of the real Alice exists: the forged token must not reach it either.
      const alice = await connectAs(tokens.alice as string);
      try {
        for (const headers of [{}, { "mcp-session-id": alice.mcpSessionId }]) {
          const refused = await rawRequest(http.url, {
            method: "POST",
            headers: { ...MCP_POST_HEADERS, ...headers, authorization: `Bearer ${token}` },
            body: JSON.stringify({
              jsonrpc: "2.0",
              id: 7,
              method: "tools/call",
              params: { name: "mcp__lab__write", arguments: { query: "forged" } },
            }),
          });
          expect(refused.status).toBe(401);
          expect(refused.headers["www-authenticate"]).toContain('error="invalid_token"');
          expect(refused.headers["www-authenticate"]).toContain(
            `resource_metadata="${http.resourceMetadataUrl}"`,
          );
        }
      } finally {
        await alice.close();
      }
      expect(lab.calls).toEqual(callsBefore);
      expect(await lab.governance.ledger.query()).toHaveLength(rowsBefore);
    },
  );

  test("an expired token: refused once the clock passes its expiry (and the tolerance)", async () => {
    const token = tokens.alice as string;
    const expiresAt = (decodeJwt(token).exp as number) * 1000;
    const alice = await connectAs(token);
    const callsBefore = { ...lab.calls };
    try {
      clock.skewMs = expiresAt - Date.now() + 31_000;
      const refused = await rawRequest(http.url, {
        method: "POST",
        headers: {
          ...MCP_POST_HEADERS,
          "mcp-session-id": alice.mcpSessionId,
          authorization: `Bearer ${token}`,
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 8,
          method: "tools/call",
          params: { name: "mcp__lab__lookup", arguments: { query: "late" } },
        }),
      });
      expect(refused.status).toBe(401);
      expect(refused.headers["www-authenticate"]).toContain("expired");
    } finally {
      clock.skewMs = 0;
      await alice.close();
    }
    expect(lab.calls).toEqual(callsBefore);
  });

  test("a valid token is accepted on the same requests (the refusals above are the token's)", async () => {
    const alice = await connectAs(tokens.alice as string);
    try {
      expect((await alice.call("mcp__lab__lookup")).isError).toBeFalsy();
    } finally {
      await alice.close();
    }
  });
});
