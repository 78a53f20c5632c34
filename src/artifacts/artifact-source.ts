/**
 * The built-ins as a governed source served in process (`sciencegate`): `artifact_download` and
 * `paper_extract_pdf` are called through `Broker.invoke` like every tool, so they share the broker's
 * replay rule, permission step, card, quota and ledger row (see ARCHITECTURE.md, "The one call path").
 */
import { type Clock, GovernanceError, systemClock } from "../core/index.js";
import type { InProcessSource } from "../governance/broker/index.js";
import { parseManifest, type SourceManifest } from "../governance/manifests/index.js";
import { ARTIFACT_DOWNLOAD_TOOL_ID } from "../governance/permissions/index.js";
import { ARTIFACT_DOWNLOAD_TOOL, prepareDownloadCall } from "./artifact-download-tool.js";
import type { ManifestLookup } from "./download-candidate.js";
import type { DownloadManager } from "./download-manager.js";
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
    description: "Governed downloads of the candidates other sources offer, and bounded PDF extraction.",
    publisher: "Sciencegate",
    version: "1.0.0",
    kind: "literature",
    enabledByDefault: true,
    transport: { mcpServerId: ARTIFACT_SOURCE_ID },
    // A download or an extraction is an effect, never a result to serve from a cache.
    cache: { enabled: false, ttlSeconds: 0 },
    prompt: {
      summary: "Downloads and full-text extraction of papers other tools offered.",
      citationPolicy: "Cite the record the downloaded or extracted paper belongs to.",
      caveats: [],
    },
    governance: {
      attribution: "Sciencegate",
      license: "see each download's licence",
      termsUrl: "https://www.npmjs.com/package/sciencegate",
      dataClassification: "public",
      // Each download is held to its candidate's source's hosts.
      networkHosts: [],
      maxResponseBytes: 1_048_576,
      rateLimitGroup: ARTIFACT_SOURCE_ID,
    },
    tools: [ARTIFACT_DOWNLOAD_TOOL, PAPER_EXTRACT_TOOL],
  },
  "(the built-ins' manifest)",
);

/** Options of {@link createArtifactSource}. */
export interface ArtifactSourceOptions {
  /** Plans and runs the downloads; its jobs are what extractions read. */
  downloads: DownloadManager;
  /** The candidates' source manifests (`SourceCatalog`): the card names the source. */
  catalog: ManifestLookup;
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
 * The built-ins' in-process source, for `BrokerOptions.inProcess` (`createGovernance` adds it). The
 * broker that serves it records the download manager's runs that no call asked for (a retry).
 * @param options the download manager, catalog, data directory, extraction bounds and clock
 * @returns the source
 * @example
 * const broker = new Broker({ ...options, inProcess: [createArtifactSource({ downloads, catalog, dataDir })] });
 */
export function createArtifactSource(options: ArtifactSourceOptions): InProcessSource {
  const { downloads, catalog } = options;
  const extraction = { ...options, jobs: downloads.jobs, clock: options.clock ?? systemClock };
  return {
    manifest: ARTIFACT_SOURCE_MANIFEST,
    attach: (host) => downloads.recordThrough(host),
    prepare(call) {
      if (call.toolId === ARTIFACT_DOWNLOAD_TOOL_ID) return prepareDownloadCall(downloads, catalog, call);
      if (call.toolId === PAPER_EXTRACT_TOOL_ID) return prepareExtraction(extraction, call);
      // The broker resolves only the manifest's tools.
      throw new GovernanceError("TOOL_UNAVAILABLE", `No built-in tool '${call.toolId}'.`);
    },
  };
}
