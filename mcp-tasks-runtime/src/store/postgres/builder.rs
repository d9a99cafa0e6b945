//! The store's settings, and opening it with them.

use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, AtomicUsize};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use tokio::sync::{OnceCell, mpsc};
use tokio_postgres::NoTls;

use super::feed::RESYNC_EVERY;
use super::sql::Sql;
use super::writer::{self, Queue};
use super::{PostgresTaskStore, READERS, Shared, schema};
use crate::protocol::task::TaskId;
use crate::store::feed::{Feed, listen};
use crate::store::{Clock, StoreError, setters};

/// Settings for [`PostgresTaskStore`]; see [`PostgresTaskStore::builder`]. Its `Debug` output
/// hides the URL's password.
#[derive(Clone)]
pub struct PostgresTaskStoreBuilder {
    pub(super) url: String,
    pub(super) schema: String,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) timeout: Duration,
    pub(super) pool_size: usize,
    pub(super) writers: usize,
    pub(super) batch: usize,
    pub(super) reconnect_max: Duration,
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
pub(super) fn redact(url: &str) -> String {
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

    setters::clock_and_timeout!(
        timeout: "How long connecting, waiting for a pooled connection, or one statement may take \
                  before the operation fails (default 5 s)."
    );

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
    pub(super) fn reconnect_max(mut self, pause: Duration) -> Self {
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
            feed: Feed::new(Some(RESYNC_EVERY)),
            ended: Mutex::default(),
            readers: Default::default(),
            next_reader: AtomicUsize::new(0),
            transactions: AtomicU64::new(0),
            changes: AtomicU64::new(0),
            #[cfg(test)]
            panic_in_transaction: std::sync::atomic::AtomicBool::new(false),
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
