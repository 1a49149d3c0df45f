//! `flint lsp`: a language server for Butane and Ignition configs. Diagnostics are the
//! translator's and the validator's own (the same messages as `butane --strict` and `flint
//! validate`); hover and completion read the JSON Schemas `flint schema` prints; code
//! actions are offered only when checked to change nothing but what they say.
#![warn(unreachable_pub)]

mod actions;
mod complete;
mod context;
mod diagnostics;
mod doc;
mod hover;
mod knowledge;
mod server;
mod text;
mod transport;

pub use server::serve_stdio;
