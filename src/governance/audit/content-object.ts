/**
 * Content objects and their addresses: the one place that turns a value into stored bytes and a
 * `sha256:` reference, so that a call's objects are serialized and hashed once, whichever store keeps
 * them (the ledger's own table or the file CAS).
 */
import { canonicalJson, GovernanceError, sha256Hex } from "../../core/index.js";

/** The address of a stored object. */
export interface ContentRef {
  /** `sha256:<64 lowercase hex>`; the string the ledger stores. */
  ref: string;
  /** The 64 lowercase hex digits of the SHA-256. */
  sha256: string;
  /** Size in bytes. */
  size: number;
}

/** An object ready to store: its bytes and their address, computed once. */
export interface ContentObject extends ContentRef {
  bytes: Uint8Array;
}

const REF_PATTERN = /^sha256:([0-9a-f]{64})$/;

/**
 * The hex digest inside a content reference.
 * @param ref a `sha256:<64 lowercase hex>` reference
 * @returns the 64 hex digits
 * @throws GovernanceError `INVALID_INPUT` when `ref` has another shape (this also rules out path tricks)
 */
export function parseContentRef(ref: string): string {
  const match = typeof ref === "string" ? REF_PATTERN.exec(ref) : null;
  if (!match?.[1]) {
    throw new GovernanceError(
      "INVALID_INPUT",
      `Malformed content ref ${JSON.stringify(ref)}; expected sha256:<64 lowercase hex>.`,
    );
  }
  return match[1];
}

/**
 * Bytes and address of content.
 * @param data text (stored as UTF-8) or bytes (not copied: do not modify them while they are stored)
 * @returns the object
 * @throws GovernanceError `INVALID_INPUT` when `data` is neither a string nor bytes
 */
export function contentObject(data: string | Uint8Array): ContentObject {
  let bytes: Uint8Array;
  if (typeof data === "string") bytes = Buffer.from(data, "utf8");
  else if (data instanceof Uint8Array) bytes = data;
  else throw new GovernanceError("INVALID_INPUT", "Content must be a string or a Uint8Array.");
  const sha256 = sha256Hex(bytes);
  return { ref: `sha256:${sha256}`, sha256, size: bytes.byteLength, bytes };
}

/**
 * The canonical JSON (sorted keys) of a value as a content object, so equal values share one address.
 * @param value any JSON-compatible value
 * @returns the object
 * @throws GovernanceError `INVALID_INPUT` when `value` cannot be serialized as JSON
 */
export function jsonObject(value: unknown): ContentObject {
  return jsonContent(value, canonicalJson);
}

/**
 * The JSON of a value as produced (keys in their own order) as a content object: for results, whose
 * address only has to name their bytes, where sorting every key of a large result would cost more than
 * the rest of storing it. Use `jsonObject` where equal values must share one address.
 * @param value any JSON-compatible value
 * @returns the object
 * @throws GovernanceError `INVALID_INPUT` when `value` cannot be serialized as JSON
 */
export function jsonObjectAsIs(value: unknown): ContentObject {
  return jsonContent(value, JSON.stringify);
}

function jsonContent(value: unknown, serialize: (value: unknown) => string | undefined): ContentObject {
  let text: string | undefined;
  try {
    text = serialize(value);
  } catch (cause) {
    throw new GovernanceError("INVALID_INPUT", "Value cannot be serialized as JSON.", { cause });
  }
  // JSON.stringify yields undefined for undefined, functions and symbols: nothing storable.
  if (text === undefined) throw new GovernanceError("INVALID_INPUT", "Value has no JSON representation.");
  return contentObject(text);
}

/**
 * Parses a stored object as UTF-8 JSON.
 * @param bytes the stored bytes
 * @param ref the object's reference, for the error message
 * @returns the parsed value
 * @throws GovernanceError `INVALID_INPUT` for content that is not JSON
 */
export function decodeJson<T>(bytes: Uint8Array, ref: string): T {
  try {
    return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8")) as T;
  } catch (cause) {
    throw new GovernanceError("INVALID_INPUT", `Content ${ref} is not JSON.`, { cause });
  }
}

/**
 * The error of a read of an object that is not stored.
 * @param ref the reference asked for
 * @returns a `NOT_FOUND` error naming it in `data.ref`
 */
export function contentNotFound(ref: string): GovernanceError {
  return new GovernanceError("NOT_FOUND", `No content stored under ${ref}.`, { data: { ref } });
}
