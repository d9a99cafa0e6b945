//! The lifetime rules, applied in one transaction (see [`TaskStore::expire`](crate::store::TaskStore::expire)).

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::SystemTime;

use rusqlite::{Connection, TransactionBehavior};

use super::Shared;
use super::recent::LetGo;
use super::rows::{CANDIDATES, Stored, backend, decode, write};
use super::schema::raise_floor;
use crate::store::columns::micros;
use crate::store::frozen::Frozen;
use crate::store::{Expiry, ExpiryReport, StoreError};

/// Applies the lifetime rules as of `now` in one transaction; see [`TaskStore::expire`]. With
/// the report come the records [`Shared::recent`] let go of, for the caller to drop once it has
/// let go of the connection.
pub(super) fn sweep(
    conn: &mut Connection,
    shared: &Shared,
    now: SystemTime,
) -> Result<(ExpiryReport, Vec<LetGo>), StoreError> {
    let now_us = micros(now);
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    tx.execute("DELETE FROM leases WHERE until <= ?1", [now_us])
        .map_err(backend)?;
    let live: HashSet<String> = tx
        .prepare_cached("SELECT instance FROM leases")
        .map_err(backend)?
        .query_map([], |row| row.get(0))
        .map_err(backend)?
        .collect::<Result<_, _>>()
        .map_err(backend)?;
    let candidates: Vec<Stored> = tx
        .prepare_cached(CANDIDATES)
        .map_err(backend)?
        .query_map([now_us], |row| Stored::from_row(row, 0))
        .map_err(backend)?
        .collect::<Result<_, _>>()
        .map_err(backend)?;
    let mut failed = Vec::new();
    let mut removed = Vec::new();
    let mut queued = Vec::new();
    for stored in candidates {
        let mut record = decode(stored)?.into_record();
        let alive = record.runner.as_ref().is_none_or(|r| live.contains(r));
        match record.expiry(now, alive) {
            Expiry::Keep => {}
            Expiry::Remove => {
                tx.prepare_cached("DELETE FROM tasks WHERE id = ?1")
                    .map_err(backend)?
                    .execute([record.id.as_str()])
                    .map_err(backend)?;
                removed.push((record.id, record.owner));
            }
            verdict => {
                if record.apply_expiry(verdict, now) {
                    let task = Frozen::new(record);
                    write(&tx, &task)?;
                    failed.push(task);
                } else if record.is_queued() {
                    queued.push(record.id);
                }
            }
        }
    }
    if !removed.is_empty() {
        // The removed tasks' numbers may have been the highest: they are not given again.
        raise_floor(&tx, shared.next_seq.load(Ordering::Relaxed) - 1).map_err(backend)?;
    }
    tx.commit().map_err(backend)?;
    shared.checkpoint_if_due(conn);
    let mut let_go = Vec::new();
    let mut report = ExpiryReport {
        queued,
        ..ExpiryReport::default()
    };
    for task in failed {
        report.changed(task.snapshot());
        let_go.extend(shared.committed(Arc::new(task), true));
    }
    for (id, owner) in removed {
        report.removed.push(id.clone());
        shared.announce_removed(id, owner);
    }
    Ok((report, let_go))
}
