use std::borrow::Cow;
use std::fmt;

/// One step into a document: an object key or an array index. Keys are mostly the field
/// names written in the code, borrowed rather than copied: the validator builds a path for
/// every entry it checks, and copying each key made that a fifth of its time.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Seg {
    Key(Cow<'static, str>),
    Index(usize),
}

/// A path into a document, printed the way the upstream tools print it: `$.storage.files.0.path`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct JsonPath(Vec<Seg>);

impl JsonPath {
    pub fn root() -> Self {
        JsonPath(Vec::new())
    }

    /// A path of keys and indices (a segment that reads as a number is an index): tests
    /// write paths this way.
    pub fn of(segs: &[&'static str]) -> JsonPath {
        let mut path = JsonPath::root();
        for s in segs {
            path = match s.parse::<usize>() {
                Ok(i) => path.index(i),
                Err(_) => path.key(*s),
            };
        }
        path
    }

    pub fn segs(&self) -> &[Seg] {
        &self.0
    }

    pub fn is_root(&self) -> bool {
        self.0.is_empty()
    }

    pub fn key(&self, k: impl Into<Cow<'static, str>>) -> JsonPath {
        self.then(Seg::Key(k.into()))
    }

    pub fn index(&self, i: usize) -> JsonPath {
        self.then(Seg::Index(i))
    }

    /// This path and one step more, allocated once at its size.
    fn then(&self, seg: Seg) -> JsonPath {
        let mut v = Vec::with_capacity(self.0.len() + 1);
        v.extend_from_slice(&self.0);
        v.push(seg);
        JsonPath(v)
    }

    pub fn push(&mut self, seg: Seg) {
        self.0.push(seg);
    }

    pub fn pop(&mut self) {
        self.0.pop();
    }

    /// The last key of the path, if it ends in one.
    pub fn last_key(&self) -> Option<&str> {
        match self.0.last() {
            Some(Seg::Key(k)) => Some(k),
            _ => None,
        }
    }

    /// The path without the `$` and its dot: `storage.files.0.path`.
    pub fn dotted(&self) -> String {
        let s = self.to_string();
        s.strip_prefix("$.").unwrap_or("").to_string()
    }
}

impl From<Vec<Seg>> for JsonPath {
    fn from(v: Vec<Seg>) -> Self {
        JsonPath(v)
    }
}

impl fmt::Display for JsonPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("$")?;
        for seg in &self.0 {
            match seg {
                Seg::Key(k) => write!(f, ".{k}")?,
                Seg::Index(i) => write!(f, ".{i}")?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_like_upstream() {
        let p = JsonPath::root()
            .key("storage")
            .key("files")
            .index(0)
            .key("path");
        assert_eq!(p.to_string(), "$.storage.files.0.path");
        assert_eq!(p.dotted(), "storage.files.0.path");
        assert_eq!(JsonPath::root().to_string(), "$");
    }
}
