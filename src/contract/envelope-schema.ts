/**
 * The zod schemas of the normalized result envelope (`McpToolResult`) and its items, as a server must
 * send them for the broker to keep its records and candidates.
 */
import { z } from "zod";
import type { ArtifactCandidate, Citation, CrossReference, McpRecord } from "./result-types.js";

const CitationSchema: z.ZodType<Citation> = z.object({
  label: z.string(),
  url: z.string(),
  identifier: z.string().exactOptional(),
  identifierType: z.string().exactOptional(),
  version: z.string().exactOptional(),
});

const CrossReferenceSchema: z.ZodType<CrossReference> = z.object({
  identifier: z.string(),
  identifierType: z.string(),
  url: z.string().exactOptional(),
});

/** One record of a structured result (`McpRecord`). */
export const RecordSchema: z.ZodType<McpRecord> = z.object({
  identifier: z.string().min(1),
  identifierType: z.string(),
  title: z.string(),
  url: z.string(),
  source: z.string(),
  abstract: z.string().exactOptional(),
  authors: z.array(z.string()).exactOptional(),
  year: z.number().int().exactOptional(),
  citations: z.array(CitationSchema),
  primaryCitation: CitationSchema,
  contentScope: z.enum([
    "metadata",
    "abstract",
    "curated-record",
    "structured-record",
    "analysis-result",
    "full-text",
  ]),
  crossReferences: z.array(CrossReferenceSchema),
  fullTextRetrieved: z.boolean(),
  peerReviewStatus: z.enum(["peer-reviewed", "preprint", "unknown"]).exactOptional(),
  structuredData: z.record(z.string(), z.unknown()).exactOptional(),
  warnings: z.array(z.string()),
});

/** One artifact candidate of a structured result (`ArtifactCandidate`). */
export const CandidateSchema: z.ZodType<ArtifactCandidate> = z.object({
  candidateId: z.string().min(1),
  sourceId: z.string(),
  sourceRecordId: z.string(),
  url: z.string(),
  format: z.string(),
  kind: z.enum(["paper", "sequence", "structure", "dataset", "supplement", "other"]),
  license: z.string().exactOptional(),
  sizeBytes: z.number().int().nonnegative().exactOptional(),
  checksum: z.object({ algorithm: z.enum(["sha256", "md5"]), value: z.string() }).exactOptional(),
  filename: z.string().exactOptional(),
});

/**
 * The envelope of a structured result. Items are validated one by one with `RecordSchema` and
 * `CandidateSchema`, so that one bad record is dropped instead of failing the call.
 */
export const EnvelopeSchema = z.looseObject({
  records: z.array(z.unknown()),
  artifacts: z.array(z.unknown()).exactOptional(),
  warnings: z.array(z.string()).default([]),
  data: z.record(z.string(), z.unknown()).exactOptional(),
  sourceVersion: z.string().exactOptional(),
});

/** Envelope fields that the broker sets itself; anything else a server adds is kept under `data`. */
export const ENVELOPE_KEYS: ReadonlySet<string> = new Set([
  ...Object.keys(EnvelopeSchema.shape),
  "sourceId",
  "toolId",
  "attribution",
  "license",
  "retrievedAt",
  "untrusted",
]);
