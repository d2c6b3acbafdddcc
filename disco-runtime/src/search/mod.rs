//! Search over the catalog for catalogs too large to show a model at once: the ranking index
//! and the `tool_search` / `execute_tool` meta-tools.

pub mod index;
pub(crate) mod meta;
mod options;
#[cfg(feature = "semantic")]
pub mod semantic;
pub(crate) mod steps;

pub use index::{Hit, SearchDoc, SearchIndex};
pub use options::{Exposure, SearchOptions};
#[cfg(feature = "semantic")]
pub use semantic::cache::VectorCache;
#[cfg(feature = "semantic")]
pub use semantic::{Encoder, SemanticError, SemanticModel, StaticModel};
pub use steps::MAX_QUERY_STEPS;
