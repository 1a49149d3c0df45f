//! The stages, one module each, and their registry.

pub mod disks;
pub mod fetch;
pub(crate) mod files;
pub(crate) mod kargs;
pub(crate) mod mount;
pub(crate) mod umount;

use crate::stage::{Stage, StageName};

/// Every stage, in the order a full run takes them (`fetch-offline` is run on its own,
/// never as part of a full run).
pub const ORDER: [&dyn Stage; 6] = [
    &fetch::Fetch,
    &kargs::Kargs,
    &disks::Disks,
    &mount::Mount,
    &files::Files,
    &umount::Umount,
];

/// The stage of that name.
pub fn get(name: StageName) -> &'static dyn Stage {
    match name {
        StageName::FetchOffline => &fetch::FetchOffline,
        StageName::Fetch => &fetch::Fetch,
        StageName::Kargs => &kargs::Kargs,
        StageName::Disks => &disks::Disks,
        StageName::Mount => &mount::Mount,
        StageName::Files => &files::Files,
        StageName::Umount => &umount::Umount,
    }
}
