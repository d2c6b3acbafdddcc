use super::*;

/// The tool labels stop growing at the cap, whatever the tools called: the calls past it are
/// counted under `(other)` of their server, and no call goes uncounted.
#[test]
fn tool_labels_are_capped_and_every_call_counted() {
    let metrics = Metrics::default();
    let mut rng = fastrand::Rng::with_seed(0x3E7);
    let servers = ["a", "b", "c"];
    let calls = MAX_TOOL_LABELS * 2;
    let mut failed = 0;
    for i in 0..calls {
        let server = servers[rng.usize(..servers.len())];
        let fail = rng.bool();
        failed += usize::from(fail);
        metrics.call(
            server,
            &format!("{server}.t{i}"),
            fail,
            Duration::from_millis(3),
        );
    }
    let text = metrics.render(None, &[]);
    let series = |name: &str| -> Vec<(String, f64)> {
        text.lines()
            .filter_map(|l| l.strip_prefix(name)?.strip_prefix('{'))
            .filter_map(|l| {
                let (labels, value) = l.rsplit_once(' ')?;
                Some((labels.to_string(), value.parse().ok()?))
            })
            .collect()
    };
    let counted = series("disco_gateway_calls_total");
    let others = counted
        .iter()
        .filter(|(l, _)| l.contains(&format!("tool=\"{OTHER_TOOL}\"")))
        .count();
    assert_eq!(counted.len() - others, MAX_TOOL_LABELS);
    assert!(others <= servers.len());
    let total: f64 = counted.iter().map(|(_, v)| v).sum();
    assert_eq!(total, calls as f64);
    let errors: f64 = series("disco_gateway_call_errors_total")
        .iter()
        .map(|(_, v)| v)
        .sum();
    assert_eq!(errors, failed as f64);
    let timed: f64 = series("disco_gateway_call_duration_seconds_count")
        .iter()
        .map(|(_, v)| v)
        .sum();
    assert_eq!(timed, calls as f64);
}

/// A label value with the characters the format escapes is written escaped: a scrape reads
/// it back as one sample.
#[test]
fn label_values_are_escaped() {
    let metrics = Metrics::default();
    metrics.call("s", "a\"b\\c\nd", false, Duration::ZERO);
    let text = metrics.render(None, &[("x\"y".into(), 2)]);
    assert!(
        text.contains(r#"disco_gateway_calls_total{server="s",tool="a\"b\\c\nd"} 1"#),
        "{text}"
    );
    assert!(
        text.contains(r#"disco_gateway_upstream_restarts_total{server="x\"y"} 2"#),
        "{text}"
    );
}
