//! The relay's promise, on generated traffic: every progress notification an upstream sends
//! for a call that asked is in that call's queue, in the order sent, by the time the message
//! after it (the call's answer above all) leaves the transport; nothing else is taken.

use std::collections::VecDeque;

use serde_json::json;

use super::*;
use rmcp::model::{CallToolRequest, CallToolRequestParams, NumberOrString};

/// A transport that reads a script and keeps what is sent.
struct Script {
    incoming: VecDeque<RxJsonRpcMessage<RoleClient>>,
}

impl Transport<RoleClient> for Script {
    type Error = std::io::Error;

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        if let JsonRpcMessage::Request(request) = &item {
            assert!(
                request.request.extensions().get::<ProgressSink>().is_none(),
                "the sink leaves the request before it is sent"
            );
        }
        std::future::ready(Ok(()))
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        self.incoming.pop_front()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        Ok(())
    }
}

fn message(value: serde_json::Value) -> RxJsonRpcMessage<RoleClient> {
    serde_json::from_value(value).expect("a valid server message")
}

fn progress(token: &NumberOrString, step: u32) -> RxJsonRpcMessage<RoleClient> {
    let token = serde_json::to_value(token).unwrap();
    message(json!({
        "jsonrpc": "2.0",
        "method": "notifications/progress",
        "params": {"progressToken": token, "progress": step, "message": format!("step {step}")},
    }))
}

/// An answer to the request `id`, naming it in its text: whoever takes it can tell whose it is.
fn answer(id: &NumberOrString, as_error: bool) -> RxJsonRpcMessage<RoleClient> {
    let text = id.to_string();
    let id = serde_json::to_value(id).unwrap();
    if as_error {
        message(json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": text}}))
    } else {
        message(json!({
            "jsonrpc": "2.0",
            "id": id,
            "result": {"content": [{"type": "text", "text": text}]},
        }))
    }
}

/// The request an answer made by [`answer`] names.
fn named(answer: &Answer) -> Option<String> {
    match answer {
        Ok(ServerResult::CallToolResult(result)) => result
            .content
            .first()
            .and_then(|block| block.as_text())
            .map(|text| text.text.clone()),
        Err(ServiceError::McpError(error)) => Some(error.message.to_string()),
        _ => None,
    }
}

fn log_line() -> RxJsonRpcMessage<RoleClient> {
    message(json!({
        "jsonrpc": "2.0",
        "method": "notifications/message",
        "params": {"level": "info", "data": "hello"},
    }))
}

/// fastrand, seeded, so that a failure names its seed.
struct Rng(fastrand::Rng);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0.u64(..n)
    }
}

struct Call {
    id: NumberOrString,
    token: NumberOrString,
    steps: u32,
    /// The caller asked for progress: its queue (`None` once the caller is gone).
    queue: Option<ProgressQueue>,
    asked: bool,
    /// The caller goes away before the upstream says anything (a cancelled call).
    leaves: bool,
    answered_with_error: bool,
    /// Written beside rmcp's loop: its answer is handed to it, never passed on.
    direct: bool,
    waiting: Option<Waiting>,
    /// A call beside rmcp's loop has its answer.
    answered: bool,
}

impl Call {
    fn new(id: NumberOrString, token: NumberOrString) -> Call {
        Call {
            id,
            token,
            steps: 0,
            queue: None,
            asked: false,
            leaves: false,
            answered_with_error: false,
            direct: false,
            waiting: None,
            answered: false,
        }
    }
}

fn request(call: &mut Call) -> TxJsonRpcMessage<RoleClient> {
    let mut request =
        ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("tool")));
    request
        .get_meta_mut()
        .set_progress_token(ProgressToken(call.token.clone()));
    JsonRpcMessage::request(request, call.id.clone())
}

fn steps_in(queue: &mut ProgressQueue) -> Vec<f64> {
    let mut seen = Vec::new();
    while let Some(update) = queue.try_recv() {
        seen.push(update.progress);
    }
    seen
}

/// One message of the upstream's: the call it belongs to, whether it comes after that call's
/// answer (progress an upstream sends late), and the message.
type Sent = (Option<usize>, bool, RxJsonRpcMessage<RoleClient>);

