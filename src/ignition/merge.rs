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

/// A list entry's identity for merging.
trait Keyed {
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

/// Keyed list merge; `removed` holds keys a sibling list of the child claims.
fn list<T: Keyed + Merge>(parent: Vec<T>, child: Vec<T>, removed: &[String]) -> Vec<T> {
    let mut child: Vec<Option<T>> = child.into_iter().map(Some).collect();
    let mut out = Vec::with_capacity(parent.len() + child.len());
    for p in parent {
        let k = p.key();
        if let Some(slot) = child
            .iter_mut()
            .find(|c| c.as_ref().is_some_and(|c| c.key() == k))
        {
            let c = slot.take().expect("found above");
            out.push(p.merge(c));
        } else if !removed.contains(&k) {
            out.push(p);
        }
    }
    out.extend(child.into_iter().flatten());
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
                    $($keyed: list(self.$keyed, c.$keyed, &[]),)*
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
merge_struct!(KernelArguments { ; ; ; should_exist, should_not_exist ; });
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
        let mut headers = Vec::new();
        let parent_names: Vec<String> = self.http_headers.iter().map(|h| h.name.clone()).collect();
        for h in self.http_headers {
            match c.http_headers.iter().find(|x| x.name == h.name) {
                Some(x) if x.value.is_none() => {}
                Some(x) => headers.push(h.merge(x.clone())),
                None => headers.push(h),
            }
        }
        for x in &c.http_headers {
            if !parent_names.contains(&x.name) {
                headers.push(x.clone());
            }
        }
        Resource {
            compression: opt(self.compression, c.compression),
            http_headers: headers,
            source: opt(self.source, c.source),
            verification: self.verification.merge(c.verification),
        }
    }
}

impl Merge for Storage {
    fn merge(self, c: Self) -> Self {
        // Files, directories and links share the path as identity across the three lists.
        let paths = |v: &[String]| v.to_vec();
        let cf: Vec<String> = c.files.iter().map(Keyed::key).collect();
        let cd: Vec<String> = c.directories.iter().map(Keyed::key).collect();
        let cl: Vec<String> = c.links.iter().map(Keyed::key).collect();
        let others = |a: &[String], b: &[String]| [paths(a), paths(b)].concat();
        Storage {
            directories: list(self.directories, c.directories, &others(&cf, &cl)),
            disks: list(self.disks, c.disks, &[]),
            files: list(self.files, c.files, &others(&cd, &cl)),
            filesystems: list(self.filesystems, c.filesystems, &[]),
            links: list(self.links, c.links, &others(&cf, &cd)),
            luks: list(self.luks, c.luks, &[]),
            raid: list(self.raid, c.raid, &[]),
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
        crate::ignition::parse(json.as_bytes()).unwrap().config
    }

    fn out(c: &Config) -> String {
        String::from_utf8(crate::json::to_vec(c, false))
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
}
