/**
 * A month of governed calls for the ledger-browse benchmark: deterministic rows shaped like the
 * broker's (random UUIDs, CAS refs, hashes), over eight sources and 500 sessions, 6% failed and a
 * fifth of the successes cache hits, with one start time in twenty shared with the row before.
 */
import { createHash } from "node:crypto";
import type { InvocationRecord } from "../../src/governance/audit/ledger.js";
import type { LedgerWriter } from "../../src/governance/audit/ledger-writer.js";

/** The first row's start: 2025-01-01T00:00:00Z. */
export const BROWSE_T0 = Date.UTC(2025, 0, 1);
/** The rows span 30 days. */
export const BROWSE_SPAN_MS = 30 * 24 * 3600 * 1000;

const SOURCES: readonly [source: string, tool: string, weight: number][] = [
  ["pubmed", "search", 30],
  ["arxiv", "search", 20],
  ["crossref", "works", 12],
  ["openalex", "works", 12],
  ["europepmc", "search", 10],
  ["uniprot", "lookup", 8],
  ["chembl", "molecule", 5],
  ["pdb", "entry", 3],
];
const ERRORS: readonly [code: string, message: string, weight: number][] = [
  ["TIMEOUT", "The call did not finish before its deadline of 30000 ms.", 40],
  ["RATE_LIMITED", "429 Too Many Requests after 3 attempts", 25],
  ["UPSTREAM_UNAVAILABLE", "connect ECONNREFUSED 127.0.0.1:8080", 20],
  ["PERMISSION_DENIED", "The user denied download of artifact:arxiv", 10],
  ["TOOL_FAILED", "Tool raised: invalid identifier", 5],
];

/** A small seeded generator (mulberry32), so every run appends the same rows. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function weighted<T extends readonly unknown[]>(
  items: readonly T[],
  weight: (item: T) => number,
  r: number,
): T {
  const total = items.reduce((sum, item) => sum + weight(item), 0);
  let left = r * total;
  for (const item of items) {
    left -= weight(item);
    if (left < 0) return item;
  }
  return items[items.length - 1] as T;
}

const hex = (text: string) => createHash("sha256").update(text).digest("hex");

/**
 * The rows, `batch` at a time, so that 100,000 of them are never all in memory.
 * @param count how many rows
 * @param batch rows per yielded array
 */
export function* browseRows(count: number, batch: number): Generator<InvocationRecord[]> {
  const next = random(42);
  let startedMs = BROWSE_T0;
  let rows: InvocationRecord[] = [];
  for (let i = 0; i < count; i++) {
    if (i % 20 !== 0) startedMs = BROWSE_T0 + Math.floor((i * BROWSE_SPAN_MS) / count);
    const [sourceId, toolId] = weighted(SOURCES, (s) => s[2], next());
    const session = `sess-${String(Math.floor(next() * 500)).padStart(4, "0")}`;
    const id = hex(`invocation ${i}`);
    const uuid = `${id.slice(0, 8)}-${id.slice(8, 12)}-4${id.slice(13, 16)}-a${id.slice(17, 20)}-${id.slice(20, 32)}`;
    const failed = next() < 0.06;
    const [code, message] = weighted(ERRORS, (e) => e[2], next());
    const cacheHit = !failed && next() < 0.2;
    const durationMs = cacheHit ? 0.4 : Math.round(next() * 2000);
    rows.push({
      invocationId: uuid,
      sessionId: session,
      threadId: `${session}-thread-${Math.floor(next() * 8)}`,
      toolCallId: `call_${id.slice(32, 56)}`,
      runId: `run-${id.slice(40, 52)}`,
      sourceId,
      toolId,
      mcpToolName: `${sourceId}_${toolId}`,
      status: failed ? "error" : "ok",
      startedAt: new Date(startedMs).toISOString(),
      finishedAt: new Date(startedMs + durationMs).toISOString(),
      durationMs,
      attempts: cacheHit ? 0 : 1,
      cacheHit,
      queueWaitMs: 0,
      requestRef: `sha256:${hex(`request ${i}`)}`,
      ...(failed
        ? {}
        : { rawRef: `sha256:${hex(`raw ${i}`)}`, normalizedRef: `sha256:${hex(`normalized ${i}`)}` }),
      catalogRevision: "rev-12",
      toolDefinitionHash: hex(`${sourceId}/${toolId}`),
      inputHash: hex(`input ${i}`),
      ...(failed ? { error: { code, message, retryable: code !== "PERMISSION_DENIED", attempts: 1 } } : {}),
    } as InvocationRecord);
    if (rows.length === batch) {
      yield rows;
      rows = [];
    }
  }
  if (rows.length > 0) yield rows;
}

/**
 * Appends the rows to a ledger, a batch of 2,000 started at once (the ledger groups them into commits).
 * @param ledger an empty ledger
 * @param count how many rows
 * @returns the ms spent appending (building the rows is not counted)
 */
export async function fillLedger(ledger: Pick<LedgerWriter, "append">, count: number): Promise<number> {
  let ms = 0;
  for (const rows of browseRows(count, 2000)) {
    const started = performance.now();
    await Promise.all(rows.map((row) => ledger.append(row)));
    ms += performance.now() - started;
  }
  return ms;
}
