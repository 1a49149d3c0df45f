//! Kernel arguments the Flatcar way (bootengine's `ignition-kargs-helper`, which Flatcar's
//! Ignition runs for the kargs stage): the arguments are what every line of the OEM
//! partition's grub.cfg that starts with `set linux_append="` holds (each line's first
//! `$linux_append` dropped), joined by spaces. The `shouldExist` arguments missing are
//! appended, in order; then every `shouldNotExist` argument is taken out. When that changes
//! anything, each such line is emptied (from its start to its last `"`) and one line
//! `set linux_append="$linux_append ARGS"` is appended, which GRUB reads at the next boot.
//!
//! Lines that GRUB would also read but the helper does not (indented, single-quoted, inside
//! an `if`) are left alone, as the helper leaves them.

use flint_ignition::types::KernelArguments;

const PREFIX: &str = "set linux_append=\"";

/// The arguments the helper reads from grub.cfg `text`, as one space-joined string.
pub(crate) fn current(text: &str) -> String {
    let parts: Vec<String> = text
        .split('\n')
        .filter_map(|l| l.strip_prefix(PREFIX))
        .map(|v| {
            let v = &v[..v.find('"').unwrap_or(v.len())];
            v.replacen("$linux_append", "", 1)
        })
        .collect();
    parts.join(" ").trim().to_string()
}

/// The grub.cfg text with `k` applied, or `None` when the arguments stay as they are.
pub(crate) fn apply_to(text: &str, k: &KernelArguments) -> Option<String> {
    let orig = current(text);
    let mut opts = format!(" {orig} ");
    for a in &k.should_exist {
        if !opts.contains(&format!(" {a} ")) {
            opts.push_str(a);
            opts.push(' ');
        }
    }
    for a in &k.should_not_exist {
        opts = opts.replace(&format!(" {a} "), " ");
    }
    let opts = opts.trim();
    if opts == orig {
        return None;
    }
    let mut out: Vec<String> = text
        .split('\n')
        .map(|l| match (l.starts_with(PREFIX), l.rfind('"')) {
            // From the line's start to its last quote, as the helper's sed does.
            (true, Some(q)) if q >= PREFIX.len() => l[q + 1..].to_string(),
            _ => l.to_string(),
        })
        .collect();
    // The helper appends with echo; a file without a final newline would glue the new line
    // to its last one, so one is added first.
    if out.last().is_some_and(|l| l.is_empty()) {
        out.pop();
    }
    out.push(format!("set linux_append=\"$linux_append {opts}\""));
    Some(format!("{}\n", out.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(add: &[&str], del: &[&str]) -> KernelArguments {
        KernelArguments {
            should_exist: add.iter().map(|s| s.to_string()).collect(),
            should_not_exist: del.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn edits_every_linux_append_line() {
        let cfg = "set oem_id=\"qemu\"\nset linux_append=\"quiet splash\"\n";
        let out = apply_to(cfg, &k(&["console=ttyS0"], &["splash"])).unwrap();
        assert_eq!(
            out,
            "set oem_id=\"qemu\"\n\nset linux_append=\"$linux_append quiet console=ttyS0\"\n"
        );
        assert_eq!(current(&out), "quiet console=ttyS0");
        assert_eq!(apply_to(&out, &k(&["console=ttyS0"], &["splash"])), None);
        assert_eq!(
            apply_to("", &k(&["a", "b"], &[])).unwrap(),
            "set linux_append=\"$linux_append a b\"\n"
        );
        let two = "set linux_append=\"$linux_append a\"\n# x\nset linux_append=\"b\" # tail\n";
        assert_eq!(current(two), "a b");
        assert_eq!(
            apply_to(two, &k(&["c"], &[])).unwrap(),
            "\n# x\n # tail\nset linux_append=\"$linux_append a b c\"\n"
        );
    }

    #[test]
    fn quirks_kept() {
        // Only lines starting with the exact prefix count.
        let cfg = "  set linux_append=\"x\"\nset linux_append='y'\n";
        assert_eq!(current(cfg), "");
        // Present arguments are not repeated; one occurrence of a repeated pair survives a
        // removal, as sed's non-overlapping replacement leaves it.
        assert_eq!(apply_to("set linux_append=\"a\"", &k(&["a"], &[])), None);
        let out = apply_to("set linux_append=\"a a b\"", &k(&[], &["a"])).unwrap();
        assert_eq!(current(&out), "a b");
        // Added, then removed: nothing changes.
        assert_eq!(apply_to("", &k(&["x"], &["x"])), None);
        // No final newline: the new line still starts a line of its own.
        assert_eq!(
            apply_to("set timeout=1", &k(&["a"], &[])).unwrap(),
            "set timeout=1\nset linux_append=\"$linux_append a\"\n"
        );
    }
}
