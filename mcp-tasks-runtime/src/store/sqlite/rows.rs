//! Rows: the SQL, and a record to and from its row.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use rusqlite::{Connection, OptionalExtension, params};
use serde_json::value::RawValue;

use super::Shared;
use super::batch::Changes;
use crate::protocol::task::{Owner, TaskId};
use crate::store::columns::{due_column, runner_column};
use crate::store::frozen::Frozen;
use crate::store::{StoreError, TaskRecord};

/// A task by id.
pub(super) const GET: &str = "SELECT record, result FROM tasks WHERE id = ?1";
/// A task by id, if it belongs to this owner.
pub(super) const GET_OWNED: &str = "SELECT record, result FROM tasks WHERE id = ?1 AND owner = ?2";
/// One page of an owner's tasks, after a creation sequence number.
pub(super) const LIST: &str =
    "SELECT seq, record, result FROM tasks WHERE owner = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3";
/// The tasks the lifetime rules may act on at ?1: due by deadline or retention, or running for
/// an instance without a live lease.
pub(super) const CANDIDATES: &str = "SELECT record, result FROM tasks WHERE due <= ?1
    UNION ALL
    SELECT record, result FROM tasks WHERE runner IS NOT NULL
        AND runner NOT IN (SELECT instance FROM leases)
        AND (due IS NULL OR due > ?1)";

/// A task as stored: its record and its result, both JSON text.
pub(super) struct Stored {
    pub(super) record: String,
    pub(super) result: Option<String>,
}

impl Stored {
    /// Reads the `record` and `result` columns from `at` on.
    pub(super) fn from_row(row: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Stored> {
        Ok(Stored {
            record: row.get(at)?,
            result: row.get(at + 1)?,
        })
    }
}

/// The stored record of a task (of this owner, if given).
pub(super) fn fetch(
    conn: &Connection,
    id: &TaskId,
    owner: Option<&Owner>,
) -> Result<Option<Stored>, StoreError> {
    match owner {
        Some(owner) => conn
            .prepare_cached(GET_OWNED)
            .map_err(backend)?
            .query_row([id.as_str(), owner.as_str()], |row| {
                Stored::from_row(row, 0)
            })
            .optional(),
        None => conn
            .prepare_cached(GET)
            .map_err(backend)?
            .query_row([id.as_str()], |row| Stored::from_row(row, 0))
            .optional(),
    }
    .map_err(backend)
}

/// Applies `change` to the task as this transaction last wrote it, else as last committed, else
/// as stored (if it belongs to `owner`, when given), and writes it back if its version moved.
pub(super) fn apply_change<T>(
    conn: &Connection,
    shared: &Shared,
    changes: &mut Changes,
    id: &TaskId,
    owner: Option<&Owner>,
    visible: bool,
    change: impl FnOnce(&mut TaskRecord, SystemTime) -> Result<T, StoreError>,
) -> Result<(T, Arc<Frozen>), StoreError> {
    let latest = changes.latest(id).cloned().or_else(|| shared.recent(id));
    let now = shared.clock.now();
    let mut record = match latest {
        Some(task) => task.snapshot(),
        None => match fetch(conn, id, None)? {
            Some(stored) => decode(stored)?.into_record(),
            None => return Err(StoreError::NotFound),
        },
    };
    if owner.is_some_and(|owner| *owner != record.owner) {
        return Err(StoreError::NotFound);
    }
    let before = record.version;
    let out = change(&mut record, now)?;
    let task = Arc::new(Frozen::new(record));
    if task.record.version != before {
        write(conn, &task)?;
        changes.wrote(task.clone(), visible);
    }
    Ok((out, task))
}

/// Writes a changed task back, with the columns the indexes use.
pub(super) fn write(conn: &Connection, task: &Frozen) -> Result<(), StoreError> {
    store(conn, task, &encode(&task.record)?)
}

/// [`write`] with the record already encoded as `text`.
pub(super) fn store(conn: &Connection, task: &Frozen, text: &str) -> Result<(), StoreError> {
    let record = &task.record;
    conn.prepare_cached(
        "UPDATE tasks SET runner = ?2, due = ?3, record = ?4, result = ?5 WHERE id = ?1",
    )
    .map_err(backend)?
    .execute(params![
        record.id.as_str(),
        runner_column(record),
        due_column(record),
        text,
        task.result.as_deref().map(RawValue::get),
    ])
    .map_err(backend)?;
    Ok(())
}

/// Inserts a new task, numbered next; `Ok(0)` if a task with its id is stored already.
pub(super) fn insert(
    conn: &Connection,
    shared: &Shared,
    task: &Frozen,
    text: &str,
) -> Result<usize, StoreError> {
    let record = &task.record;
    conn.prepare_cached(
        "INSERT INTO tasks (seq, id, owner, runner, due, record, result)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
         ON CONFLICT (id) DO NOTHING",
    )
    .map_err(backend)?
    .execute(params![
        shared.next_seq.fetch_add(1, Ordering::Relaxed),
        record.id.as_str(),
        record.owner.as_str(),
        runner_column(record),
        due_column(record),
        text,
        task.result.as_deref().map(RawValue::get),
    ])
    .map_err(backend)
}

pub(super) fn encode(record: &TaskRecord) -> Result<String, StoreError> {
    record.to_stored_text().map_err(StoreError::backend)
}

/// A stored task. A result kept in the record itself (as files written before results had a
/// column of their own keep it) is read from there.
pub(super) fn decode(stored: Stored) -> Result<Frozen, StoreError> {
    let unreadable = |e| StoreError::backend(format!("a stored task record cannot be read: {e}"));
    let record = serde_json::from_str(&stored.record).map_err(unreadable)?;
    let result = stored
        .result
        .map(RawValue::from_string)
        .transpose()
        .map_err(unreadable)?;
    Ok(Frozen { record, result })
}

pub(super) fn backend(error: rusqlite::Error) -> StoreError {
    StoreError::backend(error)
}
