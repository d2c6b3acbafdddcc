//! One tool: its static description ([`ToolSpec`]), the extractors a handler may take
//! ([`State`], [`Context`]) and what it may return ([`IntoToolResult`], [`Json`],
//! [`ToolError`]).

pub(crate) mod budget;
pub(crate) mod built;
pub(crate) mod group;
mod invocation;
pub mod provider;
pub(crate) mod result;
pub mod schema;
mod spec;

pub use invocation::{
    ArgErrors, Caller, Context, ContextBuilder, FromInvocation, Invocation, LogLevelFilter, State,
    StateMap,
};
pub use result::{IntoToolResult, Json, ToolError};
pub use schema::{BuiltSchema, JsonObject, SchemaMode};
pub use spec::{
    registered, Annotations, BoxFuture, Handler, Origin, Package, ParamSpec, ToolRegistration,
    ToolSpec,
};
pub use tokio_util::sync::CancellationToken;
