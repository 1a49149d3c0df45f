//! LUKS2 volumes with cryptsetup. The key comes from the config's `keyFile` or is generated;
//! a generated key is kept in the state directory at once (so an interrupted run can open what
//! it formatted) and copied into the root by the files stage (/etc/luks/NAME, with
//! /etc/crypttab). An existing volume that the key opens is reused unless `wipeVolume`.

use super::{Job, change, fail};
use crate::stage::{Outcome, StageError};
use crate::system::{devices, probe, tool};
use flint_go::tree::JsonPath;
use flint_ignition::types::Luks;
use std::path::{Path, PathBuf};

/// Where upstream keeps key files in the target root.
pub(crate) const KEY_DIR: &str = "etc/luks";
/// Bytes of a generated key.
const KEY_BYTES: usize = 64;

/// The key for a volume: the fetched key file, or the one generated earlier (state directory,
/// then the root), or `None` when one must be generated.
pub(crate) fn known_key(
    cx_fetched: &crate::resources::Fetched,
    state_dir: &Path,
    root: &Path,
    l: &Luks,
    entry: &JsonPath,
) -> Option<Vec<u8>> {
    if l.key_file.source.is_some() {
        return cx_fetched
            .get(&entry.key("keyFile"))
            .and_then(|d| d.to_vec().ok());
    }
    [
        state_dir.join("luks").join(&l.name),
        root.join(KEY_DIR).join(&l.name),
    ]
    .iter()
    .find_map(|p| std::fs::read(p).ok())
}

pub(crate) fn run(cx: &Job, out: &mut Outcome) -> Result<(), StageError> {
    let base = JsonPath::root().key("storage").key("luks");
    for (i, l) in cx.config.storage.luks.iter().enumerate() {
        one(cx, l, &base.index(i), out)?;
    }
    Ok(())
}

fn one(cx: &Job, l: &Luks, entry: &JsonPath, out: &mut Outcome) -> Result<(), StageError> {
    let mapper = PathBuf::from("/dev/mapper").join(&l.name);
    if mapper.exists() {
        out.notes.push(format!(
            "LUKS volume {} is open as {}: reused",
            l.name,
            mapper.display()
        ));
        return Ok(());
    }
    let raw = l.device.clone().unwrap_or_default();
    let at = entry.key("device");
    let Some(dev) = cx.device(&raw, &at)? else {
        out.changes.push(change(
            "luks",
            entry.clone(),
            Path::new(&raw),
            format!(
                "format LUKS2 volume {} on {raw} (device not present yet)",
                l.name
            ),
        ));
        return Ok(());
    };
    let wipe = l.wipe_volume == Some(true);
    let found = probe::probe(&dev).map_err(|e| fail(at.clone(), e.to_string()))?;
    let key = known_key(cx.fetched, &cx.state_dir, &cx.root, l, entry);
    let is_luks = found.as_ref().is_some_and(|f| f.kind == "crypto_LUKS");
    if is_luks && !wipe {
        let f = found.clone().unwrap_or_default();
        return reuse(cx, l, &dev, &f, key, entry, out);
    }
    let what = match (&found, wipe) {
        (Some(f), true) => format!(" (wiping the {} on it)", f.kind),
        _ => String::new(),
    };
    out.changes.push(change(
        "luks",
        entry.clone(),
        &dev,
        format!("format LUKS2 volume {} on {}{what}", l.name, dev.display()),
    ));
    if !cx.mode.applies() {
        return Ok(());
    }
    format(cx, l, &dev, found.is_some() && wipe, key, entry)
}

