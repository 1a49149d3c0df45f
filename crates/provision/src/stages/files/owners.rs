//! User and group names resolved in the TARGET root's /etc/passwd and /etc/group, never the
//! host's.

use crate::root::Root;
use std::collections::HashMap;

#[derive(Debug, Default, Clone)]
pub(crate) struct Owners {
    users: HashMap<String, u32>,
    groups: HashMap<String, u32>,
}

/// Name to id, as the C library's lookups in the root read the file: leading blanks are
/// skipped, comment lines and lines without a number for the id too, and the first line of
/// a name is the one found.
fn read_db(root: &Root, path: &str, id_field: usize) -> HashMap<String, u32> {
    parse_db(&root.read_inside(path).unwrap_or_default(), id_field)
}

/// The records of a colon-separated account database, their fields, as the C library's
/// lookups read them: blanks before a line are skipped, and comment lines left out.
pub(super) fn records(text: &str) -> impl Iterator<Item = Vec<&str>> {
    (text.lines())
        .map(str::trim_start)
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split(':').collect())
}

fn parse_db(text: &str, id_field: usize) -> HashMap<String, u32> {
    let mut db = HashMap::new();
    for f in records(text) {
        // (The C library reads the id as strtoul does: blanks before it are skipped.)
        let id = f.get(id_field).map(|s| s.trim_start().parse());
        if let (Some(name), Some(Ok(id))) = (f.first(), id) {
            db.entry(name.to_string()).or_insert(id);
        }
    }
    db
}

impl Owners {
    /// Reads the databases of `root`, as a program chrooted into it would (so a link at
    /// `/etc/passwd` never shows the host's).
    pub(crate) fn read(root: &Root) -> Owners {
        Owners {
            users: read_db(root, "/etc/passwd", 2),
            groups: read_db(root, "/etc/group", 2),
        }
    }

    /// The account databases' inner paths in `root` (where their links lead): an entry
    /// written there changes the names later entries find.
    pub(crate) fn databases(root: &Root) -> [Option<String>; 2] {
        ["/etc/passwd", "/etc/group"].map(|p| root.resolve_fully(p).ok().map(|r| r.inner))
    }

    /// As they will be once `text` is the database at `databases()[which]` (planning an
    /// entry that writes it).
    pub(crate) fn with_database(mut self, which: usize, text: &str) -> Owners {
        let db = parse_db(text, 2);
        if which == 0 {
            self.users = db;
        } else {
            self.groups = db;
        }
        self
    }

    /// Users and groups the config will create count as existing when planning, with their
    /// configured ids (or a stand-in until the tools pick one).
    pub(crate) fn with_planned(mut self, cfg: &flint_ignition::Config) -> Owners {
        const UNKNOWN: u32 = u32::MAX - 1;
        // Those the run removes (`shouldExist: false`) are gone by the time names are
        // looked up.
        for g in &cfg.passwd.groups {
            if g.should_exist == Some(false) {
                self.groups.remove(&g.name);
            } else {
                let id = g.gid.map_or(UNKNOWN, |v| v as u32);
                self.groups.entry(g.name.clone()).or_insert(id);
            }
        }
        for u in &cfg.passwd.users {
            if u.should_exist == Some(false) {
                self.users.remove(&u.name);
            } else {
                let id = u.uid.map_or(UNKNOWN, |v| v as u32);
                self.users.entry(u.name.clone()).or_insert(id);
            }
        }
        self
    }

    pub(crate) fn uid(&self, name: &str) -> Result<u32, String> {
        self.users
            .get(name)
            .copied()
            .ok_or_else(|| format!("no user {name:?} in the target's /etc/passwd"))
    }

    pub(crate) fn gid(&self, name: &str) -> Result<u32, String> {
        self.groups
            .get(name)
            .copied()
            .ok_or_else(|| format!("no group {name:?} in the target's /etc/group"))
    }

    pub(crate) fn user_name(&self, uid: u32) -> String {
        self.users
            .iter()
            .find(|(_, v)| **v == uid)
            .map_or_else(|| uid.to_string(), |(k, _)| k.clone())
    }

    pub(crate) fn group_name(&self, gid: u32) -> String {
        self.groups
            .iter()
            .find(|(_, v)| **v == gid)
            .map_or_else(|| gid.to_string(), |(k, _)| k.clone())
    }
}
