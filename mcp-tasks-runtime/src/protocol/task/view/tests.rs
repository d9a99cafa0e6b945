use super::*;
use crate::protocol::Era;
use crate::protocol::RpcError;
use crate::protocol::json_eq::assert_same_json;
use crate::protocol::task::TaskOutcome;
use crate::store::TaskRecord;
use crate::store::fixture as record;
use serde_json::json;
use std::sync::Arc;

/// 2025-11-25T10:30:00Z.
fn t0() -> SystemTime {
    SystemTime::UNIX_EPOCH + Duration::from_secs(1_764_066_600)
}

/// A task written straight to text is, inside a reply, the reply its tree gives (the same
/// JSON): the 2026-07-28 shapes with the server's `serverInfo` (what the reply adds to a
/// tree), the 2025-11-25 ones as they are; a stored result as text or as a tree alike.
#[test]
fn a_task_written_as_text_replies_what_its_tree_replies() {
    use crate::protocol::jsonrpc::{Payload, Reply, RequestId};
    let info = Arc::new(json!({"name": "s", "version": "1", "title": "S \"q\""}));
    let requests: BTreeMap<String, InputRequest> = [
        ("b".to_owned(), InputRequest::new("roots/list", json!({}))),
        (
            "a\"".to_owned(),
            InputRequest::new("elicitation/create", json!({"message": "?", "z": [1, {}]})),
        ),
    ]
    .into();
    let results = [
        json!({"content": [{"type": "text", "text": "hi"}], "isError": true}),
        json!({"resultType": "x", "_meta": {"k": 1}, "a": null}),
        json!({"resultTypf": 1, "resultTyp": 2, "Z": 3}),
        json!({}),
        json!([1, {"b": 2, "a": 1}]),
        json!(7.25),
    ];
    let texts: Vec<Box<RawValue>> = results
        .iter()
        .map(|r| serde_json::value::to_raw_value(r).unwrap())
        .collect();
    let error = RpcError::internal("boom").with_data(json!({"retry": [1]}));
    let id = TaskId::new("t\"1");
    let base = TaskView {
        id: &id,
        status: TaskStatus::Working,
        status_message: Some("half \u{1} way"),
        created_at: t0(),
        last_updated_at: t0() + Duration::from_millis(1_234),
        ttl: None,
        poll_interval: Some(Duration::from_micros(10)),
        input_requests: &requests,
        outcome: None,
    };
    let mut views = vec![
        base,
        TaskView {
            status: TaskStatus::InputRequired,
            ttl: Some(Duration::from_secs(9)),
            status_message: None,
            poll_interval: None,
            ..base
        },
        TaskView {
            status: TaskStatus::Failed,
            outcome: Some(OutcomeView::Error(&error)),
            ..base
        },
        TaskView {
            status: TaskStatus::Cancelled,
            ..base
        },
    ];
    for (result, text) in results.iter().zip(&texts) {
        for outcome in [OutcomeView::Result(result), OutcomeView::ResultText(text)] {
            for status in [TaskStatus::Completed, TaskStatus::Failed] {
                let outcome = Some(outcome);
                views.push(TaskView {
                    status,
                    outcome,
                    ..base
                });
            }
        }
    }
    let ids = [
        RequestId::Number(3),
        RequestId::BigNumber("18446744073709551623".into()),
    ];
    for view in views {
        // Not a result: the notification's params are written as they are.
        let params = view.render(TaskShape::ModernNotification);
        assert_eq!(
            params.to_text().get(),
            serde_json::to_string(&params).unwrap()
        );
        let tree = serde_json::to_string(&params.to_value()).unwrap();
        assert_same_json(params.to_text().get(), &tree);
        for id in &ids {
            for (shape, modern) in [
                (TaskShape::ModernCreate, true),
                (TaskShape::ModernGet, true),
                (TaskShape::LegacyTask, false),
                (TaskShape::LegacyCreate, false),
            ] {
                let rendered = view.render(shape);
                let server_info = modern.then(|| info.clone());
                let rendered = match modern {
                    true => rendered.with_server_info(&info),
                    false => rendered,
                };
                let text = rendered.to_text();
                // The hand-written text is what `Serialize` writes, byte for byte.
                assert_eq!(text.get(), serde_json::to_string(&rendered).unwrap());
                let from_text = Reply {
                    id: id.clone(),
                    outcome: Ok(Payload::Text(text)),
                    server_info: server_info.clone(),
                };
                let from_tree = Reply {
                    id: id.clone(),
                    outcome: Ok(Payload::Tree(rendered.to_value())),
                    server_info,
                };
                let written = serde_json::to_string(&from_text).unwrap();
                assert_same_json(&written, &serde_json::to_string(&from_tree).unwrap());
                let tree = crate::protocol::jsonrpc::Wire(&from_tree.into_value()).to_json();
                assert_same_json(&written, &tree);
            }
        }
    }
}

