//! Rules for systemd units and drop-ins.

use super::{Checker, unit};
use crate::types::Systemd;
use flint_go::goquote;
use flint_go::tree::JsonPath;

/// The unit types a unit's name may end in.
pub const UNIT_SUFFIXES: &[&str] = &[
    "service",
    "socket",
    "device",
    "mount",
    "automount",
    "swap",
    "target",
    "path",
    "timer",
    "snapshot",
    "slice",
    "scope",
];

fn unit_suffix_ok(name: &str) -> bool {
    name.rsplit_once('.')
        .is_some_and(|(_, ext)| UNIT_SUFFIXES.contains(&ext))
}

/// Parsed options of `contents` when present, non-empty and well-formed.
fn options(contents: &Option<String>) -> Option<Vec<unit::UnitOption>> {
    contents
        .as_deref()
        .filter(|s| !s.is_empty())
        .and_then(|s| unit::parse(s).ok())
}

pub(super) fn check(c: &mut Checker, s: &Systemd, path: &JsonPath) {
    let units = path.key("units");
    // The section's own rule first (templates), then each unit, as upstream walks them.
    // An enabled instance of a template that has no [Install] enables nothing.
    for (i, u) in s.units.iter().enumerate() {
        if u.enabled != Some(true) {
            continue;
        }
        let Some(stem) = u.name.strip_suffix(".service") else {
            continue;
        };
        let Some((prefix, instance)) = stem.split_once('@') else {
            continue;
        };
        // (Upstream's pattern does not reach over a line break.)
        if prefix.is_empty() || instance.is_empty() || stem.contains('\n') {
            continue;
        }
        let template = format!("{prefix}@.service");
        // The last unit of that name, as upstream's table of units by name keeps it.
        let lacks_install = (s.units.iter().rev())
            .find(|t| t.name == template)
            .and_then(|t| options(&t.contents))
            .is_some_and(|opts| !unit::has_install(&opts));
        if lacks_install {
            c.warning(
                units.index(i).key("contents"),
                format!(
                    "template unit {} for {} doesn't have Install section",
                    goquote::quote(&template),
                    goquote::quote(&u.name)
                ),
            );
        }
    }
    for (i, u) in s.units.iter().enumerate() {
        let up = units.index(i);
        if !unit_suffix_ok(&u.name) {
            c.error(up.key("name"), "invalid systemd unit extension");
        }
        if let Some(contents) = &u.contents {
            match unit::parse(contents) {
                Err(e) => c.error(up.key("contents"), format!("invalid unit content: {e}")),
                Ok(opts) => {
                    if u.enabled == Some(true) && !contents.is_empty() && !unit::has_install(&opts)
                    {
                        c.warning(
                            up.key("contents"),
                            format!(
                                "unit {} is enabled, but has no install section so enable does nothing",
                                goquote::quote(&u.name)
                            ),
                        );
                    }
                }
            }
        }
        let dropins = up.key("dropins");
        for (j, d) in u.dropins.iter().enumerate() {
            let dp = dropins.index(j);
            // Upstream's order: the contents, then the name.
            if let Some(Err(e)) = d.contents.as_deref().map(unit::parse) {
                c.error(dp.key("contents"), format!("invalid unit content: {e}"));
            }
            if !d.name.ends_with(".conf") {
                c.error(dp.key("name"), "invalid systemd drop-in extension");
            }
        }
        c.unique(&dropins, &u.dropins, |d| d.name.as_str());
    }

    c.unique(&units, &s.units, |u| u.name.as_str());
}
