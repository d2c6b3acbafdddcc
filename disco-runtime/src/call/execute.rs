use std::panic::AssertUnwindSafe;

use futures_util::FutureExt as _;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use crate::catalog::stats::Event;
use crate::catalog::{Catalog, CatalogTool};
use crate::tool::built::ToolHandler;
use crate::tool::result::error_result;
use crate::tool::{Context, Invocation};

/// Runs a tool's handler with arguments already prepared: panics, timeouts and cancellation
/// become error results, and structured output is checked against the output schema.
pub(super) async fn execute(
    catalog: &Catalog,
    tool: &CatalogTool,
    arguments: Map<String, Value>,
    ctx: &Context,
) -> CallToolResult {
    let stats = &catalog.config.stats;
    let ctx = ctx.with_tool(&tool.shared_name);
    let cancel = ctx.cancellation_token();
    // Async tools run inline in the request's own task (rmcp gives every request one):
    // dropping the future is the abort, and `catch_unwind` contains a panic, without the
    // cost of a second task per call. Sync tools go to the blocking pool, off the async
    // workers.
    type Run =
        std::pin::Pin<Box<dyn std::future::Future<Output = Result<CallToolResult, Panic>> + Send>>;
    let invocation = |arguments, context| Invocation {
        arguments,
        context,
        state: catalog.config.state.clone(),
    };
    let run: Run = match &tool.handler {
        ToolHandler::Static(crate::tool::Handler::Async(f)) => {
            let f = *f;
            let inv = invocation(arguments, ctx);
            match std::panic::catch_unwind(AssertUnwindSafe(move || f(inv))) {
                Ok(fut) => Box::pin(AssertUnwindSafe(fut).catch_unwind()),
                Err(panic) => Box::pin(std::future::ready(Err(panic))),
            }
        }
        ToolHandler::Static(crate::tool::Handler::Sync(f))
            if tool.timeout.is_none() && multi_thread_runtime() =>
        {
            // Without a timeout to honour, the worker hands its other tasks to its peers
            // and runs the tool itself: no thread hop there and back.
            let f = *f;
            let inv = invocation(arguments, ctx);
            let done = tokio::task::block_in_place(move || {
                std::panic::catch_unwind(AssertUnwindSafe(move || f(inv)))
            });
            Box::pin(std::future::ready(done))
        }
        ToolHandler::Static(crate::tool::Handler::Sync(f)) => {
            let f = *f;
            let inv = invocation(arguments, ctx);
            let task = tokio::task::spawn_blocking(move || f(inv));
            Box::pin(async move {
                task.await.map_err(|e| match e.try_into_panic() {
                    Ok(panic) => panic,
                    Err(_) => Box::new("the blocking task was cancelled") as Panic,
                })
            })
        }
        ToolHandler::Provider(p) => {
            let fut = p.call(&tool.name, arguments, ctx);
            Box::pin(AssertUnwindSafe(fut).catch_unwind())
        }
    };
    let timeout = async {
        match tool.timeout {
            Some(t) => tokio::time::sleep(t).await,
            None => std::future::pending().await,
        }
    };
    let outcome = tokio::select! {
        done = run => done,
        _ = cancel.cancelled() => {
            stats.count(Event::Cancelled);
            return error_result(format!("Tool `{}` was cancelled.", tool.name));
        }
        _ = timeout => {
            // The tool's context is cancelled too, for work it started elsewhere.
            cancel.cancel();
            stats.count(Event::Timeout);
            let ms = tool.timeout.map(|t| t.as_millis()).unwrap_or_default();
            tracing::warn!(tool = %tool.name, timeout_ms = %ms, "tool timed out");
            return error_result(format!(
                "Tool `{}` did not finish within {ms} ms and was stopped.",
                tool.name
            ));
        }
    };
    let mut result = match outcome {
        Ok(result) => result,
        Err(panic) => {
            stats.count(Event::Panic);
            let message = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a non-string panic payload".to_string());
            tracing::error!(tool = %tool.name, panic = %message, "tool panicked");
            return error_result(format!(
                "Tool `{}` failed with an internal error.",
                tool.name
            ));
        }
    };
    super::output::check_output(tool, &mut result);
    if result.is_error == Some(true) {
        stats.count(Event::ToolError);
    }
    result
}

fn multi_thread_runtime() -> bool {
    tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// What a panicking tool left behind.
type Panic = Box<dyn std::any::Any + Send + 'static>;
