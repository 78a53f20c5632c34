export { CandidateSchema, ENVELOPE_KEYS, EnvelopeSchema, RecordSchema } from "./envelope-schema.js";
export type {
  ArtifactCandidate,
  Citation,
  ContentScope,
  CrossReference,
  McpRecord,
  McpToolResult,
} from "./result-types.js";
export { parseRetryAfterMs } from "./retry-after.js";
export { type ToGovernanceErrorOptions, toGovernanceError } from "./to-governance-error.js";
export { toolErrorResult, type UpstreamError, type UpstreamErrorCode } from "./upstream-error.js";
