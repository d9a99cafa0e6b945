//! The stored task: [`TaskRecord`], everything a store keeps about one task.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::protocol::Era;
use crate::protocol::task::{AsTaskView, Owner, TaskId, TaskOutcome, TaskStatus, TaskView};
use crate::protocol::{InputRequest, ResourceContents};

/// Everything stored about one task: plain data, read and written only through a task store
/// ([`crate::store`]); the runtime renders it to the wire.
///
/// The serde encoding is a *storage* format for durable stores, not a wire shape; the wire shapes
/// are the renderers. It is compact: times and durations are integer nanoseconds (since the Unix
/// epoch, for a time), and a field with nothing in it (`None`, an empty map or set) is left out.
/// Records written in serde's own forms (`{"secs_since_epoch":…,"nanos_since_epoch":…}`,
/// `{"secs":…,"nanos":…}`, `null`, `{}`), as mcp-tasks wrote them before, read as well; an
/// older mcp-tasks cannot read the compact form.
#[derive(Debug, Clone, PartialEq, wire::Serialize, wire::Deserialize)]
pub struct TaskRecord {
    /// The id.
    pub id: TaskId,
    /// Who may see and act on the task.
    pub owner: Owner,
    /// The era it was created in.
    pub origin: Era,
    /// Current status.
    pub status: TaskStatus,
    /// A message for people about the current status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created.
    #[serde(with = "stored::time")]
    pub created_at: SystemTime,
    /// When anything a client can see last changed.
    #[serde(with = "stored::time")]
    pub last_updated_at: SystemTime,
    /// How long the task's record is kept (the wire's `ttl`/`ttlMs`): at least `ttl` from
    /// creation and, once the task has ended, `ttl` after it ended. It never ends a running task;
    /// [`deadline`](Self::deadline) does. `None` = kept forever.
    #[serde(
        default,
        with = "stored::duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub ttl: Option<Duration>,
    /// How long the task may run, from creation: a task still running at `created_at + deadline`
    /// fails, with a status message that says so. `None` (the default) = no limit. Not on the
    /// wire.
    #[serde(
        default,
        with = "stored::duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub deadline: Option<Duration>,
    /// The engine instance running the task (see the store's leases): when that instance's lease
    /// lapses, the task fails as stopped. `None` for a task no engine runs. Not on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runner: Option<String>,
    /// The polling interval suggested to clients.
    #[serde(
        default,
        with = "stored::duration",
        skip_serializing_if = "Option::is_none"
    )]
    pub poll_interval: Option<Duration>,
    /// The name of the tool whose call created the task, when known: over HTTP with OAuth, a
    /// `tasks/*` request must hold that tool's scopes as the `tools/call` did. Not on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// Input requests waiting for an answer, by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_requests: BTreeMap<String, InputRequest>,
    /// Answers delivered by the client that the waiting tool has not taken yet, by key.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub input_responses: BTreeMap<String, Value>,
    /// Answers the tool took, by key: kept for the task's life, so that taking an answer again
    /// (a retry whose first reply was lost) gets it again, and a durable task's next run gets
    /// the answers of the runs before it without asking twice.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub answers: BTreeMap<String, Value>,
    /// What a durable task keeps to run again on another instance (`None` for other tasks).
    /// Not on the wire.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub durable: Option<Box<super::DurableRun>>,
    /// Keys that were answered or withdrawn. A key is used for the task's whole life: it may not
    /// name a second request.
    #[serde(default, skip_serializing_if = "BTreeSet::is_empty")]
    pub retired_keys: BTreeSet<String>,
    /// How it ended; set when the task turned `completed` or `failed` (never for `cancelled`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub outcome: Option<TaskOutcome>,
    /// What the tool published as the task's outputs, by name: resources the task's owner reads
    /// with `resources/read` at `task://{id}/{name}`
    /// ([`ToolContext::publish_text`](crate::ToolContext::publish_text)). Never shown by
    /// `tasks/get`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub outputs: BTreeMap<String, ResourceContents>,
    /// Bumped by every change; starts at 1. Waiters and optimistic writers compare it.
    pub version: u64,
    /// When it turned terminal.
    #[serde(
        default,
        with = "stored::opt_time",
        skip_serializing_if = "Option::is_none"
    )]
    pub terminal_at: Option<SystemTime>,
}

