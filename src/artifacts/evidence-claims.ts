/** The input of evidence review: claims and the governed invocations they cite, validated with zod. */
import { z } from "zod";
import { GovernanceError } from "../core/index.js";

/** One piece of evidence: a governed invocation and, optionally, which of its records and URL is cited. */
export interface Evidence {
  /** The ledger row of the governed call (MCP or local function tool) that returned the evidence. */
  mcpInvocationId: string;
  /** The cited record's `identifier` (or a citation identifier); prefixes and versions are tolerated. */
  recordId?: string;
  /** The cited URL: the record's `url`, a citation's or the primary citation's. */
  url?: string;
  /** The `artifact_download` job whose extraction backs a full-text claim. */
  artifactJobId?: string;
}

/** A statement and the evidence it rests on. */
export interface Claim {
  /** @default `claim-<n>` (1-based position) */
  id?: string;
  text: string;
  /** The claim rests on the paper's full text, not its abstract or metadata. @default false */
  fullText?: boolean;
  evidence: Evidence[];
}

// An empty string for an optional field means absent (house rule), so it is dropped before the checks.
const optionalText = z
  .string()
  .transform((value) => (value.trim() === "" ? undefined : value))
  .optional();

const EvidenceSchema = z.strictObject({
  mcpInvocationId: z.string().trim().min(1, "must be a non-empty invocation id"),
  recordId: optionalText,
  url: optionalText,
  artifactJobId: optionalText,
});

const ClaimSchema = z.strictObject({
  id: optionalText,
  text: z.string().trim().min(1, "must be a non-empty statement"),
  fullText: z.boolean().optional(),
  evidence: z.array(EvidenceSchema).min(1, "must cite at least one governed invocation"),
});

const ClaimsSchema = z.array(ClaimSchema);

/**
 * Validates claims and returns clean copies: absent optional fields are left out, never `undefined`.
 * Unknown fields are refused, so a misspelled `recordID` cannot silently weaken a check.
 * @param claims the caller's claims
 * @returns the claims, each with its id
 * @throws GovernanceError `INVALID_INPUT` naming each bad field by path (`claims.0.evidence.1.url`),
 *   listed in `data.issues`
 */
export function parseClaims(claims: unknown): (Claim & { id: string })[] {
  const parsed = ClaimsSchema.safeParse(claims);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((issue) => ({
      path: ["claims", ...issue.path.map(String)].join("."),
      message: issue.message,
    }));
    const list = issues.map((issue) => `${issue.path}: ${issue.message}`).join("; ");
    throw new GovernanceError("INVALID_INPUT", `Invalid claims: ${list}.`, { data: { issues } });
  }
  return parsed.data.map((claim, index) => {
    const clean: Claim & { id: string } = {
      id: claim.id ?? `claim-${index + 1}`,
      text: claim.text,
      evidence: claim.evidence.map((item) => {
        const evidence: Evidence = { mcpInvocationId: item.mcpInvocationId };
        if (item.recordId !== undefined) evidence.recordId = item.recordId;
        if (item.url !== undefined) evidence.url = item.url;
        if (item.artifactJobId !== undefined) evidence.artifactJobId = item.artifactJobId;
        return evidence;
      }),
    };
    if (claim.fullText !== undefined) clean.fullText = claim.fullText;
    return clean;
  });
}
