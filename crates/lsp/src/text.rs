//! A document's text and the translation between byte offsets and the protocol's positions
//! (zero-based line, UTF-16 code units within the line, the encoding every client speaks).

use lsp_types::{Position, Range};

/// The text of an open document with the offsets where its lines start.
#[derive(Debug, Clone, Default)]
pub(crate) struct Text {
    text: String,
    starts: Vec<usize>,
}

impl Text {
    pub(crate) fn new(text: String) -> Text {
        let mut t = Text {
            text,
            starts: Vec::new(),
        };
        t.index();
        t
    }

    fn index(&mut self) {
        self.starts.clear();
        self.starts.push(0);
        self.starts.extend(
            self.text
                .bytes()
                .enumerate()
                .filter(|(_, b)| *b == b'\n')
                .map(|(i, _)| i + 1),
        );
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.text
    }

    pub(crate) fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// Line `n` (zero-based) without its line break.
    pub(crate) fn line(&self, n: usize) -> &str {
        let Some(&start) = self.starts.get(n) else {
            return "";
        };
        let end = self.starts.get(n + 1).map_or(self.text.len(), |e| e - 1);
        self.text[start..end].trim_end_matches('\r')
    }

    pub(crate) fn line_start(&self, n: usize) -> usize {
        self.starts.get(n).copied().unwrap_or(self.text.len())
    }

    /// The byte offset of `pos`; a position past a line's end is its end, past the last
    /// line the document's end (as the protocol asks).
    pub(crate) fn offset(&self, pos: Position) -> usize {
        let line = pos.line as usize;
        if line >= self.starts.len() {
            return self.text.len();
        }
        let start = self.starts[line];
        let text = self.line(line);
        start + utf16_to_byte(text, pos.character as usize)
    }

    /// The position of byte `offset` (rounded down to a character boundary).
    pub(crate) fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i - 1,
        };
        let before = &self.text[self.starts[line]..offset];
        Position::new(line as u32, before.encode_utf16().count() as u32)
    }

    pub(crate) fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    /// Applies one change of `textDocument/didChange`: `range` replaced by `new`, or the
    /// whole text without a range.
    pub(crate) fn apply(&mut self, range: Option<Range>, new: &str) {
        match range {
            None => self.text = new.to_string(),
            Some(r) => {
                let start = self.offset(r.start);
                let end = self.offset(r.end).max(start);
                self.text.replace_range(start..end, new);
            }
        }
        self.index();
    }
}

/// The byte offset within `line` of UTF-16 code unit `units` (the line's end when past it,
/// the character's start when inside a surrogate pair).
pub(crate) fn utf16_to_byte(line: &str, units: usize) -> usize {
    let mut seen = 0;
    for (i, c) in line.char_indices() {
        if seen >= units {
            return i;
        }
        seen += c.len_utf16();
        if seen > units {
            return i;
        }
    }
    line.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units() {
        let t = Text::new("a: é😀x\nb\r\n".to_string());
        // é is 1 unit (2 bytes), 😀 is 2 units (4 bytes).
        assert_eq!(t.offset(Position::new(0, 3)), 3);
        assert_eq!(t.offset(Position::new(0, 4)), 5);
        assert_eq!(t.offset(Position::new(0, 6)), 9);
        assert_eq!(t.position(9), Position::new(0, 6));
        assert_eq!(t.line(1), "b");
        assert_eq!(t.offset(Position::new(0, 99)), 10);
        assert_eq!(t.offset(Position::new(9, 0)), t.as_str().len());
    }

    #[test]
    fn applies_incremental_changes() {
        let mut t = Text::new("variant: fcos\nversion: 1.5.0\n".to_string());
        t.apply(
            Some(Range::new(Position::new(1, 9), Position::new(1, 14))),
            "1.6.0",
        );
        assert_eq!(t.as_str(), "variant: fcos\nversion: 1.6.0\n");
        t.apply(
            Some(Range::new(Position::new(2, 0), Position::new(2, 0))),
            "x",
        );
        assert_eq!(t.line(2), "x");
        t.apply(None, "new");
        assert_eq!((t.as_str(), t.line_count()), ("new", 1));
    }
}
