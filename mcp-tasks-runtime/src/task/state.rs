//! `requestState`: what an inline (MRTR) call has gathered so far, sealed so the client can carry it
//! but not change it. The retry may reach another process: everything needed is inside, and any
//! instance that shares the key can open it.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

type HmacSha256 = Hmac<Sha256>;

/// How long a `requestState` stays valid.
pub const STATE_LIFETIME: Duration = Duration::from_secs(3600);

/// The key that seals `requestState`. Servers that share tasks or sit behind a load balancer must
/// share it (see `ServerBuilder::request_state_key`).
#[derive(Clone)]
pub struct StateKey([u8; 32]);

impl std::fmt::Debug for StateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("StateKey(..)")
    }
}

impl StateKey {
    /// A random key (the default: valid for this process only).
    pub fn random() -> Self {
        use rand::RngExt;
        StateKey(rand::rng().random())
    }

    /// A key derived from secret bytes.
    pub fn from_secret(secret: &[u8]) -> Self {
        StateKey(Sha256::digest(secret).into())
    }

    fn mac(&self) -> HmacSha256 {
        <HmacSha256 as KeyInit>::new_from_slice(&self.0).expect("HMAC takes any key length")
    }
}

/// What a sealed state says.
#[derive(Debug, Clone, Default, PartialEq, wire::Serialize, wire::Deserialize)]
pub struct Gathered {
    /// Which call this belongs to: a digest of tool name, arguments and owner.
    pub call: String,
    /// Seconds since the epoch after which the state is refused.
    pub exp: u64,
    /// Answers received so far, by key.
    pub answers: Map<String, Value>,
    /// Requests asked in the last round, by key, with a digest of each (to notice a tool that
    /// asks differently on replay).
    pub asked: Map<String, Value>,
}

/// A digest identifying one call (tool, arguments, owner).
pub fn call_digest(tool: &str, arguments: Option<&Value>, owner: &str) -> String {
    let mut h = Sha256::new();
    h.update(tool.as_bytes());
    h.update([0]);
    h.update(canonical(arguments.unwrap_or(&Value::Null)).as_bytes());
    h.update([0]);
    h.update(owner.as_bytes());
    URL_SAFE_NO_PAD.encode(h.finalize())
}

/// A digest of one input request.
pub fn request_digest(request: &crate::protocol::InputRequest) -> String {
    let v = serde_json::to_value(request).unwrap_or(Value::Null);
    URL_SAFE_NO_PAD.encode(Sha256::digest(canonical(&v).as_bytes()))
}

/// JSON with object keys sorted, so equal values give equal text.
fn canonical(v: &Value) -> String {
    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<_> = m.keys().collect();
                keys.sort();
                Value::Object(
                    keys.into_iter()
                        .map(|k| (k.clone(), sorted(&m[k])))
                        .collect(),
                )
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(v).to_string()
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// Why a state was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StateError {
    /// Not produced by this server (or changed since).
    Tampered,
    /// Too old.
    Expired,
    /// Produced for another call (other tool, arguments or principal).
    OtherCall,
}

impl std::fmt::Display for StateError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            StateError::Tampered => {
                "invalid requestState: it was not issued by this server or has been modified"
            }
            StateError::Expired => {
                "invalid requestState: it has expired; call the tool again without it"
            }
            StateError::OtherCall => {
                "invalid requestState: it belongs to a different call (tool, arguments or caller)"
            }
        })
    }
}

/// Seals a state into the opaque `requestState` string.
pub fn seal(key: &StateKey, mut gathered: Gathered) -> String {
    if gathered.exp == 0 {
        gathered.exp = now_secs() + STATE_LIFETIME.as_secs();
    }
    let body = URL_SAFE_NO_PAD.encode(serde_json::to_vec(&gathered).expect("state serializes"));
    let mut mac = key.mac();
    mac.update(body.as_bytes());
    let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{body}.{tag}")
}

/// Seals arbitrary bytes as a state body, for fuzzing what comes after the seal check.
#[cfg(feature = "fuzzing")]
pub(crate) fn seal_raw(key: &StateKey, body: &[u8]) -> String {
    let body = URL_SAFE_NO_PAD.encode(body);
    let mut mac = key.mac();
    mac.update(body.as_bytes());
    let tag = URL_SAFE_NO_PAD.encode(mac.finalize().into_bytes());
    format!("{body}.{tag}")
}

/// Opens a `requestState`, checking its seal, age and call.
pub fn open(key: &StateKey, text: &str, call: &str) -> Result<Gathered, StateError> {
    let (body, tag) = text.split_once('.').ok_or(StateError::Tampered)?;
    let tag = URL_SAFE_NO_PAD
        .decode(tag)
        .map_err(|_| StateError::Tampered)?;
    let mut mac = key.mac();
    mac.update(body.as_bytes());
    mac.verify_slice(&tag).map_err(|_| StateError::Tampered)?;
    let bytes = URL_SAFE_NO_PAD
        .decode(body)
        .map_err(|_| StateError::Tampered)?;
    let gathered: Gathered = serde_json::from_slice(&bytes).map_err(|_| StateError::Tampered)?;
    if gathered.exp < now_secs() {
        return Err(StateError::Expired);
    }
    if gathered.call != call {
        return Err(StateError::OtherCall);
    }
    Ok(gathered)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sample() -> Gathered {
        let mut g = Gathered {
            call: "c1".into(),
            ..Default::default()
        };
        g.answers.insert(
            "input-0".into(),
            json!({"action": "accept", "content": {"name": "Alice"}}),
        );
        g
    }

    #[test]
    fn round_trips() {
        let key = StateKey::random();
        let sealed = seal(&key, sample());
        let opened = open(&key, &sealed, "c1").unwrap();
        assert_eq!(opened.answers, sample().answers);
    }

    #[test]
    fn any_change_is_refused() {
        let key = StateKey::random();
        let sealed = seal(&key, sample());
        // Flip one character of the body.
        let mut bytes = sealed.clone().into_bytes();
        bytes[3] = if bytes[3] == b'A' { b'B' } else { b'A' };
        assert_eq!(
            open(&key, std::str::from_utf8(&bytes).unwrap(), "c1"),
            Err(StateError::Tampered)
        );
        assert_eq!(open(&key, "not a state", "c1"), Err(StateError::Tampered));
        assert_eq!(
            open(&StateKey::random(), &sealed, "c1"),
            Err(StateError::Tampered),
            "another key"
        );
        assert_eq!(open(&key, &sealed, "c2"), Err(StateError::OtherCall));
    }

    #[test]
    fn expired_is_refused() {
        let key = StateKey::random();
        let sealed = seal(&key, Gathered { exp: 1, ..sample() });
        assert_eq!(open(&key, &sealed, "c1"), Err(StateError::Expired));
    }

    #[test]
    fn shared_secret_opens_across_instances() {
        let a = StateKey::from_secret(b"shared");
        let b = StateKey::from_secret(b"shared");
        assert!(open(&b, &seal(&a, sample()), "c1").is_ok());
    }

    #[test]
    fn call_digest_ignores_key_order() {
        let x = call_digest("t", Some(&json!({"a": 1, "b": 2})), "o");
        let y = call_digest("t", Some(&json!({"b": 2, "a": 1})), "o");
        assert_eq!(x, y);
        assert_ne!(x, call_digest("t", Some(&json!({"a": 1, "b": 3})), "o"));
        assert_ne!(
            x,
            call_digest("t", Some(&json!({"a": 1, "b": 2})), "other owner")
        );
    }
}
