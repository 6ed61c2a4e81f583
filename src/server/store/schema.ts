/**
 * The tables of both stores, described once: columns with logical types, keys, unique
 * constraints, foreign keys, defaults and indexes (partial ones too). `ddl.ts` renders this
 * description to SQLite and to PostgreSQL; `migrations.ts` says which migration creates each
 * table, column and index. test/server/schema.test.ts builds a fresh database of each store
 * from the migrations and reads its schema back: it must be this description, on both.
 *
 * Conventions: a column is NOT NULL unless `nullable`; a single-column primary key is written
 * `PRIMARY KEY` alone (SQLite then allows NULL in a TEXT key, as it always did here); times are
 * kept as the API answers them (ISO text) and as ms (`bigint`); every resource is a JSON text
 * column (`body`, the answer the API returns, or its stored input) plus the columns its queries
 * need. Where the stores differ on purpose the element says so (`only`, `sqlite`, `postgres`).
 */

export type Dialect = 'sqlite' | 'postgres'
export const DIALECTS: readonly Dialect[] = ['sqlite', 'postgres']

/**
 * - `text`, `integer`, `real`: TEXT, INTEGER, REAL (PostgreSQL: DOUBLE PRECISION)
 * - `bigint`: ms times and sequence numbers (SQLite: INTEGER, PostgreSQL: BIGINT)
 * - `boolean`: SQLite INTEGER 0/1, PostgreSQL BOOLEAN
 * - `identity`: a number the database gives each new row, in insertion order (SQLite:
 *   INTEGER PRIMARY KEY AUTOINCREMENT, never reused; PostgreSQL: BIGINT GENERATED ALWAYS AS IDENTITY)
 */
export type LogicalType = 'text' | 'integer' | 'bigint' | 'real' | 'boolean' | 'identity'

/** What may differ between the stores for one column. */
export interface ColumnVariant {
  nullable?: boolean
}

export interface Column {
  type: LogicalType
  /** NULL allowed (columns are NOT NULL unless this is set). */
  nullable?: boolean
  primaryKey?: boolean
  unique?: boolean
  default?: string | number | boolean
  /** A CHECK on this column, in SQL both dialects read alike. */
  check?: string
  /** `table.column` this column refers to; the row goes when that row goes (ON DELETE CASCADE). */
  references?: `${string}.${string}`
  /** The column exists in this store only. */
  only?: Dialect
  sqlite?: ColumnVariant
  postgres?: ColumnVariant
  /** Removed by a later migration (`dropColumn`): kept here so the migrations before it still make it. */
  dropped?: true
}

export interface Index {
  columns: readonly string[]
  unique?: boolean
  /** A partial index: its WHERE, in SQL both dialects read alike. */
  where?: string
  dropped?: true
}

export interface Table {
  /** In the order of the database's columns: the columns a migration adds come after the others. */
  columns: Record<string, Column>
  /** A primary key of more than one column (a single one is its column's `primaryKey`). */
  primaryKey?: readonly string[]
  /** UNIQUE constraints of more than one column. */
  unique?: readonly (readonly string[])[]
  /** By name: index names are unique across the database. */
  indexes?: Record<string, Index>
  only?: Dialect
  sqlite?: { withoutRowid?: boolean }
  dropped?: true
}

const nullable = { nullable: true } as const
const identity = { type: 'identity', primaryKey: true } as const
const text = { type: 'text' } as const
const bigint = { type: 'bigint' } as const
const boolean = { type: 'boolean' } as const
const idText = { type: 'text', unique: true } as const
const ofCheck = { type: 'text', references: 'checks.id' } as const
const updatedAt = { type: 'text', ...nullable } as const

