//! Parse + validate, asserting on the model (never on token strings).

use crate::diag::Diagnostics;
use crate::model::{Annotations, TaskSupport, ToolSpec};
use crate::parse::{self, ToolFn};
use proc_macro2::TokenStream;
use quote::quote;

/// The spec, or every error message.
fn check(attr: TokenStream, item: TokenStream) -> Result<ToolSpec, Vec<String>> {
    let f = ToolFn::new(syn::parse2(item).expect("test input is a fn"));
    let mut diag = Diagnostics::default();
    let attr = parse::attr::parse(attr, &mut diag);
    let spec = super::validate(attr, &f, &mut diag);
    match diag.finish() {
        Ok(()) => Ok(spec.expect("no errors means a spec")),
        Err(err) => Err(err.into_iter().map(|e| e.to_string()).collect()),
    }
}

fn ok(attr: TokenStream, item: TokenStream) -> ToolSpec {
    check(attr, item).unwrap_or_else(|errs| panic!("unexpected errors: {errs:#?}"))
}

fn errors(attr: TokenStream, item: TokenStream) -> Vec<String> {
    match check(attr, item) {
        Ok(spec) => panic!("expected errors, got {spec:#?}"),
        Err(errs) => errs,
    }
}

#[test]
fn defaults() {
    let spec = ok(
        quote!(),
        quote!(
            async fn r#type(a: u32) {}
        ),
    );
    assert_eq!(spec.name, "type");
    assert_eq!(spec.title, None);
    assert_eq!(spec.description, None);
    assert_eq!(spec.task_support, TaskSupport::Forbidden);
    assert_eq!((spec.ttl_ms, spec.poll_interval_ms), (None, None));
    assert_eq!(spec.annotations, Annotations::default());
    assert_eq!(spec.runtime, syn::parse_quote!(::mcp_tasks_runtime));
    assert_eq!(spec.output, syn::parse_quote!(()));
    assert_eq!(spec.params.len(), 1);
}

#[test]
fn every_key() {
    let spec = ok(
        quote!(
            name = "search.docs-v2",
            title = "Search",
            description = "Finds.",
            task_support = "required",
            ttl = "1h30m",
            poll_interval = "500ms",
            annotations(
                read_only,
                destructive = false,
                idempotent = true,
                open_world = false
            ),
            crate = "::rt"
        ),
        quote!(
            async fn search() -> String {
                String::new()
            }
        ),
    );
    assert_eq!(spec.name, "search.docs-v2");
    assert_eq!(spec.title.as_deref(), Some("Search"));
    assert_eq!(spec.description.as_deref(), Some("Finds."));
    assert_eq!(spec.task_support, TaskSupport::Required);
    assert_eq!(spec.ttl_ms, Some(5_400_000));
    assert_eq!(spec.poll_interval_ms, Some(500));
    assert_eq!(
        spec.annotations,
        Annotations {
            read_only: Some(true),
            destructive: Some(false),
            idempotent: Some(true),
            open_world: Some(false),
        }
    );
    assert_eq!(spec.runtime, syn::parse_quote!(::rt));
    assert_eq!(spec.output, syn::parse_quote!(String));
}

#[test]
fn docs_become_descriptions_and_are_stripped_from_params() {
    let spec = ok(
        quote!(),
        quote! {
            #[doc = " Searches."]
            #[doc = ""]
            #[doc = "   Indented."]
            #[doc = ""]
            async fn search(
                #[doc = " The query."]
                #[allow(unused)]
                query: String,
                Args(a): Args<A>,
                _: ToolContext,
                arg1: u8,
            ) {}
        },
    );
    assert_eq!(
        spec.description.as_deref(),
        Some("Searches.\n\n  Indented.")
    );
    let names: Vec<_> = spec.params.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["query", "arg1_", "arg2", "arg1"]);
    assert_eq!(spec.params[0].doc.as_deref(), Some("The query."));
    assert_eq!(spec.params[1].doc, None);
    let syn::FnArg::Typed(first) = &spec.item.sig.inputs[0] else {
        panic!()
    };
    assert_eq!(first.attrs.len(), 1, "the doc is stripped, #[allow] stays");
    assert!(first.attrs[0].path().is_ident("allow"));
}

