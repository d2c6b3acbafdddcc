use super::*;

/// The ping excuse over generated silences and call counts, against the rule: a server
/// heard within the ping's wait is excused; one silent longer is excused only while calls
/// run and for less than a call timeout.
#[test]
fn an_unanswered_ping_is_excused_while_calls_run() {
    let mut rng = fastrand::Rng::with_seed(0xE5C);
    for _ in 0..2_000 {
        let disco = DiscoConfig {
            ping_timeout: Duration::from_millis(rng.u64(1..5_000)),
            call_timeout: Duration::from_millis(rng.u64(1..120_000)),
            ..DiscoConfig::default()
        };
        let silent = Duration::from_millis(rng.u64(..150_000));
        let calls = rng.usize(..4);
        let want = if silent < disco.ping_timeout {
            true
        } else if calls == 0 {
            false
        } else {
            silent < disco.call_timeout
        };
        assert_eq!(excuses(silent, calls, &disco), want, "{silent:?} {calls}");
    }
}

/// The callers' connections of a forwarding server report what they read to the server's
/// own record of when it was last heard, which the ping rule reads.
#[test]
fn callers_connections_share_the_servers_heard() {
    let config = crate::config::Config::parse(
        r#"{"mcpServers": {"up": {"url": "http://127.0.0.1:9/mcp", "forwardToken": true}}}"#,
        &|_| None,
    )
    .expect("the configuration");
    let hub = Hub::new(config.servers, config.disco);
    let upstream = &hub.upstreams()[0];
    let forwarded = upstream.forwarded.as_ref().expect("up forwards");
    assert!(Arc::ptr_eq(forwarded.heard(), &upstream.heard));
}

/// The waits of generated lives (failed starts, short runs, healthy runs) against the
/// rule's closed form: `min(initial * 2^k, max)`, where k counts the waits since the
/// start or the last healthy run; never above `max`, never a panic on the largest values.
#[test]
fn backoff_doubles_to_its_cap_and_resets_after_a_healthy_run() {
    let ms = Duration::from_millis;
    let initials = [ms(1), ms(200), ms(500), ms(1000), ms(u64::MAX)];
    let maxes = [ms(1), ms(1000), ms(30_000), ms(u64::MAX)];
    let mut rng = fastrand::Rng::with_seed(0x2545_F491);
    for initial in initials {
        for max in maxes {
            // Lives from all failures (the cap reached) to mostly healthy runs.
            for healthy_in in [0u64, 2, 3, 6, 20] {
                let mut backoff = Backoff::new(initial, max);
                let mut k = 0u32;
                for _ in 0..80 {
                    let roll = rng.u64(..);
                    let wait = if healthy_in > 0 && roll.is_multiple_of(healthy_in) {
                        k = 0;
                        backoff.after_run(HEALTHY_RUN)
                    } else if roll.is_multiple_of(2) {
                        backoff.after_failed_start()
                    } else {
                        backoff.after_run(HEALTHY_RUN / 2)
                    };
                    let factor = 1u128.checked_shl(k).unwrap_or(u128::MAX);
                    let expected = initial
                        .as_millis()
                        .saturating_mul(factor)
                        .min(max.as_millis());
                    assert_eq!(
                        wait.as_millis(),
                        expected,
                        "initial {initial:?} max {max:?} k {k}"
                    );
                    assert!(wait <= max);
                    assert_eq!(backoff.current(), wait);
                    backoff.waited();
                    k = k.saturating_add(1);
                }
            }
        }
    }
}

/// Spans read as a person reads them; a wait is rounded up, never promised shorter.
#[test]
fn spans_are_seconds_then_minutes_then_hours() {
    let s = |ms: u64, wait: bool| span(Duration::from_millis(ms), wait);
    assert_eq!(s(0, false), "0 s");
    assert_eq!(s(3_400, false), "3 s");
    assert_eq!(s(3_400, true), "4 s");
    assert_eq!(s(3_000, true), "3 s");
    assert_eq!(s(119_999, false), "119 s");
    assert_eq!(s(120_000, false), "2 min");
    assert_eq!(s(7_199_000, false), "119 min");
    assert_eq!(s(7_200_000, false), "2 h");
    assert_eq!(
        s(u64::MAX, true),
        format!("{} h", (u64::MAX / 1000 + 1) / 3600)
    );
}

