//! Where each part of the generated Ignition config came from in the Butane source, so that
//! findings about the output point at what the user wrote.
//!
//! Most of the output mirrors the source with camelCase keys for snake_case ones; the
//! translation records the exceptions (sugar such as `inline`, trees, generated units) as
//! rules: prefix rewrites, or "everything below comes from here" for generated entries.

use flint_go::tree::{JsonPath, Seg};

/// One rule: output paths under `from` come from `to`, followed by the rest of the path
/// (a renamed subtree), or from `to` exactly (everything generated from one source, as
/// upstream's "common source" translations).
#[derive(Debug, Clone)]
struct Rule {
    from: JsonPath,
    to: JsonPath,
    exact: bool,
}

#[derive(Debug, Default, Clone)]
pub struct PathMap {
    rules: Vec<Rule>,
}

/// The Butane spelling of an Ignition key.
pub(crate) fn snake(key: &str) -> String {
    match key {
        "sizeMiB" => return "size_mib".into(),
        "startMiB" => return "start_mib".into(),
        _ => {}
    }
    let mut out = String::with_capacity(key.len() + 4);
    for c in key.chars() {
        if c.is_ascii_uppercase() {
            out.push('_');
            out.push(c.to_ascii_lowercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// `p` spelled the Butane way, with no rule applied (upstream's fallback).
pub(crate) fn snake_path(p: &JsonPath) -> JsonPath {
    let mut out = JsonPath::root();
    for s in p.segs() {
        out.push(match s {
            Seg::Key(k) => Seg::Key(snake(k).into()),
            Seg::Index(i) => Seg::Index(*i),
        });
    }
    out
}

impl PathMap {
    /// Output paths starting with `ignition` come from source paths starting with `source`.
    pub fn add(&mut self, ignition: JsonPath, source: JsonPath) {
        self.rules.push(Rule {
            from: ignition,
            to: source,
            exact: false,
        });
    }

    /// Everything at or below output path `ignition` comes from `source` itself.
    pub fn add_exact(&mut self, ignition: JsonPath, source: JsonPath) {
        self.rules.push(Rule {
            from: ignition,
            to: source,
            exact: true,
        });
    }

    /// Renumbers the entries of output list `list` after a merge moved them: `moves` holds
    /// (old index, new index) for every entry that stayed. Rules below the list follow
    /// their entry, and an entry that moved without a rule of its own keeps its source.
    pub fn reindex(&mut self, list: &JsonPath, moves: &[(usize, usize)]) {
        let depth = list.segs().len();
        let sources: Vec<(usize, JsonPath)> = moves
            .iter()
            .filter(|(old, new)| {
                old != new && !self.rules.iter().any(|r| r.from == list.index(*old))
            })
            .map(|&(old, new)| (new, self.source_of(&list.index(old))))
            .collect();
        let new_of = |old: usize| moves.iter().find(|(o, _)| *o == old).map(|(_, n)| *n);
        let mut rules = Vec::with_capacity(self.rules.len() + sources.len());
        for rule in self.rules.drain(..) {
            let segs = rule.from.segs();
            if segs.len() > depth
                && segs.starts_with(list.segs())
                && let Seg::Index(old) = segs[depth]
            {
                // A rule of an entry that is gone goes with it.
                if let Some(new) = new_of(old) {
                    let mut moved = list.index(new);
                    for s in &segs[depth + 1..] {
                        moved.push(s.clone());
                    }
                    rules.push(Rule {
                        from: moved,
                        ..rule
                    });
                }
                continue;
            }
            rules.push(rule);
        }
        self.rules = rules;
        for (new, source) in sources {
            self.add(list.index(new), source);
        }
    }

    /// The recorded rules (output prefix, source, exact), in the order they were added.
    pub fn rules(&self) -> impl Iterator<Item = (&JsonPath, &JsonPath, bool)> {
        self.rules.iter().map(|r| (&r.from, &r.to, r.exact))
    }

    /// The source path of output path `p`: the longest recorded prefix decides (the last
    /// one added among equals); the rest of the path is spelled the Butane way.
    pub fn source_of(&self, p: &JsonPath) -> JsonPath {
        let segs = p.segs();
        let best = self
            .rules
            .iter()
            .filter(|r| segs.starts_with(r.from.segs()))
            .max_by_key(|r| r.from.segs().len());
        let (mut out, rest) = match best {
            Some(r) if r.exact => return r.to.clone(),
            Some(r) => (r.to.clone(), &segs[r.from.segs().len()..]),
            None => (JsonPath::root(), segs),
        };
        for s in rest {
            out.push(match s {
                Seg::Key(k) => Seg::Key(snake(k).into()),
                Seg::Index(i) => Seg::Index(*i),
            });
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_paths() {
        let mut m = PathMap::default();
        let files = JsonPath::root().key("storage").key("files");
        m.add(
            files.index(3),
            JsonPath::root().key("storage").key("trees").index(0),
        );
        m.add(
            files.index(0).key("contents").key("source"),
            files.index(0).key("contents").key("inline"),
        );
        let p = files.index(1).key("contents").key("httpHeaders");
        assert_eq!(
            m.source_of(&p).to_string(),
            "$.storage.files.1.contents.http_headers"
        );
        assert_eq!(
            m.source_of(&files.index(3).key("mode")).to_string(),
            "$.storage.trees.0.mode"
        );
        assert_eq!(
            m.source_of(&files.index(0).key("contents").key("source"))
                .to_string(),
            "$.storage.files.0.contents.inline"
        );
        assert_eq!(snake("sizeMiB"), "size_mib");
        assert_eq!(snake("sshAuthorizedKeys"), "ssh_authorized_keys");
    }
}