/// An existing volume the config keeps: it must be the one asked for and open with the known
/// key; it is opened (when applying) and reused.
fn reuse(
    cx: &Job,
    l: &Luks,
    dev: &Path,
    f: &probe::Found,
    key: Option<Vec<u8>>,
    entry: &JsonPath,
    out: &mut Outcome,
) -> Result<(), StageError> {
    let Some(key) = key else {
        return Err(fail(
            entry.clone(),
            format!(
                "{} holds a LUKS volume but its generated key is not known here (not in {} or the root's /{KEY_DIR}); set wipeVolume to replace it",
                dev.display(),
                cx.state_dir.join("luks").display()
            ),
        ));
    };
    if let Some(want) = l.label.as_ref().filter(|w| **w != f.label) {
        return Err(fail(
            entry.clone(),
            format!(
                "{} holds a LUKS volume labelled {:?}, the config wants {want:?}; set wipeVolume to replace it",
                dev.display(),
                f.label
            ),
        ));
    }
    if let Some(want) = l
        .uuid
        .as_ref()
        .filter(|w| !probe::same_uuid("luks", w, &f.uuid))
    {
        return Err(fail(
            entry.clone(),
            format!(
                "{} holds a LUKS volume with UUID {}, the config wants {want}; set wipeVolume to replace it",
                dev.display(),
                f.uuid
            ),
        ));
    }
    let keyfile = key_file(cx, l, &key, entry)?;
    let test = tool::run(
        "cryptsetup",
        [
            "open".as_ref(),
            "--test-passphrase".as_ref(),
            "--key-file".as_ref(),
            keyfile.as_os_str(),
            dev.as_os_str(),
        ],
    );
    if let Err(e) = test {
        let _ = std::fs::remove_file(&keyfile);
        return Err(fail(
            entry.clone(),
            format!(
                "{} holds a LUKS volume the key does not open ({e}); set wipeVolume to replace it",
                dev.display()
            ),
        ));
    }
    out.notes.push(format!(
        "LUKS volume {} on {}: {}",
        l.name,
        dev.display(),
        if cx.mode.applies() {
            "opened and reused"
        } else {
            "would be opened and reused"
        }
    ));
    if cx.mode.applies() {
        open(l, dev, &keyfile, entry)?;
    }
    let _ = std::fs::remove_file(&keyfile);
    Ok(())
}

/// Formats the volume (wiping what is on it first when `wipe`) with the known key or a new
/// one, kept in the state directory before formatting, and opens it.
fn format(
    cx: &Job,
    l: &Luks,
    dev: &Path,
    wipe: bool,
    key: Option<Vec<u8>>,
    entry: &JsonPath,
) -> Result<(), StageError> {
    let key = match key {
        Some(k) => k,
        None => {
            let mut k = vec![0u8; KEY_BYTES];
            crate::system::random_bytes(&mut k);
            // Kept before formatting: a run cut short after luksFormat can still open it.
            let dir = cx.state_dir.join("luks");
            std::fs::create_dir_all(&dir)
                .map_err(|e| fail(entry.clone(), format!("{}: {e}", dir.display())))?;
            crate::write::write_atomic(&dir.join(&l.name), &k, 0o600)
                .map_err(|e| fail(entry.clone(), format!("keeping the generated key: {e}")))?;
            k
        }
    };
    let keyfile = key_file(cx, l, &key, entry)?;
    let result = (|| {
        if wipe {
            tool::run("wipefs", ["-a".as_ref(), dev.as_os_str()])
                .map_err(|e| fail(entry.clone(), e.to_string()))?;
        }
        let mut args: Vec<String> = vec![
            "luksFormat".into(),
            "--type".into(),
            "luks2".into(),
            "--batch-mode".into(),
        ];
        if let Some(label) = &l.label {
            args.extend(["--label".into(), label.clone()]);
        }
        if let Some(uuid) = &l.uuid {
            args.extend(["--uuid".into(), uuid.clone()]);
        }
        args.extend(l.options.iter().cloned());
        args.extend([
            "--key-file".into(),
            keyfile.display().to_string(),
            dev.display().to_string(),
        ]);
        tool::run("cryptsetup", &args).map_err(|e| fail(entry.clone(), e.to_string()))?;
        open(l, dev, &keyfile, entry)
    })();
    let _ = std::fs::remove_file(&keyfile);
    result
}

