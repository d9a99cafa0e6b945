//! Answers about tokens kept for a while: a client sends the same access token with request
//! after request (a task's polls, one a second), and each answer costs a signature check or a
//! round trip to the issuer.

use super::{TokenClaims, TokenError};
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant, SystemTime};

/// Answers keyed by the token's SHA-256 (the tokens themselves are not kept), each for at most
/// `ttl` and never past the token's `exp`, at most `size` of them.
#[derive(Debug)]
pub(super) struct Answers {
    ttl: Duration,
    size: usize,
    kept: Mutex<HashMap<[u8; 32], Kept>>,
}

#[derive(Debug)]
struct Kept {
    answer: Result<TokenClaims, TokenError>,
    until: Instant,
}

/// A token's key in [`Answers`].
pub(super) type TokenKey = [u8; 32];

impl Answers {
    pub(super) fn new(ttl: Duration, size: usize) -> Answers {
        Answers {
            ttl,
            size,
            kept: Mutex::default(),
        }
    }

    pub(super) fn ttl(&self) -> Duration {
        self.ttl
    }

    pub(super) fn size(&self) -> usize {
        self.size
    }

    /// The same, keeping answers for `ttl` (zero: none kept).
    pub(super) fn with_ttl(self, ttl: Duration) -> Answers {
        Answers { ttl, ..self }
    }

    /// The same, keeping at most `size` answers (zero: none kept).
    pub(super) fn with_size(self, size: usize) -> Answers {
        Answers { size, ..self }
    }

    pub(super) fn key(token: &str) -> TokenKey {
        Sha256::digest(token.as_bytes()).into()
    }

    /// The answer kept for `key`, while it holds.
    pub(super) fn get(&self, key: &TokenKey) -> Option<Result<TokenClaims, TokenError>> {
        let kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        (kept.get(key))
            .filter(|k| k.until > Instant::now())
            .map(|k| k.answer.clone())
    }

    /// Keeps `answer` for `key`; when full, the lapsed answers go, then the one that would lapse
    /// first.
    pub(super) fn keep(&self, key: TokenKey, answer: &Result<TokenClaims, TokenError>) {
        if self.ttl.is_zero() || self.size == 0 {
            return;
        }
        let now = Instant::now();
        let mut until = now + self.ttl;
        if let Ok(TokenClaims {
            expires_at: Some(exp),
            ..
        }) = answer
        {
            let left = exp.duration_since(SystemTime::now()).unwrap_or_default();
            until = until.min(now + left);
        }
        let mut kept = self.kept.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= self.size && !kept.contains_key(&key) {
            kept.retain(|_, k| k.until > now);
            if kept.len() >= self.size
                && let Some(first) = kept.iter().min_by_key(|(_, k)| k.until).map(|(k, _)| *k)
            {
                kept.remove(&first);
            }
        }
        kept.insert(
            key,
            Kept {
                answer: answer.clone(),
                until,
            },
        );
    }
}
