//! `tools/call` argument decoding: any JSON as a tool's `arguments` is decoded, or refused with a
//! tool error (`isError`) that names what is wrong, or, when it is not an object at all, with a
//! `-32602`; never a panic.
#![no_main]

use mcp_tasks_runtime::__internal::{ContextBackend, InputFuture, RegisteredTool, tool_context};
use mcp_tasks_runtime::protocol::InputRequest;
use mcp_tasks_runtime::tool;
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::{Arc, OnceLock};

/// Where to.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct Place {
    /// Name.
    pub name: String,
    /// Coordinates.
    pub at: Option<(f64, f64)>,
    /// Tags.
    #[serde(default)]
    pub tags: Vec<String>,
}

/// A mode.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// Fast.
    Fast,
    /// Careful.
    Careful {
        /// How careful.
        level: u8,
    },
}

/// Many kinds of parameters.
#[tool]
async fn many(
    text: String,
    count: Option<u32>,
    ratio: f64,
    flag: bool,
    items: Vec<i64>,
    place: Place,
    mode: Option<Mode>,
    extra: Option<serde_json::Value>,
) -> String {
    format!("{text}{count:?}{ratio}{flag}{items:?}{place:?}{mode:?}{extra:?}")
}

/// No parameters.
#[tool]
async fn none() -> String {
    String::new()
}

struct NoInput;

impl ContextBackend for NoInput {
    fn input(&self, _: InputRequest) -> InputFuture {
        Box::pin(std::future::pending())
    }
}

fn tools() -> &'static [RegisteredTool; 2] {
    static TOOLS: OnceLock<[RegisteredTool; 2]> = OnceLock::new();
    TOOLS.get_or_init(|| [RegisteredTool::of::<many>(), RegisteredTool::of::<none>()])
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(arguments) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for tool in tools() {
        let ctx = tool_context(Arc::new(NoInput));
        if let Err(e) = tool.call(ctx, Some(arguments.clone())) {
            // Arguments that do not fit are a tool error; `arguments` that is no object at all is
            // the call's -32602. Either way a message, never a panic.
            match e.into_outcome() {
                Ok(result) => {
                    assert!(result.is_error, "{result:?}");
                    assert!(arguments.is_object() || arguments.is_null(), "{arguments}");
                }
                Err(rpc) => {
                    assert_eq!(rpc.code, -32602, "{rpc:?}");
                    assert!(!arguments.is_object() && !arguments.is_null(), "{arguments}");
                    assert!(!rpc.message.is_empty());
                }
            }
        }
    }
});
