/**
 * The Sources and tools page: the live catalog as the broker sees it: each source's status and why,
 * its missing tools, each callable tool's model-visible name, access, rate group and limits, and the
 * catalog revision; for a server protected by OAuth, what credentials are stored and a button that
 * authorizes it (`console-authorizations.ts`).
 */
import type { ServerConfig } from "../config/index.js";
import type { RateLimitGroupConfig } from "../governance/rate-limit/index.js";
import { type CredentialSummary, DEFAULT_PRINCIPAL } from "../mcp/index.js";
import { modelVisibleName } from "../visibility/index.js";
import { authorizable, OAUTH_CALLBACK_PATH } from "./console-authorizations.js";
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext, ConsoleRoute } from "./console-route.js";
import { badge, facts, notice, postForm, time } from "./console-ui.js";

const STATUS_TONE = { ready: "ok", degraded: "warn", unavailable: "error", disabled: "neutral" } as const;

/** Notices after a write of this page (`?done=`). */
const DONE = { authorized: "Authorized: the server's tokens are stored. The catalog was listed again." };

/**
 * `GET /sources` (and `?refresh=1` to list every server again first), and `POST /sources/:source/authorize`,
 * which begins a protected server's authorization.
 */
export const sourcesRoutes: readonly ConsoleRoute[] = [
  {
    method: "GET",
    pattern: "/sources",
    async handle(request, context) {
      const { catalog, rateLimits, config, oauthCredentials } = context.governance;
      const done = request.url.searchParams.get("done");
      const snapshot =
        request.url.searchParams.get("refresh") === "1" ||
        done === "authorized" ||
        catalog.snapshot() === undefined
          ? await catalog.refresh()
          : (catalog.snapshot() as NonNullable<ReturnType<typeof catalog.snapshot>>);
      const toolsBySource = new Map<string, typeof snapshot.tools>();
      for (const tool of snapshot.tools) {
        toolsBySource.set(tool.sourceId, [...(toolsBySource.get(tool.sourceId) ?? []), tool]);
      }
      const serversById = new Map(config.servers.map((server) => [server.id, server]));
      const credentials = config.servers.some(authorizable) ? await oauthCredentials.list() : [];
      const counts = { ready: 0, degraded: 0, unavailable: 0, disabled: 0 };
      for (const source of snapshot.sources) counts[source.status]++;
      const sources = snapshot.sources.map((source) => {
        const group = source.manifest.governance.rateLimitGroup;
        const tools = toolsBySource.get(source.id) ?? [];
        return html`<section class="source" id="source-${source.id}">
<h2>${source.manifest.displayName} <span class="muted mono">${source.id}</span> ${badge(source.status, STATUS_TONE[source.status])}</h2>
${facts([
  ["Reason", source.reason],
  [
    "Server",
    html`<code>${source.serverId}</code>${source.derived ? html` <span class="muted">(derived manifest)</span>` : ""}`,
  ],
  ["Rate group", html`<code>${group}</code> ${limitsText(rateLimits.get(group))}`],
  ["License", source.manifest.governance.license],
  ["Authorization", authorization(context, source.id, serversById.get(source.serverId), credentials)],
])}
${
  tools.length === 0
    ? html`<p class="muted">No callable tools.</p>`
    : html`<div class="table-wrap"><table>
<thead><tr><th>Tool</th><th>Model-visible name</th><th>Access</th><th>Permission</th><th>Timeout</th></tr></thead>
<tbody>${tools.map(
        (tool) => html`<tr>
<td><code>${tool.toolId}</code><div class="muted">${firstLine(tool.manifest.description)}</div></td>
<td><code>${modelVisibleName(tool.sourceId, tool.toolId)}</code></td>
<td>${tool.manifest.readOnly ? badge("read-only", "ok") : badge("writes", "warn")}</td>
<td><code>${tool.manifest.permission.action}</code></td>
<td class="num">${tool.manifest.timeoutMs.toLocaleString("en")} ms</td>
</tr>`,
      )}</tbody></table></div>`
}
${
  source.missingTools.length === 0
    ? ""
    : html`<h3>Missing tools</h3><ul class="missing">${source.missingTools.map(
        (missing) =>
          html`<li><code>${missing.toolId}</code> (MCP <code>${missing.mcpToolName}</code>): ${missing.reason}</li>`,
      )}</ul>`
}
</section>`;
      });
      const body = html`${notice(DONE, done)}${facts([
        ["Catalog revision", html`<code>${snapshot.revision}</code>`],
        [
          "Sources",
          `${snapshot.sources.length}: ${counts.ready} ready, ${counts.degraded} degraded, ${counts.unavailable} unavailable, ${counts.disabled} disabled`,
        ],
        ["Callable tools", snapshot.tools.length],
        ["Shown at", time(context.clock.now())],
      ])}
<p><a href="${context.href("/sources", { refresh: "1" })}">List every server again</a></p>
${warnings(snapshot.warnings)}
<nav class="cards" aria-label="Sources">${snapshot.sources.map(
        (source) =>
          html`<a class="card" href="#source-${source.id}"><h3>${source.id}</h3>${badge(source.status, STATUS_TONE[source.status])} <span class="muted">${source.availableTools.length} tools${source.missingTools.length ? `, ${source.missingTools.length} missing` : ""}</span></a>`,
      )}</nav>
${sources}`;
      return { kind: "page", title: "Sources and tools", section: "sources", body };
    },
  },
  {
    method: "POST",
    pattern: "/sources/:source/authorize",
    writes: true,
    async handle(request, context) {
      const sourceId = request.params.source ?? "";
      const begun = await context.authorizations.begin(
        sourceId,
        `${request.consoleUrl}${OAUTH_CALLBACK_PATH}`,
        request.principal,
      );
      if (begun.status === "redirect") return { kind: "redirect", location: begun.url.href, external: true };
      return {
        kind: "redirect",
        location: `/sources?done=authorized#source-${encodeURIComponent(sourceId)}`,
      };
    },
  },
];

