/**
 * The built-ins as a governed source served in process (`sciencegate`): `paper_extract_pdf` is called
 * through `Broker.invoke` like every tool, so it shares the broker's replay rule, permission step,
 * quota and ledger row (see ARCHITECTURE.md, "The one call path").
 */
import { type Clock, GovernanceError, systemClock } from "../core/index.js";
import type { InProcessSource } from "../governance/broker/index.js";
import { parseManifest, type SourceManifest } from "../governance/manifests/index.js";
import type { DownloadJobStore } from "./download-job-store.js";
import type { PdfExtractor } from "./extract-pdf.js";
import { PAPER_EXTRACT_TOOL, PAPER_EXTRACT_TOOL_ID, prepareExtraction } from "./paper-extraction.js";
import type { PdfLimits } from "./pdf-limits.js";

/** The id of the built-ins' in-process source: the `sourceId` of their calls and ledger rows. */
export const ARTIFACT_SOURCE_ID = "sciencegate";

/**
 * The manifest of the built-ins' source. It serves no records of its own: an extraction names its
 * record's source in its result.
 */
export const ARTIFACT_SOURCE_MANIFEST: SourceManifest = parseManifest(
  {
    id: ARTIFACT_SOURCE_ID,
    displayName: "Sciencegate built-ins",
    description: "Bounded full-text extraction of papers downloaded through other sources' candidates.",
    publisher: "Sciencegate",
    version: "1.0.0",
    kind: "literature",
    enabledByDefault: true,
    transport: { mcpServerId: ARTIFACT_SOURCE_ID },
    // An extraction is an effect on the data directory, never a result to serve from a cache.
    cache: { enabled: false, ttlSeconds: 0 },
    prompt: {
      summary: "Full-text extraction of papers other tools offered and the user downloaded.",
      citationPolicy: "Cite the record the extracted paper belongs to.",
      caveats: [],
    },
    governance: {
      attribution: "Sciencegate",
      license: "see the extracted record's licence",
      termsUrl: "https://www.npmjs.com/package/sciencegate",
      dataClassification: "public",
      networkHosts: [],
      maxResponseBytes: 1_048_576,
      rateLimitGroup: ARTIFACT_SOURCE_ID,
    },
    tools: [PAPER_EXTRACT_TOOL],
  },
  "(the built-ins' manifest)",
);

/** Options of {@link createArtifactSource}. */
export interface ArtifactSourceOptions {
  /** Where the download jobs live (`governance.downloads.jobs`); only read, never written. */
  jobs: Pick<DownloadJobStore, "get">;
  /** The data directory; extractions go to `<dataDir>/papers/<jobId>/`. */
  dataDir: string;
  /** Extraction bounds. @default 50 MiB, 200 pages, 20 M characters, 512 MiB of memory, 120 s */
  limits?: Partial<PdfLimits> | undefined;
  /** The PDF parser. @default "auto" (pdftotext when on the PATH, else pdf.js) */
  extractor?: PdfExtractor | undefined;
  /** Times the wall-clock bound and the results. @default systemClock */
  clock?: Clock | undefined;
}

/**
 * The built-ins' in-process source, for `BrokerOptions.inProcess` (`createGovernance` adds it).
 * @param options the download jobs, data directory, extraction bounds and clock
 * @returns the source
 * @example
 * const broker = new Broker({ ...options, inProcess: [createArtifactSource({ jobs: downloads.jobs, dataDir })] });
 */
export function createArtifactSource(options: ArtifactSourceOptions): InProcessSource {
  const extraction = { ...options, clock: options.clock ?? systemClock };
  return {
    manifest: ARTIFACT_SOURCE_MANIFEST,
    prepare(call) {
      if (call.toolId === PAPER_EXTRACT_TOOL_ID) return prepareExtraction(extraction, call);
      // The broker resolves only the manifest's tools.
      throw new GovernanceError("TOOL_UNAVAILABLE", `No built-in tool '${call.toolId}'.`);
    },
  };
}
