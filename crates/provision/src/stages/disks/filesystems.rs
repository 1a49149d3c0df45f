//! Filesystems: upstream's reuse rule (an existing filesystem of the wanted type, with the
//! wanted label and UUID where the config gives them, is kept; anything else fails unless
//! `wipeFilesystem`), then wipefs and mkfs with label, UUID and options.

use super::{Job, change, fail};
use crate::stage::{Outcome, StageError};
use crate::system::probe::{self, Found};
use crate::system::tool;
use flint_go::tree::JsonPath;
use flint_ignition::types::Filesystem;
use std::path::Path;

/// What to do with one filesystem entry, given what the device holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    Keep,
    Create,
    WipeAndCreate(String),
    Fail(String),
}

fn describe(f: &Found) -> String {
    let mut s = if f.kind.is_empty() {
        format!("a {} partition table", f.table)
    } else {
        f.kind.clone()
    };
    if !f.label.is_empty() {
        s.push_str(&format!(" labelled {:?}", f.label));
    }
    if !f.uuid.is_empty() {
        s.push_str(&format!(" (UUID {})", f.uuid));
    }
    s
}

/// The reuse rule, pure.
pub(crate) fn decide(fs: &Filesystem, found: Option<&Found>) -> Decision {
    let format = fs.format.as_deref().unwrap_or("");
    let wipe = fs.wipe_filesystem == Some(true);
    let Some(f) = found else {
        return if format == "none" {
            Decision::Keep
        } else {
            Decision::Create
        };
    };
    if wipe {
        return Decision::WipeAndCreate(describe(f));
    }
    // An existing filesystem labelled OEM is kept whatever its type (Flatcar's patch 0008:
    // the OEM partition's format changed between releases, and configs naming the old one
    // must not fail).
    let oem = f.label == crate::fetch::oem::LABEL;
    let why = if format == "none" && !oem {
        Some("the config wants no filesystem".to_string())
    } else if f.kind != probe::blkid_type(format) && !oem {
        Some(format!("the config wants {format}"))
    } else if let Some(l) = fs.label.as_ref().filter(|l| **l != f.label) {
        Some(format!("the config wants the label {l:?}"))
    } else {
        fs.uuid
            .as_ref()
            .filter(|u| !probe::same_uuid(format, u, &f.uuid))
            .map(|u| format!("the config wants the UUID {u}"))
    };
    match why {
        None => Decision::Keep,
        Some(w) => Decision::Fail(format!(
            "holds {}, {w}; set wipeFilesystem to replace it",
            describe(f)
        )),
    }
}

/// The mkfs command line for a format.
pub(crate) fn mkfs_args(fs: &Filesystem, dev: &Path) -> Option<(String, Vec<String>)> {
    let format = fs.format.as_deref()?;
    let label = fs.label.clone();
    let uuid = fs.uuid.clone();
    let (tool, mut args): (&str, Vec<String>) = match format {
        "ext4" => ("mkfs.ext4", vec!["-F".into()]),
        "btrfs" => ("mkfs.btrfs", vec!["-f".into()]),
        "xfs" => ("mkfs.xfs", vec!["-f".into()]),
        "vfat" => ("mkfs.vfat", vec![]),
        "swap" => ("mkswap", vec!["-f".into()]),
        _ => return None,
    };
    if let Some(l) = label {
        args.push(if format == "vfat" { "-n" } else { "-L" }.into());
        args.push(l);
    }
    if let Some(u) = uuid {
        match format {
            "xfs" => args.extend(["-m".into(), format!("uuid={u}")]),
            "vfat" => args.extend(["-i".into(), u.replace('-', "")]),
            _ => args.extend(["-U".into(), u]),
        }
    }
    args.extend(fs.options.iter().cloned());
    args.push(dev.display().to_string());
    Some((tool.into(), args))
}

pub(crate) fn run(cx: &Job, out: &mut Outcome) -> Result<(), StageError> {
    let base = JsonPath::root().key("storage").key("filesystems");
    for (i, fs) in cx.config.storage.filesystems.iter().enumerate() {
        if fs.format.is_none() {
            continue;
        }
        one(cx, fs, &base.index(i), out)?;
    }
    Ok(())
}

