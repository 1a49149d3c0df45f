//! Go-compatible primitives, the bottom layer of flint: what upstream's Go libraries do, done
//! the same way where the output depends on it. YAML as go-yaml v3 reads it, JSON as
//! `encoding/json` reads and writes it (with a position for every value), the positioned tree
//! both are read into and a serde deserializer over it, diagnostics located in it, Go's
//! quoting.

#![warn(unreachable_pub)]

pub mod bytes;
pub mod de;
pub mod diag;
pub mod goquote;
pub mod json;
pub mod tree;
pub mod url;
pub mod yaml;
