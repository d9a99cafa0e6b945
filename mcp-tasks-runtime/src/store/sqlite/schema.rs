//! The file's layout: its tables, its version, and the migrations from older versions.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use crate::store::StoreError;

/// The version of the file's layout this store writes, in the file's `user_version`. Version 0
/// (every file from before there was a version) numbered tasks with `AUTOINCREMENT`, which
/// reads and writes SQLite's `sqlite_sequence` table in every insert: one more page in every
/// commit, and a fifth of the statements' work of a creation. Since version 1 the store numbers
/// them itself (see [`Shared::next_seq`]). Since version 2 records are written in their compact
/// form (see [`TaskRecord`]), about half the bytes of serde's own (a commit of a batch writes
/// fewer pages); the tables are as in version 1, and records of either form read, but an older
/// build cannot read the compact form, so it refuses the file instead.
pub(super) const SCHEMA_VERSION: i64 = 2;

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS tasks (
    seq INTEGER PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    owner TEXT NOT NULL,
    runner TEXT,
    due INTEGER,
    record TEXT NOT NULL,
    result TEXT
);
CREATE INDEX IF NOT EXISTS tasks_by_owner ON tasks (owner, seq);
CREATE INDEX IF NOT EXISTS tasks_by_due ON tasks (due) WHERE due IS NOT NULL;
CREATE INDEX IF NOT EXISTS tasks_by_runner ON tasks (runner) WHERE runner IS NOT NULL;
CREATE TABLE IF NOT EXISTS leases (
    instance TEXT PRIMARY KEY,
    until INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS counters (
    name TEXT PRIMARY KEY,
    value INTEGER NOT NULL
) WITHOUT ROWID;
";

/// The indexes of `tasks` that [`SCHEMA`] names, dropped with the table they index when a
/// version 0 file is migrated.
pub(super) const TASK_INDEXES: [&str; 3] = ["tasks_by_owner", "tasks_by_due", "tasks_by_runner"];

/// Brings the file to [`SCHEMA_VERSION`] in one transaction: creates what a new file lacks, and
/// migrates a version 0 file. A file of a later version (written by a newer mcp-tasks) is
/// refused rather than guessed at.
pub(super) fn migrate(
    conn: &mut Connection,
    path: &Path,
    in_use: impl Fn(rusqlite::Error) -> StoreError,
) -> Result<(), StoreError> {
    let version: i64 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .map_err(&in_use)?;
    if version > SCHEMA_VERSION {
        return Err(StoreError::backend(format!(
            "the SQLite task store {} was written by a newer mcp-tasks (file format version \
             {version}; this one reads up to {SCHEMA_VERSION})",
            path.display()
        )));
    }
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(&in_use)?;
    let numbered_by_sqlite: bool = tx
        .query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'tasks'
                AND sql LIKE '%AUTOINCREMENT%')",
            [],
            |row| row.get(0),
        )
        .map_err(&in_use)?;
    if numbered_by_sqlite {
        tracing::info!(path = %path.display(), "migrating the SQLite task store from file format version 0");
        renumber(&tx).map_err(&in_use)?;
    } else {
        tx.execute_batch(SCHEMA).map_err(&in_use)?;
    }
    tx.pragma_update(None, "user_version", SCHEMA_VERSION)
        .map_err(&in_use)?;
    tx.commit().map_err(&in_use)
}

/// Version 0 → 1: the tasks move to a table without `AUTOINCREMENT` (SQLite cannot drop it from
/// a table in place), keeping their numbers; the highest number SQLite ever gave becomes the
/// store's floor, so that no number is given again.
pub(super) fn renumber(tx: &Connection) -> rusqlite::Result<()> {
    add_result_column(tx)?;
    let given: Option<i64> = tx
        .query_row(
            "SELECT seq FROM sqlite_sequence WHERE name = 'tasks'",
            [],
            |row| row.get(0),
        )
        .optional()?;
    tx.execute_batch("ALTER TABLE tasks RENAME TO tasks_v0")?;
    for index in TASK_INDEXES {
        tx.execute_batch(&format!("DROP INDEX IF EXISTS {index}"))?;
    }
    tx.execute_batch(SCHEMA)?;
    tx.execute_batch(
        "INSERT INTO tasks (seq, id, owner, runner, due, record, result)
            SELECT seq, id, owner, runner, due, record, result FROM tasks_v0 ORDER BY seq;
         DROP TABLE tasks_v0",
    )?;
    if let Some(given) = given {
        raise_floor(tx, given)?;
    }
    Ok(())
}

/// Gives a file written before results had a column of their own that column. Its ended
/// tasks keep their results in their records, where [`decode`] still finds them.
pub(super) fn add_result_column(conn: &Connection) -> rusqlite::Result<()> {
    let has: bool = conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM pragma_table_info('tasks') WHERE name = 'result')",
        [],
        |row| row.get(0),
    )?;
    if !has {
        conn.execute_batch("ALTER TABLE tasks ADD COLUMN result TEXT")?;
    }
    Ok(())
}

/// Records that creation numbers up to `seq` may have been given (to tasks since removed).
pub(super) fn raise_floor(conn: &Connection, seq: i64) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO counters (name, value) VALUES ('seq', ?1)
         ON CONFLICT (name) DO UPDATE SET value = max(value, excluded.value)",
    )?
    .execute([seq])?;
    Ok(())
}

/// The next creation number: above every task's and above the floor.
pub(super) fn next_seq(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT max(coalesce((SELECT max(seq) FROM tasks), 0),
                    coalesce((SELECT value FROM counters WHERE name = 'seq'), 0)) + 1",
        [],
        |row| row.get(0),
    )
}
