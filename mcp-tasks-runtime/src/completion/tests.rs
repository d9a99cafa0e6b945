use super::*;

fn request(reference: CompletionRef, argument: &str, value: &str) -> CompleteRequest {
    CompleteRequest {
        reference,
        argument: argument.into(),
        value: value.into(),
        arguments: HashMap::new(),
    }
}

fn complete_now(
    registry: &CompletionRegistry,
    req: CompleteRequest,
) -> Result<Completion, RpcError> {
    let fut = registry.complete(req, Arc::default())?;
    futures_util::FutureExt::now_or_never(fut).expect("ready")
}

const CITIES: &[&str] = &["Paris", "park", "Party", "Berlin"];

#[test]
fn a_fixed_list_offers_the_values_that_start_with_the_typed_text_ignoring_case() {
    let mut registry = CompletionRegistry::default();
    let reference = CompletionRef::Prompt("trip".into());
    registry.insert(reference.clone(), "city", Completer::Values(CITIES));
    registry.declare(reference.clone(), ["date"]);
    let got = complete_now(&registry, request(reference.clone(), "city", "PAR")).unwrap();
    assert_eq!(got.values, ["Paris", "park", "Party"]);
    assert_eq!((got.total, got.has_more), (Some(3), false));
    // A declared argument without a completer completes to nothing.
    let got = complete_now(&registry, request(reference.clone(), "date", "2")).unwrap();
    assert_eq!(got, Completion::default());
    // An undeclared argument and an unknown reference are the client's error.
    let err = complete_now(&registry, request(reference, "nope", "")).unwrap_err();
    assert_eq!(err.code, RpcError::INVALID_PARAMS);
    assert!(
        err.message.contains("no argument `nope`"),
        "{}",
        err.message
    );
    let err = complete_now(
        &registry,
        request(CompletionRef::Prompt("x".into()), "city", ""),
    )
    .unwrap_err();
    assert_eq!(err.code, RpcError::INVALID_PARAMS);
    assert!(
        err.message.contains("unknown prompt `x`"),
        "{}",
        err.message
    );
    assert!(registry.has_completers());
}

#[test]
fn at_most_a_hundred_values_go_out() {
    fn many(_: String, _: CompletionContext) -> CompleteFuture {
        boxed(async { (0..250).map(|i| i.to_string()).collect::<Vec<String>>() })
    }
    let mut registry = CompletionRegistry::default();
    let reference = CompletionRef::Resource("notes://{id}".into());
    registry.insert(reference.clone(), "id", Completer::With(many));
    let got = complete_now(&registry, request(reference, "id", "")).unwrap();
    assert_eq!(got.values.len(), MAX_VALUES);
    assert_eq!((got.total, got.has_more), (Some(250), true));
}

#[test]
fn requests_are_read_strictly() {
    use serde_json::json;
    let ok = CompleteRequest::parse(
        Some(json!({"type": "ref/prompt", "name": "p"})),
        Some(json!({"name": "a", "value": "x"})),
        Some(json!({"arguments": {"b": "y"}})),
    )
    .unwrap();
    assert_eq!(ok.reference, CompletionRef::Prompt("p".into()));
    assert_eq!(ok.arguments["b"], "y");
    for (reference, argument, context) in [
        (
            json!({"type": "ref/tool", "name": "p"}),
            json!({"name": "a", "value": ""}),
            Value::Null,
        ),
        (
            json!({"type": "ref/prompt"}),
            json!({"name": "a", "value": ""}),
            Value::Null,
        ),
        (
            json!({"type": "ref/prompt", "name": "p"}),
            json!({"name": "a"}),
            Value::Null,
        ),
        (
            json!({"type": "ref/prompt", "name": "p"}),
            json!({"name": "a", "value": ""}),
            json!({"arguments": {"b": 1}}),
        ),
    ] {
        let err =
            CompleteRequest::parse(Some(reference), Some(argument), Some(context)).unwrap_err();
        assert_eq!(err.code, RpcError::INVALID_PARAMS, "{}", err.message);
    }
}
