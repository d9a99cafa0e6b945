use mcp_tasks_runtime::tool;

/// Refreshes the forecast.
#[tool(ui = "ui://weather/view.html", ui_visibility = "user")]
async fn refresh(city: String) -> String {
    city
}

fn main() {}
