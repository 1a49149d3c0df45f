//! go-yaml's emitter for block-style documents: indentation, the indicators of sequences
//! and mappings, and the scalar styles.

use super::chars::{analyze, at, is_bom, is_break, is_printable, is_space, width};
use super::style::{self, Style};
use super::{Quoting, Y, format_float};

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    DocumentEnd,
    SequenceItem,
    MappingKey,
    MappingSimpleValue,
    MappingValue,
}

const BEST_INDENT: i32 = 2;
// go-yaml v3 initializes the width to "unlimited": long lines are never folded.
const BEST_WIDTH: usize = (1 << 31) - 1;

struct Emitter {
    quoting: Quoting,
    out: Vec<u8>,
    column: usize,
    indent: i32,
    indents: Vec<i32>,
    states: Vec<State>,
    whitespace: bool,
    indention: bool,
}

impl Emitter {
    fn put(&mut self, b: u8) {
        self.out.push(b);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push(b'\n');
        self.column = 0;
        self.indention = true;
    }

    /// Copies one (possibly multi-byte) character.
    fn write(&mut self, s: &[u8], i: &mut usize) {
        let w = width(s[*i]).max(1);
        self.out.extend_from_slice(&s[*i..(*i + w).min(s.len())]);
        self.column += 1;
        *i += w;
    }

