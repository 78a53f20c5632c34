/**
 * The Sources and tools page: the live catalog as the broker sees it: each source's status and why,
 * its missing tools, each callable tool's model-visible name, access, rate group and limits, and the
 * catalog revision.
 */
import type { RateLimitGroupConfig } from "../governance/rate-limit/index.js";
import { modelVisibleName } from "../visibility/index.js";
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleRoute } from "./console-route.js";
import { badge, facts, time } from "./console-ui.js";

const STATUS_TONE = { ready: "ok", degraded: "warn", unavailable: "error", disabled: "neutral" } as const;

/** `GET /sources` (and `?refresh=1` to list every server again first). */
export const sourcesRoutes: readonly ConsoleRoute[] = [
  {
    method: "GET",
    pattern: "/sources",
    async handle(request, context) {
      const { catalog, rateLimits } = context.governance;
      const snapshot =
        request.url.searchParams.get("refresh") === "1" || catalog.snapshot() === undefined
          ? await catalog.refresh()
          : (catalog.snapshot() as NonNullable<ReturnType<typeof catalog.snapshot>>);
      const toolsBySource = new Map<string, typeof snapshot.tools>();
      for (const tool of snapshot.tools) {
        toolsBySource.set(tool.sourceId, [...(toolsBySource.get(tool.sourceId) ?? []), tool]);
      }
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
      const body = html`${facts([
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
];

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
