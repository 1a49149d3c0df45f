//! The spec versions Butane knows, as data: one row per variant version (the Ignition
//! version it targets, the base spec and fcos spec it builds on), and every way versions
//! differ as a named query on the row (or on the base version). Nothing else in the crate
//! compares version numbers: adding a spec version is adding a row, and a behaviour that
//! changed with a version is one query here.

use flint_ignition::Version;

/// The distributions Butane has variants for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    Flatcar,
    Fcos,
    OpenShift,
    R4e,
    Fiot,
}

impl Family {
    /// The name a document gives in `variant:`.
    pub const fn name(self) -> &'static str {
        match self {
            Family::Flatcar => "flatcar",
            Family::Fcos => "fcos",
            Family::OpenShift => "openshift",
            Family::R4e => "r4e",
            Family::Fiot => "fiot",
        }
    }
}

/// A base spec version. Ordered: later versions compare greater.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum BaseVersion {
    V0_1,
    V0_2,
    V0_3,
    V0_4,
    V0_5,
    V0_6,
    V0_7,
    V0_8Exp,
}

/// A Butane spec version of a variant: a row of [`REGISTRY`].
#[derive(Debug)]
pub struct Variant {
    pub name: &'static str,
    pub version: &'static str,
    pub family: Family,
    /// The minor version of the spec (fcos 1.x), or of the OpenShift release (4.x). Only
    /// the queries below read it.
    minor: u8,
    /// Whether the version is an experimental one (`-experimental`).
    pub experimental: bool,
    pub base: BaseVersion,
    /// The Ignition spec version the output has.
    pub ignition: Version,
    /// The fcos spec (its minor version) whose sugar this version has: fcos's own, the one
    /// an OpenShift release builds on, none for the others.
    fcos: Option<u8>,
}

/// A row of the table.
const fn row(
    family: Family,
    version: &'static str,
    minor: u8,
    experimental: bool,
    base: BaseVersion,
    ignition: Version,
    fcos: Option<u8>,
) -> Variant {
    Variant {
        name: family.name(),
        version,
        family,
        minor,
        experimental,
        base,
        ignition,
        fcos,
    }
}

use BaseVersion::*;
use Family::*;
use Version as Ig;

/// Every spec version, in the order `flint schema --list` names them.
#[rustfmt::skip]
pub const REGISTRY: &[Variant] = &[
    //   variant    version                minor  exp    base     ignition     fcos spec
    row(Fcos,      "1.0.0",                0,     false, V0_1,    Ig::V3_0,    Some(0)),
    row(Fcos,      "1.1.0",                1,     false, V0_2,    Ig::V3_1,    Some(1)),
    row(Fcos,      "1.2.0",                2,     false, V0_3,    Ig::V3_2,    Some(2)),
    row(Fcos,      "1.3.0",                3,     false, V0_3,    Ig::V3_2,    Some(3)),
    row(Fcos,      "1.4.0",                4,     false, V0_4,    Ig::V3_3,    Some(4)),
    row(Fcos,      "1.5.0",                5,     false, V0_5,    Ig::V3_4,    Some(5)),
    row(Fcos,      "1.6.0",                6,     false, V0_6,    Ig::V3_5,    Some(6)),
    row(Fcos,      "1.7.0",                7,     false, V0_7,    Ig::V3_6,    Some(7)),
    row(Fcos,      "1.8.0-experimental",   8,     true,  V0_8Exp, Ig::V3_7Exp, Some(8)),
    row(Flatcar,   "1.0.0",                0,     false, V0_4,    Ig::V3_3,    None),
    row(Flatcar,   "1.1.0",                1,     false, V0_5,    Ig::V3_4,    None),
    row(Flatcar,   "1.2.0-experimental",   2,     true,  V0_8Exp, Ig::V3_7Exp, None),
    row(OpenShift, "4.8.0",                8,     false, V0_3,    Ig::V3_2,    Some(3)),
    row(OpenShift, "4.9.0",                9,     false, V0_3,    Ig::V3_2,    Some(3)),
    row(OpenShift, "4.10.0",               10,    false, V0_3,    Ig::V3_2,    Some(3)),
    row(OpenShift, "4.11.0",               11,    false, V0_3,    Ig::V3_2,    Some(3)),
    row(OpenShift, "4.12.0",               12,    false, V0_3,    Ig::V3_2,    Some(3)),
    row(OpenShift, "4.13.0",               13,    false, V0_3,    Ig::V3_2,    Some(3)),
    row(OpenShift, "4.14.0",               14,    false, V0_5,    Ig::V3_4,    Some(5)),
    row(OpenShift, "4.15.0",               15,    false, V0_5,    Ig::V3_4,    Some(5)),
    row(OpenShift, "4.16.0",               16,    false, V0_5,    Ig::V3_4,    Some(5)),
    row(OpenShift, "4.17.0",               17,    false, V0_5,    Ig::V3_4,    Some(5)),
    row(OpenShift, "4.18.0",               18,    false, V0_5,    Ig::V3_4,    Some(5)),
    row(OpenShift, "4.19.0",               19,    false, V0_6,    Ig::V3_5,    Some(6)),
    row(OpenShift, "4.20.0",               20,    false, V0_6,    Ig::V3_5,    Some(6)),
    row(OpenShift, "4.21.0",               21,    false, V0_6,    Ig::V3_5,    Some(6)),
    row(OpenShift, "4.22.0",               22,    false, V0_6,    Ig::V3_5,    Some(6)),
    row(OpenShift, "4.23.0-experimental",  23,    true,  V0_8Exp, Ig::V3_7Exp, Some(8)),
    row(R4e,       "1.0.0",                0,     false, V0_4,    Ig::V3_3,    None),
    row(R4e,       "1.1.0",                1,     false, V0_5,    Ig::V3_4,    None),
    row(R4e,       "1.2.0-experimental",   2,     true,  V0_8Exp, Ig::V3_7Exp, None),
    row(Fiot,      "1.0.0",                0,     false, V0_5,    Ig::V3_4,    None),
    row(Fiot,      "1.1.0-experimental",   1,     true,  V0_8Exp, Ig::V3_7Exp, None),
];

