/**
 * The Invocations page: the ledger as a filterable, searchable table, newest first, paged on the server
 * by keyset (`after`), with the number of matching rows and a small chart of calls per outcome over
 * time (and per source under it).
 */

import { GovernanceError } from "../core/index.js";
import type { InvocationRecord, LedgerActivityBucket, LedgerQuery } from "../governance/audit/index.js";
import { html, type SafeHtml } from "./console-html.js";
import type { ConsoleContext, ConsoleRoute } from "./console-route.js";
import { badge, time, userLink } from "./console-ui.js";
import { researchObjectForm } from "./page-research-object.js";

/** Rows per page unless `size` says otherwise. */
export const DEFAULT_PAGE_SIZE = 50;
/** The most rows one page shows; a larger `size` is cut to it. */
export const MAX_PAGE_SIZE = 200;
/** The longest filter value taken (ids and search text); longer ones are refused. */
const MAX_FILTER_LENGTH = 200;
/** The chart's bucket sizes, smallest first; the first that gives at most `MAX_BUCKETS` is used. */
const BUCKET_STEPS_MS = [1, 5, 15, 60, 300, 900, 3_600, 10_800, 21_600, 86_400, 604_800, 2_592_000].map(
  (s) => s * 1000,
);
const MAX_BUCKETS = 60;

/** The filters of the page, as its query parameters name them. */
interface Filters {
  source: string;
  tool: string;
  session: string;
  /** The user the calls were made for (the principal). */
  user: string;
  thread: string;
  status: string;
  code: string;
  cache: string;
  from: string;
  to: string;
  q: string;
}

const FILTER_NAMES: readonly (keyof Filters)[] = [
  "source",
  "tool",
  "session",
  "user",
  "thread",
  "status",
  "code",
  "cache",
  "from",
  "to",
  "q",
];

/** `GET /invocations`. */
export const invocationsRoutes: readonly ConsoleRoute[] = [
  {
    method: "GET",
    pattern: "/invocations",
    async handle(request, context) {
      const params = request.url.searchParams;
      const filters = readFilters(params);
      const query = toLedgerQuery(filters);
      const size = pageSize(params.get("size"));
      const after = params.get("after") ?? "";
      const { ledger } = context.governance;
      const [rows, total] = await Promise.all([
        ledger.query({ ...query, order: "desc", limit: size + 1, ...(after ? { after } : {}) }),
        ledger.count(query),
      ]);
      const shown = rows.slice(0, size);
      const more = rows.length > size;
      const chart = await activityChart(context, query, filters);
      const last = shown.at(-1);
      const body = html`${filterForm(context, filters, size)}
<p class="muted" id="match-count">${total.toLocaleString("en")} invocation${total === 1 ? "" : "s"} match${
        after ? html` · page after <code>${after}</code>` : ""
      }.</p>
${filters.session && total > 0 ? researchObjectForm(context, { session: filters.session, thread: filters.thread || undefined }) : ""}
${chart}
<div class="table-wrap"><table id="invocations">
<thead><tr><th>Started (UTC)</th><th>Source / tool</th><th>Session / thread</th><th>User</th><th>Outcome</th><th>Cache</th><th class="num">Duration</th><th class="num">Attempts</th><th class="num">Queue wait</th></tr></thead>
<tbody>${shown.map((row) => invocationRow(context, row))}</tbody>
</table></div>
${shown.length === 0 ? html`<p class="muted">No invocation matches these filters.</p>` : ""}
<nav class="pager" aria-label="Pages">${
        after
          ? html`<a href="${context.href("/invocations", { ...filterQuery(filters), size: sizeParam(size) })}">Newest</a>`
          : ""
      }${
        more && last
          ? html`<a rel="next" id="next-page" href="${context.href("/invocations", {
              ...filterQuery(filters),
              size: sizeParam(size),
              after: last.invocationId,
            })}">Older →</a>`
          : ""
      }</nav>`;
      return { kind: "page", title: "Invocations", section: "invocations", body };
    },
  },
];

function invocationRow(context: ConsoleContext, row: InvocationRecord): SafeHtml {
  const outcome =
    row.status === "ok"
      ? badge("ok", "ok")
      : html`${badge("error", "error")} <code>${row.error?.code ?? ""}</code>`;
  return html`<tr data-id="${row.invocationId}">
<td><a href="${context.href(`/invocations/${encodeURIComponent(row.invocationId)}`)}">${time(row.startedAt)}</a></td>
<td><code>${row.sourceId}</code> / <code>${row.toolId}</code></td>
<td><a href="${context.href("/invocations", { session: row.sessionId })}" class="mono">${row.sessionId}</a>${
    row.threadId && row.threadId !== row.sessionId ? html`<div class="muted mono">${row.threadId}</div>` : ""
  }</td>
