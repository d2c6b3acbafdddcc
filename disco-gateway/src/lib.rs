//! The parts of disco-gateway (the binary is `src/main.rs`): the configuration, the upstream
//! connections, the per-caller connections of token forwarding, and the provider that puts
//! the upstreams' tools in disco's catalog.

pub mod config;
pub mod forward;
pub mod provider;
mod relay;
pub mod upstream;
mod wire;
