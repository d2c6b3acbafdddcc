//! What a tool handler receives, and the extractors that read from it: `State<T>` and
//! `Context`.

// MCP logging is deprecated by SEP-2577 but still part of every protocol version clients speak.
#![allow(deprecated)]

use std::any::{Any, TypeId};
use std::collections::HashMap;
use std::ops::Deref;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken,
};
use rmcp::{Peer, RoleServer};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use tokio_util::sync::CancellationToken;

/// Application state registered on the server, shared by every call.
#[derive(Default, Clone)]
pub struct StateMap {
    values: HashMap<TypeId, (Arc<dyn Any + Send + Sync>, &'static str)>,
}

impl StateMap {
    /// Registers `value` as the state of type `T`, replacing an earlier value of that type.
    pub fn insert<T: Send + Sync + 'static>(&mut self, value: T) {
        self.insert_arc(Arc::new(value));
    }
    /// Registers a value already behind an `Arc`: tools share it with whoever else holds it.
    pub fn insert_arc<T: Send + Sync + 'static>(&mut self, value: Arc<T>) {
        self.values
            .insert(TypeId::of::<T>(), (value, std::any::type_name::<T>()));
    }
    /// The names of the registered types, sorted: what a missing state's error lists.
    pub fn type_names(&self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.values.values().map(|(_, name)| *name).collect();
        names.sort_unstable();
        names
    }
    /// The state of type `T`, when one is registered.
    pub fn get<T: Send + Sync + 'static>(&self) -> Option<Arc<T>> {
        let (value, _) = self.values.get(&TypeId::of::<T>())?;
        value.clone().downcast::<T>().ok()
    }
}

/// `State<T>`: a parameter that receives the application state of type `T` registered with
/// `Server::with_state` (or `Catalog::with_state`). It is not part of the tool's schema.
pub struct State<T>(pub Arc<T>);

impl<T> Deref for State<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<T> Clone for State<T> {
    fn clone(&self) -> Self {
        State(self.0.clone())
    }
}

/// Who is calling: the identity a transport established (for example from an HTTP bearer
/// token), used for visibility decisions and available to tools.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Caller {
    id: Option<String>,
}

impl Caller {
    /// A caller nobody authenticated (stdio, or HTTP without a token check).
    pub fn anonymous() -> Self {
        Caller { id: None }
    }
    /// A caller with this identity (a token's subject, a user id): what visibility rules and
    /// scoped providers key on.
    pub fn new(id: impl Into<String>) -> Self {
        Caller {
            id: Some(id.into()),
        }
    }
    /// The identity; `None` for an anonymous caller.
    pub fn id(&self) -> Option<&str> {
        self.id.as_deref()
    }
}

/// The minimum log level a client asked for with `logging/setLevel`, shared by the calls of one
/// session. Until a client sets one, every level is sent.
#[derive(Debug, Default)]
pub struct LogLevelFilter(AtomicU8);

fn level_rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

impl LogLevelFilter {
    /// From now on, only messages at `level` or more severe are sent.
    pub fn set(&self, level: LoggingLevel) {
        self.0.store(level_rank(level), Ordering::Relaxed);
    }
    /// Whether a message at `level` is sent.
    pub fn allows(&self, level: LoggingLevel) -> bool {
        level_rank(level) >= self.0.load(Ordering::Relaxed)
    }
}

/// `Context`: a parameter that gives a tool its caller, cancellation, progress notifications
/// and log messages. It is not part of the tool's schema. Outside a server (in tests), progress
/// and logging do nothing.
#[derive(Clone, Default)]
pub struct Context {
    inner: Arc<ContextInner>,
    /// Set by the catalog when it runs a tool: shared with the catalog's entry, so a call
    /// allocates nothing for it.
    tool: Option<Arc<str>>,
}

#[derive(Default)]
struct ContextInner {
    caller: Caller,
    cancel: CancellationToken,
    peer: Option<Peer<RoleServer>>,
    progress_token: Option<ProgressToken>,
    log_filter: Option<Arc<LogLevelFilter>>,
    session: Option<u64>,
}

/// Builds a [`Context`]; the server fills in the transport parts.
#[derive(Default)]
pub struct ContextBuilder {
    inner: ContextInner,
}

