//! Parse and validate, asserting on the model (the cheap layer of the test pyramid).

use super::{attr, template, validate};
use crate::diag::Diagnostics;
use crate::parse::ToolFn;
use quote::quote;

fn spec(
    args: proc_macro2::TokenStream,
    item: proc_macro2::TokenStream,
) -> Result<super::model::ResourceSpec, String> {
    let mut item = syn::parse2(item).expect("a fn");
    let mut diag = Diagnostics::default();
    let completes = crate::complete::take(&mut item, &mut diag);
    let f = ToolFn::new(item);
    let attr = attr::parse(args, &mut diag);
    let spec = validate::validate(attr, &f, &completes, &mut diag);
    match diag.finish() {
        Ok(()) => Ok(spec.expect("a spec when no errors")),
        Err(e) => Err(e.to_compile_error().to_string()),
    }
}

#[test]
fn a_template_resource_knows_its_variables_and_injected_parameters() {
    let spec = spec(
        quote!(uri = "notes://{title}{?rev}", mime_type = "text/markdown"),
        quote! {
            /// A note.
            async fn note(ctx: ToolContext, title: String, rev: Option<u32>) -> String { title }
        },
    )
    .expect("valid");
    assert!(spec.template);
    assert_eq!(spec.name, "note");
    assert_eq!(spec.description.as_deref(), Some("A note."));
    assert_eq!(spec.mime_type.as_deref(), Some("text/markdown"));
    let vars: Vec<_> = spec
        .params
        .iter()
        .map(|p| (p.name.as_str(), p.var))
        .collect();
    assert_eq!(vars, [("ctx", false), ("title", true), ("rev", true)]);
}

#[test]
fn every_mistake_is_reported_at_once() {
    let err = spec(
        quote!(uri = "notes://{title}", mime_type = "markdown", size = 3),
        quote!(
            fn note() -> String {
                String::new()
            }
        ),
    )
    .expect_err("invalid");
    for says in [
        "needs an `async fn`",
        "template variable `title` has no parameter",
        "is not a MIME type",
        "`size` is for a fixed resource",
    ] {
        assert!(err.contains(says), "{says}: {err}");
    }
}

#[test]
fn template_syntax() {
    assert_eq!(
        template::variables("a://{x}/{+y}{?p,q}").unwrap(),
        ["x", "y", "p", "q"]
    );
    assert!(
        template::variables("a://{x")
            .unwrap_err()
            .contains("unclosed")
    );
    assert!(
        template::variables("a://{!x}")
            .unwrap_err()
            .contains("reserved operator")
    );
    assert!(
        template::variables("a://{x}{x}")
            .unwrap_err()
            .contains("twice")
    );
    assert!(template::is_mime_type("text/markdown; charset=utf-8"));
    assert!(!template::is_mime_type("markdown"));
    assert!(template::has_scheme("ui://app"));
    assert!(!template::has_scheme("/etc/hosts"));
}

/// The expansion of a template resource with a `list` function and completed variables, pretty-printed and checked
/// against `tests/snapshots/note.expanded.rs` (refresh with `UPDATE_EXPECT=1`).
#[test]
fn note_expansion_snapshot() {
    let out = super::resource(
        quote!(
            uri = "notes://{title}{?rev}",
            mime_type = "text/markdown",
            list = "all_notes"
        ),
        quote! {
            /// One note, by title.
            pub async fn note(
                notes: State<Notes>,
                #[complete(with = complete_title)] title: String,
                #[complete(values = ["1", "2"])] rev: Option<u32>,
            ) -> Result<String, ToolError> {
                notes.get(&title, rev)
            }
        },
    );
    let file: syn::File = syn::parse2(out).expect("the expansion parses as a file");
    expect_test::expect_file!["../../tests/snapshots/note.expanded.rs"]
        .assert_eq(&prettyplease::unparse(&file));
}

#[test]
fn a_template_variable_completes_and_nothing_else_does() {
    let completed = spec(
        quote!(uri = "notes://{folder}/{title}"),
        quote! {
            async fn note(
                notes: State<Notes>,
                #[complete(values = ["inbox", "archive"])] folder: String,
                #[complete(with = complete_title)] title: String,
            ) -> String { title }
        },
    )
    .expect("valid");
    let completes: Vec<_> = completed
        .params
        .iter()
        .map(|p| match &p.complete {
            None => "none",
            Some((crate::complete::Complete::Values(_), _)) => "values",
            Some((crate::complete::Complete::With(_), _)) => "with",
        })
        .collect();
    assert_eq!(completes, ["none", "values", "with"]);

    let err = spec(
        quote!(uri = "config://app"),
        quote!(
            async fn config(#[complete(values = ["a"])] ctx: ToolContext) -> String {
                String::new()
            }
        ),
    )
    .expect_err("a fixed resource has no variables");
    assert!(err.contains("this `uri` has no variables"), "{err}");

    let err = spec(
        quote!(uri = "notes://{title}"),
        quote!(
            async fn note(
                #[complete(values = ["a"])] notes: State<Notes>,
                title: String,
            ) -> String {
                title
            }
        ),
    )
    .expect_err("an injected parameter does not complete");
    assert!(
        err.contains("`notes` is not a variable of `notes://{title}`"),
        "{err}"
    );

    let err = spec(
        quote!(uri = "notes://{title}"),
        quote!(
            async fn note(#[complete(values = ["a"], with = f)] title: String) -> String {
                title
            }
        ),
    )
    .expect_err("values and with");
    assert!(err.contains("not both"), "{err}");
}

#[test]
fn scopes_are_oauth_scope_tokens() {
    let scoped = spec(
        quote!(uri = "notes://{title}", scope = "notes notes:read"),
        quote!(
            async fn note(title: String) -> String {
                title
            }
        ),
    )
    .unwrap();
    assert_eq!(scoped.scopes, ["notes", "notes:read"]);
    let plain = spec_of(quote!(uri = "config://app"));
    assert!(plain.scopes.is_empty());
    let err = spec(
        quote!(uri = "config://app", scope = "a\\b"),
        quote!(
            async fn app() -> String {
                String::new()
            }
        ),
    )
    .unwrap_err();
    assert!(err.contains("`a\\\\b` is not an OAuth scope"), "{err}");
    let err = spec(
        quote!(uri = "config://app", scope = ""),
        quote!(
            async fn app() -> String {
                String::new()
            }
        ),
    )
    .unwrap_err();
    assert!(
        err.contains("#[resource(scope = \\\"research\\\")]"),
        "{err}"
    );
}

fn spec_of(args: proc_macro2::TokenStream) -> super::model::ResourceSpec {
    spec(
        args,
        quote!(
            async fn app() -> String {
                String::new()
            }
        ),
    )
    .unwrap()
}
