/**
 * The console's Permissions page over a real runtime (SQLite ledger and grants in a data directory, an
 * in-memory MCP server with a dangerous `write`): grants made by real decisions, revoked through the
 * page (CSRF, read-only and the audit row checked), approval modes and source switches changed through
 * its forms, the latest authorization rows, escaping; and the same page over session state shared in a
 * real PostgreSQL.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { serveConsole } from "sciencegate/console";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import type { ConsoleServer } from "../../src/console/index.js";
import { openPostgres } from "../../src/core/index.js";
import {
  createAuthorizationRequest,
  PostgresSessionStateStore,
} from "../../src/governance/permissions/index.js";
import { createGovernance, type Governance } from "../../src/runtime/index.js";
import { createInMemoryPool } from "../../src/testing/in-memory-pool.js";
import { demoResult } from "../governance/broker/broker-harness.js";
import { makeSource, makeTool } from "../governance/manifests/manifest-factory.js";
import { openTestPostgres, type TestPostgres } from "../postgres/test-postgres.js";

const HOSTILE = "<script>alert(1)</script>";

/** A runtime over source `lab` (`write` dangerous, `search` safe) and `notes` (known, off by default, no server). */
async function openLab(options: { sessionState?: PostgresSessionStateStore } = {}): Promise<Governance> {
  const server = new McpServer({ name: "lab", version: "1.0.0" });
  for (const name of ["write", "search"]) {
    server.registerTool(name, { inputSchema: { query: z.string() } }, async ({ query }) => {
      const demo = demoResult(name, [query.replace(/\W/g, "") || "x"], { sourceId: "lab" });
      const result = { ...demo, records: demo.records.map((record) => ({ ...record, source: "lab" })) };
      return {
        content: [{ type: "text", text: JSON.stringify(result) }],
        structuredContent: result as never,
      };
    });
  }
  const dir = mkdtempSync(join(tmpdir(), "sciencegate-console-permissions-"));
  const manifests = join(dir, "manifests");
  mkdirSync(manifests);
  writeFileSync(
    join(manifests, "lab.json"),
    JSON.stringify(
      makeSource({
        id: "lab",
        tools: [
          makeTool({
            id: "write",
            readOnly: false,
            permission: {
              action: "lab:write",
              resourceTemplate: "lab:write:{query}",
              summaryTemplate: 'Write "{query}" in the lab',
            },
          }),
          makeTool({ id: "search" }),
        ],
      }),
    ),
  );
  writeFileSync(
    join(manifests, "notes.json"),
    JSON.stringify(makeSource({ id: "notes", enabledByDefault: false })),
  );
  return createGovernance({
    config: { servers: [] },
    manifests: { builtin: false, dirs: [manifests] },
    mcp: { pool: createInMemoryPool({ lab: server }) },
    storage: {
      dataDir: join(dir, "data"),
      ...(options.sessionState ? { sessionState: options.sessionState } : {}),
    },
  });
}

const call = (session: string, toolCallId: string, query: string, toolId = "write") => ({
  sourceId: "lab",
  toolId,
  input: { query },
  sessionId: session,
  threadId: session,
  toolCallId,
});

const codeOf = (promise: Promise<unknown>) =>
  promise.then(
    () => "ran",
    (error: unknown) => (error as { code?: string }).code ?? String(error),
  );

async function page(
  console: ConsoleServer,
  path = "/permissions",
): Promise<{ status: number; body: string }> {
  const response = await fetch(`${console.url}${path}`);
  return { status: response.status, body: await response.text() };
}

async function csrfOf(console: ConsoleServer): Promise<string> {
  const { body } = await page(console);
  const token = /name="_csrf" value="([0-9a-f]{64})"/.exec(body)?.[1];
  if (!token) throw new Error("no CSRF token on the page");
  return token;
}

