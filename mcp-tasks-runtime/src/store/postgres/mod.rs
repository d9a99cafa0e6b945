//! The PostgreSQL task store (cargo feature `postgres`): tasks kept durably and shared by every
//! server instance that points at the same database and schema.
//!
//! Built on `tokio-postgres` and `deadpool-postgres`: a plain async client with no macros or
//! compile-time query checking (the store has a dozen fixed statements), whose connection hands
//! out `LISTEN`/`NOTIFY` notifications as a message stream, and whose requests pipeline (a group
//! commit is two round trips); deadpool adds a small pool that replaces broken connections by
//! itself. sqlx would bring a larger dependency tree for features the store does not use.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use deadpool_postgres::{Manager, ManagerConfig, Object, Pool, RecyclingMethod, Runtime};
use serde_json::{Map, Value};
use tokio::sync::{OnceCell, broadcast, mpsc, oneshot, watch};
use tokio::task::JoinHandle;
use tokio_postgres::{NoTls, Statement};

use super::Expiry;
use super::TaskRecord;
use super::columns::{due_column, micros, runner_column};
use super::cursor::{decode_cursor, encode_cursor};
use super::fast::FastPaths;
use super::{
    CancelResult, Clock, DeliveryReport, ExpiryReport, NewTask, StoreError, StoreFuture,
    SystemClock, TaskEvent, TaskPage, TaskStore,
};
use crate::error_chain::with_causes;
use crate::protocol::task::{Owner, TaskId, TaskOutcome};
use crate::protocol::{InputRequest, ResourceContents};

mod feed;
mod schema;
mod writer;

use feed::{Note, listen, payload};
use writer::{Job, Queue, Update};

/// How many events a [`TaskStore::subscribe`] receiver may fall behind before it lags.
const EVENT_CAPACITY: usize = 1024;
/// How many shared connections serve reads ([`Shared::reader`]).
const READERS: usize = 2;
/// How many due tasks one [`TaskStore::expire`] call handles (the next sweep takes the rest).
const SWEEP_BATCH: i64 = 1000;

