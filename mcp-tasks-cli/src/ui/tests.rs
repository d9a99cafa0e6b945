use super::*;
use mcp_tasks_client::{Progress, TaskStatus};

fn snapshot(status: TaskStatus, message: Option<&str>, progress: Option<Progress>) -> TaskSnapshot {
    TaskSnapshot {
        task_id: "t1".into(),
        status,
        status_message: message.map(str::to_owned),
        progress,
        poll_interval: None,
        ttl: None,
        created_at: None,
        last_updated_at: None,
    }
}

#[test]
fn the_progress_line_says_status_message_and_progress() {
    assert_eq!(
        describe(&snapshot(TaskStatus::Working, None, None)),
        "working"
    );
    assert_eq!(
        describe(&snapshot(TaskStatus::InputRequired, Some("asking"), None)),
        "input required: asking"
    );
    let progress = Progress {
        progress: 3.0,
        total: Some(10.0),
        message: Some("reading".into()),
    };
    assert_eq!(
        describe(&snapshot(
            TaskStatus::Working,
            Some("fetching"),
            Some(progress)
        )),
        "working: fetching - reading (3/10)"
    );
    let progress = Progress {
        progress: 0.5,
        total: None,
        message: Some("same".into()),
    };
    assert_eq!(
        describe(&snapshot(TaskStatus::Working, Some("same"), Some(progress))),
        "working: same (0.5)"
    );
}
