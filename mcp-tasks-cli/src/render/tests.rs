use super::*;

#[test]
fn the_tools_column_says_what_a_call_will_do() {
    use TaskSupport::*;
    assert_eq!(runs_as(true, true, None), "task or inline");
    assert_eq!(runs_as(true, false, None), "inline");
    assert_eq!(runs_as(false, true, Some(Required)), "task");
    assert_eq!(runs_as(false, true, Some(Optional)), "task");
    assert_eq!(runs_as(false, true, Some(Forbidden)), "inline");
    assert_eq!(runs_as(false, true, None), "inline");
    assert_eq!(runs_as(false, false, Some(Optional)), "inline");
    assert_eq!(runs_as(false, false, Some(Required)), "no (needs task)");
}