fn one(cx: &Job, fs: &Filesystem, entry: &JsonPath, out: &mut Outcome) -> Result<(), StageError> {
    let format = fs.format.as_deref().unwrap_or("");
    let Some(dev) = cx.device(&fs.device, &entry.key("device"))? else {
        if format != "none" {
            out.changes.push(change(
                "filesystem",
                entry.clone(),
                Path::new(&fs.device),
                format!(
                    "create {format} filesystem on {} (device not present yet)",
                    fs.device
                ),
            ));
        }
        return Ok(());
    };
    let found = probe::probe(&dev).map_err(|e| fail(entry.clone(), e.to_string()))?;
    let decision = decide(fs, found.as_ref());
    let label = fs
        .label
        .as_ref()
        .map(|l| format!(" labelled {l:?}"))
        .unwrap_or_default();
    let text = match &decision {
        Decision::Keep => return Ok(()),
        Decision::Fail(why) => return Err(fail(entry.clone(), format!("{} {why}", dev.display()))),
        Decision::Create => format!("create {format} filesystem{label} on {}", dev.display()),
        Decision::WipeAndCreate(old) if format == "none" => {
            format!("wipe {old} from {}", dev.display())
        }
        Decision::WipeAndCreate(old) => format!(
            "wipe {old} and create {format} filesystem{label} on {}",
            dev.display()
        ),
    };
    out.changes
        .push(change("filesystem", entry.clone(), &dev, text));
    if !cx.mode.applies() {
        return Ok(());
    }
    if matches!(decision, Decision::WipeAndCreate(_)) {
        tool::run("wipefs", ["-a".as_ref(), dev.as_os_str()])
            .map_err(|e| fail(entry.clone(), e.to_string()))?;
    }
    if let Some((mkfs, args)) = mkfs_args(fs, &dev) {
        tool::run(&mkfs, &args).map_err(|e| fail(entry.clone(), e.to_string()))?;
    }
    // Verify: what is on the device now is what the config asks for.
    let now = probe::probe(&dev).map_err(|e| fail(entry.clone(), e.to_string()))?;
    // An empty UUID is passed to mkfs as upstream passes it; a tool that accepts it (mkfs.btrfs)
    // draws one, which the config cannot name.
    let keep = Filesystem {
        wipe_filesystem: Some(false),
        uuid: fs.uuid.clone().filter(|u| !u.is_empty()),
        ..fs.clone()
    };
    match decide(&keep, now.as_ref()) {
        Decision::Keep => Ok(()),
        _ => Err(fail(
            entry.clone(),
            format!(
                "{}: not in the desired state after mkfs: found {}",
                dev.display(),
                now.as_ref()
                    .map(describe)
                    .unwrap_or_else(|| "nothing".into())
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs(format: &str, label: Option<&str>, uuid: Option<&str>, wipe: bool) -> Filesystem {
        Filesystem {
            device: "/dev/x".into(),
            format: Some(format.into()),
            label: label.map(Into::into),
            uuid: uuid.map(Into::into),
            wipe_filesystem: Some(wipe),
            ..Default::default()
        }
    }

    fn found(kind: &str, label: &str, uuid: &str) -> Found {
        Found {
            kind: kind.into(),
            label: label.into(),
            uuid: uuid.into(),
            table: String::new(),
        }
    }

    #[test]
    fn the_reuse_rule() {
        let ext4 = found("ext4", "root", "AAAA-1");
        assert_eq!(
            decide(&fs("ext4", None, None, false), None),
            Decision::Create
        );
        assert_eq!(decide(&fs("none", None, None, false), None), Decision::Keep);
        assert_eq!(
            decide(&fs("ext4", None, None, false), Some(&ext4)),
            Decision::Keep
        );
        assert_eq!(
            decide(
                &fs("ext4", Some("root"), Some("aaaa-1"), false),
                Some(&ext4)
            ),
            Decision::Keep
        );
        for f in [
            fs("ext4", Some("other"), None, false),
            fs("ext4", None, Some("b"), false),
            fs("xfs", None, None, false),
            fs("none", None, None, false),
        ] {
            let Decision::Fail(why) = decide(&f, Some(&ext4)) else {
                panic!("{f:?}")
            };
            assert!(why.contains("set wipeFilesystem"), "{why}");
        }
        assert!(matches!(
            decide(&fs("xfs", None, None, true), Some(&ext4)),
            Decision::WipeAndCreate(_)
        ));
        assert!(matches!(
            decide(&fs("swap", None, None, false), Some(&found("swap", "", ""))),
            Decision::Keep
        ));
    }

    #[test]
    fn an_oem_filesystem_of_another_type_is_kept() {
        let oem = found("btrfs", "OEM", "1111");
        for f in [
            fs("ext4", None, None, false),
            fs("ext4", Some("OEM"), None, false),
            fs("vfat", Some("OEM"), None, false),
            fs("none", None, None, false),
        ] {
            assert_eq!(decide(&f, Some(&oem)), Decision::Keep, "{f:?}");
        }
        // The label and UUID the config gives still count, and a wipe still wipes.
        assert!(matches!(
            decide(&fs("ext4", Some("oem"), None, false), Some(&oem)),
            Decision::Fail(_)
        ));
        assert!(matches!(
            decide(&fs("ext4", None, Some("2222"), false), Some(&oem)),
            Decision::Fail(_)
        ));
        assert!(matches!(
            decide(&fs("ext4", Some("OEM"), None, true), Some(&oem)),
            Decision::WipeAndCreate(_)
        ));
        // Another label of another type still fails.
        assert!(matches!(
            decide(
                &fs("ext4", None, None, false),
                Some(&found("btrfs", "DATA", ""))
            ),
            Decision::Fail(_)
        ));
    }

    #[test]
    fn mkfs_lines_per_format() {
        let d = Path::new("/dev/x");
        let (t, a) = mkfs_args(&fs("xfs", Some("var"), Some("u-1"), false), d).unwrap();
        assert_eq!(
            (t.as_str(), a.join(" ")),
            ("mkfs.xfs", "-f -L var -m uuid=u-1 /dev/x".to_string())
        );
        let (t, a) = mkfs_args(&fs("vfat", Some("ESP"), Some("ABCD-1234"), false), d).unwrap();
        assert_eq!(
            (t.as_str(), a.join(" ")),
            ("mkfs.vfat", "-n ESP -i ABCD1234 /dev/x".to_string())
        );
        assert!(mkfs_args(&fs("none", None, None, false), d).is_none());
    }
}
