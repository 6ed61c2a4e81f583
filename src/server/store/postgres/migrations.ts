import pg from 'pg'
import { UserError } from '../../../errors.js'

/**
 * Versioned schema migrations of the PostgreSQL store, numbered as the SQLite ones
 * (../sqlite/migrations.ts) with the same tables and meaning; a new migration is appended
 * here, never edited once released. `schema_migrations` holds one row per migration applied.
 * Times are kept as the API answers them (ISO text) and as ms (BIGINT), as in SQLite.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: accounts' keys, checks, variables, status pages and services, maintenance windows,
  //    incidents and their updates
  `
  CREATE TABLE api_keys (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY,
    key_hash   TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    source     TEXT NOT NULL,          -- 'generated' (made by the server) or 'option' (given on start)
    created_at TEXT NOT NULL
  );

  CREATE TABLE checks (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    check_type TEXT NOT NULL,
    activated  BOOLEAN NOT NULL,        -- the body's activated (claims read it without parsing the body)
    body       TEXT NOT NULL            -- the check exactly as GET answers it
  );
  CREATE INDEX checks_account ON checks (account_id, seq);
  CREATE INDEX checks_account_type ON checks (account_id, check_type, seq);

  CREATE TABLE check_tags (
    check_seq  BIGINT NOT NULL REFERENCES checks (seq) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    tag        TEXT NOT NULL,
    PRIMARY KEY (check_seq, tag)
  );
  CREATE INDEX check_tags_tag ON check_tags (account_id, tag, check_seq);

  CREATE TABLE variables (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    locked     BOOLEAN NOT NULL,
    secret     BOOLEAN NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT,
    UNIQUE (account_id, key)
  );

  CREATE TABLE services (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT
  );
  CREATE INDEX services_account ON services (account_id, seq);

  CREATE TABLE status_pages (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    url        TEXT NOT NULL UNIQUE,
    body       TEXT NOT NULL,           -- validated input, cards with their ids and dates
    created_at TEXT NOT NULL,
    updated_at TEXT
  );
  CREATE INDEX status_pages_account ON status_pages (account_id, seq);

  CREATE TABLE status_page_services (
    page_seq   BIGINT NOT NULL REFERENCES status_pages (seq) ON DELETE CASCADE,
    service_id TEXT NOT NULL
  );
  CREATE INDEX status_page_services_service ON status_page_services (service_id);
  CREATE INDEX status_page_services_page ON status_page_services (page_seq);

  CREATE TABLE maintenance_windows (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT
  );
  CREATE INDEX maintenance_windows_account ON maintenance_windows (account_id, id);

  CREATE TABLE incidents (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT
  );
  CREATE INDEX incidents_account ON incidents (account_id, seq);

  CREATE TABLE incident_updates (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    incident_seq BIGINT NOT NULL REFERENCES incidents (seq) ON DELETE CASCADE,
    body         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT
  );
  CREATE INDEX incident_updates_incident ON incident_updates (incident_seq, seq);
  `,
  // 2: results of check runs: statuses, error groups, alert state and recorded notifications
  `
  CREATE TABLE recorded_results (
    result_id   TEXT PRIMARY KEY,
    check_id    TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    recorded_at TEXT NOT NULL
  );
  CREATE INDEX recorded_results_check ON recorded_results (check_id);
  CREATE INDEX recorded_results_time ON recorded_results (recorded_at);

  CREATE TABLE check_statuses (
    check_id           TEXT PRIMARY KEY REFERENCES checks (id) ON DELETE CASCADE,
    account_id         TEXT NOT NULL,
    has_failures       BOOLEAN NOT NULL,
    has_errors         BOOLEAN NOT NULL,
    is_degraded        BOOLEAN NOT NULL,
    longest_run        DOUBLE PRECISION,
    shortest_run       DOUBLE PRECISION,
    last_run_location  TEXT,
    last_check_run_id  TEXT,
    ssl_days_remaining INTEGER,
    last_response_time DOUBLE PRECISION,
    last_started_at    TEXT NOT NULL,
    created_at         TEXT NOT NULL,
    updated_at         TEXT
  );
  CREATE INDEX check_statuses_account ON check_statuses (account_id);

  CREATE TABLE error_groups (
    seq                       BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id                        TEXT NOT NULL UNIQUE,
    account_id                TEXT NOT NULL,
    check_id                  TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    error_hash                TEXT NOT NULL,
    raw_error_message         TEXT,
    cleaned_error_message     TEXT NOT NULL,
    first_seen                TEXT NOT NULL,
    last_seen                 TEXT NOT NULL,
    archived_until_next_event BOOLEAN NOT NULL DEFAULT false,
    archive_for_ever          BOOLEAN NOT NULL DEFAULT false,
    UNIQUE (check_id, error_hash)
  );
  CREATE INDEX error_groups_account ON error_groups (account_id, seq);

  CREATE TABLE alert_states (
    check_id   TEXT PRIMARY KEY REFERENCES checks (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    body       TEXT NOT NULL,
    updated_at TEXT NOT NULL
  );

  CREATE TABLE alert_notifications (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    account_id   TEXT NOT NULL,
    check_id     TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,
    check_run_id TEXT,
    created_at   TEXT NOT NULL
  );
  CREATE INDEX alert_notifications_check ON alert_notifications (check_id, seq);
  `,
  // 3: check runs (due runs claimed with a lease), their results, check sessions, and the
  //    locations agents serve (scheduling)
  `
  CREATE TABLE check_runs (
    seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    run_key          TEXT NOT NULL UNIQUE,  -- one row per check, location and due time (or session and location)
    account_id       TEXT NOT NULL,
    check_id         TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    location         TEXT NOT NULL,
    due_at           BIGINT NOT NULL,
    stale_at         BIGINT,
    session_id       TEXT,
    state            TEXT NOT NULL DEFAULT 'due',
    claim_seq        INTEGER NOT NULL DEFAULT 0,
    lease_owner      TEXT,
    lease_expires_at BIGINT,
    done_claim       INTEGER,
    done_at          BIGINT
  );
  CREATE INDEX check_runs_due ON check_runs (state, due_at);
  CREATE INDEX check_runs_check ON check_runs (check_id);
  CREATE INDEX check_runs_stale ON check_runs (stale_at) WHERE state = 'due' AND claim_seq = 0;

  CREATE TABLE check_results (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    account_id    TEXT NOT NULL,
    check_id      TEXT NOT NULL,
    session_id    TEXT,
    run_id        TEXT NOT NULL,
    run_location  TEXT NOT NULL,
    result_type   TEXT NOT NULL,
    status        TEXT NOT NULL,
    has_failures  BOOLEAN NOT NULL,
    has_errors    BOOLEAN NOT NULL,
    is_degraded   BOOLEAN NOT NULL,
    response_time DOUBLE PRECISION,
    started_at    TEXT NOT NULL,
    stopped_at    TEXT NOT NULL,
    error         TEXT,
    details       TEXT NOT NULL,
    created_at    TEXT NOT NULL
  );
  CREATE INDEX check_results_check ON check_results (account_id, check_id, seq);
  CREATE INDEX check_results_session ON check_results (session_id, seq) WHERE session_id IS NOT NULL;
  CREATE INDEX check_results_stopped ON check_results (stopped_at);

  CREATE TABLE check_sessions (
    seq           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id            TEXT NOT NULL UNIQUE,
    account_id    TEXT NOT NULL,
    check_id      TEXT NOT NULL,
    check_type    TEXT NOT NULL,
    name          TEXT NOT NULL,
    run_locations TEXT NOT NULL,
    started_at    TEXT NOT NULL
  );
  CREATE INDEX check_sessions_started ON check_sessions (started_at);

  CREATE TABLE agent_locations (
    account_id TEXT NOT NULL,
    location   TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    expires_at BIGINT NOT NULL,
    PRIMARY KEY (account_id, location, agent_id)
  );
  `,
  // 4: heartbeat checks: the ping token and the current period of each, and their events
  `
  CREATE TABLE heartbeats (
    check_id       TEXT PRIMARY KEY REFERENCES checks (id) ON DELETE CASCADE,
    account_id     TEXT NOT NULL,
    token          TEXT NOT NULL UNIQUE,
    period_ms      BIGINT NOT NULL,
    grace_ms       BIGINT NOT NULL,
    since          BIGINT NOT NULL,
    failed_since   BIGINT
  );
  CREATE TABLE heartbeat_events (
    seq        BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    check_id   TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    state      TEXT NOT NULL,
    at         BIGINT NOT NULL,
    source     TEXT,
    user_agent TEXT
  );
  CREATE INDEX heartbeat_events_check ON heartbeat_events (check_id, at);
  CREATE INDEX heartbeat_events_at ON heartbeat_events (at);
  `,
  // 5: the rate limit's windows, shared by every server on the database (one row per key)
  `
  CREATE TABLE rate_windows (
    key_hash   TEXT PRIMARY KEY,
    started_at BIGINT NOT NULL,         -- ms; the window ends window_ms later
    count      INTEGER NOT NULL
  );
  `,
  // 6: alert deliveries: the outbox of each notification's deliveries to the check's alert
  //    channels (written with the notification), claimed by a sender with a lease, and every attempt
  `
  CREATE TABLE alert_deliveries (
    seq              BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    id               TEXT NOT NULL UNIQUE,
    account_id       TEXT NOT NULL,
    check_id         TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    notification_id  TEXT NOT NULL,
    alert_type       TEXT NOT NULL,
    channel_type     TEXT NOT NULL,         -- EMAIL, WEBHOOK, SLACK, SMS
    channel          TEXT NOT NULL,         -- JSON: the channel as the check had it
    event            TEXT NOT NULL,         -- JSON: what is delivered
    status           TEXT NOT NULL,         -- PENDING, DELIVERED, FAILED, NOT_DELIVERED
    reason           TEXT,
    attempts         INTEGER NOT NULL DEFAULT 0,
    next_attempt_at  BIGINT,                -- ms; PENDING only
    lease_owner      TEXT,
    lease_expires_at BIGINT,                -- ms
    created_at       TEXT NOT NULL,
    updated_at       TEXT
  );
  CREATE INDEX alert_deliveries_due ON alert_deliveries (status, next_attempt_at);
  CREATE INDEX alert_deliveries_check ON alert_deliveries (account_id, check_id, seq);
  CREATE INDEX alert_deliveries_notification ON alert_deliveries (notification_id, seq);
  CREATE INDEX alert_deliveries_created ON alert_deliveries (created_at);

  CREATE TABLE alert_delivery_attempts (
    seq          BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_seq BIGINT NOT NULL REFERENCES alert_deliveries (seq) ON DELETE CASCADE,
    attempt      INTEGER NOT NULL,
    started_at   TEXT NOT NULL,
    duration_ms  DOUBLE PRECISION NOT NULL,
    status_code  INTEGER,
    error        TEXT,
    outcome      TEXT NOT NULL              -- DELIVERED, RETRY, FAILED
  );
  CREATE INDEX alert_delivery_attempts_delivery ON alert_delivery_attempts (delivery_seq, seq);
  CREATE INDEX alert_notifications_account ON alert_notifications (account_id, seq);
  CREATE INDEX alert_notifications_created ON alert_notifications (created_at);
  `,
  // 7: analytics rollups: per check, UTC hour, location, status code and status, the count,
  //    retries, per metric count / sum / sum of squares / min / max, and the runs themselves
  //    (seconds into the hour and values) for exact percentiles and sub-hour buckets
  `
  CREATE TABLE analytics_rollups (
    check_id     TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    account_id   TEXT NOT NULL,
    hour_start   BIGINT NOT NULL,         -- ms, a whole UTC hour
    run_location TEXT NOT NULL,
    status_code  INTEGER NOT NULL,        -- -1: none (not an API check, or no response)
    status       TEXT NOT NULL,           -- success, failure, or a heartbeat event state
    runs         INTEGER NOT NULL,
    retries      INTEGER NOT NULL,
    totals       TEXT NOT NULL,           -- JSON {metric: [n, sum, sumOfSquares, min, max]}
    samples      TEXT NOT NULL,           -- JSON {seconds: [...], retries: [...], values: {metric: [value or null, ...]}}, oldest run first
    PRIMARY KEY (check_id, hour_start, run_location, status_code, status)
  );
  CREATE INDEX analytics_rollups_hour ON analytics_rollups (hour_start);
  `,
  // 8: the schedule's version: moves with every write to checks or maintenance windows (a
  //    statement-level trigger, in the writer's transaction), so planners re-read every check
  //    only when one changed, whichever server wrote it
  `
  CREATE TABLE schedule_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  BIGINT NOT NULL
  );
  INSERT INTO schedule_version (id, n) VALUES (1, 0);
  CREATE FUNCTION bump_schedule_version() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    UPDATE schedule_version SET n = n + 1 WHERE id = 1;
    RETURN NULL;
  END $$;
  CREATE TRIGGER checks_schedule AFTER INSERT OR UPDATE OR DELETE ON checks
    FOR EACH STATEMENT EXECUTE FUNCTION bump_schedule_version();
  CREATE TRIGGER windows_schedule AFTER INSERT OR UPDATE OR DELETE ON maintenance_windows
    FOR EACH STATEMENT EXECUTE FUNCTION bump_schedule_version();
  `,
  // 9: keys get an id (what lists show and revoke names), the start of the key, a role, an
  //    optional name and when they were last used; keys stored before are admin (they could do
  //    everything). Dashboard log-ins live here, so that every server knows them; a session
  //    ends with its key.
  `
  ALTER TABLE api_keys
    ADD COLUMN id TEXT,
    ADD COLUMN prefix TEXT NOT NULL DEFAULT '',
    ADD COLUMN role TEXT NOT NULL DEFAULT 'admin',
    ADD COLUMN name TEXT,
    ADD COLUMN last_used_at TEXT;
  UPDATE api_keys SET id = 'key_' || substr(md5(random()::text || key_hash), 1, 16);
  ALTER TABLE api_keys ALTER COLUMN id SET NOT NULL;
  CREATE UNIQUE INDEX api_keys_id ON api_keys (id);
  CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

  CREATE TABLE web_sessions (
    id_hash    TEXT PRIMARY KEY,         -- sha256 of the cookie's session id
    key_id     TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    csrf       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at BIGINT NOT NULL           -- ms
  );
  CREATE INDEX web_sessions_key ON web_sessions (key_id);
  CREATE INDEX web_sessions_expires ON web_sessions (expires_at);
  `,
  // 10: a status page's custom domain (lower case) in a column of its own, unique across
  //    accounts. Of pages that claimed one domain before, the oldest keeps it (the one that was
  //    served there); the others lose it (customDomain null), so the constraint can hold. The
  //    body is read as text (JSON.stringify's output, one top-level customDomain): a body holding
  //    "\u0000" somewhere cannot be cast to jsonb.
  `
  ALTER TABLE status_pages ADD COLUMN custom_domain TEXT;
  UPDATE status_pages SET custom_domain = lower(substring(body from '"customDomain":"([^"\\\\]+)"'))
    WHERE body LIKE '%"customDomain":"%';
  UPDATE status_pages p SET custom_domain = NULL, body = regexp_replace(p.body, '"customDomain":"[^"\\\\]*"', '"customDomain":null')
    WHERE p.custom_domain IS NOT NULL
      AND EXISTS (SELECT 1 FROM status_pages o WHERE o.custom_domain = p.custom_domain AND o.seq < p.seq);
  CREATE UNIQUE INDEX status_pages_custom_domain ON status_pages (custom_domain);
  `,
  // 11: when a run was last claimed (ms): a result is dated inside its claim's window, whatever
  //     the runner's clock says (runs claimed before have none: their due time stands for it)
  `
  ALTER TABLE check_runs ADD COLUMN claimed_at BIGINT;
  `,
  // 12: account-level alert channels (POST /v1/alert-channels); checks subscribe to them by id in
  //     their own alertChannelSubscriptions
  `
  CREATE TABLE alert_channels (
    id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    account_id TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT
  );
  CREATE INDEX alert_channels_account ON alert_channels (account_id, id);
  `,
]

/** Any number that is ours: the advisory lock two starting servers queue on to migrate once. */
const MIGRATION_LOCK = 7_266_736_172

