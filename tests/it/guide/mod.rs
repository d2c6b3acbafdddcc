//! The code the guide (`docs/guide`, an mdBook) shows: each chapter includes the parts of these
//! modules between `ANCHOR` lines, so the code a reader sees is code the build compiles, and
//! the modules' tests hold what the chapters say of it.

mod search;
#[cfg(feature = "semantic")]
mod semantic;
mod serving;
mod tools;
