//! Block scalars (`|` and `>`) read the way go-yaml reads them, which differs from the
//! YAML 1.2 parser underneath at the edges users hit: the last line of a file without a
//! line break keeps no break, blank lines with trailing spaces at the end count as breaks,
//! and a tab where indentation is expected is an error.
//!
//! go-yaml's rules, as observed:
//! - the header holds a chomping indicator (`-` strip, `+` keep, none clip) and an
//!   indentation indicator (1–9) in either order, then blanks and an optional comment;
//! - the content's indentation is the parent's plus the indicator, or else the column of the
//!   first non-empty line, but at least the widest of the blank lines before it and at
//!   least one more than the parent's;
//! - blank lines before the content (and between lines) are line breaks; spaces on them up
//!   to the indentation are eaten, and a tab among them is an error;
//! - the scalar ends at the first non-empty line indented less, or at the end of input;
//! - folding (`>`) joins two lines with a space unless either starts with a blank or blank
//!   lines separate them (then only their breaks are kept);
//! - clip keeps the final line break (if there is one), keep also the breaks after it, strip
//!   none of them.

/// A problem go-yaml reports in a block scalar: its message and the byte offset where it
/// was found.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockError {
    pub message: &'static str,
    pub at: usize,
}

struct Cursor<'a> {
    b: &'a [u8],
    pos: usize,
    /// Column in characters since the last line break.
    col: i64,
}

impl Cursor<'_> {
    fn peek(&self) -> u8 {
        self.b.get(self.pos).copied().unwrap_or(0)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.b.len() || self.b[self.pos] == 0
    }

    /// The length of the line break here (CR LF, CR, LF, NEL, LS, PS), 0 if none.
    fn break_len(&self) -> usize {
        let b = &self.b[self.pos.min(self.b.len())..];
        match b {
            [b'\r', b'\n', ..] => 2,
            [b'\r' | b'\n', ..] => 1,
            [0xC2, 0x85, ..] => 2,
            [0xE2, 0x80, 0xA8 | 0xA9, ..] => 3,
            _ => 0,
        }
    }

    fn is_blank(&self) -> bool {
        matches!(self.peek(), b' ' | b'\t')
    }

    /// Moves past one character.
    fn skip(&mut self) {
        let c = self.peek();
        let w = if c < 0x80 {
            1
        } else if c >= 0xF0 {
            4
        } else if c >= 0xE0 {
            3
        } else {
            2
        };
        self.pos = (self.pos + w).min(self.b.len());
        self.col += 1;
    }

    /// Consumes a line break, giving what it reads as: LS and PS stay themselves, every
    /// other break is `\n`.
    fn read_break(&mut self, out: &mut Vec<u8>) {
        let n = self.break_len();
        if n == 0 {
            return;
        }
        if self.b[self.pos] == 0xE2 {
            out.extend_from_slice(&self.b[self.pos..self.pos + n]);
        } else {
            out.push(b'\n');
        }
        self.pos += n;
        self.col = 0;
    }

    /// Eats indentation and blank lines, collecting their breaks; sets the indentation
    /// when it is still unknown.
    fn breaks(
        &mut self,
        indent: &mut i64,
        parent: i64,
        out: &mut Vec<u8>,
    ) -> Result<(), BlockError> {
        let mut widest = 0;
        loop {
            while (*indent == 0 || self.col < *indent) && self.peek() == b' ' {
                self.skip();
            }
            widest = widest.max(self.col);
            if (*indent == 0 || self.col < *indent) && self.peek() == b'\t' {
                return Err(BlockError {
                    message: "found a tab character where an indentation space is expected",
                    at: self.pos,
                });
            }
            if self.break_len() == 0 {
                break;
            }
            self.read_break(out);
        }
        if *indent == 0 {
            *indent = widest.max(parent + 1).max(1);
        }
        Ok(())
    }
}

