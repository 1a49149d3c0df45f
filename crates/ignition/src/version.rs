//! Ignition spec versions and which keys each one has.

use std::fmt;

/// A supported Ignition spec version. Ordered: later versions compare greater.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    V3_0,
    V3_1,
    V3_2,
    V3_3,
    V3_4,
    V3_5,
    V3_6,
    /// `3.7.0-experimental`: 3.6.0's model under another name; upstream accepts it and it may
    /// still change.
    V3_7Exp,
}

/// Why a version string was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum VersionError {
    /// Not a semantic version at all (or missing).
    Invalid,
    /// A well-formed version this implementation does not read (2.x, 3.5.0-experimental, ...).
    Unsupported(String),
}

impl fmt::Display for VersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionError::Invalid => f.write_str("invalid config version (couldn't parse)"),
            // Upstream's wording exactly: the validator's output is compared line by line.
            VersionError::Unsupported(_) => f.write_str("unsupported config version"),
        }
    }
}

impl Version {
    pub const ALL: [Version; 8] = [
        Version::V3_0,
        Version::V3_1,
        Version::V3_2,
        Version::V3_3,
        Version::V3_4,
        Version::V3_5,
        Version::V3_6,
        Version::V3_7Exp,
    ];
    /// The version every config is upgraded to before it is merged and applied (upstream
    /// does the same with its newest, experimental, model).
    pub const NEWEST: Version = Version::V3_7Exp;
    /// The newest stable version.
    pub const STABLE: Version = Version::V3_6;

    pub fn as_str(self) -> &'static str {
        match self {
            Version::V3_0 => "3.0.0",
            Version::V3_1 => "3.1.0",
            Version::V3_2 => "3.2.0",
            Version::V3_3 => "3.3.0",
            Version::V3_4 => "3.4.0",
            Version::V3_5 => "3.5.0",
            Version::V3_6 => "3.6.0",
            Version::V3_7Exp => "3.7.0-experimental",
        }
    }

    /// Parses `ignition.version` the way upstream does: it must be a semantic version, and
    /// then one of the versions we read.
    pub fn parse(s: &str) -> Result<Version, VersionError> {
        let v = GoSemver::parse(s).ok_or(VersionError::Invalid)?.to_string();
        Version::ALL
            .into_iter()
            .find(|known| known.as_str() == v)
            .ok_or_else(|| VersionError::Unsupported(s.to_string()))
    }

    /// The first version that has key `key` (JSON name) on model struct `ty`.
    pub fn introducing(ty: &str, key: &str) -> Version {
        match (ty, key) {
            ("Ignition", "proxy")
            | ("Resource", "httpHeaders")
            | ("Filesystem", "mountOptions") => Version::V3_1,
            ("Storage", "luks")
            | ("Partition", "resize")
            | ("PasswdUser" | "PasswdGroup", "shouldExist") => Version::V3_2,
            ("Config", "kernelArguments") => Version::V3_3,
            ("Luks", "discard" | "openOptions") | ("Tang", "advertisement") => Version::V3_4,
            ("Luks", "cex") => Version::V3_5,
            _ => Version::V3_0,
        }
    }

    /// Whether the version is experimental (its model may change without notice).
    pub fn is_experimental(self) -> bool {
        self == Version::V3_7Exp
    }

    /// Whether files and directories get their setuid, setgid and sticky bits: older versions
    /// drop them (with a validation warning), 3.6.0 and later apply them.
    pub fn applies_special_mode_bits(self) -> bool {
        self >= Version::V3_6
    }

    /// Whether a Tang server's `advertisement` survives the upgrade to the newest version:
    /// upstream's 3.4.0 → 3.5.0 translation leaves it out, so a 3.4.0 config's servers are
    /// asked for theirs while provisioning (and fetch-offline asks for the network).
    pub fn keeps_tang_advertisement(self) -> bool {
        self >= Version::V3_5
    }

    /// Whether this version has key `key` on model struct `ty`.
    pub fn has_key(self, ty: &str, key: &str) -> bool {
        Version::introducing(ty, key) <= self
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A version as upstream's semantic-version library reads it (coreos/go-semver): the build
/// part cut off at the first `+`, then the pre-release at the first `-`, three dotted
/// numbers that may have leading zeros (each a signed 64-bit integer), and pre-release and
/// build parts that are empty or dot-separated identifiers. Upstream compares versions by
/// these fields, so `03.4.0` and `3.4.0+` are 3.4.0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoSemver {
    pub major: i64,
    pub minor: i64,
    pub patch: i64,
    pub pre: String,
    pub build: String,
}