/// The spec version `name` `version`, if there is one.
pub fn lookup(name: &str, version: &str) -> Option<&'static Variant> {
    REGISTRY
        .iter()
        .find(|s| s.name == name && s.version == version)
}

impl Variant {
    /// `butane-NAME-VERSION`, the schema's name.
    pub fn schema_name(&self) -> String {
        format!("butane-{}-{}", self.name, self.version)
    }

    /// The Go package upstream keeps this version in: `1.8.0-experimental` is `v1_8_exp`.
    pub fn go_package(&self) -> String {
        go_package(self.version)
    }

    /// The Go package of the fcos spec whose types this version's fcos sections have.
    pub fn fcos_go_package(&self) -> String {
        let level = self.fcos.unwrap_or(self.minor);
        REGISTRY
            .iter()
            .find(|s| s.family == Family::Fcos && s.minor == level)
            .map_or_else(|| format!("v1_{level}"), Variant::go_package)
    }

    /// Whether this spec version has key `key` on Butane struct `ty`.
    pub fn has_key(&self, ty: &str, key: &str) -> bool {
        match (ty, key) {
            ("Config", "boot_device") => self.has_boot_device(),
            ("Config", "grub") => self.has_grub(),
            ("Config", "metadata" | "openshift") => self.family == Family::OpenShift,
            _ => self.base.has_key(ty, key),
        }
    }

    /// Whether this version has the fcos sugar of fcos 1.`minor` (or later).
    fn fcos_from(&self, minor: u8) -> bool {
        self.fcos.is_some_and(|l| l >= minor)
    }

    // The fcos sections, in fcos and the OpenShift releases built on it.

    /// The fcos sections (`boot_device`, `grub`) and their rules, at any level.
    pub fn has_fcos_sections(&self) -> bool {
        self.fcos.is_some()
    }

    /// fcos 1.3: `boot_device` (LUKS with Tang or TPM2, RAID1 mirror).
    pub fn has_boot_device(&self) -> bool {
        self.fcos_from(3)
    }

    /// fcos 1.3: warnings about a root partition too small or unable to grow.
    pub fn checks_root_partition(&self) -> bool {
        self.fcos_from(3)
    }

