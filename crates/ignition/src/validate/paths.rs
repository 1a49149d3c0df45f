//! Filesystem path rules: absolute and fully simplified, as Go's `path.Clean` defines it.

/// Go's `path.Clean`: the shortest equivalent path by purely lexical processing.
pub fn clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            _ => parts.push(part),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Whether `clean(p) == p`, without building the cleaned path (every file's path is
/// checked; this is the common case).
fn is_clean(p: &str) -> bool {
    match p.strip_prefix('/') {
        // Rooted: "/", or segments that are neither empty, "." nor "..".
        Some("") => true,
        Some(rest) => rest.split('/').all(|seg| !matches!(seg, "" | "." | "..")),
        None => clean(p) == p,
    }
}

/// Checks a path that must be given: the upstream messages for empty, relative and unclean.
pub fn check_path(p: &str) -> Option<&'static str> {
    if p.is_empty() {
        Some("path not specified")
    } else {
        check_given_path(p)
    }
}

/// Checks a path that was given (non-empty).
pub fn check_given_path(p: &str) -> Option<&'static str> {
    if !p.starts_with('/') {
        Some("path not absolute")
    } else if !is_clean(p) {
        Some("path is not fully simplified")
    } else {
        None
    }
}

/// Whether `child` lies strictly below directory `parent` (both clean and absolute).
pub fn is_below(child: &str, parent: &str) -> bool {
    if parent == "/" {
        return child != "/";
    }
    child.len() > parent.len()
        && child.starts_with(parent)
        && child.as_bytes()[parent.len()] == b'/'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cleans_like_go() {
        for (i, o) in [
            ("/etc/../foo", "/foo"),
            ("/etc//a", "/etc/a"),
            ("/var/b/", "/var/b"),
            ("/opt/./c", "/opt/c"),
            ("/..", "/"),
            ("/", "/"),
            ("a/../..", ".."),
            ("", "."),
        ] {
            assert_eq!(clean(i), o, "{i}");
            assert_eq!(is_clean(i), clean(i) == i, "{i}");
        }
    }

    /// The quick test agrees with cleaning on every path of up to 7 characters made of `/`,
    /// `.` and `a`.
    #[test]
    fn is_clean_is_clean_unchanged() {
        let alphabet = ['/', '.', 'a'];
        for len in 0..=7u32 {
            for n in 0..alphabet.len().pow(len) {
                let mut k = n;
                let p: String = (0..len)
                    .map(|_| {
                        let c = alphabet[k % 3];
                        k /= 3;
                        c
                    })
                    .collect();
                assert_eq!(is_clean(&p), clean(&p) == p, "{p:?}");
            }
        }
    }

    #[test]
    fn path_rules() {
        assert_eq!(check_path(""), Some("path not specified"));
        assert_eq!(check_path("etc"), Some("path not absolute"));
        assert_eq!(check_path("/a/"), Some("path is not fully simplified"));
        assert_eq!(check_path("/a/b"), None);
        assert!(is_below("/opt/l/f", "/opt/l"));
        assert!(!is_below("/opt/lx", "/opt/l"));
        assert!(!is_below("/opt/l", "/opt/l"));
    }
}