    fn write_break(&mut self, s: &[u8], i: &mut usize) {
        if s[*i] == b'\n' {
            self.put_break();
            *i += 1;
        } else {
            self.write(s, i);
            self.column = 0;
            self.indention = true;
        }
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0) as usize;
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(b' ');
        }
        self.whitespace = true;
    }

    fn write_indicator(&mut self, ind: &[u8], need_ws: bool, is_ws: bool, is_indention: bool) {
        if need_ws && !self.whitespace {
            self.put(b' ');
        }
        for &b in ind {
            self.put(b);
        }
        self.whitespace = is_ws;
        self.indention = self.indention && is_indention;
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            if self.states.last() == Some(&State::SequenceItem) {
                self.indent += 2;
            } else {
                self.indent = BEST_INDENT * ((self.indent + BEST_INDENT) / BEST_INDENT);
            }
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn node(&mut self, y: &Y, simple_key: bool) {
        match y {
            Y::Null => self.scalar("null", false, simple_key),
            Y::Bool(b) => self.scalar(if *b { "true" } else { "false" }, false, simple_key),
            Y::Num(f) => self.scalar(&format_float(*f), false, simple_key),
            Y::Str(s) => self.scalar(s, true, simple_key),
            Y::Token(t) => self.scalar(t, false, simple_key),
            Y::Seq(items) if items.is_empty() => self.empty(b"[", b"]"),
            Y::Map(entries) if entries.is_empty() => self.empty(b"{", b"}"),
            Y::Seq(items) => {
                self.increase_indent(false, false);
                for item in items {
                    self.write_indent();
                    self.write_indicator(b"-", true, false, true);
                    self.states.push(State::SequenceItem);
                    self.node(item, false);
                    self.states.pop();
                }
                self.pop_indent();
            }
            Y::Map(entries) => {
                self.increase_indent(false, false);
                for (k, v) in entries {
                    self.write_indent();
                    let simple =
                        !k.contains('\n') && !analyze(k.as_bytes()).multiline && k.len() <= 128;
                    if simple {
                        self.states.push(State::MappingSimpleValue);
                        self.node(&Y::Str(k.clone()), true);
                        self.states.pop();
                        self.write_indicator(b":", false, false, false);
                    } else {
                        self.write_indicator(b"?", true, false, true);
                        self.states.push(State::MappingValue);
                        self.node(&Y::Str(k.clone()), false);
                        self.states.pop();
                        self.write_indent();
                        self.write_indicator(b":", true, false, true);
                    }
                    self.states.push(State::MappingKey);
                    self.node(v, false);
                    self.states.pop();
                }
                self.pop_indent();
            }
        }
    }

    fn empty(&mut self, open: &[u8], close: &[u8]) {
        self.write_indicator(open, true, true, false);
        self.increase_indent(true, false);
        self.pop_indent();
        if self.column == 0 {
            self.write_indent();
        }
        self.write_indicator(close, false, false, false);
    }

    /// A scalar; `string` values may need quoting to read back as strings.
    fn scalar(&mut self, text: &str, string: bool, simple_key: bool) {
        let value = text.as_bytes();
        let a = analyze(value);
        let style = style::choose(self.quoting, text, string, simple_key, &a);
        self.increase_indent(true, false);
        let breaks = !simple_key;
        match style {
            Style::Plain => self.plain(value, breaks),
            Style::Single => self.single(value, breaks),
            Style::Double => self.double(value, breaks),
            Style::Literal => self.literal(value),
            Style::Json => self.json(text),
        }
        self.pop_indent();
    }

    fn plain(&mut self, v: &[u8], allow_breaks: bool) {
        // go-yaml writes no separator before an empty plain scalar, but never writes one:
        // empty strings are quoted. The readable writer's empty token (an entry left
        // empty) gets the separator.
        if !self.whitespace {
            self.put(b' ');
        }
        let (mut spaces, mut breaks) = (false, false);
        let mut i = 0;
        while i < v.len() {
            if is_space(v, i) {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && !is_space(v, i + 1) {
                    self.write_indent();
                    i += 1;
                } else {
                    self.write(v, &mut i);
                }
                spaces = true;
            } else if is_break(v, i) {
                if !breaks && v[i] == b'\n' {
                    self.put_break();
                }
                self.write_break(v, &mut i);
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(v, &mut i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        if !v.is_empty() {
            self.whitespace = false;
        }
        self.indention = false;
    }

    fn single(&mut self, v: &[u8], allow_breaks: bool) {
        self.write_indicator(b"'", true, false, false);
        let (mut spaces, mut breaks) = (false, false);
        let mut i = 0;
        while i < v.len() {
            if is_space(v, i) {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i < v.len() - 1
                    && !is_space(v, i + 1)
                {
                    self.write_indent();
                    i += 1;
                } else {
                    self.write(v, &mut i);
                }
                spaces = true;
            } else if is_break(v, i) {
                if !breaks && v[i] == b'\n' {
                    self.put_break();
                }
                self.write_break(v, &mut i);
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if v[i] == b'\'' {
                    self.put(b'\'');
                }
                self.write(v, &mut i);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator(b"'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn double(&mut self, v: &[u8], allow_breaks: bool) {
        let mut spaces = false;
        self.write_indicator(b"\"", true, false, false);
        let mut i = 0;
        while i < v.len() {
            if !is_printable(v, i)
                || is_bom(v, i)
                || is_break(v, i)
                || v[i] == b'"'
                || v[i] == b'\\'
            {
                self.escape(v, &mut i);
                spaces = false;
            } else if is_space(v, i) {
                if allow_breaks && !spaces && self.column > BEST_WIDTH && i > 0 && i < v.len() - 1 {
                    self.write_indent();
                    if is_space(v, i + 1) {
                        self.put(b'\\');
                    }
                    i += 1;
                } else {
                    self.write(v, &mut i);
                }
                spaces = true;
            } else {
                self.write(v, &mut i);
                spaces = false;
            }
        }
        self.write_indicator(b"\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    /// The character at `i` escaped, in a double-quoted scalar.
    fn escape(&mut self, v: &[u8], i: &mut usize) {
        let w = width(v[*i]).max(1);
        let ch = std::str::from_utf8(&v[*i..(*i + w).min(v.len())])
            .ok()
            .and_then(|s| s.chars().next())
            .map_or(v[*i] as u32, |c| c as u32);
        *i += w;
        self.put(b'\\');
        let short = match ch {
            0x00 => Some(b'0'),
            0x07 => Some(b'a'),
            0x08 => Some(b'b'),
            0x09 => Some(b't'),
            0x0A => Some(b'n'),
            0x0B => Some(b'v'),
            0x0C => Some(b'f'),
            0x0D => Some(b'r'),
            0x1B => Some(b'e'),
            0x22 => Some(b'"'),
            0x5C => Some(b'\\'),
            0x85 => Some(b'N'),
            0xA0 => Some(b'_'),
            0x2028 => Some(b'L'),
            0x2029 => Some(b'P'),
            _ => None,
        };
        match short {
            Some(c) => self.put(c),
            None => {
                let (lead, digits) = if ch <= 0xFF {
                    (b'x', 2)
                } else if ch <= 0xFFFF {
                    (b'u', 4)
                } else {
                    (b'U', 8)
                };
                self.put(lead);
                for k in (0..digits).rev() {
                    let d = ((ch >> (k * 4)) & 0xF) as u8;
                    self.put(if d < 10 { b'0' + d } else { b'A' + d - 10 });
                }
            }
        }
    }

    /// A double-quoted scalar with JSON's escapes (the readable writer's).
    fn json(&mut self, text: &str) {
        if !self.whitespace {
            self.put(b' ');
        }
        let quoted = serde_json::to_string(text).unwrap_or_default();
        self.out.extend_from_slice(quoted.as_bytes());
        self.column += quoted.chars().count();
        self.whitespace = false;
        self.indention = false;
    }

    /// Whether the character at `i` breaks the line: for the readable writer only `\n`.
    fn line_break(&self, v: &[u8], i: usize) -> bool {
        match self.quoting {
            Quoting::GoYaml => is_break(v, i),
            Quoting::Readable => at(v, i) == b'\n',
        }
    }

    fn literal(&mut self, v: &[u8]) {
        self.write_indicator(b"|", true, false, false);
        if is_space(v, 0) || self.line_break(v, 0) {
            self.write_indicator(&[b'0' + BEST_INDENT as u8], false, false, false);
        }
        let chomp = if v.is_empty() {
            Some(b'-')
        } else {
            let mut i = v.len() - 1;
            while i > 0 && v[i] & 0xC0 == 0x80 {
                i -= 1;
            }
            if !self.line_break(v, i) {
                Some(b'-')
            } else if i == 0 {
                Some(b'+')
            } else {
                i -= 1;
                while i > 0 && v[i] & 0xC0 == 0x80 {
                    i -= 1;
                }
                self.line_break(v, i).then_some(b'+')
            }
        };
        if let Some(c) = chomp {
            self.write_indicator(&[c], false, false, false);
        }
        self.whitespace = true;
        let mut breaks = true;
        let mut i = 0;
        while i < v.len() {
            if self.line_break(v, i) {
                self.write_break(v, &mut i);
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.write(v, &mut i);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

/// The YAML document for `y`, ending with a line break.
pub(super) fn document(y: &Y, quoting: Quoting) -> Vec<u8> {
    let mut e = Emitter {
        quoting,
        out: Vec::new(),
        column: 0,
        indent: -1,
        indents: Vec::new(),
        states: vec![State::DocumentEnd],
        whitespace: true,
        indention: true,
    };
    e.node(y, false);
    // The document end: a final line break unless at the start of a line.
    e.write_indent();
    e.out
}
