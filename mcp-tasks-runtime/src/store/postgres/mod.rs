//! The PostgreSQL task store (cargo feature `postgres`): tasks kept durably and shared by every
//! server instance that points at the same database and schema.
//!
//! Built on `tokio-postgres` and `deadpool-postgres`: a plain async client with no macros or
//! compile-time query checking (the store has a dozen fixed statements), whose connection hands
//! out `LISTEN`/`NOTIFY` notifications as a message stream, and whose requests pipeline (a group
//! commit is two round trips); deadpool adds a small pool that replaces broken connections by
//! itself. sqlx would bring a larger dependency tree for features the store does not use.

use std::collections::HashMap;
use std::fmt;
use std::future::Future;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, SystemTime};

use deadpool_postgres::{Object, Pool};
use tokio::sync::{OnceCell, mpsc, oneshot};
use tokio::task::JoinHandle;

use super::backend::Remote;
use super::columns::{due_column, micros, runner_column};
use super::{Clock, ExpiryReport, NewTask, StoreError, StoreFuture, SystemClock};
use super::{StoredView, TaskRecord};
use crate::error_chain::with_causes;
use crate::protocol::task::{AsTaskView, Owner, TaskId, TaskView};

mod builder;
mod ended;
mod feed;
mod schema;
mod sql;
mod sweep;
mod writer;

use super::feed::Feed;
pub use builder::PostgresTaskStoreBuilder;
use sql::Sql;
use writer::{Job, Update};

