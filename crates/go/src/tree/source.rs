/// A 1-based line and a 1-based byte column.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct LineCol {
    pub line: u32,
    pub col: u32,
}

/// The bytes of a document with an index of where its lines start, to turn offsets into
/// line:column without rescanning.
pub struct Source<'a> {
    pub bytes: &'a [u8],
    lines: Lines,
    /// Where go-yaml's lines start, if not where `lines` says (see [`yaml_line_starts`]).
    yaml_lines: std::cell::OnceCell<Option<Vec<u32>>>,
}

/// Where the lines of a document start, without the document: byte positions can still be
/// told as line:column once a large text has been let go.
pub struct Lines {
    starts: Vec<u32>,
    len: usize,
}

impl Lines {
    pub fn new(bytes: &[u8]) -> Lines {
        let mut starts = vec![0u32];
        starts.extend(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| i as u32 + 1),
        );
        Lines {
            starts,
            len: bytes.len(),
        }
    }

    /// The document's length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Line and column of the byte at `offset` (columns count bytes, as upstream does).
    pub fn locate(&self, offset: u32) -> LineCol {
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        LineCol {
            line: line as u32 + 1,
            col: offset - self.starts[line] + 1,
        }
    }
}

impl<'a> Source<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Source {
            bytes,
            lines: Lines::new(bytes),
            yaml_lines: std::cell::OnceCell::new(),
        }
    }

    /// Line and column of the byte at `offset` (columns count bytes, as upstream does).
    pub fn locate(&self, offset: u32) -> LineCol {
        self.lines.locate(offset)
    }

    /// Line and column of the byte at `offset` as go-yaml counts them: lines also end at a
    /// lone CR, NEL, LS and PS (see [`yaml_line_starts`]), columns count characters.
    pub fn locate_chars(&self, offset: u32) -> LineCol {
        let (line, start) = match self.yaml_lines.get_or_init(|| yaml_line_starts(self.bytes)) {
            None => {
                let lc = self.locate(offset);
                (lc.line, self.lines.starts[lc.line as usize - 1] as usize)
            }
            Some(starts) => {
                let i = starts.partition_point(|&s| s <= offset).max(1) - 1;
                (i as u32 + 1, starts[i] as usize)
            }
        };
        let end = (offset as usize).min(self.bytes.len());
        // A byte-order mark is not part of the first line to go-yaml's reader.
        let start = if start == 0 && self.bytes.starts_with(b"\xef\xbb\xbf") && end >= 3 {
            3
        } else {
            start
        };
        let col = String::from_utf8_lossy(&self.bytes[start..end.max(start)])
            .chars()
            .count() as u32
            + 1;
        LineCol { line, col }
    }

    pub fn line_count(&self) -> u32 {
        self.lines.starts.len() as u32
    }

    /// The text of 1-based line `line`, without its newline.
    pub fn line_text(&self, line: u32) -> &'a [u8] {
        let i = (line as usize).saturating_sub(1);
        let Some(&start) = self.lines.starts.get(i) else {
            return &[];
        };
        let end = self
            .lines
            .starts
            .get(i + 1)
            .map(|&e| e as usize - 1)
            .unwrap_or(self.bytes.len());
        let line = &self.bytes[start as usize..end.max(start as usize)];
        line.strip_suffix(b"\r").unwrap_or(line)
    }
}

/// The length of the line break go-yaml reads at the start of `rest` that `\n` lines do not
/// have: a CR not followed by LF, NEL, LS or PS.
fn other_break(rest: &[u8]) -> Option<usize> {
    match rest {
        [b'\r', b'\n', ..] => None,
        [b'\r', ..] => Some(1),
        [0xC2, 0x85, ..] => Some(2),
        [0xE2, 0x80, 0xA8 | 0xA9, ..] => Some(3),
        _ => None,
    }
}

/// Where go-yaml's lines start, or `None` when that is after each `\n` only (a CRLF is one
/// break to both).
pub(super) fn yaml_line_starts(bytes: &[u8]) -> Option<Vec<u32>> {
    if !bytes.iter().any(|&b| matches!(b, b'\r' | 0xC2 | 0xE2)) {
        return None;
    }
    let mut starts = vec![0u32];
    let mut other = false;
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\n' {
            starts.push(i as u32 + 1);
            i += 1;
        } else if let Some(n) = other_break(&bytes[i..]) {
            starts.push((i + n) as u32);
            other = true;
            i += n;
        } else {
            i += 1;
        }
    }
    other.then_some(starts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn locates_offsets() {
        let s = Source::new(b"ab\ncd\n\nef");
        assert_eq!(s.locate(0), LineCol { line: 1, col: 1 });
        assert_eq!(s.locate(2), LineCol { line: 1, col: 3 });
        assert_eq!(s.locate(3), LineCol { line: 2, col: 1 });
        assert_eq!(s.locate(7), LineCol { line: 4, col: 1 });
        assert_eq!(s.line_text(2), b"cd");
        assert_eq!(s.line_text(3), b"");
        assert_eq!(s.line_text(4), b"ef");
        let l = Lines::new(b"ab\ncd\n\nef");
        assert_eq!((l.len(), l.locate(7)), (9, LineCol { line: 4, col: 1 }));
    }

    #[test]
    fn locates_offsets_as_go_yaml_breaks_lines() {
        let s = Source::new("a\rb\r\nc\u{85}d\u{2028}é\u{2029}f\ng".as_bytes());
        let at = |t: &str| {
            s.bytes
                .windows(t.len())
                .position(|w| w == t.as_bytes())
                .unwrap()
        };
        let lc = |line, col| LineCol { line, col };
        assert_eq!(s.locate_chars(at("b") as u32), lc(2, 1));
        assert_eq!(s.locate_chars(at("c") as u32), lc(3, 1));
        assert_eq!(s.locate_chars(at("d") as u32), lc(4, 1));
        assert_eq!(s.locate_chars(at("f") as u32), lc(6, 1));
        assert_eq!(s.locate_chars(at("g") as u32), lc(7, 1));
        // Characters, not bytes; CRLF alone needs no table.
        assert_eq!(s.locate_chars(at("\u{2029}") as u32), lc(5, 2));
        assert_eq!(yaml_line_starts(b"a\r\nb\n"), None);
    }
}
