// Application state: several types registered, taken as `State<T>` parameters next to arguments
// and the context, never in the input schema; also reachable through the context.
use mcp_tasks_runtime::__internal::RegisteredTool;
use mcp_tasks_runtime::{Server, State, ToolContext, tool};
use std::sync::atomic::{AtomicU32, Ordering};

struct Db {
    url: String,
}

#[derive(Default)]
struct Hits(AtomicU32);

/// Looks something up.
#[tool]
async fn lookup(db: State<Db>, hits: State<Hits>, ctx: ToolContext, key: String) -> String {
    hits.0.fetch_add(1, Ordering::Relaxed);
    let same = ctx.state::<Db>().expect("registered");
    format!("{key} from {} ({})", db.url, same.url)
}

fn main() {
    let tool = RegisteredTool::of::<lookup>();
    assert_eq!(
        *tool.input_schema,
        serde_json::json!({
            "type": "object",
            "properties": { "key": { "type": "string" } },
            "required": ["key"],
        })
    );
    assert_eq!(tool.state_needs().len(), 2);
    let server = Server::builder("s", "0")
        .state(Db { url: "postgres://db".into() })
        .state(Hits::default())
        .tool::<lookup>();
    assert!(server.build().is_ok());
}
