/**
 * Where the OAuth credentials of protected MCP servers are kept: per server and per principal (the
 * person or service they were issued to; one `default` principal for now, so per-user storage can be
 * added without moving anything). Tokens never reach the ledger, the content store or a log line
 * (ARCHITECTURE.md "State: who owns what").
 */
import { randomUUID } from "node:crypto";
import { readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type {
  OAuthClientInformationMixed,
  OAuthDiscoveryState,
  OAuthTokens,
} from "@modelcontextprotocol/client";
import {
  GovernanceError,
  makePrivateDir,
  migratePostgresSchema,
  type PostgresDatabase,
  PRIVATE_FILE_MODE,
} from "../core/index.js";

/** The principal of credentials obtained for the whole deployment. */
export const DEFAULT_PRINCIPAL = "default";

/** Whose credentials for which server. */
export interface CredentialKey {
  serverId: string;
  /** @default "default" */
  principal?: string | undefined;
}

/** What is kept for one server and principal. */
export interface StoredCredentials {
  /** The server URL they were obtained for: credentials of another URL are never sent. */
  serverUrl: string;
  tokens?: OAuthTokens | undefined;
  /** When the tokens were saved (ms since the epoch), to tell when `expires_in` runs out. */
  tokensSavedAt?: number | undefined;
  /** The client registration (dynamic, or the metadata document URL) at the authorization server. */
  clientInformation?: OAuthClientInformationMixed | undefined;
  /** Where discovery found the authorization server, so the callback and refreshes go to the same one. */
  discoveryState?: OAuthDiscoveryState | undefined;
  /** The redirect URI the authorization used (a token exchange and DCR client must match it). */
  redirectUri?: string | undefined;
}

/** A summary of stored credentials, for `sciencegate auth --status` and the console: no secret in it. */
export interface CredentialSummary {
  serverId: string;
  principal: string;
  serverUrl: string;
  hasAccessToken: boolean;
  hasRefreshToken: boolean;
  /** When the access token expires (ms since the epoch), when the server said. */
  expiresAt?: number | undefined;
  scope?: string | undefined;
  issuer?: string | undefined;
}

/** The port: one record per server and principal. Implementations keep the secrets out of reach. */
export interface OAuthCredentialStore {
  /**
   * The credentials kept for one server and principal.
   * @param key the server (and its URL) and the principal
   * @returns a copy, or undefined when none are kept
   */
  get(key: CredentialKey): Promise<StoredCredentials | undefined>;
  /**
   * Keeps (replaces) the credentials of one server and principal.
   * @param key the server (and its URL) and the principal
   * @param value tokens, client registration and discovery state
   */
  set(key: CredentialKey, value: StoredCredentials): Promise<void>;
  /**
   * Forgets the credentials of one server and principal (nothing kept is not an error).
   * @param key the server (and its URL) and the principal
   */
  delete(key: CredentialKey): Promise<void>;
  /** Every stored record, summarized, ordered by server and principal. */
  list(): Promise<CredentialSummary[]>;
}

/**
 * Summarizes a record without its secrets.
 * @param key the server and principal
 * @param value the record
 * @returns what a listing shows
 */
export function summarizeCredentials(key: CredentialKey, value: StoredCredentials): CredentialSummary {
  const tokens = value.tokens;
  const expiresIn = tokens?.expires_in;
  return {
    serverId: key.serverId,
    principal: key.principal ?? DEFAULT_PRINCIPAL,
    serverUrl: value.serverUrl,
    hasAccessToken: typeof tokens?.access_token === "string",
    hasRefreshToken: typeof tokens?.refresh_token === "string",
    ...(typeof expiresIn === "number" && value.tokensSavedAt !== undefined
      ? { expiresAt: value.tokensSavedAt + expiresIn * 1000 }
      : {}),
    ...(tokens?.scope === undefined ? {} : { scope: tokens.scope }),
    ...(value.discoveryState?.authorizationServerUrl === undefined
      ? {}
      : {
          issuer:
            value.discoveryState.authorizationServerMetadata?.issuer ??
            value.discoveryState.authorizationServerUrl,
        }),
  };
}

const SERVER_FILE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Credentials in the data directory: `oauth/<serverId>.json`, one file per server holding its
 * principals, private to the user (the folder 0700, the files 0600), each write a new file renamed into
 * place so a crash never leaves half a record.
 */
export class FileCredentialStore implements OAuthCredentialStore {
  readonly #dir: string;
  /** Writes of one file, one after the other. */
  #writing: Promise<unknown> = Promise.resolve();

  /** @param dir the folder (`<dataDir>/oauth`) */
  constructor(dir: string) {
    this.#dir = dir;
  }

  async get(key: CredentialKey): Promise<StoredCredentials | undefined> {
    return (await this.#read(key.serverId))[key.principal ?? DEFAULT_PRINCIPAL];
  }

  set(key: CredentialKey, value: StoredCredentials): Promise<void> {
    return this.#update(key.serverId, (records) => {
      records[key.principal ?? DEFAULT_PRINCIPAL] = value;
    });
  }

  delete(key: CredentialKey): Promise<void> {
    return this.#update(key.serverId, (records) => {
      delete records[key.principal ?? DEFAULT_PRINCIPAL];
    });
  }

  async list(): Promise<CredentialSummary[]> {
    const { readdir } = await import("node:fs/promises");
    let names: string[];
    try {
      names = await readdir(this.#dir);
    } catch {
      return [];
    }
    const out: CredentialSummary[] = [];
    for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
      const serverId = name.slice(0, -".json".length);
      if (!SERVER_FILE.test(serverId)) continue;
      const records = await this.#read(serverId);
      for (const principal of Object.keys(records).sort()) {
        out.push(summarizeCredentials({ serverId, principal }, records[principal] as StoredCredentials));
      }
    }
    return out;
  }

  #file(serverId: string): string {
    // Server ids are validated by the config; a path separator must still never reach the file name.
    if (!SERVER_FILE.test(serverId)) {
      throw new GovernanceError("INVALID_INPUT", `Not a server id: ${JSON.stringify(serverId)}.`);
    }
    return join(this.#dir, `${serverId}.json`);
  }

  async #read(serverId: string): Promise<Record<string, StoredCredentials>> {
    let text: string;
    try {
      text = await readFile(this.#file(serverId), "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return Object.create(null);
      throw error;
    }
    const parsed: unknown = JSON.parse(text);
    const records: Record<string, StoredCredentials> = Object.create(null);
    if (typeof parsed === "object" && parsed !== null) Object.assign(records, parsed);
    return records;
  }

  #update(serverId: string, change: (records: Record<string, StoredCredentials>) => void): Promise<void> {
    const write = this.#writing.then(async () => {
      const records = await this.#read(serverId);
      change(records);
      await makePrivateDir(this.#dir);
      const file = this.#file(serverId);
      if (Object.keys(records).length === 0) {
        await rm(file, { force: true });
        return;
      }
      const temporary = `${file}.${randomUUID()}.tmp`;
      await writeFile(temporary, JSON.stringify(records), { mode: PRIVATE_FILE_MODE, flag: "wx" });
      await rename(temporary, file);
    });
    this.#writing = write.catch(() => undefined);
    return write;
  }
}

