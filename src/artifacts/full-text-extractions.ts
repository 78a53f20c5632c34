/**
 * The successful `paper_extract_pdf` rows of the ledger, read back from the CAS: the only proof that a
 * record's full text was retrieved.
 */

import type { McpRecord } from "../contract/index.js";
import { isGovernanceError, requireGovernanceOption } from "../core/index.js";
import type { ContentStore, LedgerReader } from "../governance/audit/index.js";
import { EXTRACTION_LEDGER_TOOL_ID, type ExtractionLedgerEntry } from "./artifact-ledger-types.js";
import { recordWorkKeys, workIdentifierKey } from "./identifier-match.js";

/** What evidence review reads: the governed ledger and its content store (a `Governance` has both). */
export interface EvidenceRuntime {
  ledger: LedgerReader;
  store: ContentStore;
}

/** A successful extraction with the ledger row that recorded it. */
export interface FullTextExtraction extends ExtractionLedgerEntry {
  /** The `paper_extract_pdf` ledger row. */
  invocationId: string;
  /** When that row's call finished (ISO-8601). */
  extractedAt: string;
}

/** An extraction row whose CAS entry failed its hash check or is missing; it proves nothing. */
export interface CorruptExtraction {
  invocationId: string;
  ref: string;
}

/** Every extraction row, sorted into the ones that verify and the ones that do not. */
export interface ExtractionIndex {
  extractions: FullTextExtraction[];
  corrupt: CorruptExtraction[];
}

/**
 * Reads every successful extraction row of the ledger, oldest first. A row counts only when its CAS entry verifies
 * and is a successful `ExtractionLedgerEntry` (`fullTextRetrieved: true`, scope `full-text`).
 * @param runtime the ledger and the CAS
 * @returns the verified extractions and the rows whose CAS entry is altered or missing
 * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the ledger is closed
 */
export async function loadExtractionIndex(runtime: EvidenceRuntime): Promise<ExtractionIndex> {
  const rows = await runtime.ledger.query({ toolId: EXTRACTION_LEDGER_TOOL_ID, status: "ok" });
  const index: ExtractionIndex = { extractions: [], corrupt: [] };
  for (const row of rows) {
    if (row.normalizedRef === undefined) continue;
    if (!(await verifiesInStore(runtime.store, row.normalizedRef))) {
      index.corrupt.push({ invocationId: row.invocationId, ref: row.normalizedRef });
      continue;
    }
    const entry = await readJson(runtime.store, row.normalizedRef);
    if (isSuccessfulExtraction(entry)) {
      index.extractions.push({ ...entry, invocationId: row.invocationId, extractedAt: row.finishedAt });
    }
  }
  return index;
}

/**
 * The verified successful extractions of one source record, oldest first.
 * @param paper the runtime (`governance`: the ledger and the CAS, a `Governance` fits), the source and the
 *   record id; the id may carry a prefix, a version or a URL form (`arXiv:2403.01234v1` finds an
 *   extraction of `2403.01234`, see `workIdentifierKey`)
 * @returns the extractions; empty when the paper's full text was never extracted
 * @throws GovernanceError `UPSTREAM_UNAVAILABLE` when the ledger is closed
 * @example
 * const [extraction] = await fullTextExtractions({ governance, sourceId: "arxiv", sourceRecordId: "2403.01234" });
 * if (extraction) console.log(extraction.textPath);
 */
export async function fullTextExtractions(paper: {
  governance: EvidenceRuntime;
  sourceId: string;
  sourceRecordId: string;
}): Promise<FullTextExtraction[]> {
  requireGovernanceOption(paper, "fullTextExtractions");
  const runtime = paper.governance;
  const key = workIdentifierKey(paper.sourceRecordId);
  const { extractions } = await loadExtractionIndex(runtime);
  return extractions.filter(
    (entry) => entry.sourceId === paper.sourceId && workIdentifierKey(entry.sourceRecordId) === key,
  );
}

/**
 * The extractions of a record's work: same source, and a `sourceRecordId` naming the record's
 * identifier, a citation identifier or a same-work cross-reference (see `recordWorkKeys`).
 * @param extractions verified extractions
 * @param record the cited record
 * @returns the matching extractions
 */
export function extractionsOfRecord<T extends ExtractionLedgerEntry>(
  extractions: readonly T[],
  record: McpRecord,
): T[] {
  const keys = recordWorkKeys(record);
  return extractions.filter(
    (entry) => entry.sourceId === record.source && keys.has(workIdentifierKey(entry.sourceRecordId)),
  );
}

/**
 * Whether the CAS object under `ref` is present and hashes to its address.
 * @param store the CAS
 * @param ref a content reference from a ledger row
 * @returns false for an altered, missing or malformed reference
 */
export async function verifiesInStore(store: ContentStore, ref: string): Promise<boolean> {
  try {
    return await store.verify(ref);
  } catch (error) {
    if (isGovernanceError(error) && (error.code === "NOT_FOUND" || error.code === "INVALID_INPUT"))
      return false;
    throw error;
  }
}

/**
 * A verified CAS object parsed as JSON.
 * @param store the CAS
 * @param ref a reference that verified
 * @returns the value, or undefined when the object is not JSON
 */
export async function readJson(store: ContentStore, ref: string): Promise<unknown> {
  try {
    return await store.getJson(ref);
  } catch (error) {
    if (isGovernanceError(error) && error.code === "INVALID_INPUT") return undefined;
    throw error;
  }
}

function isSuccessfulExtraction(value: unknown): value is ExtractionLedgerEntry {
  const entry = value as Partial<ExtractionLedgerEntry> | null | undefined;
  return (
    typeof entry === "object" &&
    entry !== null &&
    entry.kind === EXTRACTION_LEDGER_TOOL_ID &&
    entry.fullTextRetrieved === true &&
    entry.contentScope === "full-text" &&
    typeof entry.sourceId === "string" &&
    typeof entry.sourceRecordId === "string" &&
    typeof entry.artifactJobId === "string"
  );
}