#[test]
fn description_attribute_wins_and_empty_means_none() {
    let spec = ok(
        quote!(description = "B"),
        quote!(
            #[doc = " A"]
            async fn f() {}
        ),
    );
    assert_eq!(spec.description.as_deref(), Some("B"));
    let spec = ok(
        quote!(description = ""),
        quote!(
            #[doc = " A"]
            async fn f() {}
        ),
    );
    assert_eq!(spec.description, None);
}

#[test]
fn block_doc_comments_are_dedented() {
    assert_eq!(
        super::join_docs(&[" First\n     second\n       third\n ".to_owned()]).as_deref(),
        Some("First\nsecond\n  third")
    );
    assert_eq!(super::join_docs(&[String::new(), "  ".to_owned()]), None);
}

#[test]
fn tool_names() {
    assert!(super::check_tool_name("a").is_ok());
    assert!(super::check_tool_name("A-z_0.9").is_ok());
    assert!(super::check_tool_name(&"x".repeat(128)).is_ok());
    assert!(super::check_tool_name(&"x".repeat(129)).is_err());
    assert!(super::check_tool_name("").is_err());
    assert!(super::check_tool_name("a b").is_err());
    assert!(super::check_tool_name("a/b").is_err());
    let errs = errors(
        quote!(name = "a b"),
        quote!(
            async fn f() {}
        ),
    );
    assert!(errs[0].contains("name = \"a_b\""), "{errs:?}");
}

#[test]
fn every_error_is_collected() {
    let errs = errors(
        quote!(task_suport = "optional", ttl = "1h"),
        quote!(
            const unsafe extern "C" fn f<T>(self, x: impl Sized) -> impl Sized {}
        ),
    );
    // The attribute fails as a whole in darling, so `ttl` is not judged; the signature is.
    let expected = [
        "Unknown field: `task_suport`",
        "needs an `async fn`",
        "`const fn`",
        "`unsafe fn`",
        "`extern` ABI",
        "cannot be generic",
        "free function",
        "parameter type",
        "return type",
    ];
    assert_eq!(errs.len(), expected.len(), "{errs:#?}");
    for (err, want) in errs.iter().zip(expected) {
        assert!(err.contains(want), "{err:?} should contain {want:?}");
    }
}

