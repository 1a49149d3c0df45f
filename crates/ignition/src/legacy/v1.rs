//! Spec 1 (`"ignitionVersion": 1`): its own shape (files inside the filesystem that holds
//! them), read and then converted to a 2.0.0 config as the old Ignition did.

use super::types as v2;
use serde::Deserialize;

macro_rules! model {
    ($($(#[$m:meta])* pub struct $name:ident { $($body:tt)* })*) => {
        $(
            $(#[$m])*
            #[derive(Debug, Clone, Default, PartialEq, Deserialize)]
            #[serde(default, rename_all = "camelCase")]
            pub struct $name { $($body)* }
        )*
    };
}

model! {
    pub struct V1Config {
        pub ignition_version: i64,
        pub storage: V1Storage,
        pub systemd: V1Systemd,
        pub networkd: V1Networkd,
        pub passwd: V1Passwd,
    }

    pub struct V1Storage {
        pub disks: Vec<V1Disk>,
        pub raid: Vec<V1Raid>,
        pub filesystems: Vec<V1Filesystem>,
    }

    pub struct V1Disk {
        pub device: String,
        pub wipe_table: bool,
        pub partitions: Vec<V1Partition>,
    }

    pub struct V1Partition {
        pub label: String,
        pub number: i64,
        pub size: i64,
        pub start: i64,
        pub type_guid: String,
    }

    pub struct V1Raid {
        pub name: String,
        pub level: String,
        pub devices: Vec<String>,
        pub spares: i64,
    }

    pub struct V1Filesystem {
        pub device: String,
        pub format: String,
        pub create: Option<V1Create>,
        pub files: Vec<V1File>,
    }

    pub struct V1Create {
        pub force: bool,
        pub options: Vec<String>,
    }

    pub struct V1File {
        pub path: String,
        /// The file's contents, verbatim.
        pub contents: String,
        pub mode: i64,
        pub uid: i64,
        pub gid: i64,
    }

    pub struct V1Systemd {
        pub units: Vec<V1Unit>,
    }

    pub struct V1Unit {
        pub name: String,
        pub enable: bool,
        pub mask: bool,
        pub contents: String,
        pub dropins: Vec<V1Dropin>,
    }

    pub struct V1Dropin {
        pub name: String,
        pub contents: String,
    }

    pub struct V1Networkd {
        pub units: Vec<V1NetworkdUnit>,
    }

    pub struct V1NetworkdUnit {
        pub name: String,
        pub contents: String,
    }

    pub struct V1Passwd {
        pub users: Vec<V1User>,
        pub groups: Vec<V1Group>,
    }

    pub struct V1User {
        pub name: String,
        pub password_hash: String,
        pub ssh_authorized_keys: Vec<String>,
        pub create: Option<V1UserCreate>,
    }

    pub struct V1UserCreate {
        pub uid: Option<i64>,
        pub gecos: String,
        pub home_dir: String,
        pub no_create_home: bool,
        pub primary_group: String,
        pub groups: Vec<String>,
        pub no_user_group: bool,
        pub system: bool,
        pub no_log_init: bool,
        pub shell: String,
    }

    pub struct V1Group {
        pub name: String,
        pub gid: Option<i64>,
        pub password_hash: String,
        pub system: bool,
    }
}

/// The characters the old data URL escaper leaves alone (RFC 2396 "unreserved").
fn unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"-_.!~*'()".contains(&b)
}

/// Contents as the `data:` URL the 1 → 2.0 translation made of them.
pub fn data_url(contents: &str) -> String {
    let mut out = String::from("data:,");
    for &b in contents.as_bytes() {
        if unreserved(b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// The name the 1 → 2.0 translation gives the `i`th filesystem.
pub fn filesystem_name(i: usize) -> String {
    format!("_translate-filesystem-{i}")
}

/// The 2.0.0 config a spec 1 config becomes.
pub fn to_v2_0(old: V1Config) -> v2::Config {
    let mut c = v2::Config::default();
    c.ignition.version = Some("2.0.0".into());
    for d in old.storage.disks {
        c.storage.disks.push(v2::Disk {
            device: d.device,
            wipe_table: d.wipe_table,
            partitions: d
                .partitions
                .into_iter()
                .map(|p| v2::Partition {
                    label: Some(p.label),
                    number: p.number,
                    size: Some(p.size),
                    start: Some(p.start),
                    type_guid: p.type_guid,
                    ..Default::default()
                })
                .collect(),
        });
    }
    for r in old.storage.raid {
        c.storage.raid.push(v2::Raid {
            name: r.name,
            level: r.level,
            devices: r.devices,
            spares: r.spares,
            options: Vec::new(),
        });
    }
    for (i, fs) in old.storage.filesystems.into_iter().enumerate() {
        let name = filesystem_name(i);
        for f in fs.files {
            c.storage.files.push(v2::File {
                filesystem: name.clone(),
                path: f.path,
                user: Some(v2::NodeOwner {
                    id: Some(f.uid),
                    name: String::new(),
                }),
                group: Some(v2::NodeOwner {
                    id: Some(f.gid),
                    name: String::new(),
                }),
                mode: Some(f.mode),
                contents: v2::FileContents {
                    source: data_url(&f.contents),
                    ..Default::default()
                },
                ..Default::default()
            });
        }
        c.storage.filesystems.push(v2::Filesystem {
            name,
            mount: Some(v2::Mount {
                device: fs.device,
                format: fs.format,
                create: fs.create.map(|cr| v2::Create {
                    force: cr.force,
                    options: cr.options,
                }),
                ..Default::default()
            }),
            path: None,
        });
    }
    for u in old.systemd.units {
        c.systemd.units.push(v2::Unit {
            name: u.name,
            enable: u.enable,
            mask: u.mask,
            contents: u.contents,
            dropins: u
                .dropins
                .into_iter()
                .map(|d| v2::Dropin {
                    name: d.name,
                    contents: d.contents,
                })
                .collect(),
            enabled: None,
        });
    }
    for u in old.networkd.units {
        c.networkd.units.push(v2::NetworkdUnit {
            name: u.name,
            contents: u.contents,
            dropins: Vec::new(),
        });
    }
    for u in old.passwd.users {
        c.passwd.users.push(v2::User {
            name: u.name,
            password_hash: Some(u.password_hash),
            ssh_authorized_keys: u.ssh_authorized_keys,
            create: u.create.map(|cr| v2::UserCreate {
                uid: cr.uid,
                gecos: cr.gecos,
                home_dir: cr.home_dir,
                no_create_home: cr.no_create_home,
                primary_group: cr.primary_group,
                groups: cr.groups,
                no_user_group: cr.no_user_group,
                system: cr.system,
                no_log_init: cr.no_log_init,
                shell: cr.shell,
            }),
            ..Default::default()
        });
    }
    for g in old.passwd.groups {
        c.passwd.groups.push(v2::Group {
            name: g.name,
            gid: g.gid,
            password_hash: g.password_hash,
            system: g.system,
        });
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_contents_like_the_old_translation() {
        assert_eq!(data_url("hello world\n"), "data:,hello%20world%0A");
        assert_eq!(data_url("a-b_c.d!e~f*g'h(i)"), "data:,a-b_c.d!e~f*g'h(i)");
        assert_eq!(data_url("é"), "data:,%C3%A9");
    }
}