/// How many shared connections serve reads ([`Shared::reader`]).
const READERS: usize = 2;
/// How many due tasks one [`TaskStore::expire`](super::TaskStore::expire) call handles (the next sweep takes the rest).
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
///   as soon as its notification arrives. The client's poll after a task ended costs no read
///   (bench/HISTORY.md, "Tasks seen to end read from the committed record").
///
/// # Wake-ups and events
///
/// Each committed change is also a notification (`pg_notify`) on the channel `SCHEMA.changes`:
/// kind, version, task id, the store that made it, and the record when it fits in Postgres'
/// 8000-byte payload. Every store keeps one dedicated connection that `LISTEN`s there: a
/// `tasks/update` or `tasks/cancel` received by instance B wakes [`TaskStore::changed`](super::TaskStore::changed) on
/// instance A, and reaches A's [`TaskStore::subscribe`](super::TaskStore::subscribe) feed. A store tells its own waiters and
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
/// The sweeper ([`TaskStore::expire`](super::TaskStore::expire)) applies [`TaskRecord::expiry`] by **the store's clock**
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
    /// Local waiters and subscribers.
    feed: Feed,
    /// Tasks that ended lately, as committed: an ended task changes no more, until it is deleted
    /// at the end of its retention, so a read finds them here (see [`Shared::ended`]).
    ended: Mutex<HashMap<TaskId, Arc<TaskRecord>>>,
    /// The shared read connections, and which one the next read takes.
    readers: [Mutex<Option<Arc<Object>>>; READERS],
    next_reader: AtomicUsize,
    /// Group commits that committed, and the changes they carried (for tests).
    transactions: AtomicU64,
    changes: AtomicU64,
    /// The next group commit panics once its new tasks are inserted (for a test).
    #[cfg(test)]
    panic_in_transaction: std::sync::atomic::AtomicBool,
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
            .field("listening", &self.shared.feed.online())
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

    /// Reads one task (of this owner, if given).
    async fn read(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
    ) -> Result<Option<TaskRecord>, StoreError> {
        if let Some(found) = self.ended(id, owner) {
            return Ok(found);
        }
        let text = self.read_text(id, owner).await?;
        text.as_deref().map(decode).transpose()
    }

    /// `read`'s view ([`Remote::view`]): what `tasks/get` shows, `read` called on it; whether the
    /// task was found.
    async fn read_view(
        &self,
        id: &TaskId,
        owner: &Owner,
        read: &mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> Result<bool, StoreError> {
        if let Some(found) = self.ended(id, Some(owner)) {
            return Ok(found.map(|record| read(record.task_view())).is_some());
        }
        let Some(text) = self.read_text(id, Some(owner)).await? else {
            return Ok(false);
        };
        let view: StoredView = serde_json::from_str(&text).map_err(|e| {
            StoreError::backend(format!("a task record in Postgres cannot be read: {e}"))
        })?;
        read(view.task_view());
        Ok(true)
    }

    /// The stored text of one task's record (of this owner, if given).
    async fn read_text(
        &self,
        id: &TaskId,
        owner: Option<&Owner>,
    ) -> Result<Option<String>, StoreError> {
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
        Ok(text)
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

impl Remote for PostgresTaskStore {
    /// `insert` queues the creation when called. A write on the task that a writer takes while
    /// another writer commits the creation (its insert not yet visible) is held back and queued
    /// again once the creation is answered; a write taken in the same batch as its creation,
    /// after it, shares its transaction (see the type's "A task's writes come after its
    /// creation").
    const CREATES_IN_ORDER: bool = true;

    fn time(&self) -> SystemTime {
        self.shared.clock.now()
    }

    fn insert(&self, task: NewTask) -> StoreFuture<'_, TaskRecord> {
        Box::pin(self.shared.create(task))
    }

    fn load<'a>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
    ) -> StoreFuture<'a, Option<TaskRecord>> {
        Box::pin(self.shared.read(id, owner))
    }

    fn view<'a>(
        &'a self,
        id: &'a TaskId,
        owner: &'a Owner,
        read: &'a mut (dyn FnMut(TaskView<'_>) + Send),
    ) -> StoreFuture<'a, bool> {
        Box::pin(self.shared.read_view(id, owner, read))
    }

    fn update<'a, T: Send + 'static>(
        &'a self,
        id: &'a TaskId,
        owner: Option<&'a Owner>,
        visible: bool,
        change: impl FnMut(&mut TaskRecord, SystemTime) -> Result<T, StoreError> + Send + 'static,
    ) -> impl Future<Output = Result<(T, TaskRecord), StoreError>> + Send + 'a {
        self.shared.update(id, owner, visible, change)
    }

    /// One page, read once no creation is under way (see "`list` misses nothing").
    fn page<'a>(
        &'a self,
        owner: &'a Owner,
        after: Option<u64>,
        limit: usize,
    ) -> StoreFuture<'a, (Vec<TaskRecord>, Option<u64>)> {
        let shared = &self.shared;
        Box::pin(async move {
            let after = after.map_or(0, |seq| seq as i64);
            shared.ready().await?;
            let fetch = i64::try_from(limit).unwrap_or(i64::MAX - 1) + 1;
            let rows = shared
                .bounded("listing tasks", async {
                    // In a transaction that holds the creators' lock exclusively (see "`list` misses
                    // nothing"): the page's snapshot is taken once no creation is under way.
                    let fail = |e| pg("listing tasks", &e);
                    let mut client = shared.connection().await?;
                    let statement = client
                        .prepare_cached(&shared.sql.list)
                        .await
                        .map_err(fail)?;
                    let turn = client
                        .prepare_cached("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))")
                        .await
                        .map_err(fail)?;
                    let tx = client.transaction().await.map_err(fail)?;
                    tx.execute(&turn, &[&shared.turn_key]).await.map_err(fail)?;
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
            Ok((tasks, last.filter(|_| more).map(|seq| seq as u64)))
        })
    }

    fn sweep_at(&self, now: SystemTime) -> StoreFuture<'_, ExpiryReport> {
        Box::pin(self.shared.expire(now))
    }

    fn lease<'a>(&'a self, instance: &'a str, duration: Option<Duration>) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let (sql, until) = match duration {
                Some(duration) => {
                    let until = self.shared.clock.now().checked_add(duration);
                    (&self.shared.sql.renew, Some(until.map_or(i64::MAX, micros)))
                }
                None => (&self.shared.sql.release, None),
            };
            self.shared.lease(sql, instance, until).await
        })
    }

    fn feed(&self) -> &Feed {
        &self.shared.feed
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
