//! LUKS2 volumes with cryptsetup. The key comes from the config's `keyFile` or is generated;
//! a generated key is kept in the state directory at once (so an interrupted run can open what
//! it formatted) and copied into the root by the files stage (/etc/luks/NAME, with
//! /etc/crypttab). A volume bound with Clevis ([`super::clevis`]) is formatted the same way,
//! then bound, and a generated key removed from it: the binding alone opens it. An existing
//! volume that the key (or, bound, Clevis) opens is reused unless `wipeVolume`.

use super::{Job, change, fail};
use crate::stage::{Mode, Outcome, StageError};
use crate::system::{devices, probe, tool};
use flint_go::tree::JsonPath;
use flint_ignition::types::Luks;
use std::path::{Path, PathBuf};

/// Where upstream keeps key files in the target root.
pub(crate) const KEY_DIR: &str = "etc/luks";
/// Where a generated key is kept in the state directory until the files stage copies it.
fn kept_key(state_dir: &Path, name: &str) -> PathBuf {
    state_dir.join("luks").join(name)
}

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
        kept_key(state_dir, &l.name),
        root.join(KEY_DIR).join(&l.name),
    ]
    .iter()
    .find_map(|p| std::fs::read(p).ok())
}

/// Refuses, before any disk is touched, a binding that cannot be made: its config (when
/// planning too), and (when applying) what `clevis encrypt` says of it, for each volume the
/// run would format (one open already, or one on a LUKS volume to be reused, is not bound
/// again).
pub(crate) fn check(config: &flint_ignition::Config, mode: Mode) -> Result<(), StageError> {
    let base = JsonPath::root().key("storage").key("luks");
    // A binding several volumes share is tried once (a TPM2 seal is seconds).
    let mut tried = Vec::new();
    for (i, l) in config.storage.luks.iter().enumerate() {
        let entry = base.index(i);
        let Some(b) = binding(l, &entry)? else {
            continue;
        };
        if tried.contains(&b) {
            continue;
        }
        let open = Path::new("/dev/mapper").join(&l.name).exists();
        let reused = l.wipe_volume != Some(true)
            && (l.device.as_deref())
                .and_then(devices::resolve_now)
                .and_then(|d| probe::probe(&d).ok().flatten())
                .is_some_and(|f| f.kind == "crypto_LUKS");
        if mode.applies() && !open && !reused {
            super::clevis::try_binding(l, &b, &entry)?;
            tried.push(b);
        }
    }
    Ok(())
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
                "format LUKS2 volume {} on {raw}{} (device not present yet)",
                l.name,
                bound_with(l)
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
        format!(
            "format LUKS2 volume {} on {}{what}{}",
            l.name,
            dev.display(),
            bound_with(l)
        ),
    ));
    if !cx.mode.applies() {
        return Ok(());
    }
    format(cx, l, &dev, found.is_some() && wipe, key, entry)
}

/// An existing volume the config keeps: it must be the one asked for and open with the known
/// key, or through its Clevis binding when the config binds it; it is opened (when applying)
/// and reused.
fn reuse(
    cx: &Job,
    l: &Luks,
    dev: &Path,
    f: &probe::Found,
    key: Option<Vec<u8>>,
    entry: &JsonPath,
    out: &mut Outcome,
) -> Result<(), StageError> {
    let replace = |what: String| {
        fail(
            entry.clone(),
            format!(
                "{} holds a LUKS volume {what}; set wipeVolume to replace it",
                dev.display()
            ),
        )
    };
    if let Some(want) = l.label.as_ref().filter(|w| **w != f.label) {
        return Err(replace(format!(
            "labelled {:?}, the config wants {want:?}",
            f.label
        )));
    }
    if let Some(want) = l
        .uuid
        .as_ref()
        .filter(|w| !probe::same_uuid("luks", w, &f.uuid))
    {
        return Err(replace(format!(
            "with UUID {}, the config wants {want}",
            f.uuid
        )));
    }
    let how = match key {
        Some(key) => {
            let keyfile = key_file(cx, l, &key, entry)?;
            let r = reuse_with_key(cx, l, dev, &keyfile, entry);
            let _ = std::fs::remove_file(&keyfile);
            r?;
            "opened"
        }
        None if binding(l, entry)?.is_some() && super::clevis::is_bound(dev) => {
            if cx.mode.applies() {
                (super::clevis::unlock(l, dev)).map_err(|e| {
                    replace(format!(
                        "bound with Clevis that Clevis could not open ({e})"
                    ))
                })?;
                super::device(&format!("/dev/mapper/{}", l.name), entry)?;
            }
            "opened through its Clevis binding"
        }
        None => {
            return Err(replace(format!(
                "but its generated key is not known here (not in {} or the root's /{KEY_DIR})",
                cx.state_dir.join("luks").display()
            )));
        }
    };
    out.notes.push(format!(
        "LUKS volume {} on {}: {}",
        l.name,
        dev.display(),
        if cx.mode.applies() {
            format!("{how} and reused")
        } else {
            format!("would be {how} and reused")
        }
    ));
    Ok(())
}

