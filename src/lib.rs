//! The runnable examples (`examples/`) and integration tests (`tests/`) of disco live in this
//! package. It depends on `disco-runtime` alone, as a user's crate would.
