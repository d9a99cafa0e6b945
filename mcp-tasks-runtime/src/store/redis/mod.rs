//! The Redis task store (cargo feature `redis`): tasks shared by every server instance that
//! points at the same Redis.

use std::fmt;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{Client, RedisError};
use tokio::task::JoinHandle;

use super::Expiry;
use super::backend::Remote;
use super::{Clock, ExpiryReport, NewTask, StoreError, StoreFuture, SystemClock};
use super::{StoredView, TaskRecord};
use crate::protocol::task::{AsTaskView, Owner, TaskId, TaskView};

/// How many times a state change is tried when other writers keep changing the task in between.
/// Each lost race costs one round trip and hands back the current record; after the first few,
/// a writer waits a random moment (up to 20 ms) so that many writers on one task spread out.
const MAX_ATTEMPTS: u64 = 1000;
/// How many due tasks one [`TaskStore::expire`](super::TaskStore::expire) call handles (the next sweep takes the rest).
const SWEEP_BATCH: usize = 1000;
/// How long after a task's retention ends Redis deletes its key by itself, in case no server
/// sweeps it (all instances down). Normally the sweeper deletes it at the exact time first.
const KEY_EXPIRY_GRACE: Duration = Duration::from_secs(60);

/// Tasks in Redis, shared by every server instance configured with the same Redis and key
/// prefix. Built with [`RedisTaskStore::open`] or [`RedisTaskStore::builder`].
///
/// # Layout
///
/// Under the prefix `P` (default `mcp-tasks`):
/// - `P:task:ID`: a hash per task, fields `v` (version), `r` (the record, JSON), `s` (creation
///   sequence number);
/// - `P:owner:OWNER`: a sorted set per owner, task ids scored by creation sequence (`list`);
/// - `P:deadlines`: a sorted set of the tasks the sweeper must act on at a known time (ms):
///   [`TaskRecord::due_at`], i.e. `created_at + deadline` while running, `terminal_at + ttl` once
///   ended;
/// - `P:leases`: a sorted set of engine instances, scored by the time (ms) their lease runs out;
///   `P:runners`: the instances that run tasks; `P:running:INSTANCE`: the ids of the tasks it runs
///   that have not ended;
/// - `P:seq`: the creation counter; `P:changes`: the pub/sub channel of every change.
///
/// # Atomicity and round trips
///
/// Every state change reads the record (`HGET`, one round trip), applies the pure rules of the
/// state machine ([`TaskRecord`]'s methods) in Rust, and writes it back with one Lua script
/// (`EVALSHA`, one round trip) that stores the record only if its version is still the one read,
/// and in the same atomic step updates the deadline index and key expiry and publishes the
/// change. When another instance
/// changed the task in between, the script returns the current record instead and the change is
/// applied again to it, so no update is ever lost. `get` is one `HGET`; `create` and `list`
/// are one script each.
///
/// # Wake-ups
///
/// Each change is published on `P:changes` (with the record, for client-visible changes). Every
/// store keeps one subscriber connection; [`TaskStore::changed`](super::TaskStore::changed) waits locally for a message
/// about its task, so a `tasks/update` or `tasks/cancel` received by instance B wakes the tool
/// running on instance A. When the subscriber connection is lost, it reconnects by itself and
/// then wakes every local waiter to re-read its task, so no change made during the gap is missed.
///
/// # Deadlines, leases, TTL and key expiry
///
/// The sweeper ([`TaskStore::expire`](super::TaskStore::expire)) applies the rules of [`TaskRecord::expiry`] by the store's
/// clock: one script finds the tasks whose deadline or retention is due (from the deadline index)
/// and the running tasks of instances whose lease has lapsed or was released (from the lease
/// and running sets); each is then failed or deleted with the same versioned writes as any other
/// change, so two instances sweeping at once do each thing once. `ttl` also maps to a Redis key
/// expiry: an ended task's key expires at `terminal_at + ttl`, a running task with a deadline
/// at `created_at + deadline + ttl` (the latest its retention can end if it is swept on time),
/// each plus one minute of grace, so Redis reclaims tasks even when no server is left to sweep
/// them; a running task without a deadline has no key expiry (it ends, or its instance's lease
/// lapses and the next sweep of any instance fails it).
///
/// # Failures
///
/// When Redis is unreachable, operations fail with [`StoreError::Backend`] (a `-32603` for the
/// client) within a few seconds, and the connections come back by themselves once Redis does.
/// Redis Cluster is not supported (the scripts touch keys of several hash slots); a single
/// Redis, or a primary with replicas, is.
pub struct RedisTaskStore {
    shared: Arc<Shared>,
    listener: JoinHandle<()>,
}