/// What the upstream sends, in one generated order that keeps each call's own order: its
/// progress steps, then its answer, then now and then one more progress step (late). Stray
/// notifications (another token, a log line) in between.
fn traffic(rng: &mut Rng, calls: &[Call]) -> VecDeque<Sent> {
    let mut next_step: Vec<u32> = vec![1; calls.len()];
    let mut answered = vec![false; calls.len()];
    let mut late: Vec<usize> = Vec::new();
    let mut out = VecDeque::new();
    while answered.iter().any(|a| !a) || !late.is_empty() {
        if !late.is_empty() && rng.below(3) == 0 {
            let i = late.swap_remove(rng.below(late.len() as u64) as usize);
            out.push_back((Some(i), true, progress(&calls[i].token, calls[i].steps + 1)));
            continue;
        }
        if answered.iter().all(|a| *a) {
            continue;
        }
        if rng.below(6) == 0 {
            let stray = if rng.below(2) == 0 {
                progress(&NumberOrString::String("not-ours".into()), 1)
            } else {
                log_line()
            };
            out.push_back((None, false, stray));
            continue;
        }
        let open: Vec<usize> = (0..calls.len()).filter(|&i| !answered[i]).collect();
        let i = open[rng.below(open.len() as u64) as usize];
        if next_step[i] <= calls[i].steps {
            out.push_back((Some(i), false, progress(&calls[i].token, next_step[i])));
            next_step[i] += 1;
        } else {
            out.push_back((
                Some(i),
                false,
                answer(&calls[i].id, calls[i].answered_with_error),
            ));
            answered[i] = true;
            if rng.below(3) == 0 {
                late.push(i);
            }
        }
    }
    out
}

fn is_progress(message: &RxJsonRpcMessage<RoleClient>) -> bool {
    matches!(
        message,
        JsonRpcMessage::Notification(n)
            if matches!(n.notification, ServerNotification::ProgressNotification(_))
    )
}

fn token_of(message: &RxJsonRpcMessage<RoleClient>) -> Option<&ProgressToken> {
    match message {
        JsonRpcMessage::Notification(n) => match &n.notification {
            ServerNotification::ProgressNotification(p) => Some(&p.params.progress_token),
            _ => None,
        },
        _ => None,
    }
}

fn answer_id(message: &RxJsonRpcMessage<RoleClient>) -> Option<&RequestId> {
    match message {
        JsonRpcMessage::Response(r) => Some(&r.id),
        JsonRpcMessage::Error(e) => e.id.as_ref(),
        _ => None,
    }
}

/// The calls beside rmcp's loop answered since the last look: each answer is the one sent,
/// and the call's queue holds every step the upstream sent before it, in order.
fn take_direct_answers(calls: &mut [Call], seed: u64) {
    for (i, call) in calls.iter_mut().enumerate() {
        let Some(waiting) = call.waiting.as_mut() else {
            continue;
        };
        let answer = match waiting.answer.try_recv() {
            Ok(answer) => answer,
            Err(oneshot::error::TryRecvError::Empty) => continue,
            Err(oneshot::error::TryRecvError::Closed) => panic!("seed {seed}: call {i} dropped"),
        };
        assert_eq!(
            named(&answer),
            Some(call.id.to_string()),
            "seed {seed}: call {i} took its own answer"
        );
        match answer {
            Ok(ServerResult::CallToolResult(_)) => assert!(!call.answered_with_error),
            Err(ServiceError::McpError(_)) => assert!(call.answered_with_error),
            other => panic!("seed {seed}: call {i} answered {other:?}"),
        }
        let all: Vec<f64> = (1..=call.steps).map(f64::from).collect();
        if let Some(queue) = call.queue.as_mut() {
            assert_eq!(
                steps_in(queue),
                all,
                "seed {seed}: call {i} before its answer"
            );
        }
        call.waiting = None;
        call.answered = true;
    }
}