impl GoSemver {
    pub fn parse(s: &str) -> Option<GoSemver> {
        let (rest, build) = s.split_once('+').unwrap_or((s, ""));
        let (core, pre) = rest.split_once('-').unwrap_or((rest, ""));
        let identifiers = |p: &str| {
            p.is_empty()
                || p.split('.').all(|id| {
                    !id.is_empty() && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                })
        };
        if !identifiers(pre) || !identifiers(build) {
            return None;
        }
        let mut parts = core.splitn(3, '.');
        // Go's ParseInt: an optional sign (never left here: `+` and `-` were cut off
        // above), then decimal digits.
        let mut number = || -> Option<i64> {
            let p = parts.next()?;
            p.bytes()
                .all(|b| b.is_ascii_digit())
                .then(|| p.parse().ok())
                .flatten()
        };
        let (major, minor, patch) = (number()?, number()?, number()?);
        Some(GoSemver {
            major,
            minor,
            patch,
            pre: pre.into(),
            build: build.into(),
        })
    }
}

impl fmt::Display for GoSemver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        if !self.pre.is_empty() {
            write!(f, "-{}", self.pre)?;
        }
        if !self.build.is_empty() {
            write!(f, "+{}", self.build)?;
        }
        Ok(())
    }
}

/// Whether upstream's semantic-version library reads `s` (see [`GoSemver`]).
pub fn is_semver(s: &str) -> bool {
    GoSemver::parse(s).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_versions_like_upstream() {
        assert_eq!(Version::parse("3.3.0"), Ok(Version::V3_3));
        assert_eq!(Version::parse("3.0.0"), Ok(Version::V3_0));
        assert_eq!(Version::parse("3.3"), Err(VersionError::Invalid));
        assert_eq!(Version::parse(""), Err(VersionError::Invalid));
        assert!(matches!(
            Version::parse("3.9.0"),
            Err(VersionError::Unsupported(_))
        ));
        assert_eq!(Version::parse("3.5.0"), Ok(Version::V3_5));
        assert_eq!(Version::parse("3.6.0"), Ok(Version::V3_6));
        assert_eq!(Version::parse("3.7.0-experimental"), Ok(Version::V3_7Exp));
        for v in [
            "3.5.0-experimental",
            "3.6.0-experimental",
            "3.7.0",
            "3.4.0-experimental",
        ] {
            assert!(
                matches!(Version::parse(v), Err(VersionError::Unsupported(_))),
                "{v}"
            );
        }
        assert!(matches!(
            Version::parse("2.3.0"),
            Err(VersionError::Unsupported(_))
        ));
        // As upstream's library reads them (measured against the reference).
        for v in ["03.4.0", "3.04.0", "3.4.0-", "3.4.0+", "3.4.0-+"] {
            assert_eq!(Version::parse(v), Ok(Version::V3_4), "{v}");
        }
        assert_eq!(Version::parse("3.7.00-experimental+"), Ok(Version::V3_7Exp));
        for v in [
            "3.4.0+a_b",
            "3.4.0++",
            "3.4.0+a..b",
            "3.4.0.0",
            "99999999999999999999.0.0",
        ] {
            assert_eq!(Version::parse(v), Err(VersionError::Invalid), "{v}");
        }
        assert!(matches!(
            Version::parse("3.4.0+build"),
            Err(VersionError::Unsupported(_))
        ));
    }

    #[test]
    fn gates_keys_by_version() {
        assert!(!Version::V3_3.has_key("Luks", "discard"));
        assert!(Version::V3_4.has_key("Luks", "discard"));
        assert!(!Version::V3_0.has_key("Filesystem", "mountOptions"));
        assert!(Version::V3_0.has_key("Filesystem", "format"));
        assert!(!Version::V3_4.has_key("Luks", "cex"));
        assert!(Version::V3_5.has_key("Luks", "cex"));
        assert!(Version::V3_7Exp.has_key("Luks", "cex"));
    }
}