/// Settings for [`RedisTaskStore`]; see [`RedisTaskStore::builder`].
#[derive(Debug, Clone)]
pub struct RedisTaskStoreBuilder {
    url: String,
    prefix: String,
    clock: Arc<dyn Clock>,
    timeout: Duration,
}

struct Shared {
    clock: Arc<dyn Clock>,
    connection: ConnectionManager,
    keys: Keys,
    scripts: Scripts,
    /// For the subscriber connection.
    client: Client,
    /// Local waiters and subscribers.
    feed: Feed,
    timeout: Duration,
}

struct Keys {
    prefix: String,
    deadlines: String,
    seq: String,
    channel: String,
    leases: String,
    runners: String,
}

impl Keys {
    fn new(prefix: &str) -> Self {
        Keys {
            prefix: prefix.to_owned(),
            deadlines: format!("{prefix}:deadlines"),
            seq: format!("{prefix}:seq"),
            channel: format!("{prefix}:changes"),
            leases: format!("{prefix}:leases"),
            runners: format!("{prefix}:runners"),
        }
    }

    fn running_prefix(&self) -> String {
        format!("{}:running:", self.prefix)
    }

    /// The set of the tasks `runner` runs that have not ended (any key for a task without one).
    fn running(&self, runner: Option<&str>) -> String {
        format!("{}{}", self.running_prefix(), runner.unwrap_or_default())
    }

    fn task(&self, id: &TaskId) -> String {
        format!("{}:task:{}", self.prefix, id.as_str())
    }

    fn task_prefix(&self) -> String {
        format!("{}:task:", self.prefix)
    }

    fn owner(&self, owner: &Owner) -> String {
        format!("{}:owner:{}", self.prefix, owner.as_str())
    }
}

impl RedisTaskStoreBuilder {
    /// Keys start with `prefix:` (default `mcp-tasks`). Instances that share tasks must use the
    /// same prefix; different prefixes keep deployments apart on one Redis.
    pub fn prefix(mut self, prefix: impl Into<String>) -> Self {
        self.prefix = prefix.into();
        self
    }

    super::setters::clock_and_timeout!(
        timeout: "How long one Redis request (or connection attempt) may take before it fails \
                  (default 2 s)."
    );

    /// Creates the store without waiting for Redis: the connections are made in the background
    /// (and remade whenever lost). Must be called inside a Tokio runtime. Fails only on a bad URL.
    pub fn open(self) -> Result<RedisTaskStore, StoreError> {
        let client = Client::open(self.url.as_str()).map_err(StoreError::backend)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(500));
        let connection = ConnectionManager::new_lazy_with_config(client.clone(), config)
            .map_err(StoreError::backend)?;
        let shared = Arc::new(Shared {
            clock: self.clock,
            connection,
            keys: Keys::new(&self.prefix),
            scripts: Scripts::new(),
            client,
            feed: Feed::new(None),
            timeout: self.timeout,
        });
        let listener = tokio::spawn(listen(Arc::downgrade(&shared)));
        Ok(RedisTaskStore { shared, listener })
    }

    /// Creates the store and waits until Redis answers and the change feed is subscribed; fails
    /// if that does not happen within the timeout.
    pub async fn connect(self) -> Result<RedisTaskStore, StoreError> {
        let store = self.open()?;
        store.shared.ready().await?;
        let mut connection = store.shared.connection.clone();
        redis::cmd("PING")
            .query_async::<()>(&mut connection)
            .await
            .map_err(backend)?;
        Ok(store)
    }
}

