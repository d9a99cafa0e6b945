//! What the shared store's server itself did for the `mcp-redis` and `mcp-postgres` servers:
//! Redis's command counts and memory; Postgres's statement counts (`pg_stat_statements`).

use crate::opts::Opts;
use mcp_tasks_bench::driver::Error;
use mcp_tasks_bench::measure::Sample;
use mcp_tasks_bench::servers::Kind;
use serde_json::{Value, json};

/// The store server's own count of what it ran over some MCP operations: Redis's commands (`INFO
/// commandstats`, scripts' inner commands included) or Postgres's statements
/// (`pg_stat_statements`, by the store's statement they are).
#[derive(Debug, Clone, Default)]
pub struct StoreCounts {
    /// Postgres's (else Redis's).
    postgres: bool,
    /// Calls by command name.
    commands: std::collections::BTreeMap<String, u64>,
    /// Postgres's time executing them, by command name, in milliseconds.
    millis: std::collections::BTreeMap<String, f64>,
    /// MCP operations (tasks, gets) they served.
    pub ops: u64,
    /// JSON-RPC requests they served.
    trips: u64,
}

impl StoreCounts {
    /// Whether `k` keeps its tasks in a store server whose counts we read.
    pub fn counted(k: Kind) -> bool {
        matches!(k, Kind::McpTasksRedis | Kind::McpTasksPostgres)
    }

    /// Starts counting afresh for a server of kind `k` (`CONFIG RESETSTAT`,
    /// `pg_stat_statements_reset()`); nothing for other kinds.
    pub fn reset(o: &Opts, k: Kind) -> Result<(), Error> {
        match (k, &o.redis, &o.postgres) {
            (Kind::McpTasksRedis, Some(redis), _) => {
                redis
                    .command(&["CONFIG", "RESETSTAT"])
                    .ok_or("CONFIG RESETSTAT failed")?;
            }
            (Kind::McpTasksPostgres, _, Some(pg)) => {
                pg.try_sql("postgres", "SELECT pg_stat_statements_reset()")?;
            }
            _ => {}
        }
        Ok(())
    }

    /// Adds what the store server of `k` counted since the last reset (less the bench's own
    /// queries).
    pub fn read(&mut self, o: &Opts, k: Kind, sample: &Sample) {
        match k {
            Kind::McpTasksRedis => self.read_redis(o),
            Kind::McpTasksPostgres => self.read_postgres(o),
            _ => return,
        }
        self.ops += sample.ops;
        self.trips += sample.trips;
    }

    /// Postgres's statements in the databases other than `postgres` (where the bench's own
    /// queries run), by the store's name for them.
    fn read_postgres(&mut self, o: &Opts) {
        self.postgres = true;
        let Some(pg) = &o.postgres else { return };
        let Ok(rows) = pg.try_sql(
            "postgres",
            "SELECT calls, total_exec_time, regexp_replace(query, '\\s+', ' ', 'g') FROM pg_stat_statements
             WHERE dbid <> (SELECT oid FROM pg_database WHERE datname = 'postgres')",
        ) else {
            return;
        };
        for line in rows.lines() {
            let mut fields = line.splitn(3, '|');
            let (Some(calls), Some(millis), Some(query)) =
                (fields.next(), fields.next(), fields.next())
            else {
                continue;
            };
            let calls: u64 = calls.trim().parse().unwrap_or(0);
            let millis: f64 = millis.trim().parse().unwrap_or(0.0);
            let name = statement_name(query);
            *self.commands.entry(name.clone()).or_default() += calls;
            *self.millis.entry(name).or_default() += millis;
        }
    }

    fn read_redis(&mut self, o: &Opts) {
        let Some(redis) = &o.redis else { return };
        for line in redis.info("commandstats").lines() {
            let Some((name, rest)) = line
                .strip_prefix("cmdstat_")
                .and_then(|l| l.split_once(':'))
            else {
                continue;
            };
            if name == "info" || name.starts_with("config") {
                continue;
            }
            let calls = rest
                .split(',')
                .find_map(|f| f.strip_prefix("calls="))
                .and_then(|n| n.parse::<u64>().ok())
                .unwrap_or(0);
            *self.commands.entry(name.to_owned()).or_default() += calls;
        }
    }

    fn total(&self) -> u64 {
        self.commands.values().sum()
    }

    /// One line for the table's footer.
    pub fn describe(&self) -> String {
        let per = |n: u64| n as f64 / self.ops.max(1) as f64;
        let parts: Vec<String> = self
            .commands
            .iter()
            .map(|(name, n)| match self.millis.get(name) {
                // Postgres's mean execution time of the statement.
                Some(ms) if *n > 0 => format!("{name} {:.2} ({:.3} ms)", per(*n), ms / *n as f64),
                _ => format!("{name} {:.2}", per(*n)),
            })
            .collect();
        let what = if self.postgres {
            "Postgres statements"
        } else {
            "Redis commands"
        };
        format!(
            "{:.2} {what} per operation ({:.2} per JSON-RPC request): {}",
            per(self.total()),
            self.total() as f64 / self.trips.max(1) as f64,
            parts.join(", ")
        )
    }

    /// The same, for the JSON document.
    pub fn json(&self) -> Value {
        let per = |n: u64| n as f64 / self.ops.max(1) as f64;
        json!({
            "ops": self.ops,
            "requests": self.trips,
            "store": if self.postgres { "postgres" } else { "redis" },
            "commands_per_op": per(self.total()),
            "commands_per_request": self.total() as f64 / self.trips.max(1) as f64,
            "by_command_per_op": self.commands.iter().map(|(k, n)| (k.clone(), json!(per(*n)))).collect::<serde_json::Map<_, _>>(),
            "mean_ms_by_command": self.millis.iter().map(|(k, ms)| (k.clone(), json!(ms / self.commands.get(k).copied().unwrap_or(0).max(1) as f64))).collect::<serde_json::Map<_, _>>(),
        })
    }
}

/// Redis's `used_memory` in bytes, for the `mcp-redis` server.
pub fn redis_used_memory(o: &Opts, k: Kind) -> Option<u64> {
    if k != Kind::McpTasksRedis {
        return None;
    }
    let info = o.redis.as_ref()?.info("memory");
    info.lines()
        .find_map(|l| l.strip_prefix("used_memory:"))
        .and_then(|v| v.trim().parse().ok())
}

/// The store's name for one of its statements (as `pg_stat_statements` normalised it).
fn statement_name(query: &str) -> String {
    let q = query.trim_start();
    let name = if q.starts_with("BEGIN") {
        "begin"
    } else if q.starts_with("COMMIT") {
        "commit (a group commit)"
    } else if q.starts_with("ROLLBACK") {
        "rollback"
    } else if q.starts_with("SELECT record") {
        "get"
    } else if q.starts_with("SELECT seq") {
        "list"
    } else if q.starts_with("SELECT id, owner") {
        "lock"
    } else if q.starts_with("SELECT pg_notify") {
        "notify"
    } else if q.starts_with("INSERT") && q.contains(".tasks") {
        "insert"
    } else if q.starts_with("UPDATE") {
        "update"
    } else if q.starts_with("INSERT") && q.contains(".leases") {
        "renew lease"
    } else if q.starts_with("DELETE") && q.contains(".leases") {
        "drop lapsed leases"
    } else if q.starts_with("(SELECT id") || q.starts_with("SELECT instance") {
        "sweep"
    } else {
        return q.split(' ').next().unwrap_or_default().to_lowercase();
    };
    name.to_owned()
}