#[tokio::test]
async fn progress_reaches_its_call_in_order_before_the_answer() {
    let mut late_to_a_caller = 0;
    for seed in 1..=500u64 {
        let mut rng = Rng(fastrand::Rng::with_seed(seed));
        let count = 1 + rng.below(5) as usize;
        let mut calls: Vec<Call> = (0..count)
            .map(|i| {
                let id = if rng.below(2) == 0 {
                    NumberOrString::Number(i as i64 + 1)
                } else {
                    NumberOrString::String(format!("req-{i}").into())
                };
                // rmcp's tokens are numbers; a string token must route the same way.
                let token = if rng.below(3) == 0 {
                    NumberOrString::String(format!("tok-{i}").into())
                } else {
                    NumberOrString::Number(100 + i as i64)
                };
                let mut call = Call::new(id, token);
                call.steps = rng.below(9) as u32;
                call.asked = rng.below(4) != 0;
                call.leaves = call.asked && rng.below(5) == 0;
                call.answered_with_error = rng.below(4) == 0;
                call.direct = rng.below(2) == 0;
                call
            })
            .collect();
        let script = traffic(&mut rng, &calls);
        late_to_a_caller += script
            .iter()
            .filter(|(owner, late, _)| {
                *late && owner.is_some_and(|i| calls[i].asked && !calls[i].leaves)
            })
            .count();
        let mut relay = Relay::new(
            Script {
                incoming: script.iter().map(|(_, _, m)| m.clone()).collect(),
            },
            Heard::new(),
        );
        for call in calls.iter_mut() {
            let mut message = request(call);
            if call.asked {
                if let JsonRpcMessage::Request(r) = &mut message {
                    call.queue = Some(route_progress(&mut r.request));
                }
            }
            if call.direct {
                call.waiting = relay.answers().expect(&mut message);
                assert!(
                    call.waiting.is_some(),
                    "seed {seed}: the connection is open"
                );
            } else {
                relay.send(message).await.unwrap();
            }
        }
        for call in calls.iter_mut().filter(|c| c.leaves) {
            call.queue = None;
            // Its answer then passes on to rmcp, which knows no such request.
            call.waiting = None;
        }
        let leavers: Vec<ProgressToken> = calls
            .iter()
            .filter(|c| c.leaves)
            .map(|c| ProgressToken(c.token.clone()))
            .collect();
        // What must pass on: all but the progress of calls that asked for it, before their
        // answer (progress after it has no call to go to, and passes on as any stray
        // notification does). A gone caller's progress may pass on or not; it is left out of
        // the comparison. The answer of a call beside rmcp's loop goes to the call alone, unless
        // the call is gone.
        let expected: Vec<serde_json::Value> = script
            .iter()
            .filter(|(owner, late, m)| match owner {
                Some(i) if calls[*i].asked && is_progress(m) => *late && !calls[*i].leaves,
                Some(i) if answer_id(m).is_some() => !calls[*i].direct || calls[*i].leaves,
                _ => true,
            })
            .map(|(_, _, m)| serde_json::to_value(m).unwrap())
            .collect();
        let mut passed = Vec::new();
        let mut answers = 0;
        while let Some(got) = relay.receive().await {
            take_direct_answers(&mut calls, seed);
            if let Some(id) = answer_id(&got) {
                let i = calls.iter().position(|c| &c.id == id).unwrap();
                assert!(
                    !calls[i].direct || calls[i].leaves,
                    "seed {seed}: the answer of call {i}, beside rmcp's loop, passed on"
                );
                answers += 1;
                let all: Vec<f64> = (1..=calls[i].steps).map(f64::from).collect();
                if let Some(queue) = calls[i].queue.as_mut() {
                    assert_eq!(
                        steps_in(queue),
                        all,
                        "seed {seed}: call {i} before its answer"
                    );
                }
            }
            if token_of(&got).is_some_and(|t| leavers.contains(t)) {
                continue;
            }
            passed.push(serde_json::to_value(&got).unwrap());
        }
        take_direct_answers(&mut calls, seed);
        let beside = calls.iter().filter(|c| c.direct && !c.leaves).count();
        assert_eq!(
            answers + beside,
            calls.len(),
            "seed {seed}: every answer passes on, but those of calls beside rmcp's loop"
        );
        assert!(
            calls.iter().all(|c| c.answered == (c.direct && !c.leaves)),
            "seed {seed}: every call beside rmcp's loop has its answer"
        );
        // Nothing reached a call's queue after its answer: its late step went on instead.
        for (i, call) in calls.iter_mut().enumerate() {
            if let Some(queue) = call.queue.as_mut() {
                assert_eq!(
                    steps_in(queue),
                    Vec::<f64>::new(),
                    "seed {seed}: call {i} after its answer"
                );
            }
        }
        assert_eq!(
            passed, expected,
            "seed {seed}: the rest passes on unchanged, in order"
        );
        assert_eq!(
            relay.routed(),
            0,
            "seed {seed}: answered calls leave no route"
        );
    }
    assert!(
        late_to_a_caller > 100,
        "{late_to_a_caller} late steps to a waiting caller"
    );
}