async function post(console: ConsoleServer, path: string, fields: Record<string, string>) {
  const response = await fetch(`${console.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
    redirect: "manual",
  });
  return { status: response.status, location: response.headers.get("location"), body: await response.text() };
}

/** The markup of one element with `id` up to its closing tag (tables and forms do not nest here). */
function element(body: string, id: string, tag = "table"): string {
  const start = body.indexOf(`id="${id}"`);
  if (start < 0) return "";
  return body.slice(start, body.indexOf(`</${tag}>`, start));
}

const rowIds = (markup: string) => [...markup.matchAll(/<tr data-id="([^"]+)"/g)].map((m) => m[1]);

describe("the Permissions page over a runtime with SQLite grants and session state in memory", () => {
  let governance: Governance;
  let writable: ConsoleServer;
  let readOnly: ConsoleServer;

  beforeAll(async () => {
    governance = await openLab();
    writable = await serveConsole({ governance, port: 0, writable: true });
    readOnly = await serveConsole({ governance, port: 0 });
  });
  afterAll(async () => {
    await writable?.close();
    await readOnly?.close();
    await governance?.close();
  });

  test("a grant from an allow_matching decision is listed, and revoking it through the page makes the next matching call ask again", async () => {
    const { permissions, broker } = governance;
    const first = createAuthorizationRequest(governance.catalog, call("s1", "c1", "a"));
    expect((await permissions.evaluate(first)).outcome).toBe("ask");
    const { grant } = await permissions.decide(first, { decision: "allow_matching" });
    if (!grant) throw new Error("allow_matching made no grant");
    await broker.invoke(call("s1", "c1", "a"));
    // The grant covers the next matching call: it runs as existing_grant.
    await broker.invoke(call("s1", "c2", "b"));
    const s1Rows = await governance.ledger.listAuthorizations({ sessionId: "s1" });
    expect(s1Rows.find((row) => row.toolCallId === "c2")?.decisionSource).toBe("existing_grant");

    const before = await page(writable);
    expect(before.status).toBe(200);
    const grants = element(before.body, "grants");
    expect(rowIds(grants)).toEqual([grant.id]);
    expect(grants).toContain("<code>lab:write</code>");
    expect(grants).toContain(
      `title="${grant.toolDefinitionHash}">${grant.toolDefinitionHash.slice(0, 12)}</code>`,
    );
    expect(grants).toContain(`action="/grants/${grant.id}/revoke"`);
    expect(grants).toContain(">Revoke</button>");
    // The recent rows link the calls to their invocations.
    expect(element(before.body, "authorizations")).toContain(
      'href="/invocations?session=s1"><code>c2</code>',
    );

    const revoke = `/grants/${grant.id}/revoke`;
    const token = await csrfOf(writable);
    // No CSRF token, or a wrong one: refused, nothing changed.
    expect((await post(writable, revoke, {})).status).toBe(403);
    expect((await post(writable, revoke, { _csrf: "0".repeat(64) })).status).toBe(403);
    // A read-only console refuses even with its own valid token.
    const refused = await post(readOnly, revoke, { _csrf: await csrfOf(readOnly) });
    expect(refused.status).toBe(403);
    expect(refused.body).toContain("read-only");
    expect((await permissions.listGrants()).map((g) => g.id)).toEqual([grant.id]);
    expect(await governance.ledger.listAuthorizations({ sessionId: "s1" })).toHaveLength(s1Rows.length);

    const done = await post(writable, revoke, { _csrf: token });
    expect(done).toMatchObject({ status: 303, location: "/permissions?done=revoked" });
    expect(await permissions.listGrants()).toEqual([]);
    const audit = (await governance.ledger.listAuthorizations({ sessionId: "s1" })).at(-1);
    expect(audit).toMatchObject({
      sessionId: "s1",
      sourceId: "lab",
      toolId: "grant",
      action: "revoke_grant",
      resource: grant.resource,
      decisionSource: "operator_console",
      epoch: await permissions.epoch("s1"),
    });
    expect(audit?.toolCallId).toBeUndefined();

    // The next matching dangerous call asks again: evaluate shows a card, and the broker refuses it.
    const next = createAuthorizationRequest(governance.catalog, call("s1", "c3", "c"));
    expect((await permissions.evaluate(next)).outcome).toBe("ask");
    await expect(broker.invoke(call("s1", "c3", "c"))).rejects.toMatchObject({
      code: "PERMISSION_DENIED",
      message: expect.stringContaining("approval required"),
    });

    const after = await page(writable, "/permissions?done=revoked");
    expect(after.body).toContain("Grant revoked");
    expect(after.body).toContain('id="grants-empty"');
    expect(element(after.body, "authorizations")).toContain('data-decision="operator_console"');
    // A second revoke of the same id: 404, and no second audit row.
    const rows = (await governance.ledger.listAuthorizations()).length;
    expect((await post(writable, revoke, { _csrf: token })).status).toBe(404);
    expect(await governance.ledger.listAuthorizations()).toHaveLength(rows);
  });

  test("an approval mode set through the form applies and is audited; its row's button sets it back", async () => {
    const { permissions, broker } = governance;
    const token = await csrfOf(writable);
    // Refused without a token and on a read-only console: nothing changes.
    expect((await post(writable, "/sessions/mode", { session: "s2", mode: "always_allow" })).status).toBe(
      403,
    );
    expect(
      (
        await post(readOnly, "/sessions/mode", {
          _csrf: await csrfOf(readOnly),
          session: "s2",
          mode: "always_allow",
        })
      ).status,
    ).toBe(403);
    expect(permissions.approvalMode("s2")).toBe("ask_for_dangerous");
    expect(await codeOf(broker.invoke(call("s2", "c1", "a")))).toBe("PERMISSION_DENIED");

    const set = await post(writable, "/sessions/mode", {
      _csrf: token,
      session: " s2 ",
      mode: "always_allow",
    });
    expect(set).toMatchObject({ status: 303, location: "/permissions?done=mode" });
    expect(permissions.approvalMode("s2")).toBe("always_allow");
    expect(await codeOf(broker.invoke(call("s2", "c2", "b")))).toBe("ran");
    const audit = await governance.ledger.listAuthorizations({ sessionId: "s2" });
    expect(audit.find((row) => row.decisionSource === "operator_console")).toMatchObject({
      sourceId: "console",
      toolId: "approval_mode",
      action: "set_approval_mode",
      resource: "mode:always_allow",
    });

    const { body } = await page(writable, "/permissions?done=mode");
    expect(body).toContain("Approval mode set.");
    const modes = element(body, "approval-modes");
    expect(modes).toContain('<tr data-id="s2" data-mode="always_allow">');
    // The row's own button posts the other mode.
    expect(modes).toContain('name="mode" value="ask_for_dangerous"');
    expect(element(body, "set-mode-form", "form")).toContain('<option value="always_allow">');
    expect(
      (await post(writable, "/sessions/mode", { _csrf: token, session: "s2", mode: "ask_for_dangerous" }))
        .status,
    ).toBe(303);
    expect(permissions.approvalMode("s2")).toBe("ask_for_dangerous");
    expect(permissions.listApprovalModes({ sessionId: "s2" })).toEqual([
      { sessionId: "s2", mode: "ask_for_dangerous" },
    ]);
  });

  test.each([
    [{ session: "", mode: "always_allow" }, "'session'"],
    [{ session: "   ", mode: "always_allow" }, "'session'"],
    [{ session: "x".repeat(513), mode: "always_allow" }, "at most 512"],
    [{ session: "a\u0007b", mode: "always_allow" }, "control characters"],
    [{ session: "s9", mode: "yolo" }, "'mode' must be ask_for_dangerous or always_allow"],
    [{ session: "s9" }, "'mode'"],
  ])("a mode form with %j is 400 naming the field, and changes nothing", async (fields, message) => {
    const before = (await governance.ledger.listAuthorizations()).length;
    const response = await post(writable, "/sessions/mode", { _csrf: await csrfOf(writable), ...fields });
    expect(response.status).toBe(400);
    expect(response.body).toContain("INVALID_INPUT");
    expect(response.body).toContain(message.replaceAll("'", "&#39;"));
    expect(governance.permissions.listApprovalModes({ sessionId: "s9" })).toEqual([]);
    expect(await governance.ledger.listAuthorizations()).toHaveLength(before);
  });

  test("a source switched off through the form is refused for that session only, audited, and its toggle switches it on", async () => {
    const { sessions, broker } = governance;
    const lab = { id: "lab", enabledByDefault: true };
    const token = await csrfOf(writable);
    expect(
      (
        await post(readOnly, "/sessions/source", {
          _csrf: await csrfOf(readOnly),
          session: "s3",
          source: "lab",
          enabled: "off",
        })
      ).status,
    ).toBe(403);
    expect(sessions.isSourceEnabled("s3", lab)).toBe(true);

    const off = await post(writable, "/sessions/source", {
      _csrf: token,
      session: "s3",
      source: "lab",
      enabled: "off",
    });
    expect(off).toMatchObject({ status: 303, location: "/permissions?done=disabled" });
    expect(sessions.isSourceEnabled("s3", lab)).toBe(false);
    expect(await codeOf(broker.invoke(call("s3", "c1", "a", "search")))).toBe("SOURCE_DISABLED");
    expect(await codeOf(broker.invoke(call("s4", "c1", "a", "search")))).toBe("ran");
    expect((await governance.ledger.listAuthorizations({ sessionId: "s3" })).at(-1)).toMatchObject({
      sourceId: "lab",
      toolId: "source_switch",
      action: "disable_source",
      resource: "source:lab",
      decisionSource: "operator_console",
    });

    const { body } = await page(writable, "/permissions?done=disabled");
    expect(body).toContain("Source switched off");
    const table = element(body, "source-switches");
    expect(table).toContain('<tr data-session="s3" data-source="lab" data-enabled="off">');
    expect(table).toContain('name="enabled" value="on"');
    expect(table).toContain(">Switch on</button>");
    // The form offers the known sources: the registry's, with or without a server.
    const form = element(body, "switch-source-form", "form");
    expect(form).toContain('<option value="lab">');
    expect(form).toContain('<option value="notes">');

    // The row's toggle.
    expect(
      (
        await post(writable, "/sessions/source", {
          _csrf: token,
          session: "s3",
          source: "lab",
          enabled: "on",
        })
      ).location,
    ).toBe("/permissions?done=enabled");
    expect(sessions.isSourceEnabled("s3", lab)).toBe(true);
    expect(await codeOf(broker.invoke(call("s3", "c2", "a", "search")))).toBe("ran");
    // notes is off by default; switched on for one session.
    await post(writable, "/sessions/source", { _csrf: token, session: "s3", source: "notes", enabled: "on" });
    expect(sessions.listSourceSwitches({ sessionId: "s3" })).toEqual([
      { sessionId: "s3", sourceId: "lab", enabled: true },
      { sessionId: "s3", sourceId: "notes", enabled: true },
    ]);
    expect((await governance.ledger.listAuthorizations({ sessionId: "s3" })).at(-1)).toMatchObject({
      sourceId: "notes",
      action: "enable_source",
      resource: "source:notes",
    });
  });

  test.each([
    [
      { session: "s5", source: "pubmed", enabled: "off" },
      "Unknown source &#39;pubmed&#39; in field &#39;source&#39;; known sources: lab, notes.",
    ],
    [{ session: "s5", source: "", enabled: "off" }, "&#39;source&#39;"],
    [{ session: "s5", source: "lab", enabled: "maybe" }, "&#39;enabled&#39; must be on or off"],
    [{ session: "", source: "lab", enabled: "off" }, "&#39;session&#39;"],
  ])("a switch form with %j is 400 naming the field, and changes nothing", async (fields, message) => {
    const response = await post(writable, "/sessions/source", { _csrf: await csrfOf(writable), ...fields });
    expect(response.status).toBe(400);
    expect(response.body).toContain(message);
    expect(governance.sessions.listSourceSwitches({ sessionId: "s5" })).toEqual([]);
  });

  test("hostile session ids and scopes render as text", async () => {
    const request = createAuthorizationRequest(governance.catalog, {
      sourceId: "lab",
      toolId: "write",
      input: { query: HOSTILE },
      sessionId: HOSTILE,
    });
    await governance.permissions.grant(request, `lab:write:${HOSTILE}`);
    await post(writable, "/sessions/mode", {
      _csrf: await csrfOf(writable),
      session: HOSTILE,
      mode: "always_allow",
    });
    expect(governance.permissions.approvalMode(HOSTILE)).toBe("always_allow");
    for (const path of ["/permissions", `/permissions?session=${encodeURIComponent(HOSTILE)}`]) {
      const { status, body } = await page(writable, path);
      expect(status).toBe(200);
      expect(body).not.toContain("<script>alert");
      expect(body).toContain("&lt;script&gt;alert(1)&lt;/script&gt;");
      expect(element(body, "grants")).toContain(
        "<code>lab:write:&lt;script&gt;alert(1)&lt;/script&gt;</code>",
      );
      expect(element(body, "approval-modes")).toContain('data-id="&lt;script&gt;alert(1)&lt;/script&gt;"');
    }
    // Filtered to that session, the other sessions' grants, modes and rows are not shown.
    const { body } = await page(writable, `/permissions?session=${encodeURIComponent(HOSTILE)}`);
    expect(body).not.toContain('data-id="s2"');
    expect(rowIds(element(body, "authorizations")).length).toBeGreaterThan(0);
    expect(element(body, "authorizations")).not.toMatch(/<a href="\/permissions\?session=s\d"/);
  });

  test("the recent rows are one session's latest 100, newest first", async () => {
    for (let i = 1; i <= 101; i++) await governance.broker.invoke(call("s6", `c${i}`, `q${i}`, "search"));
    const { body } = await page(writable, "/permissions?session=s6");
    const table = element(body, "authorizations");
    const epochs = [...table.matchAll(/<td class="num">(\d+)<\/td>/g)].map((m) => Number(m[1]));
    expect(epochs).toHaveLength(100);
    expect(epochs[0]).toBe(101);
    expect(epochs.at(-1)).toBe(2);
    expect(table).toContain('href="/invocations?session=s6"><code>c101</code>');
    expect(table).not.toContain("<code>c1</code>");
  });

  test("the page says that modes and switches live in this process only; the read-only page disables its buttons", async () => {
    const { body } = await page(readOnly);
    expect(body).toContain('id="session-state-note" data-shared="false"');
    expect(body).toContain("live in this process's memory");
    expect(element(body, "set-mode-form", "form")).toContain("disabled");
    expect(element(body, "switch-source-form", "form")).toContain("disabled");
    expect((await page(writable, `/permissions?session=${"x".repeat(600)}`)).status).toBe(400);
  });
});

describe("the Permissions page over session state shared in PostgreSQL", () => {
  let server: TestPostgres;
  beforeAll(async () => {
    server = await openTestPostgres();
  }, 60_000);
  afterAll(() => server?.stop());

  test("a mode and a switch set by another process show on the page, and no memory-only note", async () => {
    const url = await server.createDatabase();
    const dbA = await openPostgres(url, { maxConnections: 2 });
    const dbB = await openPostgres(url, { maxConnections: 2 });
    const governance = await openLab({ sessionState: await PostgresSessionStateStore.open(dbA) });
    const other = await PostgresSessionStateStore.open(dbB);
    const console = await serveConsole({ governance, port: 0 });
    try {
      await other.setApprovalMode("elsewhere", "always_allow");
      await other.setSourceSwitch("elsewhere", "notes", true);
      // Each write reaches this process by its own notification: the switch may show a moment after the mode.
      const mode = '<tr data-id="elsewhere" data-mode="always_allow">';
      const sourceSwitch = '<tr data-session="elsewhere" data-source="notes" data-enabled="on">';
      let body = "";
      await expect
        .poll(
          async () => {
            body = (await page(console)).body;
            return (
              element(body, "approval-modes").includes(mode) &&
              element(body, "source-switches").includes(sourceSwitch)
            );
          },
          { timeout: 5_000 },
        )
        .toBe(true);
      expect(body).toContain('id="session-state-note" data-shared="true"');
      expect(body).not.toContain("live in this process");
    } finally {
      await console.close();
      await other.close();
      await governance.close();
      await dbB.close();
      await dbA.close();
    }
  });
});
