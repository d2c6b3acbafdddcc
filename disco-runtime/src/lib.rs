//! # disco
//!
//! Declare MCP tools as plain Rust functions that language models find and call reliably.
//! The attribute reference (every key, parameters, defaults, return types) is on
//! [`macro@mcp_tool`]; this page is the guide.
//!
//! ## A tool and a server
//!
//! The README's quickstart, which is this crate's `examples/quickstart.rs` (`cargo run -p
//! disco-runtime --example quickstart`): two tools that share a state, one of them with an
//! alias for its name and for each parameter, served over stdio.
//!
#![doc = concat!("```no_run\n", include_str!("../examples/quickstart.rs"), "```")]
//!
//! Every `#[mcp_tool]` in the binary (including those in library crates it links) is collected
//! into the [`Catalog`] through `inventory`: there is no registration list. A crate whose tools
//! must also be seen by an example or a test (the catalog docs and lint, `cargo test`) declares
//! them in its library (`src/lib.rs`), since no other binary can link a `src/main.rs`.
//!
//! Run from a terminal, a stdio server logs to stderr that it waits for a client, and stops
//! cleanly when stdin closes before a client spoke; an MCP client starts it itself (the guide
//! in the repository's `docs/guide`, "Serving and HTTP security", shows Claude Desktop, Claude
//! Code, Cursor and VS Code).
//! [`Server::serve_http`] serves Streamable HTTP at `/mcp` on the address given.
//!
//! ## State
//!
//! A `State<T>` parameter receives the value registered with [`Server::with_state`], shared by
//! every call. For state that tools change, register a type with interior mutability. A
//! server refuses to start when a tool takes a state that was not registered; test it with
//! [`Server::check`]:
//!
//! ```
//! use std::sync::Mutex;
//! use disco_runtime::{mcp_tool, Server, State};
//!
//! #[derive(Default)]
//! struct Counter {
//!     value: Mutex<u64>,
//! }
//!
//! /// Add one to the counter and return its new value. Nothing else is changed.
//! #[mcp_tool(destructive = false)]
//! fn increment(counter: State<Counter>) -> String {
//!     let mut n = counter.value.lock().unwrap_or_else(|e| e.into_inner());
//!     *n += 1;
//!     n.to_string()
//! }
//!
//! fn server() -> Server {
//!     Server::from_inventory().with_state(Counter::default())
//! }
//!
//! # fn main() {
//! server().check().unwrap(); // in a #[test]
//! assert!(Server::from_inventory().check().is_err()); // no Counter
//! # }
//! ```
//!
//! ## Context: progress, logging, cancellation
//!
//! ```
//! use std::time::Duration;
//! use disco_runtime::{mcp_tool, Context, LoggingLevel, ToolError};
//!
//! /// Import the rows of a file into the database and return how many were imported.
//! ///
//! /// # Arguments
//! /// * `rows` - how many rows the file has
//! #[mcp_tool(destructive = false, timeout_ms = 60_000)]
//! async fn import_rows(ctx: Context, rows: u32) -> Result<String, ToolError> {
//!     for done in 0..rows {
//!         if ctx.is_cancelled() {
//!             return Err(ToolError::new(format!("cancelled after {done} rows")));
//!         }
//!         // Sent only when the client asked for progress on this call; an error here means
//!         // the client is gone, which the tool may ignore.
//!         let _ = ctx.progress(done as f64, Some(rows as f64), None).await;
//!         tokio::time::sleep(Duration::from_millis(1)).await;
//!     }
//!     let _ = ctx.log(LoggingLevel::Info, format!("imported {rows} rows")).await;
//!     Ok(format!("{rows} rows imported"))
//! }
//! # fn main() {}
//! ```
//!
//! `ctx.cancelled().await` resolves when the client cancels the call or it times out, for a
//! `tokio::select!` against the work; `ctx.caller()` is who calls (an HTTP bearer token's
//! identity); `ctx.peer()` reaches the client for sampling and elicitation.
//!
//! ## Catching mistakes in `cargo test`
//!
//! [`check()`] checks names, aliases, defaults and schemas across every crate the test binary
//! links; [`Server::check`] adds the state the server registers. The server's errors are a
//! plain [`server::Error`], which `?` turns into `Box<dyn std::error::Error>`.
//!
//! ## Modules
//!
//! - [`catalog`]: the tools a server offers, their resolution and calls, [`catalog::docs`] and
//!   [`catalog::lint`].
//! - [`server`]: the MCP server over stdio and Streamable HTTP.
//! - [`tool`]: what a tool is made of: its spec, extractors and results.
//! - [`Embedded`] (`Server::wrap(handler)`): disco's tools inside an rmcp server of your own,
//!   beside its prompts and resources; [`Tools`] to forward the tools hooks by hand.
//!
//! The engines (`resolve`: name correction and argument repair; `search`: the ranking) are
//! public for the evaluation example, the benchmarks and the fuzz targets, and hidden from
//! these docs: their types change with the algorithms, in any release. What a server needs of
//! them is re-exported here ([`NameRule`], [`NamePolicy`], [`ArgPolicy`], [`SearchOptions`]).
//! The layers and the direction of their dependencies are in ARCHITECTURE.md.

