//! flint: Butane/Ignition for Flatcar-style systems. This crate is the command line (`cli`)
//! and its binaries (`flint`, `butane`); the work is done by the crates below it:
//! `flint_go` (Go-compatible primitives), `flint_gzip`, `flint_ignition` (the Ignition
//! config), `flint_butane` (Butane), `flint_provision` (the provisioner).

pub mod cli;
