//! The first-boot provisioner: where a config comes from (`platform`), how resources are
//! fetched (`fetch`), the block devices and mounts below the files (`system`), and the
//! stages run against real disks and a target root (`provision`).

pub mod civil;
pub mod fetch;
pub mod platform;
pub mod provision;
pub mod system;
