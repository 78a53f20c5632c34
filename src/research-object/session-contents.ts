/**
 * What a session left behind, read for export: its ledger rows and authorizations (read methods only),
 * every object they name (re-hashed; a missing or changed one is kept as a reference with the reason),
 * the raw answer behind each cache hit, and the downloaded files and extractions of its built-in calls
 * (read from the data directory without following links).
 */
import { constants } from "node:fs";
import { lstat, open, realpath } from "node:fs/promises";
import { join, resolve } from "node:path";
import { readPaperManifest, readPaperText } from "../artifacts/index.js";
import type { ArtifactCandidate, McpRecord, McpToolResult } from "../contract/index.js";
import { GovernanceError, isGovernanceError, sha256Hex } from "../core/index.js";
import {
  type AuthorizationRecord,
  type ContentStore,
  type InvocationRecord,
  type LedgerReader,
  parseContentRef,
} from "../governance/audit/index.js";

/**
 * The ledger methods an export reads with: rows by filter and id, and authorizations (never a write).
 */
export type ResearchObjectLedger = Pick<
  LedgerReader,
  "query" | "get" | "getAuthorization" | "listAuthorizations"
>;

/** `toolId` of a download's ledger row. */
export const DOWNLOAD_TOOL_ID = "artifact_download";
/** `toolId` of an extraction's ledger row. */
export const EXTRACTION_TOOL_ID = "paper_extract_pdf";

/** A stored object as read: its hash, size and bytes (absent when missing or changed). */
export interface ReadObject {
  sha256: string;
  size: number | undefined;
  bytes: Uint8Array | undefined;
  /** Why `bytes` is absent. */
  unavailable?: string | undefined;
  /** The object parsed as JSON, when it is. */
  json?: unknown;
}

/** A completed download of the session and its file. */
export interface SessionDownload {
  invocationId: string;
  sourceId: string;
  sourceRecordId: string;
  url: string;
  /** The file's name in the workspace. */
  fileName: string;
  format: string;
  /** The candidate's licence, when it stated one. */
  licence: string | undefined;
  file: ReadObject;
}

/** A successful extraction of the session, with its text and manifest. */
export interface SessionExtraction {
  invocationId: string;
  sourceId: string;
  /** SHA-256 of the PDF that was parsed. */
  pdfSha256: string;
  pageCount: number;
  needsVisionPages: number[];
  text: ReadObject;
  manifest: ReadObject;
}

/** Everything an export of one session reads. */
export interface SessionContents {
  rows: InvocationRecord[];
  authorizations: AuthorizationRecord[];
  /** Every object named by a row (and each cache hit's origin raw answer), by `sha256:` ref. */
  objects: Map<string, ReadObject>;
  /** For a cache hit (by its invocation id): the raw answer of the call its cached result came from. */
  cacheOrigins: Map<string, string>;
  downloads: SessionDownload[];
  extractions: SessionExtraction[];
}

/** Bound of a downloaded file read for a crate (the download manager's own default cap). */
const MAX_FILE_BYTES = 50 * 1024 * 1024;
const PAGE = 1_000;
const NO_FOLLOW = constants.O_NOFOLLOW ?? 0;

/**
 * Reads a session (or one thread of it) for export.
 * @param source the ledger (read methods), the store and the data directory
 * @param session the session, and the thread to keep only its rows
 * @returns the rows, authorizations, objects, downloads and extractions
 * @throws GovernanceError `NOT_FOUND` when the session has no recorded call
 */
