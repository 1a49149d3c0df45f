//! Kernel arguments the Flatcar way: the `set linux_append="..."` line of the OEM
//! partition's grub.cfg gains the `shouldExist` arguments it lacks and loses the
//! `shouldNotExist` ones; the change takes effect at the next boot.

use crate::ignition::types::KernelArguments;

/// The grub.cfg text with `k` applied, or `None` when nothing changes.
pub fn apply_to(text: &str, k: &KernelArguments) -> Option<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let pos = lines
        .iter()
        .position(|l| l.trim_start().starts_with("set linux_append="));
    let current: Vec<String> = pos
        .map(|i| {
            let v = lines[i].trim_start()["set linux_append=".len()..].trim();
            v.trim_matches('"')
                .split_whitespace()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let mut args: Vec<String> = current
        .iter()
        .filter(|a| !k.should_not_exist.contains(a))
        .cloned()
        .collect();
    for a in &k.should_exist {
        if !args.contains(a) {
            args.push(a.clone());
        }
    }
    if args == current {
        return None;
    }
    let line = format!("set linux_append=\"{}\"", args.join(" "));
    match pos {
        Some(i) => lines[i] = line,
        None => lines.push(line),
    }
    Some(format!("{}\n", lines.join("\n")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edits_linux_append() {
        let k = KernelArguments {
            should_exist: vec!["console=ttyS0".into(), "quiet".into()],
            should_not_exist: vec!["splash".into()],
        };
        let cfg = "set oem_id=\"qemu\"\nset linux_append=\"quiet splash\"\n";
        let out = apply_to(cfg, &k).unwrap();
        assert_eq!(
            out,
            "set oem_id=\"qemu\"\nset linux_append=\"quiet console=ttyS0\"\n"
        );
        assert_eq!(apply_to(&out, &k), None, "a second run changes nothing");
        assert_eq!(
            apply_to("", &k).unwrap(),
            "set linux_append=\"console=ttyS0 quiet\"\n"
        );
    }
}