    /// fcos 1.5: `grub` superusers, whose config is merged in even when there are none.
    pub fn has_grub(&self) -> bool {
        self.fcos_from(5)
    }

    /// fcos 1.6: the s390x boot device layouts and LUKS with IBM CEX.
    pub fn has_boot_device_s390x(&self) -> bool {
        self.fcos_from(6)
    }

    /// fcos 1.7: a mirror without a layout is an error (a warning before), and a boot
    /// LUKS device needs a method.
    pub fn boot_device_strict(&self) -> bool {
        self.fcos_from(7)
    }

    /// fcos 1.6 (fcos alone: OpenShift has its own): rules on the whole config, partitions
    /// reused by label and mount units outside /etc and /var.
    pub fn has_fcos_config_rules(&self) -> bool {
        self.family == Family::Fcos && self.minor >= 6
    }

    // OpenShift: what the Machine Config Operator of each release can apply.

    fn openshift_from(&self, minor: u8) -> bool {
        self.family == Family::OpenShift && self.minor >= minor
    }

    /// Whether embedded contents may be gzipped: not for OpenShift 4.8 and 4.9, whose MCO
    /// could not read compressed files.
    pub fn allows_compression(&self) -> bool {
        !(self.family == Family::OpenShift && self.minor <= 9)
    }

    /// OpenShift 4.10: files with special mode bits (setuid, setgid, sticky) are refused.
    pub fn refuses_special_mode_bits(&self) -> bool {
        self.openshift_from(10)
    }

    /// OpenShift before 4.13: users' password hashes are refused.
    pub fn refuses_password_hash(&self) -> bool {
        self.family == Family::OpenShift && self.minor < 13
    }

    /// OpenShift 4.14: the `kernel_arguments` section is refused (the MachineConfig's
    /// `openshift.kernel_arguments` takes its place).
    pub fn refuses_kernel_arguments_section(&self) -> bool {
        self.openshift_from(14)
    }

    /// OpenShift 4.14: filesystems of format "none" are refused.
    pub fn refuses_format_none(&self) -> bool {
        self.openshift_from(14)
    }

    /// OpenShift 4.19: CEX needs its key on the kernel command line (a whole-config rule
    /// that replaces fcos's own).
    pub fn requires_cex_kernel_argument(&self) -> bool {
        self.openshift_from(19)
    }

    /// OpenShift before 4.20 (FIPS 140-2): LUKS volumes with FIPS get a CBC cipher.
    pub fn fips_needs_cbc_cipher(&self) -> bool {
        self.family == Family::OpenShift && self.minor < 20
    }

    /// OpenShift 4.23: the MCO cannot append to files, so the GRUB sugar's `user.cfg` is
    /// written as contents.
    pub fn grub_as_contents(&self) -> bool {
        self.openshift_from(23)
    }

    // Flatcar.

    /// Flatcar 1.0 and 1.1: LUKS with Clevis is refused (its initramfs had no clevis).
    pub fn refuses_clevis(&self) -> bool {
        self.family == Family::Flatcar && self.minor < 2
    }

    /// Flatcar 1.2: LUKS with CEX is refused (Flatcar has no s390x).
    pub fn refuses_cex(&self) -> bool {
        self.family == Family::Flatcar && self.minor >= 2
    }
}

/// The Go package of spec version `version`: `1.8.0-experimental` is `v1_8_exp`.
fn go_package(version: &str) -> String {
    let (number, experimental) = match version.strip_suffix("-experimental") {
        Some(n) => (n, true),
        None => (version, false),
    };
    let mut parts = number.split('.');
    let major = parts.next().unwrap_or("0");
    let minor = parts.next().unwrap_or("0");
    format!("v{major}_{minor}{}", if experimental { "_exp" } else { "" })
}

