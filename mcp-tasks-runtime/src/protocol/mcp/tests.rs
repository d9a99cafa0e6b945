//! Tests of the MCP wire types.

use super::*;
use serde_json::json;

#[test]
fn a_tool_ui_is_listed_in_both_forms_hosts_read() {
    let both = ToolMeta {
        resource_uri: "ui://weather/view.html",
        visibility: None,
    };
    assert_eq!(
        serde_json::to_value(&both).unwrap(),
        json!({
            "ui": { "resourceUri": "ui://weather/view.html" },
            "ui/resourceUri": "ui://weather/view.html",
        })
    );
    let app = ToolMeta {
        resource_uri: "ui://weather/view.html",
        visibility: Some(&["app"]),
    };
    assert_eq!(
        serde_json::to_value(&app).unwrap()["ui"],
        json!({ "resourceUri": "ui://weather/view.html", "visibility": ["app"] })
    );
}

#[test]
fn binary_content_is_base64_and_embedded_resources_nest_their_contents() {
    let image = serde_json::to_value(Content::image([0xff, 0x00, 0x10], "image/png")).unwrap();
    assert_eq!(
        image,
        json!({ "type": "image", "data": "/wAQ", "mimeType": "image/png" })
    );
    let audio = serde_json::to_value(Content::audio(b"RIFF", "audio/wav")).unwrap();
    assert_eq!(
        audio,
        json!({ "type": "audio", "data": "UklGRg==", "mimeType": "audio/wav" })
    );
    let text = Content::resource(ResourceContents::text("test://a", "text/plain", "hi"));
    let wire = serde_json::to_value(&text).unwrap();
    assert_eq!(
        wire,
        json!({ "type": "resource", "resource": { "uri": "test://a", "mimeType": "text/plain", "text": "hi" } })
    );
    assert_eq!(serde_json::from_value::<Content>(wire).unwrap(), text);
    let blob = Content::resource(ResourceContents::blob(
        "test://b",
        "application/octet-stream",
        [1, 2],
    ));
    let wire = serde_json::to_value(&blob).unwrap();
    assert_eq!(wire["resource"]["blob"], "AQI=");
    assert!(wire["resource"].get("text").is_none());
    assert_eq!(serde_json::from_value::<Content>(wire).unwrap(), blob);
}

#[test]
fn log_levels_order_by_severity_and_bad_ones_are_named() {
    assert!(LogLevel::Debug < LogLevel::Info && LogLevel::Alert < LogLevel::Emergency);
    for level in LogLevel::ALL {
        assert_eq!(LogLevel::from_wire(&json!(level.as_str())), Ok(level));
        assert_eq!(serde_json::to_value(level).unwrap(), json!(level.as_str()));
    }
    let err = LogLevel::from_wire(&json!("verbose")).unwrap_err();
    assert!(
        err.contains("`verbose`") && err.contains("emergency"),
        "{err}"
    );
    let err = LogLevel::from_wire(&json!(3)).unwrap_err();
    assert!(
        err.contains("must be a string") && err.contains("number"),
        "{err}"
    );
}

/// What the server writes from its registry (borrowing) a client reads into the owned types,
/// and writes back the same: one wire object, two ways to hold it.
#[test]
fn the_listings_the_server_writes_read_back_whole() {
    let schema = json!({ "type": "object", "properties": { "q": { "type": "string" } } });
    let written = serde_json::to_value(ToolDescription {
        name: "search",
        title: Some("Search"),
        description: None,
        input_schema: &schema,
        output_schema: None,
        annotations: ToolAnnotations {
            read_only_hint: Some(true),
            ..ToolAnnotations::default()
        },
        execution: Some(Execution {
            task_support: "optional",
        }),
        meta: Some(ToolMeta {
            resource_uri: "ui://search",
            visibility: None,
        }),
    })
    .unwrap();
    let read: ListedTool = serde_json::from_value(written.clone()).unwrap();
    assert_eq!(
        (read.name.as_str(), read.title.as_deref()),
        ("search", Some("Search"))
    );
    assert_eq!(read.input_schema, schema);
    assert_eq!(read.task_support(), crate::TaskSupport::Optional);
    assert_eq!(read.other["annotations"]["readOnlyHint"], true);
    assert_eq!(serde_json::to_value(&read).unwrap(), written);

    let arguments = [crate::protocol::PromptArgument {
        name: "topic".into(),
        title: None,
        description: Some("What about".into()),
        required: true,
    }];
    let written = serde_json::to_value(crate::protocol::PromptDescription {
        name: "brief",
        title: None,
        description: Some("A brief"),
        arguments: &arguments,
    })
    .unwrap();
    let read: crate::protocol::ListedPrompt = serde_json::from_value(written.clone()).unwrap();
    assert_eq!(read.arguments, arguments);
    assert_eq!(serde_json::to_value(&read).unwrap(), written);

    // A legacy tool without `execution` is `forbidden`; a modern listing has none either.
    let bare: ListedTool = serde_json::from_value(json!({ "name": "x" })).unwrap();
    assert_eq!(bare.task_support(), crate::TaskSupport::Forbidden);
    assert_eq!(bare.input_schema, json!({}));
}
