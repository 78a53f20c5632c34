/**
 * Stored objects in the console: reading a ledger row's CAS object with its integrity (do the bytes
 * still hash to the address the row recorded?), showing it as text, and `GET /objects/:ref`, the whole
 * object as plain text.
 */
import { GovernanceError, isGovernanceError, sha256Hex } from "../core/index.js";
import { type ContentStore, parseContentRef } from "../governance/audit/index.js";
import type { ConsoleRoute } from "./console-route.js";
import { bytes as byteCount } from "./console-ui.js";

/** The most bytes `/objects/:ref` serves; a larger object is cut there, with a note at the end. */
export const OBJECT_SERVE_LIMIT = 32 * 1024 * 1024;

/** Objects up to this size are parsed to be shown as indented JSON; larger ones are shown as stored. */
const PRETTY_PRINT_LIMIT = 8 * 1024 * 1024;

/** Whether a row's object is there and unaltered. */
export type ObjectIntegrity = "verified" | "mismatch" | "missing" | "malformed";

/** A row's object as the console read it. */
export interface StoredObject {
  ref: string;
  integrity: ObjectIntegrity;
  /** The stored bytes (present unless `missing` or `malformed`). */
  bytes?: Uint8Array;
}

/**
 * Reads an object and re-hashes its bytes against its address.
 * @param store the runtime's store (the ledger's objects and the CAS)
 * @param ref the row's reference
 * @returns the bytes and `verified`, `mismatch` (altered after it was written), `missing` or `malformed`
 */
export async function loadObject(store: ContentStore, ref: string): Promise<StoredObject> {
  let hex: string;
  try {
    hex = parseContentRef(ref);
  } catch {
    return { ref, integrity: "malformed" };
  }
  try {
    const bytes = await store.get(ref);
    return { ref, integrity: sha256Hex(bytes) === hex ? "verified" : "mismatch", bytes };
  } catch (error) {
    if (isGovernanceError(error) && error.code === "NOT_FOUND") return { ref, integrity: "missing" };
    throw error;
  }
}

/**
 * An object's bytes as text: indented JSON when they parse (and are not huge), else the bytes as UTF-8.
 * @param bytes the stored bytes
 * @returns the text, and the parsed value when it was JSON
 */
export function objectText(bytes: Uint8Array): { text: string; json: boolean; value?: unknown } {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8");
  if (bytes.byteLength > PRETTY_PRINT_LIMIT) return { text, json: false };
  try {
    const value: unknown = JSON.parse(text);
    return { text: JSON.stringify(value, null, 2), json: true, value };
  } catch {
    return { text, json: false };
  }
}

/** `GET /objects/:ref`: the whole object (up to `OBJECT_SERVE_LIMIT`) as `text/plain`. */
export const objectRoutes: readonly ConsoleRoute[] = [
  {
    method: "GET",
    pattern: "/objects/:ref",
    async handle(request, context) {
      const ref = request.params.ref ?? "";
      if (!/^sha256:[0-9a-f]{64}$/.test(ref)) {
        throw new GovernanceError(
          "INVALID_INPUT",
          "An object is named by its content reference, sha256:<64 lowercase hex>, as a ledger row records it.",
        );
      }
      const stored = await context.governance.store.get(ref);
      const hex = ref.slice("sha256:".length);
      let body: string | Uint8Array;
      let name = `${hex}.json`;
      if (stored.byteLength > OBJECT_SERVE_LIMIT) {
        const note = `\n\n[Cut at ${byteCount(OBJECT_SERVE_LIMIT)} of ${byteCount(stored.byteLength)}: the console serves at most ${OBJECT_SERVE_LIMIT} bytes of an object.]\n`;
        body = Buffer.concat([stored.subarray(0, OBJECT_SERVE_LIMIT), Buffer.from(note)]);
        name = `${hex}.txt`;
      } else {
        const { text, json } = objectText(stored);
        body = text;
        if (!json) name = `${hex}.txt`;
      }
      return {
        kind: "file",
        contentType: "text/plain; charset=utf-8",
        body,
        headers: {
          "Content-Disposition": `inline; filename="${name}"`,
          // Whether the bytes served still hash to the address asked for.
          "X-Sciencegate-Integrity": sha256Hex(stored) === hex ? "verified" : "mismatch",
        },
      };
    },
  },
];
