//! Rules about the workspace itself, checked where a change would break them.

use mcp_tasks_tests::workspace_root;

/// The value of `key = "value"` in the `[table]` of a TOML file (a flat reader, enough for the
/// two files read here).
fn toml_string(text: &str, table: &str, key: &str) -> String {
    let header = format!("[{table}]");
    let mut in_table = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = line == header;
        } else if in_table
            && let Some((k, v)) = line.split_once('=')
            && k.trim() == key
        {
            return v.trim().trim_matches('"').to_owned();
        }
    }
    panic!("no `{key}` in [{table}]");
}

/// The published crates declare `rust-version` (the workspace's); the toolchain every build and
/// test of the workspace uses is rust-toolchain.toml's. Unless the two are the same release, the
/// declared MSRV is a promise nothing tests.
#[test]
fn the_declared_rust_version_is_the_pinned_toolchain() {
    let root = workspace_root();
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let toolchain = std::fs::read_to_string(root.join("rust-toolchain.toml")).unwrap();
    let msrv = toml_string(&manifest, "workspace.package", "rust-version");
    let channel = toml_string(&toolchain, "toolchain", "channel");
    let release: Vec<&str> = channel.split('.').collect();
    assert!(
        release.len() == 3 && release.iter().all(|n| n.parse::<u32>().is_ok()),
        "rust-toolchain.toml pins {channel:?}, not a release like 1.95.0"
    );
    assert_eq!(
        msrv,
        release[..2].join("."),
        "workspace.package.rust-version ({msrv}) is not the pinned toolchain's release ({channel})"
    );
}
