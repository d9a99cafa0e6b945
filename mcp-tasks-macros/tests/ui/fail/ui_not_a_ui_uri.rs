use mcp_tasks_runtime::tool;

/// Shows the forecast.
#[tool(ui = "https://example.com/view.html")]
async fn forecast(city: String) -> String {
    city
}

fn main() {}