#![warn(missing_docs)]
#![deny(rustdoc::broken_intra_doc_links)]

mod call;
pub mod catalog;
pub mod learn;
#[doc(hidden)]
pub mod resolve;
#[doc(hidden)]
pub mod search;
pub mod server;
pub(crate) mod text;
pub mod tool;
#[doc(hidden)]
pub mod util;

pub use call::CallError;
pub use catalog::{
    Catalog, CatalogBuilder, CatalogError, CatalogProblem, CatalogTool, DynamicTool, Exposure,
    JsonCatalogProvider, NameClaim, NamePolicy, NameResolution, NameRule, ParamInfo,
    ScopedProvider, SearchOptions, StatsSnapshot, StepHits, ToolProvider, View, Visibility,
};
pub use disco_macros::mcp_tool;
/// How far argument repair goes ([`CatalogBuilder::arg_repair`], [`Server::arg_repair`]): the
/// same `Strict` and `Safe` as [`NamePolicy`] for names.
pub use resolve::args::Repair as ArgPolicy;
/// The official MCP SDK this crate is built on, for its protocol types (`rmcp::model::Tool`, ...).
#[doc(no_inline)]
pub use rmcp;
#[allow(deprecated)]
pub use rmcp::model::LoggingLevel;
pub use rmcp::model::{CallToolResult, ContentBlock as Content};
pub use server::{
    BearerTokens, Embedded, HttpOptions, McpHandler, RateLimit, Resources, Server, ServerHandle,
    TokenCheck, Tools,
};
pub use tool::{
    Annotations, Caller, Context, IntoToolResult, Json, Package, SchemaMode, State, ToolError,
    ToolSpec,
};

/// Checks every tool in the binary (names, aliases, defaults, schemas) and returns the
/// problems. Call it from a test so `cargo test` catches conflicts before a server starts:
///
/// ```
/// // in a `#[test] fn tools_are_consistent()`
/// disco_runtime::check().unwrap();
/// ```
///
/// It needs no application state: whether every `State<T>` is registered is checked by
/// [`Server::check`] on the server your `main` builds, and by every `serve_*`.
pub fn check() -> Result<(), CatalogError> {
    Catalog::from_inventory().map(|_| ())
}

/// What the code generated by `#[mcp_tool]` uses. Not a public API: it may change in any
/// release.
///
/// Its name carries the crate's version, and every release renames it: `disco-macros` names
/// the module of its own version (`runtime()` in its `expand.rs`), so macros and a runtime of
/// two versions fail at the first tool instead of compiling against items that changed. The
/// workspace gives both crates one version, and `disco-runtime` requires exactly its own
/// `disco-macros`; the test `private_module_is_named_after_the_version` holds the name to the
/// version.
#[doc(hidden)]
pub mod __private_v0_1_0 {
    pub use inventory;
    pub use serde_json;

    pub use rmcp::model::CallToolResult;
    pub use schemars::{Schema, SchemaGenerator};

    pub use crate::tool::{
        Annotations, ArgErrors, BoxFuture, Handler, Invocation, Origin, Package, ParamSpec,
        StateMap, ToolRegistration, ToolSpec,
    };
    use std::marker::PhantomData;

    use serde::de::DeserializeOwned;

    use crate::tool::{FromInvocation, IntoToolResult};

