//! The store's statements, for its schema.

use deadpool_postgres::Object;
use tokio_postgres::Statement;

use super::{Shared, pg};
use crate::store::StoreError;

/// The store's statements, for its schema.
pub(super) struct Sql {
    pub(super) get: String,
    pub(super) get_owned: String,
    pub(super) list: String,
    pub(super) insert: String,
    pub(super) lock: String,
    pub(super) update: String,
    pub(super) delete: String,
    pub(super) notify: String,
    pub(super) candidates: String,
    pub(super) live_leases: String,
    pub(super) drop_lapsed: String,
    pub(super) renew: String,
    pub(super) release: String,
}

impl Sql {
    pub(super) fn new(schema: &str) -> Self {
        let s = format!("\"{schema}\"");
        Sql {
            get: format!("SELECT record FROM {s}.tasks WHERE id = $1"),
            get_owned: format!("SELECT record FROM {s}.tasks WHERE id = $1 AND owner = $2"),
            list: format!(
                "SELECT seq, record FROM {s}.tasks WHERE owner = $1 AND seq > $2 ORDER BY seq LIMIT $3"
            ),
            insert: format!(
                "INSERT INTO {s}.tasks (id, owner, runner, due, version, record)
                 SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::int8[], $5::int8[], $6::text[])
                 ON CONFLICT (id) DO NOTHING RETURNING id"
            ),
            lock: format!(
                "SELECT id, owner, record FROM {s}.tasks WHERE id = ANY($1) ORDER BY id FOR UPDATE"
            ),
            // `t.id = ANY($1)` says again what the join says, for the planner: without it, on a
            // table never analysed (a new store, until autovacuum's first ANALYZE), the plan a
            // prepared statement keeps joins by hashing a scan of the whole table: every group
            // commit then read every task (2.3 ms a commit at 20,000 tasks, growing with them).
            update: format!(
                "UPDATE {s}.tasks AS t
                 SET runner = u.runner, due = u.due, version = u.version, record = u.record
                 FROM unnest($1::text[], $2::text[], $3::int8[], $4::int8[], $5::text[])
                     AS u(id, runner, due, version, record)
                 WHERE t.id = u.id AND t.id = ANY($1)"
            ),
            delete: format!("DELETE FROM {s}.tasks WHERE id = ANY($1)"),
            notify: "SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p".to_owned(),
            candidates: format!(
                "(SELECT id FROM {s}.tasks WHERE due <= $1 ORDER BY due LIMIT $2)
                 UNION
                 (SELECT id FROM {s}.tasks AS t WHERE runner IS NOT NULL
                     AND NOT EXISTS (SELECT 1 FROM {s}.leases AS l WHERE l.instance = t.runner)
                     LIMIT $2)"
            ),
            live_leases: format!("SELECT instance FROM {s}.leases"),
            drop_lapsed: format!("DELETE FROM {s}.leases WHERE until <= $1"),
            renew: format!(
                "INSERT INTO {s}.leases (instance, until) VALUES ($1, $2)
                 ON CONFLICT (instance) DO UPDATE SET until = excluded.until"
            ),
            release: format!("DELETE FROM {s}.leases WHERE instance = $1"),
        }
    }
}

/// The statements a group commit runs, prepared on its connection.
pub(super) struct Statements {
    pub(super) turn: Statement,
    pub(super) insert: Statement,
    pub(super) lock: Statement,
    pub(super) update: Statement,
    pub(super) notify: Statement,
    pub(super) commit: Statement,
}

impl Shared {
    /// The group-commit statements, prepared once per connection (then from its cache).
    pub(super) async fn statements(&self, client: &Object) -> Result<Statements, StoreError> {
        let prepare = |sql: &'static str| async move {
            client
                .prepare_cached(sql)
                .await
                .map_err(|e| pg("preparing a statement", &e))
        };
        let prepare_owned = |sql: &str| {
            let sql = sql.to_owned();
            async move {
                client
                    .prepare_cached(&sql)
                    .await
                    .map_err(|e| pg("preparing a statement", &e))
            }
        };
        Ok(Statements {
            turn: prepare("SELECT pg_advisory_xact_lock_shared(hashtextextended($1, 0))").await?,
            insert: prepare_owned(&self.sql.insert).await?,
            lock: prepare_owned(&self.sql.lock).await?,
            update: prepare_owned(&self.sql.update).await?,
            notify: prepare_owned(&self.sql.notify).await?,
            commit: prepare("COMMIT").await?,
        })
    }
}
