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

/// `version = "..."` inside an inline table (`{ version = "=0.1.0", path = "..." }`).
fn inline_version(table: &str) -> &str {
    let (_, rest) = table
        .split_once("version")
        .unwrap_or_else(|| panic!("no version in {table}"));
    let rest = rest.trim_start().trim_start_matches('=').trim_start();
    let rest = rest.strip_prefix('"').expect("a quoted version");
    &rest[..rest.find('"').expect("a closing quote")]
}

/// `mcp-tasks-client` uses the runtime's hidden `__internal`, which may change in any release
/// (`__internal.rs` says so): every requirement on the runtime must be exact (`=0.1.0`), or a
/// published client 0.1.x could resolve against a runtime 0.1.y whose `__internal` changed.
#[test]
fn the_client_requires_the_exact_runtime_it_was_built_with() {
    let root = workspace_root();
    let read = |path: &str| std::fs::read_to_string(root.join(path)).unwrap();
    let (workspace, client) = (read("Cargo.toml"), read("mcp-tasks-client/Cargo.toml"));
    let version = toml_string(&workspace, "workspace.package", "version");
    let exact = format!("={version}");
    for (file, text, table) in [
        ("Cargo.toml", &workspace, "workspace.dependencies"),
        ("mcp-tasks-client/Cargo.toml", &client, "dependencies"),
        ("mcp-tasks-client/Cargo.toml", &client, "dev-dependencies"),
    ] {
        let requirement = toml_string(text, table, "mcp-tasks-runtime");
        assert_eq!(
            inline_version(&requirement),
            exact,
            "{file} [{table}] requires mcp-tasks-runtime {requirement}: not exactly {exact}"
        );
    }
}

/// What a user of `mcp-tasks-client` compiles (`cargo tree -p mcp-tasks-client -e normal`): the
/// runtime's protocol types and server (for `connect_in_process`), without the runtime's default
/// features: no macro crate, no darling, no schemars derive, no HTTP server (axum, hyper's or
/// hyper-util's `server`), no clap; and no proc macro at all (so no `syn`, issue 52), but
/// `mcp-tasks-wire`, our derive of serde's traits, which has no dependency. Each had come some
/// way: serde's derive, tokio's and futures-util's macros (`select!`, tokio-util's `rt`),
/// schemars's `ref-cast`, the ICU4X back end of reqwest's `url` → `idna`.
#[test]
fn the_client_compiles_no_syn_no_macro_crate_and_no_http_server() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = std::process::Command::new(cargo)
        .current_dir(workspace_root())
        .args(["tree", "-p", "mcp-tasks-client", "-e", "normal,features"])
        .args(["--prefix", "none", "--offline", "--locked"])
        .output()
        .expect("cargo tree runs");
    let tree = String::from_utf8(out.stdout).unwrap();
    assert!(
        out.status.success() && tree.contains("mcp-tasks-runtime"),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Lines are `name vX.Y.Z ...` (a crate) or `name feature "f"` (one of its features).
    let crates: std::collections::BTreeSet<&str> = tree
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    for banned in [
        "mcp-tasks-macros",
        "darling",
        "darling_core",
        "schemars_derive",
        "axum",
        "clap",
        "tracing-attributes",
        "syn",
        "serde_derive",
    ] {
        assert!(
            !crates.contains(banned),
            "the client compiles {banned}: {}",
            why(banned)
        );
    }
    // Lines are `name vX.Y.Z (proc-macro)` for a proc-macro crate.
    let proc_macros: std::collections::BTreeSet<&str> = tree
        .lines()
        .filter(|line| line.contains(" (proc-macro)"))
        .filter_map(|line| line.split_whitespace().next())
        .collect();
    let allowed_proc_macros = ["mcp-tasks-wire"];
    for name in proc_macros {
        assert!(
            allowed_proc_macros.contains(&name),
            "the client compiles the proc macro {name}: {}",
            why(name)
        );
    }
    for server in [
        r#"hyper feature "server""#,
        r#"hyper-util feature "server""#,
    ] {
        assert!(!tree.contains(server), "the client compiles {server}");
    }
    assert!(crates.contains("reqwest") && crates.contains("serde"));

    fn why(name: &str) -> String {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        let out = std::process::Command::new(cargo)
            .current_dir(workspace_root())
            .args([
                "tree",
                "-p",
                "mcp-tasks-client",
                "-e",
                "normal",
                "--offline",
            ])
            .args(["--locked", "-i", name])
            .output()
            .expect("cargo tree runs");
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

/// Every source file of the five published crates is of one concern and at most 800 lines, its
/// tests in a file of their own (issue 52): a file past the limit is named with its length.
#[test]
fn no_source_file_of_the_published_crates_is_over_800_lines() {
    fn walk(dir: &std::path::Path, found: &mut Vec<(String, usize)>) {
        for entry in std::fs::read_dir(dir).expect("a source folder") {
            let path = entry.expect("an entry").path();
            if path.is_dir() {
                walk(&path, found);
            } else if path.extension().is_some_and(|e| e == "rs") {
                let lines = std::fs::read_to_string(&path)
                    .expect("a source file")
                    .lines()
                    .count();
                if lines > 800 {
                    found.push((path.display().to_string(), lines));
                }
            }
        }
    }
    let root = workspace_root();
    let mut found = Vec::new();
    for krate in [
        "mcp-tasks-runtime",
        "mcp-tasks-client",
        "mcp-tasks-cli",
        "mcp-tasks-macros",
        "mcp-tasks-wire",
    ] {
        walk(&root.join(krate).join("src"), &mut found);
    }
    assert!(found.is_empty(), "files over 800 lines: {found:?}");
}
