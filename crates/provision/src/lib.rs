//! The first-boot provisioner: where a config comes from (`platform`), how resources are
//! fetched (`fetch`), the block devices and mounts below the files (`system`), and the
//! engine (`run`) that runs the stages (`stages`, each behind `stage::Stage`) against real
//! disks and a target root.

#![warn(unreachable_pub)]

mod civil;
pub mod fetch;
pub mod platform;
pub mod system;

pub mod acquire;
mod entry;
mod keep;
mod lock;
mod record;
mod resources;
mod root;
pub mod run;
pub mod stage;
pub mod stages;
pub mod state;
mod write;