impl RedisTaskStore {
    /// Settings for a store on the Redis at `url` (`redis://HOST:PORT[/DB]`, also
    /// `redis://:PASSWORD@HOST:PORT`).
    pub fn builder(url: impl Into<String>) -> RedisTaskStoreBuilder {
        RedisTaskStoreBuilder {
            url: url.into(),
            prefix: "mcp-tasks".to_owned(),
            clock: Arc::new(SystemClock),
            timeout: Duration::from_secs(2),
        }
    }

    /// [`RedisTaskStoreBuilder::open`] with the default settings.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).open()
    }

    /// [`RedisTaskStoreBuilder::connect`] with the default settings.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).connect().await
    }

    /// The key prefix.
    pub fn prefix(&self) -> &str {
        &self.shared.keys.prefix
    }
}

impl Drop for RedisTaskStore {
    fn drop(&mut self) {
        self.listener.abort();
    }
}

impl fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RedisTaskStore")
            .field("prefix", &self.shared.keys.prefix)
            .field("clock", &self.shared.clock)
            .field("listening", &self.shared.feed.online())
            .finish_non_exhaustive()
    }
}

/// Runs one Redis request. When it fails because the connection was refused, nothing was sent:
/// the connection manager was still holding its last failed attempt to reconnect (made while Redis
/// was down) and has now started a new one, so the request runs once more on that. This way the
/// first request after Redis returns succeeds. Other failures are not retried (a script may have
/// run before its connection dropped).
macro_rules! call {
    ($shared:expr, $conn:ident => $request:expr) => {{
        let mut $conn = $shared.conn();
        match $request.await {
            Err(error) if error.is_connection_refusal() => {
                let mut $conn = $shared.conn();
                $request.await.map_err(backend)
            }
            other => other.map_err(backend),
        }
    }};
}

mod feed;
mod scripts;

use super::feed::{Feed, listen};
use feed::note;
use scripts::Scripts;

impl Shared {
    fn conn(&self) -> ConnectionManager {
        self.connection.clone()
    }

    async fn load(&self, id: &TaskId) -> Result<Option<TaskRecord>, StoreError> {
        let raw = self.load_text(id).await?;
        raw.map(|raw| decode(&raw)).transpose()
    }

    /// The stored text of the task's record.
    async fn load_text(&self, id: &TaskId) -> Result<Option<Vec<u8>>, StoreError> {
        self.ready().await?;
        let mut get = redis::cmd("HGET");
        get.arg(self.keys.task(id)).arg("r");
        call!(self, conn => get.query_async(&mut conn))
    }

    /// Writes `after` if the stored version is still `before`'s.
    async fn store(
        &self,
        before: &TaskRecord,
        after: &TaskRecord,
        visible: bool,
    ) -> Result<Stored, StoreError> {
        let json = encode(after)?;
        let message = if visible {
            note("u", after.version, &after.id, &json)
        } else {
            note("i", after.version, &after.id, "")
        };
        let mut invocation = self.scripts.update.prepare_invoke();
        invocation
            .key(self.keys.task(&after.id))
            .key(&self.keys.deadlines)
            .key(self.keys.running(after.runner.as_deref()))
            .arg(before.version)
            .arg(after.version)
            .arg(json)
            .arg(&self.keys.channel)
            .arg(message)
            .arg(after.id.as_str());
        // Deadline, key expiry and the runner's set change when the task ends; a running
        // durable task moves between runners' sets when it is released or claimed.
        let ended = before.terminal_at != after.terminal_at;
        if ended {
            let (deadline, expiry) = self.expiry_of(after);
            invocation
                .arg(deadline.map_or_else(String::new, |d| d.to_string()))
                .arg(expiry.map_or_else(String::new, |e| e.to_string()));
        }
        if !ended
            && before.runner != after.runner
            && let Some(runner) = after.runner.as_deref()
        {
            invocation
                .key(self.keys.running(before.runner.as_deref()))
                .key(&self.keys.runners)
                .arg("-")
                .arg("")
                .arg(runner);
        }
        let reply: Vec<redis::Value> = call!(self, conn => invocation.invoke_async(&mut conn))?;
        match reply.as_slice() {
            [redis::Value::Int(2)] => Ok(Stored::Yes),
            [redis::Value::Int(0)] => Ok(Stored::Gone),
            [redis::Value::Int(1), redis::Value::BulkString(raw)] => {
                Ok(Stored::Conflict(Box::new(decode(raw)?)))
            }
            other => Err(StoreError::backend(format!(
                "unexpected reply from the update script: {other:?}"
            ))),
        }
    }

