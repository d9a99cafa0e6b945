//! Legacy (2025-11-25) sessions over Streamable HTTP: one [`Connection`] per `Mcp-Session-Id`,
//! with its routes ([`Routes`]) and its resumable streams ([`Streams`]).

use super::super::auth::Principal;
use super::super::connection::Connection;
use super::super::peer::Peer as _;
use super::resume::Streams;
use super::routes::Routes;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One legacy session.
#[derive(Debug)]
pub(super) struct HttpSession {
    pub(super) principal: Option<Principal>,
    pub(super) conn: Arc<Connection>,
    pub(super) routes: Arc<Routes>,
    /// Its resumable SSE streams.
    pub(super) streams: Arc<Streams>,
    last_seen: Mutex<Instant>,
    /// Counts the session as open while it lives.
    _open: crate::telemetry::Held,
}

impl HttpSession {
    pub(super) fn new(
        principal: Option<Principal>,
        conn: Arc<Connection>,
        routes: Arc<Routes>,
    ) -> Self {
        HttpSession {
            principal,
            conn,
            routes,
            streams: Arc::default(),
            last_seen: Mutex::new(Instant::now()),
            _open: crate::telemetry::Held::new(crate::telemetry::Gauge::Sessions),
        }
    }

    pub(super) fn touch(&self) {
        *lock(&self.last_seen) = Instant::now();
    }

    /// Idle: nothing in flight, no GET stream, and no request for `idle`.
    fn expired(&self, now: Instant, idle: Duration) -> bool {
        self.conn.in_flight() == 0
            && !self.routes.has_get()
            && now.duration_since(*lock(&self.last_seen)) >= idle
    }
}

/// The live sessions of one HTTP endpoint.
#[derive(Debug, Default)]
pub(super) struct Sessions {
    map: Mutex<HashMap<String, Arc<HttpSession>>>,
}

impl Sessions {
    /// How many sessions are live.
    pub(super) fn len(&self) -> usize {
        lock(&self.map).len()
    }

    pub(super) fn insert(&self, id: String, session: Arc<HttpSession>) {
        lock(&self.map).insert(id, session);
    }

    /// The session with this id, if it is live and belongs to this principal (a session of
    /// someone else is as unknown as one that never existed).
    pub(super) fn get(&self, id: &str, principal: &Option<Principal>) -> Option<Arc<HttpSession>> {
        let session = lock(&self.map).get(id).cloned()?;
        (session.principal == *principal).then_some(session)
    }

    pub(super) fn remove(&self, id: &str) -> Option<Arc<HttpSession>> {
        let session = lock(&self.map).remove(id);
        if let Some(s) = &session {
            s.conn.close();
        }
        session
    }

    /// Ends sessions idle for longer than `idle`; returns how many.
    pub(super) fn sweep(&self, idle: Duration) -> usize {
        let now = Instant::now();
        let mut map = lock(&self.map);
        let before = map.len();
        map.retain(|_, s| {
            let keep = !s.expired(now, idle);
            if !keep {
                s.conn.close();
            }
            keep
        });
        before - map.len()
    }

    pub(super) fn close_all(&self) {
        for (_, s) in lock(&self.map).drain() {
            s.conn.close();
        }
    }
}

/// Whether a session's streams start with a priming event, and so may be ended by the server:
/// from protocol version 2025-11-25 on (SEP-1699), whose clients resume them.
pub(super) fn primes(conn: &Connection) -> bool {
    conn.session()
        .is_some_and(|s| s.version.as_str() >= "2025-11-25")
}
