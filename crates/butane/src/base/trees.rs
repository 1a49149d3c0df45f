//! `storage.trees`: a directory under the files directory copied into the config, file by
//! file and link by link. Entries the user wrote for the same paths (without contents or
//! target) are completed instead of duplicated.

use super::local::{NO_FILES_DIR, go_io_error};
use super::types as bu;
use super::{Translator, group, user};
use flint_go::tree::JsonPath;
use flint_ignition::types as ig;
use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// A data URL and the compression to write with it.
type Encoded = (String, Option<String>);

const EXISTS: &str = "matching filesystem node has existing contents or different type";

enum Found {
    Dir {
        path: String,
    },
    File {
        path: String,
        source: PathBuf,
        executable: bool,
    },
    Link {
        path: String,
        target: String,
    },
}

/// Walks `dir` in byte-wise name order, depth first, not following symlinks; directories
/// are listed before what they hold.
fn walk(dir: &Path, dest: &str, out: &mut Vec<Found>, errors: &mut Vec<String>) {
    let mut entries: Vec<(Vec<u8>, PathBuf)> = match std::fs::read_dir(dir) {
        Ok(rd) => rd
            .filter_map(Result::ok)
            .map(|e| (e.file_name().into_encoded_bytes(), e.path()))
            .collect(),
        Err(e) => {
            errors.push(go_io_error("open", dir, &e));
            return;
        }
    };
    entries.sort();
    for (name, path) in entries {
        let name = flint_go::bytes::go_lossy(&name).into_owned();
        let target_path = if dest.ends_with('/') {
            format!("{dest}{name}")
        } else {
            format!("{dest}/{name}")
        };
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(m) => m,
            Err(e) => {
                errors.push(go_io_error("lstat", &path, &e));
                continue;
            }
        };
        let ft = meta.file_type();
        if ft.is_dir() {
            out.push(Found::Dir {
                path: target_path.clone(),
            });
            walk(&path, &target_path, out, errors);
        } else if ft.is_symlink() {
            match std::fs::read_link(&path) {
                Ok(t) => out.push(Found::Link {
                    path: target_path,
                    target: t.to_string_lossy().into_owned(),
                }),
                Err(e) => errors.push(go_io_error("readlink", &path, &e)),
            }
        } else if ft.is_file() {
            out.push(Found::File {
                path: target_path,
                source: path,
                executable: meta.permissions().mode() & 0o111 != 0,
            });
        } else {
            errors.push("trees may only contain files, directories, and symlinks".into());
        }
    }
}

