import type { Dialect } from './schema.js'

/**
 * The schema's history, shared by both stores: migration N of a store is the N-th entry of
 * this list that applies to it (`only` names the one store an entry is for). A store records
 * how many it applied (SQLite: `user_version`, PostgreSQL: `schema_migrations`) and runs the
 * rest in order at start. An entry is appended, never edited once released.
 *
 * Steps name elements of the description (schema.ts) and are rendered per dialect (ddl.ts):
 * - `createTable`: the table with its columns, keys and indexes, except the columns and
 *   indexes a step of their own creates (`addColumn`, `createIndex`);
 * - `addColumn` (`table.column`): `fill`, when given, runs right after (UPDATEs of the rows
 *   there are); a NOT NULL column without a default is added as NULL, filled, then made NOT NULL
 *   (PostgreSQL; SQLite cannot, so the description marks it `sqlite: { nullable: true }`);
 * - `createIndex`;
 * - `dropIndex`, `dropColumn` (`table.column`), `dropTable`: the element stays in the
 *   description marked `dropped`, so that the migrations before still create it;
 * - `sql`: what the dialects say differently (data backfills, triggers), one text each.
 */
export type Step =
  | { createTable: string }
  | { addColumn: `${string}.${string}`; fill?: Record<Dialect, string> }
  | { createIndex: string }
  | { dropIndex: string }
  | { dropColumn: `${string}.${string}` }
  | { dropTable: string }
  | { sql: Record<Dialect, string> }

export interface Migration {
  /** The one store this migration is for (the stores then number their migrations differently). */
  only?: Dialect
  steps: readonly Step[]
}

const tables = (...names: string[]): Step[] => names.map((createTable) => ({ createTable }))

