/**
 * The invocation page, `GET /invocations/:id`: what the agent called, what it got and who allowed it.
 * The ledger row's facts, the authorization row it names, its three stored objects (request, raw
 * response, normalized result) each with its hash re-checked, the arguments, and the records with
 * their citations. Every value here is third-party text: it goes through `html`, and a URL becomes a
 * link only when it is http(s) (`externalLink`).
 */
import type { DownloadJob } from "../artifacts/index.js";
import type { McpRecord } from "../contract/index.js";
import { GovernanceError } from "../core/index.js";
import type { AuthorizationRecord, InvocationRecord, LedgerReader } from "../governance/audit/index.js";
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext, ConsoleRoute } from "./console-route.js";
import { badge, bytes, externalLink, facts, time, truncated, userLink } from "./console-ui.js";
import { candidatesSection } from "./invocation-candidates.js";
import { loadObject, type ObjectIntegrity, objectText, type StoredObject } from "./page-object.js";

/** The most records of one result listed in its table (the whole result is one link away). */
const MAX_RECORDS_SHOWN = 200;

const INTEGRITY: Record<ObjectIntegrity, SafeHtml> = {
  verified: badge("verified", "ok"),
  mismatch: badge("MISMATCH", "error"),
  missing: badge("missing", "error"),
  malformed: badge("malformed ref", "error"),
};

/** `GET /invocations/:id`. */
export const invocationRoutes: readonly ConsoleRoute[] = [
  {
    method: "GET",
    pattern: "/invocations/:id",
    async handle(request, context) {
      const id = request.params.id ?? "";
      const { ledger, store } = context.governance;
      const row = await ledger.get(id);
      if (row === undefined) {
        throw new GovernanceError("UNKNOWN_ID", `No invocation '${id}' in the ledger.`, { data: { id } });
      }
      const [authorization, requestObject, rawObject, normalizedObject, jobs] = await Promise.all([
        findAuthorization(ledger, row),
        row.requestRef === undefined ? undefined : loadObject(store, row.requestRef),
        row.rawRef === undefined ? undefined : loadObject(store, row.rawRef),
        row.normalizedRef === undefined ? undefined : loadObject(store, row.normalizedRef),
        context.governance.downloads.list({ mcpInvocationId: row.invocationId }),
      ]);
      // Filtered again: a job store written before the filter existed lists every job.
      const offered = jobs.filter((job) => job.mcpInvocationId === row.invocationId);
      const objects: [string, string, StoredObject | undefined][] = [
        ["request", "Request", requestObject],
        ["raw", "Raw response", rawObject],
        ["normalized", "Normalized result", normalizedObject],
      ];
      const body = html`${rowFacts(row, context)}
<section id="authorization"><h2>Authorization</h2>${authorizationFacts(row, authorization, context)}</section>
<section id="objects"><h2>Stored objects</h2>${objectTable(objects, context)}</section>
<section id="request"><h2>Request</h2>${payload(requestObject, context, "No request was stored.")}</section>
<section id="result"><h2>Result</h2>${resultSection(normalizedObject, context, offered)}</section>
<section id="raw"><h2>Raw response</h2>${payload(rawObject, context, "No raw response was stored (the call failed, was refused, or was served from the cache).")}</section>`;
      return {
        kind: "page",
        title: `Invocation ${row.sourceId}/${row.toolId}`,
        section: "invocations",
        body,
      };
    },
  },
];

/**
 * The authorization row an invocation names, or `undefined`. The ledger port lists authorizations per
 * session, so this scans the invocation's session; one function, to swap for a lookup by id.
 */
async function findAuthorization(
  ledger: LedgerReader,
  row: InvocationRecord,
): Promise<AuthorizationRecord | undefined> {
  if (row.authorizationId === undefined) return undefined;
  const authorization = await ledger.getAuthorization(row.authorizationId);
  // An id that names another session's row is not this call's authorization.
  return authorization?.sessionId === row.sessionId ? authorization : undefined;
}