impl ContextBuilder {
    /// Who calls (default: anonymous).
    pub fn caller(mut self, caller: Caller) -> Self {
        self.inner.caller = caller;
        self
    }
    /// The token that cancels the call: the client's cancellation, or a test's (default: a
    /// token nobody cancels). A timeout cancels it too.
    pub fn cancellation(mut self, token: CancellationToken) -> Self {
        self.inner.cancel = token;
        self
    }
    /// The client session that progress and log notifications go to (default: none, and
    /// they do nothing).
    pub fn peer(mut self, peer: Peer<RoleServer>) -> Self {
        self.inner.peer = Some(peer);
        self
    }
    /// The request's `_meta.progressToken`; without one, [`Context::progress`] sends nothing.
    pub fn progress_token(mut self, token: Option<ProgressToken>) -> Self {
        self.inner.progress_token = token;
        self
    }
    /// The session's log level (default: none, so every level is sent).
    pub fn log_filter(mut self, filter: Arc<LogLevelFilter>) -> Self {
        self.inner.log_filter = Some(filter);
        self
    }
    /// The transport session the call came in on (default: none). Calls of one session are
    /// one sequence to a discovery recorder; without a session none is recorded as such.
    pub fn session(mut self, session: Option<u64>) -> Self {
        self.inner.session = session;
        self
    }
    /// The context.
    pub fn build(self) -> Context {
        Context {
            inner: Arc::new(self.inner),
            tool: None,
        }
    }
}

impl Context {
    /// A context with some parts set: the caller and cancellation for tests, every part for
    /// a transport of your own.
    pub fn builder() -> ContextBuilder {
        ContextBuilder::default()
    }
    /// A context for `caller` with nothing else: what tests use.
    pub fn for_caller(caller: Caller) -> Self {
        Context::builder().caller(caller).build()
    }
    /// Who calls.
    pub fn caller(&self) -> &Caller {
        &self.inner.caller
    }
    /// The transport session the call came in on, if any.
    pub fn session(&self) -> Option<u64> {
        self.inner.session
    }
    /// The name of the tool being called (after any name correction).
    pub fn tool_name(&self) -> &str {
        self.tool.as_deref().unwrap_or_default()
    }
    pub(crate) fn with_tool(&self, tool: &Arc<str>) -> Context {
        Context {
            inner: self.inner.clone(),
            tool: Some(tool.clone()),
        }
    }
    /// Whether the call was cancelled or timed out: for a long loop to check between steps.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }
    /// Resolves when the client cancels the call (`notifications/cancelled`) or it times out.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await
    }
    /// The call's cancellation token, for work the tool hands to other tasks.
    pub fn cancellation_token(&self) -> CancellationToken {
        self.inner.cancel.clone()
    }
    /// The client's peer, for server-to-client requests such as sampling and elicitation.
    /// `None` outside a server.
    pub fn peer(&self) -> Option<&Peer<RoleServer>> {
        self.inner.peer.as_ref()
    }
    /// Whether the client asked for progress notifications on this call.
    pub fn wants_progress(&self) -> bool {
        self.inner.peer.is_some() && self.inner.progress_token.is_some()
    }
    /// Sends `notifications/progress` when the request carried a progress token; otherwise
    /// does nothing. A transport failure is returned, not raised: a tool may ignore it.
    pub async fn progress(
        &self,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Result<(), rmcp::service::ServiceError> {
        let (Some(peer), Some(token)) = (&self.inner.peer, &self.inner.progress_token) else {
            return Ok(());
        };
        let mut param = ProgressNotificationParam::new(token.clone(), progress);
        param.total = total;
        param.message = message;
        peer.notify_progress(param).await
    }
    /// Sends `notifications/message` at `level`, when the client's `logging/setLevel` allows it.
    #[allow(deprecated)]
    pub async fn log(
        &self,
        level: LoggingLevel,
        data: impl Into<Value>,
    ) -> Result<(), rmcp::service::ServiceError> {
        let Some(peer) = &self.inner.peer else {
            return Ok(());
        };
        if let Some(filter) = &self.inner.log_filter {
            if !filter.allows(level) {
                return Ok(());
            }
        }
        let mut param = LoggingMessageNotificationParam::new(level, data.into());
        if let Some(tool) = self.tool.as_deref().filter(|t| !t.is_empty()) {
            param.logger = Some(tool.to_string());
        }
        peer.notify_logging_message(param).await
    }
}

/// The input of a tool handler: its arguments (already repaired and validated), its context
/// and the application state.
pub struct Invocation {
    /// The JSON arguments; the generated code takes each parameter out of them.
    pub arguments: Map<String, Value>,
    /// The call's context, for the `Context` extractor.
    pub context: Context,
    /// The state registered on the server, for `State<T>` extractors.
    pub state: Arc<StateMap>,
}

/// Only the extractors below implement [`FromInvocation`]: `#[mcp_tool]` recognises them by
/// name (`State<T>`, `Context`), so an implementation for another type would never be used.
mod sealed {
    pub trait Sealed {}
    impl<T> Sealed for super::State<T> {}
    impl Sealed for super::Context {}
}

