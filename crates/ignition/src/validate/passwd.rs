//! Rules for users, groups and kernel arguments: names and list entries are unique.

use super::{Checker, DUPLICATE};
use crate::types::{KernelArguments, Passwd};
use flint_go::tree::JsonPath;
use std::collections::HashSet;

pub(super) fn check(c: &mut Checker, p: &Passwd, path: &JsonPath) {
    let users = path.key("users");
    for (i, u) in p.users.iter().enumerate() {
        let up = users.index(i);
        c.unique(&up.key("sshAuthorizedKeys"), &u.ssh_authorized_keys, |k| {
            k.as_str()
        });
        c.unique(&up.key("groups"), &u.groups, |g| g.as_str());
    }
    c.unique(&users, &p.users, |u| u.name.as_str());
    c.unique(&path.key("groups"), &p.groups, |g| g.name.as_str());
}

/// An argument may appear once across both lists.
pub(super) fn check_kernel_arguments(c: &mut Checker, k: &KernelArguments, path: &JsonPath) {
    let mut seen = HashSet::new();
    for (key, list) in [
        ("shouldExist", &k.should_exist),
        ("shouldNotExist", &k.should_not_exist),
    ] {
        for (i, arg) in list.iter().enumerate() {
            if !seen.insert(arg.as_str()) {
                c.error(path.key(key).index(i), DUPLICATE);
            }
        }
    }
}
