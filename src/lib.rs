//! flint: Butane/Ignition for Flatcar-style systems.

pub mod bytes;
pub mod cli;
pub mod de;
pub mod diag;
pub mod fetch;
pub mod goquote;
pub mod ignition;
pub mod json;
pub mod migrate;
pub mod par;
pub mod platform;
pub mod provision;
pub mod schema;
pub mod spec;
pub mod system;
pub mod tree;
pub mod yaml;
