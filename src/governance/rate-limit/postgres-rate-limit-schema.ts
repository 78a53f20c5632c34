/**
 * The PostgreSQL schema of shared rate limits (ARCHITECTURE.md, "State: who owns what"). Each
 * decision is one statement: a function that locks the group's row (`FOR UPDATE`), reaps expired
 * leases and waiters by the database clock, and admits, queues, refuses or says how long to wait.
 * One statement is one round trip, and the row lock makes replicas take turns per group.
 */

/** The channel on which a release, a departure from the queue or a cooldown change is announced. */
export const RATE_LIMIT_CHANNEL = "sciencegate_rate_limit";

/** The store name in the schema version table. */
export const RATE_LIMIT_STORE = "rate-limits";

const ADMIT = `
CREATE FUNCTION sciencegate_rate_limit_admit(
  p_group TEXT, p_replica TEXT, p_waiter BIGINT, p_max_concurrent INTEGER,
  p_interval_ms DOUBLE PRECISION, p_max_queue INTEGER, p_ttl_ms DOUBLE PRECISION)
RETURNS TABLE (outcome TEXT, id BIGINT, wait_ms DOUBLE PRECISION)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  g sciencegate_rate_limit_groups%ROWTYPE;
  t TIMESTAMPTZ;
  head BIGINT;
  blocked TEXT;
  start_at TIMESTAMPTZ;
  waiting INTEGER;
  new_id BIGINT;
BEGIN
  -- Rate-limit rows live seconds and expire by themselves: no need to wait for the disk.
  PERFORM set_config('synchronous_commit', 'off', true);
  INSERT INTO sciencegate_rate_limit_groups (name) VALUES (p_group) ON CONFLICT (name) DO NOTHING;
  SELECT * INTO g FROM sciencegate_rate_limit_groups WHERE name = p_group FOR UPDATE;
  t := clock_timestamp();
  DELETE FROM sciencegate_rate_limit_leases l WHERE l.group_name = p_group AND l.expires_at <= t;
  DELETE FROM sciencegate_rate_limit_waiters w WHERE w.group_name = p_group AND w.expires_at <= t;
  IF p_waiter IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM sciencegate_rate_limit_waiters w WHERE w.id = p_waiter) THEN
    RETURN QUERY SELECT 'gone'::TEXT, NULL::BIGINT, NULL::DOUBLE PRECISION;
    RETURN;
  END IF;
  -- Retry turns of admitted calls go first: they hold a slot already.
  IF EXISTS (SELECT 1 FROM sciencegate_rate_limit_waiters w
             WHERE w.group_name = p_group AND w.kind = 'turn') THEN
    blocked := 'behind';
  ELSE
    SELECT min(w.id) INTO head FROM sciencegate_rate_limit_waiters w
      WHERE w.group_name = p_group AND w.kind = 'admit';
    IF head IS NOT NULL AND head IS DISTINCT FROM p_waiter THEN blocked := 'behind'; END IF;
  END IF;
  IF blocked IS NULL AND p_max_concurrent IS NOT NULL AND (
    SELECT count(*) FROM sciencegate_rate_limit_leases l WHERE l.group_name = p_group) >= p_max_concurrent THEN
    blocked := 'full';
  END IF;
  start_at := greatest(g.cooldown_until, g.last_start_at + p_interval_ms * INTERVAL '1 millisecond');
  IF blocked IS NULL AND start_at > t THEN blocked := 'paced'; END IF;
  IF blocked IS NULL THEN
    INSERT INTO sciencegate_rate_limit_leases (group_name, replica, acquired_at, expires_at)
      VALUES (p_group, p_replica, t, t + p_ttl_ms * INTERVAL '1 millisecond') RETURNING sciencegate_rate_limit_leases.id INTO new_id;
    UPDATE sciencegate_rate_limit_groups SET last_start_at = t WHERE name = p_group;
    IF p_waiter IS NOT NULL THEN
      DELETE FROM sciencegate_rate_limit_waiters w WHERE w.id = p_waiter;
      PERFORM pg_notify('${RATE_LIMIT_CHANNEL}', p_group);
    END IF;
    RETURN QUERY SELECT 'admitted'::TEXT, new_id, 0::DOUBLE PRECISION;
    RETURN;
  END IF;
  IF p_waiter IS NULL THEN
    SELECT count(*) INTO waiting FROM sciencegate_rate_limit_waiters w
      WHERE w.group_name = p_group AND w.kind = 'admit';
    IF p_max_queue IS NOT NULL AND waiting >= p_max_queue THEN
      RETURN QUERY SELECT 'queue_full'::TEXT, waiting::BIGINT, NULL::DOUBLE PRECISION;
      RETURN;
    END IF;
    INSERT INTO sciencegate_rate_limit_waiters (group_name, replica, kind, expires_at)
      VALUES (p_group, p_replica, 'admit', t + p_ttl_ms * INTERVAL '1 millisecond')
      RETURNING sciencegate_rate_limit_waiters.id INTO p_waiter;
  END IF;
  -- Paced: when the start is due. Full: when the first lease expires unless renewed (a dead replica's slot).
  RETURN QUERY SELECT blocked, p_waiter, CASE
    WHEN blocked = 'paced' THEN (extract(epoch FROM start_at - t) * 1000)::DOUBLE PRECISION
    WHEN blocked = 'full' THEN (SELECT (extract(epoch FROM min(l.expires_at) - t) * 1000)::DOUBLE PRECISION
                                FROM sciencegate_rate_limit_leases l WHERE l.group_name = p_group)
    ELSE NULL END;
END $fn$`;