// The renderers on a stored record (`crate::store::TaskRecord`): what each shape shows, and
// what it never shows (answered or withdrawn keys, answers not yet taken).

fn elicit() -> InputRequest {
    InputRequest::new(
        "elicitation/create",
        json!({"mode": "form", "message": "Name?", "requestedSchema": {"type": "object"}}),
    )
}

#[test]
fn modern_create_result_is_flat_with_task_result_type() {
    let mut r = record(TaskStatus::Working);
    r.status_message = Some("The operation is now in progress.".into());
    assert_eq!(
        r.modern_create_result(),
        json!({
            "resultType": "task",
            "taskId": "786512e2",
            "status": "working",
            "statusMessage": "The operation is now in progress.",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
            "ttlMs": 60000,
            "pollIntervalMs": 5000
        })
    );
}

#[test]
fn modern_create_result_never_carries_a_payload() {
    let mut r = record(TaskStatus::InputRequired);
    r.input_requests.insert("name".into(), elicit());
    let v = r.modern_create_result();
    for key in ["inputRequests", "result", "error", "requestState", "task"] {
        assert!(v.get(key).is_none(), "{key} in {v}");
    }
}

#[test]
fn unlimited_ttl_is_null_and_tiny_durations_are_never_zero() {
    let mut r = record(TaskStatus::Working);
    r.ttl = None;
    r.poll_interval = None;
    assert_eq!(
        r.modern_create_result(),
        json!({
            "resultType": "task",
            "taskId": "786512e2",
            "status": "working",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
            "ttlMs": null
        })
    );
    r.ttl = Some(Duration::ZERO);
    r.poll_interval = Some(Duration::from_micros(10));
    let v = r.modern_create_result();
    assert_eq!(v["ttlMs"], json!(1));
    assert_eq!(v["pollIntervalMs"], json!(1));
    let v = r.legacy_task();
    assert_eq!(v["ttl"], json!(1));
    assert_eq!(v["pollInterval"], json!(1));
}

#[test]
fn modern_get_working() {
    assert_eq!(
        record(TaskStatus::Working).modern_get_result(),
        json!({
            "resultType": "complete",
            "taskId": "786512e2",
            "status": "working",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
            "ttlMs": 60000,
            "pollIntervalMs": 5000
        })
    );
}

#[test]
fn modern_get_input_required_lists_every_outstanding_request() {
    let mut r = record(TaskStatus::InputRequired);
    r.input_requests.insert("name".into(), elicit());
    r.input_requests
        .insert("roots".into(), InputRequest::new("roots/list", json!({})));
    r.retired_keys.insert("earlier".into());
    r.input_responses.insert("earlier".into(), json!({"x": 1}));
    assert_eq!(
        r.modern_get_result(),
        json!({
            "resultType": "complete",
            "taskId": "786512e2",
            "status": "input_required",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
            "ttlMs": 60000,
            "pollIntervalMs": 5000,
            "inputRequests": {
                "name": {
                    "method": "elicitation/create",
                    "params": {"mode": "form", "message": "Name?", "requestedSchema": {"type": "object"}}
                },
                "roots": {"method": "roots/list", "params": {}}
            }
        })
    );
}

#[test]
fn modern_get_completed_carries_the_result_as_a_2026_result() {
    let mut r = record(TaskStatus::Completed);
    let stored = json!({"content": [{"type": "text", "text": "Hello"}], "isError": true});
    r.outcome = Some(TaskOutcome::Result(stored));
    // What the call itself would have answered in 2026-07-28, `resultType` included.
    let result = json!({"content": [{"type": "text", "text": "Hello"}], "isError": true, "resultType": "complete"});
    assert_eq!(
        r.modern_get_result(),
        json!({
            "resultType": "complete",
            "taskId": "786512e2",
            "status": "completed",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
            "ttlMs": 60000,
            "pollIntervalMs": 5000,
            "result": result
        })
    );
}

#[test]
fn modern_get_failed_carries_the_error() {
    let mut r = record(TaskStatus::Failed);
    r.poll_interval = None;
    r.status_message = Some("Tool execution failed: API rate limit exceeded".into());
    r.outcome = Some(TaskOutcome::Error(
        RpcError::internal("API rate limit exceeded").with_data(json!({"retryAfter": 3})),
    ));
    assert_eq!(
        r.modern_get_result(),
        json!({
            "resultType": "complete",
            "taskId": "786512e2",
            "status": "failed",
            "statusMessage": "Tool execution failed: API rate limit exceeded",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
            "ttlMs": 60000,
            "error": {"code": -32603, "message": "API rate limit exceeded", "data": {"retryAfter": 3}}
        })
    );
}