#[tokio::test]
async fn a_cancelled_call_leaves_no_route() {
    let mut calls: Vec<Call> = (0..3)
        .map(|i| {
            Call::new(
                NumberOrString::Number(i + 1),
                NumberOrString::Number(50 + i),
            )
        })
        .collect();
    let mut relay = Relay::new(
        Script {
            incoming: VecDeque::new(),
        },
        Heard::new(),
    );
    for call in calls.iter_mut() {
        let mut message = request(call);
        if let JsonRpcMessage::Request(r) = &mut message {
            call.queue = Some(route_progress(&mut r.request));
        }
        relay.send(message).await.unwrap();
    }
    assert_eq!(relay.routed(), 3);
    // The gateway tells the upstream it gave up on call 1: its route ends with that.
    let cancelled: TxJsonRpcMessage<RoleClient> = serde_json::from_value(json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": 1, "reason": "gone"},
    }))
    .unwrap();
    relay.send(cancelled).await.unwrap();
    assert_eq!(relay.routed(), 2);
    // Call 2's caller went away without a word: its route ends with the next call routed.
    calls[1].queue = None;
    let mut late = Call::new(NumberOrString::Number(9), NumberOrString::Number(90));
    let mut message = request(&mut late);
    if let JsonRpcMessage::Request(r) = &mut message {
        late.queue = Some(route_progress(&mut r.request));
    }
    relay.send(message).await.unwrap();
    assert_eq!(relay.routed(), 2, "calls 3 and 9 are left");
}

/// A call's queue and the sink the transport takes from its request.
fn routed() -> (ProgressQueue, ProgressSink) {
    let mut request =
        ClientRequest::CallToolRequest(CallToolRequest::new(CallToolRequestParams::new("t")));
    let queue = route_progress(&mut request);
    let sink = request.extensions().get::<ProgressSink>().cloned();
    (queue, sink.expect("the call's sink"))
}

fn update(step: usize) -> ProgressNotificationParam {
    ProgressNotificationParam::new(ProgressToken(NumberOrString::Number(1)), step as f64)
}

/// The bound, on generated runs of a caller that drains its queue at random moments (or never)
/// while the upstream sends steps 1..=n: the queue never holds more than the bound; the caller
/// gets steps in the order sent and always the last one sent; and a caller that keeps up (the
/// queue never full) gets every step.
#[test]
fn a_slow_caller_gets_the_latest_progress_in_order_from_a_bounded_queue() {
    for seed in 0..300u64 {
        let mut rng = fastrand::Rng::with_seed(seed);
        let (mut queue, sink) = routed();
        let n = rng.usize(0..=3 * MAX_QUEUED_PROGRESS);
        // How often the caller reads: never, rarely, or about as often as the upstream writes.
        let drain_one_in = [0, 400, 100, 2][rng.usize(0..4)];
        let mut got = Vec::new();
        let mut overflowed = false;
        for step in 1..=n {
            overflowed |= sink.0.queued().len() >= MAX_QUEUED_PROGRESS;
            assert!(
                sink.send(update(step)),
                "seed {seed}: the caller still reads"
            );
            assert!(sink.0.queued().len() <= MAX_QUEUED_PROGRESS, "seed {seed}");
            if drain_one_in > 0 && rng.usize(0..drain_one_in) == 0 {
                while let Some(u) = queue.try_recv() {
                    got.push(u.progress as usize);
                }
            }
        }
        while let Some(u) = queue.try_recv() {
            got.push(u.progress as usize);
        }
        assert!(got.windows(2).all(|w| w[0] < w[1]), "seed {seed}: {got:?}");
        assert_eq!(got.last().copied(), (n > 0).then_some(n), "seed {seed}");
        if !overflowed {
            assert_eq!(got, (1..=n).collect::<Vec<_>>(), "seed {seed}");
        } else {
            assert!(got.len() < n, "seed {seed}");
        }
        if drain_one_in == 0 {
            // Never read until the end: the first steps as sent, then the latest.
            let kept = n.min(MAX_QUEUED_PROGRESS);
            let mut want: Vec<usize> = (1..kept).collect();
            want.push(n);
            assert_eq!(got, want, "seed {seed}");
        }
        drop(queue);
        assert!(!sink.send(update(n + 1)), "seed {seed}: the caller is gone");
    }
}