/// The room a record's stored text is written into at first: a new task's record is about 330
/// bytes, and `serde_json::to_string`'s buffer starts at 128 and grows twice to hold it (each a
/// copy).
#[cfg(any(test, feature = "sqlite", feature = "redis", feature = "postgres"))]
const STORED_TEXT_ROOM: usize = 512;

impl TaskRecord {
    /// The record in serde's own forms of times and durations, every field written: the stored
    /// text of records written before the compact encoding, for the tests of reading them.
    #[cfg(test)]
    pub(crate) fn to_legacy_text(&self) -> String {
        fn time(t: SystemTime) -> Value {
            let since = t.duration_since(SystemTime::UNIX_EPOCH).unwrap();
            serde_json::json!({"secs_since_epoch": since.as_secs(), "nanos_since_epoch": since.subsec_nanos()})
        }
        fn span(d: Option<Duration>) -> Value {
            d.map_or(
                Value::Null,
                |d| serde_json::json!({"secs": d.as_secs(), "nanos": d.subsec_nanos()}),
            )
        }
        let mut text = serde_json::to_value(self).unwrap();
        let fields = text.as_object_mut().unwrap();
        fields.insert("created_at".into(), time(self.created_at));
        fields.insert("last_updated_at".into(), time(self.last_updated_at));
        fields.insert(
            "terminal_at".into(),
            self.terminal_at.map_or(Value::Null, time),
        );
        for (name, value) in [
            ("ttl", self.ttl),
            ("deadline", self.deadline),
            ("poll_interval", self.poll_interval),
        ] {
            fields.insert(name.into(), span(value));
        }
        for name in ["status_message", "runner", "outcome"] {
            fields.entry(name).or_insert(Value::Null);
        }
        for name in ["input_requests", "input_responses"] {
            fields.entry(name).or_insert_with(|| serde_json::json!({}));
        }
        fields
            .entry("retired_keys")
            .or_insert_with(|| serde_json::json!([]));
        text.to_string()
    }

    /// The record as the durable stores keep it: its serde encoding, as JSON text.
    #[cfg(any(test, feature = "sqlite", feature = "redis", feature = "postgres"))]
    pub(crate) fn to_stored_text(&self) -> Result<String, serde_json::Error> {
        let mut text = Vec::with_capacity(STORED_TEXT_ROOM);
        serde_json::to_writer(&mut text, self)?;
        Ok(String::from_utf8(text).expect("serde_json writes UTF-8"))
    }

    /// Whether `key` has named an input request of this task (outstanding, answered or withdrawn).
    pub fn key_used(&self, key: &str) -> bool {
        self.input_requests.contains_key(key) || self.retired_keys.contains(key)
    }

    /// [`TaskView::modern_create_result`] of this task.
    pub(crate) fn modern_create_result(&self) -> Value {
        self.task_view().modern_create_result()
    }

    /// [`TaskView::modern_get_result`] of this task.
    #[cfg(test)]
    pub(crate) fn modern_get_result(&self) -> Value {
        self.task_view().modern_get_result()
    }

    /// [`TaskView::modern_notification_params`] of this task.
    pub(crate) fn modern_notification_params(&self) -> Value {
        self.task_view().modern_notification_params()
    }

    /// [`TaskView::legacy_task`] of this task.
    pub(crate) fn legacy_task(&self) -> Value {
        self.task_view().legacy_task()
    }

    /// [`TaskView::legacy_create_result`] of this task.
    #[cfg(test)]
    pub(crate) fn legacy_create_result(&self) -> Value {
        self.task_view().legacy_create_result()
    }

