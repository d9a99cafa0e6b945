//! What Redis itself did for the `mcp-redis` server: its command counts and its memory.

use crate::opts::Opts;
use mcp_tasks_bench::driver::Error;
use mcp_tasks_bench::measure::Sample;
use mcp_tasks_bench::servers::Kind;
use serde_json::{Value, json};

/// Redis's own count of the commands it ran (`INFO commandstats`, scripts' inner commands
/// included) over some MCP operations.
#[derive(Debug, Clone, Default)]
pub struct RedisCounts {
    /// Calls by command name.
    commands: std::collections::BTreeMap<String, u64>,
    /// MCP operations (tasks, gets) they served.
    pub ops: u64,
    /// JSON-RPC requests they served.
    trips: u64,
}

impl RedisCounts {
    /// Starts counting afresh (`CONFIG RESETSTAT`).
    pub fn reset(o: &Opts) -> Result<(), Error> {
        if let Some(redis) = &o.redis {
            redis
                .command(&["CONFIG", "RESETSTAT"])
                .ok_or("CONFIG RESETSTAT failed")?;
        }
        Ok(())
    }

    /// Adds what Redis counted since the last reset (less the bench's own INFO and CONFIG).
    pub fn read(&mut self, o: &Opts, sample: &Sample) {
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
        self.ops += sample.ops;
        self.trips += sample.trips;
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
            .map(|(name, n)| format!("{name} {:.2}", per(*n)))
            .collect();
        format!(
            "{:.2} Redis commands per operation ({:.2} per JSON-RPC request): {}",
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
            "commands_per_op": per(self.total()),
            "commands_per_request": self.total() as f64 / self.trips.max(1) as f64,
            "by_command_per_op": self.commands.iter().map(|(k, n)| (k.clone(), json!(per(*n)))).collect::<serde_json::Map<_, _>>(),
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