export const MIGRATIONS: readonly Migration[] = [
  // 1: accounts' keys, checks, variables, status pages and services, maintenance windows,
  //    incidents and their updates
  {
    steps: tables(
      'api_keys',
      'checks',
      'check_tags',
      'variables',
      'services',
      'status_pages',
      'status_page_services',
      'maintenance_windows',
      'incidents',
      'incident_updates',
    ),
  },
  // 2: results of check runs: statuses, error groups, alert state and recorded notifications
  { steps: tables('recorded_results', 'check_statuses', 'error_groups', 'alert_states', 'alert_notifications') },
  // 3: check runs (due runs claimed with a lease), their results, check sessions, and the
  //    locations agents serve (scheduling)
  { steps: tables('check_runs', 'check_results', 'check_sessions', 'agent_locations') },
  // 4: heartbeat checks: the ping token and the current period of each, and their events
  { steps: tables('heartbeats', 'heartbeat_events') },
  // PostgreSQL 5: the rate limit's windows, shared by every server on the database
  { only: 'postgres', steps: tables('rate_windows') },
  // SQLite 5, PostgreSQL 6: alert deliveries: the outbox of each notification's deliveries,
  //    claimed by a sender with a lease, and every attempt
  {
    steps: [
      ...tables('alert_deliveries', 'alert_delivery_attempts'),
      { createIndex: 'alert_notifications_account' },
      { createIndex: 'alert_notifications_created' },
    ],
  },
  // SQLite 6, PostgreSQL 7: analytics rollups
  { steps: tables('analytics_rollups') },
  // SQLite 7, PostgreSQL 8: the schedule's version, moved by every write to checks or
  //    maintenance windows (in the writer's transaction: PostgreSQL's trigger is per statement),
  //    so planners re-read every check only when one changed, whichever server wrote it
  {
    steps: [
      { createTable: 'schedule_version' },
      {
        sql: {
          sqlite: `
  INSERT INTO schedule_version (id, n) VALUES (1, 0);
  CREATE TRIGGER checks_insert_schedule AFTER INSERT ON checks BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER checks_update_schedule AFTER UPDATE ON checks BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER checks_delete_schedule AFTER DELETE ON checks BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER windows_insert_schedule AFTER INSERT ON maintenance_windows BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER windows_update_schedule AFTER UPDATE ON maintenance_windows BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER windows_delete_schedule AFTER DELETE ON maintenance_windows BEGIN UPDATE schedule_version SET n = n + 1; END;
  `,
          postgres: `
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
        },
      },
    ],
  },
  // SQLite 8, PostgreSQL 9: keys get an id (what lists show and revoke names), the start of the
  //    key, a role, an optional name and when they were last used; keys stored before are admin
  //    (they could do everything). Dashboard log-ins, so that every server knows them.
  {
    steps: [
      {
        addColumn: 'api_keys.id',
        fill: {
          sqlite: `UPDATE api_keys SET id = 'key_' || lower(hex(randomblob(8)))`,
          postgres: `UPDATE api_keys SET id = 'key_' || substr(md5(random()::text || key_hash), 1, 16)`,
        },
      },
      { addColumn: 'api_keys.prefix' },
      { addColumn: 'api_keys.role' },
      { addColumn: 'api_keys.name' },
      { addColumn: 'api_keys.last_used_at' },
      { createIndex: 'api_keys_id' },
      { createIndex: 'api_keys_account' },
      { createTable: 'web_sessions' },
    ],
  },
  // SQLite 9, PostgreSQL 10: a status page's custom domain (lower case) in a column of its own,
  //    unique across accounts. Of pages that claimed one domain before, the oldest keeps it (the
  //    one that was served there); the others lose it (customDomain null), so the constraint can
  //    hold. PostgreSQL reads the body as text (JSON.stringify's output, one top-level
  //    customDomain): a body holding "\u0000" somewhere cannot be cast to jsonb.
  {
    steps: [
      {
        addColumn: 'status_pages.custom_domain',
        fill: {
          sqlite: `
  UPDATE status_pages SET custom_domain = lower(json_extract(body, '$.customDomain'))
    WHERE json_type(body, '$.customDomain') = 'text' AND json_extract(body, '$.customDomain') <> '';
  UPDATE status_pages SET custom_domain = NULL, body = json_set(body, '$.customDomain', NULL)
    WHERE custom_domain IS NOT NULL
      AND EXISTS (SELECT 1 FROM status_pages o WHERE o.custom_domain = status_pages.custom_domain AND o.seq < status_pages.seq);
  `,
          postgres: `
  UPDATE status_pages SET custom_domain = lower(substring(body from '"customDomain":"([^"\\\\]+)"'))
    WHERE body LIKE '%"customDomain":"%';
  UPDATE status_pages p SET custom_domain = NULL, body = regexp_replace(p.body, '"customDomain":"[^"\\\\]*"', '"customDomain":null')
    WHERE p.custom_domain IS NOT NULL
      AND EXISTS (SELECT 1 FROM status_pages o WHERE o.custom_domain = p.custom_domain AND o.seq < p.seq);
  `,
        },
      },
      { createIndex: 'status_pages_custom_domain' },
    ],
  },
  // SQLite 10, PostgreSQL 11: when a run was last claimed: a result is dated inside its claim's
  //    window, whatever the runner's clock says
  { steps: [{ addColumn: 'check_runs.claimed_at' }] },
  // SQLite 11, PostgreSQL 12: account-level alert channels (POST /v1/alert-channels); checks
  //    subscribe to them by id in their own alertChannelSubscriptions
  { steps: [{ createTable: 'alert_channels' }] },
  // status pages' email subscribers and the outbox of their emails
  { steps: tables('status_page_subscribers', 'status_page_emails') },
  // SQLite 13, PostgreSQL 14: public badge tokens (GET /badges/{token}.svg): a check's token, revocable; a subject kind
  //    column so that a group's token can be added beside
  { steps: [{ createTable: 'badge_tokens' }] },
  // SQLite 14, PostgreSQL 15: storage of results: passing runs with an unchanged answer kept as compact rows in day
  //    partitions (SQLite: a table per day, made by the store; PostgreSQL: result_runs, partitioned
  //    by day), full rows marked as their templates, the locations' integer keys, the retention cutoff
  {
    steps: [
      { addColumn: 'check_results.is_template' },
      { createIndex: 'check_results_template' },
      { createTable: 'result_locations' },
      { createTable: 'result_retention' },
      {
        sql: {
          sqlite: `INSERT INTO result_retention (id, cutoff_ms) VALUES (1, 0);`,
          postgres: `
  INSERT INTO result_retention (id, cutoff_ms) VALUES (1, 0);
  CREATE TABLE result_runs (
    seq BIGINT NOT NULL,
    chk BIGINT NOT NULL,
    loc INTEGER NOT NULL,
    tpl BIGINT NOT NULL,
    created BIGINT NOT NULL,
    made INTEGER NOT NULL,
    dur INTEGER NOT NULL,
    rt INTEGER
  ) PARTITION BY RANGE (created);
  CREATE INDEX result_runs_chk ON result_runs (chk, seq);
  CREATE INDEX result_runs_seq ON result_runs (seq);
  `,
        },
      },
    ],
  },
  // SQLite 15, PostgreSQL 16: check groups (POST /v1/check-groups): their table, and the schedule's version moves with
  //    every write to it (a group's locations, activated and muted change when its checks run)
  {
    steps: [
      { createTable: 'check_groups' },
      {
        sql: {
          sqlite: `
  CREATE TRIGGER groups_insert_schedule AFTER INSERT ON check_groups BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER groups_update_schedule AFTER UPDATE ON check_groups BEGIN UPDATE schedule_version SET n = n + 1; END;
  CREATE TRIGGER groups_delete_schedule AFTER DELETE ON check_groups BEGIN UPDATE schedule_version SET n = n + 1; END;
  `,
          postgres: `
  CREATE TRIGGER groups_schedule AFTER INSERT OR UPDATE OR DELETE ON check_groups
    FOR EACH STATEMENT EXECUTE FUNCTION bump_schedule_version();
  `,
        },
      },
    ],
  },
  // SQLite 16, PostgreSQL 17: snippets: named setup and teardown scripts of API checks (POST /v1/snippets), referred to
  //    by checks' setupSnippetId and tearDownSnippetId
  { steps: [{ createTable: 'snippets' }] },
  // public badge tokens of check groups (POST /v1/badges/groups/{groupId}/token): the group's
  //    column beside the check's, one token per group, deleted with its group
  { steps: [{ addColumn: 'badge_tokens.group_id' }, { createIndex: 'badge_tokens_group' }] },
  // variables' list order per account (account_id, seq): keyset pages of GET /v1/variables (after=<key>) read
  //    from it instead of sorting the account's variables
  { steps: [{ createIndex: 'variables_account' }] },
  // PostgreSQL: compact results found by sequence through a BRIN index (a few bytes per 16 pages) in place of a
  //    B-tree (about 35 bytes a result): a row's sequence grows with its place in its day's partition, and a lookup
  //    has chosen the partition by its creation time already; a check's list keeps its B-tree (chk, seq)
  {
    steps: [
      {
        sql: {
          sqlite: '',
          postgres: `
  DROP INDEX IF EXISTS result_runs_seq;
  CREATE INDEX result_runs_seq ON result_runs USING brin (seq) WITH (pages_per_range = 16);
  `,
        },
      },
    ],
  },
  // the filters of the lists (docs/api.md "Filters of lists"): a check's name in lower case
  //    (GET /v1/checks?search=), the account's channel of each alert delivery (GET
  //    /v1/alert-notifications?alertChannelId=) and a check's results by start time (GET
  //    /v1/check-results/{checkId}?from=&to=). PostgreSQL reads the body as json, not jsonb (a
  //    body may hold "\u0000", which jsonb refuses), without the escapes of NUL.
  {
    steps: [
      // NOT NULL with its default from the start; the rows there are filled after
      { addColumn: 'checks.name_folded' },
      {
        sql: {
          sqlite: `UPDATE checks SET name_folded = coalesce(lower(json_extract(body, '$.name')), '');`,
          postgres: `UPDATE checks SET name_folded = coalesce(lower(replace(body, '\\u0000', '')::json ->> 'name'), '');`,
        },
      },
      {
        addColumn: 'alert_deliveries.alert_channel_id',
        fill: {
          sqlite: `UPDATE alert_deliveries SET alert_channel_id = json_extract(channel, '$.alertChannelId')
    WHERE json_type(channel, '$.alertChannelId') = 'integer'`,
          // the channel is written as { ...config, alertChannelId }: its last field
          postgres: `UPDATE alert_deliveries SET alert_channel_id = substring(channel from '"alertChannelId":([0-9]{1,15})}$')::bigint
    WHERE channel LIKE '%"alertChannelId":%'`,
        },
      },
      { createIndex: 'alert_deliveries_channel' },
      { createIndex: 'check_results_started' },
    ],
  },
  // runs not made in time are counted: a skipped run says why (check_runs.skip_reason), the counts per check, hour,
  //    location and reason are kept (run_skips); a run is skipped once a newer run of its check is due, no longer by its
  //    stale time, so that index goes
  //    (and the run that stays says since when its check waits: check_runs.waiting_since, the claims' order)
  {
    steps: [
      { addColumn: 'check_runs.skip_reason' },
      { addColumn: 'check_runs.waiting_since' },
      { createTable: 'run_skips' },
      { dropIndex: 'check_runs_stale' },
    ],
  },
  // private locations: named locations of an account served by its agents only, and the keys
  //    bound to one (an agent key of that location, deleted with it, its last characters its masked form)
  {
    steps: [{ createTable: 'private_locations' }, { addColumn: 'api_keys.location_id' }, { addColumn: 'api_keys.key_end' }],
  },
  // PostgreSQL: compact results packed: result_runs is where a run is written (now a partition per hour), and once
  //    its hour has ended its runs become one row per check, location, template and hour in result_blocks (a
  //    partition per day), 28 bytes of row header and one index entry for an hour of runs instead of for each run.
  //    The rows there stay in result_runs' day partitions and are packed like the others once their day has ended
  //    (packed_ms: how far packing has gone; reads take a run from result_runs only at or after it). Analytics: a
  //    result appends a delta (analytics_deltas, a partition per hour) in place of rewriting its rollup row; an
  //    hour's deltas are merged into its rows once it has ended (rollups_ms: how far)
  {
    only: 'postgres',
    steps: [
      { addColumn: 'result_retention.packed_ms' },
      { addColumn: 'result_retention.rollups_ms' },
      {
        sql: {
          sqlite: '',
          postgres: `
  CREATE TABLE result_blocks (
    chk BIGINT NOT NULL,
    loc INTEGER NOT NULL,
    tpl BIGINT NOT NULL,
    hour BIGINT NOT NULL,
    base BIGINT NOT NULL,
    v INTEGER[] NOT NULL
  ) PARTITION BY RANGE (hour);
  CREATE INDEX result_blocks_chk ON result_blocks (chk, hour);
  CREATE SEQUENCE analytics_deltas_id;
  CREATE TABLE analytics_deltas (
    id BIGINT NOT NULL DEFAULT nextval('analytics_deltas_id'),
    check_id TEXT NOT NULL,
    account_id TEXT NOT NULL,
    hour_start BIGINT NOT NULL,
    run_location TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    status TEXT NOT NULL,
    samples TEXT NOT NULL
  ) PARTITION BY RANGE (hour_start);
  CREATE INDEX analytics_deltas_check ON analytics_deltas (check_id);
  `,
        },
      },
    ],
  },
  // PostgreSQL: analytics rollups partitioned by day of hour_start (analytics_rollups_YYYYMMDD), so that retention
  //    drops whole days instead of deleting rows (rollups_cutoff_ms: the first hour still answered). The rows there
  //    move to the day partitions they belong to; the table keeps its columns, keys and index.
  {
    only: 'postgres',
    steps: [
      { addColumn: 'result_retention.rollups_cutoff_ms' },
      {
        sql: {
          sqlite: '',
          postgres: `
  ALTER TABLE analytics_rollups RENAME TO analytics_rollups_unpartitioned;
  ALTER INDEX analytics_rollups_pkey RENAME TO analytics_rollups_unpartitioned_pkey;
  ALTER INDEX analytics_rollups_hour RENAME TO analytics_rollups_unpartitioned_hour;
  ALTER TABLE analytics_rollups_unpartitioned RENAME CONSTRAINT analytics_rollups_check_id_fkey TO analytics_rollups_unpartitioned_check_id_fkey;
  CREATE TABLE analytics_rollups (
    check_id TEXT NOT NULL REFERENCES checks (id) ON DELETE CASCADE,
    account_id TEXT NOT NULL,
    hour_start BIGINT NOT NULL,
    run_location TEXT NOT NULL,
    status_code INTEGER NOT NULL,
    status TEXT NOT NULL,
    runs INTEGER NOT NULL,
    retries INTEGER NOT NULL,
    totals TEXT NOT NULL,
    samples TEXT NOT NULL,
    PRIMARY KEY (check_id, hour_start, run_location, status_code, status)
  ) PARTITION BY RANGE (hour_start);
  CREATE INDEX analytics_rollups_hour ON analytics_rollups (hour_start);
  DO $$
  DECLARE day BIGINT;
  BEGIN
    FOR day IN SELECT DISTINCT hour_start / 86400000 FROM analytics_rollups_unpartitioned LOOP
      EXECUTE format('CREATE TABLE %I PARTITION OF analytics_rollups FOR VALUES FROM (%s) TO (%s)',
        'analytics_rollups_' || to_char(to_timestamp(day * 86400) AT TIME ZONE 'UTC', 'YYYYMMDD'), day * 86400000, (day + 1) * 86400000);
    END LOOP;
  END $$;
  INSERT INTO analytics_rollups (check_id, account_id, hour_start, run_location, status_code, status, runs, retries, totals, samples)
    SELECT check_id, account_id, hour_start, run_location, status_code, status, runs, retries, totals, samples FROM analytics_rollups_unpartitioned;
  DROP TABLE analytics_rollups_unpartitioned;
  `,
        },
      },
    ],
  },
  // a check's newest failure with an error (its group's hash, time and message) kept in its status, which every run
  //    rewrites anyway: a failure that repeats it no longer rewrites its error group (see postgres/results.ts)
  { steps: [{ addColumn: 'check_statuses.error_hash' }, { addColumn: 'check_statuses.error_seen' }, { addColumn: 'check_statuses.error_message' }] },
  // the version of each account's checks and check groups (GET /v1/checks answers it: one request proves a
  //    whole list unchanged), moved by a trigger per row written, in the writer's transaction; the accounts
  //    holding checks or groups now start at 0
  {
    steps: [
      { createTable: 'list_versions' },
      {
        sql: {
          sqlite: `
  INSERT INTO list_versions (account_id, epoch, n)
    SELECT account_id, lower(hex(randomblob(8))), 0 FROM (SELECT account_id FROM checks UNION SELECT account_id FROM check_groups);
  CREATE TRIGGER checks_insert_list_version AFTER INSERT ON checks BEGIN
    INSERT INTO list_versions (account_id, epoch, n) VALUES (NEW.account_id, lower(hex(randomblob(8))), 1) ON CONFLICT (account_id) DO UPDATE SET n = n + 1; END;
  CREATE TRIGGER checks_update_list_version AFTER UPDATE ON checks BEGIN
    INSERT INTO list_versions (account_id, epoch, n) VALUES (NEW.account_id, lower(hex(randomblob(8))), 1) ON CONFLICT (account_id) DO UPDATE SET n = n + 1;
    UPDATE list_versions SET n = n + 1 WHERE account_id = OLD.account_id AND OLD.account_id <> NEW.account_id; END;
  CREATE TRIGGER checks_delete_list_version AFTER DELETE ON checks BEGIN UPDATE list_versions SET n = n + 1 WHERE account_id = OLD.account_id; END;
  CREATE TRIGGER groups_insert_list_version AFTER INSERT ON check_groups BEGIN
    INSERT INTO list_versions (account_id, epoch, n) VALUES (NEW.account_id, lower(hex(randomblob(8))), 1) ON CONFLICT (account_id) DO UPDATE SET n = n + 1; END;
  CREATE TRIGGER groups_update_list_version AFTER UPDATE ON check_groups BEGIN
    INSERT INTO list_versions (account_id, epoch, n) VALUES (NEW.account_id, lower(hex(randomblob(8))), 1) ON CONFLICT (account_id) DO UPDATE SET n = n + 1;
    UPDATE list_versions SET n = n + 1 WHERE account_id = OLD.account_id AND OLD.account_id <> NEW.account_id; END;
  CREATE TRIGGER groups_delete_list_version AFTER DELETE ON check_groups BEGIN UPDATE list_versions SET n = n + 1 WHERE account_id = OLD.account_id; END;
  `,
          postgres: `
  INSERT INTO list_versions (account_id, epoch, n)
    SELECT account_id, md5(random()::text || clock_timestamp()::text), 0 FROM (SELECT account_id FROM checks UNION SELECT account_id FROM check_groups) AS accounts;
  CREATE FUNCTION bump_list_version() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP <> 'INSERT' THEN
      UPDATE list_versions SET n = n + 1 WHERE account_id = OLD.account_id;
    END IF;
    IF TG_OP <> 'DELETE' AND (TG_OP = 'INSERT' OR OLD.account_id <> NEW.account_id) THEN
      INSERT INTO list_versions (account_id, epoch, n) VALUES (NEW.account_id, md5(random()::text || clock_timestamp()::text), 1)
        ON CONFLICT (account_id) DO UPDATE SET n = list_versions.n + 1;
    END IF;
    RETURN NULL;
  END $$;
  CREATE TRIGGER checks_list_version AFTER INSERT OR UPDATE OR DELETE ON checks FOR EACH ROW EXECUTE FUNCTION bump_list_version();
  CREATE TRIGGER groups_list_version AFTER INSERT OR UPDATE OR DELETE ON check_groups FOR EACH ROW EXECUTE FUNCTION bump_list_version();
  `,
        },
      },
    ],
  },
]
