//! What the tools of a test note as they run (`started:TAG`, `cancelled:TAG`, ...), and a wait
//! for a note: one record for the whole test binary, so tags are unique across modules.

use std::sync::Mutex;
use std::time::Duration;

use disco_runtime::Context;
use tokio::sync::Notify;

/// How long [`noted`] waits.
const WAIT: Duration = Duration::from_secs(20);

fn seen() -> &'static (Mutex<Vec<String>>, Notify) {
    static SEEN: std::sync::OnceLock<(Mutex<Vec<String>>, Notify)> = std::sync::OnceLock::new();
    SEEN.get_or_init(Default::default)
}

/// Records `event`.
pub fn note(event: String) {
    let (events, changed) = seen();
    events.lock().unwrap().push(event);
    changed.notify_waiters();
}

/// Waits until a tool noted `event`.
pub async fn noted(event: &str) {
    let (events, changed) = seen();
    tokio::time::timeout(WAIT, async {
        loop {
            let notified = changed.notified();
            if events.lock().unwrap().iter().any(|e| e == event) {
                return;
            }
            notified.await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("no tool noted `{event}`"));
}

/// Notes `started:TAG` and waits for the call's cancellation. When the call ends (the tool
/// runs on, or is dropped, once its call is cancelled), notes `cancelled:TAG` if its token was
/// cancelled by then, else `ended:TAG`. The body of the tests' `until_cancelled` tools.
pub async fn until_cancelled(ctx: Context, tag: String) -> String {
    struct Watch<F: Fn() -> bool>(F, String);
    impl<F: Fn() -> bool> Drop for Watch<F> {
        fn drop(&mut self) {
            let how = if (self.0)() { "cancelled" } else { "ended" };
            note(format!("{how}:{}", self.1));
        }
    }
    note(format!("started:{tag}"));
    let token = ctx.cancellation_token();
    let _watch = Watch(move || token.is_cancelled(), tag);
    ctx.cancelled().await;
    "cancelled".to_owned()
}
