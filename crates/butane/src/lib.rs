//! Butane specs and the translation from Butane YAML to an Ignition config (or an
//! OpenShift MachineConfig) with diagnostics.
//!
//! The spec versions are rows of one table ([`registry`]), each variant a thin layer over
//! the shared base spec. A translation runs in phases:
//!
//! 1. decode (`decode`): the source's bytes into a YAML tree whose variant and version
//!    name a spec we know, then the tree into that spec's Butane config;
//! 2. check the source (`check`): keys the spec lacks and the like (warnings), then the
//!    source's rules;
//! 3. translate (`base`, `fragment`): Butane into Ignition;
//! 4. sugar (`fcos`, `openshift`): the variant's own sections, the MachineConfig;
//! 5. filter (`flatcar`, `r4e`, `openshift`): what the variant does not allow;
//! 6. validate: the config generated, by the rules of its Ignition version;
//! 7. render ([`Outcome::render`]): Ignition JSON, or the MachineConfig as YAML (`emit`).
//!
//! Findings at output paths are placed in the source through the path map (`locate`).

#![warn(unreachable_pub)]

mod ahead;
pub mod base;
mod check;
mod debug;
mod decode;
mod emit;
mod fcos;
mod flatcar;
mod fragment;
mod gotype;
mod legacy;
mod locate;
mod memo;
pub mod migrate;
mod openshift;
mod order;
mod outcome;
mod pathmap;
mod pipeline;
mod r4e;
mod registry;
pub mod schema;

pub use decode::{source_utf8, utf16_as_utf8};
pub use memo::Memo;
pub use outcome::{Finding, Options, Outcome};
pub use registry::{Family, REGISTRY, Variant, lookup};

use flint_go::tree::JsonPath;

/// Translates the Butane document `bytes` (UTF-8, or UTF-16 with its byte order mark).
pub fn translate(bytes: &[u8], opts: Options<'_>) -> Outcome {
    let bytes = match source_utf8(bytes) {
        Ok(b) => b,
        Err(e) => {
            return Outcome::failed(format!("Error unmarshaling yaml: yaml: {e}"), Vec::new());
        }
    };
    let bytes = &bytes[..];
    // A small document is translated on this thread alone: a worker would cost more than
    // it could take over.
    // A document with a memo has most of its contents encoded already.
    if bytes.len() < AHEAD_FROM || opts.memo.is_some() {
        let read = decode::read(bytes, &mut |_| {});
        return pipeline::translate_read(bytes, read, opts, None);
    }
    let ahead = ahead::Ahead::default();
    let (tx, rx) = std::sync::mpsc::channel();
    let outcome = std::thread::scope(|s| {
        s.spawn(|| ahead.work(rx));
        let read = decode::read(bytes, &mut |v| ahead.submit(&tx, v));
        // The worker ends once it has encoded what it was given.
        ahead.read_done(tx);
        pipeline::translate_read(bytes, read, opts, Some(&ahead))
    });
    pipeline::release(ahead, opts.exiting);
    outcome
}

/// The size from which embedded contents are encoded on another thread while the document
/// is read (see `ahead`).
const AHEAD_FROM: usize = 64 * 1024;

/// A JSON path from its keys.
pub(crate) fn jpath(parts: &[&'static str]) -> JsonPath {
    parts.iter().fold(JsonPath::root(), |p, k| p.key(*k))
}
