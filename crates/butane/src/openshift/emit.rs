//! YAML the way upstream writes a MachineConfig: the JSON of the config read back as
//! generic values (numbers become float64) and encoded by go-yaml v3 with an indent of 2:
//! block style, map keys in go-yaml's natural order, strings plain where that reads back
//! as the same string (else double-quoted, or single-quoted where plain is not allowed),
//! multi-line strings as literal blocks, long lines never folded.
//!
//! The emitter follows go-yaml's state machine closely enough to reproduce its output byte
//! for byte for the values a config holds (no anchors, tags or comments).

use std::cmp::Ordering;

/// A generic value, as Go's `interface{}` holds decoded JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Y {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Seq(Vec<Y>),
    Map(Vec<(String, Y)>),
}

impl Y {
    /// Converts decoded JSON, sorting every map's keys the way go-yaml does.
    pub fn from_json(v: &serde_json::Value) -> Y {
        match v {
            serde_json::Value::Null => Y::Null,
            serde_json::Value::Bool(b) => Y::Bool(*b),
            serde_json::Value::Number(n) => Y::Num(n.as_f64().unwrap_or(0.0)),
            serde_json::Value::String(s) => Y::Str(s.clone()),
            serde_json::Value::Array(a) => Y::Seq(a.iter().map(Y::from_json).collect()),
            serde_json::Value::Object(o) => {
                let mut entries: Vec<(String, Y)> = o
                    .iter()
                    .map(|(k, v)| (k.clone(), Y::from_json(v)))
                    .collect();
                entries.sort_by(|a, b| key_order(&a.0, &b.0));
                Y::Map(entries)
            }
        }
    }
}