/// Tasks in PostgreSQL, shared by every server instance configured with the same database and
/// schema. Built with [`PostgresTaskStore::connect`] or [`PostgresTaskStore::builder`].
///
/// # Guarantees
///
/// - **Durable.** No change is acknowledged (no operation's future resolves) before the
///   transaction that made it has committed, with the server's `synchronous_commit` (on by
///   default: the commit is flushed to the write-ahead log). A server process killed at any
///   point, or Postgres stopped with `-m immediate`, loses nothing that was acknowledged.
/// - **Shared, strongly consistent.** Every change locks the task's row (`SELECT ... FOR
///   UPDATE`), applies the state machine ([`TaskRecord`]'s methods) in Rust, and writes it back in
///   the same transaction, so changes from any number of instances apply one after the other and
///   none is lost. The owner check is part of the same locked read. A read sees every change
///   acknowledged before it started.
/// - **Group commit.** Changes arriving together share a transaction: every change goes on one
///   queue, and each of a few writers (default 2, [`writers`](PostgresTaskStoreBuilder::writers))
///   takes all that has gathered (up to 128, [`batch_size`](PostgresTaskStoreBuilder::batch_size))
///   into one transaction on its connection (taken from the pool once and kept, with its prepared
///   statements, until it fails): insert the new tasks and lock the changed
///   ones in one pipelined round trip, apply the changes, write and commit in another, then
///   answer every change and notify the other instances. A change of a task created earlier in
///   the same batch is applied to the new record before the insert, which writes the task as it
///   leaves it (no lock, no update). One change's own error (unknown task,
///   task ended, key reused) fails that change only; an error of the database rolls the batch
///   back and its changes run again one by one, so one bad change cannot fail its neighbours. If
///   the connection is lost while committing, the changes of that batch fail with an error that
///   says their outcome is unknown (they are never run twice).
/// - **A task's writes come after its creation.** `create` queues the creation when it is
///   called, and a write on the task asked for afterwards is applied after it: in the same
///   transaction when one writer takes both, or, when another writer is still committing the
///   creation (its insert not yet visible), held back until that commit and queued again. So the
///   engine starts a tool while its task is being created, and a quick tool's outcome often
///   commits with its creation: one commit for the client to wait on instead of two.
/// - **`list` misses nothing.** Creation numbers (the `seq` a page's cursor is) are taken when a
///   task is inserted, not when its transaction commits, so a page read while a transaction
///   holding a lower number is still to commit could pass that number for good. Transactions
///   that create tasks therefore hold an advisory lock in shared mode from before their insert
///   to their end, and a `list` reads its page in a transaction that first takes the same lock
///   exclusively: it waits until no creating transaction is between its insert and its end
///   (every number given out has committed or rolled back), and the numbers given out after it
///   are higher than any it can see. Creating transactions, of any instance, run side by side;
///   only a `list` makes them wait (while it reads one page).
/// - **Reads** (`get`) share two connections and pipeline on them; a `get` is one statement,
///   through the task id's unique index. A `list` takes a pooled connection of its own. A task
///   this store saw end (the last 4,096, each of at most about 16 KiB, without outputs) is read
///   from the record it committed, without a statement: an ended task changes no more, and is deleted only once its retention
///   (`terminal_at + ttl`) is over, after which it is read from the table again, by the store's
///   clock; another instance's deletion (its sweep, by a clock ahead of this one) also drops it
///   as soon as its notification arrives. On the bench, the client's poll after a task ended
///   no longer costs a read: +13% on the task lifecycle.
///
/// # Wake-ups and events
///
/// Each committed change is also a notification (`pg_notify`) on the channel `SCHEMA.changes`:
/// kind, version, task id, the store that made it, and the record when it fits in Postgres'
/// 8000-byte payload. Every store keeps one dedicated connection that `LISTEN`s there: a
/// `tasks/update` or `tasks/cancel` received by instance B wakes [`TaskStore::changed`] on
/// instance A, and reaches A's [`TaskStore::subscribe`] feed. A store tells its own waiters and
/// subscribers directly, right after its commit.
///
/// The notifications of a batch are sent right after its commit, on the same connection, not
/// inside the transaction: Postgres serialises every transaction that notifies, in the whole
/// database, from just before its commit record until it ends (write-ahead log flush included),
/// so writers, and instances, could commit only one at a time (on the benchmark, notifying inside
/// the transaction halved the task lifecycle rate). Sent after the commit, a notification is still never
/// delivered for a change that did not commit; the price is that an instance that dies between its
/// commit and its notification leaves other instances' waiters unwoken, so every waiter also
/// re-reads its task every 5 s when nothing woke it. When the listening connection is lost it
/// reconnects by itself and then wakes every local waiter to re-read its task, so no change made
/// during the gap is missed by a waiter (subscribers, which are best effort, may miss events of
/// the gap).
///
/// # Deadlines, leases and TTL
///
/// The sweeper ([`TaskStore::expire`]) applies [`TaskRecord::expiry`] by **the store's clock**
/// ([`PostgresTaskStoreBuilder::clock`], the system clock by default), as the Redis store does:
/// task times, lease ends and `expire`'s `now` all come from it, not from the database's `now()`,
/// so instances should keep their clocks in step (NTP). Leases are rows of the `leases` table
/// (instance, end); `expire` reads the tasks that are due from an index on the next time the rules
/// act on a task (`created_at + deadline` while running, `terminal_at + ttl` once ended) and the
/// running tasks of instances without a live lease from an index on the runner of running tasks,
/// never the whole table; each is failed or deleted under its row lock, so two instances
/// sweeping at once do each thing once.
///
/// # Schema and migrations
///
/// The store creates its tables itself in its own schema (default `mcp_tasks`,
/// [`PostgresTaskStoreBuilder::schema`]; different schemas keep deployments or tests apart in one
/// database): `tasks`, `leases` and `schema_version`, which records the migrations applied. The
/// first operation (or [`connect`](PostgresTaskStoreBuilder::connect)) brings the schema to the
/// version this build knows, in one transaction under `pg_advisory_xact_lock`, so instances
/// starting together do not race. A schema newer than the build knows is refused with an error
/// that says so.
///
/// # Failures
///
/// When Postgres is unreachable, operations fail with [`StoreError::Backend`] (a `-32603` for the
/// client) naming what failed, within the timeout ([`PostgresTaskStoreBuilder::timeout`]); the
/// pool and the listener reconnect by themselves once it is back. TLS is not supported (a
/// `postgres://` URL without `sslmode=require`).
pub struct PostgresTaskStore {
    shared: Arc<Shared>,
    tasks: Vec<JoinHandle<()>>,
}

/// Settings for [`PostgresTaskStore`]; see [`PostgresTaskStore::builder`]. Its `Debug` output
/// hides the URL's password.
#[derive(Clone)]
pub struct PostgresTaskStoreBuilder {
    url: String,
    schema: String,
    clock: Arc<dyn Clock>,
    timeout: Duration,
    pool_size: usize,
    writers: usize,
    batch: usize,
    reconnect_max: Duration,
}

