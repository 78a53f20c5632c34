/** A complete invocation row for ledger tests. */
import type { InvocationRecord } from "../../../src/governance/audit/ledger.js";

/**
 * An `ok` row of a PubMed search with fixed times.
 * @param id the invocation id
 * @param overrides fields to change
 * @returns the row
 */
export function ledgerRow(id: string, overrides: Partial<InvocationRecord> = {}): InvocationRecord {
  return {
    invocationId: id,
    sessionId: "s1",
    sourceId: "pubmed",
    toolId: "search",
    status: "ok",
    startedAt: "2025-01-01T00:00:00.000Z",
    finishedAt: "2025-01-01T00:00:01.000Z",
    durationMs: 1000,
    attempts: 1,
    cacheHit: false,
    queueWaitMs: 0,
    ...overrides,
  };
}