/// The key in a private file for cryptsetup's --key-file.
fn key_file(cx: &Job, l: &Luks, key: &[u8], entry: &JsonPath) -> Result<PathBuf, StageError> {
    let dir = cx.state_dir.join("keys");
    std::fs::create_dir_all(&dir)
        .map_err(|e| fail(entry.clone(), format!("{}: {e}", dir.display())))?;
    let p = dir.join(format!("{}.{}", l.name, std::process::id()));
    crate::write::write_atomic(&p, key, 0o600)
        .map_err(|e| fail(entry.clone(), format!("{}: {e}", p.display())))?;
    Ok(p)
}

fn open(l: &Luks, dev: &Path, keyfile: &Path, entry: &JsonPath) -> Result<(), StageError> {
    let mut args: Vec<String> = vec![
        "luksOpen".into(),
        dev.display().to_string(),
        l.name.clone(),
        "--key-file".into(),
        keyfile.display().to_string(),
    ];
    if l.discard == Some(true) {
        args.push("--allow-discards".into());
    }
    args.extend(l.open_options.iter().cloned());
    // Without udev, libdevmapper must make /dev/mapper/NAME itself.
    let env: &[(&str, &str)] = if tool::udev_running() {
        &[]
    } else {
        &[("DM_DISABLE_UDEV", "1")]
    };
    tool::run_with("cryptsetup", &args, &[], env)
        .map_err(|e| fail(entry.clone(), format!("opening {}: {e}", l.name)))?;
    super::device(&format!("/dev/mapper/{}", l.name), entry).map(|_| ())
}

/// The files the root needs for the volumes: each key at /etc/luks/NAME (0600) and
/// /etc/crypttab, as upstream writes them; added to the files stage's config so that they are
/// planned, written atomically and verified like the config's own files. A volume whose key is
/// not known yet (planning before the disks stage ran) is left out.
pub(crate) fn root_files(
    config: &mut flint_ignition::Config,
    fetched: &mut crate::resources::Fetched,
    state_dir: &Path,
    root: &Path,
) {
    use flint_ignition::types::{File, Resource};
    let base = JsonPath::root().key("storage").key("luks");
    let mut crypttab = String::new();
    let mut added = Vec::new();
    for (i, l) in config.storage.luks.iter().enumerate() {
        if !flint_ignition::types::is_zero(&l.clevis) {
            continue;
        }
        let Some(key) = known_key(fetched, state_dir, root, l, &base.index(i)) else {
            continue;
        };
        let dev = l.device.clone().unwrap_or_default();
        let uuid = devices::resolve_now(&dev)
            .and_then(|d| probe::probe(&d).ok().flatten())
            .map(|f| f.uuid)
            .filter(|u| !u.is_empty())
            .or_else(|| l.uuid.clone());
        let source = uuid.map_or(dev, |u| format!("UUID={u}"));
        let opts = if l.discard == Some(true) {
            "luks,discard"
        } else {
            "luks"
        };
        crypttab.push_str(&format!(
            "{} {source} /{KEY_DIR}/{} {opts}\n",
            l.name, l.name
        ));
        added.push((format!("/{KEY_DIR}/{}", l.name), key, 0o600));
    }
    if added.is_empty() {
        return;
    }
    let existing: Vec<String> = config
        .storage
        .files
        .iter()
        .map(|f| f.path.clone())
        .collect();
    let taken = |p: &str| existing.iter().any(|e| e == p);
    if !taken("/etc/crypttab") {
        added.push(("/etc/crypttab".into(), crypttab.into_bytes(), 0o644));
    }
    let files = JsonPath::root().key("storage").key("files");
    for (path, data, mode) in added {
        if taken(&path) {
            continue;
        }
        let i = config.storage.files.len();
        let f = File {
            path,
            overwrite: Some(true),
            mode: Some(mode),
            contents: Resource {
                source: Some("data:,".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        fetched.add(files.index(i).key("contents"), data);
        config.storage.files.push(f);
    }
}
