use super::parse;
use super::validate::validate;
use crate::diag::Diagnostics;
use expect_test::expect_file;
use proc_macro2::TokenStream;
use quote::quote;

fn spec(attr: TokenStream, item: TokenStream) -> Result<super::model::PromptSpec, String> {
    let mut diag = Diagnostics::default();
    let p = parse::function(syn::parse2(item).unwrap(), &mut diag);
    let attr = parse::attr(attr, &mut diag);
    let spec = validate(attr, &p, &mut diag);
    match (diag.finish(), spec) {
        (Ok(()), Some(spec)) => Ok(spec),
        (Err(err), _) => Err(err.into_compile_error().to_string()),
        (Ok(()), None) => Err("no spec and no error".into()),
    }
}

#[test]
fn names_docs_renames_and_completions() {
    let spec = spec(
        quote!(title = "Trip"),
        quote! {
            /// Plans a trip.
            async fn plan(
                ctx: ToolContext,
                /// Where to.
                #[complete(values = ["Paris", "Rome"])]
                city: String,
                #[arg(rename = "startDate")]
                #[complete(with = dates)]
                start: Option<String>,
            ) -> String { String::new() }
        },
    )
    .unwrap();
    assert_eq!(spec.name, "plan");
    assert_eq!(spec.title.as_deref(), Some("Trip"));
    assert_eq!(spec.description.as_deref(), Some("Plans a trip."));
    let names: Vec<&str> = spec.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["ctx", "city", "startDate"]);
    assert_eq!(spec.params[1].doc.as_deref(), Some("Where to."));
    assert!(matches!(
        spec.params[1].complete,
        Some((crate::complete::Complete::Values(ref v), _)) if v.len() == 2
    ));
    assert!(matches!(
        spec.params[2].complete,
        Some((crate::complete::Complete::With(_), _))
    ));
    // The helper attributes are gone from the re-emitted function.
    let text = quote!(#(spec.item)).to_string();
    assert!(
        !text.contains("complete") && !text.contains("rename"),
        "{text}"
    );
}

#[test]
fn every_mistake_is_reported_together() {
    let err = spec(
        quote!(nme = "x"),
        quote! {
            fn bad(
                #[complete(values = ["a"], with = f)]
                a: String,
                #[arg(rename = "a")]
                b: String,
                #[complete]
                c: String,
            ) {}
        },
    )
    .unwrap_err();
    for needle in [
        "Unknown field: `nme`",
        "needs an `async fn`",
        "not both",
        "two arguments are named `a`",
        "expected a list of keys",
        "a prompt returns its messages",
    ] {
        assert!(err.contains(needle), "missing {needle:?} in {err}");
    }
}

/// The expansion of a representative prompt.
#[test]
fn expansion_snapshot() {
    let out = super::prompt(
        quote!(),
        quote! {
            /// Plans a trip.
            async fn plan(
                ctx: ToolContext,
                /// Where to.
                #[complete(values = ["Paris", "Rome"])]
                city: String,
                #[arg(rename = "startDate")]
                #[complete(with = dates)]
                start: Option<String>,
            ) -> Result<Vec<PromptMessage>, ToolError> {
                let _ = (ctx, start);
                Ok(vec![PromptMessage::user(city)])
            }
        },
    );
    let file: syn::File = syn::parse2(out).expect("the expansion parses as a file");
    expect_file!["../../tests/snapshots/prompt.expanded.rs"]
        .assert_eq(&prettyplease::unparse(&file));
}

#[test]
fn scopes_are_oauth_scope_tokens() {
    let scoped = spec(
        quote!(scope = "review  code:read"),
        quote!(
            async fn review(code: String) -> String {
                code
            }
        ),
    )
    .unwrap();
    assert_eq!(scoped.scopes, ["review", "code:read"]);
    let none = spec_of_plain();
    assert!(none.scopes.is_empty());
    let err = spec(
        quote!(scope = "re\"view"),
        quote!(
            async fn review(code: String) -> String {
                code
            }
        ),
    )
    .unwrap_err();
    assert!(err.contains("is not an OAuth scope"), "{err}");
    let err = spec(
        quote!(scope = " "),
        quote!(
            async fn review(code: String) -> String {
                code
            }
        ),
    )
    .unwrap_err();
    assert!(err.contains("#[prompt(scope = \\\"research\\\")]"), "{err}");
}

fn spec_of_plain() -> super::model::PromptSpec {
    spec(
        quote!(),
        quote!(
            async fn review(code: String) -> String {
                code
            }
        ),
    )
    .unwrap()
}
