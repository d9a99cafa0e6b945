//! The store's tables, created and migrated by the store itself (see
//! [`PostgresTaskStore`](super::PostgresTaskStore), "Schema and migrations").

use tokio_postgres::Client;

use super::pg;
use crate::store::StoreError;

/// The migrations, in order: migration `n` (1-based) takes the schema from version `n - 1` to
/// `n`. `{s}` stands for the quoted schema name. Never edit one that has shipped; add another.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: tasks with the columns the indexes need, and the engines' leases.
    "CREATE TABLE {s}.tasks (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE,
        owner text NOT NULL,
        runner text,
        due bigint,
        version bigint NOT NULL,
        record text NOT NULL
    );
    CREATE INDEX tasks_by_owner ON {s}.tasks (owner, seq);
    CREATE INDEX tasks_by_due ON {s}.tasks (due) WHERE due IS NOT NULL;
    CREATE INDEX tasks_by_runner ON {s}.tasks (runner) WHERE runner IS NOT NULL;
    CREATE TABLE {s}.leases (
        instance text PRIMARY KEY,
        until bigint NOT NULL
    );",
    // 2: records in the compact storage form (see `TaskRecord`), which an older build cannot
    // read: it refuses the schema instead of failing on every record.
    "COMMENT ON COLUMN {s}.tasks.record IS
        'TaskRecord as JSON, times and durations in integer nanoseconds, empty fields left out';",
];

/// The schema version this build knows: the number of migrations.
pub(super) const LATEST: i32 = MIGRATIONS.len() as i32;

/// Whether `name` may name the store's schema: a lowercase SQL identifier (letters, digits,
/// `_`, not starting with a digit), at most 50 bytes so the change channel's name fits.
pub(super) fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 50
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
        && !name.as_bytes()[0].is_ascii_digit()
}

/// Brings schema `schema` to [`LATEST`] in one transaction, under an advisory lock on the schema's
/// name, so that instances starting together migrate once and in turn. A schema at a version
/// newer than [`LATEST`] is an error (a newer mcp-tasks made it). Returns the version it found.
pub(super) async fn migrate(client: &mut Client, schema: &str) -> Result<i32, StoreError> {
    let s = format!("\"{schema}\"");
    let tx = client
        .transaction()
        .await
        .map_err(|e| pg("starting the schema migration", &e))?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtextextended($1, 0))",
        &[&format!("mcp-tasks schema {schema}")],
    )
    .await
    .map_err(|e| pg("locking the schema for migration", &e))?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {s};
         CREATE TABLE IF NOT EXISTS {s}.schema_version (
             version integer PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now()
         );"
    ))
    .await
    .map_err(|e| pg(&format!("creating the schema {s}"), &e))?;
    let found: i32 = tx
        .query_one(
            &format!("SELECT coalesce(max(version), 0) FROM {s}.schema_version"),
            &[],
        )
        .await
        .map_err(|e| pg("reading the schema version", &e))?
        .get(0);
    if found > LATEST {
        return Err(StoreError::backend(format!(
            "the Postgres task store schema {s} is at version {found}, newer than this build of \
             mcp-tasks knows ({LATEST}): upgrade mcp-tasks, or point it at another schema"
        )));
    }
    for (index, migration) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        let version = index as i32 + 1;
        tx.batch_execute(&migration.replace("{s}", &s))
            .await
            .map_err(|e| pg(&format!("migrating {s} to version {version}"), &e))?;
        tx.execute(
            &format!("INSERT INTO {s}.schema_version (version) VALUES ($1)"),
            &[&version],
        )
        .await
        .map_err(|e| pg("recording the schema version", &e))?;
    }
    tx.commit()
        .await
        .map_err(|e| pg("committing the schema migration", &e))?;
    if found < LATEST {
        tracing::info!(
            schema,
            from = found,
            to = LATEST,
            "migrated the Postgres task store"
        );
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_plain_identifiers() {
        for good in ["mcp_tasks", "t1", "_x"] {
            assert!(valid_name(good), "{good}");
        }
        for bad in ["", "1x", "Upper", "a-b", "a\"b", "a.b", &"x".repeat(51)] {
            assert!(!valid_name(bad), "{bad}");
        }
    }
}