pub(super) fn apply(t: &mut Translator<'_>, src: &bu::Config, cfg: &mut ig::Config) {
    let trees_src = JsonPath::root().key("storage").key("trees");
    let files_out = JsonPath::root().key("storage").key("files");
    let links_out = JsonPath::root().key("storage").key("links");
    for (i, tree) in src.storage.trees.iter().enumerate() {
        let at = trees_src.index(i);
        let Some(local) = tree.local.as_deref() else {
            continue;
        };
        if t.set.files.dir.is_none() {
            t.error(at, NO_FILES_DIR);
            return;
        }
        let root = match t.set.files.resolve(local) {
            Ok(r) => r,
            Err(e) => {
                t.error(at, e);
                continue;
            }
        };
        match std::fs::metadata(&root) {
            Err(e) => {
                t.error(at, go_io_error("stat", &root, &e));
                continue;
            }
            Ok(m) if !m.is_dir() => {
                t.error(at, "root of tree must be a directory");
                continue;
            }
            Ok(_) => {}
        }
        let dest = tree
            .path
            .as_deref()
            .filter(|p| !p.is_empty())
            .unwrap_or("/");
        let dest = flint_ignition::validate::paths::clean(dest);
        let mut errors = Vec::new();
        // Upstream's walk does not follow the root either: a root that is a link to a
        // directory is that link, at the tree's path, and nothing below it.
        let root_link = std::fs::read_link(&root).ok();
        let mut found = Vec::new();
        match root_link {
            Some(target) => found.push(Found::Link {
                path: dest.clone(),
                target: target.to_string_lossy().into_owned(),
            }),
            None => {
                found.push(Found::Dir { path: dest.clone() });
                walk(&root, &dest, &mut found, &mut errors);
            }
        }
        // Directories become entries only when the tree asks for an owner or a mode.
        let owner = (user(&tree.user), group(&tree.group));
        let make_dirs = tree.dir_mode.is_some() || !ig::is_zero(&owner.0) || !ig::is_zero(&owner.1);
        if !make_dirs {
            found.retain(|f| !matches!(f, Found::Dir { .. }));
        }
        for e in errors {
            t.error(at.clone(), e);
        }

        let mut file_index: HashMap<String, usize> = cfg
            .storage
            .files
            .iter()
            .enumerate()
            .map(|(k, f)| (f.path.clone(), k))
            .collect();
        let mut link_index: HashMap<String, usize> = cfg
            .storage
            .links
            .iter()
            .enumerate()
            .map(|(k, l)| (l.path.clone(), k))
            .collect();

        // Read and encode the files on every core (an entry the user wrote for the path keeps
        // its compression); place them in walk order below.
        let files_now = &cfg.storage.files;
        let set = t.set;
        let encode = |f: &Found| match f {
            Found::File { source, path, .. } => Some(
                std::fs::read(source)
                    .map_err(|e| go_io_error("open", source, &e))
                    .map(|data| {
                        let user = file_index
                            .get(path)
                            .and_then(|&k| files_now[k].contents.compression.as_deref());
                        set.data_url(&data, user)
                    }),
            ),
            Found::Link { .. } | Found::Dir { .. } => None,
        };
        let encoded: Vec<Option<Result<Encoded, String>>> =
            flint_ignition::par::map_indexed(&found, |(_, f)| encode(f));
        let mut dirs: std::collections::HashSet<String> = cfg
            .storage
            .directories
            .iter()
            .map(|d| d.path.clone())
            .collect();

        let dirs_out = JsonPath::root().key("storage").key("directories");
        for (f, data) in found.into_iter().zip(encoded) {
            match f {
                Found::Dir { path } => {
                    if file_index.contains_key(&path)
                        || link_index.contains_key(&path)
                        || dirs.contains(&path)
                    {
                        t.error(at.clone(), EXISTS);
                        continue;
                    }
                    let k = cfg.storage.directories.len();
                    cfg.storage.directories.push(ig::Directory {
                        group: owner.1.clone(),
                        path: path.clone(),
                        user: owner.0.clone(),
                        mode: Some(tree.dir_mode.unwrap_or(0o755)),
                        ..Default::default()
                    });
                    if k == 0 {
                        t.map.add_exact(dirs_out.clone(), at.clone());
                    }
                    t.map.add_exact(dirs_out.index(k), at.clone());
                    dirs.insert(path);
                }
                Found::File {
                    path, executable, ..
                } => {
                    let data = match data {
                        Some(Ok(d)) => d,
                        Some(Err(e)) => {
                            t.error(at.clone(), e);
                            continue;
                        }
                        None => continue,
                    };
                    if link_index.contains_key(&path) || dirs.contains(&path) {
                        t.error(at.clone(), EXISTS);
                        continue;
                    }
                    let k = match file_index.get(&path) {
                        Some(&k) => {
                            if cfg.storage.files[k]
                                .contents
                                .source
                                .as_deref()
                                .is_some_and(|s| !s.is_empty())
                            {
                                t.error(at.clone(), EXISTS);
                                continue;
                            }
                            t.map
                                .add_exact(files_out.index(k).key("contents"), at.clone());
                            k
                        }
                        None => {
                            let k = cfg.storage.files.len();
                            cfg.storage.files.push(ig::File {
                                group: owner.1.clone(),
                                path: path.clone(),
                                user: owner.0.clone(),
                                ..Default::default()
                            });
                            file_index.insert(path, k);
                            if k == 0 {
                                t.map.add_exact(files_out.clone(), at.clone());
                            }
                            t.map.add_exact(files_out.index(k), at.clone());
                            k
                        }
                    };
                    let file = &mut cfg.storage.files[k];
                    let (url, compression) = data;
                    file.contents.source = Some(url);
                    file.contents.compression = compression;
                    if file.mode.is_none() {
                        t.map.add_exact(files_out.index(k).key("mode"), at.clone());
                        let default = if executable { 0o755 } else { 0o644 };
                        file.mode = Some(tree.file_mode.unwrap_or(default));
                    }
                }
                Found::Link { path, target } => {
                    if file_index.contains_key(&path) || dirs.contains(&path) {
                        t.error(at.clone(), EXISTS);
                        continue;
                    }
                    let k = match link_index.get(&path) {
                        Some(&k) => {
                            if cfg.storage.links[k]
                                .target
                                .as_deref()
                                .is_some_and(|s| !s.is_empty())
                            {
                                t.error(at.clone(), EXISTS);
                                continue;
                            }
                            t.map
                                .add_exact(links_out.index(k).key("target"), at.clone());
                            k
                        }
                        None => {
                            let k = cfg.storage.links.len();
                            cfg.storage.links.push(ig::Link {
                                group: owner.1.clone(),
                                path: path.clone(),
                                user: owner.0.clone(),
                                ..Default::default()
                            });
                            link_index.insert(path, k);
                            if k == 0 {
                                t.map.add_exact(links_out.clone(), at.clone());
                            }
                            t.map.add_exact(links_out.index(k), at.clone());
                            k
                        }
                    };
                    cfg.storage.links[k].target = Some(target);
                }
            }
        }
    }
}
