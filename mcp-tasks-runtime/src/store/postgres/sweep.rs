//! The lifetime rules, applied to the tasks that are due (see [`TaskStore::expire`](crate::store::TaskStore::expire)).

use std::collections::HashSet;
use std::sync::Arc;
use std::time::SystemTime;

use super::feed::payload;
use super::{SWEEP_BATCH, Shared, decode, encode, pg};
use crate::store::columns::{due_column, micros, runner_column};
use crate::store::{Expiry, ExpiryReport, StoreError, TaskRecord};

impl Shared {
    pub(super) async fn expire(&self, now: SystemTime) -> Result<ExpiryReport, StoreError> {
        self.ready().await?;
        let now_us = micros(now);
        let (failed, removed, queued) = self
            .bounded("expiring tasks", async {
                let mut client = self.connection().await?;
                let fail = |e| pg("expiring tasks", &e);
                client
                    .execute(&self.sql.drop_lapsed, &[&now_us])
                    .await
                    .map_err(fail)?;
                let ids: Vec<String> = client
                    .query(&self.sql.candidates, &[&now_us, &SWEEP_BATCH])
                    .await
                    .map_err(fail)?
                    .iter()
                    .map(|row| row.get(0))
                    .collect();
                if ids.is_empty() {
                    return Ok((vec![], vec![], vec![]));
                }
                let tx = client.transaction().await.map_err(fail)?;
                let rows = tx.query(&self.sql.lock, &[&ids]).await.map_err(fail)?;
                let live: HashSet<String> = tx
                    .query(&self.sql.live_leases, &[])
                    .await
                    .map_err(fail)?
                    .iter()
                    .map(|row| row.get(0))
                    .collect();
                let mut failed = Vec::new();
                let mut removed = Vec::new();
                let mut queued = Vec::new();
                let mut notes = Vec::new();
                for row in &rows {
                    let mut record = decode(row.get(2))?;
                    let alive = record.runner.as_ref().is_none_or(|r| live.contains(r));
                    match record.expiry(now, alive) {
                        Expiry::Keep => {}
                        Expiry::Remove => {
                            let owner = serde_json::to_string(&record.owner)
                                .map_err(StoreError::backend)?;
                            notes.push(payload(
                                "d",
                                record.version,
                                &record.id,
                                &self.origin,
                                &owner,
                            )?);
                            removed.push((record.id, record.owner));
                        }
                        verdict => {
                            if !record.apply_expiry(verdict, now) {
                                if record.is_queued() {
                                    queued.push(record.id);
                                }
                            } else {
                                let json = encode(&record)?;
                                notes.push(payload(
                                    "u",
                                    record.version,
                                    &record.id,
                                    &self.origin,
                                    &json,
                                )?);
                                failed.push((record, json));
                            }
                        }
                    }
                }
                if !failed.is_empty() {
                    let ids: Vec<&str> = failed.iter().map(|(r, _)| r.id.as_str()).collect();
                    let runners: Vec<Option<&str>> =
                        failed.iter().map(|(r, _)| runner_column(r)).collect();
                    let dues: Vec<Option<i64>> =
                        failed.iter().map(|(r, _)| due_column(r)).collect();
                    let versions: Vec<i64> = failed.iter().map(|(r, _)| r.version as i64).collect();
                    let records: Vec<&str> = failed.iter().map(|(_, j)| j.as_str()).collect();
                    tx.execute(
                        &self.sql.update,
                        &[&ids, &runners, &dues, &versions, &records],
                    )
                    .await
                    .map_err(fail)?;
                }
                if !removed.is_empty() {
                    let ids: Vec<&str> = removed.iter().map(|(id, _)| id.as_str()).collect();
                    tx.execute(&self.sql.delete, &[&ids]).await.map_err(fail)?;
                }
                if !notes.is_empty() {
                    tx.execute(&self.sql.notify, &[&self.channel, &notes])
                        .await
                        .map_err(fail)?;
                }
                tx.commit().await.map_err(fail)?;
                let failed: Vec<TaskRecord> = failed.into_iter().map(|(r, _)| r).collect();
                Ok((failed, removed, queued))
            })
            .await?;
        let mut report = ExpiryReport {
            queued,
            ..ExpiryReport::default()
        };
        for record in failed {
            self.announce(&Arc::new(record.clone()), true);
            report.changed(record);
        }
        for (id, owner) in removed {
            report.removed.push(id.clone());
            self.announce_removed(id, owner);
        }
        Ok(report)
    }
}