/// The value of the block scalar whose indicator is at byte `at` of `text`, inside a
/// collection indented by `parent` columns (-1 at the top level).
pub fn value(text: &str, at: usize, parent: i64) -> Result<String, BlockError> {
    let folded = text.as_bytes().get(at) == Some(&b'>');
    let mut c = Cursor {
        b: text.as_bytes(),
        pos: at,
        col: 0,
    };
    c.skip();
    let (mut chomp, mut increment) = (0i8, 0i64);
    let zero = |pos| BlockError {
        message: "found an indentation indicator equal to 0",
        at: pos,
    };
    for _ in 0..2 {
        match c.peek() {
            b'+' | b'-' if chomp == 0 => {
                chomp = if c.peek() == b'+' { 1 } else { -1 };
                c.skip();
            }
            b'0' if increment == 0 => return Err(zero(c.pos)),
            d @ b'1'..=b'9' if increment == 0 => {
                increment = i64::from(d - b'0');
                c.skip();
            }
            _ => break,
        }
    }
    while c.is_blank() {
        c.skip();
    }
    if c.peek() == b'#' {
        while !c.at_end() && c.break_len() == 0 {
            c.skip();
        }
    }
    if !c.at_end() && c.break_len() == 0 {
        return Err(BlockError {
            message: "did not find expected comment or line break",
            at: c.pos,
        });
    }
    let mut scratch = Vec::new();
    c.read_break(&mut scratch);

    let mut indent = if increment > 0 {
        if parent >= 0 {
            parent + increment
        } else {
            increment
        }
    } else {
        0
    };
    let mut out: Vec<u8> = Vec::new();
    let mut leading_break: Vec<u8> = Vec::new();
    let mut trailing: Vec<u8> = Vec::new();
    c.breaks(&mut indent, parent, &mut trailing)?;
    let mut leading_blank = false;
    while c.col == indent && !c.at_end() {
        let trailing_blank = c.is_blank();
        if folded && !leading_blank && !trailing_blank && leading_break.first() == Some(&b'\n') {
            if trailing.is_empty() {
                out.push(b' ');
            }
        } else {
            out.extend_from_slice(&leading_break);
        }
        leading_break.clear();
        out.append(&mut trailing);
        leading_blank = c.is_blank();
        let start = c.pos;
        while !c.at_end() && c.break_len() == 0 {
            c.skip();
        }
        out.extend_from_slice(&c.b[start..c.pos]);
        c.read_break(&mut leading_break);
        c.breaks(&mut indent, parent, &mut trailing)?;
    }
    if chomp != -1 {
        out.extend_from_slice(&leading_break);
    }
    if chomp == 1 {
        out.extend_from_slice(&trailing);
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(text: &str, parent: i64) -> String {
        let at = text.find(['|', '>']).unwrap();
        value(text, at, parent).unwrap()
    }

    #[test]
    fn reads_like_go_yaml() {
        // No line break at the end of input: none in the value.
        assert_eq!(v("a: |\n  line", 0), "line");
        assert_eq!(v("a: |+\n  line", 0), "line");
        assert_eq!(v("a: |\n  line\n", 0), "line\n");
        // Trailing blanks at the end count as (kept) breaks only with keep.
        assert_eq!(v("a: >\n\n  folded\n  ", 0), "\nfolded\n");
        assert_eq!(v("a: |+\n  x\n\n  ", 0), "x\n\n");
        assert_eq!(v("a: |-\n  x\n\n", 0), "x");
        // Folding joins lines, keeps more-indented ones and blank-separated ones apart.
        assert_eq!(
            v("a: >\n  a\n  b\n\n  c\n   d\n  e\n", 0),
            "a b\nc\n d\ne\n"
        );
        // An explicit indentation keeps the extra spaces.
        assert_eq!(v("a: |2\n    text", 0), "  text");
        assert_eq!(v("- |1\n  x\n", 0), " x\n");
        // CR LF becomes LF.
        assert_eq!(v("a: |\r\n  x\r\n  y\r\n", 0), "x\ny\n");
        // A comment after the header.
        assert_eq!(v("a: |- # c\n  x\n", 0), "x");
    }

    #[test]
    fn refuses_what_go_yaml_refuses() {
        let e = value("a: |\n\tx\n", 3, 0).unwrap_err();
        assert_eq!(
            e.message,
            "found a tab character where an indentation space is expected"
        );
        assert_eq!(
            value("a: |x\n", 3, 0).unwrap_err().message,
            "did not find expected comment or line break"
        );
        assert_eq!(
            value("a: |0\n", 3, 0).unwrap_err().message,
            "found an indentation indicator equal to 0"
        );
    }
}