const TURN = `
CREATE FUNCTION sciencegate_rate_limit_turn(
  p_group TEXT, p_replica TEXT, p_turn BIGINT, p_interval_ms DOUBLE PRECISION, p_ttl_ms DOUBLE PRECISION)
RETURNS TABLE (outcome TEXT, id BIGINT, wait_ms DOUBLE PRECISION)
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  g sciencegate_rate_limit_groups%ROWTYPE;
  t TIMESTAMPTZ;
  head BIGINT;
  start_at TIMESTAMPTZ;
BEGIN
  -- Rate-limit rows live seconds and expire by themselves: no need to wait for the disk.
  PERFORM set_config('synchronous_commit', 'off', true);
  INSERT INTO sciencegate_rate_limit_groups (name) VALUES (p_group) ON CONFLICT (name) DO NOTHING;
  SELECT * INTO g FROM sciencegate_rate_limit_groups WHERE name = p_group FOR UPDATE;
  t := clock_timestamp();
  DELETE FROM sciencegate_rate_limit_waiters w WHERE w.group_name = p_group AND w.expires_at <= t;
  IF p_turn IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM sciencegate_rate_limit_waiters w WHERE w.id = p_turn) THEN
    p_turn := NULL;
  END IF;
  SELECT min(w.id) INTO head FROM sciencegate_rate_limit_waiters w
    WHERE w.group_name = p_group AND w.kind = 'turn';
  start_at := greatest(g.cooldown_until, g.last_start_at + p_interval_ms * INTERVAL '1 millisecond');
  IF (head IS NULL OR head = p_turn) AND (start_at IS NULL OR start_at <= t) THEN
    UPDATE sciencegate_rate_limit_groups SET last_start_at = t WHERE name = p_group;
    IF p_turn IS NOT NULL THEN
      DELETE FROM sciencegate_rate_limit_waiters w WHERE w.id = p_turn;
      PERFORM pg_notify('${RATE_LIMIT_CHANNEL}', p_group);
    END IF;
    RETURN QUERY SELECT 'started'::TEXT, NULL::BIGINT, 0::DOUBLE PRECISION;
    RETURN;
  END IF;
  IF p_turn IS NULL THEN
    INSERT INTO sciencegate_rate_limit_waiters (group_name, replica, kind, expires_at)
      VALUES (p_group, p_replica, 'turn', t + p_ttl_ms * INTERVAL '1 millisecond')
      RETURNING sciencegate_rate_limit_waiters.id INTO p_turn;
  END IF;
  RETURN QUERY SELECT 'waiting'::TEXT, p_turn,
    CASE WHEN start_at > t THEN (extract(epoch FROM start_at - t) * 1000)::DOUBLE PRECISION ELSE NULL END;
END $fn$`;

const COOLDOWN = `
CREATE FUNCTION sciencegate_rate_limit_cooldown(
  p_group TEXT, p_cooldown_ms DOUBLE PRECISION, p_default_ms DOUBLE PRECISION, p_interval_ms DOUBLE PRECISION)
RETURNS TIMESTAMPTZ
LANGUAGE plpgsql AS $fn$
#variable_conflict use_column
DECLARE
  g sciencegate_rate_limit_groups%ROWTYPE;
  t TIMESTAMPTZ;
  ms DOUBLE PRECISION;
  until_at TIMESTAMPTZ;
BEGIN
  -- Rate-limit rows live seconds and expire by themselves: no need to wait for the disk.
  PERFORM set_config('synchronous_commit', 'off', true);
  INSERT INTO sciencegate_rate_limit_groups (name) VALUES (p_group) ON CONFLICT (name) DO NOTHING;
  SELECT * INTO g FROM sciencegate_rate_limit_groups WHERE name = p_group FOR UPDATE;
  t := clock_timestamp();
  ms := coalesce(p_cooldown_ms, greatest(p_default_ms, coalesce(
    extract(epoch FROM g.last_start_at + p_interval_ms * INTERVAL '1 millisecond' - t) * 1000, 0)));
  until_at := greatest(g.cooldown_until, t + ms * INTERVAL '1 millisecond');
  UPDATE sciencegate_rate_limit_groups SET cooldown_until = until_at WHERE name = p_group;
  PERFORM pg_notify('${RATE_LIMIT_CHANNEL}', p_group);
  RETURN until_at;
END $fn$`;

