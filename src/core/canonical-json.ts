import * as crypto from "node:crypto";
import { createHash } from "node:crypto";

/**
 * JSON with object keys sorted at every level, so equal values always serialize equally.
 * `undefined` properties are dropped, as `JSON.stringify` does.
 * @param value any JSON-compatible value
 * @returns the canonical JSON text
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    // A null prototype keeps an own "__proto__" key as data instead of setting the prototype.
    const out: Record<string, unknown> = Object.create(null);
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v !== undefined) out[key] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/**
 * Hex SHA-256 of a string or bytes.
 * @param data text (UTF-8) or bytes
 */
export function sha256Hex(data: string | Uint8Array): string {
  return oneShotHash ? oneShotHash("sha256", data, "hex") : createHash("sha256").update(data).digest("hex");
}

/** `crypto.hash` (Node 20.12 and later): one call, no Hash object, for the many small objects of a call. */
const oneShotHash = (
  crypto as { hash?: (algorithm: string, data: string | Uint8Array, encoding: "hex") => string }
).hash;

/**
 * Hex SHA-256 of the canonical JSON of `value`.
 * @param value any JSON-compatible value
 */
export function hashCanonical(value: unknown): string {
  return sha256Hex(canonicalJson(value));
}