export const TABLES: Record<string, Table> = {
  api_keys: {
    columns: {
      // the order keys were stored in (SQLite uses its rowid)
      seq: { type: 'identity', only: 'postgres' },
      key_hash: { type: 'text', primaryKey: true },
      account_id: text,
      source: text, // 'generated' (made by the server) or 'option' (given on start)
      created_at: text,
      // what lists show and revoke names; SQLite cannot make a column NOT NULL once the table
      // exists: the store always writes one
      id: { type: 'text', sqlite: nullable },
      prefix: { type: 'text', default: '' }, // the start of the key
      role: { type: 'text', default: 'admin' },
      name: { type: 'text', ...nullable },
      last_used_at: { type: 'text', ...nullable },
      // a key of a private location (POST /v1/private-locations/{id}/keys): an agent key that
      // serves that location only, deleted with it; its last four characters, its masked form
      location_id: { type: 'text', ...nullable, references: 'private_locations.id' },
      key_end: { type: 'text', default: '' },
    },
    indexes: {
      api_keys_id: { columns: ['id'], unique: true },
      api_keys_account: { columns: ['account_id', 'created_at'] },
    },
  },

  checks: {
    columns: {
      seq: identity,
      id: idText,
      account_id: text,
      check_type: text,
      // the body's activated, so that claims read it without parsing the body (SQLite reads the body)
      activated: { type: 'boolean', only: 'postgres' },
      body: text, // the check exactly as GET answers it
      // its name in lower case (String.toLowerCase, written with the body): GET /v1/checks?search=
      name_folded: { type: 'text', default: '' },
    },
    indexes: {
      checks_account: { columns: ['account_id', 'seq'] },
      checks_account_type: { columns: ['account_id', 'check_type', 'seq'] },
    },
  },

  check_tags: {
    columns: {
      check_seq: { type: 'bigint', references: 'checks.seq' },
      account_id: text,
      tag: text,
    },
    primaryKey: ['check_seq', 'tag'],
    indexes: { check_tags_tag: { columns: ['account_id', 'tag', 'check_seq'] } },
  },

  variables: {
    columns: {
      seq: identity,
      account_id: text,
      key: text,
      value: text,
      locked: boolean,
      secret: boolean,
      created_at: text,
      updated_at: updatedAt,
    },
    unique: [['account_id', 'key']],
    // the list's order within an account: keyset pages (after=<key>) read from it
    indexes: { variables_account: { columns: ['account_id', 'seq'] } },
  },

  services: {
    columns: { seq: identity, id: idText, account_id: text, name: text, created_at: text, updated_at: updatedAt },
    indexes: { services_account: { columns: ['account_id', 'seq'] } },
  },

  status_pages: {
    columns: {
      seq: identity,
      id: idText,
      account_id: text,
      url: { type: 'text', unique: true },
      body: text, // validated input, cards with their ids and dates
      created_at: text,
      updated_at: updatedAt,
      custom_domain: { type: 'text', ...nullable }, // lower case, unique across accounts
    },
    indexes: {
      status_pages_account: { columns: ['account_id', 'seq'] },
      status_pages_custom_domain: { columns: ['custom_domain'], unique: true },
    },
  },

  // which services the cards of a page use (a used service cannot be deleted)
  status_page_services: {
    columns: { page_seq: { type: 'bigint', references: 'status_pages.seq' }, service_id: text },
    indexes: {
      status_page_services_service: { columns: ['service_id'] },
      status_page_services_page: { columns: ['page_seq'] },
    },
  },

  maintenance_windows: {
    columns: { id: identity, account_id: text, body: text, created_at: text, updated_at: updatedAt },
    indexes: { maintenance_windows_account: { columns: ['account_id', 'id'] } },
  },

  // named setup and teardown scripts of API checks (POST /v1/snippets)
  snippets: {
    columns: { id: identity, account_id: text, body: text, created_at: text, updated_at: updatedAt },
    indexes: { snippets_account: { columns: ['account_id', 'id'] } },
  },

  incidents: {
    columns: { seq: identity, id: idText, account_id: text, body: text, created_at: text, updated_at: updatedAt },
    indexes: { incidents_account: { columns: ['account_id', 'seq'] } },
  },

  incident_updates: {
    columns: {
      seq: identity,
      id: idText,
      incident_seq: { type: 'bigint', references: 'incidents.seq' },
      body: text,
      created_at: text,
      updated_at: updatedAt,
    },
    indexes: { incident_updates_incident: { columns: ['incident_seq', 'seq'] } },
  },

  // results already recorded, remembered by id (rows of a check go with it)
  recorded_results: {
    columns: { result_id: { type: 'text', primaryKey: true }, check_id: ofCheck, recorded_at: text },
    indexes: {
      recorded_results_check: { columns: ['check_id'] },
      recorded_results_time: { columns: ['recorded_at'] },
    },
  },

  check_statuses: {
    columns: {
      check_id: { type: 'text', primaryKey: true, references: 'checks.id' },
      account_id: text,
      has_failures: boolean,
      has_errors: boolean,
      is_degraded: boolean,
      longest_run: { type: 'real', ...nullable },
      shortest_run: { type: 'real', ...nullable },
      last_run_location: { type: 'text', ...nullable },
      last_check_run_id: { type: 'text', ...nullable },
      ssl_days_remaining: { type: 'integer', ...nullable },
      last_response_time: { type: 'real', ...nullable },
      last_started_at: text, // the newest run the flags come from
      created_at: text,
      updated_at: updatedAt,
      // the newest failure with an error: its group's hash, when it stopped and its message; its group's lastSeen and
      // rawErrorMessage are read from here while it is the newest, so that a failure repeating it rewrites no error group
      error_hash: { type: 'text', ...nullable },
      error_seen: { type: 'text', ...nullable },
      error_message: { type: 'text', ...nullable },
    },
    indexes: { check_statuses_account: { columns: ['account_id'] } },
  },

  error_groups: {
    columns: {
      seq: identity,
      id: idText,
      account_id: text,
      check_id: ofCheck,
      error_hash: text,
      raw_error_message: { type: 'text', ...nullable },
      cleaned_error_message: text,
      first_seen: text,
      last_seen: text,
      archived_until_next_event: { type: 'boolean', default: false },
      archive_for_ever: { type: 'boolean', default: false },
    },
    unique: [['check_id', 'error_hash']],
    indexes: { error_groups_account: { columns: ['account_id', 'seq'] } },
  },

  alert_states: {
    columns: {
      check_id: { type: 'text', primaryKey: true, references: 'checks.id' },
      account_id: text,
      body: text, // the AlertState as JSON
      updated_at: text,
    },
  },

  alert_notifications: {
    columns: {
      seq: identity,
      id: idText,
      account_id: text,
      check_id: ofCheck,
      kind: text, // ALERT_FAILURE, ALERT_DEGRADED, ALERT_RECOVERY, REMINDER
      check_run_id: { type: 'text', ...nullable },
      created_at: text,
    },
    indexes: {
      alert_notifications_check: { columns: ['check_id', 'seq'] },
      alert_notifications_account: { columns: ['account_id', 'seq'] },
      alert_notifications_created: { columns: ['created_at'] },
    },
  },

  // account-level alert channels (/v1/alert-channels); checks subscribe to them by id in their
  // own alertChannelSubscriptions
  alert_channels: {
    columns: { id: identity, account_id: text, body: text, created_at: text, updated_at: updatedAt },
    indexes: { alert_channels_account: { columns: ['account_id', 'id'] } },
  },

  // check groups (POST /v1/check-groups): settings their checks share; a check joins by the
  // groupId of its own body
  check_groups: {
    columns: { id: identity, account_id: text, body: text, created_at: text, updated_at: updatedAt },
    indexes: { check_groups_account: { columns: ['account_id', 'id'] } },
  },

  // due runs, claimed with a lease
  check_runs: {
    columns: {
      seq: identity,
      id: idText,
      // planning is idempotent: one row per check, location and due time (or session and location)
      run_key: { type: 'text', unique: true },
      account_id: text,
      check_id: ofCheck,
      location: text,
      due_at: bigint,
      // never claimed by then: skipped (written, no longer read: a run is skipped once a newer one of its check is due)
      stale_at: { type: 'bigint', ...nullable },
      session_id: { type: 'text', ...nullable },
      state: { type: 'text', default: 'due' }, // 'due', 'done', or 'skipped' (skip_reason says why)
      claim_seq: { type: 'integer', default: 0 }, // claims so far; a run id is "<id>.<claim_seq>"
      lease_owner: { type: 'text', ...nullable },
      lease_expires_at: { type: 'bigint', ...nullable },
      done_claim: { type: 'integer', ...nullable },
      done_at: { type: 'bigint', ...nullable },
      // when the run was last claimed: a result is dated inside its claim's window (runs claimed
      // before this column have none: their due time stands for it)
      claimed_at: { type: 'bigint', ...nullable },
      // why a skipped run was not run: late (a newer run of its check fell due before it was
      // claimed), missed (no server planned it within its check's grace), maintenance (a window
      // covered it), paused (its check was paused after it was planned)
      skip_reason: { type: 'text', ...nullable },
      // the due time of the oldest run of its check skipped as late for this one (ms): claims take
      // the runs of the checks waiting longest first, so a runner that is behind serves every check in turn
      waiting_since: { type: 'bigint', ...nullable },
    },
    indexes: {
      check_runs_due: { columns: ['state', 'due_at'] },
      check_runs_check: { columns: ['check_id'] },
      check_runs_stale: { columns: ['stale_at'], where: `state = 'due' AND claim_seq = 0`, dropped: true },
    },
  },

  // the due runs not run, counted per check, UTC hour, location and reason (late, missed,
  // maintenance) by the process that skipped them, in the statement that skipped them: what
  // GET /v1/scheduler/skipped-runs answers (kept with the results' retention)
  run_skips: {
    columns: {
      check_id: ofCheck,
      account_id: text,
      hour_start: bigint,
      location: text,
      reason: text,
      skipped: { type: 'integer' },
      last_due_at: bigint, // the latest due time skipped (ms)
    },
    primaryKey: ['check_id', 'hour_start', 'location', 'reason'],
    sqlite: { withoutRowid: true },
    indexes: { run_skips_account: { columns: ['account_id', 'hour_start'] } },
  },

  check_results: {
    columns: {
      seq: identity,
      id: idText,
      account_id: text,
      check_id: text,
      session_id: { type: 'text', ...nullable },
      run_id: text,
      run_location: text,
      result_type: text, // 'FINAL' or 'ATTEMPT'
      status: text,
      has_failures: boolean,
      has_errors: boolean,
      is_degraded: boolean,
      response_time: { type: 'real', ...nullable },
      started_at: text,
      stopped_at: text,
      error: { type: 'text', ...nullable },
      details: text, // the runner's result as JSON
      created_at: text,
      // the row's details (and, for a run that did not pass, its status, flags and error) stand for the
      // compact rows of its check, location and kind written after it the same UTC day with the same
      // ones (see compact-rows.ts); kept as long as they are
      is_template: { type: 'boolean', default: false },
    },
    indexes: {
      check_results_check: { columns: ['account_id', 'check_id', 'seq'] },
      check_results_session: { columns: ['session_id', 'seq'], where: 'session_id IS NOT NULL' },
      check_results_stopped: { columns: ['stopped_at'] },
      check_results_template: { columns: ['check_id', 'run_location', 'seq'], where: 'is_template' },
      // GET /v1/check-results/{checkId}?from=&to=
      check_results_started: { columns: ['account_id', 'check_id', 'started_at'] },
    },
  },

  // the integer keys of run locations, for compact result rows
  result_locations: {
    columns: { id: identity, name: idText },
  },

  // the results' retention: results that stopped before the cutoff are no longer answered
  // (whole days of them are dropped at once, see compact-rows.ts)
  result_retention: {
    columns: {
      id: { type: 'integer', primaryKey: true, check: 'id = 1' },
      cutoff_ms: bigint,
      // PostgreSQL: the end (ms) of the hours of compact rows packed into result_blocks (see postgres/compact.ts)
      packed_ms: { type: 'bigint', default: 0, only: 'postgres' },
      // PostgreSQL: the end (ms) of the hours of analytics deltas merged into analytics_rollups (see postgres/analytics.ts)
      rollups_ms: { type: 'bigint', default: 0, only: 'postgres' },
      // PostgreSQL: the first hour (ms) of analytics rollups still answered; whole days before it are dropped (see postgres/analytics.ts)
      rollups_cutoff_ms: { type: 'bigint', default: 0, only: 'postgres' },
    },
  },

  check_sessions: {
    columns: {
      seq: identity,
      id: idText,
      account_id: text,
      check_id: text,
      check_type: text,
      name: text,
      run_locations: text, // JSON array
      started_at: text,
    },
    indexes: { check_sessions_started: { columns: ['started_at'] } },
  },

  // the locations agents serve
  agent_locations: {
    columns: {
      account_id: text,
      location: text,
      agent_id: text,
      expires_at: bigint, // the agent serves the location until then
    },
    primaryKey: ['account_id', 'location', 'agent_id'],
  },

  // private locations (POST /v1/private-locations): named locations of an account that only
  // its agents serve; checks and groups name them by slug in their privateLocations. The health
  // sweep keeps since when no agent is alive there and whether that was alerted.
  private_locations: {
    columns: {
      seq: identity,
      id: idText,
      account_id: text,
      slug_name: text,
      name: text,
      icon: text,
      proxy_url: { type: 'text', ...nullable },
      created_at: text,
      updated_at: updatedAt,
      last_seen_at: { type: 'bigint', ...nullable }, // ms: an agent of the location last claimed
      no_agent_since: { type: 'bigint', ...nullable }, // ms: no live agent since (the sweep's view)
      alerted_at: { type: 'bigint', ...nullable }, // ms: the no-agent alert was sent; cleared by its recovery
    },
    unique: [['account_id', 'slug_name']],
    indexes: { private_locations_account: { columns: ['account_id', 'seq'] } },
  },

  // heartbeat checks: the ping token and the current period of each
  heartbeats: {
    columns: {
      check_id: { type: 'text', primaryKey: true, references: 'checks.id' },
      account_id: text,
      token: { type: 'text', unique: true },
      period_ms: bigint,
      grace_ms: bigint,
      since: bigint, // start of the current period (last ping, or creation)
      failed_since: { type: 'bigint', ...nullable }, // the start of the last period recorded as FAILING (since + k × period)
    },
  },

  heartbeat_events: {
    columns: {
      seq: identity,
      id: idText,
      check_id: ofCheck,
      account_id: text,
      state: text,
      at: bigint,
      source: { type: 'text', ...nullable },
      user_agent: { type: 'text', ...nullable },
    },
    indexes: {
      heartbeat_events_check: { columns: ['check_id', 'at'] },
      heartbeat_events_at: { columns: ['at'] },
    },
  },

  // the rate limit's windows, shared by every server on the database (one row per key); a
  // SQLite server is alone on its file and counts in memory
  rate_windows: {
    only: 'postgres',
    columns: {
      key_hash: { type: 'text', primaryKey: true },
      started_at: bigint, // the window ends window_ms later
      count: { type: 'integer' },
    },
  },

  // the outbox of each notification's deliveries to the check's alert channels (written with
  // the notification), claimed by a sender with a lease
  alert_deliveries: {
    columns: {
      seq: identity,
      id: idText,
      account_id: text,
      check_id: ofCheck,
      notification_id: text,
      alert_type: text,
      channel_type: text, // EMAIL, WEBHOOK, SLACK, SMS
      channel: text, // JSON: the channel as the check had it
      event: text, // JSON: what is delivered
      status: text, // PENDING, DELIVERED, FAILED, NOT_DELIVERED
      reason: { type: 'text', ...nullable },
      attempts: { type: 'integer', default: 0 },
      next_attempt_at: { type: 'bigint', ...nullable }, // PENDING only
      lease_owner: { type: 'text', ...nullable },
      lease_expires_at: { type: 'bigint', ...nullable },
      created_at: text,
      updated_at: updatedAt,
      // the account's channel delivered to (channel.alertChannelId), null for a check's inline channel
      alert_channel_id: { type: 'bigint', ...nullable },
    },
    indexes: {
      alert_deliveries_due: { columns: ['status', 'next_attempt_at'] },
      alert_deliveries_check: { columns: ['account_id', 'check_id', 'seq'] },
      alert_deliveries_notification: { columns: ['notification_id', 'seq'] },
      alert_deliveries_created: { columns: ['created_at'] },
      // GET /v1/alert-notifications?alertChannelId=
      alert_deliveries_channel: { columns: ['account_id', 'alert_channel_id', 'notification_id'], where: 'alert_channel_id IS NOT NULL' },
    },
  },

  alert_delivery_attempts: {
    columns: {
      seq: identity,
      delivery_seq: { type: 'bigint', references: 'alert_deliveries.seq' },
      attempt: { type: 'integer' },
      started_at: text,
      duration_ms: { type: 'real' },
      status_code: { type: 'integer', ...nullable },
      error: { type: 'text', ...nullable },
      outcome: text, // DELIVERED, RETRY, FAILED
    },
    indexes: { alert_delivery_attempts_delivery: { columns: ['delivery_seq', 'seq'] } },
  },

  // per check, UTC hour, location, status code and status: the count, retries, per metric
  // count / sum / sum of squares / min / max, and the runs themselves (seconds into the hour
  // and values) for exact percentiles and sub-hour buckets
  analytics_rollups: {
    columns: {
      check_id: ofCheck,
      account_id: text,
      hour_start: bigint, // a whole UTC hour
      run_location: text,
      status_code: { type: 'integer' }, // -1: none (not an API check, or no response)
      status: text, // success, failure, or a heartbeat event state
      runs: { type: 'integer' },
      retries: { type: 'integer' },
      totals: text, // JSON {metric: [n, sum, sumOfSquares, min, max]}
      samples: text, // JSON {seconds: [...], retries: [...], values: {metric: [value or null, ...]}}, oldest run first
    },
    primaryKey: ['check_id', 'hour_start', 'run_location', 'status_code', 'status'],
    // stored in key order: a check's hours are read from adjacent pages
    sqlite: { withoutRowid: true },
    indexes: { analytics_rollups_hour: { columns: ['hour_start'] } },
  },

  // the schedule's version: moves with every write to checks or maintenance windows (triggers,
  // see migrations.ts), so the planner re-reads every check only when one changed
  schedule_version: {
    columns: {
      id: { type: 'integer', primaryKey: true, check: 'id = 1' },
      n: bigint,
    },
  },

  // the version of each account's checks and check groups: moves with every write to either (row
  // triggers, see migrations.ts); GET /v1/checks answers it (docs/api.md), so that a client whose
  // first page is unchanged at the version it read every page at knows the other pages are too.
  // epoch: random when the row is made (a database made again counts from 1 again)
  list_versions: {
    columns: {
      account_id: { type: 'text', primaryKey: true },
      epoch: text,
      n: bigint,
    },
  },

  // dashboard log-ins, kept here so that every server knows them; a session ends with its key
  web_sessions: {
    columns: {
      id_hash: { type: 'text', primaryKey: true }, // sha256 of the cookie's session id
      key_id: { type: 'text', references: 'api_keys.id' },
      csrf: text,
      created_at: text,
      expires_at: bigint,
    },
    indexes: {
      web_sessions_key: { columns: ['key_id'] },
      web_sessions_expires: { columns: ['expires_at'] },
    },
  },

  // people subscribed by email to a status page (double opt-in: confirmed_at is set by the link
  // of the confirmation email); the token is the capability of their confirm and unsubscribe
  // links; base_url the origin they subscribed at (the links of their emails)
  status_page_subscribers: {
    columns: {
      seq: identity,
      id: idText,
      account_id: text,
      page_seq: { type: 'bigint', references: 'status_pages.seq' },
      email: text, // as given, compared lower case
      token: { type: 'text', unique: true },
      base_url: text,
      confirmed_at: { type: 'bigint', ...nullable },
      last_sent_at: bigint, // the last confirmation email: another is sent at most every 10 minutes
      created_at: text,
    },
    unique: [['page_seq', 'email']],
  },

  // the outbox of subscriber emails: confirmations, incidents and maintenance, sent by a
  // leased loop (subscribers/sender.ts) with retries
  status_page_emails: {
    columns: {
      seq: identity,
      subscriber_seq: { type: 'bigint', references: 'status_page_subscribers.seq' },
      kind: text, // CONFIRM, INCIDENT, MAINTENANCE
      subject: text,
      body: text,
      status: text, // PENDING, SENT, FAILED
      attempts: { type: 'integer', default: 0 },
      next_attempt_at: { type: 'bigint', ...nullable },
      lease_owner: { type: 'text', ...nullable },
      lease_expires_at: { type: 'bigint', ...nullable },
      error: { type: 'text', ...nullable },
      created_at: bigint,
    },
    indexes: {
      status_page_emails_due: { columns: ['status', 'next_attempt_at'] },
      status_page_emails_subscriber: { columns: ['subscriber_seq'] },
    },
  },

  // public badge URLs (GET /badges/{token}.svg): one token per subject. subject_kind says what
  // the token shows ('check': its check in check_id; 'group': its check group in group_id), each
  // kind a nullable column referring to its table, so that each token goes with its subject.
  badge_tokens: {
    columns: {
      token_hash: { type: 'text', primaryKey: true }, // sha256 of the token: the public route finds it by this
      account_id: text,
      subject_kind: text,
      check_id: { type: 'text', nullable: true, references: 'checks.id' },
      token: text, // readable by the account's keys: the URL is meant to be published and shown again
      created_at: text,
      group_id: { type: 'bigint', nullable: true, references: 'check_groups.id' }, // subject kind 'group' (added after check_id's kind)
    },
    indexes: {
      badge_tokens_check: { columns: ['check_id'], unique: true },
      badge_tokens_group: { columns: ['group_id'], unique: true },
      badge_tokens_account: { columns: ['account_id', 'subject_kind'] },
    },
  },
}
