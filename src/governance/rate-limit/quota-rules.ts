/**
 * Quotas: how many calls one principal may make of one tool, or of one source, per time window. A rule
 * is written `<match>=<calls>/<window>` (`pubmed/search=100/1h`, `pubmed=1000/1d`, `*=600/1h`,
 * `*\/*=60/1m`); this file parses rules and says which windows a call counts in (see ARCHITECTURE.md,
 * "The one call path", step 6).
 */
import { GovernanceError } from "../../core/index.js";

/**
 * One quota rule. `match` says which calls it counts and how they are grouped: `<source>/<tool>` one
 * tool's calls; `<source>/*` each tool of a source on its own; `<source>` all tools of a source
 * together; `*\/*` each tool of every source on its own; `*` each source on its own (its tools
 * together). Every principal has its own count (the single user's calls, without a principal, count
 * as one principal too).
 * @example
 * const rules: QuotaRule[] = [{ match: "pubmed/search", calls: 100, windowMs: 3_600_000 }];
 */
export interface QuotaRule {
  match: string;
  /** Calls allowed per window (an integer >= 1). */
  calls: number;
  /** The window, in ms (an integer >= 1000): fixed windows aligned on multiples of it since the epoch. */
  windowMs: number;
}

/** A window a call counts in: its key (rule, principal, unit), bounds and limit. */
export interface QuotaWindow {
  key: string;
  /** Epoch ms. */
  start: number;
  /** Epoch ms (exclusive). */
  end: number;
  limit: number;
  /** The rule as written, for the refusal. */
  rule: string;
}

const UNITS_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const ID = /^[^/=\s,*]+$/;

/**
 * Checks rules (a library's `quotas` option).
 * @param rules the rules
 * @returns copies, checked
 * @throws GovernanceError `INVALID_CONFIG` naming the rule and the fix
 */
export function resolveQuotaRules(rules: readonly QuotaRule[]): QuotaRule[] {
  return rules.map((rule) => {
    const text = `${rule?.match}=${rule?.calls}/${rule?.windowMs}ms`;
    if (typeof rule?.match !== "string" || !isMatch(rule.match)) {
      throw invalid(
        text,
        "match must be <source>/<tool>, <source>/*, <source>, */* or * (ids without '/', '=', ',' or spaces)",
      );
    }
    if (!Number.isSafeInteger(rule.calls) || rule.calls < 1) {
      throw invalid(text, "calls must be a whole number of at least 1");
    }
    if (!Number.isSafeInteger(rule.windowMs) || rule.windowMs < 1000) {
      throw invalid(text, "windowMs must be a whole number of ms, at least 1000 (a second)");
    }
    return { match: rule.match, calls: rule.calls, windowMs: rule.windowMs };
  });
}

/**
 * Parses rules written as text: `<match>=<calls>/<window>` separated by commas or spaces, the window
 * a number and a unit (`ms`, `s`, `m`, `h`, `d`; the number may be left out: `100/h`). This is the
 * form of `SCIENCEGATE_QUOTAS` (which every `sciencegate` command, the gateway included, reads).
 * @param spec e.g. `pubmed/search=100/1h, *=600/1h`
 * @returns the rules
 * @throws GovernanceError `INVALID_CONFIG` naming the rule and the fix
 * @example
 * parseQuotaRules("pubmed/search=100/1h"); // [{ match: "pubmed/search", calls: 100, windowMs: 3600000 }]
 */
export function parseQuotaRules(spec: string): QuotaRule[] {
  const parts = spec.split(/[\s,]+/).filter(Boolean);
  return resolveQuotaRules(
    parts.map((part) => {
      const found = /^([^=]+)=(\d+)\/(\d*)(ms|s|m|h|d)$/.exec(part);
      if (!found) {
        throw invalid(part, "write <match>=<calls>/<window>, e.g. pubmed/search=100/1h or *=600/1h");
      }
      const [, match, calls, amount, unit] = found as unknown as [string, string, string, string, string];
      return {
        match,
        calls: Number(calls),
        windowMs: (amount === "" ? 1 : Number(amount)) * (UNITS_MS[unit] as number),
      };
    }),
  );
}

/**
 * The windows one call counts in: one per rule that applies to it.
 * @param rules the checked rules
 * @param call who calls which tool of which source
 * @param now the clock's time, epoch ms
 * @returns the windows, in rule order
 */
export function quotaWindows(
  rules: readonly QuotaRule[],
  call: { principal?: string | undefined; sourceId: string; toolId: string },
  now: number,
): QuotaWindow[] {
  const windows: QuotaWindow[] = [];
  for (const rule of rules) {
    const unit = unitOf(rule.match, call.sourceId, call.toolId);
    if (unit === undefined) continue;
    const start = now - (((now % rule.windowMs) + rule.windowMs) % rule.windowMs);
    const text = `${rule.match}=${rule.calls}/${rule.windowMs}ms`;
    windows.push({
      // JSON keeps the parts apart whatever they hold; a changed rule starts counting afresh.
      key: JSON.stringify([text, call.principal ?? "", unit]),
      start,
      end: start + rule.windowMs,
      limit: rule.calls,
      rule: text,
    });
  }
  return windows;
}

/** What a rule counts a call under, or `undefined` when the rule does not apply to it. */
function unitOf(match: string, sourceId: string, toolId: string): string | undefined {
  const [source, tool] = match.split("/") as [string, string | undefined];
  if (source !== "*" && source !== sourceId) return undefined;
  if (tool === undefined) return sourceId;
  if (tool !== "*" && tool !== toolId) return undefined;
  return `${sourceId}/${toolId}`;
}

function isMatch(match: string): boolean {
  const parts = match.split("/");
  if (parts.length > 2) return false;
  const [source, tool] = parts as [string, string | undefined];
  const ok = (part: string) => part === "*" || ID.test(part);
  if (!ok(source)) return false;
  // A tool of every source (`*/search`) is not a rule: tools are named per source.
  return tool === undefined || (ok(tool) && !(source === "*" && tool !== "*"));
}

function invalid(rule: string, fix: string): GovernanceError {
  return new GovernanceError("INVALID_CONFIG", `Quota rule '${rule}' is invalid: ${fix}.`, {
    data: { field: "quotas", rule },
  });
}