export async function readSessionContents(
  source: { ledger: ResearchObjectLedger; store: ContentStore; dataDir: string },
  session: { sessionId: string; threadId?: string | undefined },
): Promise<SessionContents> {
  const { ledger, store, dataDir } = source;
  const rows = await sessionRows(ledger, session.sessionId, session.threadId);
  if (rows.length === 0) {
    throw new GovernanceError(
      "NOT_FOUND",
      `No governed call is recorded for session '${session.sessionId}'${session.threadId ? ` and thread '${session.threadId}'` : ""}.`,
      { data: { sessionId: session.sessionId } },
    );
  }
  const objects = new Map<string, ReadObject>();
  const read = async (ref: string): Promise<ReadObject> => {
    let object = objects.get(ref);
    if (object === undefined) {
      object = await readObject(store, ref);
      objects.set(ref, object);
    }
    return object;
  };
  for (const row of rows) {
    for (const ref of [row.requestRef, row.rawRef, row.normalizedRef]) if (ref) await read(ref);
  }
  const cacheOrigins = new Map<string, string>();
  // Most cache hits repeat a call of the same session: its rows are searched before the ledger.
  const rawOf = new Map<string, string>();
  for (const row of rows) {
    if (row.rawRef && row.normalizedRef && !rawOf.has(row.normalizedRef))
      rawOf.set(row.normalizedRef, row.rawRef);
  }
  for (const row of rows) {
    if (!row.cacheHit || row.rawRef !== undefined || row.normalizedRef === undefined) continue;
    const sameSession = rawOf.get(row.normalizedRef);
    if (sameSession) {
      cacheOrigins.set(row.invocationId, sameSession);
      continue;
    }
    const origin = await cacheOrigin(ledger, row);
    if (origin?.rawRef) {
      await read(origin.rawRef);
      cacheOrigins.set(row.invocationId, origin.rawRef);
    }
  }
  const downloads: SessionDownload[] = [];
  const extractions: SessionExtraction[] = [];
  for (const row of rows) {
    if (row.status !== "ok" || row.normalizedRef === undefined) continue;
    const entry = objects.get(row.normalizedRef)?.json as Record<string, unknown> | undefined;
    if (row.toolId === DOWNLOAD_TOOL_ID && entry?.kind === DOWNLOAD_TOOL_ID && entry.status === "completed") {
      const download = await readDownload(ledger, read, dataDir, row, entry);
      if (download) downloads.push(download);
    }
    if (
      row.toolId === EXTRACTION_TOOL_ID &&
      entry?.kind === EXTRACTION_TOOL_ID &&
      entry.fullTextRetrieved === true
    ) {
      const extraction = await readExtraction(dataDir, row, entry);
      if (extraction) extractions.push(extraction);
    }
  }
  return {
    rows,
    authorizations: await sessionAuthorizations(ledger, rows, session),
    objects,
    cacheOrigins,
    downloads,
    extractions,
  };
}

async function sessionRows(
  ledger: ResearchObjectLedger,
  sessionId: string,
  threadId: string | undefined,
): Promise<InvocationRecord[]> {
  const rows: InvocationRecord[] = [];
  let after: string | undefined;
  for (;;) {
    const page = await ledger.query({ sessionId, threadId, order: "asc", limit: PAGE, after });
    rows.push(...page);
    if (page.length < PAGE) return rows;
    after = page.at(-1)?.invocationId;
  }
}

/** The session's authorizations (of the thread, when one is given), and any a row names. */
async function sessionAuthorizations(
  ledger: ResearchObjectLedger,
  rows: readonly InvocationRecord[],
  session: { sessionId: string; threadId?: string | undefined },
): Promise<AuthorizationRecord[]> {
  const named = new Set(rows.flatMap((row) => (row.authorizationId ? [row.authorizationId] : [])));
  const listed = (await ledger.listAuthorizations({ sessionId: session.sessionId })).filter(
    (auth) => session.threadId === undefined || auth.threadId === session.threadId || named.has(auth.id),
  );
  const have = new Set(listed.map((auth) => auth.id));
  for (const id of named) {
    if (have.has(id)) continue;
    const auth = await ledger.getAuthorization(id);
    if (auth?.sessionId === session.sessionId) listed.push(auth);
  }
  return listed;
}

/** The earlier call whose normalized result a cache hit returned: same tool and result, with a raw answer. */
async function cacheOrigin(
  ledger: ResearchObjectLedger,
  hit: InvocationRecord,
): Promise<InvocationRecord | undefined> {
  const earlier = await ledger.query({
    sourceId: hit.sourceId,
    toolId: hit.toolId,
    status: "ok",
    cacheHit: false,
    startedBefore: hit.finishedAt,
    order: "desc",
    limit: 500,
  });
  return earlier.find((row) => row.normalizedRef === hit.normalizedRef && row.rawRef !== undefined);
}

async function readObject(store: ContentStore, ref: string): Promise<ReadObject> {
  const sha256 = parseContentRef(ref);
  let bytes: Uint8Array;
  try {
    bytes = await store.get(ref);
  } catch (error) {
    if (isGovernanceError(error) && error.code === "NOT_FOUND") {
      return {
        sha256,
        size: undefined,
        bytes: undefined,
        unavailable: "it is missing from the content store",
      };
    }
    throw error;
  }
  if (sha256Hex(bytes) !== sha256) {
    return {
      sha256,
      size: undefined,
      bytes: undefined,
      unavailable: "its stored bytes no longer match their SHA-256 (changed after they were recorded)",
    };
  }
  return { sha256, size: bytes.byteLength, bytes, json: parseJson(bytes) };
}