/// Reuses a volume the key in `keyfile` must open.
fn reuse_with_key(
    cx: &Job,
    l: &Luks,
    dev: &Path,
    keyfile: &Path,
    entry: &JsonPath,
) -> Result<(), StageError> {
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
        return Err(fail(
            entry.clone(),
            format!(
                "{} holds a LUKS volume the key does not open ({e}); set wipeVolume to replace it",
                dev.display()
            ),
        ));
    }
    if cx.mode.applies() {
        open(l, dev, keyfile, entry)?;
    }
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
    let generated = key.is_none();
    let kept = kept_key(&cx.state_dir, &l.name);
    let key = match key {
        Some(k) => k,
        None => {
            let mut k = vec![0u8; KEY_BYTES];
            crate::system::random_bytes(&mut k);
            // Text, as upstream's: clevis reads the key it binds with as a passphrase.
            let k = crate::fetch::hex(&k).into_bytes();
            // Kept before formatting: a run cut short after luksFormat can still open it.
            let dir = kept.parent().unwrap_or(&cx.state_dir);
            std::fs::create_dir_all(dir)
                .map_err(|e| fail(entry.clone(), format!("{}: {e}", dir.display())))?;
            crate::write::write_atomic(&kept, &k, 0o600)
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
        open(l, dev, &keyfile, entry)?;
        let Some(b) = binding(l, entry)? else {
            return Ok(());
        };
        super::clevis::bind(l, &b, dev, &keyfile, generated, entry)?;
        // Removed from the volume, the generated key opens nothing: not kept.
        if generated {
            let _ = std::fs::remove_file(&kept);
        }
        Ok(())
    })();
    let _ = std::fs::remove_file(&keyfile);
    result
}

/// How the plan says the volume is bound: nothing, or Clevis and its pins.
fn bound_with(l: &Luks) -> String {
    let c = &l.clevis;
    if !c.is_present() {
        return String::new();
    }
    if let Some(pin) = c.custom.pin.as_deref().filter(|p| !p.is_empty()) {
        return format!(" bound with Clevis (pin {pin})");
    }
    let mut pins = Vec::new();
    if c.tpm2 == Some(true) {
        pins.push("TPM2".to_string());
    }
    pins.extend(c.tang.iter().map(|t| format!("Tang {}", t.url)));
    let t = c.threshold.filter(|t| *t > 1);
    match t {
        Some(t) => format!(" bound with Clevis ({t} of {})", pins.join(", ")),
        None => format!(" bound with Clevis ({})", pins.join(", ")),
    }
}

/// The volume's Clevis binding, if it asks for one.
pub(crate) fn binding(
    l: &Luks,
    entry: &JsonPath,
) -> Result<Option<super::clevis::Binding>, StageError> {
    super::clevis::binding(&l.clevis).map_err(|m| fail(entry.key("clevis"), m))
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
        // The flags go into the header, as upstream's: Clevis, which opens the volume on
        // later boots, has no way to pass them.
        "--persistent".into(),
    ];
    if l.discard == Some(true) {
        args.push("--allow-discards".into());
    }
    args.extend(l.open_options.iter().cloned());
    tool::run_with("cryptsetup", &args, &[], tool::dm_env())
        .map_err(|e| fail(entry.clone(), format!("opening {}: {e}", l.name)))?;
    super::device(&format!("/dev/mapper/{}", l.name), entry).map(|_| ())
}