#[test]
fn modern_get_cancelled_has_no_payload() {
    let mut r = record(TaskStatus::Cancelled);
    r.status_message = Some("The task was cancelled by request.".into());
    assert_eq!(
        r.modern_get_result(),
        json!({
            "resultType": "complete",
            "taskId": "786512e2",
            "status": "cancelled",
            "statusMessage": "The task was cancelled by request.",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
            "ttlMs": 60000,
            "pollIntervalMs": 5000
        })
    );
}

#[test]
fn modern_shapes_never_use_legacy_names() {
    let mut r = record(TaskStatus::Completed);
    r.outcome = Some(TaskOutcome::Result(json!({"content": []})));
    for v in [
        r.modern_create_result(),
        r.modern_get_result(),
        r.modern_notification_params(),
    ] {
        for key in ["ttl", "pollInterval", "requestState", "task"] {
            assert!(v.get(key).is_none(), "{key} in {v}");
        }
    }
}

#[test]
fn modern_notification_params_are_the_detailed_task_without_result_type() {
    let mut r = record(TaskStatus::Completed);
    r.last_updated_at = t0() + Duration::from_secs(1200);
    r.outcome = Some(TaskOutcome::Result(
        json!({"content": [{"type": "text", "text": "Operation completed successfully."}], "isError": false}),
    ));
    assert_eq!(
        r.modern_notification_params(),
        json!({
            "taskId": "786512e2",
            "status": "completed",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:50:00.000Z",
            "ttlMs": 60000,
            "pollIntervalMs": 5000,
            "result": {"content": [{"type": "text", "text": "Operation completed successfully."}], "isError": false, "resultType": "complete"}
        })
    );
    let mut r = record(TaskStatus::InputRequired);
    r.input_requests.insert("name".into(), elicit());
    let mut expected = r.modern_get_result();
    expected.as_object_mut().unwrap().remove("resultType");
    assert_eq!(r.modern_notification_params(), expected);
}

#[test]
fn legacy_task_uses_legacy_names_and_no_payload() {
    let mut r = record(TaskStatus::Failed);
    r.origin = Era::Legacy;
    r.ttl = Some(Duration::from_secs(30));
    r.status_message = Some("Tool execution failed: API rate limit exceeded".into());
    r.outcome = Some(TaskOutcome::Error(RpcError::internal("rate limit")));
    assert_eq!(
        r.legacy_task(),
        json!({
            "taskId": "786512e2",
            "status": "failed",
            "statusMessage": "Tool execution failed: API rate limit exceeded",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
            "ttl": 30000,
            "pollInterval": 5000
        })
    );
    let mut r = record(TaskStatus::InputRequired);
    r.input_requests.insert("name".into(), elicit());
    r.ttl = None;
    r.poll_interval = None;
    assert_eq!(
        r.legacy_task(),
        json!({
            "taskId": "786512e2",
            "status": "input_required",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
            "ttl": null
        })
    );
}

#[test]
fn legacy_create_result_nests_the_task() {
    let r = record(TaskStatus::Working);
    assert_eq!(
        r.legacy_create_result(),
        json!({
            "task": {
                "taskId": "786512e2",
                "status": "working",
                "createdAt": "2025-11-25T10:30:00.000Z",
                "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                "ttl": 60000,
                "pollInterval": 5000
            }
        })
    );
}

#[test]
fn legacy_list_result_with_and_without_cursor() {
    let a = record(TaskStatus::Working);
    let mut b = record(TaskStatus::Completed);
    b.id = TaskId::new("abc123");
    b.poll_interval = None;
    assert_eq!(
        legacy_list_result([&a, &b], Some("next-page")),
        json!({
            "tasks": [
                {
                    "taskId": "786512e2",
                    "status": "working",
                    "createdAt": "2025-11-25T10:30:00.000Z",
                    "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                    "ttl": 60000,
                    "pollInterval": 5000
                },
                {
                    "taskId": "abc123",
                    "status": "completed",
                    "createdAt": "2025-11-25T10:30:00.000Z",
                    "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
                    "ttl": 60000
                }
            ],
            "nextCursor": "next-page"
        })
    );
    assert_eq!(
        legacy_list_result::<TaskRecord>([], None),
        json!({"tasks": []})
    );
}

#[test]
fn legacy_status_notification_params_are_the_task() {
    let r = record(TaskStatus::Completed);
    assert_eq!(
        r.legacy_status_notification_params(),
        json!({
            "taskId": "786512e2",
            "status": "completed",
            "createdAt": "2025-11-25T10:30:00.000Z",
            "lastUpdatedAt": "2025-11-25T10:40:00.250Z",
            "ttl": 60000,
            "pollInterval": 5000
        })
    );
}
