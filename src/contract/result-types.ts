/** The normalized result contract: what every governed tool call returns. */

/** How much of a work the record really carries. */
export type ContentScope =
  | "metadata"
  | "abstract"
  | "curated-record"
  | "structured-record"
  | "analysis-result"
  | "full-text";

/** A citation of a record. `url` must be HTTPS on a host the source's manifest allows. */
export interface Citation {
  /** Markdown label such as `[PMID:123](https://pubmed.ncbi.nlm.nih.gov/123/)`. */
  label: string;
  url: string;
  identifier?: string;
  identifierType?: string;
  /** A version of what was cited (for example the SHA-256 of a wiki page response). */
  version?: string;
}

/** A reference from one record to an identifier elsewhere (DOI, PMCID, UniProt accession, ...). */
export interface CrossReference {
  identifier: string;
  identifierType: string;
  url?: string;
}

/** One normalized item of a result. */
export interface McpRecord {
  identifier: string;
  identifierType: string;
  title: string;
  url: string;
  source: string;
  abstract?: string;
  authors?: string[];
  year?: number;
  citations: Citation[];
  primaryCitation: Citation;
  contentScope: ContentScope;
  crossReferences: CrossReference[];
  fullTextRetrieved: boolean;
  peerReviewStatus?: "peer-reviewed" | "preprint" | "unknown";
  structuredData?: Record<string, unknown>;
  warnings: string[];
}

/** A downloadable file that a `prepare_*` tool found; never downloaded by the query itself. */
export interface ArtifactCandidate {
  candidateId: string;
  sourceId: string;
  sourceRecordId: string;
  url: string;
  format: string;
  kind: "paper" | "sequence" | "structure" | "dataset" | "supplement" | "other";
  license?: string;
  sizeBytes?: number;
  checksum?: { algorithm: "sha256" | "md5"; value: string };
  filename?: string;
}

/** What every governed tool call returns to the model. External content is always untrusted data. */
export interface McpToolResult {
  records: McpRecord[];
  artifacts?: ArtifactCandidate[];
  warnings: string[];
  data?: Record<string, unknown>;
  attribution: string;
  license: string;
  retrievedAt: string;
  sourceId: string;
  sourceVersion?: string;
  toolId: string;
  untrusted: true;
}