/// The files the root needs for the volumes, as upstream writes them: each key at
/// /etc/luks/NAME (0600), and a line for each volume in /etc/crypttab (0600): `NAME
/// UUID=… KEY luks`, KEY `/etc/luks/NAME`, or `none` for a volume Clevis opens (its
/// generated key is gone), `,_netdev` for one that needs the network to open. Added to the
/// files stage's config so that they are planned, written atomically and verified like the
/// config's own files; the root's own crypttab lines for other volumes are kept. A volume
/// whose key is not known yet (planning before the disks stage ran) is left out.
pub(crate) fn root_files(
    config: &mut flint_ignition::Config,
    fetched: &mut crate::resources::Fetched,
    state_dir: &Path,
    root: &Path,
) {
    let base = JsonPath::root().key("storage").key("luks");
    let mut lines = Vec::new();
    let mut added = Vec::new();
    for (i, l) in config.storage.luks.iter().enumerate() {
        let bound = l.clevis.is_present();
        let key = known_key(fetched, state_dir, root, l, &base.index(i));
        // Bound with a generated key: Clevis alone opens it, nothing to copy.
        let keyed = key.is_some() || (bound && l.key_file.source.is_none());
        if l.cex.is_present() || !keyed {
            continue;
        }
        let dev = l.device.clone().unwrap_or_default();
        let uuid = devices::resolve_now(&dev)
            .and_then(|d| probe::probe(&d).ok().flatten())
            .map(|f| f.uuid)
            .filter(|u| !u.is_empty())
            .or_else(|| l.uuid.clone());
        let source = uuid.map_or(dev, |u| format!("UUID={u}"));
        let net = if l.clevis.needs_network_at_boot() {
            ",_netdev"
        } else {
            ""
        };
        let key_path = match key {
            Some(key) => {
                let p = format!("/{KEY_DIR}/{}", l.name);
                added.push((p.clone(), key, 0o600));
                p
            }
            None => "none".into(),
        };
        lines.push((l.name.clone(), format!("{source} {key_path} luks{net}")));
    }
    if lines.is_empty() {
        return;
    }
    let r = crate::root::Root::new(root.to_path_buf());
    // The keys' directory, 0700 when it is new (one already there is left as it is).
    let dir = format!("/{KEY_DIR}");
    let listed = (config.storage.directories.iter()).any(|d| d.path == dir);
    let exists = (r.resolve_fully(&dir)).is_ok_and(|p| p.host.exists());
    if !added.is_empty() && !listed && !exists {
        config
            .storage
            .directories
            .push(flint_ignition::types::Directory {
                path: dir,
                mode: Some(0o700),
                ..Default::default()
            });
    }
    let crypttab = crypttab(&r, &lines);
    added.push(("/etc/crypttab".into(), crypttab.into_bytes(), 0o600));
    add_files(config, fetched, added);
}

/// The root's crypttab with a line for each of `lines` (name, the rest): a line of the same
/// name replaced, the others kept, new ones added at the end.
fn crypttab(root: &crate::root::Root, lines: &[(String, String)]) -> String {
    let old = root.read_inside("/etc/crypttab").unwrap_or_default();
    let mut out = String::new();
    let mut done = vec![false; lines.len()];
    for line in old.lines() {
        let name = line
            .split_whitespace()
            .next()
            .filter(|n| !n.starts_with('#'));
        match name.and_then(|n| lines.iter().position(|(m, _)| m == n)) {
            Some(k) if !done[k] => {
                out += &format!("{} {}\n", lines[k].0, lines[k].1);
                done[k] = true;
            }
            Some(_) => {}
            None => out += &format!("{line}\n"),
        }
    }
    for (k, (name, rest)) in lines.iter().enumerate() {
        if !done[k] {
            out += &format!("{name} {rest}\n");
        }
    }
    out
}

/// Adds `files` (path, contents, mode) to the config as files it writes, unless the config
/// writes that path itself.
fn add_files(
    config: &mut flint_ignition::Config,
    fetched: &mut crate::resources::Fetched,
    files: Vec<(String, Vec<u8>, i64)>,
) {
    use flint_ignition::types::{File, Resource};
    let existing: Vec<String> = (config.storage.files.iter())
        .map(|f| f.path.clone())
        .collect();
    let at = JsonPath::root().key("storage").key("files");
    for (path, data, mode) in files {
        if existing.contains(&path) {
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
        fetched.add(at.index(i).key("contents"), data);
        config.storage.files.push(f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crypttab_keeps_other_volumes_and_replaces_its_own() {
        let dir = std::env::temp_dir().join(format!("flint-crypttab-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("etc")).unwrap();
        let root = crate::root::Root::new(dir.clone());
        let ours = [
            ("var".to_string(), "UUID=1 none luks,_netdev".to_string()),
            ("srv".to_string(), "UUID=2 /etc/luks/srv luks".to_string()),
        ];
        assert_eq!(
            crypttab(&root, &ours),
            "var UUID=1 none luks,_netdev\nsrv UUID=2 /etc/luks/srv luks\n"
        );
        std::fs::write(
            dir.join("etc/crypttab"),
            "# comment\nswap /dev/sdb1 /dev/urandom swap\nvar UUID=0 /etc/luks/var luks\n",
        )
        .unwrap();
        assert_eq!(
            crypttab(&root, &ours),
            "# comment\nswap /dev/sdb1 /dev/urandom swap\nvar UUID=1 none luks,_netdev\nsrv UUID=2 /etc/luks/srv luks\n"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