/** The migrations of the `rate-limits` store, oldest first (their count is the schema version). */
export const RATE_LIMIT_MIGRATIONS: readonly string[] = [
  `CREATE TABLE sciencegate_rate_limit_groups (
     name TEXT PRIMARY KEY,
     last_start_at TIMESTAMPTZ,
     cooldown_until TIMESTAMPTZ
   );
   CREATE TABLE sciencegate_rate_limit_leases (
     id BIGSERIAL PRIMARY KEY,
     group_name TEXT NOT NULL,
     replica TEXT NOT NULL,
     acquired_at TIMESTAMPTZ NOT NULL,
     expires_at TIMESTAMPTZ NOT NULL
   );
   CREATE INDEX sciencegate_rate_limit_leases_group ON sciencegate_rate_limit_leases (group_name, expires_at);
   CREATE TABLE sciencegate_rate_limit_waiters (
     id BIGSERIAL PRIMARY KEY,
     group_name TEXT NOT NULL,
     replica TEXT NOT NULL,
     kind TEXT NOT NULL CHECK (kind IN ('admit', 'turn')),
     enqueued_at TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
     expires_at TIMESTAMPTZ NOT NULL
   );
   CREATE INDEX sciencegate_rate_limit_waiters_group ON sciencegate_rate_limit_waiters (group_name, kind, id);
   ${ADMIT};
   ${TURN};
   ${COOLDOWN};`,
];

/** Frees a lease and announces it. One statement. */
export const RELEASE_SQL = `WITH quick AS (SELECT set_config('synchronous_commit', 'off', true)),
gone AS (DELETE FROM sciencegate_rate_limit_leases WHERE id = $1 RETURNING group_name)
SELECT pg_notify('${RATE_LIMIT_CHANNEL}', group_name) FROM quick, gone`;

/** Removes a waiter or turn that left (abort, timeout, released lease) and announces it. */
export const LEAVE_SQL = `WITH quick AS (SELECT set_config('synchronous_commit', 'off', true)),
gone AS (DELETE FROM sciencegate_rate_limit_waiters WHERE id = $1 RETURNING group_name)
SELECT pg_notify('${RATE_LIMIT_CHANNEL}', group_name) FROM quick, gone`;

/** Renews this replica's live leases and waiters (`$1`, `$2`: array literals of ids) for `$3` ms. */
export const HEARTBEAT_SQL = `WITH leases AS (
  UPDATE sciencegate_rate_limit_leases SET expires_at = clock_timestamp() + $3 * INTERVAL '1 millisecond'
  WHERE id = ANY($1::BIGINT[]) RETURNING 1)
UPDATE sciencegate_rate_limit_waiters SET expires_at = clock_timestamp() + $3 * INTERVAL '1 millisecond'
WHERE id = ANY($2::BIGINT[])`;

/**
 * Whether group `$1` is clear: no cooldown in force and no live waiter (admission or retry turn). Only
 * reads, so its transaction takes no lock and writes nothing.
 */
export const CLEAR_SQL = `SELECT NOT EXISTS (
    SELECT 1 FROM sciencegate_rate_limit_groups WHERE name = $1 AND cooldown_until > clock_timestamp())
  AND NOT EXISTS (
    SELECT 1 FROM sciencegate_rate_limit_waiters WHERE group_name = $1 AND expires_at > clock_timestamp()) AS clear`;

/** Live leases, queued callers and the running cooldown of a group, by the database clock. */
export const STATS_SQL = `SELECT
  (SELECT count(*) FROM sciencegate_rate_limit_leases WHERE group_name = $1 AND expires_at > clock_timestamp())::INTEGER AS active,
  (SELECT count(*) FROM sciencegate_rate_limit_waiters WHERE group_name = $1 AND kind = 'admit' AND expires_at > clock_timestamp())::INTEGER AS queued,
  (SELECT extract(epoch FROM cooldown_until) * 1000 FROM sciencegate_rate_limit_groups
     WHERE name = $1 AND cooldown_until > clock_timestamp()) AS cooldown_until`;
