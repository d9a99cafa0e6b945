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
