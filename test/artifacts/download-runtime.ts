/**
 * A real governance runtime for download approval tests: the built-in arXiv manifest, in-memory
 * ledger, CAS and grants, a temporary data directory and a fake `fetch` that counts transfers.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DownloadFetch } from "../../src/artifacts/download-fetch.js";
import { MemoryContentStore } from "../../src/governance/audit/content-store.js";
import { MemoryLedger } from "../../src/governance/audit/memory-ledger.js";
import { MemoryGrantStore } from "../../src/governance/permissions/grant-store.js";
import { createGovernance, type Governance } from "../../src/runtime/create-governance.js";
import type { GovernanceOptions } from "../../src/runtime/governance-options.js";
import { mergeGovernanceOptions } from "../../src/runtime/index.js";
import { ManualClock } from "../../src/testing/manual-clock.js";
import { makeCandidate, PDF, publicLookup, recordCandidateInvocation } from "./download-harness.js";

/** The candidates of the runtime's `inv-1` call. */
export const IDS = ["a", "b"] as const;

/** Candidate `id` on arxiv.org (record `2401.0000<id>`). */
export const candidate = (id: string) =>
  makeCandidate({ candidateId: id, sourceRecordId: `2401.0000${id}`, url: `https://arxiv.org/pdf/${id}` });

const opened: Governance[] = [];

/** Closes every runtime `downloadRuntime` opened (call it in `afterEach`). */
export async function closeDownloadRuntimes(): Promise<void> {
  for (const governance of opened.splice(0)) await governance.close();
}

/** A ledger whose reads of one invocation take many event-loop turns (a slow plan). */
export class SlowReadLedger extends MemoryLedger {
  constructor(readonly slowId: string) {
    super();
  }
  override async get(invocationId: string) {
    if (invocationId === this.slowId) for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    return super.get(invocationId);
  }
}

/**
 * A real governance runtime (built-in arXiv manifest) whose ledger holds a call `inv-1` offering
 * candidates a and b, and a call `inv-2` offering b alone, both made in session `invocationSessionId`.
 */
export async function downloadRuntime(
  options: Partial<GovernanceOptions> = {},
  ledger = new MemoryLedger(),
  invocationSessionId = "t1",
) {
  const dataDir = await mkdtemp(join(tmpdir(), "sciencegate-dl-approval-"));
  const store = new MemoryContentStore();
  const transfers: string[] = [];
  const fetch: DownloadFetch = async (url) => {
    transfers.push(url);
    return new Response(PDF, { headers: { "content-length": String(PDF.length) } });
  };
  const governance = await createGovernance(
    mergeGovernanceOptions(
      {
        config: { servers: [] },
        manifests: {
          // The recorded candidates are arXiv's: its manifest (hosts, licence) is needed without its server.
          builtin: true,
        },
        storage: { dataDir, ledger, contentStore: store, grants: new MemoryGrantStore() },
        clock: new ManualClock(Date.parse("2026-01-02T00:00:00Z")),
        downloads: { lookup: publicLookup, fetch },
      },
      options,
    ),
  );
  opened.push(governance);
  for (const [invocationId, candidates] of [
    ["inv-1", IDS.map(candidate)],
    ["inv-2", [candidate("b")]],
  ] as const) {
    await recordCandidateInvocation(
      { ledgerWriter: governance.ledgerWriter, store },
      {
        invocationId,
        sessionId: invocationSessionId,
        toolId: "prepare_paper_download",
        candidates: [...candidates],
      },
    );
  }
  return { governance, transfers, store };
}
