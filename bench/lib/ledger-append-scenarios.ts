/**
 * Ledger appends side by side: the storage benchmark's first part. Each row carries two small inline
 * objects, as a governed call's row does (its request and its normalized result).
 */
import { type ContentObject, jsonObject, jsonObjectAsIs } from "../../src/governance/audit/content-object.js";
import type { InvocationRecord } from "../../src/governance/audit/ledger.js";
import type { LedgerUnderTest } from "../../src/testing/conformance/ledger-under-test.js";
import { ledgerRow } from "../../test/governance/audit/ledger-row.js";
import { benchResult } from "./bench-records.js";
import { UNCACHED_TOOL } from "./bench-server.js";
import { type LatencySummary, measureBatch, measureInterleaved, summarizeLatencies } from "./latency.js";

/** A row and the objects appended with it. */
export interface AppendRow {
  record: InvocationRecord;
  objects: ContentObject[];
}

/**
 * The row of an uncached bench search with its request and normalized result inline (~4 KiB).
 * @param id the invocation id; the query derives from it, so every row has objects of its own
 * @returns the row and its two objects
 */
export function appendRow(id: string): AppendRow {
  const query = `ledger bench ${id}`;
  const request = jsonObject({ sourceId: "bench", toolId: UNCACHED_TOOL, input: { query } });
  const normalized = jsonObjectAsIs(benchResult(UNCACHED_TOOL, query));
  return {
    record: ledgerRow(id, {
      sessionId: "bench-session",
      sourceId: "bench",
      toolId: UNCACHED_TOOL,
      requestRef: request.ref,
      normalizedRef: normalized.ref,
    }),
    objects: [request, normalized],
  };
}

/** The two ledgers compared. */
export interface LedgerPair {
  sqlite: LedgerUnderTest;
  postgres: LedgerUnderTest;
}

/** Options of `measureLedgerAppends`. */
export interface LedgerAppendOptions {
  warmup: number;
  iterations: number;
  /** Appends started at once per batch. */
  concurrent: number;
  /** Batches per ledger; the median wall time is reported. */
  rounds: number;
}

/** What `measureLedgerAppends` measured. */
export interface LedgerAppendResults {
  sequential: { sqlite: LatencySummary; postgres: LatencySummary };
  /** Median over the rounds, rows per second. */
  concurrentRowsPerSecond: { sqlite: number; postgres: number };
  /** Rows each ledger holds at the end (= appends made). */
  rows: number;
}

/**
 * Sequential appends, each awaited (interleaved in blocks), then batches of concurrent appends
 * (alternating which ledger goes first). Rows and their objects are built before they are timed.
 * @param ledgers the SQLite and PostgreSQL ledgers, both empty
 * @param options counts
 * @returns latencies, rows per second and the row count
 * @throws Error when a ledger does not hold one row per append
 */
export async function measureLedgerAppends(
  ledgers: LedgerPair,
  options: LedgerAppendOptions,
): Promise<LedgerAppendResults> {
  // measureInterleaved hands out indexes unique across both cases, so one prepared list serves both.
  const sequentialRows = Array.from({ length: 2 * (options.warmup + options.iterations) }, (_, i) =>
    appendRow(`seq-${i}`),
  );
  const append = (ledger: LedgerUnderTest, i: number) => {
    const row = sequentialRows[i];
    if (!row) throw new Error(`No prepared row ${i}.`);
    return ledger.append(row.record, row.objects);
  };
  const samples = await measureInterleaved(
    [
      { name: "sqlite", call: (i) => append(ledgers.sqlite, i) },
      { name: "postgres", call: (i) => append(ledgers.postgres, i) },
    ],
    { warmup: options.warmup, iterations: options.iterations },
  );

  const wall = { sqlite: [] as number[], postgres: [] as number[] };
  for (let round = 0; round < options.rounds; round++) {
    const order = round % 2 === 0 ? (["sqlite", "postgres"] as const) : (["postgres", "sqlite"] as const);
    for (const side of order) {
      const rows = Array.from({ length: options.concurrent }, (_, i) => appendRow(`batch-${round}-${i}`));
      const { wallMs } = await measureBatch(rows.length, (i) => {
        const row = rows[i] as AppendRow;
        return ledgers[side].append(row.record, row.objects);
      });
      wall[side].push(wallMs);
    }
  }

  const rows = options.warmup + options.iterations + options.rounds * options.concurrent;
  for (const [side, ledger] of Object.entries(ledgers)) {
    const held = (await ledger.summary()).calls;
    if (held !== rows) throw new Error(`Ledger rows lost: ${side} holds ${held} rows for ${rows} appends.`);
  }
  const rate = (walls: number[]) => (options.concurrent / median(walls)) * 1000;
  return {
    sequential: {
      sqlite: summarizeLatencies(samples.get("sqlite") ?? []),
      postgres: summarizeLatencies(samples.get("postgres") ?? []),
    },
    concurrentRowsPerSecond: { sqlite: rate(wall.sqlite), postgres: rate(wall.postgres) },
    rows,
  };
}

/**
 * @param values samples
 * @returns the middle value (the lower middle for an even count), NaN for none
 */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? Number.NaN;
}
