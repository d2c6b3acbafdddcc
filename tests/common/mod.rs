pub mod http;
pub mod named;
