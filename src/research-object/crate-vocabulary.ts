/**
 * The words of a Sciencegate research object: the RO-Crate 1.1 context, the profile it follows, the
 * few terms of its own (each defined inside the crate as an `rdf:Property`), and the `@id` of every kind
 * of entity, so that the exporter, the verifier, the replay and the preview name things one way.
 */

/** The RO-Crate 1.1 JSON-LD context, by reference. */
export const RO_CRATE_CONTEXT = "https://w3id.org/ro/crate/1.1/context";
/** The RO-Crate specification the metadata descriptor conforms to. */
export const RO_CRATE_SPEC = "https://w3id.org/ro/crate/1.1";
/** The Process Run Crate profile: one `CreateAction` per tool execution, the tool as its instrument. */
export const PROCESS_RUN_CRATE = "https://w3id.org/ro/wfrun/process/0.5";
/** The metadata file, at the crate's root. */
export const METADATA_FILE = "ro-crate-metadata.json";
/** The human-readable preview, at the crate's root. */
export const PREVIEW_FILE = "ro-crate-preview.html";
/** Where Sciencegate's own terms live (the RO-Crate community namespace for added terms). */
export const TERMS_NAMESPACE = "https://w3id.org/ro/terms/sciencegate#";

/** Sciencegate's terms and what each one means; the crate defines each one as an `rdf:Property`. */
export const SCIENCEGATE_TERMS = {
  sessionId: "The governance session of a call or an authorization (a LangGraph thread id, usually).",
  threadId: "The LangGraph thread of a call or an authorization.",
  toolCallId: "The model's tool call id, with which a call is replayed on resume.",
  runId: "The LangGraph run of a call.",
  sourceId: "The governed source (its manifest id).",
  toolId: "The tool of the source (its manifest id).",
  serverId: "The MCP server that offers the tool.",
  mcpToolName: "The tool's name on its MCP server.",
  attempts: "How many times the call was sent upstream (retries included); 0 when it was refused first.",
  cacheHit: "The call was answered from the broker's result cache, not upstream.",
  queueWaitMs: "Milliseconds the call waited in its source's rate-limit queue.",
  durationMs: "Milliseconds from the call's start to its outcome.",
  errorCode: "The GovernanceError code of a failed call.",
  retryable: "Whether the failed call may succeed when repeated.",
  errorAttempts: "The attempts a failed call's error counted, when they differ from the call's.",
  retryAfterMs: "How long the provider asked to wait before a retry, in milliseconds.",
  catalogRevision: "The live catalog's revision when the call ran.",
  toolDefinitionHash: "SHA-256 of the live MCP tool definition the call was matched to.",
  inputHash: "SHA-256 of the canonical JSON of the validated arguments (how replay finds a recorded call).",
  request: "The request object of a call: source, tool and the arguments as given.",
  rawResult: "The MCP server's raw answer to the call.",
  normalizedResult: "The normalized result the broker returned (envelope checked, prompt tags neutralized).",
  cachedRawResult:
    "For a cache hit: the raw answer of the earlier call whose normalized result the cache returned.",
  authorization: "The authorization row that let the call run (or refused it).",
  decisionSource:
    "What decided an authorization: user_once, user_grant, user_always, existing_grant, always_allow, user_deny, policy_not_dangerous, operator_console, ...",
  permissionAction: "The permission action of an authorization, e.g. pubmed:search or download.",
  grantScope: "The grant scope (resource) of an authorization, e.g. artifact:arxiv.",
  epoch: "The session's permission epoch after the authorization.",
  dataClassification: "public, private or controlled, as the source's manifest declares.",
  redistributed:
    "Whether the crate holds the content (true) or only references it by hash because its licence or classification forbids copying (false).",
  citationLabel: "The citation label of a record, e.g. [PMID:22663011].",
  needsVisionPages: "Pages of an extracted PDF without extractable text, which only a vision model can read.",
} as const;

/** One of Sciencegate's own terms. */
export type ScienceGateTerm = keyof typeof SCIENCEGATE_TERMS;

