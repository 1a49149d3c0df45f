//! Carrying out a planned action on the root.

use super::*;
pub(crate) fn remove_any(host: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(host) {
        Ok(m) if m.is_dir() => {
            super::super::refusals::guard(host)?;
            std::fs::remove_dir_all(host)
        }
        Ok(_) => std::fs::remove_file(host),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

pub(crate) fn chown(host: &Path, uid: Option<u32>, gid: Option<u32>) -> std::io::Result<()> {
    std::os::unix::fs::lchown(host, uid, gid)
}

/// Carries out one action; files are written atomically (a temporary file in the same
/// directory with mode and owner set, then renamed over).
pub(crate) fn execute(a: &Action, root: &Root) -> std::io::Result<()> {
    let host: PathBuf = root.host(&a.path);
    if a.change.replaces() {
        root.forget();
    }
    match &a.change {
        Change::CreateParent => {
            let inherited = setgid_parent(&host);
            std::fs::create_dir(&host)?;
            let mode = if inherited.is_some() { 0o2755 } else { 0o755 };
            std::fs::set_permissions(&host, std::fs::Permissions::from_mode(mode))?;
            chown(&host, Some(0), Some(inherited.unwrap_or(0)))
        }
        Change::WriteFile {
            data,
            mode,
            uid,
            gid,
            replace,
        } => {
            // A leftover of an interrupted run is simply overwritten.
            let (tmp, mut f) = crate::write::open_temp(&host, 0o600)?;
            let staged = (|| {
                // Owner and mode through the open file, not the path: fewer lookups.
                data.write_to(&mut f)?;
                std::os::unix::fs::fchown(&f, Some(*uid), Some(*gid))?;
                // After the owner: chown clears the set-id bits.
                f.set_permissions(std::fs::Permissions::from_mode(*mode))?;
                drop(f);
                if *replace && std::fs::symlink_metadata(&host).is_ok_and(|m| m.is_dir()) {
                    super::super::refusals::guard(&host)?;
                    std::fs::remove_dir_all(&host)?;
                }
                std::fs::rename(&tmp, &host)
            })();
            // A failed write (a full disk) leaves nothing behind, not even the temporary file.
            if staged.is_err() {
                let _ = std::fs::remove_file(&tmp);
            }
            staged
        }
        Change::AppendFile {
            data,
            mode,
            uid,
            gid,
        } => {
            use std::io::Seek;
            use std::os::unix::fs::OpenOptionsExt;
            // What stands at the path was planned for: a link found there now is not followed.
            // At the end by position, not O_APPEND, which the kernel's copy between files
            // (a spooled resource) refuses.
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&host)?;
            f.seek(std::io::SeekFrom::End(0))?;
            data.write_to(&mut f)?;
            std::os::unix::fs::fchown(&f, Some(*uid), Some(*gid))?;
            f.set_permissions(std::fs::Permissions::from_mode(*mode))
        }
        Change::SetAttrs { mode, uid, gid } => {
            if uid.is_some() || gid.is_some() {
                chown(&host, *uid, *gid)?;
            }
            if let Some(m) = mode {
                std::fs::set_permissions(&host, std::fs::Permissions::from_mode(*m))?;
            }
            Ok(())
        }
        Change::CreateDir {
            mode,
            uid,
            gid,
            replace,
        } => {
            if *replace {
                remove_any(&host)?;
            }
            std::fs::create_dir(&host)?;
            std::fs::set_permissions(&host, std::fs::Permissions::from_mode(*mode))?;
            chown(&host, Some(*uid), Some(*gid))
        }
        Change::Symlink {
            target,
            uid,
            gid,
            replace,
        } => {
            if *replace {
                remove_any(&host)?;
            }
            std::os::unix::fs::symlink(target, &host)?;
            chown(&host, Some(*uid), Some(*gid))
        }
        Change::Hardlink { target, replace } => {
            if *replace {
                remove_any(&host)?;
            }
            std::fs::hard_link(root.host(target), &host)
        }
        Change::Remove => remove_any(&host),
        Change::Append { data, .. } => {
            use std::io::Write;
            use std::os::unix::fs::OpenOptionsExt;
            // What stands at the path was planned for (a regular file, or the preset file
            // reached inside the root): a link found there now is not followed.
            let mut f = std::fs::OpenOptions::new()
                .append(true)
                .create(true)
                .mode(0o644)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&host)?;
            f.write_all(data)
        }
        Change::Disable => disable_unit(&root.dir, &a.path),
    }
}

/// Actions that make `path` a regular file with `data` (0644, root:root).
pub(crate) fn ensure_file(
    root: &Root,
    planned: &mut HashSet<String>,
    made: &HashMap<String, Made>,
    entry: &JsonPath,
    path: &str,
    data: &[u8],
    first_run: bool,
) -> Result<Vec<Action>, String> {
    let r = root.resolve(path)?;
    // Upstream renames the new contents into place, which a directory there refuses;
    // nothing under it is removed.
    no_dir_on_the_way(&r, made, false)?;
    let mut out = parents(planned, entry, &r.missing);
    let current = match observe(&r.host) {
        (Kind::File, Some(m)) => std::fs::read(&r.host)
            .ok()
            // (A file with other names is written anew, as upstream writes it: they keep
            // the old one.)
            .filter(|_| m.permissions().mode() & 0o7777 == 0o644 && m.uid() == 0 && m.gid() == 0)
            .filter(|_| !first_run || m.nlink() == 1),
        _ => None,
    };
    if current.as_deref() != Some(data) {
        let data = data.to_vec().into();
        let replace = !matches!(observe(&r.host).0, Kind::None);
        out.push(Action {
            entry: entry.clone(),
            path: r.inner,
            change: Change::WriteFile {
                data,
                mode: 0o644,
                uid: 0,
                gid: 0,
                replace,
            },
        });
    }
    Ok(out)
}

/// The `.wants`/`.requires` links named `unit` under /etc/systemd/system of the root.
pub(crate) fn enablement_links(root: &Path, unit: &str) -> Vec<PathBuf> {
    let dir = root.join("etc/systemd/system");
    let Ok(rd) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter(|e| {
            let n = e.file_name().to_string_lossy().into_owned();
            n.ends_with(".wants") || n.ends_with(".requires")
        })
        .map(|e| e.path().join(unit))
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink()))
        .collect()
}

/// Removes the enablement links of `unit` (`systemctl --root R disable`, as upstream; without
/// systemctl, the `.wants`/`.requires` links).
pub(crate) fn disable_unit(root: &Path, unit: &str) -> std::io::Result<()> {
    match std::process::Command::new("systemctl")
        .arg("--root")
        .arg(root)
        .args(["disable", unit])
        .output()
    {
        Ok(out) if out.status.success() => Ok(()),
        Ok(out) => Err(std::io::Error::other(format!(
            "systemctl disable {unit}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))),
        Err(_) => {
            for l in enablement_links(root, unit) {
                std::fs::remove_file(l)?;
            }
            Ok(())
        }
    }
}
