use super::*;

#[test]
fn the_answers_hint_is_built_from_the_form() {
    let form = Form::from_schema(&serde_json::json!({
        "properties": {
            "ok": { "type": "boolean" },
            "n": { "type": "integer", "default": 3 },
            "c": { "type": "string", "enum": ["x", "y"] },
            "t": { "type": "string" }
        }
    }))
    .unwrap();
    assert_eq!(
        example_answers(&form),
        r#"{"c":"x","n":3,"ok":true,"t":"..."}"#
    );
}