/** Credentials in this process only (tests, or an app that keeps no state). */
export class MemoryCredentialStore implements OAuthCredentialStore {
  readonly #records = new Map<string, { key: Required<CredentialKey>; value: StoredCredentials }>();

  async get(key: CredentialKey): Promise<StoredCredentials | undefined> {
    return structuredClone(this.#records.get(keyOf(key))?.value);
  }

  async set(key: CredentialKey, value: StoredCredentials): Promise<void> {
    this.#records.set(keyOf(key), {
      key: { serverId: key.serverId, principal: key.principal ?? DEFAULT_PRINCIPAL },
      value: structuredClone(value),
    });
  }

  async delete(key: CredentialKey): Promise<void> {
    this.#records.delete(keyOf(key));
  }

  async list(): Promise<CredentialSummary[]> {
    return [...this.#records.values()]
      .sort((a, b) => keyOf(a.key).localeCompare(keyOf(b.key)))
      .map(({ key, value }) => summarizeCredentials(key, value));
  }
}

const MIGRATIONS: readonly string[] = [
  `CREATE TABLE sciencegate_oauth_credentials (
     server_id TEXT NOT NULL, principal TEXT NOT NULL, record JSONB NOT NULL, updated_ms BIGINT NOT NULL,
     PRIMARY KEY (server_id, principal));`,
];

/**
 * Credentials in PostgreSQL, shared by every replica that opens the same database (the database's own
 * access control keeps them private). The store does not own the database.
 */
export class PostgresCredentialStore implements OAuthCredentialStore {
  readonly #db: PostgresDatabase;

  private constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  /**
   * Opens the store, creating its table once.
   * @param db the open database
   * @returns the store
   */
  static async open(db: PostgresDatabase): Promise<PostgresCredentialStore> {
    await migratePostgresSchema(db, { store: "oauth_credentials", migrations: MIGRATIONS });
    return new PostgresCredentialStore(db);
  }

  async get(key: CredentialKey): Promise<StoredCredentials | undefined> {
    const [row] = await this.#db.query<{ record: StoredCredentials }>(
      "SELECT record FROM sciencegate_oauth_credentials WHERE server_id = $1 AND principal = $2",
      [key.serverId, key.principal ?? DEFAULT_PRINCIPAL],
    );
    return row?.record;
  }

  async set(key: CredentialKey, value: StoredCredentials): Promise<void> {
    await this.#db.query(
      `INSERT INTO sciencegate_oauth_credentials (server_id, principal, record, updated_ms)
       VALUES ($1, $2, $3::jsonb, (extract(epoch FROM clock_timestamp()) * 1000)::bigint)
       ON CONFLICT (server_id, principal) DO UPDATE SET record = EXCLUDED.record, updated_ms = EXCLUDED.updated_ms`,
      [key.serverId, key.principal ?? DEFAULT_PRINCIPAL, JSON.stringify(value)],
    );
  }

  async delete(key: CredentialKey): Promise<void> {
    await this.#db.query(
      "DELETE FROM sciencegate_oauth_credentials WHERE server_id = $1 AND principal = $2",
      [key.serverId, key.principal ?? DEFAULT_PRINCIPAL],
    );
  }

  async list(): Promise<CredentialSummary[]> {
    const rows = await this.#db.query<{ server_id: string; principal: string; record: StoredCredentials }>(
      "SELECT server_id, principal, record FROM sciencegate_oauth_credentials ORDER BY server_id, principal",
    );
    return rows.map((row) =>
      summarizeCredentials({ serverId: row.server_id, principal: row.principal }, row.record),
    );
  }
}

function keyOf(key: CredentialKey): string {
  return `${key.serverId}\n${key.principal ?? DEFAULT_PRINCIPAL}`;
}