/// A server down since its run ended stays down since then through the starts that fail
/// after it; the answer names it, the moment, why, and the wait before the next start.
#[test]
fn an_outage_keeps_its_first_moment_and_says_the_next_start() {
    let config =
        crate::config::Config::parse(r#"{"mcpServers": {"fs": {"command": "nowhere"}}}"#, &|_| {
            None
        })
        .expect("the configuration");
    let hub = Hub::new(config.servers, config.disco);
    let fs = &hub.upstreams()[0];
    fs.set_down("the connection ended".into());
    let Status::Down(first) = fs.status() else {
        panic!("not down")
    };
    fs.set_down("cannot run `nowhere`".into());
    let now = first.since + Duration::from_secs(75);
    fs.set_next_start(Some(now + Duration::from_millis(2_500)));
    let Status::Down(outage) = fs.status() else {
        panic!("not down")
    };
    assert_eq!(outage.since, first.since);
    assert_eq!(outage.since_utc, first.since_utc);
    let text = outage.message("fs", now);
    let utc = first
        .since_utc
        .to_rfc3339_opts(chrono::SecondsFormat::Secs, true);
    assert_eq!(
        text,
        format!(
            "Server `fs` is unavailable since {utc} (75 s ago): cannot run `nowhere`; its next \
             start is in 3 s. Try again then."
        )
    );
    // An upstream's long reason reaches the caller clipped.
    fs.set_down("x".repeat(5_000));
    let Status::Down(long) = fs.status() else {
        panic!("not down")
    };
    let said = long.message("fs", now);
    assert!(said.chars().count() < MAX_REASON_CHARS + 200, "{said}");
    assert!(
        said.contains(&format!("{}…", "x".repeat(MAX_REASON_CHARS))),
        "{said}"
    );
    fs.set_next_start(None);
    let Status::Down(outage) = fs.status() else {
        panic!("not down")
    };
    assert!(outage
        .message("fs", now)
        .contains("; a start is under way now."));
}

/// What an upstream writes to stderr is kept for the log of its crash within a bound: the
/// last `STDERR_TAIL_LINES` lines, each clipped to 500 characters, the oldest going first.
#[tokio::test]
async fn the_stderr_kept_for_a_crash_is_the_last_lines_clipped() {
    let lines = STDERR_TAIL_LINES + 15;
    // Line i is "i:" and then 600 characters (some of them two bytes long).
    let script = format!(
        "i=0; while [ $i -lt {lines} ]; do printf '%s:' $i; \
         printf 'é%.0s' $(seq 1 100); printf 'x%.0s' $(seq 1 500); printf '\\n'; \
         i=$((i+1)); done >&2"
    );
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(script)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("sh runs");
    let stderr = child.stderr.take().expect("its stderr");
    let tail = Arc::new(Mutex::new(VecDeque::new()));
    tokio::time::timeout(
        Duration::from_secs(20),
        read_stderr("s".into(), stderr, tail.clone()),
    )
    .await
    .expect("read to its end");
    let _ = child.wait().await;
    let kept: Vec<String> = tail
        .lock()
        .map(|t| t.iter().cloned().collect())
        .unwrap_or_default();
    assert_eq!(kept.len(), STDERR_TAIL_LINES);
    for (n, line) in kept.iter().enumerate() {
        let i = lines - STDERR_TAIL_LINES + n;
        assert!(line.starts_with(&format!("{i}:é")), "{n}: {line}");
        assert_eq!(line.chars().count(), 500, "{n}");
    }
}

/// Reloads of generated server lists against the rule: a name only in the new list is added,
/// one only in the old removed, one in both with another entry changed (a new upstream), one
/// with the same entry kept (the very upstream that ran); the hub serves the new list in its
/// order. The servers' commands do not exist: each start fails, and nothing waits on them.
#[tokio::test]
async fn a_reload_adds_removes_changes_and_keeps_by_the_rule() {
    let mut rng = fastrand::Rng::with_seed(0x2E10AD);
    let names = ["a", "b", "c", "d", "e"];
    let entry = |rng: &mut fastrand::Rng, name: &str| ServerConfig {
        name: name.to_string(),
        key: format!("mcpServers.{name}"),
        transport: Transport::Stdio {
            command: "/nonexistent/disco-gateway-test-server".into(),
            args: vec![format!("v{}", rng.u8(..2))],
            env: Default::default(),
            cwd: None,
        },
    };
    let list = |rng: &mut fastrand::Rng| {
        let mut chosen: Vec<&str> = names.iter().copied().filter(|_| rng.bool()).collect();
        rng.shuffle(&mut chosen);
        chosen
            .into_iter()
            .map(|n| entry(rng, n))
            .collect::<Vec<_>>()
    };
    let disco = DiscoConfig {
        restart_initial: Duration::from_secs(60),
        restart_max: Duration::from_secs(60),
        ..DiscoConfig::default()
    };
    for _ in 0..200 {
        let first = list(&mut rng);
        let hub = Hub::new(first.clone(), disco.clone());
        hub.start();
        let old = hub.upstreams();
        let next = list(&mut rng);
        let done = hub.reload(next.clone());
        let now = hub.upstreams();
        let in_list = |l: &[ServerConfig], n: &str| l.iter().find(|s| s.name == n).cloned();
        let mut want = reload::Reloaded::default();
        for s in &next {
            match in_list(&first, &s.name) {
                None => want.added.push(s.name.clone()),
                Some(o) if o == *s => want.kept.push(s.name.clone()),
                Some(_) => want.changed.push(s.name.clone()),
            }
        }
        for s in &first {
            if in_list(&next, &s.name).is_none() {
                want.removed.push(s.name.clone());
            }
        }
        assert_eq!(done, want);
        let served: Vec<&str> = now.iter().map(|u| u.config.name.as_str()).collect();
        let listed: Vec<&str> = next.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(served, listed);
        for u in now.iter() {
            let was = old.iter().find(|o| o.config.name == u.config.name);
            let same = was.is_some_and(|o| Arc::ptr_eq(o, u));
            assert_eq!(
                same,
                done.kept.contains(&u.config.name),
                "{}",
                u.config.name
            );
            assert!(!u.stop.is_cancelled());
        }
        hub.stop().await;
    }
}
