/**
 * The state of the paper acquisition graph: the input candidates, one reducer channel per parallel
 * step (download tasks, then extraction tasks, each writing its own key: a plain channel would
 * reject two writes in one step) and the output papers and warnings.
 */
import { Annotation } from "@langchain/langgraph";
import { hashCanonical } from "../core/index.js";

/** One candidate to acquire: an artifact candidate that a successful governed call returned. */
export interface PaperAcquisitionCandidate {
  /** The invocation whose result carried the candidate. */
  mcpInvocationId: string;
  /** The candidate's id in that result. */
  candidateId: string;
  /** Relative to the workspace. @default `downloads/<sourceId>/<file name>` */
  destinationPath?: string;
}

/** Where a candidate ended up. */
export type AcquiredPaperStatus = "extracted" | "downloaded" | "denied" | "failed";

/** The outcome of one candidate. */
export interface AcquiredPaper {
  mcpInvocationId: string;
  candidateId: string;
  /**
   * `extracted`: downloaded and its text extracted; `downloaded`: on disk but not extracted (not a
   * PDF, or extraction failed: see `error`); `denied`: refused by a human or the permission policy,
   * nothing downloaded; `failed`: the candidate or the download failed.
   */
  status: AcquiredPaperStatus;
  jobId?: string;
  finalPath?: string;
  /** `sha256:<hex>` of the downloaded file. */
  actualChecksum?: string;
  /** `<dataDir>/papers/<jobId>/fulltext.md`. */
  textPath?: string;
  /** `<dataDir>/papers/<jobId>/manifest.json`. */
  manifestPath?: string;
  pageCount?: number;
  warnings: string[];
  error?: { code: string; message: string; retryable: boolean };
}

/** A download task's outcome, and whether an extraction task was sent for it. */
export interface DownloadOutcome {
  paper: AcquiredPaper;
  extracting: boolean;
}

/** Outcomes by call id; `null` empties the channel (the next run of the thread starts clean). */
const outcomes = <T>() =>
  Annotation<Record<string, T>, Record<string, T> | null>({
    reducer: (current, update) => (update === null ? {} : { ...current, ...update }),
    default: () => ({}),
  });

const candidates = Annotation<PaperAcquisitionCandidate[]>();
const papers = Annotation<AcquiredPaper[]>();
const warnings = Annotation<string[]>();

/** The whole state (internal channels included). */
export const PaperAcquisitionStateAnnotation = Annotation.Root({
  candidates,
  /** Written by the download tasks (one key each). */
  downloaded: outcomes<DownloadOutcome>(),
  /** Written by the extraction tasks of the next step (one key each). */
  extracted: outcomes<AcquiredPaper>(),
  papers,
  warnings,
});

/** What the graph takes. */
export const PaperAcquisitionInputAnnotation = Annotation.Root({ candidates });

/** What the graph returns. */
export const PaperAcquisitionOutputAnnotation = Annotation.Root({ papers, warnings });

/** The values of the graph's state. */
export type PaperAcquisitionState = typeof PaperAcquisitionStateAnnotation.State;

/** A write to the graph's state. */
export type PaperAcquisitionUpdate = typeof PaperAcquisitionStateAnnotation.Update;

/**
 * The graph's stable tool-call id of a candidate: with the thread id, the key under which the
 * download manager and the ledger record its download, so a re-run (a resume, or the same
 * candidate again in the thread) replays the outcome instead of downloading twice.
 * @param candidate a checked candidate (an empty destination counts as absent)
 * @returns `paper-acquisition:<32 hex>`
 */
export function acquisitionCallId(candidate: PaperAcquisitionCandidate): string {
  const destination = candidate.destinationPath?.trim() ? candidate.destinationPath : undefined;
  const key = {
    mcpInvocationId: candidate.mcpInvocationId,
    candidateId: candidate.candidateId,
    ...(destination === undefined ? {} : { destinationPath: destination }),
  };
  return `paper-acquisition:${hashCanonical(key).slice(0, 32)}`;
}

/**
 * Checks one input entry (the graph's input is untrusted: a bad entry is a failed paper, not a throw).
 * @param value an element of `candidates`
 * @returns the candidate, or why it is not one
 */
export function readCandidate(value: unknown): PaperAcquisitionCandidate | { invalid: string } {
  if (typeof value !== "object" || value === null) return { invalid: "a candidate must be an object" };
  const { mcpInvocationId, candidateId, destinationPath } = value as Record<string, unknown>;
  if (typeof mcpInvocationId !== "string" || mcpInvocationId.trim() === "") {
    return { invalid: "mcpInvocationId must be a non-empty string" };
  }
  if (typeof candidateId !== "string" || candidateId.trim() === "") {
    return { invalid: "candidateId must be a non-empty string" };
  }
  if (destinationPath !== undefined && typeof destinationPath !== "string") {
    return { invalid: "destinationPath must be a string when given" };
  }
  return {
    mcpInvocationId,
    candidateId,
    ...(typeof destinationPath === "string" && destinationPath.trim() ? { destinationPath } : {}),
  };
}
