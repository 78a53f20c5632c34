/**
 * The ledger's last resort: batches the `LedgerWriter` could not commit within its retry bound (the
 * database unreachable) are kept in a folder on the local disk, one file per batch, written and
 * synced before the calls they record return, and replayed into the store once it answers again (see
 * ARCHITECTURE.md, "Record"). A file is complete once it has its name (written under a temporary name,
 * synced, renamed), so any process that opens the same folder may replay it; replay is idempotent
 * (rows are keyed by their ids), so two replaying at once store each row once.
 */
import { randomUUID } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../core/index.js";
import type { ContentObject } from "./content-object.js";
import type { AuthorizationRecord, InvocationRecord, LedgerWrite } from "./ledger.js";

/** A spooled batch on disk. */
interface SpoolFile {
  version: 1;
  writes: {
    kind: LedgerWrite["kind"];
    record: InvocationRecord | AuthorizationRecord;
    objects?: { sha256: string; bytes: string }[];
  }[];
}

const SUFFIX = ".batch.json";

/** A folder of spooled batches. All methods are synchronous: a process exit step uses them too. */
export class LedgerSpool {
  /** The folder (created, private to the user, on the first write). */
  readonly dir: string;

  /** @param dir the folder, e.g. `<dataDir>/ledger-spool` */
  constructor(dir: string) {
    this.dir = dir;
  }

  /**
   * Writes one batch and syncs it (file and folder) before returning.
   * @param writes the batch
   * @returns the file's name
   * @throws whatever the file system throws (nothing is then spooled)
   */
  write(writes: readonly LedgerWrite[]): string {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const body: SpoolFile = {
      version: 1,
      writes: writes.map((write) => ({
        kind: write.kind,
        record: write.record,
        objects: (write.objects ?? []).map((o) => ({
          sha256: o.sha256,
          bytes: toBuffer(o.bytes).toString("base64"),
        })),
      })),
    };
    // Names sort in the order batches were spooled, so replay keeps append order.
    const name = `${Date.now().toString().padStart(15, "0")}-${randomUUID()}${SUFFIX}`;
    const temporary = join(this.dir, `.${name}.tmp`);
    const fd = openSync(temporary, "wx", 0o600);
    try {
      writeSync(fd, JSON.stringify(body));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, join(this.dir, name));
    syncFolder(this.dir);
    return name;
  }

  /** The spooled batches, oldest first (none when the folder does not exist). */
  list(): string[] {
    try {
      return readdirSync(this.dir)
        .filter((name) => name.endsWith(SUFFIX) && !name.startsWith("."))
        .sort();
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return [];
      throw error;
    }
  }

  /**
   * Reads one batch back.
   * @param name a name from `list()`
   * @returns its writes, or `undefined` when another process replayed and removed it meanwhile
   * @throws Error for a file that is not a spooled batch or an object whose bytes do not match its address
   */
  read(name: string): LedgerWrite[] | undefined {
    let text: string;
    try {
      text = readFileSync(join(this.dir, name), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
    const body = JSON.parse(text) as SpoolFile;
    if (body.version !== 1 || !Array.isArray(body.writes)) throw new Error(`${name} is not a spooled batch.`);
    return body.writes.map((write): LedgerWrite => {
      const objects = (write.objects ?? []).map((o): ContentObject => {
        const bytes = Buffer.from(o.bytes, "base64");
        if (sha256Hex(bytes) !== o.sha256)
          throw new Error(`${name} holds an object that does not match sha256:${o.sha256}.`);
        return { ref: `sha256:${o.sha256}`, sha256: o.sha256, size: bytes.byteLength, bytes };
      });
      return write.kind === "authorization"
        ? { kind: "authorization", record: write.record as AuthorizationRecord, objects }
        : { kind: "invocation", record: write.record as InvocationRecord, objects };
    });
  }

  /**
   * Removes a replayed batch (already removed is fine).
   * @param name a name from `list()`
   */
  remove(name: string): void {
    rmSync(join(this.dir, name), { force: true });
  }

  /**
   * Keeps a batch the store refused (a row it will never take) out of the replay, under a name that
   * says so, for an operator to read.
   * @param name a name from `list()`
   */
  setAside(name: string): void {
    try {
      renameSync(join(this.dir, name), join(this.dir, `${name}.refused`));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
  }
}

/** A rename is durable once its folder is synced (not possible on every platform: then skipped). */
function syncFolder(dir: string): void {
  let fd: number | undefined;
  try {
    fd = openSync(dir, "r");
    fsyncSync(fd);
  } catch {
    // Windows cannot open a folder for syncing; its renames are durable without it.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

function toBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
