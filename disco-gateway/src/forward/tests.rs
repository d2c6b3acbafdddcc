use std::collections::HashSet;

use super::*;

/// The table's rule, as plainly as it can be said: keys in order of last use, least recent
/// first; a new key past the bound pushes out the first idle key, or the first key when all
/// are busy.
#[derive(Default)]
struct Model {
    order: Vec<(String, u64)>,
}

impl Model {
    fn touch(&mut self, key: &str) -> Option<u64> {
        let i = self.order.iter().position(|(k, _)| k == key)?;
        let entry = self.order.remove(i);
        let value = entry.1;
        self.order.push(entry);
        Some(value)
    }

    fn insert(&mut self, key: &str, value: u64, cap: usize, busy: &HashSet<u64>) -> Option<u64> {
        if let Some(i) = self.order.iter().position(|(k, _)| k == key) {
            let (_, old) = self.order.remove(i);
            self.order.push((key.to_string(), value));
            return Some(old);
        }
        let mut out = None;
        if self.order.len() >= cap {
            let i = self
                .order
                .iter()
                .position(|(_, v)| !busy.contains(v))
                .unwrap_or(0);
            out = Some(self.order.remove(i).1);
        }
        self.order.push((key.to_string(), value));
        out
    }
}

/// Seeded random sequences of use, insertion, removal, emptying and calls starting and
/// ending, over more callers than the bound, against the model: the same keys in the same
/// order of use, the same entry pushed out, the bound never exceeded, one entry per caller.
#[test]
fn the_table_keeps_the_most_recently_used_within_its_bound() {
    for seed in 0..40u64 {
        let mut rng = fastrand::Rng::with_seed(0x5EED_0000 + seed);
        let cap = match seed % 4 {
            0 => MAX_FORWARDED_CONNECTIONS,
            1 => 1,
            2 => 3,
            _ => rng.usize(2..12),
        };
        let callers = cap + rng.usize(1..cap + 8);
        let key = |i: usize| format!("caller-{i:04}");
        let mut lru = Lru::new(cap);
        let mut model = Model::default();
        let mut busy = HashSet::new();
        let mut next_value = 0u64;
        for step in 0..2_000 {
            let k = key(rng.usize(..callers));
            let at = format!("seed {seed} cap {cap} step {step}");
            match rng.u8(..100) {
                0..=39 => assert_eq!(lru.get(&k), model.touch(&k), "get {k}: {at}"),
                40..=79 => {
                    next_value += 1;
                    let got = lru.insert(&k, next_value, |v| busy.contains(v));
                    let want = model.insert(&k, next_value, cap, &busy);
                    assert_eq!(got, want, "insert {k}: {at}");
                }
                80..=89 => {
                    // A call starts or ends on some connection in the table.
                    if let Some((_, v)) = model.order.get(rng.usize(..model.order.len().max(1))) {
                        if !busy.remove(v) {
                            busy.insert(*v);
                        }
                    }
                }
                90..=97 => {
                    // A failed open takes out its own entry only.
                    let mine = model.order.iter().find(|(m, _)| *m == k).map(|(_, v)| *v);
                    let which = if rng.bool() { mine } else { Some(u64::MAX) };
                    let got = lru.remove_if(&k, |v| Some(*v) == which);
                    let want = match (mine, which) {
                        (Some(m), Some(w)) if m == w => {
                            model.order.retain(|(m, _)| *m != k);
                            Some(m)
                        }
                        _ => None,
                    };
                    assert_eq!(got, want, "remove_if {k}: {at}");
                }
                _ => {
                    let mut got = lru.drain();
                    let mut want: Vec<u64> = model.order.drain(..).map(|(_, v)| v).collect();
                    got.sort();
                    want.sort();
                    assert_eq!(got, want, "drain: {at}");
                }
            }
            assert!(lru.len() <= cap, "bound exceeded: {at}");
            let order: Vec<String> = model.order.iter().map(|(k, _)| k.clone()).collect();
            assert_eq!(lru.keys(), order, "order of use: {at}");
        }
    }
}

/// A refusal is said as one; anything else only as unreachable, without the detail (which
/// may name the upstream's address); both name the server.
#[test]
fn a_failed_open_says_whether_the_token_was_refused_and_nothing_more() {
    let detail = "Client error: error sending request for url (http://10.1.2.3:8443/mcp)";
    for refused in [true, false] {
        let said = failed(
            "up",
            &InitFailure {
                refused,
                detail: detail.to_string(),
            },
        );
        let want = if refused {
            "Server `up` refused the caller's bearer token"
        } else {
            "Server `up` could not be reached with the caller's bearer token"
        };
        assert!(said.starts_with(want), "{said}");
        for part in ["10.1.2.3", "8443", "error sending", "Client error"] {
            assert!(!said.contains(part), "the detail is shown: {said}");
        }
    }
}

fn forwarding_server() -> Forwarded {
    let config = crate::config::Config::parse(
        r#"{"mcpServers": {"up": {"url": "http://127.0.0.1:9/mcp", "forwardToken": true}},
            "disco": {"tokens": [{"token": "tok-a", "caller": "a"}]}}"#,
        &|_| None,
    )
    .expect("the configuration");
    let tokens = Arc::new(HashMap::from([("a".to_string(), "tok-a".to_string())]));
    let shutdown = CancellationToken::new();
    Forwarded::for_server(
        &config.servers[0],
        tokens,
        Duration::from_secs(30),
        crate::wire::MAX_LINE_BYTES,
        Heard::new(),
        &shutdown,
    )
    .expect("up forwards")
}

/// Before the main connection is up, and after it ended, a caller's call is told the server
/// is restarting and takes no place (no dead slot is left for the next call to find).
#[tokio::test]
async fn while_the_main_connection_is_down_a_call_takes_no_place() {
    let forwarded = forwarding_server();
    for round in 0..3 {
        let said = forwarded.lease("a").await.err().expect("no connection");
        assert!(said.contains("restarts"), "round {round}: {said}");
        assert_eq!(forwarded.open_connections(), 0, "round {round}");
        assert_eq!(forwarded.calls_in_flight(), 0, "round {round}");
        forwarded.resume();
        forwarded.close_all();
    }
}
