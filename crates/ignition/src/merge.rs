//! Merging a child config into a parent, with upstream Ignition's rules:
//!
//! - optional values the child sets replace the parent's; required ones come from the child;
//! - nested objects merge field by field;
//! - lists merge by identity (paths, names, devices, partition numbers or labels, sources,
//!   string values): a matching entry merges in place, new child entries are appended;
//! - files, directories and links share one identity (the path): a child entry of one kind
//!   removes the parent's entry of another kind with the same path;
//! - lists of command options (`append`, mkfs/mdadm/cryptsetup options, mount options) are
//!   simply appended;
//! - a child HTTP header without a value removes the parent's header of that name.

use super::types::*;
use std::collections::{HashMap, HashSet};

/// A list entry's identity for merging.
pub trait Keyed {
    fn key(&self) -> String;
}

macro_rules! keyed {
    ($($t:ty => |$s:ident| $e:expr),* $(,)?) => {$(
        impl Keyed for $t {
            fn key(&self) -> String {
                let $s = self;
                $e
            }
        }
    )*};
}

keyed! {
    String => |s| s.clone(),
    Resource => |r| r.source.clone().unwrap_or_default(),
    HttpHeader => |h| h.name.clone(),
    PasswdUser => |u| u.name.clone(),
    PasswdGroup => |g| g.name.clone(),
    Disk => |d| d.device.clone(),
    Partition => |p| if p.number != 0 {
        format!("number:{}", p.number)
    } else {
        p.label.as_ref().map(|l| format!("label:{l}")).unwrap_or_default()
    },
    Filesystem => |f| f.device.clone(),
    Raid => |r| r.name.clone(),
    Luks => |l| l.name.clone(),
    Tang => |t| t.url.clone(),
    Unit => |u| u.name.clone(),
    Dropin => |d| d.name.clone(),
    File => |f| f.path.clone(),
    Directory => |d| d.path.clone(),
    Link => |l| l.path.clone(),
}

/// Merging two values of one type.
trait Merge {
    fn merge(self, child: Self) -> Self;
}

fn opt<T>(parent: Option<T>, child: Option<T>) -> Option<T> {
    child.or(parent)
}

/// The keys of the child's sibling lists that share an identity with a list (files,
/// directories and links share the path; the two kernel argument lists the argument), split
/// by whether the sibling comes before or after the list in upstream's struct.
#[derive(Default)]
pub struct Siblings<'a> {
    pub earlier: HashSet<&'a str>,
    pub later: HashSet<&'a str>,
}

/// Where each entry of a merged list comes from, as upstream's merge places them: (parent
/// index, child index). A parent entry merges with the child's last entry of its key (upstream
/// indexes the child's entries by key, the last one kept); it goes if the last entry of its
/// key in the shared identity is in a sibling list (a sibling after the list always comes
/// later; one before it only when the list itself has no such key). The child's entries
/// whose key the parent has are then left out, the others appended in order: duplicates in
/// the child collapse into the parent's entry.
pub fn placement(
    parent: &[&str],
    child: &[&str],
    siblings: &Siblings,
) -> Vec<(Option<usize>, Option<usize>)> {
    let last: HashMap<&str, usize> = child.iter().enumerate().map(|(j, k)| (*k, j)).collect();
    let parent_keys: HashSet<&str> = parent.iter().copied().collect();
    let mut out = Vec::with_capacity(parent.len() + child.len());
    for (p, key) in parent.iter().enumerate() {
        if siblings.later.contains(key) {
            continue;
        }
        match last.get(key) {
            Some(&j) => out.push((Some(p), Some(j))),
            None if siblings.earlier.contains(key) => {}
            None => out.push((Some(p), None)),
        }
    }
    out.extend(
        (child.iter().enumerate())
            .filter(|(_, k)| !parent_keys.contains(*k))
            .map(|(j, _)| (None, Some(j))),
    );
    out
}

