//! `storage.trees`: a directory under the files directory copied into the config, file by
//! file and link by link. Entries the user wrote for the same paths (without contents or
//! target) are completed instead of duplicated.

use super::local::{NO_FILES_DIR, go_io_error};
use super::types as bu;
use super::{Translator, group, user};
use flint_go::tree::JsonPath;
use flint_ignition::types as ig;
use std::collections::{HashMap, HashSet};
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

/// Every tree copied into the config, in order; a tree without a files directory stops
/// the copying.
pub(super) fn apply(t: &mut Translator<'_>, src: &bu::Config, cfg: &mut ig::Config) {
    let trees_src = JsonPath::root().key("storage").key("trees");
    for (i, tree) in src.storage.trees.iter().enumerate() {
        let at = trees_src.index(i);
        let Some(local) = tree.local.as_deref() else {
            continue;
        };
        if t.set.files.dir.is_none() {
            t.error(at, NO_FILES_DIR);
            return;
        }
        let Some(root) = tree_root(t, local, &at) else {
            continue;
        };
        let placing = Placing {
            tree,
            at,
            user: user(&tree.user),
            group: group(&tree.group),
        };
        let found = entries(t, &placing, &root);
        let mut taken = Taken::of(cfg);
        // Read and encode the files on every core (an entry the user wrote for the path
        // keeps its compression); place them in walk order below.
        let set = t.set;
        let encode = |f: &Found| match f {
            Found::File { source, path, .. } => Some(
                std::fs::read(source)
                    .map_err(|e| go_io_error("open", source, &e))
                    .map(|data| {
                        let user = (taken.files.get(path))
                            .and_then(|&k| cfg.storage.files[k].contents.compression.as_deref());
                        set.data_url(&data, user)
                    }),
            ),
            Found::Link { .. } | Found::Dir { .. } => None,
        };
        let encoded: Vec<Option<Result<Encoded, String>>> =
            flint_ignition::par::map_indexed(&found, |(_, f)| encode(f));
        for (f, data) in found.into_iter().zip(encoded) {
            match f {
                Found::Dir { path } => placing.dir(t, cfg, &mut taken, path),
                Found::File {
                    path, executable, ..
                } => match data {
                    Some(Ok(data)) => placing.file(t, cfg, &mut taken, path, executable, data),
                    Some(Err(e)) => t.error(placing.at.clone(), e),
                    None => {}
                },
                Found::Link { path, target } => placing.link(t, cfg, &mut taken, path, target),
            }
        }
    }
}

/// The directory tree `local` names, if it is one (else the reason is reported).
fn tree_root(t: &mut Translator<'_>, local: &str, at: &JsonPath) -> Option<PathBuf> {
    let root = match t.set.files.resolve(local) {
        Ok(r) => r,
        Err(e) => {
            t.error(at.clone(), e);
            return None;
        }
    };
    match std::fs::metadata(&root) {
        Err(e) => {
            t.error(at.clone(), go_io_error("stat", &root, &e));
            None
        }
        Ok(m) if !m.is_dir() => {
            t.error(at.clone(), "root of tree must be a directory");
            None
        }
        Ok(_) => Some(root),
    }
}

/// What the tree at `root` holds, as entries at their destination paths; what could not
/// be read is reported.
fn entries(t: &mut Translator<'_>, placing: &Placing<'_>, root: &Path) -> Vec<Found> {
    let dest = (placing.tree.path.as_deref())
        .filter(|p| !p.is_empty())
        .unwrap_or("/");
    let dest = flint_ignition::validate::paths::clean(dest);
    let mut errors = Vec::new();
    let mut found = Vec::new();
    // Upstream's walk does not follow the root either: a root that is a link to a
    // directory is that link, at the tree's path, and nothing below it.
    match std::fs::read_link(root).ok() {
        Some(target) => found.push(Found::Link {
            path: dest,
            target: target.to_string_lossy().into_owned(),
        }),
        None => {
            found.push(Found::Dir { path: dest.clone() });
            walk(root, &dest, &mut found, &mut errors);
        }
    }
    // Directories become entries only when the tree asks for an owner or a mode.
    let make_dirs = placing.tree.dir_mode.is_some()
        || !ig::is_zero(&placing.user)
        || !ig::is_zero(&placing.group);
    if !make_dirs {
        found.retain(|f| !matches!(f, Found::Dir { .. }));
    }
    for e in errors {
        t.error(placing.at.clone(), e);
    }
    found
}

/// The paths the config has entries for, and where.
struct Taken {
    files: HashMap<String, usize>,
    links: HashMap<String, usize>,
    dirs: HashSet<String>,
}