impl BaseVersion {
    /// The first base version that has key `key` on Butane struct `ty`; `None` for keys no
    /// base version has (the variants' own sections are decided by the variant).
    pub fn introducing(ty: &str, key: &str) -> Option<BaseVersion> {
        Some(match (ty, key) {
            ("Config", "boot_device" | "grub" | "metadata" | "openshift") => return None,
            // Base 0.1 gave the resources of the ignition section only a source and a hash.
            ("IgnitionResource", "compression" | "inline")
            | ("IgnitionResource" | "Resource", "http_headers" | "local")
            | ("Ignition", "proxy")
            | ("Filesystem", "mount_options" | "with_mount_unit")
            | ("Storage", "trees") => V0_2,
            ("Storage", "luks")
            | ("Partition", "resize")
            | ("PasswdUser" | "PasswdGroup", "should_exist") => V0_3,
            ("Config", "kernel_arguments") => V0_4,
            ("Luks", "discard" | "open_options")
            | ("Tang", "advertisement")
            | ("Unit" | "Dropin", "contents_local")
            | ("PasswdUser", "ssh_authorized_keys_local")
            | ("BootDeviceLuks", "discard") => V0_5,
            ("Luks" | "BootDeviceLuks", "cex") | ("BootDeviceLuks", "device") => V0_6,
            ("Tree", "group" | "user" | "file_mode" | "dir_mode") => V0_7,
            ("Systemd", "quadlets") => V0_8Exp,
            _ => V0_1,
        })
    }

    /// Whether this base version has key `key` on Butane struct `ty`.
    pub fn has_key(self, ty: &str, key: &str) -> bool {
        BaseVersion::introducing(ty, key).is_some_and(|since| since <= self)
    }

    /// Base 0.1 only percent-encodes embedded contents, and leaves `compression` as the
    /// user wrote it; later versions pick an encoding and may compress.
    pub fn chooses_encoding(self) -> bool {
        self > V0_1
    }

    /// Base 0.2: resources may have any one of `local`, `inline` and `source` (0.1 knew
    /// only inline and source, for file contents, and did not check certificate
    /// authorities).
    pub fn checks_resource_sources(self) -> bool {
        self > V0_1
    }

    /// Base 0.2: filesystems get mount units, which the config is merged under (as far as
    /// the path map is concerned, even when none is asked for).
    pub fn merges_mount_units(self) -> bool {
        self >= V0_2
    }

    /// Base 0.3: mount units of filesystems on network-bound (Tang) LUKS volumes are
    /// remote ones.
    pub fn has_remote_mounts(self) -> bool {
        self >= V0_3
    }

    /// Base 0.4: swap filesystems get swap units (a mount unit before, which needed a
    /// path whatever the format).
    pub fn has_swap_units(self) -> bool {
        self >= V0_4
    }

    /// Base 0.5: units and drop-ins may take their contents from a local file
    /// (`contents_local`), but not both.
    pub fn has_contents_local(self) -> bool {
        self.has_key("Unit", "contents_local")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_agree_with_their_versions() {
        for (i, v) in REGISTRY.iter().enumerate() {
            let (number, exp) = match v.version.strip_suffix("-experimental") {
                Some(n) => (n, true),
                None => (v.version, false),
            };
            assert_eq!(exp, v.experimental, "{}", v.schema_name());
            let parts: Vec<&str> = number.split('.').collect();
            assert_eq!(parts.len(), 3, "{}", v.schema_name());
            assert_eq!(parts[1].parse::<u8>().ok(), Some(v.minor));
            assert_eq!(v.fcos.is_some(), matches!(v.family, Fcos | OpenShift));
            if v.family == Fcos {
                assert_eq!(v.fcos, Some(v.minor));
            }
            let dup = REGISTRY[..i]
                .iter()
                .any(|w| w.name == v.name && w.version == v.version);
            assert!(!dup, "{} twice", v.schema_name());
        }
        assert_eq!(
            lookup("fcos", "1.8.0-experimental").map(|v| v.minor),
            Some(8)
        );
        assert!(lookup("fcos", "1.9.0").is_none());
    }

    #[test]
    fn openshift_names_the_fcos_package_it_builds_on() {
        let v = |n, ver| lookup(n, ver).unwrap();
        assert_eq!(v("openshift", "4.12.0").fcos_go_package(), "v1_3");
        assert_eq!(
            v("openshift", "4.23.0-experimental").fcos_go_package(),
            "v1_8_exp"
        );
        assert_eq!(
            v("openshift", "4.23.0-experimental").go_package(),
            "v4_23_exp"
        );
        assert_eq!(v("fcos", "1.6.0").fcos_go_package(), "v1_6");
    }
}