/// The most ended tasks a store keeps for reads ([`Shared::ended`]).
const ENDED_KEPT: usize = 4096;
/// About the most bytes of an ended task kept for reads: its outcome's strings, numbers and
/// keys; a task with outputs, or with more, is read from the table.
const ENDED_SIZE: usize = 16 * 1024;

/// Whether `record` is within [`ENDED_SIZE`] (its outcome, its status message, its retired
/// keys), counted without encoding it and no further than the bound.
fn small(record: &TaskRecord) -> bool {
    fn within(value: &Value, left: &mut usize) -> bool {
        let cost = match value {
            Value::String(text) => text.len() + 2,
            Value::Array(items) => {
                return take(left, 2) && items.iter().all(|item| within(item, left));
            }
            Value::Object(entries) => {
                return take(left, 2)
                    && entries
                        .iter()
                        .all(|(key, item)| take(left, key.len() + 3) && within(item, left));
            }
            _ => 8,
        };
        take(left, cost)
    }
    fn take(left: &mut usize, cost: usize) -> bool {
        *left = left.saturating_sub(cost);
        *left > 0
    }
    let mut left = ENDED_SIZE;
    if !record.outputs.is_empty()
        || !take(
            &mut left,
            record.status_message.as_ref().map_or(0, String::len),
        )
        || !record
            .retired_keys
            .iter()
            .all(|key| take(&mut left, key.len() + 3))
    {
        return false;
    }
    match &record.outcome {
        Some(TaskOutcome::Result(value)) => within(value, &mut left),
        Some(TaskOutcome::Error(error)) => {
            take(&mut left, error.message.len())
                && error
                    .data
                    .as_ref()
                    .is_none_or(|data| within(data, &mut left))
        }
        None => true,
    }
}

struct Shared {
    config: tokio_postgres::Config,
    pool: Pool,
    schema: String,
    /// The notification channel: `SCHEMA.changes`.
    channel: String,
    sql: Sql,
    /// This store's name in its notifications, so it ignores its own.
    origin: String,
    /// The advisory lock creating transactions hold shared and `list` takes exclusively (hashed
    /// by Postgres; see "`list` misses nothing").
    turn_key: String,
    clock: Arc<dyn Clock>,
    timeout: Duration,
    queue: mpsc::UnboundedSender<Job>,
    /// Tasks whose creation has been asked for and not yet answered, each with the writes on it
    /// that a writer took meanwhile without its creation: they wait for it (see
    /// [`FastPaths::creates_in_order`]).
    creating: Mutex<HashMap<TaskId, writer::Creating>>,
    /// The most changes one group commit carries.
    batch: usize,
    /// The longest pause between the listener's attempts to reconnect.
    reconnect_max: Duration,
    migrated: OnceCell<()>,
    /// Local waiters of [`TaskStore::changed`], by task.
    waiters: Mutex<HashMap<TaskId, watch::Sender<Note>>>,
    /// Tasks that ended lately, as committed: an ended task changes no more, until it is deleted
    /// at the end of its retention, so a read finds them here (see [`Shared::ended`]).
    ended: Mutex<HashMap<TaskId, Arc<TaskRecord>>>,
    events: broadcast::Sender<TaskEvent>,
    /// Set once the listener has listened for the first time.
    listening: watch::Sender<bool>,
    online: AtomicBool,
    /// The shared read connections, and which one the next read takes.
    readers: [Mutex<Option<Arc<Object>>>; READERS],
    next_reader: AtomicUsize,
    /// Group commits that committed, and the changes they carried (for tests).
    transactions: AtomicU64,
    changes: AtomicU64,
    /// The next group commit panics once its new tasks are inserted (for a test).
    #[cfg(test)]
    panic_in_transaction: AtomicBool,
}

/// The store's statements, for its schema.
struct Sql {
    get: String,
    get_owned: String,
    list: String,
    insert: String,
    lock: String,
    update: String,
    delete: String,
    notify: String,
    candidates: String,
    live_leases: String,
    drop_lapsed: String,
    renew: String,
    release: String,
}

impl Sql {
    fn new(schema: &str) -> Self {
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
struct Statements {
    turn: Statement,
    insert: Statement,
    lock: Statement,
    update: Statement,
    notify: Statement,
    commit: Statement,
}

impl fmt::Debug for PostgresTaskStoreBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresTaskStoreBuilder")
            .field("url", &redact(&self.url))
            .field("schema", &self.schema)
            .field("clock", &self.clock)
            .field("timeout", &self.timeout)
            .field("pool_size", &self.pool_size)
            .field("writers", &self.writers)
            .field("batch", &self.batch)
            .finish_non_exhaustive()
    }
}