function rowFacts(row: InvocationRecord, context: ConsoleContext): SafeHtml {
  const error = row.error;
  return html`<section id="invocation" data-id="${row.invocationId}">${facts([
    ["Invocation", html`<code>${row.invocationId}</code>`],
    [
      "Status",
      html`<span data-status="${row.status}">${badge(row.status, row.status === "ok" ? "ok" : "error")}</span>`,
    ],
    ["Error code", error ? html`<code data-error-code>${error.code}</code>` : undefined],
    ["Error message", error?.message],
    ["Retryable", error ? (error.retryable ? "yes" : "no") : undefined],
    ["Retry after", error?.retryAfterMs === undefined ? undefined : `${error.retryAfterMs} ms`],
    [
      "Source",
      html`<a href="${context.href("/sources")}#source-${row.sourceId}"><code>${row.sourceId}</code></a>`,
    ],
    ["Tool", html`<code>${row.toolId}</code>`],
    ["User", html`<span data-user>${userLink(context, "/invocations", row.principal)}</span>`],
    ["MCP tool name", row.mcpToolName === undefined ? undefined : html`<code>${row.mcpToolName}</code>`],
    [
      "Session",
      html`<code>${row.sessionId}</code> <a href="${context.href("/evidence", { session: row.sessionId })}">review an answer of this session</a>`,
    ],
    [
      "Thread",
      row.threadId === undefined
        ? undefined
        : html`<code>${row.threadId}</code>${
            context.threadAnswer
              ? html` <a href="${context.href("/evidence", { thread: row.threadId })}">review the thread's final answer</a>`
              : ""
          }`,
    ],
    ["Tool call id", row.toolCallId === undefined ? undefined : html`<code>${row.toolCallId}</code>`],
    ["Run id", row.runId === undefined ? undefined : html`<code>${row.runId}</code>`],
    ["Started", time(row.startedAt)],
    ["Finished", time(row.finishedAt)],
    ["Duration", `${row.durationMs.toLocaleString("en")} ms`],
    ["Attempts", row.attempts],
    ["Queue wait", `${row.queueWaitMs.toLocaleString("en")} ms`],
    ["Cache hit", row.cacheHit ? "yes (no MCP call)" : "no"],
    ["License", row.license],
    [
      "Catalog revision",
      row.catalogRevision === undefined ? undefined : html`<code>${row.catalogRevision}</code>`,
    ],
    [
      "Tool definition hash",
      row.toolDefinitionHash === undefined ? undefined : html`<code>${row.toolDefinitionHash}</code>`,
    ],
    ["Input hash", row.inputHash === undefined ? undefined : html`<code>${row.inputHash}</code>`],
  ])}</section>`;
}

function authorizationFacts(
  row: InvocationRecord,
  authorization: AuthorizationRecord | undefined,
  context: ConsoleContext,
): SafeHtml {
  if (row.authorizationId === undefined) {
    return html`<p class="muted">No authorization is recorded on this row (permissions were not enforced, or the call was refused before one was made).</p>`;
  }
  if (authorization === undefined) {
    return html`<p class="error-box">The row names authorization <code>${row.authorizationId}</code>, but session <code>${row.sessionId}</code> has no such authorization row.</p>`;
  }
  return html`<div data-id="${authorization.id}">${facts([
    ["Authorization", html`<code>${authorization.id}</code>`],
    ["Decision source", html`<code data-decision-source>${authorization.decisionSource}</code>`],
    ["User", html`<span data-user>${userLink(context, "/permissions", authorization.principal)}</span>`],
    ["Action", html`<code>${authorization.action}</code>`],
    ["Resource", html`<code>${authorization.resource}</code>`],
    ["Tool", html`<code>${authorization.sourceId}/${authorization.toolId}</code>`],
    ["Tool call id", authorization.toolCallId],
    ["Created at", time(authorization.createdAt)],
    ["Epoch", authorization.epoch],
  ])}</div>`;
}

function objectTable(
  objects: [string, string, StoredObject | undefined][],
  context: ConsoleContext,
): SafeHtml {
  return html`<div class="table-wrap"><table id="object-table">
<thead><tr><th>Object</th><th>Content reference (SHA-256)</th><th class="num">Size</th><th>Stored bytes re-hash</th></tr></thead>
<tbody>${objects.map(
    ([key, label, object]) => html`<tr data-object="${key}" data-integrity="${object?.integrity ?? "none"}">
<td>${label}</td>
<td>${object ? objectLink(object, context) : html`<span class="muted">none</span>`}</td>
<td class="num">${object?.bytes ? bytes(object.bytes.byteLength) : "—"}</td>
<td>${object ? INTEGRITY[object.integrity] : ""}</td>
</tr>`,
  )}</tbody></table></div>`;
}

