//! A listing reviewed against the server's pins (pins.rs), and the approvals that
//! `disco-gateway approve` writes taken while the gateway serves.

use std::sync::Arc;

use disco_runtime::util;

use super::{Hub, Upstream, PIN_POLL};
use crate::admit::Admitted;
use crate::pins::Review;

/// Reviews a listing against the server's pins (pins.rs), off the async threads: the pin file
/// is read, and written when a server is first seen or a definition first waits.
pub(super) async fn review(
    hub: &Hub,
    upstream: &Upstream,
    listed: Arc<Admitted>,
) -> Result<(Arc<Admitted>, Review), String> {
    let Some(pins) = hub.pins.clone() else {
        return Ok((listed, Review::default()));
    };
    let server = upstream.config.name.clone();
    let logged = util::lock(&upstream.logged).clone();
    let tools = listed.clone();
    let reviewed = tokio::task::spawn_blocking(move || pins.review(&server, &tools.tools, &logged))
        .await
        .map_err(|e| format!("the review of its tool pins failed: {e}"))?;
    let review = reviewed.map_err(|e| format!("its tool pins cannot be read or kept: {e}"))?;
    Ok((listed, review))
}

/// Takes approvals made by `disco-gateway approve` while the gateway runs: for each server with
/// tools that wait, a pin file written since its last review is reviewed again against the
/// tools it listed, and the catalog rebuilt when what waits changed.
pub(super) async fn watch_pins(hub: Arc<Hub>) {
    let Some(pins) = hub.pins.clone() else { return };
    let mut tick = tokio::time::interval(PIN_POLL);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = tick.tick() => {}
            _ = hub.shutdown.cancelled() => return,
        }
        for upstream in hub.upstreams().iter() {
            let server = &upstream.config.name;
            let (listed, up) = upstream.tools();
            if !up || upstream.waiting().is_empty() {
                continue;
            }
            let stamp = pins.stamp(server);
            if stamp == *util::lock(&upstream.pin_stamp) {
                continue;
            }
            let before = upstream.waiting();
            match review(&hub, upstream, listed).await {
                Ok((_, review)) => {
                    let after: Vec<&String> = review.waiting.keys().collect();
                    if after != before.keys().collect::<Vec<_>>() {
                        tracing::info!(server = %server, waiting = after.len(), "tool approvals taken");
                        upstream.set_review(review, &hub);
                        hub.change();
                    } else {
                        upstream.set_review(review, &hub);
                    }
                }
                Err(e) => {
                    tracing::error!(server = %server, error = %e, "the pins could not be read again; what waits still waits")
                }
            }
        }
    }
}