/// `url` with the password of a `postgres://user:password@host` URL, or of a `password=...`
/// setting, replaced by `***`.
fn redact(url: &str) -> String {
    if let Some(rest) = url.split_once("://").map(|(_, rest)| rest)
        && let Some(at) = rest.rfind('@')
        && let Some(colon) = rest[..at].find(':')
    {
        let start = url.len() - rest.len() + colon + 1;
        let end = url.len() - rest.len() + at;
        return format!("{}***{}", &url[..start], &url[end..]);
    }
    url.split(' ')
        .map(|part| match part.split_once('=') {
            Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
            _ => part.to_owned(),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

impl PostgresTaskStoreBuilder {
    /// The schema the store's tables live in (default `mcp_tasks`): a lowercase SQL identifier
    /// (letters, digits, `_`), at most 50 bytes. Instances that share tasks must use the same
    /// schema; different schemas keep deployments apart in one database.
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into();
        self
    }

    /// The clock that stamps tasks and drives TTLs and leases (default: the system clock).
    pub fn clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// How long connecting, waiting for a pooled connection, or one statement may take before
    /// the operation fails (default 5 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// How many connections the pool keeps at most (default 16; at least the writers plus three:
    /// two shared by every read, one for the sweeper and leases), besides the one that listens for
    /// notifications.
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size;
        self
    }

    /// How many group-commit transactions may run at once (default 2, at least 1): one commits
    /// while the next gathers and writes. More writers make smaller batches and more commits; on
    /// the benchmark one or two do best.
    pub fn writers(mut self, writers: usize) -> Self {
        self.writers = writers;
        self
    }

    /// The most changes one transaction carries (default 128; 1 turns group commit off: one
    /// transaction per change).
    pub fn batch_size(mut self, changes: usize) -> Self {
        self.batch = changes;
        self
    }

    /// The longest pause between the listener's attempts to reconnect (default 1 s); tests hold
    /// a listener away with a longer one.
    #[cfg(test)]
    fn reconnect_max(mut self, pause: Duration) -> Self {
        self.reconnect_max = pause;
        self
    }

    /// Creates the store without waiting for Postgres: connections are made on first use (and
    /// remade whenever lost), and the first operation migrates the schema. Must be called inside
    /// a Tokio runtime. Fails on a bad URL or schema name.
    pub fn open(self) -> Result<PostgresTaskStore, StoreError> {
        if !schema::valid_name(&self.schema) {
            return Err(StoreError::backend(format!(
                "{:?} cannot name the Postgres task store's schema: use lowercase letters, digits and _ (at most 50, not starting with a digit)",
                self.schema
            )));
        }
        let mut config = tokio_postgres::Config::from_str(&self.url).map_err(|e| {
            StoreError::backend(format!(
                "the Postgres URL {:?} is not valid: {e}",
                redact(&self.url)
            ))
        })?;
        let millis = self.timeout.as_millis().max(1);
        config
            .connect_timeout(self.timeout)
            .application_name("mcp-tasks")
            .options(format!(
                "-c statement_timeout={millis} -c idle_in_transaction_session_timeout={}",
                millis.saturating_mul(10)
            ));
        let writers = self.writers.max(1);
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = Pool::builder(manager)
            .max_size(self.pool_size.max(writers + READERS + 1))
            .runtime(Runtime::Tokio1)
            .wait_timeout(Some(self.timeout))
            .create_timeout(Some(self.timeout))
            .recycle_timeout(Some(self.timeout))
            .build()
            .map_err(|e| StoreError::backend(format!("Postgres: building the pool: {e}")))?;
        let (queue, receiver) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            config,
            pool,
            channel: format!("{}.changes", self.schema),
            sql: Sql::new(&self.schema),
            turn_key: format!("mcp-tasks creates {}", self.schema),
            schema: self.schema,
            origin: TaskId::generate().as_str().to_owned(),
            clock: self.clock,
            timeout: self.timeout,
            queue,
            creating: Mutex::default(),
            batch: self.batch.max(1),
            reconnect_max: self.reconnect_max,
            migrated: OnceCell::new(),
            waiters: Mutex::default(),
            ended: Mutex::default(),
            events: broadcast::channel(EVENT_CAPACITY).0,
            listening: watch::channel(false).0,
            online: AtomicBool::new(false),
            readers: Default::default(),
            next_reader: AtomicUsize::new(0),
            transactions: AtomicU64::new(0),
            changes: AtomicU64::new(0),
            #[cfg(test)]
            panic_in_transaction: AtomicBool::new(false),
        });
        let receiver: Queue = Arc::new(tokio::sync::Mutex::new(receiver));
        let mut tasks = vec![tokio::spawn(listen(Arc::downgrade(&shared)))];
        for _ in 0..writers {
            tasks.push(tokio::spawn(writer::write(
                receiver.clone(),
                Arc::downgrade(&shared),
            )));
        }
        Ok(PostgresTaskStore { shared, tasks })
    }

    /// Creates the store, migrates the schema, and waits until the change listener listens;
    /// fails if Postgres cannot be reached within the timeout, or if the schema is newer than
    /// this build knows.
    pub async fn connect(self) -> Result<PostgresTaskStore, StoreError> {
        let store = self.open()?;
        store.shared.ready().await?;
        store.shared.listening().await?;
        Ok(store)
    }
}