#[test]
fn task_support_values() {
    for (value, expected) in [
        ("forbidden", TaskSupport::Forbidden),
        ("optional", TaskSupport::Optional),
        ("required", TaskSupport::Required),
    ] {
        let spec = ok(
            quote!(task_support = #value),
            quote!(
                async fn f() {}
            ),
        );
        assert_eq!(spec.task_support, expected);
    }
    let errs = errors(
        quote!(task_support = "Optinal"),
        quote!(
            async fn f() {}
        ),
    );
    assert!(errs[0].contains("did you mean `optional`?"), "{errs:?}");
    assert!(
        errs[0].contains("`forbidden`, `optional`, `required`"),
        "{errs:?}"
    );
    let errs = errors(
        quote!(task_support = true),
        quote!(
            async fn f() {}
        ),
    );
    assert!(errs[0].contains("as a string literal"), "{errs:?}");
}

#[test]
fn duration_limits() {
    let f = quote!(
        async fn f() {}
    );
    let cases = [
        (quote!(ttl = "0s"), "longer than zero"),
        (quote!(ttl = "31d"), "at most `30d`"),
        (quote!(poll_interval = "9ms"), "at least `10ms`"),
        (quote!(poll_interval = "61m"), "at most `1h`"),
        (
            quote!(ttl = "1m", poll_interval = "2m"),
            "longer than `ttl`",
        ),
        (quote!(ttl = "soon"), "is not a duration"),
    ];
    for (keys, want) in cases {
        let errs = errors(quote!(task_support = "optional", #keys), f.clone());
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].contains(want), "{errs:?} should contain {want:?}");
    }
    let spec = ok(
        quote!(
            task_support = "optional",
            ttl = "30d",
            poll_interval = "10ms"
        ),
        f.clone(),
    );
    assert_eq!(
        (spec.ttl_ms, spec.poll_interval_ms),
        (Some(2_592_000_000), Some(10))
    );
}

#[test]
fn durations_on_a_forbidden_tool() {
    let errs = errors(
        quote!(ttl = "10m", poll_interval = "nonsense"),
        quote!(
            async fn f() {}
        ),
    );
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(
        errs.iter().all(|e| e.contains("only applies to tasks")),
        "{errs:?}"
    );
}

#[test]
fn wrong_value_types_name_the_key() {
    let f = quote!(
        async fn f() {}
    );
    let errs = errors(
        quote!(name = 1, title = true, annotations = "x", crate = 3),
        f.clone(),
    );
    assert_eq!(errs.len(), 4, "{errs:?}");
    assert!(
        errs[0].contains("`name` expects a string literal"),
        "{errs:?}"
    );
    assert!(
        errs[1].contains("`title` expects a string literal"),
        "{errs:?}"
    );
    assert!(
        errs[2].contains("`annotations` expects a list of hints"),
        "{errs:?}"
    );
    assert!(errs[3].contains("`crate` expects a path"), "{errs:?}");
    let errs = errors(quote!(annotations(read_only = "maybe", idempotnt)), f);
    assert_eq!(errs.len(), 2, "{errs:?}");
}

#[test]
fn fallback_drops_what_rustc_would_reject_again() {
    let f = ToolFn::new(syn::parse_quote!(
        const async fn f(a: u8, _: ...) {}
    ));
    let fallback = super::fallback(f, None);
    assert!(fallback.item.sig.constness.is_none());
    assert!(fallback.item.sig.variadic.is_none());
    assert_eq!(fallback.item.sig.inputs.len(), 1);
    assert!(fallback.declare);
    let f = ToolFn::new(syn::parse_quote!(
        async fn f(&self) {}
    ));
    assert!(!super::fallback(f, None).declare);
}

#[test]
fn promote_after() {
    let f = quote!(
        async fn f() {}
    );
    let spec = ok(
        quote!(task_support = "optional", promote_after = "1m30s"),
        f.clone(),
    );
    assert_eq!(spec.promote_after_ms, Some(90_000));
    assert_eq!(
        ok(quote!(task_support = "optional"), f.clone()).promote_after_ms,
        None
    );
    for (support, why) in [
        (
            quote!(task_support = "required",),
            "runs as a task from the start",
        ),
        (quote!(), "never runs as a task"),
        (quote!(task_support = "forbidden",), "never runs as a task"),
    ] {
        let errs = errors(quote!(#support promote_after = "30s"), f.clone());
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(
            errs[0].contains("declare `task_support = \"optional\"`"),
            "{errs:?}"
        );
        assert!(errs[0].contains(why), "{errs:?}");
    }
    for (value, want) in [
        ("0s", "longer than zero"),
        ("2d", "at most `1d`"),
        ("later", "is not a duration"),
    ] {
        let errs = errors(
            quote!(task_support = "optional", promote_after = #value),
            f.clone(),
        );
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert!(errs[0].contains(want), "{errs:?} should contain {want:?}");
    }
}

#[test]
fn scopes_are_split_on_spaces_and_checked() {
    let f = quote!(
        async fn research() {}
    );
    assert!(ok(quote!(), f.clone()).scopes.is_empty());
    let spec = ok(quote!(scope = " research  files:read "), f.clone());
    assert_eq!(spec.scopes, ["research", "files:read"]);
    let errs = errors(quote!(scope = "   "), f.clone());
    assert!(
        errs[0].contains("`scope` names the OAuth scopes"),
        "{errs:?}"
    );
    let errs = errors(quote!(scope = "research \"x\""), f);
    assert!(
        errs[0].contains("`\"x\"` is not an OAuth scope"),
        "{errs:?}"
    );
}
