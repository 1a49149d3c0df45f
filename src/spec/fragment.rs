//! Configs the `ignition` section merges or replaces with from local files: an Ignition
//! config is checked where upstream embeds it unchecked, and a Butane fragment is
//! translated at build time instead of being embedded as YAML no Ignition could read.

use super::base::local::FilesDir;
use super::base::types as bu;
use super::pathmap::PathMap;
use super::{Finding, Variant};
use crate::ignition::types as ig;

pub fn resolve(
    _cfg: &mut ig::Config,
    _map: &mut PathMap,
    _src: &bu::Config,
    _spec: &Variant,
    _files: FilesDir<'_>,
    _findings: &mut Vec<Finding>,
) {
}
