//! An MCP App ([ext-apps](https://github.com/modelcontextprotocol/ext-apps)): a weather forecast
//! whose tool names a `ui://` resource, an HTML view that a host which renders apps shows with the
//! tool's result, and an app-only tool the view calls to refresh it.

use mcp_tasks_runtime::{Json, ResourceContents, resource, tool};
use schemars::JsonSchema;
use serde::Serialize;

/// The UI resource of the forecast tools.
pub const FORECAST_VIEW_URI: &str = "ui://forecast/view.html";

/// The forecast view: HTML with its script inline (no network access, which is what a host's
/// default content security policy allows).
pub const FORECAST_VIEW_HTML: &str = include_str!("forecast.html");

/// The forecast view (an MCP App: `text/html;profile=mcp-app`). Its `_meta.ui` asks the host for
/// a border and no network access beyond its own inline script.
#[resource(
    uri = "ui://forecast/view.html",
    name = "forecast-view",
    mime_type = "text/html;profile=mcp-app"
)]
pub async fn forecast_view() -> ResourceContents {
    ResourceContents::text(FORECAST_VIEW_URI, VIEW_MIME_TYPE, FORECAST_VIEW_HTML).with_meta(
        "ui",
        serde_json::json!({ "prefersBorder": true, "csp": { "connectDomains": [], "resourceDomains": [] } }),
    )
}

/// The MIME type of an MCP App's view (ext-apps `RESOURCE_MIME_TYPE`).
pub const VIEW_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// A few days of weather for a city.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Forecast {
    /// The city.
    pub city: String,
    /// The next three days.
    pub days: Vec<Day>,
}

/// One day of a forecast.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Day {
    /// `Mon`, `Tue`, ...
    pub day: String,
    /// `sunny`, `cloudy`, `rain`.
    pub sky: String,
    /// Lowest temperature, °C.
    pub low: i32,
    /// Highest temperature, °C.
    pub high: i32,
}

/// A made-up but steady forecast: the same city gives the same days, `round` moves them on.
fn forecast(city: String, round: u32) -> Forecast {
    let seed = city
        .bytes()
        .fold(round, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
    let names = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
    let skies = ["sunny", "cloudy", "rain"];
    let days = (0..3u32)
        .map(|i| {
            let v = seed.wrapping_add(i.wrapping_mul(7919));
            let low = (v % 15) as i32;
            Day {
                day: names[((seed as usize) + i as usize) % names.len()].to_owned(),
                sky: skies[(v as usize / 7) % skies.len()].to_owned(),
                low,
                high: low + 4 + (v % 9) as i32,
            }
        })
        .collect();
    Forecast { city, days }
}

/// Shows the weather forecast for a city; hosts that render MCP Apps show it in an interactive
/// view.
#[tool(ui = "ui://forecast/view.html", annotations(read_only))]
pub async fn show_forecast(
    /// The city.
    city: String,
) -> Json<Forecast> {
    Json(forecast(city, 0))
}

/// Refreshes the forecast the app's view shows (called by the view, not the model).
#[tool(
    ui = "ui://forecast/view.html",
    ui_visibility = "app",
    annotations(read_only)
)]
pub async fn refresh_forecast(
    /// The city.
    city: String,
) -> Json<Forecast> {
    let round = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as u32 / 600);
    Json(forecast(city, round))
}
