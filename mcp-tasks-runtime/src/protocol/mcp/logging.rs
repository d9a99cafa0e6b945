//! Log levels (`notifications/message`, `logging/setLevel`, `_meta` in 2026-07-28).

use serde_json::Value;

/// The severity of a log message (`notifications/message`), least severe first: the syslog levels
/// of RFC 5424, as MCP names them.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, wire::Serialize, wire::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum LogLevel {
    /// Detailed debugging information.
    Debug,
    /// General information.
    Info,
    /// Normal but significant events.
    Notice,
    /// Warning conditions.
    Warning,
    /// Error conditions.
    Error,
    /// Critical conditions.
    Critical,
    /// Action must be taken immediately.
    Alert,
    /// The system is unusable.
    Emergency,
}

impl LogLevel {
    /// Every level, least severe first.
    pub const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The wire name (`debug`, `info`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// Reads a level from the wire; the error names the value and the levels there are.
    pub fn from_wire(value: &Value) -> Result<Self, String> {
        let names = || {
            LogLevel::ALL
                .iter()
                .map(|l| l.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        };
        match value {
            Value::String(s) => LogLevel::ALL
                .into_iter()
                .find(|l| l.as_str() == s)
                .ok_or_else(|| format!("unknown log level `{s}`; the levels are {}", names())),
            other => Err(format!(
                "a log level must be a string (one of {}), found {}",
                names(),
                crate::protocol::jsonrpc::json_kind(other)
            )),
        }
    }
}
