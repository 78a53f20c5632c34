/**
 * The Permissions page: the session grants (with Revoke), each session's approval mode and source
 * switches (with forms to change them), and the latest authorization rows, optionally of one session.
 * The writes are in `permissions-actions.ts`.
 */
import type { AuthorizationRecord, LedgerReader } from "../governance/audit/index.js";
import type { Grant } from "../governance/permissions/index.js";
import type { Governance } from "../runtime/index.js";
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext, ConsoleRoute } from "./console-route.js";
import { badge, notice, postForm, time, userLink } from "./console-ui.js";
import {
  APPROVAL_MODES,
  knownSourceIds,
  MAX_SESSION_ID_LENGTH,
  permissionsActionRoutes,
  principalField,
  sessionIdOf,
} from "./permissions-actions.js";

/** The most authorization rows the page shows. */
const AUTHORIZATION_ROWS = 100;
/** The most grants, modes or switches the page shows (filter by session for the rest). */
const MAX_ROWS = 500;

const DONE: Record<string, string> = {
  revoked: "Grant revoked: the session's next matching dangerous call asks again.",
  "revoked-user": "The user's grants are revoked: each of the user's next dangerous calls asks again.",
  mode: "Approval mode set.",
  enabled: "Source switched on for the session.",
  disabled: "Source switched off for the session.",
};

const DECISION_TONE: Record<string, "ok" | "error" | "warn" | "neutral"> = {
  existing_grant: "ok",
  always_allow: "ok",
  user_once: "ok",
  user_grant: "ok",
  user_always: "ok",
  user_deny: "error",
  wait_timeout: "error",
  cancelled: "error",
  operator_console: "warn",
};

