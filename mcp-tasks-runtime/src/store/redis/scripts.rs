//! The Lua scripts that make each change atomic (see [`RedisTaskStore`](super::RedisTaskStore),
//! "Atomicity and round trips"), each in a `.lua` file beside this one.

use redis::Script;

/// The scripts, loaded once per store (Redis caches them by hash: `EVALSHA`).
pub(super) struct Scripts {
    /// KEYS: task, owner index, deadlines, seq, runners, the runner's running set.
    /// ARGV: record, id, deadline ms or '', key expiry ms or '', channel, message,
    /// runner or ''.
    pub(super) create: Script,
    /// KEYS: task, deadlines, the runner's running set [, the former runner's running set,
    /// runners] (when the runner changes).
    /// ARGV: expected version, new version, record, channel, message, id
    /// [, deadline ms or '' or '-' (no end), key expiry ms or ''] (when the task ends)
    /// [, the new runner] (when a durable task's runner changes).
    /// Returns {2} stored, {0} gone, {1, current record} when the version moved on.
    pub(super) update: Script,
    /// KEYS: task, deadlines, owner index, the runner's running set.
    /// ARGV: expected version, id, channel, message.
    pub(super) remove: Script,
    /// What the sweeper must look at now. KEYS: deadlines, runners, leases.
    /// ARGV: now ms, batch size, running-set key prefix.
    /// Returns {ids due by the deadline index or run by a lapsed instance, lapsed
    /// instances}; forgets instances that run nothing any more.
    pub(super) due: Script,
    /// KEYS: owner index. ARGV: first seq, how many, task key prefix.
    /// Returns {ids fetched, {{seq, record}, ...}}; drops index entries whose task Redis
    /// expired by itself.
    pub(super) list: Script,
}

impl Scripts {
    pub(super) fn new() -> Self {
        Scripts {
            create: Script::new(include_str!("create.lua")),
            update: Script::new(include_str!("update.lua")),
            remove: Script::new(include_str!("remove.lua")),
            due: Script::new(include_str!("due.lua")),
            list: Script::new(include_str!("list.lua")),
        }
    }
}
