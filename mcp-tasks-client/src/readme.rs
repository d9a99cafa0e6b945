//! The book's client examples (docs/src/client.md, docs/src/testing.md) are this crate's doc
//! tests: they must stay the same code.

/// The first ```` ```lang ```` block after `after` in `text`, as lines.
fn block<'a>(text: &'a str, after: &str, fence: &str) -> Vec<&'a str> {
    let start = text
        .find(after)
        .unwrap_or_else(|| panic!("{after:?} not found"));
    text[start..]
        .lines()
        .skip_while(|l| !l.starts_with(fence))
        .skip(1)
        .take_while(|l| !l.starts_with("```"))
        .collect()
}

/// The crate doc's block after `heading`, without the `//! ` prefix.
fn doc_block(heading: &str) -> Vec<String> {
    let lib = include_str!("lib.rs");
    let doc: String = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect::<Vec<_>>()
        .join("\n");
    block(&doc, heading, "```")
        .into_iter()
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_readme_calling_example_is_the_crate_doc_example() {
    let readme = include_str!("../../docs/src/client.md");
    assert_eq!(
        block(readme, "# Calling tools from Rust", "```rust"),
        doc_block("# mcp-tasks-client"),
    );
}

#[test]
fn the_readme_testing_example_is_the_doc_test_with_a_test_instead_of_main() {
    let readme = include_str!("../../docs/src/testing.md");
    let readme: Vec<String> = block(readme, "# Testing your tools", "```rust")
        .into_iter()
        .map(|l| {
            l.replace(
                "#[tokio::test]",
                "#[tokio::main(flavor = \"current_thread\")]",
            )
            .replace("async fn delete_asks_first()", "async fn main()")
        })
        .collect();
    assert_eq!(readme, doc_block("# Testing your tools"));
}

/// The crates a Rust block names at the start of a path (`serde_json::json!`, `use schemars::..`),
/// leaving out the standard library's and paths inside paths (`std::time::Duration` is `std`).
fn crate_roots(code: &str) -> std::collections::BTreeSet<String> {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut roots = std::collections::BTreeSet::new();
    for (at, _) in code.match_indices("::") {
        let before = &code[..at];
        let start = before
            .char_indices()
            .rev()
            .take_while(|(_, c)| ident(*c))
            .last()
            .map_or(at, |(i, _)| i);
        let name = &code[start..at];
        let inside_a_path = code[..start].ends_with(':');
        let turbofish = code[at + 2..].starts_with('<');
        if name.is_empty()
            || inside_a_path
            || turbofish
            || !name.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            || ["std", "core", "alloc", "crate", "self", "super"].contains(&name)
        {
            continue;
        }
        roots.insert(name.to_owned());
    }
    roots
}

/// The crates a `Cargo.toml` block lists, as Rust names (`serde_json`).
fn listed_crates(toml: &[&str]) -> std::collections::BTreeSet<String> {
    toml.iter()
        .filter_map(|l| l.split_once('=').map(|(k, _)| k.trim()))
        .filter(|k| !k.is_empty() && !k.starts_with('[') && !k.starts_with('#'))
        .map(|k| k.replace('-', "_"))
        .collect()
}

/// Each document's Rust blocks name only crates its `Cargo.toml` block lists: copied into a
/// user's crate with that block, they compile (in the workspace a doc test sees every crate of
/// the test package, so a crate the document never asks for would pass unnoticed there).
#[test]
fn each_documents_examples_name_only_the_crates_its_cargo_toml_lists() {
    for (name, text) in [
        (
            "docs/src/testing.md",
            include_str!("../../docs/src/testing.md"),
        ),
        (
            "docs/src/client.md",
            include_str!("../../docs/src/client.md"),
        ),
        ("mcp-tasks-client/README.md", include_str!("../README.md")),
    ] {
        assert!(
            text.contains("```toml"),
            "{name} shows no Cargo.toml for its examples"
        );
        let listed = listed_crates(&block(text, "", "```toml"));
        let mut named = std::collections::BTreeSet::new();
        let mut rest = text;
        while let Some(at) = rest.find("```rust") {
            named.extend(crate_roots(&block(rest, "```rust", "```rust").join("\n")));
            rest = &rest[at + 7..];
        }
        let missing: Vec<&String> = named.difference(&listed).collect();
        assert!(
            missing.is_empty(),
            "{name}: its examples use {missing:?}, which its Cargo.toml block does not list"
        );
    }
}

#[test]
fn crate_roots_are_the_first_segments_of_paths() {
    let code = "use serde_json::json;\nlet t = std::time::Duration::ZERO;\nctx.elicit::<A>();\n\
                #[derive(schemars::JsonSchema)] let x = Vec::<u8>::new(); mcp_tasks_client::text(&r)";
    let roots: Vec<String> = crate_roots(code).into_iter().collect();
    assert_eq!(roots, ["mcp_tasks_client", "schemars", "serde_json"]);
}