/** `GET /permissions` (`?session=` shows one session), and the page's writes. */
export const permissionsRoutes: readonly ConsoleRoute[] = [
  {
    method: "GET",
    pattern: "/permissions",
    async handle(request, context) {
      const { governance } = context;
      const given = request.url.searchParams.get("session") ?? "";
      const sessionId = given.trim() === "" ? undefined : sessionIdOf(given, "session");
      const user = principalField(request.url.searchParams.get("user"));
      const [grants, authorizations] = await Promise.all([
        governance.permissions.listGrants({
          ...(sessionId === undefined ? {} : { sessionId }),
          ...(user === undefined ? {} : { principal: user }),
        }),
        recentAuthorizations(governance.ledger, { sessionId, principal: user, limit: AUTHORIZATION_ROWS }),
      ]);
      const body = html`${notice(DONE, request.url.searchParams.get("done"))}
${sessionStateNote(governance)}
<form method="get" action="${context.href("/permissions")}" class="filters" id="session-filter">
<label>Session <input type="search" name="session" value="${sessionId ?? ""}" maxlength="${MAX_SESSION_ID_LENGTH}" placeholder="every session"></label>
<label>User <input type="search" name="user" value="${user ?? ""}" maxlength="256" placeholder="every user"></label>
<button type="submit">Filter</button>${sessionId === undefined && user === undefined ? "" : html` <a href="${context.href("/permissions")}">Show everything</a>`}
</form>
<h2 id="grants-heading">Grants</h2>
${grantsTable(context, grants)}
${user === undefined || grants.length === 0 ? "" : postForm(context, "/users/revoke", `Revoke every grant of ${user}`, { user }, { confirm: `Revoke every grant of ${user}? Each of the user's next dangerous calls asks again.`, danger: true })}
<h2 id="modes-heading">Approval modes</h2>
${modesSection(context, sessionId, user)}
<h2 id="switches-heading">Source switches</h2>
${switchesSection(context, sessionId)}
<h2 id="authorizations-heading">Recent authorizations</h2>
${authorizationsTable(context, authorizations, sessionId)}`;
      return { kind: "page", title: "Permissions", section: "permissions", body };
    },
  },
  ...permissionsActionRoutes,
];

/**
 * The latest authorization rows, newest first (the ledger lists them oldest first, all of them).
 * @param ledger the ledger
 * @param options one session's or one user's rows only, and how many
 * @returns at most `limit` rows
 */
export async function recentAuthorizations(
  ledger: LedgerReader,
  options: { sessionId?: string | undefined; principal?: string | undefined; limit: number },
): Promise<AuthorizationRecord[]> {
  return ledger.listAuthorizations({
    ...(options.sessionId === undefined ? {} : { sessionId: options.sessionId }),
    ...(options.principal === undefined ? {} : { principal: options.principal }),
    order: "desc",
    limit: options.limit,
  });
}

function sessionStateNote(governance: Governance): SafeHtml {
  if (governance.sessions.isShared) {
    return html`<p class="muted" id="session-state-note" data-shared="true">Approval modes and source switches are shared by every process on this database; this page shows them as this process sees them (other processes' changes arrive within moments).</p>`;
  }
  return html`<div class="warn-box" id="session-state-note" data-shared="false"><strong>Approval modes and source switches live in this process's memory.</strong> An app running in another process keeps its own: its modes and switches are not visible here, and those set here do not reach it. Grants are visible: every process on the data directory shares the grant store (<code>grants.sqlite</code>). To share modes and switches, run every process with PostgreSQL (<code>storage.postgres</code> or <code>SCIENCEGATE_DATABASE_URL</code>).</div>`;
}

function grantsTable(context: ConsoleContext, grants: readonly Grant[]): SafeHtml {
  if (grants.length === 0) return html`<p class="muted" id="grants-empty">No grants.</p>`;
  const shown = grants.slice(-MAX_ROWS).reverse();
  return html`${cappedNote(shown.length, grants.length)}<div class="table-wrap"><table id="grants">
<thead><tr><th>Session</th><th>User</th><th>Action</th><th>Scope</th><th>Created</th><th>Tool definition</th><th></th></tr></thead>
<tbody>${shown.map(
    (grant) => html`<tr data-id="${grant.id}" data-session="${grant.sessionId}">
<td><a href="${context.href("/permissions", { session: grant.sessionId })}"><code>${grant.sessionId}</code></a></td>
<td class="user">${userLink(context, "/permissions", grant.principal)}</td>
<td><code>${grant.action}</code></td>
<td><code>${grant.resource}</code></td>
<td>${time(grant.createdAt)}</td>
<td><code title="${grant.toolDefinitionHash}">${grant.toolDefinitionHash.slice(0, 12)}</code></td>
<td>${postForm(
      context,
      `/grants/${encodeURIComponent(grant.id)}/revoke`,
      "Revoke",
      {},
      {
        confirm: `Revoke this grant? Session ${grant.sessionId}'s next ${grant.action} call in ${grant.resource} asks again.`,
        danger: true,
      },
    )}</td>
</tr>`,
  )}</tbody></table></div>`;
}

function modesSection(
  context: ConsoleContext,
  sessionId: string | undefined,
  user: string | undefined,
): SafeHtml {
  const modes = context.governance.permissions.listApprovalModes({ sessionId, principal: user });
  const shown = modes.slice(0, MAX_ROWS);
  const table =
    modes.length === 0
      ? html`<p class="muted" id="approval-modes-empty">No session has a mode set: every session uses the policy's default (<code>ask_for_dangerous</code> unless the app chose another).</p>`
      : html`${cappedNote(shown.length, modes.length)}<div class="table-wrap"><table id="approval-modes">
<thead><tr><th>Session</th><th>User</th><th>Mode</th><th></th></tr></thead>
<tbody>${shown.map(({ sessionId: session, principal, mode }) => {
          const other = mode === "always_allow" ? "ask_for_dangerous" : "always_allow";
          return html`<tr data-id="${session}" data-mode="${mode}">
<td><a href="${context.href("/permissions", { session })}"><code>${session}</code></a></td>
<td class="user">${userLink(context, "/permissions", principal)}</td>
<td>${badge(mode, mode === "always_allow" ? "warn" : "ok")}</td>
<td>${postForm(context, "/sessions/mode", `Set ${other}`, { session, mode: other, ...(principal === undefined ? {} : { user: principal }) }, other === "always_allow" ? { confirm: `Let every dangerous call of session ${session} run without asking?` } : {})}</td>
</tr>`;
        })}</tbody></table></div>`;
  return html`${table}
${writeForm(
  context,
  "/sessions/mode",
  "set-mode-form",
  html`<label>Session <input type="text" name="session" required maxlength="${MAX_SESSION_ID_LENGTH}" value="${sessionId ?? ""}"></label>
<label>Mode <select name="mode">${APPROVAL_MODES.map((mode) => html`<option value="${mode}">${mode}</option>`)}</select></label>`,
  "Set mode",
)}`;
}

function switchesSection(context: ConsoleContext, sessionId: string | undefined): SafeHtml {
  const { governance } = context;
  const switches = governance.sessions.listSourceSwitches({ sessionId });
  const shown = switches.slice(0, MAX_ROWS);
  const known = knownSourceIds(governance);
  const table =
    switches.length === 0
      ? html`<p class="muted" id="source-switches-empty">No session has a source switched: every source follows its manifest's default.</p>`
      : html`${cappedNote(shown.length, switches.length)}<div class="table-wrap"><table id="source-switches">
<thead><tr><th>Session</th><th>Source</th><th>State</th><th>Default</th><th></th></tr></thead>
<tbody>${shown.map(({ sessionId: session, sourceId, enabled }) => {
          const isKnown = known.includes(sourceId);
          return html`<tr data-session="${session}" data-source="${sourceId}" data-enabled="${enabled ? "on" : "off"}">
<td><a href="${context.href("/permissions", { session })}"><code>${session}</code></a></td>
<td><code>${sourceId}</code></td>
<td>${enabled ? badge("on", "ok") : badge("off", "error")}</td>
<td>${isKnown ? defaultOf(governance, sourceId) : badge("unknown source", "warn")}</td>
<td>${
            isKnown
              ? postForm(context, "/sessions/source", enabled ? "Switch off" : "Switch on", {
                  session,
                  source: sourceId,
                  enabled: enabled ? "off" : "on",
                })
              : ""
          }</td>
</tr>`;
        })}</tbody></table></div>`;
  return html`${table}
${writeForm(
  context,
  "/sessions/source",
  "switch-source-form",
  html`<label>Session <input type="text" name="session" required maxlength="${MAX_SESSION_ID_LENGTH}" value="${sessionId ?? ""}"></label>
<label>Source <select name="source">${known.map((id) => html`<option value="${id}">${id}</option>`)}</select></label>
<label>State <select name="enabled"><option value="on">on</option><option value="off">off</option></select></label>`,
  "Switch",
)}`;
}

function defaultOf(governance: Governance, sourceId: string): SafeHtml {
  const manifest = governance.registry.has(sourceId)
    ? governance.registry.get(sourceId)
    : governance.catalog.source(sourceId)?.manifest;
  if (manifest === undefined) return html`<span class="muted">—</span>`;
  return html`<span class="muted">${manifest.enabledByDefault ? "on" : "off"}</span>`;
}

function authorizationsTable(
  context: ConsoleContext,
  rows: readonly AuthorizationRecord[],
  sessionId: string | undefined,
): SafeHtml {
  if (rows.length === 0) {
    return html`<p class="muted" id="authorizations-empty">No authorization rows${sessionId === undefined ? "" : " for this session"}.</p>`;
  }
  return html`<p class="muted">${rows.length === 1 ? "The latest row" : `The latest ${rows.length} rows, newest first`}${sessionId === undefined ? "" : html` (session <code>${sessionId}</code>)`}.</p>
<div class="table-wrap"><table id="authorizations">
<thead><tr><th>Time</th><th>Session</th><th>User</th><th>Source / tool</th><th>Action</th><th>Resource</th><th>Decision</th><th class="num">Epoch</th><th>Call</th></tr></thead>
<tbody>${rows.map(
    (row) => html`<tr data-id="${row.id}" data-decision="${row.decisionSource}">
<td>${time(row.createdAt)}</td>
<td><a href="${context.href("/permissions", { session: row.sessionId })}"><code>${row.sessionId}</code></a></td>
<td class="user">${userLink(context, "/permissions", row.principal)}</td>
<td><code>${row.sourceId}</code> / <code>${row.toolId}</code></td>
<td><code>${row.action}</code></td>
<td><code>${row.resource}</code></td>
<td>${badge(row.decisionSource, DECISION_TONE[row.decisionSource] ?? "neutral")}</td>
<td class="num">${row.epoch}</td>
<td>${
      row.toolCallId === undefined
        ? html`<span class="muted">—</span>`
        : html`<a href="${context.href("/invocations", { session: row.sessionId })}"><code>${row.toolCallId}</code></a>`
    }</td>
</tr>`,
  )}</tbody></table></div>`;
}

/** A POST form of fields the operator fills in, with the CSRF token; disabled when read-only. */
function writeForm(
  context: ConsoleContext,
  action: string,
  id: string,
  fields: SafeHtml,
  label: string,
): SafeHtml {
  const disabled = context.writable
    ? ""
    : html` disabled title="Read-only console: start it with --writable"`;
  return html`<form method="post" action="${context.href(action)}" class="filters" id="${id}"><input type="hidden" name="_csrf" value="${context.csrfToken}">${fields}<button type="submit" class="primary"${disabled}>${label}</button></form>`;
}

function cappedNote(shown: number, total: number): SafeHtml {
  if (shown === total) return html``;
  return html`<p class="muted">Showing ${shown} of ${total}: filter by session to see the others.</p>`;
}
