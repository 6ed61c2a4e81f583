import { mkdirSync } from 'node:fs'
import { dirname } from 'node:path'
import Database from 'better-sqlite3'
import { UserError } from '../../../errors.js'

export type Db = Database.Database

/**
 * Versioned schema migrations. The database's `user_version` holds the number of migrations
 * applied; a new migration is appended here, never edited once released.
 * Each resource is a JSON column (`body`, the answer the API returns, or its stored input)
 * plus the indexed columns the queries need.
 */
export const MIGRATIONS: readonly string[] = [
  // 1: accounts' keys, checks, variables, status pages and services, maintenance windows,
  //    incidents and their updates
  `
  CREATE TABLE api_keys (
    key_hash   TEXT PRIMARY KEY,
    account_id TEXT NOT NULL,
    source     TEXT NOT NULL,          -- 'generated' (made by the server) or 'option' (given on start)
    created_at TEXT NOT NULL
  );

  CREATE TABLE checks (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    check_type TEXT NOT NULL,
    body       TEXT NOT NULL            -- the check exactly as GET answers it
  );
  CREATE INDEX checks_account ON checks (account_id, seq);
  CREATE INDEX checks_account_type ON checks (account_id, check_type, seq);

  CREATE TABLE check_tags (
    check_seq  INTEGER NOT NULL REFERENCES checks (seq) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    tag        TEXT NOT NULL,
    PRIMARY KEY (check_seq, tag)
  );
  CREATE INDEX check_tags_tag ON check_tags (account_id, tag, check_seq);

  CREATE TABLE variables (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL,
    key        TEXT NOT NULL,
    value      TEXT NOT NULL,
    locked     INTEGER NOT NULL,
    secret     INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT,
    UNIQUE (account_id, key)
  );

  CREATE TABLE services (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    name       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT
  );
  CREATE INDEX services_account ON services (account_id, seq);

  CREATE TABLE status_pages (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    url        TEXT NOT NULL UNIQUE,
    body       TEXT NOT NULL,           -- validated input, cards with their ids and dates
    created_at TEXT NOT NULL,
    updated_at TEXT
  );
  CREATE INDEX status_pages_account ON status_pages (account_id, seq);

  -- which services the cards of a page use (a used service cannot be deleted)
  CREATE TABLE status_page_services (
    page_seq   INTEGER NOT NULL REFERENCES status_pages (seq) ON DELETE CASCADE,
    service_id TEXT NOT NULL
  );
  CREATE INDEX status_page_services_service ON status_page_services (service_id);
  CREATE INDEX status_page_services_page ON status_page_services (page_seq);

  CREATE TABLE maintenance_windows (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT
  );
  CREATE INDEX maintenance_windows_account ON maintenance_windows (account_id, id);

  CREATE TABLE incidents (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    account_id TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT
  );
  CREATE INDEX incidents_account ON incidents (account_id, seq);

  CREATE TABLE incident_updates (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    incident_seq INTEGER NOT NULL REFERENCES incidents (seq) ON DELETE CASCADE,
    body         TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    updated_at   TEXT
  );
  CREATE INDEX incident_updates_incident ON incident_updates (incident_seq, seq);
  `,
  // 2: results of check runs: statuses, error groups, alert state and recorded notifications
  //    (rows of a check go with it; results already recorded are remembered by id)
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
    has_failures       INTEGER NOT NULL,
    has_errors         INTEGER NOT NULL,
    is_degraded        INTEGER NOT NULL,
    longest_run        REAL,
    shortest_run       REAL,
    last_run_location  TEXT,
    last_check_run_id  TEXT,
    ssl_days_remaining INTEGER,
    last_response_time REAL,
    last_started_at    TEXT NOT NULL,   -- the newest run the flags come from
    created_at         TEXT NOT NULL,
    updated_at         TEXT
  );
  CREATE INDEX check_statuses_account ON check_statuses (account_id);

  CREATE TABLE error_groups (
    seq                       INTEGER PRIMARY KEY AUTOINCREMENT,
    id                        TEXT NOT NULL UNIQUE,
    account_id                TEXT NOT NULL,
    check_id                  TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    error_hash                TEXT NOT NULL,
    raw_error_message         TEXT,
    cleaned_error_message     TEXT NOT NULL,
    first_seen                TEXT NOT NULL,
    last_seen                 TEXT NOT NULL,
    archived_until_next_event INTEGER NOT NULL DEFAULT 0,
    archive_for_ever          INTEGER NOT NULL DEFAULT 0,
    UNIQUE (check_id, error_hash)
  );
  CREATE INDEX error_groups_account ON error_groups (account_id, seq);

  CREATE TABLE alert_states (
    check_id   TEXT PRIMARY KEY REFERENCES checks (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    body       TEXT NOT NULL,           -- the AlertState as JSON
    updated_at TEXT NOT NULL
  );

  CREATE TABLE alert_notifications (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    id           TEXT NOT NULL UNIQUE,
    account_id   TEXT NOT NULL,
    check_id     TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    kind         TEXT NOT NULL,         -- ALERT_FAILURE, ALERT_DEGRADED, ALERT_RECOVERY, REMINDER
    check_run_id TEXT,
    created_at   TEXT NOT NULL
  );
  CREATE INDEX alert_notifications_check ON alert_notifications (check_id, seq);
  `,
  // 3: check runs (due runs claimed with a lease), their results, check sessions, and the
  //    locations agents serve (scheduling)
  `
  CREATE TABLE check_runs (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
    id               TEXT NOT NULL UNIQUE,
    run_key          TEXT NOT NULL UNIQUE,  -- planning is idempotent: one row per check, location and due time (or session and location)
    account_id       TEXT NOT NULL,
    check_id         TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    location         TEXT NOT NULL,
    due_at           INTEGER NOT NULL,      -- ms since the epoch
    stale_at         INTEGER,               -- never claimed by then: skipped
    session_id       TEXT,
    state            TEXT NOT NULL DEFAULT 'due',  -- 'due', 'done', or 'skipped' (nobody claimed it in time)
    claim_seq        INTEGER NOT NULL DEFAULT 0,   -- claims so far; a run id is "<id>.<claim_seq>"
    lease_owner      TEXT,
    lease_expires_at INTEGER,
    done_claim       INTEGER,
    done_at          INTEGER
  );
  CREATE INDEX check_runs_due ON check_runs (state, due_at);
  CREATE INDEX check_runs_check ON check_runs (check_id);
  CREATE INDEX check_runs_stale ON check_runs (stale_at) WHERE state = 'due' AND claim_seq = 0;

  CREATE TABLE check_results (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT NOT NULL UNIQUE,
    account_id    TEXT NOT NULL,
    check_id      TEXT NOT NULL,
    session_id    TEXT,
    run_id        TEXT NOT NULL,
    run_location  TEXT NOT NULL,
    result_type   TEXT NOT NULL,            -- 'FINAL' or 'ATTEMPT'
    status        TEXT NOT NULL,
    has_failures  INTEGER NOT NULL,
    has_errors    INTEGER NOT NULL,
    is_degraded   INTEGER NOT NULL,
    response_time REAL,
    started_at    TEXT NOT NULL,
    stopped_at    TEXT NOT NULL,
    error         TEXT,
    details       TEXT NOT NULL,            -- the runner's result as JSON
    created_at    TEXT NOT NULL
  );
  CREATE INDEX check_results_check ON check_results (account_id, check_id, seq);
  CREATE INDEX check_results_session ON check_results (session_id, seq) WHERE session_id IS NOT NULL;
  CREATE INDEX check_results_stopped ON check_results (stopped_at);

  CREATE TABLE check_sessions (
    seq           INTEGER PRIMARY KEY AUTOINCREMENT,
    id            TEXT NOT NULL UNIQUE,
    account_id    TEXT NOT NULL,
    check_id      TEXT NOT NULL,
    check_type    TEXT NOT NULL,
    name          TEXT NOT NULL,
    run_locations TEXT NOT NULL,            -- JSON array
    started_at    TEXT NOT NULL
  );
  CREATE INDEX check_sessions_started ON check_sessions (started_at);

  CREATE TABLE agent_locations (
    account_id TEXT NOT NULL,
    location   TEXT NOT NULL,
    agent_id   TEXT NOT NULL,
    expires_at INTEGER NOT NULL,            -- ms; the agent serves the location until then
    PRIMARY KEY (account_id, location, agent_id)
  );
  `,
  // heartbeat checks: the ping token and the current period of each, and their events
  `
  CREATE TABLE heartbeats (
    check_id       TEXT PRIMARY KEY REFERENCES checks (id) ON DELETE CASCADE,
    account_id     TEXT NOT NULL,
    token          TEXT NOT NULL UNIQUE,
    period_ms      INTEGER NOT NULL,
    grace_ms       INTEGER NOT NULL,
    since          INTEGER NOT NULL,        -- ms; start of the current period (last ping, or creation)
    failed_since   INTEGER                  -- the since whose missed ping was recorded as FAILING
  );
  CREATE TABLE heartbeat_events (
    seq        INTEGER PRIMARY KEY AUTOINCREMENT,
    id         TEXT NOT NULL UNIQUE,
    check_id   TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    state      TEXT NOT NULL,
    at         INTEGER NOT NULL,            -- ms
    source     TEXT,
    user_agent TEXT
  );
  CREATE INDEX heartbeat_events_check ON heartbeat_events (check_id, at);
  CREATE INDEX heartbeat_events_at ON heartbeat_events (at);
  `,
  // 5: alert deliveries: the outbox of each notification's deliveries to the check's alert
  // channels (written with the notification), claimed by a sender with a lease, and every attempt
  `
  CREATE TABLE alert_deliveries (
    seq              INTEGER PRIMARY KEY AUTOINCREMENT,
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
    next_attempt_at  INTEGER,               -- ms; PENDING only
    lease_owner      TEXT,
    lease_expires_at INTEGER,               -- ms
    created_at       TEXT NOT NULL,
    updated_at       TEXT
  );
  CREATE INDEX alert_deliveries_due ON alert_deliveries (status, next_attempt_at);
  CREATE INDEX alert_deliveries_check ON alert_deliveries (account_id, check_id, seq);
  CREATE INDEX alert_deliveries_notification ON alert_deliveries (notification_id, seq);
  CREATE INDEX alert_deliveries_created ON alert_deliveries (created_at);

  CREATE TABLE alert_delivery_attempts (
    seq          INTEGER PRIMARY KEY AUTOINCREMENT,
    delivery_seq INTEGER NOT NULL REFERENCES alert_deliveries (seq) ON DELETE CASCADE,
    attempt      INTEGER NOT NULL,
    started_at   TEXT NOT NULL,
    duration_ms  REAL NOT NULL,
    status_code  INTEGER,
    error        TEXT,
    outcome      TEXT NOT NULL             -- DELIVERED, RETRY, FAILED
  );
  CREATE INDEX alert_delivery_attempts_delivery ON alert_delivery_attempts (delivery_seq, seq);
  CREATE INDEX alert_notifications_account ON alert_notifications (account_id, seq);
  CREATE INDEX alert_notifications_created ON alert_notifications (created_at);
  `,
  // 6: analytics rollups: per check, UTC hour, location, status code and status, the count,
  //    retries, per metric count / sum / sum of squares / min / max, and the runs themselves
  //    (seconds into the hour and values) for exact percentiles and sub-hour buckets
  `
  CREATE TABLE analytics_rollups (
    check_id     TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    account_id   TEXT NOT NULL,
    hour_start   INTEGER NOT NULL,        -- ms, a whole UTC hour
    run_location TEXT NOT NULL,
    status_code  INTEGER NOT NULL,        -- -1: none (not an API check, or no response)
    status       TEXT NOT NULL,           -- success, failure, or a heartbeat event state
    runs         INTEGER NOT NULL,
    retries      INTEGER NOT NULL,
    totals       TEXT NOT NULL,           -- JSON {metric: [n, sum, sumOfSquares, min, max]}
    samples      TEXT NOT NULL,           -- JSON {seconds: [...], retries: [...], values: {metric: [value or null, ...]}}, oldest run first
    PRIMARY KEY (check_id, hour_start, run_location, status_code, status)
  ) WITHOUT ROWID;                        -- stored in key order: a check's hours are read from adjacent pages
  CREATE INDEX analytics_rollups_hour ON analytics_rollups (hour_start);
  `,
  // 7: the schedule's version: moves with every write to checks or maintenance windows, so the
  // planner re-reads every check only when one changed (not on every tick)
  `
  CREATE TABLE schedule_version (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    n  INTEGER NOT NULL
  );
  INSERT INTO schedule_version (id, n) VALUES (1, 0);
  CREATE TRIGGER checks_insert_schedule AFTER INSERT ON checks BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER checks_update_schedule AFTER UPDATE ON checks BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER checks_delete_schedule AFTER DELETE ON checks BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER windows_insert_schedule AFTER INSERT ON maintenance_windows BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER windows_update_schedule AFTER UPDATE ON maintenance_windows BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER windows_delete_schedule AFTER DELETE ON maintenance_windows BEGIN UPDATE schedule_version SET n = n + 1; END;
  `,
  // 8: keys get an id (what lists show and revoke names), the start of the key, a role, an
  //    optional name and when they were last used; keys stored before are admin (they could do
  //    everything). Dashboard log-ins live here, so that every server knows them; a session
  //    ends with its key.
  `
  ALTER TABLE api_keys ADD COLUMN id TEXT;
  ALTER TABLE api_keys ADD COLUMN prefix TEXT NOT NULL DEFAULT '';
  ALTER TABLE api_keys ADD COLUMN role TEXT NOT NULL DEFAULT 'admin';
  ALTER TABLE api_keys ADD COLUMN name TEXT;
  ALTER TABLE api_keys ADD COLUMN last_used_at TEXT;
  UPDATE api_keys SET id = 'key_' || lower(hex(randomblob(8)));
  CREATE UNIQUE INDEX api_keys_id ON api_keys (id);
  CREATE INDEX api_keys_account ON api_keys (account_id, created_at);

  CREATE TABLE web_sessions (
    id_hash    TEXT PRIMARY KEY,         -- sha256 of the cookie's session id
    key_id     TEXT NOT NULL REFERENCES api_keys (id) ON DELETE CASCADE,
    csrf       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at INTEGER NOT NULL          -- ms
  );
  CREATE INDEX web_sessions_key ON web_sessions (key_id);
  CREATE INDEX web_sessions_expires ON web_sessions (expires_at);
  `,
  // 9: a status page's custom domain (lower case) in a column of its own, unique across
  //    accounts. Of pages that claimed one domain before, the oldest keeps it (the one that was
  //    served there); the others lose it (customDomain null), so the constraint can hold.
  `
  ALTER TABLE status_pages ADD COLUMN custom_domain TEXT;
  UPDATE status_pages SET custom_domain = lower(json_extract(body, '$.customDomain'))
    WHERE json_type(body, '$.customDomain') = 'text' AND json_extract(body, '$.customDomain') <> '';
  UPDATE status_pages SET custom_domain = NULL, body = json_set(body, '$.customDomain', NULL)
    WHERE custom_domain IS NOT NULL
      AND EXISTS (SELECT 1 FROM status_pages o WHERE o.custom_domain = status_pages.custom_domain AND o.seq < status_pages.seq);
  CREATE UNIQUE INDEX status_pages_custom_domain ON status_pages (custom_domain);
  `,
  // 10: when a run was last claimed (ms): a result is dated inside its claim's window, whatever
  //    the runner's clock says (runs claimed before have none: their due time stands for it)
  `
  ALTER TABLE check_runs ADD COLUMN claimed_at INTEGER;
  `,
  // 11: account-level alert channels (POST /v1/alert-channels); checks subscribe to them by id in
  //     their own alertChannelSubscriptions
  `
  CREATE TABLE alert_channels (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    account_id TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT
  );
  CREATE INDEX alert_channels_account ON alert_channels (account_id, id);
  `,
]

/** Opens (and creates) the database file and brings its schema up to date. */
export function openDatabase(path: string): Db {
  const memory = path === ':memory:' || path === ''
  if (!memory) mkdirSync(dirname(path), { recursive: true })
  const db = new Database(memory ? ':memory:' : path)
  if (!memory) {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
  }
  db.pragma('foreign_keys = ON')
  db.pragma('busy_timeout = 5000')
  migrate(db)
  return db
}

export function migrate(db: Db): void {
  const current = db.pragma('user_version', { simple: true }) as number
  if (current > MIGRATIONS.length) {
    throw new UserError(`The database was written by a newer version of monitors (schema ${current}, this version knows ${MIGRATIONS.length})`)
  }
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version])
      db.pragma(`user_version = ${version + 1}`)
    })()
  }
}

