/**
 * What the database admitted, for the replica tests: a trigger copies every row of
 * `sciencegate_rate_limit_leases` into `lease_log` when it is inserted, follows its expiry as the
 * heartbeat renews it, and stamps it when it is deleted (released, or reaped after it expired), all
 * by the database clock.
 *
 * A lease has two start times. `acquired_at` is the admission's clock reading, which pacing spaces
 * (it becomes the group's `last_start_at`); the admission takes it before it counts the live leases,
 * so a release that commits in between ends a few microseconds after it. The lease exists from its
 * insert, after that count: concurrency is measured from `inserted_at`, so that such a release and
 * the admission it made room for are not counted as overlapping.
 */
import { expect } from "vitest";
import { openPostgres, type PostgresDatabase } from "../../src/core/index.js";
import { PostgresRateLimiter } from "../../src/governance/rate-limit/index.js";

/** Every lease the database admitted, with when it ended (release or expiry), by the database clock. */
const LEASE_LOG = `
CREATE TABLE lease_log (id BIGINT PRIMARY KEY, replica TEXT, acquired_at TIMESTAMPTZ,
  inserted_at TIMESTAMPTZ, expires_at TIMESTAMPTZ, ended_at TIMESTAMPTZ, expired BOOLEAN);
CREATE FUNCTION log_lease() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'INSERT' THEN
    INSERT INTO lease_log VALUES
      (NEW.id, NEW.replica, NEW.acquired_at, clock_timestamp(), NEW.expires_at, NULL, NULL);
  ELSIF TG_OP = 'UPDATE' THEN
    UPDATE lease_log SET expires_at = NEW.expires_at WHERE id = NEW.id;
  ELSE
    -- A lease reaped after it expired ended at its expiry, not when it was noticed.
    UPDATE lease_log SET ended_at = least(clock_timestamp(), OLD.expires_at),
      expired = OLD.expires_at <= clock_timestamp() WHERE id = OLD.id;
  END IF;
  RETURN NULL;
END $$;
CREATE TRIGGER log_lease AFTER INSERT OR UPDATE OF expires_at OR DELETE ON sciencegate_rate_limit_leases
  FOR EACH ROW EXECUTE FUNCTION log_lease();`;

/** One admitted lease; times in epoch ms of the database clock. */
export interface LeaseRow {
  /** The limiter's `replicaId` (by default `<host>:<pid>:<random>`). */
  replica: string;
  /** When the admission started it (what pacing spaces). */
  acquired: number;
  /** When its row was inserted (from when it counts towards concurrency). */
  inserted: number;
  /** Its expiry as last set (at admission, then by each heartbeat: renewal time + TTL). */
  expires: number;
  ended: number | null;
  /** Whether it had expired when its row went (reaped, not released); null while it lives. */
  expired: boolean | null;
}

/**
 * A new database with the rate-limit schema and the lease log in place, before any replica starts.
 * @param createDatabase makes an empty database and returns its URL (`TestPostgres.createDatabase`)
 * @returns its URL and an open connection pool (the caller closes it)
 */
export async function leaseLoggedDatabase(
  createDatabase: () => Promise<string>,
): Promise<{ url: string; db: PostgresDatabase }> {
  const url = await createDatabase();
  const db = await openPostgres(url);
  await (await PostgresRateLimiter.open(db)).close(); // creates the schema
  await db.query(LEASE_LOG);
  return { url, db };
}

/** The lease log, oldest admission first. */
export async function leaseLog(db: PostgresDatabase): Promise<LeaseRow[]> {
  return db.query<LeaseRow>(
    `SELECT replica, extract(epoch FROM acquired_at)::float8 * 1000 AS acquired,
            extract(epoch FROM inserted_at)::float8 * 1000 AS inserted,
            extract(epoch FROM expires_at)::float8 * 1000 AS expires,
            extract(epoch FROM ended_at)::float8 * 1000 AS ended, expired
     FROM lease_log ORDER BY acquired_at`,
  );
}

/** Most leases alive at once (from insert to end); a lease not ended yet counts until now. */
export function maxOverlap(rows: LeaseRow[]): number {
  return peakLeases(rows).length;
}

/**
 * The leases alive together at the first moment the most were (to show in a failed assertion).
 * @param rows the lease log
 * @returns those leases
 */
export function peakLeases(rows: LeaseRow[]): LeaseRow[] {
  const events = rows.flatMap((row) => [
    { at: row.inserted, row, delta: 1 },
    { at: row.ended ?? Number.POSITIVE_INFINITY, row, delta: -1 },
  ]);
  events.sort((a, b) => a.at - b.at || a.delta - b.delta); // an end before a start at the same instant
  const alive = new Set<LeaseRow>();
  let peak: LeaseRow[] = [];
  for (const e of events) {
    if (e.delta > 0) alive.add(e.row);
    else alive.delete(e.row);
    if (alive.size > peak.length) peak = [...alive];
  }
  return peak;
}

/** The database clock now, in epoch ms. */
export async function databaseNow(db: PostgresDatabase): Promise<number> {
  const [row] = await db.query<{ now: number }>(
    "SELECT extract(epoch FROM clock_timestamp())::float8 * 1000 AS now",
  );
  return row!.now;
}

/**
 * Checks the slots a killed replica held at its death: each ended by expiring (reaped, never
 * released), exactly at the expiry its last heartbeat set, and that heartbeat came before the death.
 * So each came back at most one TTL after the kill, and no sooner than its expiry allowed. (How much
 * sooner than a TTL depends on how old the last heartbeat was: at most a third of the TTL when the
 * replica's event loop keeps time, more on a loaded machine; the figures say.)
 * @param held the killed replica's leases that were alive at the kill
 * @param kill database clock readings just before the signal and once the process was gone
 * @param ttlMs the lease TTL the replica ran with
 * @returns per lease, how long after the kill it came back and how old its last heartbeat was then (ms)
 */
export function expectReturnedByExpiry(
  held: LeaseRow[],
  kill: { before: number; after: number },
  ttlMs: number,
): { returnedMs: number[]; heartbeatAgeMs: number[] } {
  for (const row of held) {
    expect(row.expired, JSON.stringify(row)).toBe(true);
    expect(row.ended, JSON.stringify(row)).toBe(row.expires);
    expect(row.expires - ttlMs, JSON.stringify(row)).toBeLessThanOrEqual(kill.after);
  }
  return {
    returnedMs: held.map((row) => row.ended! - kill.before),
    heartbeatAgeMs: held.map((row) => kill.before - (row.expires - ttlMs)),
  };
}