    /// The deadline-index score (ms since the epoch, [`TaskRecord::due_at`]) and the key expiry (ms
    /// from now) of a record; `None` for no deadline / no key expiry.
    fn expiry_of(&self, record: &TaskRecord) -> (Option<u64>, Option<u64>) {
        let retained_until = match (record.terminal_at, record.ttl) {
            (Some(ended), Some(ttl)) => ended.checked_add(ttl),
            (None, Some(ttl)) => record
                .deadline
                .and_then(|deadline| record.created_at.checked_add(deadline))
                .and_then(|due| due.checked_add(ttl)),
            (_, None) => None,
        };
        let expiry = retained_until.map(|until| {
            let left = until.duration_since(self.clock.now()).unwrap_or_default();
            millis_of(left + KEY_EXPIRY_GRACE)
        });
        (record.due_at().map(millis), expiry)
    }

    /// Deletes the task if it is still at `record`'s version.
    async fn remove(&self, record: &TaskRecord) -> Result<Stored, StoreError> {
        let owner = serde_json::to_string(&record.owner).map_err(StoreError::backend)?;
        let mut invocation = self.scripts.remove.prepare_invoke();
        invocation
            .key(self.keys.task(&record.id))
            .key(&self.keys.deadlines)
            .key(self.keys.owner(&record.owner))
            .key(self.keys.running(record.runner.as_deref()))
            .arg(record.version)
            .arg(record.id.as_str())
            .arg(&self.keys.channel)
            .arg(note("d", record.version, &record.id, &owner));
        let reply: Vec<redis::Value> = call!(self, conn => invocation.invoke_async(&mut conn))?;
        match reply.as_slice() {
            [redis::Value::Int(2)] => Ok(Stored::Yes),
            [redis::Value::Int(0)] => Ok(Stored::Gone),
            [redis::Value::Int(1), redis::Value::BulkString(raw)] => {
                Ok(Stored::Conflict(Box::new(decode(raw)?)))
            }
            other => Err(StoreError::backend(format!(
                "unexpected reply from the remove script: {other:?}"
            ))),
        }
    }
}

enum Stored {
    Yes,
    Gone,
    /// The version moved on: the current record.
    Conflict(Box<TaskRecord>),
}

impl Remote for RedisTaskStore {
    /// Redis acknowledges a write before it is on disk: restarted from its last snapshot (or
    /// its append-only file, fsynced once a second by default), it comes back without the
    /// writes made after it.
    const FORGETS_ACKNOWLEDGED_WRITES: bool = true;

    fn time(&self) -> SystemTime {
        self.shared.clock.now()
    }

