use super::*;

fn form(schema: Value) -> Form {
    Form::from_schema(&schema).expect("a valid schema")
}

fn sample() -> Form {
    form(json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "title": "Your name", "minLength": 2, "default": "Ada" },
            "age": { "type": "integer", "minimum": 0, "maximum": 150 },
            "score": { "type": "number", "default": 9.5 },
            "ok": { "type": "boolean", "default": true },
            "color": { "type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"] },
            "size": { "type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}] },
            "tags": { "type": "array", "items": { "type": "string", "enum": ["a", "b", "c"] }, "maxItems": 2 },
            "mail": { "type": "string", "format": "email" }
        },
        "required": ["age", "color"]
    }))
}

#[test]
fn schema_becomes_fields_in_order_with_kinds_defaults_and_required() {
    let f = sample();
    let names: Vec<_> = f.fields.iter().map(|f| f.name.as_str()).collect();
    // serde_json (without `preserve_order`, as in this workspace) keeps object keys sorted,
    // so a parsed schema gives its fields in name order; `reorder` restores the schema's.
    assert_eq!(
        names,
        [
            "age", "color", "mail", "name", "ok", "score", "size", "tags"
        ]
    );
    assert_eq!(f.fields[3].label, "Your name");
    assert_eq!(f.fields[3].default, Some(json!("Ada")));
    assert!(f.fields[0].required && f.fields[1].required && !f.fields[3].required);
    assert_eq!(
        f.fields[1].kind,
        Kind::Choice(vec![
            Choice {
                value: "red".into(),
                label: "Red".into()
            },
            Choice {
                value: "green".into(),
                label: "Green".into()
            },
        ])
    );
    assert!(matches!(&f.fields[6].kind, Kind::Choice(o) if o[1].label == "Large"));
    assert!(matches!(
        &f.fields[7].kind,
        Kind::MultiChoice {
            max_items: Some(2),
            ..
        }
    ));
}

#[test]
fn fields_keep_the_order_of_the_schema_text() {
    let text = r#"{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{
        "message":"?","requestedSchema":{"type":"object","properties":{
            "zeta":{"type":"string"},"alpha":{"type":"boolean"},
            "mid":{"type":"object","properties":{"b":1,"a":2}}}}}}"#;
    let orders = schema_orders(text);
    assert_eq!(orders, vec![vec!["zeta", "alpha", "mid"]]);
    // Modern: inside a result's inputRequests.
    let text = r#"{"result":{"inputRequests":{"k":{"method":"elicitation/create","params":
        {"requestedSchema":{"properties":{"b":{},"a":{}}}}}}}}"#;
    assert_eq!(schema_orders(text), vec![vec!["b", "a"]]);
    assert!(schema_orders("not json requestedSchema").is_empty());
    let mut f = form(json!({"properties": {
        "zeta": {"type": "string"}, "alpha": {"type": "boolean"}, "nu": {"type": "integer"}
    }}));
    let seen = vec![
        vec!["x".to_owned()],
        vec!["zeta".into(), "nu".into(), "alpha".into()],
    ];
    let order = f.order_from(&seen).expect("the matching order").clone();
    f.reorder(&order);
    let names: Vec<_> = f.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["zeta", "nu", "alpha"]);
}

#[test]
fn numbers_are_validated() {
    let f = sample();
    let age = &f.fields[0];
    assert_eq!(age.parse_text(" 42 "), Ok(json!(42)));
    assert_eq!(
        age.parse_text("4.5"),
        Err("\"4.5\" is not a whole number".into())
    );
    assert_eq!(age.parse_text("200"), Err("must be at most 150".into()));
    assert_eq!(age.parse_text("-1"), Err("must be at least 0".into()));
    assert_eq!(age.hint().as_deref(), Some("0 to 150"));
    let score = &f.fields[5];
    assert_eq!(score.parse_text("3.25"), Ok(json!(3.25)));
    assert!(score.parse_text("abc").is_err());
    assert!(score.parse_text("NaN").is_err());
}