async function readDownload(
  ledger: ResearchObjectLedger,
  read: (ref: string) => Promise<ReadObject>,
  dataDir: string,
  row: InvocationRecord,
  entry: Record<string, unknown>,
): Promise<SessionDownload | undefined> {
  const checksum = typeof entry.actualChecksum === "string" ? entry.actualChecksum : undefined;
  const destination = typeof entry.destinationPath === "string" ? entry.destinationPath : undefined;
  if (!checksum?.startsWith("sha256:") || destination === undefined) return undefined;
  const sha256 = checksum.slice("sha256:".length);
  // The candidate (and its licence) is in the result of the call that offered it.
  let candidate: ArtifactCandidate | undefined;
  if (typeof entry.mcpInvocationId === "string") {
    const offer = await ledger.get(entry.mcpInvocationId);
    const result = offer?.normalizedRef
      ? ((await read(offer.normalizedRef)).json as McpToolResult)
      : undefined;
    candidate = result?.artifacts?.find((c) => c?.candidateId === entry.candidateId);
  }
  const fileName = destination.split("/").at(-1) ?? "download";
  let file: ReadObject;
  try {
    const bytes = await readWorkspaceFile(dataDir, destination);
    file =
      sha256Hex(bytes) === sha256
        ? { sha256, size: bytes.byteLength, bytes }
        : {
            sha256,
            size: undefined,
            bytes: undefined,
            unavailable: "the file changed after it was downloaded",
          };
  } catch (error) {
    if (!isGovernanceError(error)) throw error;
    file = { sha256, size: undefined, bytes: undefined, unavailable: error.message };
  }
  return {
    invocationId: row.invocationId,
    sourceId: String(entry.sourceId ?? row.sourceId),
    sourceRecordId: String(entry.sourceRecordId ?? ""),
    url: String(entry.url ?? ""),
    fileName,
    format: candidate?.format ?? (fileName.split(".").at(-1) || "bin"),
    licence: candidate?.license,
    file,
  };
}

async function readExtraction(
  dataDir: string,
  row: InvocationRecord,
  entry: Record<string, unknown>,
): Promise<SessionExtraction | undefined> {
  const jobId = entry.artifactJobId;
  const pdfSha256 = entry.inputSha256;
  if (typeof jobId !== "string" || typeof pdfSha256 !== "string" || !/^[0-9a-f]{64}$/.test(pdfSha256)) {
    return undefined;
  }
  const asObject = (bytes: Uint8Array): ReadObject => ({
    sha256: sha256Hex(bytes),
    size: bytes.byteLength,
    bytes,
  });
  const unreadable = (error: unknown): ReadObject => {
    if (!isGovernanceError(error)) throw error;
    return { sha256: "", size: undefined, bytes: undefined, unavailable: error.message };
  };
  const text = await readPaperText(dataDir, jobId).then(
    (t) => asObject(new TextEncoder().encode(t)),
    unreadable,
  );
  let needsVisionPages: number[] = [];
  const manifest = await readPaperManifest(dataDir, jobId).then((m) => {
    needsVisionPages = m.pages.filter((page) => page.needsVision).map((page) => page.page);
    return asObject(new TextEncoder().encode(`${JSON.stringify(m, null, 2)}\n`));
  }, unreadable);
  return {
    invocationId: row.invocationId,
    sourceId: row.sourceId,
    pdfSha256,
    pageCount: typeof entry.pageCount === "number" ? entry.pageCount : 0,
    needsVisionPages,
    text,
    manifest,
  };
}

/**
 * A downloaded file, by its path relative to `<dataDir>/workspace`, never through a link and at most
 * `MAX_FILE_BYTES`.
 */
async function readWorkspaceFile(dataDir: string, destinationPath: string): Promise<Uint8Array> {
  const refuse = (why: string) =>
    new GovernanceError("INVALID_INPUT", `The downloaded file ${destinationPath} was not read: ${why}.`);
  const segments = destinationPath.split("/");
  if (segments.some((s) => s === "" || s === "." || s === ".."))
    throw refuse("its path leaves the workspace");
  const root = await realpath(resolve(dataDir, "workspace")).catch(() => undefined);
  if (root === undefined) throw refuse("the workspace is gone");
  let dir = root;
  for (const segment of segments.slice(0, -1)) {
    dir = join(dir, segment);
    const info = await lstat(dir).catch(() => undefined);
    if (info === undefined) throw refuse("it is gone");
    if (!info.isDirectory() || info.isSymbolicLink()) throw refuse(`${dir} is a link or not a folder`);
  }
  const handle = await open(join(dir, segments.at(-1) as string), constants.O_RDONLY | NO_FOLLOW).catch(
    (error: NodeJS.ErrnoException) => {
      throw refuse(error.code === "ENOENT" ? "it is gone" : `it cannot be opened (${error.code})`);
    },
  );
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw refuse("it is not a regular file");
    if (info.size > MAX_FILE_BYTES) throw refuse(`it has more than ${MAX_FILE_BYTES} bytes`);
    return new Uint8Array(await handle.readFile());
  } finally {
    await handle.close();
  }
}

function parseJson(bytes: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    return undefined;
  }
}

/**
 * The licences the records of a normalized result state for themselves (`structuredData.license`).
 * @param result a normalized result
 * @returns the licence texts
 */
export function recordLicences(result: unknown): string[] {
  const records = (result as { records?: unknown } | undefined)?.records;
  if (!Array.isArray(records)) return [];
  return records.flatMap((record: McpRecord) => {
    const licence = record?.structuredData?.license;
    return typeof licence === "string" && licence !== "" ? [licence] : [];
  });
}
