//! JSON in and out, compatible with the upstream Go tools.

pub mod parse;
pub mod write;

pub use parse::{SyntaxError, parse};
pub use write::to_vec;