/** What the runtime holds for a protected server (never a token), and the button that authorizes it. */
function authorization(
  context: ConsoleContext,
  sourceId: string,
  server: ServerConfig | undefined,
  stored: readonly CredentialSummary[],
): SafeHtml | undefined {
  if (server === undefined || !authorizable(server)) return undefined;
  const mine = stored.find(
    (entry) =>
      entry.serverId === server.id && entry.serverUrl === server.url && entry.principal === DEFAULT_PRINCIPAL,
  );
  const state =
    mine === undefined || !mine.hasAccessToken
      ? badge("no token", "warn")
      : html`${badge("token stored", "ok")}${
          mine.expiresAt === undefined
            ? ""
            : html` <span class="muted">expires ${time(mine.expiresAt)}</span>`
        }${mine.hasRefreshToken ? html` <span class="muted">(refreshable)</span>` : ""}${
          mine.scope ? html` <span class="muted">scope <code>${mine.scope}</code></span>` : ""
        }`;
  return html`${state} ${postForm(context, `/sources/${encodeURIComponent(sourceId)}/authorize`, mine?.hasAccessToken ? "Authorize again" : "Authorize")}`;
}

function limitsText(limits: RateLimitGroupConfig | undefined): SafeHtml {
  if (!limits) return html`<span class="muted">no limits</span>`;
  const parts = [
    limits.maxConcurrentRequests === undefined ? undefined : `${limits.maxConcurrentRequests} at once`,
    limits.rateLimitPerSecond === undefined ? undefined : `${limits.rateLimitPerSecond}/s`,
    limits.minIntervalMs === undefined ? undefined : `${limits.minIntervalMs} ms apart`,
    limits.maxQueueDepth === undefined ? undefined : `queue ${limits.maxQueueDepth}`,
    limits.queueTimeoutMs === undefined ? undefined : `wait ≤ ${limits.queueTimeoutMs} ms`,
  ].filter((part) => part !== undefined);
  return html`<span class="muted">${parts.length ? parts.join(", ") : "no limits"}</span>`;
}

function warnings(list: readonly string[]): SafeHtml {
  if (list.length === 0) return html``;
  return html`<div class="error-box"><strong>Catalog warnings</strong><ul>${list.map((w) => html`<li>${w}</li>`)}</ul></div>`;
}

function firstLine(text: string): string {
  const line = text.split("\n")[0] ?? "";
  return line.length > 160 ? `${line.slice(0, 157)}…` : line;
}