impl PostgresTaskStore {
    /// Settings for a store on the database at `url`
    /// (`postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE`, or the key-value form
    /// `host=... user=... dbname=...`).
    pub fn builder(url: impl Into<String>) -> PostgresTaskStoreBuilder {
        PostgresTaskStoreBuilder {
            url: url.into(),
            schema: "mcp_tasks".to_owned(),
            clock: Arc::new(SystemClock),
            timeout: Duration::from_secs(5),
            pool_size: 16,
            writers: 2,
            batch: writer::MAX_BATCH,
            reconnect_max: Duration::from_secs(1),
        }
    }

    /// [`PostgresTaskStoreBuilder::open`] with the default settings.
    pub fn open(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).open()
    }

    /// [`PostgresTaskStoreBuilder::connect`] with the default settings.
    pub async fn connect(url: &str) -> Result<Self, StoreError> {
        Self::builder(url).connect().await
    }

    /// The schema its tables live in.
    pub fn schema(&self) -> &str {
        &self.shared.schema
    }

    /// The schema version this build of mcp-tasks creates and reads.
    pub const SCHEMA_VERSION: i32 = schema::LATEST;
}

impl Drop for PostgresTaskStore {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

impl fmt::Debug for PostgresTaskStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresTaskStore")
            .field("schema", &self.shared.schema)
            .field("clock", &self.shared.clock)
            .field("listening", &self.shared.online.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl Shared {
    /// Migrates the schema once per store (again on the next operation if it failed).
    async fn ready(&self) -> Result<(), StoreError> {
        self.migrated
            .get_or_try_init(|| async {
                let mut object = self.connection().await?;
                schema::migrate(&mut object, &self.schema).await?;
                Ok(())
            })
            .await
            .copied()
    }

    /// A pooled connection.
    async fn connection(&self) -> Result<Object, StoreError> {
        self.pool.get().await.map_err(pool_error)
    }

    /// A connection for reads, shared: concurrent reads pipeline on it (one write and one read
    /// of the socket carry many), where a connection per read would cost each its own system
    /// calls and wake-ups. Reads take the [`READERS`] connections in turn; one that has closed
    /// is replaced from the pool.
    async fn reader(&self) -> Result<Arc<Object>, StoreError> {
        let slot = &self.readers[self.next_reader.fetch_add(1, Ordering::Relaxed) % READERS];
        if let Some(client) = lock(slot).as_ref()
            && !client.is_closed()
        {
            return Ok(client.clone());
        }
        let client = Arc::new(self.connection().await?);
        *lock(slot) = Some(client.clone());
        Ok(client)
    }

    /// The group-commit statements, prepared once per connection (then from its cache).
    async fn statements(&self, client: &Object) -> Result<Statements, StoreError> {
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

    /// An ended task as this instance last saw it committed (`Some(None)`: another owner's),
    /// while its retention lasts by the store's clock; `None` when not kept.
    fn ended(&self, id: &TaskId, owner: Option<&Owner>) -> Option<Option<TaskRecord>> {
        let record = {
            let mut ended = lock(&self.ended);
            let record = ended.get(id)?.clone();
            if record.due_at().is_some_and(|due| self.clock.now() >= due) {
                // Deleted by now, or about to be: the table says which.
                ended.remove(id);
                return None;
            }
            record
        };
        // Copied once the map is let go of: other reads do not wait for the copy.
        Some(
            owner
                .is_none_or(|owner| *owner == record.owner)
                .then(|| (*record).clone()),
        )
    }

    /// Keeps `record` for reads if it has ended ([`Shared::ended`]) and is small: what it keeps
    /// stays within [`ENDED_KEPT`] times [`ENDED_SIZE`], whatever the tools return.
    fn keep_ended(&self, record: &Arc<TaskRecord>) {
        if !record.status.is_terminal() || !small(record) {
            return;
        }
        let mut ended = lock(&self.ended);
        if ended.len() >= ENDED_KEPT && !ended.contains_key(&record.id) {
            // Full: start again (the records are only a shortcut).
            ended.clear();
        }
        ended.insert(record.id.clone(), record.clone());
    }

    /// Reads one task (of this owner, if given).
    async fn read(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
    ) -> Result<Option<TaskRecord>, StoreError> {
        if let Some(found) = self.ended(id, owner) {
            return Ok(found);
        }
        self.ready().await?;
        let text: Option<String> = self
            .bounded("reading a task", async {
                let client = self.reader().await?;
                let row = match owner {
                    Some(owner) => {
                        let statement = client
                            .prepare_cached(&self.sql.get_owned)
                            .await
                            .map_err(|e| pg("reading a task", &e))?;
                        client
                            .query_opt(&statement, &[&id.as_str(), &owner.as_str()])
                            .await
                    }
                    None => {
                        let statement = client
                            .prepare_cached(&self.sql.get)
                            .await
                            .map_err(|e| pg("reading a task", &e))?;
                        client.query_opt(&statement, &[&id.as_str()]).await
                    }
                }
                .map_err(|e| pg("reading a task", &e))?;
                Ok(row.map(|row| row.get(0)))
            })
            .await?;
        text.as_deref().map(decode).transpose()
    }

    /// Runs `op` within the timeout.
    async fn bounded<T>(
        &self,
        what: &str,
        op: impl Future<Output = Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(self.timeout, op).await {
            Ok(result) => result,
            Err(_) => Err(StoreError::backend(format!(
                "Postgres: {what} took longer than {:?}",
                self.timeout
            ))),
        }
    }

    /// Queues a change for the writers and waits until its transaction has committed.
    async fn update<T: Send + 'static>(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
        visible: bool,
        change: impl FnMut(&mut TaskRecord, SystemTime) -> Result<T, StoreError> + Send + 'static,
    ) -> Result<(T, TaskRecord), StoreError> {
        self.ready().await?;
        let (reply, answer) = oneshot::channel();
        let job = Job::Update(Box::new(Update {
            id: id.clone(),
            owner: owner.cloned(),
            visible,
            change,
            out: None,
            reply,
        }));
        self.enqueue(job)?;
        let (out, record) = self.answer(answer).await?;
        Ok((out, Arc::unwrap_or_clone(record)))
    }

    fn enqueue(&self, job: Job) -> Result<(), StoreError> {
        self.queue
            .send(job)
            .map_err(|_| StoreError::backend("the Postgres task store's writers have stopped"))
    }

    /// Waits for a writer's answer. The writers bound each statement by the timeout; this bound
    /// (a few timeouts: the queue, the connection, two round trips) only guards against a
    /// connection that hangs without failing.
    async fn answer<T>(
        &self,
        answer: oneshot::Receiver<Result<T, StoreError>>,
    ) -> Result<T, StoreError> {
        match tokio::time::timeout(self.timeout * 4, answer).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(StoreError::backend(
                "the Postgres task store's writer stopped before answering",
            )),
            Err(_) => Err(StoreError::backend(format!(
                "Postgres: no answer to a change within {:?} (it may or may not have been saved)",
                self.timeout * 4
            ))),
        }
    }

    /// Queues the creation at once (the writer makes sure the schema is there before it
    /// writes), and returns the future of its answer. The task's writes asked for afterwards
    /// wait for it (see [`FastPaths::creates_in_order`]).
    fn create(
        &self,
        task: NewTask,
    ) -> impl Future<Output = Result<TaskRecord, StoreError>> + Send + '_ {
        let record = Arc::new(TaskRecord::new(task, self.clock.now()));
        let (reply, answer) = oneshot::channel();
        self.ask_creation(&record.id);
        let queued = self.enqueue(Job::Create {
            record: record.clone(),
            reply,
        });
        if queued.is_err() {
            self.answered_creation(&record.id);
        }
        async move {
            queued?;
            self.answer(answer).await?;
            Ok(Arc::unwrap_or_clone(record))
        }
    }

