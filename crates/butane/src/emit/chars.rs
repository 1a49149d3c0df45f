//! go-yaml's character classes over UTF-8 bytes, and its analysis of a scalar: which
//! styles may write it so that it reads back the same.

/// The length of the UTF-8 sequence byte `b` starts (0 for a continuation byte).
pub(super) fn width(b: u8) -> usize {
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

/// Byte `i` of `b`, 0 past the end (go-yaml's buffers end in NUL).
pub(super) fn at(b: &[u8], i: usize) -> u8 {
    b.get(i).copied().unwrap_or(0)
}

pub(super) fn is_printable(b: &[u8], i: usize) -> bool {
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

pub(super) fn is_space(b: &[u8], i: usize) -> bool {
    at(b, i) == b' '
}

/// A YAML 1.1 line break: CR, LF, NEL, LS or PS.
pub(super) fn is_break(b: &[u8], i: usize) -> bool {
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
pub(super) fn is_bom(b: &[u8], _i: usize) -> bool {
    at(b, 0) == 0xEF && at(b, 1) == 0xBB && at(b, 2) == 0xBF
}

/// The styles a scalar may be written in.
pub(super) struct Analysis {
    pub multiline: bool,
    pub block_plain_allowed: bool,
    pub single_quoted_allowed: bool,
    pub block_allowed: bool,
}

/// What a scan of a scalar found: indicators, and where its spaces and breaks are.
#[derive(Default)]
struct Scan {
    block_indicators: bool,
    line_breaks: bool,
    special: bool,
    tabs: bool,
    leading_space: bool,
    leading_break: bool,
    trailing_space: bool,
    trailing_break: bool,
    break_space: bool,
    space_break: bool,
}

/// go-yaml's `yaml_emitter_analyze_scalar`.
pub(super) fn analyze(value: &[u8]) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    verdict(&scan(value))
}

fn scan(value: &[u8]) -> Scan {
    let mut s = Scan::default();
    if value.starts_with(b"---") || value.starts_with(b"...") {
        s.block_indicators = true;
    }
    let (mut prev_space, mut prev_break) = (false, false);
    let mut preceded_by_ws = true;
    let mut i = 0;
    while i < value.len() {
        let w = width(value[i]).max(1);
        let followed_by_ws = i + w >= value.len() || is_blank(value, i + w);
        s.indicator(value[i], i == 0, preceded_by_ws, followed_by_ws);
        if value[i] == b'\t' {
            s.tabs = true;
        } else if !is_printable(value, i) {
            s.special = true;
        }
        let (first, last) = (i == 0, i + w == value.len());
        if is_space(value, i) {
            s.leading_space |= first;
            s.trailing_space |= last;
            s.break_space |= prev_break;
            (prev_space, prev_break) = (true, false);
        } else if is_break(value, i) {
            s.line_breaks = true;
            s.leading_break |= first;
            s.trailing_break |= last;
            s.space_break |= prev_space;
            (prev_space, prev_break) = (false, true);
        } else {
            (prev_space, prev_break) = (false, false);
        }
        preceded_by_ws = is_blankz(value, i);
        i += w;
    }
    s
}

impl Scan {
    /// Notes whether byte `c`, at the start of the value or inside it, is an indicator
    /// that a plain block scalar may not hold there. (Flow styles are never written, so
    /// their indicators are not looked for.)
    fn indicator(&mut self, c: u8, first: bool, preceded_by_ws: bool, followed_by_ws: bool) {
        self.block_indicators |= if first {
            match c {
                b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>'
                | b'\'' | b'"' | b'%' | b'@' | b'`' => true,
                b'?' | b':' | b'-' => followed_by_ws,
                _ => false,
            }
        } else {
            match c {
                b':' => followed_by_ws,
                b'#' => preceded_by_ws,
                _ => false,
            }
        };
    }
}

/// The styles a scan allows.
fn verdict(s: &Scan) -> Analysis {
    let mut a = Analysis {
        multiline: s.line_breaks,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if s.leading_space || s.leading_break || s.trailing_space || s.trailing_break {
        a.block_plain_allowed = false;
    }
    if s.trailing_space {
        a.block_allowed = false;
    }
    if s.break_space {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if s.space_break || s.tabs || s.special {
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if s.space_break || s.special {
        a.block_allowed = false;
    }
    if s.line_breaks || s.block_indicators {
        a.block_plain_allowed = false;
    }
    a
}
