//! Between a request and a handler: which tool was meant ([`name`]), and what its arguments
//! were meant to be ([`args`]). Both are pure functions of the catalog and the request.

pub mod args;
pub mod name;
pub(crate) mod meaning;
pub(crate) mod polarity;
pub(crate) mod vocab;