    /// A parameter type must be deserializable from JSON and describe itself as JSON Schema.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool parameter: it does not implement `serde::Deserialize`",
        label = "this parameter's type must implement `serde::Deserialize` (owned, no borrowed data)",
        note = "add `#[derive(serde::Deserialize)]` to the type, or use a type that has it (`String` rather than `&str`)"
    )]
    pub trait ArgDeserialize {}
    impl<T: serde::de::DeserializeOwned> ArgDeserialize for T {}

    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be a tool parameter: it does not implement `schemars::JsonSchema`",
        label = "this parameter's type must implement `schemars::JsonSchema`",
        note = "add `#[derive(schemars::JsonSchema)]` to the type, so the tool's input schema can describe it"
    )]
    pub trait ArgJsonSchema {}
    impl<T: schemars::JsonSchema> ArgJsonSchema for T {}

    /// The type inside a returned `Json<T>` is sent as structured content with its schema.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be returned in `Json<{Self}>`: it does not implement `serde::Serialize`",
        label = "the type inside `Json<...>` must implement `serde::Serialize`",
        note = "add `#[derive(serde::Serialize)]` to the type: its value is the tool's structured content"
    )]
    pub trait OutputSerialize {}
    impl<T: serde::Serialize> OutputSerialize for T {}

    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be returned in `Json<{Self}>`: it does not implement `schemars::JsonSchema`",
        label = "the type inside `Json<...>` must implement `schemars::JsonSchema`",
        note = "add `#[derive(schemars::JsonSchema)]` to the type, so the tool's output schema can describe it"
    )]
    pub trait OutputJsonSchema {}
    impl<T: schemars::JsonSchema> OutputJsonSchema for T {}

    pub fn assert_argument<T: ArgDeserialize + ArgJsonSchema>() {}
    pub fn assert_json_output<T: OutputSerialize + OutputJsonSchema>() {}
    pub fn assert_extractor<T: FromInvocation>() {}
    pub fn assert_output<T: IntoToolResult>() {}

    /// A literal default (`default = 5`) must fit the parameter's type.
    pub fn default_from_json<T: serde::de::DeserializeOwned>(
        value: serde_json::Value,
    ) -> Result<T, String> {
        serde_json::from_value(value.clone()).map_err(|e| {
            format!(
                "`{value}` does not fit `{}`: {e}",
                std::any::type_name::<T>()
            )
        })
    }

    // One error per mistake. The spanned `assert_*` calls above are the only place where a
    // parameter, extractor or return type is required to have its trait. Everywhere else the
    // generated code reaches the trait through `(&&Probe::<T>::new()).__disco_*(...)`: autoref
    // specialisation picks the `Via*` impl when `T` has the trait and the `*Fallback` impl
    // otherwise. A fallback never runs, because the assertion has already failed the compile;
    // it exists only so that a missing `Deserialize` is reported once, at the parameter's type,
    // instead of once more for every use inside the generated handler.

    /// The type-level probe of the autoref specialisation above.
    pub struct Probe<T>(PhantomData<fn() -> T>);
    impl<T> Probe<T> {
        #[allow(clippy::new_without_default)]
        pub const fn new() -> Self {
            Probe(PhantomData)
        }
    }

    const UNREACHABLE: &str = "disco: a tool whose types fail the macro's assertions was run";

    pub trait ViaArgument<T> {
        fn __disco_take(
            &self,
            errors: &mut ArgErrors,
            inv: &mut Invocation,
            name: &str,
        ) -> Option<T>;
        fn __disco_take_or(
            &self,
            errors: &mut ArgErrors,
            inv: &mut Invocation,
            name: &str,
            default: fn() -> Result<T, String>,
        ) -> Option<T>;
        fn __disco_take_flat(
            &self,
            errors: &mut ArgErrors,
            inv: &mut Invocation,
            name: &str,
        ) -> Option<T>;
        fn __disco_from_json(&self, value: serde_json::Value) -> Result<T, String>;
    }
    impl<T: DeserializeOwned> ViaArgument<T> for &Probe<T> {
        fn __disco_take(
            &self,
            errors: &mut ArgErrors,
            inv: &mut Invocation,
            name: &str,
        ) -> Option<T> {
            errors.take::<T>(inv, name)
        }
        fn __disco_take_or(
            &self,
            errors: &mut ArgErrors,
            inv: &mut Invocation,
            name: &str,
            default: fn() -> Result<T, String>,
        ) -> Option<T> {
            errors.take_or::<T>(inv, name, default)
        }
        fn __disco_take_flat(
            &self,
            errors: &mut ArgErrors,
            inv: &mut Invocation,
            name: &str,
        ) -> Option<T> {
            errors.take_flat::<T>(inv, name)
        }
        fn __disco_from_json(&self, value: serde_json::Value) -> Result<T, String> {
            default_from_json::<T>(value)
        }
    }
    pub trait ArgumentFallback<T> {
        fn __disco_take(&self, _: &mut ArgErrors, _: &mut Invocation, _: &str) -> Option<T> {
            None
        }
        fn __disco_take_or(
            &self,
            _: &mut ArgErrors,
            _: &mut Invocation,
            _: &str,
            _: fn() -> Result<T, String>,
        ) -> Option<T> {
            None
        }
        fn __disco_take_flat(&self, _: &mut ArgErrors, _: &mut Invocation, _: &str) -> Option<T> {
            None
        }
        fn __disco_from_json(&self, _: serde_json::Value) -> Result<T, String> {
            Err(UNREACHABLE.to_string())
        }
    }
    impl<T> ArgumentFallback<T> for Probe<T> {}

    pub trait ViaSchema {
        fn __disco_schema(&self, gen: &mut SchemaGenerator) -> Schema;
    }
    impl<T: schemars::JsonSchema> ViaSchema for &Probe<T> {
        fn __disco_schema(&self, gen: &mut SchemaGenerator) -> Schema {
            crate::tool::schema::schema_of::<T>(gen)
        }
    }
    pub trait SchemaFallback {
        fn __disco_schema(&self, _: &mut SchemaGenerator) -> Schema {
            Schema::default()
        }
    }
    impl<T> SchemaFallback for Probe<T> {}

    pub trait ViaExtractor<T> {
        fn __disco_extract(&self, errors: &mut ArgErrors, inv: &Invocation) -> Option<T>;
        fn __disco_missing_state(&self, state: &StateMap) -> Option<&'static str>;
    }
    impl<T: FromInvocation> ViaExtractor<T> for &Probe<T> {
        fn __disco_extract(&self, errors: &mut ArgErrors, inv: &Invocation) -> Option<T> {
            errors.extract::<T>(inv)
        }
        fn __disco_missing_state(&self, state: &StateMap) -> Option<&'static str> {
            T::missing_state(state)
        }
    }
    pub trait ExtractorFallback<T> {
        fn __disco_extract(&self, _: &mut ArgErrors, _: &Invocation) -> Option<T> {
            None
        }
        fn __disco_missing_state(&self, _: &StateMap) -> Option<&'static str> {
            None
        }
    }
    impl<T> ExtractorFallback<T> for Probe<T> {}

    pub trait ViaOutput<T> {
        fn __disco_into_result(&self, value: T) -> CallToolResult;
        fn __disco_output_schema(&self, gen: &mut SchemaGenerator) -> Option<Schema>;
    }
    impl<T: IntoToolResult> ViaOutput<T> for &Probe<T> {
        fn __disco_into_result(&self, value: T) -> CallToolResult {
            value.into_tool_result()
        }
        fn __disco_output_schema(&self, gen: &mut SchemaGenerator) -> Option<Schema> {
            T::output_schema(gen)
        }
    }
    pub trait OutputFallback<T> {
        fn __disco_into_result(&self, _: T) -> CallToolResult {
            CallToolResult::error(vec![rmcp::model::ContentBlock::text(UNREACHABLE)])
        }
        fn __disco_output_schema(&self, _: &mut SchemaGenerator) -> Option<Schema> {
            None
        }
    }
    impl<T> OutputFallback<T> for Probe<T> {}

    /// The JSON of a default value, when its type is `Serialize` (autoref specialisation:
    /// `(&&DefaultProbe(v)).default_json()` picks the `Serialize` impl when there is one).
    pub struct DefaultProbe<T>(pub T);
    pub trait DefaultViaSerialize {
        fn default_json(&self) -> Option<serde_json::Value>;
    }
    impl<T: serde::Serialize> DefaultViaSerialize for &DefaultProbe<T> {
        fn default_json(&self) -> Option<serde_json::Value> {
            serde_json::to_value(&self.0).ok()
        }
    }
    pub trait DefaultWithoutSerialize {
        fn default_json(&self) -> Option<serde_json::Value>;
    }
    impl<T> DefaultWithoutSerialize for DefaultProbe<T> {
        fn default_json(&self) -> Option<serde_json::Value> {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    /// The private module's name is the one `disco-macros` of this version generates paths to.
    #[test]
    fn private_module_is_named_after_the_version() {
        let version = env!("CARGO_PKG_VERSION").replace(['.', '-', '+'], "_");
        let declared = format!("\npub mod __private_v{version} {{\n");
        assert!(
            include_str!("lib.rs").contains(&declared),
            "rename `__private_v...` in lib.rs to `__private_v{version}` (the version is {})",
            env!("CARGO_PKG_VERSION")
        );
    }
}