/// go-yaml's order for string keys: letters by code point, runs of digits by value, and
/// letters after other characters (before them right after a digit).
pub fn key_order(a: &str, b: &str) -> Ordering {
    let (ar, br): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    let mut digits = false;
    let n = ar.len().min(br.len());
    for i in 0..n {
        if ar[i] == br[i] {
            digits = is_digit(ar[i]);
            continue;
        }
        let (al, bl) = (ar[i].is_alphabetic(), br[i].is_alphabetic());
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            let a_first = if digits { al } else { bl };
            return if a_first {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let (mut an, mut bn): (i64, i64) = (0, 0);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && is_digit(ar[j - 1]) {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && is_digit(ar[ai]) {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && is_digit(br[bi]) {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

/// Go's `unicode.IsDigit`, for the digits keys are written with.
fn is_digit(c: char) -> bool {
    c.is_ascii_digit()
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`.
pub fn format_float(f: f64) -> String {
    if f.is_nan() {
        return ".nan".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // The shortest digits that read back as f, and the decimal exponent.
    let e = format!("{:e}", f.abs());
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if f < 0.0 { "-" } else { "" };
    // The shortest form switches to an exponent below 1e-4 and from 1e6 on.
    if !(-4..6).contains(&exp) {
        exp_form(sign, &digits, exp)
    } else {
        fixed_form(sign, &digits, exp)
    }
}

fn exp_form(sign: &str, digits: &str, exp: i32) -> String {
    let (first, rest) = digits.split_at(1);
    let mut s = format!("{sign}{first}");
    if !rest.is_empty() {
        s.push('.');
        s.push_str(rest);
    }
    s.push('e');
    s.push(if exp < 0 { '-' } else { '+' });
    s.push_str(&format!("{:02}", exp.abs()));
    s
}

fn fixed_form(sign: &str, digits: &str, exp: i32) -> String {
    let point = exp + 1;
    let mut s = sign.to_string();
    if point <= 0 {
        s.push_str("0.");
        s.push_str(&"0".repeat((-point) as usize));
        s.push_str(digits);
    } else if point as usize >= digits.len() {
        s.push_str(digits);
        s.push_str(&"0".repeat(point as usize - digits.len()));
    } else {
        s.push_str(&digits[..point as usize]);
        s.push('.');
        s.push_str(&digits[point as usize..]);
    }
    s
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    DocumentEnd,
    SequenceItem,
    MappingKey,
    MappingSimpleValue,
    MappingValue,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    Single,
    Double,
    Literal,
}

#[derive(Default)]
struct Analysis {
    multiline: bool,
    flow_plain_allowed: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

const BEST_INDENT: i32 = 2;
// go-yaml v3 initializes the width to "unlimited": long lines are never folded.
const BEST_WIDTH: usize = (1 << 31) - 1;

fn width(b: u8) -> usize {
    if b & 0x80 == 0 {
        1
    } else if b & 0xE0 == 0xC0 {
        2
    } else if b & 0xF0 == 0xE0 {
        3
    } else if b & 0xF8 == 0xF0 {
        4
    } else {
        0
    }
}

fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

fn is_printable(b: &[u8], i: usize) -> bool {
    let c = at(b, i);
    c == 0x0A
        || (0x20..=0x7E).contains(&c)
        || (c == 0xC2 && at(b, i + 1) >= 0xA0)
        || (c > 0xC2 && c < 0xED)
        || (c == 0xED && at(b, i + 1) < 0xA0)
        || c == 0xEE
        || (c == 0xEF
            && !(at(b, i + 1) == 0xBB && at(b, i + 2) == 0xBF)
            && !(at(b, i + 1) == 0xBF && (at(b, i + 2) == 0xBE || at(b, i + 2) == 0xBF)))
}

fn is_space(b: &[u8], i: usize) -> bool {
    at(b, i) == b' '
}

fn is_break(b: &[u8], i: usize) -> bool {
    let c = at(b, i);
    c == b'\r'
        || c == b'\n'
        || (c == 0xC2 && at(b, i + 1) == 0x85)
        || (c == 0xE2 && at(b, i + 1) == 0x80 && at(b, i + 2) == 0xA8)
        || (c == 0xE2 && at(b, i + 1) == 0x80 && at(b, i + 2) == 0xA9)
}

fn is_blank(b: &[u8], i: usize) -> bool {
    matches!(at(b, i), b' ' | b'\t')
}

fn is_blankz(b: &[u8], i: usize) -> bool {
    is_blank(b, i) || is_break(b, i) || i >= b.len() || at(b, i) == 0
}

/// go-yaml's test for a byte order mark looks at the start of the value wherever `i` is: a
/// value that starts with one has every character escaped.
fn is_bom(b: &[u8], _i: usize) -> bool {
    at(b, 0) == 0xEF && at(b, 1) == 0xBB && at(b, 2) == 0xBF
}

fn analyze(value: &[u8]) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            flow_plain_allowed: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let (mut block_ind, mut flow_ind) = (false, false);
    let (mut line_breaks, mut special, mut tabs) = (false, false, false);
    let (mut leading_space, mut leading_break, mut trailing_space, mut trailing_break) =
        (false, false, false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut prev_space, mut prev_break) = (false, false);
    if value.starts_with(b"---") || value.starts_with(b"...") {
        block_ind = true;
        flow_ind = true;
    }
    let mut preceded_by_ws = true;
    let mut i = 0;
    while i < value.len() {
        let w = width(value[i]).max(1);
        let followed_by_ws = i + w >= value.len() || is_blank(value, i + w);
        if i == 0 {
            match value[i] {
                b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>'
                | b'\'' | b'"' | b'%' | b'@' | b'`' => {
                    flow_ind = true;
                    block_ind = true;
                }
                b'?' | b':' => {
                    flow_ind = true;
                    if followed_by_ws {
                        block_ind = true;
                    }
                }
                b'-' if followed_by_ws => {
                    flow_ind = true;
                    block_ind = true;
                }
                _ => {}
            }
        } else {
            match value[i] {
                b',' | b'?' | b'[' | b']' | b'{' | b'}' => flow_ind = true,
                b':' => {
                    flow_ind = true;
                    if followed_by_ws {
                        block_ind = true;
                    }
                }
                b'#' if preceded_by_ws => {
                    flow_ind = true;
                    block_ind = true;
                }
                _ => {}
            }
        }
        if value[i] == b'\t' {
            tabs = true;
        } else if !is_printable(value, i) {
            special = true;
        }
        if is_space(value, i) {
            if i == 0 {
                leading_space = true;
            }
            if i + w == value.len() {
                trailing_space = true;
            }
            if prev_break {
                break_space = true;
            }
            prev_space = true;
            prev_break = false;
        } else if is_break(value, i) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if i + w == value.len() {
                trailing_break = true;
            }
            if prev_space {
                space_break = true;
            }
            prev_space = false;
            prev_break = true;
        } else {
            prev_space = false;
            prev_break = false;
        }
        preceded_by_ws = is_blankz(value, i);
        i += w;
    }
    let mut a = Analysis {
        multiline: line_breaks,
        flow_plain_allowed: true,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || tabs || special {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special {
        a.block_allowed = false;
    }
    if line_breaks {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if flow_ind {
        a.flow_plain_allowed = false;
    }
    if block_ind {
        a.block_plain_allowed = false;
    }
    a
}

/// Whether go-yaml would read `s` back as a string if written plain (its `resolve` gives
/// `!!str` and it is neither a base-60 float nor a YAML 1.1 boolean). `<<` is written plain,
/// as upstream writes it, though a reader would take it for a merge key.
fn plain_reads_as_string(s: &str) -> bool {
    use flint_go::yaml::resolve::{Resolved, is_timestamp, resolve, yaml_1_1_bool};
    if s.is_empty() || yaml_1_1_bool(s).is_some() {
        return false;
    }
    if base60_float(s) || is_timestamp(s) {
        return false;
    }
    matches!(resolve(s), Resolved::Str)
}

/// `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`
fn base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = usize::from(matches!(b.first(), Some(b'-' | b'+')));
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    i += 1;
    while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) && i - start < 2 {
            i += 1;
        }
        let group = &b[start..i];
        let ok = match group.len() {
            1 => true,
            2 => group[0] <= b'5',
            _ => false,
        };
        if !ok {
            return false;
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while b.get(i).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

struct Emitter {
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
        let requested = if string {
            if text.contains('\n') {
                Style::Literal
            } else if plain_reads_as_string(text) {
                Style::Plain
            } else {
                Style::Double
            }
        } else {
            Style::Plain
        };
        let mut style = requested;
        if simple_key && a.multiline {
            style = Style::Double;
        }
        if style == Style::Plain {
            if !a.block_plain_allowed {
                style = Style::Single;
            }
            if value.is_empty() && simple_key {
                style = Style::Single;
            }
        }
        if style == Style::Single && !a.single_quoted_allowed {
            style = Style::Double;
        }
        if style == Style::Literal && (!a.block_allowed || simple_key) {
            style = Style::Double;
        }
        self.increase_indent(true, false);
        let breaks = !simple_key;
        match style {
            Style::Plain => self.plain(value, breaks),
            Style::Single => self.single(value, breaks),
            Style::Double => self.double(value, breaks),
            Style::Literal => self.literal(value),
        }
        self.pop_indent();
    }

    fn plain(&mut self, v: &[u8], allow_breaks: bool) {
        if !v.is_empty() && !self.whitespace {
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
                let w = width(v[i]).max(1);
                let ch = std::str::from_utf8(&v[i..(i + w).min(v.len())])
                    .ok()
                    .and_then(|s| s.chars().next())
                    .map_or(v[i] as u32, |c| c as u32);
                i += w;
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

    fn literal(&mut self, v: &[u8]) {
        self.write_indicator(b"|", true, false, false);
        if is_space(v, 0) || is_break(v, 0) {
            self.write_indicator(&[b'0' + BEST_INDENT as u8], false, false, false);
        }
        let chomp = if v.is_empty() {
            Some(b'-')
        } else {
            let mut i = v.len() - 1;
            while i > 0 && v[i] & 0xC0 == 0x80 {
                i -= 1;
            }
            if !is_break(v, i) {
                Some(b'-')
            } else if i == 0 {
                Some(b'+')
            } else {
                i -= 1;
                while i > 0 && v[i] & 0xC0 == 0x80 {
                    i -= 1;
                }
                is_break(v, i).then_some(b'+')
            }
        };
        if let Some(c) = chomp {
            self.write_indicator(&[c], false, false, false);
        }
        self.whitespace = true;
        let mut breaks = true;
        let mut i = 0;
        while i < v.len() {
            if is_break(v, i) {
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

/// The YAML document go-yaml writes for `y`, ending with a line break.
pub fn to_yaml(y: &Y) -> Vec<u8> {
    let mut e = Emitter {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn yaml(v: serde_json::Value) -> String {
        String::from_utf8(to_yaml(&Y::from_json(&v))).unwrap()
    }

    #[test]
    fn formats_floats_like_go() {
        assert_eq!(format_float(420.0), "420");
        assert_eq!(format_float(100000.0), "100000");
        assert_eq!(format_float(1000000.0), "1e+06");
        assert_eq!(format_float(1234567.0), "1.234567e+06");
        assert_eq!(format_float(-5.0), "-5");
        assert_eq!(format_float(0.5), "0.5");
        assert_eq!(format_float(9007199254740993.0), "9.007199254740992e+15");
    }

    #[test]
    fn writes_like_go_yaml() {
        let v = serde_json::json!({
            "b": [{"x": "", "y": "yes", "z": "a: b"}, "multi\nline\n"],
            "a": {"n": 1, "t": true, "e": [], "m": {}},
        });
        assert_eq!(
            yaml(v),
            "a:\n  e: []\n  m: {}\n  \"n\": 1\n  t: true\nb:\n  - x: \"\"\n    \"y\": \"yes\"\n    z: 'a: b'\n  - |\n    multi\n    line\n"
        );
    }

    #[test]
    fn orders_keys_naturally() {
        let mut keys = vec!["a10", "a2", "b", "A", "a", "_x", "1"];
        keys.sort_by(|a, b| key_order(a, b));
        assert_eq!(keys, ["_x", "1", "A", "a", "a2", "a10", "b"]);
    }

    #[test]
    fn detects_what_would_not_read_back_as_text() {
        for s in [
            "1",
            "0x1F",
            "1e3",
            "true",
            "~",
            "null",
            "2001-12-14",
            "1:20",
            "off",
            ".5",
        ] {
            assert!(!plain_reads_as_string(s), "{s}");
        }
        // `<<` too: upstream writes it plain.
        for s in ["abc", "1.2.3", "2001-13-14", "x:y", "a b", "-", ".", "<<"] {
            assert!(plain_reads_as_string(s), "{s}");
        }
    }
}
