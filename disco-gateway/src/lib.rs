//! The parts of disco-gateway (the binary is `src/main.rs`): the configuration, the upstream
//! connections, the per-caller connections of token forwarding, and the provider that puts
//! the upstreams' tools in disco's catalog.
//!
//! These modules are internal: they are public only so that the binary and the gateway's
//! own tests can reach them, and they are no API (nothing here is kept stable). Each names
//! only the modules below it: ARCHITECTURE.md, "The layers of disco-gateway", draws the layers
//! and says why, and `tests/architecture.rs` holds the code to them.

#[doc(hidden)]
pub mod admit;
#[doc(hidden)]
pub mod adopt;
mod call;
mod client;
#[doc(hidden)]
pub mod config;
#[doc(hidden)]
pub mod follow;
#[doc(hidden)]
pub mod forward;
mod headers;
#[doc(hidden)]
pub mod learning;
#[doc(hidden)]
pub mod lint;
#[doc(hidden)]
pub mod metrics;
#[doc(hidden)]
pub mod pins;
#[doc(hidden)]
pub mod provider;
mod relay;
#[doc(hidden)]
pub mod search;
mod text;
#[doc(hidden)]
pub mod upstream;
mod wire;

/// Installs the cryptography that `https://` upstreams are reached with (ring's, for rustls:
/// reqwest is built without a provider of its own, see Cargo.toml), once; one installed
/// already is kept. The binary calls it first thing, and every connection the gateway opens
/// does too; a program or test that makes HTTP clients of its own beside the gateway's calls it
/// before. Without the `tls` feature it does nothing.
pub fn install_tls() {
    #[cfg(feature = "tls")]
    client::install_tls();
}