#[test]
fn text_booleans_and_choices_are_validated() {
    let f = sample();
    let field = |n: &str| f.fields.iter().find(|x| x.name == n).unwrap();
    assert_eq!(
        field("name").parse_text("A"),
        Err("at least 2 characters, please".into())
    );
    assert_eq!(field("ok").check(&json!("Yes")), Ok(json!(true)));
    assert_eq!(field("ok").check(&json!("n")), Ok(json!(false)));
    assert!(field("ok").check(&json!("maybe")).is_err());
    assert_eq!(field("color").check(&json!("Green")), Ok(json!("green")));
    assert_eq!(
        field("color").check(&json!("blue")),
        Err("\"blue\" is not one of red, green".into())
    );
    assert_eq!(field("tags").check(&json!("a, c")), Ok(json!(["a", "c"])));
    assert_eq!(
        field("tags").check(&json!(["a", "b", "c"])),
        Err("choose at most 2".into())
    );
    assert!(field("mail").parse_text("not-an-address").is_err());
    assert_eq!(field("mail").parse_text("a@b.io"), Ok(json!("a@b.io")));
    assert_eq!(
        field("age").check(&json!(true)),
        Err("expected a whole number, got true".into())
    );
}

#[test]
fn answers_fill_the_form_with_defaults_and_name_what_is_missing() {
    let f = sample();
    let answers = json!({ "age": "30", "color": "red", "extra": 1 });
    let out = f.answer_from(answers.as_object().unwrap()).unwrap();
    assert_eq!(
        Value::Object(out),
        json!({ "name": "Ada", "age": 30, "score": 9.5, "ok": true, "color": "red" })
    );
    let err = f
        .answer_from(json!({ "age": 1 }).as_object().unwrap())
        .unwrap_err();
    assert_eq!(err, "no answer for required field `color`");
    let err = f.answer_from(&Map::new()).unwrap_err();
    assert_eq!(err, "no answer for required fields `age`, `color`");
    let err = f
        .answer_from(json!({ "age": 999, "color": "red" }).as_object().unwrap())
        .unwrap_err();
    assert_eq!(
        err,
        "--answers \"age\": must be at most 150 (got 999); \"age\" takes a whole number (0 to 150)"
    );
    let err = f
        .check_given(
            json!({ "color": "blue", "tags": ["a"] })
                .as_object()
                .unwrap(),
        )
        .unwrap_err();
    assert_eq!(
        err,
        "--answers \"color\": \"blue\" is not one of red, green; \"color\" takes one of red, green"
    );
    let err = f
        .check_given(json!({ "tags": "z" }).as_object().unwrap())
        .unwrap_err();
    assert_eq!(
        err,
        "--answers \"tags\": \"z\" is not one of a, b, c; \"tags\" takes a list of one of a, b, c (at most 2)"
    );
    assert_eq!(
        f.check_given(json!({ "ok": "sure" }).as_object().unwrap())
            .unwrap_err(),
        "--answers \"ok\": expected yes or no, got \"sure\"; \"ok\" takes yes or no"
    );
    assert_eq!(
        f.check_given(json!({ "age": "30", "other": [] }).as_object().unwrap()),
        Ok(())
    );
}

#[test]
fn a_default_that_does_not_fit_is_not_offered_and_odd_schemas_are_refused() {
    let f = form(json!({"properties": {"n": {"type": "integer", "maximum": 3, "default": 10}}}));
    assert_eq!(f.fields[0].default, None);
    assert!(
        Form::from_schema(&json!({"properties": {"o": {"type": "object"}}}))
            .unwrap_err()
            .contains("type `object` cannot be asked")
    );
    assert!(Form::from_schema(&json!([])).is_err());
    assert_eq!(form(json!({"type": "object"})).fields, vec![]);
}