function objectLink(object: StoredObject, context: ConsoleContext): SafeHtml {
  if (object.integrity === "malformed") return html`<code class="hash">${object.ref}</code>`;
  return html`<a class="hash" href="${context.href(`/objects/${object.ref}`)}"><code>${object.ref}</code></a>`;
}

/** An object's text, cut at the inline limit with a link to the whole, and a warning when it does not verify. */
function payload(
  object: StoredObject | undefined,
  context: ConsoleContext,
  none: string,
  text: string | undefined = object?.bytes && objectText(object.bytes).text,
): SafeHtml {
  if (object === undefined) return html`<p class="muted">${none}</p>`;
  if (text === undefined) {
    return html`<p class="error-box">The object <code>${object.ref}</code> is ${object.integrity === "malformed" ? "not a content reference" : "not in the store"}.</p>`;
  }
  const warning =
    object.integrity === "mismatch"
      ? html`<p class="error-box" data-mismatch>These bytes no longer hash to <code>${object.ref}</code>: the stored object was altered after the call. Do not trust it.</p>`
      : "";
  return html`${warning}${truncated(text, context.href(`/objects/${object.ref}`))}`;
}

function resultSection(
  object: StoredObject | undefined,
  context: ConsoleContext,
  jobs: readonly DownloadJob[],
): SafeHtml {
  if (object?.bytes === undefined) {
    return payload(object, context, "No result was stored (the call failed or was refused).");
  }
  const { text, value } = objectText(object.bytes);
  const result = value as { records?: unknown; warnings?: unknown } | null | undefined;
  const records = Array.isArray(result?.records) ? result.records.filter(isRecord) : [];
  const warnings = Array.isArray(result?.warnings)
    ? result.warnings.filter((w): w is string => typeof w === "string")
    : [];
  const shown = records.slice(0, MAX_RECORDS_SHOWN);
  return html`${
    warnings.length
      ? html`<div class="warn-box"><strong>Warnings</strong><ul>${warnings.map((w) => html`<li>${w}</li>`)}</ul></div>`
      : ""
  }
${
  records.length === 0
    ? html`<p class="muted">No records in this result.</p>`
    : html`<h3>Records (${records.length})</h3>${
        shown.length < records.length
          ? html`<p class="muted">Showing the first ${shown.length} of ${records.length} records.</p>`
          : ""
      }<div class="table-wrap"><table id="records">
<thead><tr><th>Identifier</th><th>Title</th><th>URL</th><th>Citations</th></tr></thead>
<tbody>${shown.map(recordRow)}</tbody></table></div>`
}
${candidatesSection(value, jobs, context)}
<h3>Normalized result</h3>
${payload(object, context, "", text)}`;
}

function recordRow(record: McpRecord): SafeHtml {
  const seen = new Set<string>();
  const citations = [record.primaryCitation, ...record.citations].filter((citation) => {
    const key = `${citation.label}\u0000${citation.url}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
  return html`<tr data-id="${record.identifier}">
<td><code>${record.identifier}</code></td>
<td class="record-title">${record.title}</td>
<td>${externalLink(record.url)}</td>
<td><ul class="citations">${citations.map(
    (citation) => html`<li>${externalLink(citation.url, citationText(citation.label))}</li>`,
  )}</ul></td>
</tr>`;
}

/** `PMID:22663011` of a markdown label `[PMID:22663011](https://…)`; other labels as they are. */
function citationText(label: string): string {
  return /^\[([^\]]{1,200})\]/.exec(label)?.[1] ?? label;
}

// Rows the broker wrote passed the envelope's schema; other writers' rows are shown only when record-shaped.
function isRecord(value: unknown): value is McpRecord {
  const record = value as Partial<McpRecord> | null;
  return (
    typeof record === "object" &&
    record !== null &&
    typeof record.identifier === "string" &&
    typeof record.title === "string" &&
    typeof record.url === "string" &&
    typeof record.primaryCitation?.url === "string" &&
    typeof record.primaryCitation.label === "string" &&
    Array.isArray(record.citations) &&
    record.citations.every((c) => typeof c?.url === "string" && typeof c.label === "string")
  );
}
