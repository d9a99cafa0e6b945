//! The example server's MCP App shown in a real browser: headless Chromium (Debian's `chromium`,
//! pinned) driven by playwright-core, with a minimal host page on the official ext-apps host
//! bridge (`AppBridge`, `PostMessageTransport`; pinned from npm). The app loads from
//! `ui://forecast/view.html`, shows `show_forecast`'s result, and calls `refresh_forecast`
//! through the bridge when its Refresh button is clicked; the test asserts on the text of the
//! page and of the app, and saves a screenshot as `target/browser/apps-forecast.png`.
//!
//! `tests/browser/install.sh` installs the npm packages (into `target/browser`) and the browser
//! (apt-get, its packages kept in `target/browser/debs`), once; `tests/browser/apps.mjs` drives
//! the browser, `tests/browser/host.mjs` is the host page's script (bundled with esbuild here).

use mcp_tasks_tests::browser;
use mcp_tasks_tests::http::HttpServer;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Copies the driver and the host script next to the npm packages (ES modules resolve their
/// imports from where they are) and bundles the host script for the page.
fn stage(dir: &Path) -> PathBuf {
    for file in ["apps.mjs", "host.mjs"] {
        browser::stage(file);
    }
    let bundle = dir.join("host.js");
    let status = Command::new(dir.join("node_modules/.bin/esbuild"))
        .current_dir(dir)
        .args([
            "host.mjs",
            "--bundle",
            "--format=iife",
            "--platform=browser",
            "--log-level=warning",
            "--outfile=host.js",
        ])
        .status()
        .expect("run esbuild");
    assert!(status.success(), "esbuild could not bundle host.mjs");
    bundle
}

#[test]
fn the_forecast_app_runs_in_headless_chromium_through_the_ext_apps_bridge() {
    let (node, chromium) = browser::install();
    let dir = browser::browser_dir();
    let bundle = stage(&dir);
    let screenshot = dir.join("apps-forecast.png");
    let _ = std::fs::remove_file(&screenshot);
    let server = HttpServer::start_bin("example_server", &[]);

    let child = Command::new(node)
        .current_dir(&dir)
        .arg("apps.mjs")
        .arg(&server.url)
        .arg(chromium)
        .arg(&bundle)
        .arg(&screenshot)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("run apps.mjs");
    let out = wait(child, Duration::from_secs(90));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    let shown = format!("---- apps.mjs stdout ----\n{stdout}\n---- stderr ----\n{stderr}");
    assert!(
        out.status.success() && stdout.lines().last() == Some("PASS"),
        "{shown}"
    );
    eprintln!("{stdout}");

    // What the page showed, in words: the host's log, then the app's own text.
    for line in [
        "read ui://forecast/view.html: text/html;profile=mcp-app",
        "the app initialized",
        "the host showed show_forecast({\"city\":\"Lisbon\"})",
        "the app called refresh_forecast({\"city\":\"Lisbon\"})",
        "refresh_forecast answered: Lisbon, 3 days",
        "Forecast for Lisbon",
        "Day\tSky\tLow\tHigh",
        "tools called: show_forecast, refresh_forecast",
    ] {
        assert!(stdout.contains(line), "missing `{line}`:\n{shown}");
    }
    let rows = stdout
        .lines()
        .filter(|l| l.ends_with('°') && l.split('\t').count() == 4)
        .count();
    assert_eq!(rows, 3, "the app's table has three days:\n{shown}");
    let png = std::fs::read(&screenshot).expect("the screenshot");
    assert!(
        png.starts_with(b"\x89PNG") && png.len() > 5_000,
        "not a screenshot"
    );
}

fn wait(child: std::process::Child, limit: Duration) -> std::process::Output {
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait for node"),
        Err(_) => {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("apps.mjs ran longer than {limit:?}");
        }
    }
}
