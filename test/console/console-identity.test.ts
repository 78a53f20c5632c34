/**
 * The console as an OAuth 2.1 resource server, against a real authorization server on loopback
 * (`oidc-provider`): only a token with the `administer` scope gets in; every invocation, grant, mode and
 * authorization row shows the user it belongs to; an administrator filters by user and revokes one
 * user's grants, and the revocation rows name the administrator.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { serveConsole } from "sciencegate/console";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { ConsoleServer } from "../../src/console/index.js";
import { createGatewayServer, type GatewayServer } from "../../src/gateway/index.js";
import { createLab, type Lab } from "../gateway/gateway-harness.js";
import { type LoopbackIssuer, SCOPES, startLoopbackIssuer } from "../identity/loopback-issuer.js";
import { csrfOf, post } from "./console-client.js";

let issuer: LoopbackIssuer;
let lab: Lab;
let gateway: GatewayServer;
let consoleServer: ConsoleServer;
let audience: string;
const tokens: Record<string, string> = {};

/** One call of a user through the gateway; the user answers an approval with `decision`. */
async function callAs(user: string, tool: string, decision = "allow_matching"): Promise<void> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await gateway.connect(serverSide, { principal: user });
  const client = new Client({ name: user, version: "1" }, { capabilities: { elicitation: {} } });
  client.setRequestHandler(ElicitRequestSchema, () => ({ action: "accept", content: { decision } }));
  await client.connect(clientSide);
  try {
    await client.callTool({ name: `mcp__lab__${tool}`, arguments: { query: user } });
  } finally {
    await client.close();
  }
}

beforeAll(async () => {
  issuer = await startLoopbackIssuer({
    carol: [SCOPES.administer],
    alice: [SCOPES.call, SCOPES.approve],
  });
  lab = await createLab();
  gateway = createGatewayServer({ governance: lab.governance, eager: true });
  await callAs("alice", "write");
  await callAs("alice", "search");
  await callAs("bob", "search");
  consoleServer = await serveConsole({
    governance: lab.governance,
    oauth: { issuer: issuer.issuer, jwksUrl: issuer.jwksUrl },
    writable: true,
  });
  audience = `${consoleServer.url}/`;
  tokens.carol = await issuer.token("carol", audience);
  tokens.alice = await issuer.token("alice", audience);
  tokens.elsewhere = await issuer.token("carol", "http://127.0.0.1:9/mcp");
}, 60_000);

afterAll(async () => {
  await consoleServer?.close();
  await gateway?.close();
  await lab?.governance.close();
  await issuer?.close();
});

const get = (path: string, token?: string) =>
  fetch(`${consoleServer.url}${path}`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    redirect: "manual",
  });

/** The `<tr>` whose `data-id` is `id`. */
function rowWithId(page: string, id: string): string {
  const at = page.indexOf(`data-id="${id}"`);
  if (at < 0) throw new Error(`no row ${id}`);
  return page.slice(page.lastIndexOf("<tr", at), page.indexOf("</tr>", at));
}

/** The text of a row's user cell. */
function userCell(row: string): string {
  return (/<td class="user">(.*?)<\/td>/s.exec(row)?.[1] ?? "").replace(/<[^>]+>/g, "");
}

describe("who may use the console", () => {
  test("the metadata names the console and its issuer", async () => {
    const answer = await get("/.well-known/oauth-protected-resource");
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({ resource: audience, authorization_servers: [issuer.issuer] });
  });

  test("no token: 401 naming the metadata; a token without administer: 403; a token for another resource: 401", async () => {
    const none = await get("/invocations");
    expect(none.status).toBe(401);
    expect(none.headers.get("www-authenticate")).toContain(
      `resource_metadata="${consoleServer.url}/.well-known/oauth-protected-resource"`,
    );
    const user = await get("/invocations", tokens.alice);
    expect(user.status).toBe(403);
    expect(user.headers.get("www-authenticate")).toContain('error="insufficient_scope"');
    const elsewhere = await get("/invocations", tokens.elsewhere);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get("www-authenticate")).toContain("not for this resource");
    // A non-administrator's write changes nothing.
    const before = await lab.governance.permissions.listGrants({ principal: "alice" });
    const refused = await post(
      consoleServer.url,
      "/users/revoke",
      { user: "alice" },
      {
        origin: consoleServer.url,
        authorization: `Bearer ${tokens.alice}`,
      },
    );
    expect(refused.status).toBe(403);
    expect(await lab.governance.permissions.listGrants({ principal: "alice" })).toEqual(before);
  });
});

describe("the acting user on each row", () => {
  test("every invocation row shows the user it was made for", async () => {
    const page = await (await get("/invocations", tokens.carol)).text();
    const rows = await lab.governance.ledger.query();
    expect(rows.length).toBe(3);
    for (const row of rows) expect(userCell(rowWithId(page, row.invocationId))).toBe(row.principal);
    expect(rows.map((row) => row.principal).sort()).toEqual(["alice", "alice", "bob"]);
    // Filtered by user: only that user's rows.
    const bobs = await (await get("/invocations?user=bob", tokens.carol)).text();
    const shown = rows.filter((row) => bobs.includes(`data-id="${row.invocationId}"`));
    expect(shown.map((row) => row.principal)).toEqual(["bob"]);
    // The detail page names the user too.
    const [aliceRow] = rows.filter((row) => row.principal === "alice");
    const detail = await (await get(`/invocations/${aliceRow?.invocationId}`, tokens.carol)).text();
    expect(/<span data-user>(.*?)<\/span>/s.exec(detail)?.[1], detail.slice(0, 3000)).toContain(">alice</a>");
  });

  test("grants and authorization rows show their user; an administrator revokes one user's grants", async () => {
    const [grant] = await lab.governance.permissions.listGrants();
    expect(grant?.principal).toBe("alice");
    const page = await (await get("/permissions", tokens.carol)).text();
    expect(userCell(rowWithId(page, grant?.id as string))).toBe("alice");
    const authorizations = await lab.governance.ledger.listAuthorizations();
    expect(authorizations.length).toBeGreaterThan(0);
    for (const row of authorizations) expect(userCell(rowWithId(page, row.id))).toBe(row.principal);

    const filtered = await (await get("/permissions?user=alice", tokens.carol)).text();
    expect(filtered).toContain("Revoke every grant of alice");
    const revoked = await post(
      consoleServer.url,
      "/users/revoke",
      { user: "alice", _csrf: csrfOf(filtered) },
      { origin: consoleServer.url, authorization: `Bearer ${tokens.carol}` },
    );
    expect(revoked.status).toBe(303);
    expect(await lab.governance.permissions.listGrants({ principal: "alice" })).toEqual([]);
    const audit = await lab.governance.ledger.listAuthorizations({ principal: "carol" });
    expect(audit.map((row) => [row.action, row.decisionSource, row.resource])).toEqual([
      ["revoke_grant", "operator_console", grant?.resource],
    ]);
    const after = await (await get("/permissions", tokens.carol)).text();
    expect(userCell(rowWithId(after, audit[0]?.id as string))).toBe("carol");
  });
});
