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
  // results of check runs: statuses, error groups, alert state and recorded notifications
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