/** BIGINT and COUNT answers as numbers (ms times and sequence numbers stay far below 2^53). */
export const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === pg.types.builtins.INT8 ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
}

/** The URL with its password replaced by "***", for messages and logs. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password) parsed.password = '***'
    return parsed.toString()
  } catch {
    return url.replace(/\/\/([^:/@]+):[^@]*@/, '//$1:***@')
  }
}

/**
 * Brings the schema up to date: in one transaction under an advisory lock, so two servers
 * starting at the same moment apply each migration once (the second waits, then finds it done).
 */
export async function migrate(pool: pg.Pool): Promise<void> {
  const client = await pool.connect()
  // a connection the database ends meanwhile fails the next query (the start fails with it), never the process
  const ignore = () => undefined
  client.on('error', ignore)
  try {
    await client.query('BEGIN')
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL)`)
    const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations')
    const current = rows[0].version ?? 0
    if (current > MIGRATIONS.length) {
      throw new UserError(`The database was written by a newer version of monitors (schema ${current}, this version knows ${MIGRATIONS.length})`)
    }
    for (let version = current; version < MIGRATIONS.length; version++) {
      await client.query(MIGRATIONS[version])
      await client.query('INSERT INTO schema_migrations (version, applied_at) VALUES ($1, $2)', [version + 1, new Date().toISOString()])
    }
    await client.query('COMMIT')
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined)
    throw error
  } finally {
    client.removeListener('error', ignore)
    client.release()
  }
}