pub fn strs(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

/// Keyed list merge (see `placement`).
fn list<T: Keyed + Merge + Clone>(parent: Vec<T>, child: Vec<T>, siblings: &Siblings) -> Vec<T> {
    list_with(parent, child, siblings, |p, c| Some(p.merge(c)))
}

/// Keyed list merge where merging two entries may leave none.
fn list_with<T: Keyed + Clone>(
    parent: Vec<T>,
    child: Vec<T>,
    siblings: &Siblings,
    merge: impl Fn(T, T) -> Option<T>,
) -> Vec<T> {
    if parent.is_empty() {
        return child;
    }
    let (pk, ck): (Vec<String>, Vec<String>) = (
        parent.iter().map(Keyed::key).collect(),
        child.iter().map(Keyed::key).collect(),
    );
    let places = placement(&strs(&pk), &strs(&ck), siblings);
    // A child entry is taken by its last use and cloned before (parents sharing a key).
    let mut uses = vec![0usize; child.len()];
    for (_, c) in &places {
        if let Some(j) = c {
            uses[*j] += 1;
        }
    }
    let mut parent: Vec<Option<T>> = parent.into_iter().map(Some).collect();
    let mut child: Vec<Option<T>> = child.into_iter().map(Some).collect();
    let mut take_child = |j: usize| {
        uses[j] -= 1;
        if uses[j] == 0 {
            child[j].take().expect("taken by its last use")
        } else {
            child[j].clone().expect("not yet taken")
        }
    };
    let mut out = Vec::with_capacity(places.len());
    for (p, c) in places {
        let p = p.map(|p| parent[p].take().expect("each parent entry placed once"));
        match (p, c) {
            (Some(p), Some(j)) => out.extend(merge(p, take_child(j))),
            (Some(p), None) => out.push(p),
            (None, Some(j)) => out.push(take_child(j)),
            (None, None) => {}
        }
    }
    out
}

impl Merge for String {
    fn merge(self, child: Self) -> Self {
        child
    }
}

macro_rules! merge_struct {
    ($t:ident { $($opt:ident),* ; $($req:ident),* ; $($nested:ident),* ; $($keyed:ident),* ; $($append:ident),* }) => {
        impl Merge for $t {
            #[allow(unused_variables)]
            fn merge(self, c: Self) -> Self {
                $t {
                    $($opt: opt(self.$opt, c.$opt),)*
                    $($req: c.$req,)*
                    $($nested: self.$nested.merge(c.$nested),)*
                    $($keyed: list(self.$keyed, c.$keyed, &Siblings::default()),)*
                    $($append: [self.$append, c.$append].concat(),)*
                }
            }
        }
    };
}

merge_struct!(Ignition { ; version ; config, proxy, security, timeouts ; ; });
merge_struct!(IgnitionConfig { ; ; replace ; merge ; });
merge_struct!(Proxy { http_proxy, https_proxy ; ; ; no_proxy ; });
merge_struct!(Security { ; ; tls ; ; });
merge_struct!(Tls { ; ; ; certificate_authorities ; });
merge_struct!(Timeouts { http_response_headers, http_total ; ; ; ; });
merge_struct!(Verification { hash ; ; ; ; });
merge_struct!(Passwd { ; ; ; groups, users ; });
merge_struct!(PasswdGroup { gid, password_hash, should_exist, system ; name ; ; ; });
merge_struct!(PasswdUser {
    gecos, home_dir, no_create_home, no_log_init, no_user_group, password_hash, primary_group,
    shell, should_exist, system, uid ; name ; ; groups, ssh_authorized_keys ;
});
merge_struct!(Disk { wipe_table ; device ; ; partitions ; });
merge_struct!(Partition {
    guid, label, resize, should_exist, size_mib, start_mib, type_guid, wipe_partition_entry ;
    number ; ; ;
});
merge_struct!(Raid { level, spares ; name ; ; devices ; options });
merge_struct!(Filesystem {
    format, label, path, uuid, wipe_filesystem ; device ; ; ; mount_options, options
});
merge_struct!(Luks {
    device, discard, label, uuid, wipe_volume ; name ; cex, clevis, key_file ; open_options ; options
});
merge_struct!(Cex { enabled ; ; ; ; });
merge_struct!(Clevis { threshold, tpm2 ; ; custom ; tang ; });
merge_struct!(ClevisCustom { config, needs_network, pin ; ; ; ; });
merge_struct!(Tang { thumbprint, advertisement ; url ; ; ; });
merge_struct!(NodeUser { id, name ; ; ; ; });
merge_struct!(NodeGroup { id, name ; ; ; ; });
merge_struct!(File { overwrite, mode ; path ; group, user, contents ; ; append });
merge_struct!(Directory { overwrite, mode ; path ; group, user ; ; });
merge_struct!(Link { overwrite, hard, target ; path ; group, user ; ; });
merge_struct!(Systemd { ; ; ; units ; });
merge_struct!(Unit { contents, enabled, mask ; name ; ; dropins ; });
merge_struct!(Dropin { contents ; name ; ; ; });

impl Merge for HttpHeader {
    fn merge(self, c: Self) -> Self {
        HttpHeader {
            name: c.name,
            value: opt(self.value, c.value),
        }
    }
}

impl Merge for Resource {
    fn merge(self, c: Self) -> Self {
        // A child header without a value removes the parent's header of that name.
        let headers = list_with(
            self.http_headers,
            c.http_headers,
            &Siblings::default(),
            |p, c| c.value.is_some().then(|| p.merge(c)),
        );
        Resource {
            compression: opt(self.compression, c.compression),
            http_headers: headers,
            source: opt(self.source, c.source),
            verification: self.verification.merge(c.verification),
        }
    }
}

impl Merge for KernelArguments {
    fn merge(self, c: Self) -> Self {
        // One identity across both lists: an argument the child lists as one kind removes
        // the parent's listing of it as the other.
        let exist: HashSet<&str> = strs(&c.should_exist).into_iter().collect();
        let not_exist: HashSet<&str> = strs(&c.should_not_exist).into_iter().collect();
        let should_exist = list(
            self.should_exist,
            c.should_exist.clone(),
            &Siblings {
                earlier: HashSet::new(),
                later: not_exist,
            },
        );
        let should_not_exist = list(
            self.should_not_exist,
            c.should_not_exist.clone(),
            &Siblings {
                earlier: exist,
                later: HashSet::new(),
            },
        );
        KernelArguments {
            should_exist,
            should_not_exist,
        }
    }
}

/// The child's files, directories and links, which share the path as identity, as siblings
/// of the list at `rank` (in upstream's field order: directories 0, files 1, links 2).
pub fn node_siblings<'a>(paths: [&[&'a str]; 3], rank: usize) -> Siblings<'a> {
    let mut s = Siblings::default();
    for (r, list) in paths.iter().enumerate() {
        let set = if r < rank {
            &mut s.earlier
        } else if r > rank {
            &mut s.later
        } else {
            continue;
        };
        set.extend(list.iter().copied());
    }
    s
}

