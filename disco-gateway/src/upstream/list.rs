//! An upstream's tools read: every `tools/list` page, each entry admitted on its own
//! (admit.rs), the listing bounded in pages, cursors and entries.

use disco_runtime::rmcp;
use rmcp::model::{ClientRequest, ListToolsRequest, PaginatedRequestParams};
use rmcp::{Peer, RoleClient};

use crate::admit::{self, Admitted};

/// The most `tools/list` pages one listing reads. An upstream whose `nextCursor` never ends
/// once grew the gateway by gigabytes within the start-up timeout.
pub const MAX_LIST_PAGES: usize = 100;

/// Lists every tool page and admits each entry on its own (admit.rs): an unusable entry costs
/// its own tool, never the listing. The listing itself is bounded: at most
/// [`MAX_LIST_PAGES`] pages, no cursor twice, at most `max_tools` entries; past a bound the
/// listing fails with an error naming it, and the upstream is refused (and retried with the
/// backoff of a failed start) while the others serve.
pub(super) async fn list_tools(
    peer: &Peer<RoleClient>,
    max_tools: usize,
) -> Result<Admitted, String> {
    let mut admitted = Admitted::default();
    let mut cursor: Option<String> = None;
    // Hashes, not the cursors: a cursor may be megabytes long.
    let mut cursors = std::collections::HashSet::new();
    let mut index = 0;
    for page in 1.. {
        if page > MAX_LIST_PAGES {
            return Err(format!(
                "tools/list: refused after {MAX_LIST_PAGES} pages, the most one listing reads \
                 (its nextCursor never ended)"
            ));
        }
        let params = cursor
            .take()
            .map(|c| PaginatedRequestParams::default().with_cursor(Some(c)));
        let request = ClientRequest::ListToolsRequest(ListToolsRequest {
            method: Default::default(),
            params,
            extensions: Default::default(),
        });
        let result = peer
            .send_request(request)
            .await
            .map_err(|e| format!("tools/list failed: {e}"))?;
        let (entries, next) = admit::page(result)?;
        if index + entries.len() > max_tools {
            return Err(format!(
                "tools/list: refused, it lists more than {max_tools} tools, the most one server \
                 may list (disco.maxTools)"
            ));
        }
        for entry in entries {
            admitted.entry(index, entry);
            index += 1;
        }
        match next {
            Some(next) => {
                if !cursors.insert(hash(&next)) {
                    return Err(format!(
                        "tools/list: refused, it gave the cursor `{}` twice (page {page})",
                        crate::text::clip(&crate::text::shown(&next), 40)
                    ));
                }
                cursor = Some(next);
            }
            None => break,
        }
    }
    admitted.drop_duplicates();
    // Kept for as long as the upstream serves: not the room the pages grew it to.
    admitted.tools.shrink_to_fit();
    Ok(admitted)
}

fn hash(text: &str) -> u64 {
    use std::hash::Hasher;
    let mut h = std::collections::hash_map::DefaultHasher::new();
    h.write(text.as_bytes());
    h.finish()
}