    /// The 2025-11-25 `notifications/tasks/status` params: the `Task` ([`Self::legacy_task`]).
    pub(crate) fn legacy_status_notification_params(&self) -> Value {
        self.legacy_task()
    }
}

impl AsTaskView for TaskRecord {
    fn task_view(&self) -> TaskView<'_> {
        TaskView {
            id: &self.id,
            status: self.status,
            status_message: self.status_message.as_deref(),
            created_at: self.created_at,
            last_updated_at: self.last_updated_at,
            ttl: self.ttl,
            poll_interval: self.poll_interval,
            input_requests: &self.input_requests,
            outcome: self.outcome.as_ref().map(Into::into),
        }
    }
}

/// What `tasks/get` shows of a stored record, and its owner, read from the stored text without
/// the rest: the task's outputs (up to
/// [`Limits::output_bytes_per_task`](crate::server::Limits::output_bytes_per_task)), the answers
/// its tool has not taken and its retired keys are passed over, never built in memory (serde
/// skips the fields a struct does not name). For the stores that keep records as text.
#[cfg(any(feature = "redis", feature = "postgres"))]
#[derive(Debug, wire::Deserialize)]
pub(crate) struct StoredView {
    id: TaskId,
    pub(crate) owner: Owner,
    status: TaskStatus,
    #[serde(default)]
    status_message: Option<String>,
    #[serde(with = "stored::time")]
    created_at: SystemTime,
    #[serde(with = "stored::time")]
    last_updated_at: SystemTime,
    #[serde(default, with = "stored::duration")]
    ttl: Option<Duration>,
    #[serde(default, with = "stored::duration")]
    poll_interval: Option<Duration>,
    #[serde(default)]
    input_requests: BTreeMap<String, InputRequest>,
    #[serde(default)]
    outcome: Option<TaskOutcome>,
}

#[cfg(any(feature = "redis", feature = "postgres"))]
impl AsTaskView for StoredView {
    fn task_view(&self) -> TaskView<'_> {
        TaskView {
            id: &self.id,
            status: self.status,
            status_message: self.status_message.as_deref(),
            created_at: self.created_at,
            last_updated_at: self.last_updated_at,
            ttl: self.ttl,
            poll_interval: self.poll_interval,
            input_requests: &self.input_requests,
            outcome: self.outcome.as_ref().map(Into::into),
        }
    }
}

/// The stored text's times and durations: integer nanoseconds (since the Unix epoch, for a
/// time), about 20 bytes where serde's own forms (`{"secs_since_epoch":…,"nanos_since_epoch":…}`,
/// `{"secs":…,"nanos":…}`) take 60 and 23. Both forms are read: records written before keep
/// reading. A span past `u64::MAX` nanoseconds (584 years) is written in serde's form.
mod stored {
    use std::fmt;
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    use serde::de::value::MapAccessDeserializer;
    use serde::de::{self, Deserialize, Deserializer, MapAccess, Unexpected, Visitor};
    use serde::{Serialize, Serializer};

    /// Writes a span as integer nanoseconds, or in serde's form (`long`) if it does not fit.
    fn write<S: Serializer, T: Serialize>(
        span: Duration,
        long: T,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match u64::try_from(span.as_nanos()) {
            Ok(nanos) => s.serialize_u64(nanos),
            Err(_) => long.serialize(s),
        }
    }

    /// Reads a span written by [`write`] or in serde's form of a time (since the epoch) or a
    /// duration; `None` for `null`.
    struct Span {
        time: bool,
    }

    impl<'de> Visitor<'de> for Span {
        type Value = Option<Duration>;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("integer nanoseconds, or serde's form of a time or duration")
        }

        fn visit_u64<E: de::Error>(self, nanos: u64) -> Result<Self::Value, E> {
            Ok(Some(Duration::from_nanos(nanos)))
        }

        fn visit_none<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_unit<E: de::Error>(self) -> Result<Self::Value, E> {
            Ok(None)
        }

        fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_any(self)
        }

        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
            let long = MapAccessDeserializer::new(map);
            if self.time {
                SystemTime::deserialize(long)?
                    .duration_since(UNIX_EPOCH)
                    .map(Some)
                    .map_err(|_| de::Error::custom("a time before the Unix epoch"))
            } else {
                Duration::deserialize(long).map(Some)
            }
        }
    }

    fn since_epoch<E: serde::ser::Error>(time: &SystemTime) -> Result<Duration, E> {
        time.duration_since(UNIX_EPOCH)
            .map_err(|_| E::custom("a time before the Unix epoch"))
    }

    /// A time.
    pub(super) mod time {
        use super::*;

        pub(in crate::store::record) fn serialize<S: Serializer>(
            time: &SystemTime,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            write(since_epoch(time)?, time, s)
        }

        pub(in crate::store::record) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<SystemTime, D::Error> {
            match d.deserialize_any(Span { time: true })? {
                Some(since) => Ok(UNIX_EPOCH + since),
                None => Err(de::Error::invalid_type(Unexpected::Unit, &"a time")),
            }
        }
    }

    /// A time, or none.
    pub(super) mod opt_time {
        use super::*;

        pub(in crate::store::record) fn serialize<S: Serializer>(
            time: &Option<SystemTime>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match time {
                Some(time) => write(since_epoch(time)?, time, s),
                None => s.serialize_none(),
            }
        }

        pub(in crate::store::record) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<SystemTime>, D::Error> {
            let since = d.deserialize_option(Span { time: true })?;
            Ok(since.map(|since| UNIX_EPOCH + since))
        }
    }

    /// A duration, or none.
    pub(super) mod duration {
        use super::*;

        pub(in crate::store::record) fn serialize<S: Serializer>(
            span: &Option<Duration>,
            s: S,
        ) -> Result<S::Ok, S::Error> {
            match span {
                Some(span) => write(*span, span, s),
                None => s.serialize_none(),
            }
        }

        pub(in crate::store::record) fn deserialize<'de, D: Deserializer<'de>>(
            d: D,
        ) -> Result<Option<Duration>, D::Error> {
            d.deserialize_option(Span { time: false })
        }
    }
}

/// 2025-11-25T10:30:00Z, when [`fixture`] was created.
#[cfg(test)]
pub(crate) fn fixture_t0() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_066_600)
}

/// A task for tests (the record's and the renderers'): `786512e2` of `alice`, modern, in
/// `status`, created at [`fixture_t0`] and changed 600.25 s later, at version 1.
#[cfg(test)]
pub(crate) fn fixture(status: TaskStatus) -> TaskRecord {
    TaskRecord {
        id: TaskId::new("786512e2"),
        owner: Owner::new("alice"),
        origin: Era::Modern,
        status,
        status_message: None,
        created_at: fixture_t0(),
        last_updated_at: fixture_t0() + Duration::from_millis(600_250),
        ttl: Some(Duration::from_secs(60)),
        deadline: None,
        runner: None,
        poll_interval: Some(Duration::from_secs(5)),
        tool: None,
        input_requests: BTreeMap::new(),
        input_responses: BTreeMap::new(),
        retired_keys: BTreeSet::new(),
        answers: BTreeMap::new(),
        durable: None,
        outcome: None,
        outputs: Default::default(),
        version: 1,
        terminal_at: None,
    }
}

/// Two tasks of `owner` as a build before the compact form stored them (times and durations
/// in serde's own forms, [`TaskRecord::to_legacy_text`]): one ended, one running.
#[cfg(test)]
pub(crate) fn legacy_pair(owner: &Owner) -> (TaskRecord, TaskRecord) {
    let now = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_066_600_123);
    let mut ended = TaskRecord::new(super::NewTask::new(owner.clone(), Era::Modern), now);
    ended.finish(TaskOutcome::Result(serde_json::json!({"content": []})), now);
    let running = TaskRecord::new(super::NewTask::new(owner.clone(), Era::Legacy), now);
    (ended, running)
}