    /// One script: the record, its indexes, its message.
    fn insert(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
        let shared = &self.shared;
        Box::pin(async move {
            shared.ready().await?;
            let record = TaskRecord::new(task, shared.clock.now());
            let json = encode(&record)?;
            let (deadline, expiry) = shared.expiry_of(&record);
            let runner = record.runner.as_deref();
            let mut invocation = shared.scripts.create.prepare_invoke();
            invocation
                .key(shared.keys.task(&record.id))
                .key(shared.keys.owner(&record.owner))
                .key(&shared.keys.deadlines)
                .key(&shared.keys.seq)
                .key(&shared.keys.runners)
                .key(shared.keys.running(runner))
                .arg(&json)
                .arg(record.id.as_str())
                .arg(deadline.map_or_else(String::new, |d| d.to_string()))
                .arg(expiry.map_or_else(String::new, |e| e.to_string()))
                .arg(&shared.keys.channel)
                .arg(note("u", record.version, &record.id, &json))
                .arg(runner.unwrap_or_default());
            let created: i64 = call!(shared, conn => invocation.invoke_async(&mut conn))?;
            if created == 0 {
                return Err(StoreError::DuplicateId(record.id));
            }
            Ok(record)
        })
    }

    fn load<'a>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let record = self.shared.load(id).await?;
            Ok(record.filter(|record| owner.is_none_or(|owner| record.owner == *owner)))
        })
    }

    fn view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let Some(raw) = self.shared.load_text(id).await? else {
                return Ok(false);
            };
            let view = decode_view(&raw)?;
            if view.owner != *owner {
                return Ok(false);
            }
            read(view.task_view());
            Ok(true)
        })
    }

    /// Reads the record, applies `change` and writes it back if the version is still the one
    /// read (see the type's docs); when another instance changed the task in between, applies
    /// `change` again to the record it left.
    fn update<'a, T: Send + 'static>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
        visible: bool,
        mut change: impl FnMut(&mut TaskRecord, SystemTime) -> Result<T, StoreError> + Send + 'static,
    ) -> impl Future<Output = Result<(T, TaskRecord), StoreError>> + Send + 'a {
        let shared = &self.shared;
        async move {
            let mut current = shared.load(id).await?;
            for attempt in 0..MAX_ATTEMPTS {
                if attempt >= 3 {
                    let pause = rand::random_range(0..attempt.min(20) * 1000);
                    tokio::time::sleep(Duration::from_micros(pause)).await;
                }
                let Some(before) = current.take() else {
                    return Err(StoreError::NotFound);
                };
                if owner.is_some_and(|owner| before.owner != *owner) {
                    return Err(StoreError::NotFound);
                }
                let mut record = before.clone();
                let out = change(&mut record, shared.clock.now())?;
                if record.version == before.version {
                    return Ok((out, record));
                }
                match shared.store(&before, &record, visible).await? {
                    Stored::Yes => return Ok((out, record)),
                    Stored::Gone => return Err(StoreError::NotFound),
                    Stored::Conflict(now) => current = Some(*now),
                }
            }
            Err(StoreError::backend(format!(
                "task {id} kept changing under {MAX_ATTEMPTS} attempts to update it"
            )))
        }
    }

    /// One script reads the page.
    fn page<'a>(
        &'a self,
        owner: &'a Owner,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, (Vec<TaskRecord>, Option<u64>)> {
        let shared = &self.shared;
        Box::pin(async move {
            let start = after.map_or(0, |seq| seq + 1);
            shared.ready().await?;
            let mut invocation = shared.scripts.list.prepare_invoke();
            invocation
                .key(shared.keys.owner(owner))
                .arg(start)
                .arg(limit.saturating_add(1))
                .arg(shared.keys.task_prefix());
            let (fetched, rows): (usize, Vec<(u64, Vec<u8>)>) =
                call!(shared, conn => invocation.invoke_async(&mut conn))?;
            let mut tasks = Vec::with_capacity(rows.len().min(limit));
            let mut last = None;
            for (seq, raw) in rows.into_iter().take(limit) {
                let record = decode(&raw)?;
                if record.owner == *owner {
                    tasks.push(record);
                }
                last = Some(seq);
            }
            Ok((tasks, (fetched > limit).then_some(last).flatten()))
        })
    }

    /// One script finds the tasks that are due and the instances whose lease lapsed; each task
    /// is then failed or deleted with a versioned write.
    fn sweep_at(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport> {
        let shared = &self.shared;
        Box::pin(async move {
            shared.ready().await?;
            let mut invocation = shared.scripts.due.prepare_invoke();
            invocation
                .key(&shared.keys.deadlines)
                .key(&shared.keys.runners)
                .key(&shared.keys.leases)
                .arg(millis(now))
                .arg(SWEEP_BATCH)
                .arg(shared.keys.running_prefix());
            let (mut due, lapsed): (Vec<String>, Vec<String>) =
                call!(shared, conn => invocation.invoke_async(&mut conn))?;
            due.sort_unstable();
            due.dedup();
            let mut report = ExpiryReport::default();
            if due.is_empty() {
                return Ok(report);
            }
            let ids: Vec<TaskId> = due.into_iter().map(TaskId::new).collect();
            let mut pipe = redis::pipe();
            for id in &ids {
                pipe.cmd("HGET").arg(shared.keys.task(id)).arg("r");
            }
            let records: Vec<Option<Vec<u8>>> = call!(shared, conn => pipe.query_async(&mut conn))?;
            for (id, raw) in ids.into_iter().zip(records) {
                let Some(raw) = raw else {
                    // Redis expired the key by itself: forget the deadline.
                    let mut forget = redis::cmd("ZREM");
                    forget.arg(&shared.keys.deadlines).arg(id.as_str());
                    call!(shared, conn => forget.query_async::<()>(&mut conn))?;
                    continue;
                };
                let mut record = decode(&raw)?;
                loop {
                    let alive = record
                        .runner
                        .as_ref()
                        .is_none_or(|runner| !lapsed.contains(runner));
                    match record.expiry(now, alive) {
                        Expiry::Keep => break,
                        verdict @ (Expiry::Deadline | Expiry::RunnerStopped) => {
                            let mut failed = record.clone();
                            if !failed.apply_expiry(verdict, now) {
                                report.unchanged(&record);
                                break;
                            }
                            match shared.store(&record, &failed, true).await? {
                                Stored::Yes => report.changed(failed),
                                Stored::Gone => {}
                                Stored::Conflict(current) => {
                                    record = *current;
                                    continue;
                                }
                            }
                            break;
                        }
                        Expiry::Remove => {
                            match shared.remove(&record).await? {
                                Stored::Yes => report.removed.push(id.clone()),
                                Stored::Gone => {}
                                Stored::Conflict(current) => {
                                    record = *current;
                                    continue;
                                }
                            }
                            break;
                        }
                    }
                }
            }
            Ok(report)
        })
    }

    fn lease<'a>(&'a self, instance: &'a str, duration: Option<Duration>) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let leases = &self.shared.keys.leases;
            let mut command = match duration {
                Some(duration) => {
                    let clock = &self.shared.clock;
                    let until = clock.now().checked_add(duration).map_or(u64::MAX, millis);
                    let mut renew = redis::cmd("ZADD");
                    renew.arg(leases).arg(until);
                    renew
                }
                None => {
                    let mut release = redis::cmd("ZREM");
                    release.arg(leases);
                    release
                }
            };
            command.arg(instance);
            call!(self.shared, conn => command.query_async::<()>(&mut conn))
        })
    }

    fn feed(&self) -> &Feed {
        &self.shared.feed
    }
}

fn encode(record: &TaskRecord) -> Result<String, StoreError> {
    record.to_stored_text().map_err(StoreError::backend)
}

/// What [`Remote::view`] reads of a stored record.
fn decode_view(raw: &[u8]) -> Result<StoredView, StoreError> {
    serde_json::from_slice(raw)
        .map_err(|e| StoreError::backend(format!("a task record in Redis does not decode: {e}")))
}

fn decode(raw: &[u8]) -> Result<TaskRecord, StoreError> {
    serde_json::from_slice(raw)
        .map_err(|e| StoreError::backend(format!("a task record in Redis does not decode: {e}")))
}

fn backend(error: RedisError) -> StoreError {
    StoreError::backend(format!("Redis: {error}"))
}

fn millis(at: SystemTime) -> u64 {
    millis_of(at.duration_since(UNIX_EPOCH).unwrap_or_default())
}

fn millis_of(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}
