use super::*;

fn prompt() -> ListedPrompt {
    serde_json::from_value(json!({ "name": "greet", "arguments": [
        { "name": "name", "required": true }, { "name": "mood" }
    ]}))
    .unwrap()
}

fn check(args: &[&str]) -> Result<Value, String> {
    let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
    prompt_arguments(&prompt(), &ArgSpec::parse(&args)?).map(Value::Object)
}

#[test]
fn prompt_arguments_are_strings_named_by_the_listing() {
    // `3` stays the text "3": prompt arguments are strings.
    assert_eq!(
        check(&["name=3", "mood=warm"]),
        Ok(json!({ "name": "3", "mood": "warm" }))
    );
    assert_eq!(
        check(&["mood=warm"]).unwrap_err(),
        "the prompt `greet` needs `name`: give --args name=VALUE (it takes name (required), mood)"
    );
    assert_eq!(
        check(&["name=a", "zip=1"]).unwrap_err(),
        "the prompt `greet` has no argument `zip`; it takes name (required), mood"
    );
    assert!(
        check(&[r#"{"name": 3}"#])
            .unwrap_err()
            .contains("`name` must be a string (prompt arguments are strings)")
    );
}

#[test]
fn base64_lengths() {
    assert_eq!(base64_len(""), 0);
    assert_eq!(base64_len("QQ=="), 1);
    assert_eq!(base64_len("QUI="), 2);
    assert_eq!(base64_len("QUJD"), 3);
}