/// A store opened on [`legacy_pair`]'s records, stored in the old form, reads both as they
/// were and keeps a change to the running one: the record after that change.
#[cfg(test)]
pub(crate) async fn reads_legacy_pair(
    store: &dyn super::TaskStore,
    owner: &Owner,
    (ended, running): (&TaskRecord, &TaskRecord),
) -> TaskRecord {
    for task in [ended, running] {
        assert_eq!(
            store.get(&task.id, owner).await.unwrap().as_ref(),
            Some(task)
        );
    }
    let changed = store
        .set_status_message(&running.id, Some("halfway".into()))
        .await
        .unwrap();
    assert_eq!(
        store.get(&running.id, owner).await.unwrap(),
        Some(changed.clone())
    );
    changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::RpcError;
    use serde_json::json;

    use super::{fixture as record, fixture_t0 as t0};

    /// `tasks/get` of a Redis or Postgres task reads what it shows and passes over the rest: the
    /// same view as the whole record's, from text whose outputs (here not even outputs) are never
    /// decoded.
    #[cfg(any(feature = "redis", feature = "postgres"))]
    #[test]
    fn the_stored_view_reads_what_tasks_get_shows_and_skips_outputs() {
        let mut r = record(TaskStatus::Completed);
        r.status_message = Some("done".into());
        r.outcome = Some(TaskOutcome::Result(
            json!({ "content": [{ "type": "text", "text": "hi" }] }),
        ));
        r.outputs.insert(
            "big.txt".into(),
            ResourceContents::text("task://x/big.txt", "text/plain", "x".repeat(1000)),
        );
        r.input_responses
            .insert("k".into(), json!({"action": "accept"}));
        let text = r.to_stored_text().unwrap();
        let view: StoredView = serde_json::from_str(&text).unwrap();
        assert_eq!(view.owner, r.owner);
        assert_eq!(view.task_view().modern_get_result(), r.modern_get_result());
        let mut stored: Value = serde_json::from_str(&text).unwrap();
        stored["outputs"] = json!({ "big.txt": { "not": "contents" } });
        let tampered = stored.to_string();
        assert!(serde_json::from_str::<TaskRecord>(&tampered).is_err());
        let view: StoredView = serde_json::from_str(&tampered).unwrap();
        assert_eq!(view.task_view().modern_get_result(), r.modern_get_result());
    }

    #[test]
    fn record_storage_encoding_round_trips() {
        let mut r = record(TaskStatus::Failed);
        r.tool = Some("crawl".into());
        r.input_responses
            .insert("k".into(), json!({"action": "accept"}));
        r.retired_keys.insert("k".into());
        r.outcome = Some(TaskOutcome::Error(RpcError::internal("x")));
        r.terminal_at = Some(t0());
        let encoded = r.to_stored_text().unwrap();
        assert_eq!(encoded, serde_json::to_string(&r).unwrap());
        assert_eq!(serde_json::from_str::<TaskRecord>(&encoded).unwrap(), r);
    }

    /// Records written before the era had one name (when the field was a `TaskOrigin`), and
    /// before the compact encoding, as the SQLite, Redis and Postgres stores keep them: they
    /// still read, and encode in the compact form.
    #[test]
    fn records_stored_in_serdes_own_forms_still_read() {
        for (origin, era) in [("legacy", Era::Legacy), ("modern", Era::Modern)] {
            let stored = format!(
                r#"{{"id":"786512e2","owner":"alice","origin":"{origin}","status":"working","status_message":null,"created_at":{{"secs_since_epoch":1764066600,"nanos_since_epoch":0}},"last_updated_at":{{"secs_since_epoch":1764067200,"nanos_since_epoch":250000000}},"ttl":{{"secs":60,"nanos":0}},"deadline":null,"runner":null,"poll_interval":{{"secs":5,"nanos":0}},"input_requests":{{}},"input_responses":{{}},"retired_keys":[],"outcome":null,"version":1,"terminal_at":null}}"#
            );
            let mut expected = record(TaskStatus::Working);
            expected.origin = era;
            let read: TaskRecord = serde_json::from_str(&stored).unwrap();
            assert_eq!(read, expected);
            assert_eq!(
                serde_json::to_string(&read).unwrap(),
                format!(
                    r#"{{"id":"786512e2","owner":"alice","origin":"{origin}","status":"working","created_at":1764066600000000000,"last_updated_at":1764067200250000000,"ttl":60000000000,"poll_interval":5000000000,"version":1}}"#
                )
            );
        }
        let mut ended: TaskRecord = serde_json::from_str(
            r#"{"id":"786512e2","owner":"alice","origin":"modern","status":"completed","status_message":"done","created_at":{"secs_since_epoch":1764066600,"nanos_since_epoch":0},"last_updated_at":{"secs_since_epoch":1764066600,"nanos_since_epoch":7},"ttl":null,"deadline":{"secs":30,"nanos":5},"runner":"e1","poll_interval":null,"input_requests":{},"input_responses":{},"retired_keys":["k"],"outcome":null,"version":3,"terminal_at":{"secs_since_epoch":1764066600,"nanos_since_epoch":7}}"#,
        )
        .unwrap();
        assert_eq!(ended.terminal_at, Some(t0() + Duration::from_nanos(7)));
        assert_eq!(ended.deadline, Some(Duration::new(30, 5)));
        assert_eq!((ended.ttl, ended.poll_interval), (None, None));
        assert_eq!(ended.runner.as_deref(), Some("e1"));
        ended.terminal_at = None;
        assert_eq!(
            serde_json::from_str::<TaskRecord>(&ended.to_stored_text().unwrap()).unwrap(),
            ended
        );
    }

    /// The compact form: integer nanoseconds, empty fields left out; a span too long for a `u64`
    /// of nanoseconds in serde's form. Each reads back as it was.
    #[test]
    fn the_storage_encoding_is_compact_and_lossless() {
        let mut r = record(TaskStatus::Working);
        r.runner = Some("engine-1".into());
        assert_eq!(
            r.to_stored_text().unwrap(),
            r#"{"id":"786512e2","owner":"alice","origin":"modern","status":"working","created_at":1764066600000000000,"last_updated_at":1764067200250000000,"ttl":60000000000,"runner":"engine-1","poll_interval":5000000000,"version":1}"#
        );
        r.ttl = Some(Duration::MAX);
        r.deadline = Some(Duration::from_nanos(u64::MAX));
        r.terminal_at = Some(SystemTime::UNIX_EPOCH + Duration::from_secs(600 * 365 * 86_400));
        let text = r.to_stored_text().unwrap();
        assert!(
            text.contains(&format!(
                r#""ttl":{{"secs":{},"nanos":999999999}}"#,
                u64::MAX
            )),
            "{text}"
        );
        assert!(
            text.contains(&format!(r#""deadline":{}"#, u64::MAX)),
            "{text}"
        );
        assert!(
            text.contains(r#""terminal_at":{"secs_since_epoch":18921600000,"#),
            "{text}"
        );
        assert_eq!(serde_json::from_str::<TaskRecord>(&text).unwrap(), r);
    }

    /// A time or duration the compact form cannot be read from is an error naming the field,
    /// never a record with a made-up value.
    #[test]
    fn a_malformed_time_is_an_error() {
        let good = record(TaskStatus::Working).to_stored_text().unwrap();
        for (from, to) in [
            ("1764066600000000000", "-1"),
            ("1764066600000000000", "null"),
            ("1764066600000000000", r#""soon""#),
            ("60000000000", "1.5"),
        ] {
            let bad = good.replacen(from, to, 1);
            let error = serde_json::from_str::<TaskRecord>(&bad)
                .unwrap_err()
                .to_string();
            assert!(
                error.contains("nanoseconds") || error.contains("a time"),
                "{bad}: {error}"
            );
        }
        let missing = good.replacen(r#""created_at":1764066600000000000,"#, "", 1);
        let error = serde_json::from_str::<TaskRecord>(&missing)
            .unwrap_err()
            .to_string();
        assert!(error.contains("missing field `created_at`"), "{error}");
    }
}