/// A parameter type that is filled from the invocation rather than from the JSON arguments:
/// [`State<T>`] and [`Context`]. Sealed: `#[mcp_tool]` recognises extractors by their names,
/// so other types cannot be extractors.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not an extractor",
    note = "tool parameters named `State<T>` or `Context` are extractors: use `disco_runtime::State` and `disco_runtime::Context`"
)]
pub trait FromInvocation: Sized + sealed::Sealed {
    /// The value for this call; an `Err` is the server's fault, not the model's, and the
    /// call's error result says so.
    fn from_invocation(inv: &Invocation) -> Result<Self, String>;

    /// The state type this extractor needs and `state` lacks (`None`: nothing is missing).
    /// Checked when a server starts, so that a missing `.with_state(...)` stops the start
    /// instead of failing the first call.
    fn missing_state(state: &StateMap) -> Option<&'static str> {
        let _ = state;
        None
    }
}

impl<T: Send + Sync + 'static> FromInvocation for State<T> {
    fn from_invocation(inv: &Invocation) -> Result<Self, String> {
        inv.state.get::<T>().map(State).ok_or_else(|| {
            format!(
                "the server has no state of type `{}`: register it with `.with_state(...)`",
                std::any::type_name::<T>()
            )
        })
    }

    fn missing_state(state: &StateMap) -> Option<&'static str> {
        match state.get::<T>() {
            Some(_) => None,
            None => Some(std::any::type_name::<T>()),
        }
    }
}

impl FromInvocation for Context {
    fn from_invocation(inv: &Invocation) -> Result<Self, String> {
        Ok(inv.context.clone())
    }
}

/// Collects every problem met while reading a call's parameters, so that one error result
/// names them all. Used by the code `#[mcp_tool]` generates; not for direct use.
#[derive(Default)]
pub struct ArgErrors {
    problems: Vec<String>,
    server_side: bool,
}

impl ArgErrors {
    /// No problems yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// A JSON parameter without a default. Absent and `null` mean "not given": fine for an
    /// `Option`, an error for anything else.
    pub fn take<T: DeserializeOwned>(&mut self, inv: &mut Invocation, name: &str) -> Option<T> {
        let value = inv.arguments.remove(name).unwrap_or(Value::Null);
        let was_null = value.is_null();
        match serde_json::from_value::<T>(value) {
            Ok(v) => Some(v),
            Err(_) if was_null => {
                self.problems
                    .push(format!("missing required parameter `{name}`"));
                None
            }
            Err(err) => {
                self.problems.push(format!("parameter `{name}`: {err}"));
                None
            }
        }
    }

    /// A flattened parameter (`#[param(flatten)]`): its struct read, as serde's
    /// `#[serde(flatten)]` reads one, from every key the other parameters left (so it is taken
    /// after them).
    pub fn take_flat<T: DeserializeOwned>(
        &mut self,
        inv: &mut Invocation,
        name: &str,
    ) -> Option<T> {
        let rest = std::mem::take(&mut inv.arguments);
        match serde_json::from_value::<T>(Value::Object(rest)) {
            Ok(v) => Some(v),
            Err(err) => {
                self.problems
                    .push(format!("the fields of parameter `{name}`: {err}"));
                None
            }
        }
    }

    /// A JSON parameter with a default, used when it is absent or `null`.
    pub fn take_or<T: DeserializeOwned>(
        &mut self,
        inv: &mut Invocation,
        name: &str,
        default: impl FnOnce() -> Result<T, String>,
    ) -> Option<T> {
        match inv.arguments.remove(name) {
            Some(value) if !value.is_null() => match serde_json::from_value::<T>(value) {
                Ok(v) => Some(v),
                Err(err) => {
                    self.problems.push(format!("parameter `{name}`: {err}"));
                    None
                }
            },
            _ => match default() {
                Ok(v) => Some(v),
                Err(err) => {
                    self.server_side = true;
                    self.problems.push(format!(
                        "the default of parameter `{name}` is invalid: {err}"
                    ));
                    None
                }
            },
        }
    }

    /// An extractor parameter.
    pub fn extract<T: FromInvocation>(&mut self, inv: &Invocation) -> Option<T> {
        match T::from_invocation(inv) {
            Ok(v) => Some(v),
            Err(err) => {
                self.server_side = true;
                self.problems.push(err);
                None
            }
        }
    }

    /// The error result for the problems collected.
    pub fn into_result(self) -> rmcp::model::CallToolResult {
        let text = if self.server_side {
            format!(
                "The server cannot run this tool: {}",
                self.problems.join("; ")
            )
        } else {
            format!("Invalid arguments: {}", self.problems.join("; "))
        };
        rmcp::model::CallToolResult::error(vec![rmcp::model::ContentBlock::text(text)])
    }
}