    async fn list(
        &self,
        owner: &Owner,
        cursor: Option<&str>,
        limit: usize,
    ) -> Result<TaskPage, StoreError> {
        let after = match cursor {
            None => 0,
            Some(cursor) => decode_cursor(cursor)
                .and_then(|seq| i64::try_from(seq).ok())
                .ok_or(StoreError::InvalidCursor)?,
        };
        self.ready().await?;
        let limit = limit.max(1);
        let fetch = i64::try_from(limit).unwrap_or(i64::MAX - 1) + 1;
        let rows = self
            .bounded("listing tasks", async {
                // In a transaction that holds the creators' lock exclusively (see "`list` misses
                // nothing"): the page's snapshot is taken once no creation is under way.
                let fail = |e| pg("listing tasks", &e);
                let mut client = self.connection().await?;
                let statement = client.prepare_cached(&self.sql.list).await.map_err(fail)?;
                let turn = client
                    .prepare_cached("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
                    .await
                    .map_err(fail)?;
                let tx = client.transaction().await.map_err(fail)?;
                tx.execute(&turn, &[&self.turn_key]).await.map_err(fail)?;
                let rows = tx
                    .query(&statement, &[&owner.as_str(), &after, &fetch])
                    .await
                    .map_err(fail)?;
                tx.commit().await.map_err(fail)?;
                Ok(rows)
            })
            .await?;
        let more = rows.len() > limit;
        let mut tasks = Vec::with_capacity(rows.len().min(limit));
        let mut last = None;
        for row in rows.iter().take(limit) {
            let seq: i64 = row.get(0);
            tasks.push(decode(row.get(1))?);
            last = Some(seq);
        }
        let next_cursor = match last {
            Some(seq) if more => Some(encode_cursor(seq as u64)),
            _ => None,
        };
        Ok(TaskPage { tasks, next_cursor })
    }

    async fn expire(&self, now: SystemTime) -> Result<ExpiryReport, StoreError> {
        self.ready().await?;
        let now_us = micros(now);
        let (failed, removed) = self
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
                    return Ok((vec![], vec![]));
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
                            if record.apply_expiry(verdict, now) {
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
                Ok((failed, removed))
            })
            .await?;
        for record in &failed {
            self.announce(&Arc::new(record.clone()), true);
        }
        let mut report = ExpiryReport {
            failed,
            removed: Vec::with_capacity(removed.len()),
        };
        for (id, owner) in removed {
            report.removed.push(id.clone());
            self.announce_removed(id, owner);
        }
        Ok(report)
    }

