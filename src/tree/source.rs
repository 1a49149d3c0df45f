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
        }
    }

    /// Line and column of the byte at `offset` (columns count bytes, as upstream does).
    pub fn locate(&self, offset: u32) -> LineCol {
        self.lines.locate(offset)
    }

    /// Line and column of the byte at `offset`, the column counted in characters (as YAML
    /// tools count it).
    pub fn locate_chars(&self, offset: u32) -> LineCol {
        let lc = self.locate(offset);
        let start = self.lines.starts[lc.line as usize - 1] as usize;
        let end = (offset as usize).min(self.bytes.len());
        // A byte-order mark is not part of the first line to go-yaml's reader.
        let start = if start == 0 && self.bytes.starts_with(b"\xef\xbb\xbf") && end >= 3 {
            3
        } else {
            start
        };
        let col = String::from_utf8_lossy(&self.bytes[start..end])
            .chars()
            .count() as u32
            + 1;
        LineCol { line: lc.line, col }
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
}