#[tokio::test]
async fn a_waiting_caller_is_woken_by_the_progress_it_waits_for() {
    let (mut queue, sink) = routed();
    let waiter = tokio::spawn(async move {
        let mut seen = Vec::new();
        for _ in 0..3 {
            seen.push(queue.recv().await.progress);
        }
        seen
    });
    for step in 1..=3 {
        tokio::task::yield_now().await;
        assert!(sink.send(update(step)));
    }
    let seen = tokio::time::timeout(std::time::Duration::from_secs(10), waiter)
        .await
        .expect("woken")
        .expect("no panic");
    assert_eq!(seen, vec![1.0, 2.0, 3.0]);
}

/// A request beside rmcp's loop takes its answer once: a second answer with its id, an
/// answer to one that was cancelled or whose caller went away, and an answer to no request
/// pass on to rmcp (which drops them). When the connection ends, a request still waiting
/// learns it as rmcp's own do, no request waits from then on, and no progress is routed.
#[tokio::test]
async fn a_request_beside_the_loop_takes_its_answer_once_and_learns_the_end() {
    let id = |n: i64| NumberOrString::String(format!("g-{n}").into());
    let script = [
        answer(&id(0), false),
        answer(&id(0), false),
        answer(&id(1), false),
        answer(&id(2), true),
        answer(&id(9), false),
    ];
    let mut relay = Relay::new(
        Script {
            incoming: script.iter().cloned().collect(),
        },
        Heard::new(),
    );
    let answers = relay.answers();
    let mut calls: Vec<Call> = (0..4).map(|n| Call::new(id(n), id(n))).collect();
    // Call 3, never answered, asked for its progress.
    let mut queue = None;
    let mut waiting: Vec<Option<Waiting>> = calls
        .iter_mut()
        .enumerate()
        .map(|(n, call)| {
            let mut message = request(call);
            if let (3, JsonRpcMessage::Request(r)) = (n, &mut message) {
                queue = Some(route_progress(&mut r.request));
            }
            answers.expect(&mut message)
        })
        .collect();
    assert!(waiting.iter().all(Option::is_some));
    assert_eq!(relay.routed(), 1);
    // Call 1's caller went away; call 2 was cancelled through rmcp's loop.
    waiting[1] = None;
    let cancelled: TxJsonRpcMessage<RoleClient> = serde_json::from_value(json!({
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": "g-2", "reason": "gone"},
    }))
    .unwrap();
    relay.send(cancelled).await.unwrap();
    let expected: Vec<RequestId> = {
        let table = util::lock(&relay.table);
        let mut ids: Vec<RequestId> = table.answers.keys().cloned().collect();
        ids.sort_by_key(|id| id.to_string());
        ids
    };
    assert_eq!(
        expected,
        [id(0), id(3)],
        "a caller gone and a call cancelled wait no more"
    );
    let mut passed = Vec::new();
    while let Some(got) = relay.receive().await {
        passed.push(answer_id(&got).cloned());
    }
    assert_eq!(
        passed,
        [Some(id(0)), Some(id(1)), Some(id(2)), Some(id(9))],
        "all but the first answer to g-0 pass on"
    );
    assert_eq!(relay.routed(), 0, "after the end no progress is routed");
    assert!(queue.is_some(), "call 3 still reads its queue");
    let mut taken = waiting.into_iter();
    let first = taken.next().flatten().expect("call 0 waits");
    let first = first.answer().await;
    assert!(matches!(first, Ok(ServerResult::CallToolResult(_))));
    assert_eq!(named(&first), Some(id(0).to_string()));
    let last = taken.nth(2).flatten().expect("call 3 waits");
    assert!(matches!(
        last.answer().await,
        Err(ServiceError::TransportClosed)
    ));
    assert!(
        answers
            .expect(&mut request(&mut Call::new(id(4), id(4))))
            .is_none(),
        "after the end no request waits"
    );
}