<td class="user">${userLink(context, "/invocations", row.principal)}</td>
<td>${outcome}</td>
<td>${row.cacheHit ? badge("hit", "ok") : html`<span class="muted">miss</span>`}</td>
<td class="num">${row.durationMs.toLocaleString("en")} ms</td>
<td class="num">${row.attempts}</td>
<td class="num">${row.queueWaitMs.toLocaleString("en")} ms</td>
</tr>`;
}

function filterForm(context: ConsoleContext, filters: Filters, size: number): SafeHtml {
  const sources = context.governance.registry.list().map((source) => source.id);
  const text = (name: keyof Filters, label: string, placeholder = "") =>
    html`<label>${label}<input type="text" name="${name}" value="${filters[name]}" maxlength="${MAX_FILTER_LENGTH}" placeholder="${placeholder}"></label>`;
  const select = (name: keyof Filters, label: string, options: readonly (readonly [string, string])[]) =>
    html`<label>${label}<select name="${name}">${options.map(
      ([value, text]) =>
        html`<option value="${value}"${filters[name] === value ? html` selected` : ""}>${text}</option>`,
    )}</select></label>`;
  return html`<form method="get" action="${context.href("/invocations")}" class="filters" id="filters" role="search">
${text("q", "Search", "ids, tool, error text")}
${select("source", "Source", [["", "any"], ...sources.map((id) => [id, id] as const)])}
${text("tool", "Tool", "search")}
${text("session", "Session")}
${text("user", "User")}
${text("thread", "Thread")}
${select("status", "Outcome", [
  ["", "any"],
  ["ok", "ok"],
  ["error", "error"],
])}
${text("code", "Error code", "RATE_LIMITED")}
${select("cache", "Cache", [
  ["", "any"],
  ["hit", "hit"],
  ["miss", "miss"],
])}
<label>From (UTC)<input type="datetime-local" step="1" name="from" value="${filters.from}"></label>
<label>To (UTC)<input type="datetime-local" step="1" name="to" value="${filters.to}"></label>
${size === DEFAULT_PAGE_SIZE ? "" : html`<input type="hidden" name="size" value="${size}">`}
<button type="submit" class="primary">Filter</button>
<a href="${context.href("/invocations")}">Clear</a>
</form>`;
}

function readFilters(params: URLSearchParams): Filters {
  const filters = {} as Filters;
  for (const name of FILTER_NAMES) {
    const value = (params.get(name) ?? "").trim();
    if (value.length > MAX_FILTER_LENGTH) {
      throw new GovernanceError(
        "INVALID_INPUT",
        `The filter '${name}' is ${value.length} characters long; the most is ${MAX_FILTER_LENGTH}.`,
        { data: { field: name } },
      );
    }
    filters[name] = value;
  }
  for (const [name, allowed] of [
    ["status", ["ok", "error"]],
    ["cache", ["hit", "miss"]],
  ] as const) {
    if (filters[name] !== "" && !(allowed as readonly string[]).includes(filters[name])) {
      throw new GovernanceError("INVALID_INPUT", `The filter '${name}' takes ${allowed.join(" or ")}.`, {
        data: { field: name },
      });
    }
  }
  return filters;
}

function toLedgerQuery(filters: Filters): LedgerQuery {
  const query: LedgerQuery = {};
  if (filters.source) query.sourceId = filters.source;
  if (filters.tool) query.toolId = filters.tool;
  if (filters.session) query.sessionId = filters.session;
  if (filters.user) query.principal = filters.user;
  if (filters.thread) query.threadId = filters.thread;
  if (filters.status) query.status = filters.status as "ok" | "error";
  if (filters.code) query.errorCode = filters.code;
  if (filters.cache) query.cacheHit = filters.cache === "hit";
  if (filters.from) query.startedFrom = utcTime("from", filters.from);
  if (filters.to) query.startedBefore = utcTime("to", filters.to);
  if (filters.q) query.text = filters.q;
  return query;
}

/** A `datetime-local` value (read as UTC) or an ISO time, as ISO-8601. */
function utcTime(field: string, value: string): string {
  const withZone = /[zZ]|[+-]\d\d:?\d\d$/.test(value) ? value : `${value}Z`;
  const ms = Date.parse(withZone);
  if (Number.isNaN(ms)) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `The filter '${field}' is not a time: '${value}'; use YYYY-MM-DDTHH:MM[:SS] (UTC).`,
      {
        data: { field },
      },
    );
  }
  return new Date(ms).toISOString();
}

function pageSize(value: string | null): number {
  if (value === null || value === "") return DEFAULT_PAGE_SIZE;
  const size = Number(value);
  if (!Number.isInteger(size) || size < 1) {
    throw new GovernanceError("INVALID_INPUT", `The page size '${value}' is not a positive whole number.`, {
      data: { field: "size" },
    });
  }
  return Math.min(size, MAX_PAGE_SIZE);
}

function sizeParam(size: number): number | undefined {
  return size === DEFAULT_PAGE_SIZE ? undefined : size;
}

function filterQuery(filters: Filters): Record<string, string> {
  return Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== ""));
}

/** The chart over the filters' time range (or the matching rows' whole span). */
async function activityChart(
  context: ConsoleContext,
  query: LedgerQuery,
  filters: Filters,
): Promise<SafeHtml> {
  const { ledger } = context.governance;
  const first = query.startedFrom ?? (await ledger.query({ ...query, order: "asc", limit: 1 }))[0]?.startedAt;
  if (first === undefined) return html``;
  const fromMs = Date.parse(first);
  const toMs = query.startedBefore
    ? Date.parse(query.startedBefore)
    : Math.max(context.clock.now(), fromMs + 1000);
  const span = Math.max(toMs - fromMs, 1000);
  const bucketMs =
    BUCKET_STEPS_MS.find((step) => span / step <= MAX_BUCKETS) ?? (BUCKET_STEPS_MS.at(-1) as number);
  const start = Math.floor(fromMs / bucketMs) * bucketMs;
  const count = Math.floor((toMs - start) / bucketMs) + 1;
  const buckets = await ledger.activity({
    ...query,
    startedFrom: new Date(start).toISOString(),
    startedBefore: new Date(start + count * bucketMs).toISOString(),
    bucketMs,
  });
  return renderChart(context, buckets, start, bucketMs, count, filters);
}

function renderChart(
  context: ConsoleContext,
  buckets: readonly LedgerActivityBucket[],
  start: number,
  bucketMs: number,
  count: number,
  filters: Filters,
): SafeHtml {
  const ok = new Array<number>(count).fill(0);
  const errors = new Array<number>(count).fill(0);
  const bySource = new Map<string, { ok: number; error: number }>();
  for (const bucket of buckets) {
    const index = Math.floor((Date.parse(bucket.start) - start) / bucketMs);
    if (index < 0 || index >= count) continue;
    (bucket.status === "ok" ? ok : errors)[index] =
      ((bucket.status === "ok" ? ok : errors)[index] ?? 0) + bucket.count;
    const totals = bySource.get(bucket.sourceId) ?? { ok: 0, error: 0 };
    totals[bucket.status] += bucket.count;
    bySource.set(bucket.sourceId, totals);
  }
  const peak = Math.max(1, ...ok.map((n, i) => n + (errors[i] ?? 0)));
  const width = 600;
  const height = 120;
  const barWidth = width / count;
  const bars = ok.map((n, i) => {
    const e = errors[i] ?? 0;
    const okHeight = (n / peak) * (height - 14);
    const errorHeight = (e / peak) * (height - 14);
    const x = (i * barWidth + 0.5).toFixed(1);
    const w = Math.max(barWidth - 1, 0.5).toFixed(1);
    const label = `${new Date(start + i * bucketMs).toISOString()}: ${n} ok, ${e} errors`;
    return html`<g><title>${label}</title><rect class="bar-ok" x="${x}" y="${(height - okHeight).toFixed(1)}" width="${w}" height="${okHeight.toFixed(1)}"></rect><rect class="bar-error" x="${x}" y="${(height - okHeight - errorHeight).toFixed(1)}" width="${w}" height="${errorHeight.toFixed(1)}"></rect></g>`;
  });
  const step =
    bucketMs >= 86_400_000
      ? `${bucketMs / 86_400_000} d`
      : bucketMs >= 3_600_000
        ? `${bucketMs / 3_600_000} h`
        : bucketMs >= 60_000
          ? `${bucketMs / 60_000} min`
          : `${bucketMs / 1000} s`;
  const sources = [...bySource.entries()].sort((a, b) => b[1].ok + b[1].error - (a[1].ok + a[1].error));
  return html`<figure class="activity" id="activity">
<svg class="chart" viewBox="0 0 ${width} ${height}" role="img" aria-label="Calls per ${step}: ok and errors"><text x="2" y="10">peak ${peak} per ${step}</text>${bars}</svg>
<figcaption class="muted">Calls per ${step} from ${time(start)}: <span class="legend-ok">ok</span> and <span class="legend-error">errors</span>.</figcaption>
<div class="table-wrap"><table id="per-source"><thead><tr><th>Source</th><th class="num">ok</th><th class="num">errors</th></tr></thead><tbody>${sources.map(
    ([source, totals]) =>
      html`<tr><td><a href="${context.href("/invocations", { ...filterQuery(filters), source })}"><code>${source}</code></a></td><td class="num">${totals.ok}</td><td class="num">${totals.error}</td></tr>`,
  )}</tbody></table></div>
</figure>`;
}