    async fn lease(&self, sql: &str, instance: &str, until: Option<i64>) -> Result<(), StoreError> {
        self.ready().await?;
        self.bounded("writing a lease", async {
            let client = self.connection().await?;
            let statement = client
                .prepare_cached(sql)
                .await
                .map_err(|e| pg("writing a lease", &e))?;
            match until {
                Some(until) => client.execute(&statement, &[&instance, &until]).await,
                None => client.execute(&statement, &[&instance]).await,
            }
            .map_err(|e| pg("writing a lease", &e))?;
            Ok(())
        })
        .await
    }
}

impl TaskStore for PostgresTaskStore {
    /// Queues the creation when called: a write on the task asked for afterwards is applied
    /// after it (see the type's "A task's writes come after its creation").
    fn create(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
        Box::pin(self.shared.create(task))
    }

    fn get<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(self.shared.read(id, Some(owner)))
    }

    fn get_unchecked<'a>(&'a self, id: &'a TaskId) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(self.shared.read(id, None))
    }

    fn list<'a>(
        &'a self,
        owner: &'a Owner,
        cursor: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, TaskPage> {
        Box::pin(self.shared.list(owner, cursor, limit))
    }

    fn set_status_message<'a>(
        &'a self,
        id: &'a TaskId,
        message: Option<String>,
    ) -> StoreFuture<'a, TaskRecord> {
        Box::pin(async move {
            let change = move |record: &mut TaskRecord, now| {
                record.set_status_message(message.clone(), now);
                Ok(())
            };
            Ok(self.shared.update(id, None, true, change).await?.1)
        })
    }

    fn add_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: String,
        request: InputRequest,
    ) -> StoreFuture<'a, u64> {
        Box::pin(async move {
            let change = move |record: &mut TaskRecord, now| {
                record.add_input_request(key.clone(), request.clone(), now)
            };
            Ok(self.shared.update(id, None, true, change).await?.1.version)
        })
    }

    fn withdraw_input_request<'a>(
        &'a self,
        id: &'a TaskId,
        key: &'a str,
    ) -> StoreFuture<'a, TaskRecord> {
        Box::pin(async move {
            let key = key.to_owned();
            let change = move |record: &mut TaskRecord, now| {
                record.withdraw_input_request(&key, now);
                Ok(())
            };
            Ok(self.shared.update(id, None, true, change).await?.1)
        })
    }

    fn deliver_responses<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        responses: Map<String, Value>,
    ) -> StoreFuture<'a, DeliveryReport> {
        Box::pin(async move {
            let change = move |record: &mut TaskRecord, now| {
                Ok(record.deliver_responses(responses.clone(), now))
            };
            let (delivery, record) = self.shared.update(id, Some(owner), true, change).await?;
            Ok(DeliveryReport {
                accepted: delivery.accepted,
                ignored: delivery.ignored,
                version: record.version,
                status: record.status,
            })
        })
    }

    fn take_response<'a>(&'a self, id: &'a TaskId, key: &'a str) -> StoreFuture<'a, Option<Value>> {
        Box::pin(async move {
            let key = key.to_owned();
            let change = move |record: &mut TaskRecord, _| Ok(record.take_response(&key));
            Ok(self.shared.update(id, None, false, change).await?.0)
        })
    }

    fn add_output<'a>(
        &'a self,
        id: &'a TaskId,
        name: String,
        contents: ResourceContents,
    ) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let change =
                move |record: &mut TaskRecord, _| record.add_output(name.clone(), contents.clone());
            self.shared.update(id, None, false, change).await?;
            Ok(())
        })
    }

    fn finish<'a>(&'a self, id: &'a TaskId, outcome: TaskOutcome) -> StoreFuture<'a, TaskRecord> {
        Box::pin(async move {
            let change = move |record: &mut TaskRecord, now| {
                record.finish(outcome.clone(), now);
                Ok(())
            };
            Ok(self.shared.update(id, None, true, change).await?.1)
        })
    }

    fn cancel<'a>(&'a self, id: &'a TaskId, owner: &'a Owner) -> StoreFuture<'a, CancelResult> {
        Box::pin(async move {
            let change = |record: &mut TaskRecord, now| Ok(record.cancel(now));
            let (cancelled, record) = self.shared.update(id, Some(owner), true, change).await?;
            Ok(if cancelled {
                CancelResult::Cancelled(record)
            } else {
                CancelResult::AlreadyTerminal(record)
            })
        })
    }

    fn now(&self) -> SystemTime {
        self.shared.clock.now()
    }

    fn expire(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport> {
        Box::pin(self.shared.expire(now))
    }

    fn renew_lease<'a>(&'a self, instance: &'a str, duration: Duration) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let until = self
                .shared
                .clock
                .now()
                .checked_add(duration)
                .map_or(i64::MAX, micros);
            let sql = &self.shared.sql.renew;
            self.shared.lease(sql, instance, Some(until)).await
        })
    }

    fn release_lease<'a>(&'a self, instance: &'a str) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let sql = &self.shared.sql.release;
            self.shared.lease(sql, instance, None).await
        })
    }

    fn changed<'a>(&'a self, id: &'a TaskId, seen_version: u64) -> StoreFuture<'a, TaskRecord> {
        Box::pin(self.shared.changed(id, seen_version))
    }

    fn subscribe(&self) -> broadcast::Receiver<TaskEvent> {
        self.shared.events.subscribe()
    }

    fn fast_paths(&self) -> Option<&dyn FastPaths> {
        Some(self)
    }
}

/// The generic paths, and one property: a task's writes are applied after its creation.
impl FastPaths for PostgresTaskStore {
    /// `create` queues the creation when called. A write on the task that a writer takes while
    /// another writer commits the creation (its insert not yet visible) is held back and queued
    /// again once the creation is answered; a write taken in the same batch as its creation,
    /// after it, shares its transaction.
    fn creates_in_order(&self) -> bool {
        true
    }
}

fn encode(record: &TaskRecord) -> Result<String, StoreError> {
    record.to_stored_text().map_err(StoreError::backend)
}

fn decode(text: &str) -> Result<TaskRecord, StoreError> {
    serde_json::from_str(text)
        .map_err(|e| StoreError::backend(format!("a task record in Postgres cannot be read: {e}")))
}

/// A Postgres failure while doing `what`.
fn pg(what: &str, error: &tokio_postgres::Error) -> StoreError {
    StoreError::backend(format!("Postgres: {what}: {}", with_causes(error)))
}

fn pool_error(error: deadpool_postgres::PoolError) -> StoreError {
    StoreError::backend(format!(
        "Postgres: getting a connection: {}",
        with_causes(&error)
    ))
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

#[cfg(test)]
mod tests;