impl Merge for Storage {
    fn merge(self, c: Self) -> Self {
        let d: Vec<String> = c.directories.iter().map(Keyed::key).collect();
        let f: Vec<String> = c.files.iter().map(Keyed::key).collect();
        let l: Vec<String> = c.links.iter().map(Keyed::key).collect();
        let (d, f, l) = (strs(&d), strs(&f), strs(&l));
        let nodes = [&d[..], &f[..], &l[..]];
        let none = Siblings::default();
        Storage {
            directories: list(self.directories, c.directories, &node_siblings(nodes, 0)),
            disks: list(self.disks, c.disks, &none),
            files: list(self.files, c.files, &node_siblings(nodes, 1)),
            filesystems: list(self.filesystems, c.filesystems, &none),
            links: list(self.links, c.links, &node_siblings(nodes, 2)),
            luks: list(self.luks, c.luks, &none),
            raid: list(self.raid, c.raid, &none),
        }
    }
}

/// `child` merged into `parent`.
pub fn merge(parent: Config, child: Config) -> Config {
    Config {
        ignition: parent.ignition.merge(child.ignition),
        kernel_arguments: parent.kernel_arguments.merge(child.kernel_arguments),
        passwd: parent.passwd.merge(child.passwd),
        storage: parent.storage.merge(child.storage),
        systemd: parent.systemd.merge(child.systemd),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(json: &str) -> Config {
        crate::parse(json.as_bytes()).unwrap().config
    }

    fn out(c: &Config) -> String {
        String::from_utf8(flint_go::json::to_vec(c, false))
            .unwrap()
            .trim_end()
            .to_string()
    }

    #[test]
    fn child_values_win_and_lists_merge_by_key() {
        let p = cfg(
            r#"{"ignition":{"version":"3.4.0","timeouts":{"httpTotal":5}},"storage":{"files":[{"path":"/a","mode":420,"overwrite":true},{"path":"/b"}]},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["k1"]}]}}"#,
        );
        let c = cfg(
            r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a","mode":384},{"path":"/c"}]},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["k1","k2"]}]}}"#,
        );
        assert_eq!(
            out(&merge(p, c)),
            r#"{"ignition":{"timeouts":{"httpTotal":5},"version":"3.4.0"},"passwd":{"users":[{"name":"core","sshAuthorizedKeys":["k1","k2"]}]},"storage":{"files":[{"overwrite":true,"path":"/a","mode":384},{"path":"/b"},{"path":"/c"}]}}"#
        );
    }

    #[test]
    fn a_child_link_replaces_a_parent_file() {
        let p = cfg(
            r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a"},{"path":"/b"}]}}"#,
        );
        let c = cfg(
            r#"{"ignition":{"version":"3.4.0"},"storage":{"links":[{"path":"/a","target":"/x"}]}}"#,
        );
        let m = merge(p, c);
        assert_eq!(m.storage.files.len(), 1);
        assert_eq!(m.storage.links[0].path, "/a");
    }

    #[test]
    fn options_append_and_headers_can_be_removed() {
        let p = cfg(
            r#"{"ignition":{"version":"3.4.0"},"storage":{"filesystems":[{"device":"/dev/a","format":"ext4","options":["-E","x"]}],"files":[{"path":"/f","contents":{"source":"http://h/f","httpHeaders":[{"name":"A","value":"1"},{"name":"B","value":"2"}]}}]}}"#,
        );
        let c = cfg(
            r#"{"ignition":{"version":"3.4.0"},"storage":{"filesystems":[{"device":"/dev/a","options":["-L","y"]}],"files":[{"path":"/f","contents":{"httpHeaders":[{"name":"A"}]}}]}}"#,
        );
        let m = merge(p, c);
        assert_eq!(m.storage.filesystems[0].options, ["-E", "x", "-L", "y"]);
        assert_eq!(m.storage.filesystems[0].format.as_deref(), Some("ext4"));
        let names: Vec<&str> = m.storage.files[0]
            .contents
            .http_headers
            .iter()
            .map(|h| h.name.as_str())
            .collect();
        assert_eq!(names, ["B"]);
    }

    #[test]
    fn partitions_merge_by_number_or_label() {
        let p = cfg(
            r#"{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/a","partitions":[{"number":1,"label":"x"},{"label":"data"}]}]}}"#,
        );
        let c = cfg(
            r#"{"ignition":{"version":"3.4.0"},"storage":{"disks":[{"device":"/dev/a","partitions":[{"number":1,"sizeMiB":10},{"label":"data","resize":true}]}]}}"#,
        );
        let m = merge(p, c);
        let parts = &m.storage.disks[0].partitions;
        assert_eq!(parts.len(), 2);
        assert_eq!(
            (parts[0].label.as_deref(), parts[0].size_mib),
            (Some("x"), Some(10))
        );
        assert_eq!(parts[1].resize, Some(true));
    }

    #[test]
    fn child_duplicates_collapse_into_the_parents_entry_the_last_merged() {
        let p = cfg(
            r#"{"ignition":{"version":"3.4.0"},"systemd":{"units":[{"name":"a","enabled":true},{"name":"b"}]}}"#,
        );
        let c = cfg(
            r#"{"ignition":{"version":"3.4.0"},"systemd":{"units":[{"name":"a","mask":true},{"name":"c"},{"name":"a","enabled":false},{"name":"c"}]}}"#,
        );
        assert_eq!(
            out(&merge(p, c)),
            r#"{"ignition":{"version":"3.4.0"},"systemd":{"units":[{"enabled":false,"name":"a"},{"name":"b"},{"name":"c"},{"name":"c"}]}}"#
        );
    }

    #[test]
    fn node_kinds_and_kernel_argument_lists_share_an_identity() {
        // The child's link comes after its file in upstream's field order: the parent's file
        // goes, and so does the child's file of that path.
        let p = cfg(
            r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a"}]},"kernelArguments":{"shouldExist":["x","y"]}}"#,
        );
        let c = cfg(
            r#"{"ignition":{"version":"3.4.0"},"storage":{"files":[{"path":"/a","mode":384}],"links":[{"path":"/a","target":"/t"}]},"kernelArguments":{"shouldNotExist":["x"]}}"#,
        );
        assert_eq!(
            out(&merge(p, c)),
            r#"{"ignition":{"version":"3.4.0"},"kernelArguments":{"shouldExist":["y"],"shouldNotExist":["x"]},"storage":{"links":[{"path":"/a","target":"/t"}]}}"#
        );
    }
}
