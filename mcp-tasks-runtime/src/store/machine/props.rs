//! Property tests of the state machine: whatever sequence of operations runs, a terminal task
//! never changes again, an accepted answer is never lost (the tool can take it until the task
//! ends, and once taken it is kept: taking it again gives the same answer), `version` moves exactly when the record does, and `input_required` means an
//! input request is outstanding.

use super::*;
use crate::protocol::Era;
use crate::protocol::task::Owner;
use proptest::prelude::*;
use std::collections::BTreeMap;
use std::time::{Duration, UNIX_EPOCH};

#[derive(Debug, Clone)]
enum Op {
    SetStatus(Option<u8>),
    Ask(u8),
    Withdraw(u8),
    Deliver(Vec<(u8, u8)>),
    Take(u8),
    Finish(bool),
    Cancel,
    /// The sweeper, with the runner's lease alive or lapsed.
    Expire(bool),
}

/// Operations, weighted so that long runs happen before a task ends (ending is one step).
fn op() -> impl Strategy<Value = Op> {
    let key = 0u8..3;
    prop_oneof![
        2 => proptest::option::of(0u8..3).prop_map(Op::SetStatus),
        6 => key.clone().prop_map(Op::Ask),
        2 => key.clone().prop_map(Op::Withdraw),
        6 => proptest::collection::vec((key.clone(), any::<u8>()), 0..4).prop_map(Op::Deliver),
        6 => key.prop_map(Op::Take),
        1 => any::<bool>().prop_map(Op::Finish),
        1 => Just(Op::Cancel),
        1 => any::<bool>().prop_map(Op::Expire),
    ]
}

fn origin() -> impl Strategy<Value = Era> {
    prop_oneof![Just(Era::Modern), Just(Era::Legacy)]
}

fn key(k: u8) -> String {
    format!("k{k}")
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn no_sequence_moves_a_terminal_task_or_loses_an_answer(
        origin in origin(),
        ops in proptest::collection::vec(op(), 0..40),
    ) {
        let mut now = UNIX_EPOCH + Duration::from_secs(1_000);
        let new = NewTask::new(Owner::new("o"), origin).ttl(Some(Duration::from_secs(60)));
        let mut record = TaskRecord::new(new, now);
        // Answers accepted and not yet taken, as the tool would see them.
        let mut waiting: BTreeMap<String, Value> = BTreeMap::new();
        // Answers taken: kept, a take again gives them again.
        let mut taken: BTreeMap<String, Value> = BTreeMap::new();
        let mut ever_used: std::collections::BTreeSet<String> = Default::default();
        let mut terminal: Option<TaskRecord> = None;
        for op in ops {
            now += Duration::from_millis(1);
            let before = record.clone();
            match op.clone() {
                Op::SetStatus(m) => record.set_status_message(m.map(|m| format!("s{m}")), now),
                Op::Ask(k) => {
                    let r = record.add_input_request(key(k),
                        InputRequest::new("elicitation/create", serde_json::json!({})),
                        now,
                    );
                    match r {
                        Ok(()) => prop_assert!(ever_used.insert(key(k)), "a used key was asked again"),
                        Err(StoreError::Terminal(_)) => prop_assert!(before.status.is_terminal()),
                        Err(StoreError::InputKeyReused(_)) => prop_assert!(ever_used.contains(&key(k))),
                        Err(e) => prop_assert!(false, "unexpected {e}"),
                    }
                }
                Op::Withdraw(k) => record.withdraw_input_request(&key(k), now),
                Op::Deliver(answers) => {
                    let mut responses = Map::new();
                    for (k, v) in answers {
                        responses.insert(key(k), Value::from(v));
                    }
                    let delivery = record.deliver_responses(responses.clone(), now);
                    for k in &delivery.accepted {
                        prop_assert!(before.input_requests.contains_key(k));
                        prop_assert!(waiting.insert(k.clone(), responses[k].clone()).is_none());
                    }
                    for k in &delivery.ignored {
                        prop_assert!(
                            before.status.is_terminal() || !before.input_requests.contains_key(k)
                        );
                    }
                }
                Op::Take(k) => {
                    let got = record.take_response(&key(k));
                    let expected = match waiting.remove(&key(k)) {
                        Some(answer) => {
                            taken.insert(key(k), answer.clone());
                            Some(answer)
                        }
                        None => taken.get(&key(k)).cloned(),
                    };
                    prop_assert_eq!(got, expected, "the tool gets exactly the answer given, every time it takes it");
                }
                Op::Finish(ok) => {
                    let outcome = if ok {
                        TaskOutcome::Result(serde_json::json!({ "content": [] }))
                    } else {
                        TaskOutcome::Error(RpcError::internal("boom"))
                    };
                    record.finish(outcome, now);
                }
                Op::Cancel => {
                    let cancelled = record.cancel(now);
                    prop_assert_eq!(cancelled, !before.status.is_terminal());
                }
                Op::Expire(runner_alive) => {
                    let verdict = record.expiry(now, runner_alive);
                    record.apply_expiry(verdict, now);
                }
            }

            // A terminal task never changes again.
            if let Some(ended) = &terminal {
                prop_assert_eq!(&record, ended, "{:?} changed a terminal task", op);
            } else if record.status.is_terminal() {
                prop_assert!(record.terminal_at.is_some());
                prop_assert!(record.input_requests.is_empty() && record.input_responses.is_empty());
                // Nobody will take them any more: the task ended.
                waiting.clear();
                terminal = Some(record.clone());
            }
            // No answer lost: what was accepted and not taken is still there to take.
            if !record.status.is_terminal() {
                let held: BTreeMap<String, Value> = record
                    .input_responses
                    .iter()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                prop_assert_eq!(&held, &waiting);
                prop_assert_eq!(
                    record.status == TaskStatus::InputRequired,
                    !record.input_requests.is_empty()
                );
            }
            // `version` moves exactly when the record does.
            let changed = record != before;
            prop_assert_eq!(record.version != before.version, changed, "{:?}", op);
            prop_assert!(record.version >= before.version);
        }
    }
}