impl Taken {
    fn of(cfg: &ig::Config) -> Taken {
        let st = &cfg.storage;
        Taken {
            files: (st.files.iter().enumerate())
                .map(|(k, f)| (f.path.clone(), k))
                .collect(),
            links: (st.links.iter().enumerate())
                .map(|(k, l)| (l.path.clone(), k))
                .collect(),
            dirs: st.directories.iter().map(|d| d.path.clone()).collect(),
        }
    }
}

/// One tree being placed in the config: where the source names it, and the owner its
/// entries get.
struct Placing<'a> {
    tree: &'a bu::Tree,
    at: JsonPath,
    user: ig::NodeUser,
    group: ig::NodeGroup,
}

/// A new entry at index `k` of output list `list` comes from the tree (and so does the
/// list, when it is the first).
fn map_new(t: &mut Translator<'_>, list: &'static str, k: usize, at: &JsonPath) {
    let out = JsonPath::root().key("storage").key(list);
    if k == 0 {
        t.map.add_exact(out.clone(), at.clone());
    }
    t.map.add_exact(out.index(k), at.clone());
}

impl Placing<'_> {
    fn dir(&self, t: &mut Translator<'_>, cfg: &mut ig::Config, taken: &mut Taken, path: String) {
        if taken.files.contains_key(&path)
            || taken.links.contains_key(&path)
            || taken.dirs.contains(&path)
        {
            t.error(self.at.clone(), EXISTS);
            return;
        }
        let k = cfg.storage.directories.len();
        cfg.storage.directories.push(ig::Directory {
            group: self.group.clone(),
            path: path.clone(),
            user: self.user.clone(),
            mode: Some(self.tree.dir_mode.unwrap_or(0o755)),
            ..Default::default()
        });
        map_new(t, "directories", k, &self.at);
        taken.dirs.insert(path);
    }

    /// A file with its contents, completing the user's entry for the path if there is
    /// one without contents.
    fn file(
        &self,
        t: &mut Translator<'_>,
        cfg: &mut ig::Config,
        taken: &mut Taken,
        path: String,
        executable: bool,
        (url, compression): Encoded,
    ) {
        if taken.links.contains_key(&path) || taken.dirs.contains(&path) {
            t.error(self.at.clone(), EXISTS);
            return;
        }
        let files_out = JsonPath::root().key("storage").key("files");
        let k = match taken.files.get(&path) {
            Some(&k) => {
                let source = cfg.storage.files[k].contents.source.as_deref();
                if source.is_some_and(|s| !s.is_empty()) {
                    t.error(self.at.clone(), EXISTS);
                    return;
                }
                (t.map).add_exact(files_out.index(k).key("contents"), self.at.clone());
                k
            }
            None => {
                let k = cfg.storage.files.len();
                cfg.storage.files.push(ig::File {
                    group: self.group.clone(),
                    path: path.clone(),
                    user: self.user.clone(),
                    ..Default::default()
                });
                taken.files.insert(path, k);
                map_new(t, "files", k, &self.at);
                k
            }
        };
        let file = &mut cfg.storage.files[k];
        file.contents.source = Some(url);
        file.contents.compression = compression;
        if file.mode.is_none() {
            (t.map).add_exact(files_out.index(k).key("mode"), self.at.clone());
            let default = if executable { 0o755 } else { 0o644 };
            file.mode = Some(self.tree.file_mode.unwrap_or(default));
        }
    }

    /// A link with its target, completing the user's entry for the path if there is one
    /// without a target.
    fn link(
        &self,
        t: &mut Translator<'_>,
        cfg: &mut ig::Config,
        taken: &mut Taken,
        path: String,
        target: String,
    ) {
        if taken.files.contains_key(&path) || taken.dirs.contains(&path) {
            t.error(self.at.clone(), EXISTS);
            return;
        }
        let k = match taken.links.get(&path) {
            Some(&k) => {
                let existing = cfg.storage.links[k].target.as_deref();
                if existing.is_some_and(|s| !s.is_empty()) {
                    t.error(self.at.clone(), EXISTS);
                    return;
                }
                let out = JsonPath::root().key("storage").key("links");
                (t.map).add_exact(out.index(k).key("target"), self.at.clone());
                k
            }
            None => {
                let k = cfg.storage.links.len();
                cfg.storage.links.push(ig::Link {
                    group: self.group.clone(),
                    path: path.clone(),
                    user: self.user.clone(),
                    ..Default::default()
                });
                taken.links.insert(path, k);
                map_new(t, "links", k, &self.at);
                k
            }
        };
        cfg.storage.links[k].target = Some(target);
    }
}
