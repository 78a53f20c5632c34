/**
 * The claim review of an answer run on a crate's contents alone: the crate's invocation rows in a
 * memory ledger and its copied objects in a memory store, reviewed by `reviewAnswer` exactly as the
 * live ledger would be. The exporter runs it on what it is about to write and the verifier on what it
 * read, so the two verdicts can only differ when the crate changed.
 */
import { type AnswerReview, reviewAnswer } from "../artifacts/index.js";
import { isGovernanceError } from "../core/index.js";
import {
  type InvocationRecord,
  LedgerWriter,
  MemoryContentStore,
  MemoryLedger,
} from "../governance/audit/index.js";

/** What a crate holds for the review: its rows and the bytes of its objects. */
export interface CrateEvidence {
  rows: readonly InvocationRecord[];
  /** The bytes of every object the crate copied (a changed byte just stores under another hash). */
  objects: Iterable<Uint8Array>;
}

/** The verdict, and the rows a ledger would not take (a malformed or repeated row in a changed crate). */
export interface CrateReview {
  review: AnswerReview;
  refusedRows: { invocationId: string; message: string }[];
}

/**
 * Reviews an answer against a crate's contents.
 * @param evidence the crate's rows and objects
 * @param answer the final answer's text
 * @param sessionId the session whose invocations count
 * @returns `reviewAnswer`'s verdict, and the rows left out
 */
export async function reviewCrateAnswer(
  evidence: CrateEvidence,
  answer: string,
  sessionId: string,
): Promise<CrateReview> {
  const ledger = new MemoryLedger();
  const writer = new LedgerWriter(ledger);
  const store = new MemoryContentStore();
  const refusedRows: CrateReview["refusedRows"] = [];
  try {
    for (const row of evidence.rows) {
      try {
        await writer.append(row);
      } catch (error) {
        if (!isGovernanceError(error)) throw error;
        refusedRows.push({ invocationId: row.invocationId, message: error.message });
      }
    }
    for (const bytes of evidence.objects) await store.put(bytes);
    return { review: await reviewAnswer({ governance: { ledger, store }, answer, sessionId }), refusedRows };
  } finally {
    await writer.close();
    await ledger.close();
  }
}
