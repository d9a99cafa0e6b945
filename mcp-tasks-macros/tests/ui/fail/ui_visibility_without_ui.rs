use mcp_tasks_runtime::tool;

/// Refreshes the forecast.
#[tool(ui_visibility = "app")]
async fn refresh(city: String) -> String {
    city
}

fn main() {}
