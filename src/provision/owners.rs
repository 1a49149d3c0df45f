//! User and group names resolved in the TARGET root's /etc/passwd and /etc/group, never the
//! host's.

use std::collections::HashMap;
use std::path::Path;

#[derive(Debug, Default, Clone)]
pub struct Owners {
    users: HashMap<String, u32>,
    groups: HashMap<String, u32>,
}

fn read_db(path: &Path, id_field: usize) -> HashMap<String, u32> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split(':').collect();
            Some((f.first()?.to_string(), f.get(id_field)?.parse().ok()?))
        })
        .collect()
}

impl Owners {
    /// Reads the databases of the root at `root`.
    pub fn read(root: &Path) -> Owners {
        Owners {
            users: read_db(&root.join("etc/passwd"), 2),
            groups: read_db(&root.join("etc/group"), 2),
        }
    }

    /// Users and groups the config will create count as existing when planning, with their
    /// configured ids (or a stand-in until the tools pick one).
    pub fn with_planned(mut self, cfg: &crate::ignition::Config) -> Owners {
        const UNKNOWN: u32 = u32::MAX - 1;
        for g in &cfg.passwd.groups {
            if g.should_exist != Some(false) {
                let id = g.gid.map_or(UNKNOWN, |v| v as u32);
                self.groups.entry(g.name.clone()).or_insert(id);
            }
        }
        for u in &cfg.passwd.users {
            if u.should_exist != Some(false) {
                let id = u.uid.map_or(UNKNOWN, |v| v as u32);
                self.users.entry(u.name.clone()).or_insert(id);
            }
        }
        self
    }

    pub fn uid(&self, name: &str) -> Result<u32, String> {
        self.users
            .get(name)
            .copied()
            .ok_or_else(|| format!("no user {name:?} in the target's /etc/passwd"))
    }

    pub fn gid(&self, name: &str) -> Result<u32, String> {
        self.groups
            .get(name)
            .copied()
            .ok_or_else(|| format!("no group {name:?} in the target's /etc/group"))
    }

    pub fn user_name(&self, uid: u32) -> String {
        self.users
            .iter()
            .find(|(_, v)| **v == uid)
            .map_or_else(|| uid.to_string(), |(k, _)| k.clone())
    }

    pub fn group_name(&self, gid: u32) -> String {
        self.groups
            .iter()
            .find(|(_, v)| **v == gid)
            .map_or_else(|| gid.to_string(), |(k, _)| k.clone())
    }
}
