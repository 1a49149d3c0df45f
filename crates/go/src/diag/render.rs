//! Butane's pretty rendering of a diagnostic: a header, the file position, and the source
//! lines around it with the offending token underlined.
//!
//! ```text
//! error[$.storage.files.1]:
//!   --> in.bu:8:7
//!     |
//!   6 |       contents:
//!   7 |         inline: a
//!   8 |     - path: /etc/dup
//!     |       ^^^^^ duplicate entry defined
//!   9 |       contents:
//!  10 |         inline: b
//!     |
//! ```

use super::{Diagnostic, Severity};
use std::fmt::Write;

const BLUE: &str = "\x1b[1;34m";
const RESET: &str = "\x1b[0m";

fn kind_color(s: Severity) -> &'static str {
    match s {
        Severity::Error => "\x1b[1;31m",
        Severity::Warning => "\x1b[1;33m",
    }
}

/// Longest source line shown whole in a snippet, as upstream shows every line; longer ones
/// (a hostile file's megabyte lines) are shown as a window around the column.
const MAX_LINE: usize = 4096;

/// Renders `d` against the source `text` of file `file`. Diagnostics without a usable
/// position fall back to the one-line form.
pub fn pretty(d: &Diagnostic, file: &str, text: &str, color: bool) -> String {
    let lines: Vec<&str> = text.split('\n').collect();
    let Some(pos) = d
        .pos
        .filter(|p| p.line >= 1 && (p.line as usize) <= lines.len() && p.col >= 1)
    else {
        return format!("{d}\n");
    };
    let line_text = lines[pos.line as usize - 1];
    let line_chars: Vec<char> = line_text.chars().collect();
    if pos.col as usize > line_chars.len().max(1) {
        return format!("{d}\n");
    }
    let paint = |code: &str, s: &str| {
        if color {
            format!("{code}{s}{RESET}")
        } else {
            s.to_string()
        }
    };
    let first = pos.line.saturating_sub(2).max(1);
    let last = (pos.line + 2).min(lines.len() as u32);
    let width = last.to_string().len();
    let gutter = " ".repeat(width);

    let mut out = String::new();
    let kind = paint(kind_color(d.severity), &d.severity.to_string());
    match &d.path {
        Some(p) if !p.is_root() => writeln!(out, "{kind}[{p}]:").unwrap(),
        _ => writeln!(out, "{kind}:").unwrap(),
    }
    writeln!(
        out,
        "  {} {file}:{}:{}",
        paint(BLUE, "-->"),
        pos.line,
        pos.col
    )
    .unwrap();
    writeln!(out, " {gutter} |").unwrap();
    // A hostile file can hold megabyte-long lines; show a window around the column.
    let col0 = pos.col as usize - 1;
    let from = if line_chars.len() > MAX_LINE {
        col0.saturating_sub(MAX_LINE / 4)
    } else {
        0
    };
    let window = |line: &str| -> String {
        let n = line.chars().count();
        if n <= MAX_LINE && from == 0 {
            return line.to_string();
        }
        let body: String = line.chars().skip(from).take(MAX_LINE).collect();
        let head = if from > 0 && n > from { "…" } else { "" };
        let tail = if n > from + MAX_LINE { "…" } else { "" };
        format!("{head}{body}{tail}")
    };
    for n in first..=last {
        let number = paint(BLUE, &format!("{n:>width$}"));
        writeln!(out, " {number} | {}", window(lines[n as usize - 1])).unwrap();
        if n == pos.line {
            let start = col0 - from + usize::from(from > 0);
            // Butane's marker runs to the next white space character (Unicode's, as Go's
            // `unicode.IsSpace`) from the column taken as a byte offset, and counts bytes
            // (the same as characters on ASCII lines). At a blank (trailing white space, or
            // one reached because a character of several bytes comes earlier on the line)
            // a finding's marker is empty; a YAML error's (no path) is one caret.
            let len = to_white_space(line_text.as_bytes().get(col0..).unwrap_or_default())
                .min(MAX_LINE - (col0 - from))
                .max(usize::from(d.path.is_none()));
            let carets = paint(BLUE, &"^".repeat(len));
            writeln!(
                out,
                " {gutter} | {}{carets} {}",
                " ".repeat(start),
                d.message
            )
            .unwrap();
        }
    }
    writeln!(out, " {gutter} |").unwrap();
    out
}

/// The bytes of `text` before its first white space character, read as Go reads UTF-8 (a
/// byte that starts no character is a character of its own, never white space).
fn to_white_space(text: &[u8]) -> usize {
    let mut at = 0;
    for chunk in text.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c.is_whitespace() {
                return at;
            }
            at += c.len_utf8();
        }
        // Bytes that are no UTF-8: none is white space.
        at += chunk.invalid().len();
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tree::{JsonPath, LineCol};

    #[test]
    fn renders_like_butane() {
        let text = "a\nb\nstorage:\n  files:\n    - path: /etc/dup\n      x: 1\n";
        let d = Diagnostic::error(
            Some(JsonPath::root().key("storage").key("files").index(1)),
            Some(LineCol { line: 5, col: 7 }),
            "duplicate entry defined",
        );
        assert_eq!(
            pretty(&d, "in.bu", text, false),
            "error[$.storage.files.1]:\n  --> in.bu:5:7\n   |\n 3 | storage:\n 4 |   files:\n 5 |     - path: /etc/dup\n   |       ^^^^^ duplicate entry defined\n 6 |       x: 1\n 7 | \n   |\n"
        );
        // Go's white space is Unicode's: the marker stops at a no-break space.
        assert_eq!(to_white_space("\"r\u{a0}xx\"".as_bytes()), 2);
        assert_eq!(to_white_space("é\u{2028}".as_bytes()), 2);
        assert_eq!(to_white_space(&[0xa9, b'a', b' ']), 2);
        let none = Diagnostic::error(None, None, "m");
        assert_eq!(pretty(&none, "in.bu", text, false), "error: m\n");
    }
}