/**
 * The crate's `@context`: RO-Crate 1.1 by reference, plus `sha256` (as RO-Crate 1.2 and schema.org name
 * it) and Sciencegate's terms.
 */
export const CRATE_CONTEXT: readonly [string, Readonly<Record<string, string>>] = [
  RO_CRATE_CONTEXT,
  {
    sha256: "http://schema.org/sha256",
    ...Object.fromEntries(Object.keys(SCIENCEGATE_TERMS).map((term) => [term, `${TERMS_NAMESPACE}${term}`])),
  },
];

/** The `@id` of each kind of entity. */
export const entityIds = {
  root: "./",
  software: "#sciencegate",
  session: "#session",
  answerReview: "#answer-review",
  ratingAccepted: "#rating-accepted",
  ratingRefused: "#rating-refused",
  answerFile: "answer.md",
  reviewFile: "review.json",
  catalogFile: "catalog/tools.json",
  invocation: (invocationId: string) => `#invocation-${fragment(invocationId)}`,
  authorization: (authorizationId: string) => `#authorization-${fragment(authorizationId)}`,
  decider: (kind: DeciderKind) => `#decided-by-${kind}`,
  tool: (sourceId: string, toolId: string) => `#tool-${fragment(sourceId)}-${fragment(toolId)}`,
  source: (sourceId: string) => `#source-${fragment(sourceId)}`,
  record: (sourceId: string, identifier: string) => `#record-${fragment(sourceId)}-${fragment(identifier)}`,
  fact: (factId: string) => `#${fragment(factId)}`,
  factReview: (factId: string) => `#review-${fragment(factId)}`,
  license: (text: string) => licenseId(text),
  object: (sha256: string) => `objects/${sha256}.json`,
  withheld: (sha256: string) => `#withheld-${sha256}`,
  download: (sha256: string, extension: string) => `downloads/${sha256}${extension}`,
  paperText: (pdfSha256: string) => `papers/${pdfSha256}/fulltext.md`,
  paperManifest: (pdfSha256: string) => `papers/${pdfSha256}/manifest.json`,
  manifest: (sourceId: string) => `manifests/${fileSegment(sourceId)}.json`,
  term: (term: ScienceGateTerm) => `${TERMS_NAMESPACE}${term}`,
} as const;

/** Who or what decides an authorization, as the crate groups them. */
export type DeciderKind = "person" | "operator" | "grant" | "policy";

/**
 * The kind of decider behind a `decisionSource`.
 * @param decisionSource the authorization row's `decisionSource`
 * @returns a person answering a card, an operator (console or CLI), an earlier grant, or the policy
 */
export function deciderOf(decisionSource: string): DeciderKind {
  if (decisionSource.startsWith("user_")) return "person";
  if (decisionSource.startsWith("operator")) return "operator";
  if (decisionSource.endsWith("_grant")) return "grant";
  return "policy";
}

const SPDX_ID = /^[A-Za-z0-9][A-Za-z0-9.+-]*$/;

/**
 * The `@id` of a licence: the URL itself when the licence is one, the SPDX page for an SPDX-shaped id
 * (`CC0-1.0`), else a local entity for a licence stated in words.
 */
function licenseId(text: string): string {
  if (/^https?:\/\/[^\s]+$/.test(text)) return text;
  if (SPDX_ID.test(text) && /\d/.test(text)) return `https://spdx.org/licenses/${text}`;
  return `#license-${fragment(
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-|-$/g, ""),
  ).slice(0, 80)}-${shortHash(text)}`;
}

/** A value made safe for a URI fragment: unreserved characters stay, everything else is percent-encoded. */
function fragment(value: string): string {
  return encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
}

/** A value made safe as one file name segment (letters, digits, `.`, `_`, `-`). */
function fileSegment(value: string): string {
  const safe = value.replace(/[^A-Za-z0-9._-]/g, "_").replace(/^\.+/, "_");
  return safe === "" ? "_" : safe;
}

/** A short, stable digest of a text (FNV-1a, 32 bits), so two licences with one slug keep two ids. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, "0");
}
