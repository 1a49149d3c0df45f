//! The tokenizer of go-yaml (v3), whose behaviour Butane users see: which documents it
//! accepts, the values of scalars, and the errors (words and lines) it reports.
//!
//! Tokens are made lazily, as the parser asks for them, with go-yaml's lookahead (three
//! tokens, more while the first may still turn out to be a mapping key), so that a problem
//! after the first document is only reported when go-yaml would reach it.
//!
//! How it reads, in short: indentation opens and closes block collections (BLOCK-SEQUENCE-
//! START, BLOCK-MAPPING-START, BLOCK-END); a scalar, flow collection, alias or anchor may be
//! a "simple key", which becomes one when a `:` follows on the same line (a KEY token is
//! then inserted before it); tabs count as white space except where indentation is read
//! (line starts, and after `-`, `?` and `:` of block collections); comments run from `#`
//! after white space to the end of the line.

use std::collections::VecDeque;

/// A place in the input: byte offset, characters read, 0-based line and column (in
/// characters).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Mark {
    pub pos: usize,
    pub index: usize,
    pub line: usize,
    pub column: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Kind {
    StreamStart,
    StreamEnd,
    VersionDirective(u32, u32),
    TagDirective(String, String),
    DocumentStart,
    DocumentEnd,
    BlockSequenceStart,
    BlockMappingStart,
    BlockEnd,
    FlowSequenceStart,
    FlowSequenceEnd,
    FlowMappingStart,
    FlowMappingEnd,
    BlockEntry,
    FlowEntry,
    Key,
    Value,
    Alias(String),
    Anchor(String),
    /// Handle and suffix (`!!` and `str`; an empty handle for a verbatim tag).
    Tag(String, String),
    Scalar(String, Style),
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Token {
    pub kind: Kind,
    pub start: Mark,
    pub end: Mark,
}

/// Where a problem was found, with go-yaml's words. The line go-yaml names is derived from
/// the marks (see `Error::line`).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Error {
    pub problem: String,
    pub problem_mark: Mark,
    pub context_mark: Option<Mark>,
    /// Scanner errors count lines one further than parser errors.
    pub scanner: bool,
    /// Input errors (control characters) name no place at all.
    pub reader: bool,
}

impl Error {
    fn scan(context: Mark, problem: impl Into<String>, at: Mark) -> Error {
        Error {
            problem: problem.into(),
            problem_mark: at,
            context_mark: Some(context),
            scanner: true,
            reader: false,
        }
    }

    /// The line go-yaml prints (`line N:`), or 0 when it prints none: the context's line
    /// if it is not the first, else the problem's, counted from 0 for parser errors and
    /// from 1 for scanner errors.
    pub(super) fn line(&self) -> usize {
        if self.reader {
            return 0;
        }
        let bump = usize::from(self.scanner);
        match self.context_mark {
            Some(c) if c.line != 0 => c.line + bump,
            _ if self.problem_mark.line != 0 => self.problem_mark.line + bump,
            _ => 0,
        }
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct SimpleKey {
    possible: bool,
    required: bool,
    token_number: usize,
    mark: Mark,
}

pub(super) struct Scanner<'a> {
    text: &'a str,
    b: &'a [u8],
    mark: Mark,
    tokens: VecDeque<Token>,
    /// Tokens handed to the parser so far.
    tokens_parsed: usize,
    stream_start_produced: bool,
    stream_end_produced: bool,
    indent: i64,
    indents: Vec<i64>,
    simple_key_allowed: bool,
    simple_keys: Vec<SimpleKey>,
    flow_level: usize,
    /// Tokens produced since the last line break read inside one (go-yaml only looks
    /// for a comment on the same line as a token).
    newlines: usize,
    /// go-yaml's reader, whose buffering shows through (see `need`).
    reader: Reader,
    /// The reader's buffering cannot show: the input holds no control character and no
    /// byte order mark past its start, so `need` has nothing to do.
    quiet: bool,
    /// Buffers the scalars are built in, kept from one scalar to the next: each value is
    /// then allocated once, at its size.
    scratch: Scratch,
    failed: Option<Error>,
}

#[derive(Default)]
struct Scratch {
    value: String,
    leading: String,
    trailing: String,
    blanks: String,
}

const BOM: &[u8] = &[0xEF, 0xBB, 0xBF];

/// What go-yaml's reader has done: its buffer starts at byte `start` of the input and holds
/// it decoded up to `end`, after `read` pieces of 512 bytes (and `padded` NULs past the end).
struct Reader {
    start: usize,
    end: usize,
    read: usize,
    eof: bool,
    padded: usize,
    /// The first control character, which the reader refuses when it decodes it.
    control: Option<usize>,
}

fn is_blank(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

fn is_alpha(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// The length of the run of printable ASCII, tabs and line breaks that `b` starts with.
/// Whole blocks are tested without stopping early, which the compiler turns into vector
/// instructions (a byte at a time was a few milliseconds of a 3 MB document).
fn plain_ascii(b: &[u8]) -> usize {
    let ok = |x: u8| matches!(x, b'\t' | b'\n' | b'\r' | 0x20..=0x7E);
    let mut start = 0;
    for block in b.chunks_exact(64) {
        if !block.iter().fold(true, |all, &x| all & ok(x)) {
            break;
        }
        start += 64;
    }
    start
        + b[start..]
            .iter()
            .position(|&x| !ok(x))
            .unwrap_or(b.len() - start)
}

/// Characters go-yaml's reader refuses (outside the printable set, tab and line breaks).
pub(super) fn control(c: char) -> bool {
    let v = c as u32;
    !(v == 0x09
        || v == 0x0A
        || v == 0x0D
        || (0x20..=0x7E).contains(&v)
        || v == 0x85
        || (0xA0..=0xD7FF).contains(&v)
        || (0xE000..=0xFFFD).contains(&v)
        || (0x10000..=0x10FFFF).contains(&v))
}

impl<'a> Scanner<'a> {
    pub(super) fn new(text: &'a str) -> Scanner<'a> {
        // Empty input reads as a single line break, as go-yaml makes it.
        let text = if text.is_empty() { "\n" } else { text };
        // Printable ASCII, tab and line breaks are most of any config: skip them bytewise
        // before looking at characters.
        let plain = plain_ascii(text.as_bytes());
        let control = text[plain..]
            .char_indices()
            .find(|(_, c)| control(*c))
            .map(|(i, _)| plain + i);
        // The reader drops a byte order mark at the start (no character is counted).
        let bom = if text.as_bytes().starts_with(BOM) {
            3
        } else {
            0
        };
        let quiet =
            control.is_none() && memchr::memmem::find(&text.as_bytes()[bom..], BOM).is_none();
        Scanner {
            text,
            b: text.as_bytes(),
            mark: Mark {
                pos: bom,
                ..Mark::default()
            },
            tokens: VecDeque::new(),
            tokens_parsed: 0,
            stream_start_produced: false,
            stream_end_produced: false,
            indent: -1,
            indents: Vec::new(),
            simple_key_allowed: false,
            simple_keys: Vec::new(),
            flow_level: 0,
            newlines: 0,
            reader: Reader {
                start: bom,
                end: bom,
                read: 0,
                eof: false,
                padded: 0,
                control,
            },
            quiet,
            scratch: Scratch::default(),
            failed: None,
        }
    }

    // ---- reading

    /// The byte `k` bytes ahead (0 at the end of input, as the reader's terminating NUL).
    fn at(&self, k: usize) -> u8 {
        self.b.get(self.mark.pos + k).copied().unwrap_or(0)
    }

    fn is_z(&self, k: usize) -> bool {
        self.mark.pos + k >= self.b.len()
    }

    /// The length of a line break `k` bytes ahead, 0 if there is none.
    fn break_len(&self, k: usize) -> usize {
        let p = self.mark.pos + k;
        match &self.b[p.min(self.b.len())..] {
            [b'\r', b'\n', ..] => 2,
            [b'\r' | b'\n', ..] => 1,
            [0xC2, 0x85, ..] => 2,
            [0xE2, 0x80, 0xA8 | 0xA9, ..] => 3,
            _ => 0,
        }
    }

    fn is_break(&self, k: usize) -> bool {
        self.break_len(k) > 0
    }

    fn is_blankz(&self, k: usize) -> bool {
        is_blank(self.at(k)) || self.is_break(k) || self.is_z(k)
    }

    fn is_breakz(&self, k: usize) -> bool {
        self.is_break(k) || self.is_z(k)
    }

    fn width(&self) -> usize {
        let c = self.at(0);
        if c < 0x80 {
            1
        } else if c >= 0xF0 {
            4
        } else if c >= 0xE0 {
            3
        } else {
            2
        }
    }

    /// Makes go-yaml's reader hold `ahead` characters from here, as the scanner asks it to
    /// at the same points: it decodes the input in 512-byte pieces, refusing a piece with a
    /// control character in it, and moves the unread characters to the start of its buffer
    /// (where go-yaml looks for a byte order mark, see `scan_to_next_token`).
    #[inline]
    fn need(&mut self, ahead: usize) -> Result<(), Error> {
        if self.quiet {
            return Ok(());
        }
        self.fill(ahead)
    }

    /// `need` where the reader's buffering may show.
    #[inline(never)]
    fn fill(&mut self, ahead: usize) -> Result<(), Error> {
        let pos = self.mark.pos;
        let r = &mut self.reader;
        if r.end >= pos + 4 * ahead {
            return Ok(());
        }
        let count = |from: usize, to: usize| {
            self.text
                .get(from..to.max(from))
                .map_or(0, |t| t.chars().count())
        };
        let mut unread = count(pos, r.end) + r.padded;
        if unread >= ahead {
            return Ok(());
        }
        r.start = pos;
        let mut first = true;
        while unread < ahead {
            // More input is read when the undecoded part is used up (or not on the first
            // round, which decodes what is left).
            let input_pos = (r.read * 512).min(self.b.len());
            if !first || r.end >= input_pos {
                if input_pos == self.b.len() {
                    r.eof = true;
                } else {
                    r.read += 1;
                }
            }
            first = false;
            let mut to = (r.read * 512).min(self.b.len());
            while !self.text.is_char_boundary(to) {
                to -= 1;
            }
            if to > r.end {
                if r.control.is_some_and(|c| c >= r.end && c < to) {
                    return Err(Error {
                        problem: "control characters are not allowed".into(),
                        problem_mark: self.mark,
                        context_mark: None,
                        scanner: false,
                        reader: true,
                    });
                }
                unread += count(r.end, to);
                r.end = to;
            }
            if r.eof {
                r.padded += 1;
                break;
            }
        }
        Ok(())
    }

    /// The last byte the reader holds a character after: up to there `need(1)` has
    /// nothing to do.
    fn held(&self) -> usize {
        if self.quiet {
            usize::MAX
        } else {
            self.reader.end.saturating_sub(1)
        }
    }

    fn skip(&mut self) {
        if self.is_z(0) {
            return;
        }
        if !is_blank(self.at(0)) {
            self.newlines = 0;
        }
        self.mark.pos += self.width();
        self.mark.index += 1;
        self.mark.column += 1;
    }

    /// The scalar buffers, empty.
    fn take_scratch(&mut self) -> Scratch {
        let mut sc = std::mem::take(&mut self.scratch);
        sc.value.clear();
        sc.leading.clear();
        sc.trailing.clear();
        sc.blanks.clear();
        sc
    }

    /// Keeps the buffers for the next scalar; the value built in them, at its size.
    fn give_back(&mut self, sc: Scratch) -> String {
        let value = sc.value.as_str().to_owned();
        self.scratch = sc;
        value
    }

    /// `skip` of the run of spaces from here, up to `room` of them and to byte `limit`.
    fn skip_spaces(&mut self, room: usize, limit: usize) {
        let pos = self.mark.pos;
        let run = (self.b[pos..limit.clamp(pos, self.b.len())].iter())
            .take(room)
            .take_while(|&&c| c == b' ')
            .count();
        self.mark.pos += run;
        self.mark.index += run;
        self.mark.column += run;
    }

    /// Consumes a line break (CR LF counts as one line, two characters).
    fn skip_line(&mut self) {
        let n = self.break_len(0);
        if n == 0 {
            return;
        }
        self.mark.index += if self.at(0) == b'\r' && n == 2 { 2 } else { 1 };
        self.mark.pos += n;
        self.mark.column = 0;
        self.mark.line += 1;
        self.newlines += 1;
    }

    /// Reads one character into `s`.
    fn read(&mut self, s: &mut String) {
        if self.is_z(0) {
            return;
        }
        let w = self.width();
        s.push_str(&self.text[self.mark.pos..self.mark.pos + w]);
        self.skip();
    }

    /// Reads the run of ASCII characters from here for which `more` holds (a line break never
    /// does), up to byte `limit`, into `s`: what `read` on each would do, at once.
    fn read_run(&mut self, s: &mut String, limit: usize, more: impl Fn(u8) -> bool) {
        let pos = self.mark.pos;
        let rest = &self.b[pos..limit.clamp(pos, self.b.len())];
        let n = (rest.iter())
            .position(|&c| !c.is_ascii() || c == b'\n' || c == b'\r' || !more(c))
            .unwrap_or(rest.len());
        self.take_ascii(s, n);
    }

    /// `read_run` of every ASCII character up to a line break (or byte `limit`): the body
    /// of a block scalar's line, found with a byte search instead of a byte loop.
    fn read_to_break(&mut self, s: &mut String, limit: usize) {
        let pos = self.mark.pos;
        let rest = &self.b[pos..limit.clamp(pos, self.b.len())];
        let line = memchr::memchr2(b'\n', b'\r', rest).map_or(rest, |n| &rest[..n]);
        let n = if line.is_ascii() {
            line.len()
        } else {
            line.iter()
                .position(|c| !c.is_ascii())
                .unwrap_or(line.len())
        };
        self.take_ascii(s, n);
    }

    /// Reads the next `n` characters, ASCII and no line break, into `s`: what `read` on
    /// each would do.
    fn take_ascii(&mut self, s: &mut String, n: usize) {
        if n == 0 {
            return;
        }
        let pos = self.mark.pos;
        s.push_str(&self.text[pos..pos + n]);
        if !self.b[pos..pos + n].iter().all(|&c| is_blank(c)) {
            self.newlines = 0;
        }
        self.mark.pos += n;
        self.mark.index += n;
        self.mark.column += n;
    }

    /// Reads a line break into `s`: LS and PS as themselves, the others as `\n`.
    fn read_line(&mut self, s: &mut String) {
        let n = self.break_len(0);
        if n == 0 {
            return;
        }
        if self.at(0) == 0xE2 {
            s.push_str(&self.text[self.mark.pos..self.mark.pos + 3]);
        } else {
            s.push('\n');
        }
        self.skip_line();
    }

    // ---- the token queue

    /// The next token, leaving it in the queue.
    pub(super) fn peek(&mut self) -> Result<&Token, Error> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if let Err(e) = self.fetch_more() {
            self.failed = Some(e.clone());
            return Err(e);
        }
        Ok(self.tokens.front().expect("fetching leaves a token"))
    }

    /// Takes the next token (after `peek`).
    pub(super) fn skip_token(&mut self) -> Token {
        let t = self.tokens.pop_front().expect("a token was peeked");
        self.tokens_parsed += 1;
        if matches!(t.kind, Kind::StreamEnd) {
            self.stream_end_produced = true;
        }
        t
    }

    fn fetch_more(&mut self) -> Result<(), Error> {
        loop {
            if self.tokens.len() > 2 {
                // A possible simple key at the head needs the following tokens to decide.
                let head = self.tokens_parsed;
                let Some(i) = self
                    .simple_keys
                    .iter()
                    .position(|k| k.possible && k.token_number == head)
                else {
                    break;
                };
                if !self.key_valid(i)? {
                    break;
                }
            }
            self.fetch_next()?;
        }
        Ok(())
    }

    fn push(&mut self, kind: Kind, start: Mark, end: Mark) {
        self.tokens.push_back(Token { kind, start, end });
    }

    /// Inserts a token `number` (in the whole stream) before the ones queued after it.
    fn insert(&mut self, number: usize, kind: Kind, mark: Mark) {
        let at = number - self.tokens_parsed;
        self.tokens.insert(
            at,
            Token {
                kind,
                start: mark,
                end: mark,
            },
        );
    }

    // ---- simple keys and indentation

    /// Whether the simple key `i` can still be a key; a required one that cannot is an
    /// error.
    fn key_valid(&mut self, i: usize) -> Result<bool, Error> {
        let k = self.simple_keys[i];
        if !k.possible {
            return Ok(false);
        }
        if k.mark.line < self.mark.line || k.mark.index + 1024 < self.mark.index {
            if k.required {
                return Err(Error::scan(
                    k.mark,
                    "could not find expected ':'",
                    self.mark,
                ));
            }
            self.simple_keys[i].possible = false;
            return Ok(false);
        }
        Ok(true)
    }

    fn save_simple_key(&mut self) -> Result<(), Error> {
        let required = self.flow_level == 0 && self.indent == self.mark.column as i64;
        if self.simple_key_allowed {
            let key = SimpleKey {
                possible: true,
                required,
                token_number: self.tokens_parsed + self.tokens.len(),
                mark: self.mark,
            };
            self.remove_simple_key()?;
            *self.simple_keys.last_mut().expect("a level is open") = key;
        }
        Ok(())
    }

    fn remove_simple_key(&mut self) -> Result<(), Error> {
        let k = self.simple_keys.last_mut().expect("a level is open");
        if k.possible {
            if k.required {
                return Err(Error::scan(
                    k.mark,
                    "could not find expected ':'",
                    self.mark,
                ));
            }
            k.possible = false;
        }
        Ok(())
    }

    fn increase_flow_level(&mut self) -> Result<(), Error> {
        self.simple_keys.push(SimpleKey {
            token_number: self.tokens_parsed + self.tokens.len(),
            mark: self.mark,
            ..SimpleKey::default()
        });
        self.flow_level += 1;
        if self.flow_level > 10_000 {
            let mark = self.mark;
            return Err(Error::scan(mark, "exceeded max depth of 10000", mark));
        }
        Ok(())
    }

    fn decrease_flow_level(&mut self) {
        if self.flow_level > 0 {
            self.flow_level -= 1;
            self.simple_keys.pop();
        }
    }

    /// Opens a block collection at `column` when that is deeper than the current one; the
    /// token goes at stream position `number` (or at the end).
    fn roll_indent(
        &mut self,
        column: usize,
        number: Option<usize>,
        kind: Kind,
        mark: Mark,
    ) -> Result<(), Error> {
        if self.flow_level > 0 {
            return Ok(());
        }
        if self.indent < column as i64 {
            self.indents.push(self.indent);
            self.indent = column as i64;
            if self.indents.len() > 10_000 {
                let k = self.simple_keys.last().map_or(mark, |k| k.mark);
                return Err(Error::scan(k, "exceeded max depth of 10000", mark));
            }
            match number {
                Some(n) => self.insert(n, kind, mark),
                None => self.push(kind, mark, mark),
            }
        }
        Ok(())
    }

    /// Closes the block collections deeper than `column`.
    fn unroll_indent(&mut self, column: i64) {
        if self.flow_level > 0 {
            return;
        }
        while self.indent > column {
            let m = self.mark;
            self.push(Kind::BlockEnd, m, m);
            self.indent = self.indents.pop().unwrap_or(-1);
        }
    }

    // ---- the dispatcher

    fn fetch_next(&mut self) -> Result<(), Error> {
        self.need(1)?;
        if !self.stream_start_produced {
            self.indent = -1;
            self.simple_keys.push(SimpleKey::default());
            self.simple_key_allowed = true;
            self.stream_start_produced = true;
            let m = self.mark;
            self.push(Kind::StreamStart, m, m);
            return Ok(());
        }
        self.scan_to_next_token()?;
        self.unroll_indent(self.mark.column as i64);
        self.need(4)?;
        if self.is_z(0) {
            return self.fetch_stream_end();
        }
        let c = self.at(0);
        let col0 = self.mark.column == 0;
        if col0 && c == b'%' {
            return self.fetch_directive();
        }
        if col0 && self.b[self.mark.pos..].starts_with(b"---") && self.is_blankz(3) {
            return self.fetch_document_indicator(Kind::DocumentStart);
        }
        if col0 && self.b[self.mark.pos..].starts_with(b"...") && self.is_blankz(3) {
            return self.fetch_document_indicator(Kind::DocumentEnd);
        }
        let before = self.tokens.len();
        self.fetch_token(c)?;
        // A comment on the same line as the token (not after a lone `-`) is eaten here,
        // blanks before it included.
        let last_is_entry = self
            .tokens
            .back()
            .is_some_and(|t| matches!(t.kind, Kind::BlockEntry));
        if self.tokens.len() > before && !last_is_entry {
            self.line_comment()?;
        }
        Ok(())
    }

    fn fetch_token(&mut self, c: u8) -> Result<(), Error> {
        let flow = self.flow_level > 0;
        match c {
            b'[' => self.fetch_flow_collection_start(Kind::FlowSequenceStart),
            b'{' => self.fetch_flow_collection_start(Kind::FlowMappingStart),
            b']' => self.fetch_flow_collection_end(Kind::FlowSequenceEnd),
            b'}' => self.fetch_flow_collection_end(Kind::FlowMappingEnd),
            b',' => self.fetch_flow_entry(),
            b'-' if self.is_blankz(1) => self.fetch_block_entry(),
            b'?' if flow || self.is_blankz(1) => self.fetch_key(),
            b':' if flow || self.is_blankz(1) => self.fetch_value(),
            b'*' => self.fetch_anchor(true),
            b'&' => self.fetch_anchor(false),
            b'!' => self.fetch_tag(),
            b'|' | b'>' if !flow => self.fetch_block_scalar(),
            b'\'' | b'"' => self.fetch_flow_scalar(c == b'\''),
            _ => {
                let indicator = matches!(
                    c,
                    b'-' | b'?'
                        | b':'
                        | b','
                        | b'['
                        | b']'
                        | b'{'
                        | b'}'
                        | b'#'
                        | b'&'
                        | b'*'
                        | b'!'
                        | b'|'
                        | b'>'
                        | b'\''
                        | b'"'
                        | b'%'
                        | b'@'
                        | b'`'
                );
                let plain = !(self.is_blankz(0) || indicator)
                    || (c == b'-' && !is_blank(self.at(1)))
                    || (!flow && (c == b'?' || c == b':') && !self.is_blankz(1));
                if plain {
                    self.fetch_plain_scalar()
                } else {
                    let m = self.mark;
                    Err(Error::scan(
                        m,
                        "found character that cannot start any token",
                        m,
                    ))
                }
            }
        }
    }

    /// Skips blanks, comments and line breaks up to the next token. Tabs are white space
    /// in flow collections and where no simple key may start; elsewhere they would be
    /// indentation, which they cannot be.
    fn scan_to_next_token(&mut self) -> Result<(), Error> {
        loop {
            self.need(1)?;
            // go-yaml means to skip a byte order mark at the start of a line, but looks for
            // it at the start of its buffer (see `need`): when one is there, the first
            // character of the line is skipped, whatever it is.
            if self.mark.column == 0
                && self.b[self.reader.start.min(self.b.len())..].starts_with(BOM)
            {
                self.skip();
            }
            self.need(1)?;
            let held = self.held();
            while self.at(0) == b' '
                || ((self.flow_level > 0 || !self.simple_key_allowed) && self.at(0) == b'\t')
            {
                if self.at(0) == b' ' && self.mark.pos < held {
                    // The reader holds a character after these spaces: `need` has nothing
                    // to do.
                    self.skip_spaces(usize::MAX, held);
                    continue;
                }
                self.skip();
                self.need(1)?;
            }
            if self.at(0) == b'#' {
                self.comment_lines()?;
            }
            if self.is_break(0) {
                self.need(2)?;
                self.skip_line();
                if self.flow_level == 0 {
                    self.simple_key_allowed = true;
                }
            } else {
                return Ok(());
            }
        }
    }

    /// Comment lines: go-yaml reads a run of them at once, so white space between them,
    /// tabs included, is never taken for indentation.
    fn comment_lines(&mut self) -> Result<(), Error> {
        loop {
            self.need(1)?;
            while !self.is_breakz(0) {
                self.skip();
                self.need(1)?;
            }
            // Another comment after nothing but white space (looked for within 512
            // bytes, a closing bracket of a flow collection ending the search)?
            let mut k = 0;
            let mut next = None;
            while k < 512 {
                self.need(k + 1)?;
                let c = self.at(k);
                if is_blank(c) {
                    k += 1;
                } else if c == b'#' {
                    next = Some(k);
                    break;
                } else if self.flow_level > 0 && matches!(c, b']' | b'}') {
                    break;
                } else if self.is_break(k) {
                    k += if c == b'\r' { 1 } else { self.break_len(k) };
                } else {
                    break;
                }
            }
            let Some(k) = next else { return Ok(()) };
            let target = self.mark.pos + k;
            while self.mark.pos < target {
                if self.is_break(0) {
                    self.need(2)?;
                    self.skip_line();
                } else {
                    self.skip();
                }
                self.need(1)?;
            }
        }
    }

    /// A comment after the token, on its line: blanks and all, up to the line break.
    fn line_comment(&mut self) -> Result<(), Error> {
        if self.newlines > 0 {
            return Ok(());
        }
        let mut k = 0;
        while k < 512 {
            self.need(k + 1)?;
            if !is_blank(self.at(k)) {
                break;
            }
            k += 1;
        }
        if k < 512 && self.at(k) == b'#' {
            loop {
                self.need(1)?;
                if self.is_breakz(0) {
                    break;
                }
                self.skip();
            }
        }
        Ok(())
    }

    fn fetch_stream_end(&mut self) -> Result<(), Error> {
        if self.mark.column != 0 {
            self.mark.column = 0;
            self.mark.line += 1;
        }
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let m = self.mark;
        self.push(Kind::StreamEnd, m, m);
        Ok(())
    }

    fn fetch_document_indicator(&mut self, kind: Kind) -> Result<(), Error> {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        self.skip();
        self.skip();
        let end = self.mark;
        self.push(kind, start, end);
        Ok(())
    }

    fn fetch_flow_collection_start(&mut self, kind: Kind) -> Result<(), Error> {
        self.save_simple_key()?;
        self.increase_flow_level()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push(kind, start, end);
        Ok(())
    }

    fn fetch_flow_collection_end(&mut self, kind: Kind) -> Result<(), Error> {
        self.remove_simple_key()?;
        self.decrease_flow_level();
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push(kind, start, end);
        Ok(())
    }

    fn fetch_flow_entry(&mut self) -> Result<(), Error> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push(Kind::FlowEntry, start, end);
        Ok(())
    }

    fn fetch_block_entry(&mut self) -> Result<(), Error> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                let m = self.mark;
                return Err(Error::scan(
                    m,
                    "block sequence entries are not allowed in this context",
                    m,
                ));
            }
            let m = self.mark;
            self.roll_indent(m.column, None, Kind::BlockSequenceStart, m)?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push(Kind::BlockEntry, start, end);
        Ok(())
    }

    fn fetch_key(&mut self) -> Result<(), Error> {
        if self.flow_level == 0 {
            if !self.simple_key_allowed {
                let m = self.mark;
                return Err(Error::scan(
                    m,
                    "mapping keys are not allowed in this context",
                    m,
                ));
            }
            let m = self.mark;
            self.roll_indent(m.column, None, Kind::BlockMappingStart, m)?;
        }
        self.remove_simple_key()?;
        self.simple_key_allowed = self.flow_level == 0;
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push(Kind::Key, start, end);
        Ok(())
    }

    fn fetch_value(&mut self) -> Result<(), Error> {
        let i = self.simple_keys.len() - 1;
        if self.key_valid(i)? {
            let k = self.simple_keys[i];
            self.insert(k.token_number, Kind::Key, k.mark);
            self.roll_indent(
                k.mark.column,
                Some(k.token_number),
                Kind::BlockMappingStart,
                k.mark,
            )?;
            self.simple_keys[i].possible = false;
            self.simple_key_allowed = false;
        } else {
            if self.flow_level == 0 {
                if !self.simple_key_allowed {
                    let m = self.mark;
                    return Err(Error::scan(
                        m,
                        "mapping values are not allowed in this context",
                        m,
                    ));
                }
                let m = self.mark;
                self.roll_indent(m.column, None, Kind::BlockMappingStart, m)?;
            }
            self.simple_key_allowed = self.flow_level == 0;
        }
        let start = self.mark;
        self.skip();
        let end = self.mark;
        self.push(Kind::Value, start, end);
        Ok(())
    }

    fn fetch_anchor(&mut self, alias: bool) -> Result<(), Error> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        let mut name = String::new();
        while is_alpha(self.at(0)) {
            self.read(&mut name);
        }
        let end = self.mark;
        let ok_after = self.is_blankz(0)
            || matches!(
                self.at(0),
                b'?' | b':' | b',' | b']' | b'}' | b'%' | b'@' | b'`'
            );
        if name.is_empty() || !ok_after {
            return Err(Error::scan(
                start,
                "did not find expected alphabetic or numeric character",
                self.mark,
            ));
        }
        let kind = if alias {
            Kind::Alias(name)
        } else {
            Kind::Anchor(name)
        };
        self.push(kind, start, end);
        Ok(())
    }

    fn fetch_tag(&mut self) -> Result<(), Error> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.mark;
        let (handle, suffix) = if self.at(1) == b'<' {
            self.skip();
            self.skip();
            let uri = self.tag_uri(false, "", start)?;
            if self.at(0) != b'>' {
                return Err(Error::scan(
                    start,
                    "did not find the expected '>'",
                    self.mark,
                ));
            }
            self.skip();
            (String::new(), uri)
        } else {
            let handle = self.tag_handle(false, start)?;
            if handle.len() > 1 && handle.starts_with('!') && handle.ends_with('!') {
                (handle, self.tag_uri(false, "", start)?)
            } else {
                // A `!suffix` tag (the handle was the start of the suffix), or `!` alone.
                let suffix = self.tag_uri(false, &handle, start)?;
                if suffix.is_empty() {
                    (String::new(), "!".into())
                } else {
                    ("!".into(), suffix)
                }
            }
        };
        if !self.is_blankz(0) {
            return Err(Error::scan(
                start,
                "did not find expected whitespace or line break",
                self.mark,
            ));
        }
        let end = self.mark;
        self.push(Kind::Tag(handle, suffix), start, end);
        Ok(())
    }

    /// A problem in a tag (of a node or of a `%TAG` directive): reported at the tag's start.
    fn tag_error(&self, _directive: bool, start: Mark, problem: &str) -> Error {
        Error::scan(start, problem, self.mark)
    }

    fn tag_handle(&mut self, directive: bool, start: Mark) -> Result<String, Error> {
        if self.at(0) != b'!' {
            return Err(self.tag_error(directive, start, "did not find expected '!'"));
        }
        let mut s = String::new();
        self.read(&mut s);
        while is_alpha(self.at(0)) {
            self.read(&mut s);
        }
        if self.at(0) == b'!' {
            self.read(&mut s);
        } else if directive && s != "!" {
            return Err(self.tag_error(directive, start, "did not find expected '!'"));
        }
        Ok(s)
    }

    fn tag_uri(&mut self, directive: bool, head: &str, start: Mark) -> Result<String, Error> {
        let mut s = String::new();
        let mut has = !head.is_empty();
        if head.len() > 1 {
            s.push_str(&head[1..]);
        }
        loop {
            let c = self.at(0);
            let ok = is_alpha(c)
                || matches!(
                    c,
                    b';' | b'/'
                        | b'?'
                        | b':'
                        | b'@'
                        | b'&'
                        | b'='
                        | b'+'
                        | b'$'
                        | b','
                        | b'.'
                        | b'!'
                        | b'~'
                        | b'*'
                        | b'\''
                        | b'('
                        | b')'
                        | b'['
                        | b']'
                        | b'%'
                );
            if !ok {
                break;
            }
            if c == b'%' {
                self.uri_escapes(directive, start, &mut s)?;
            } else {
                self.read(&mut s);
            }
            has = true;
        }
        if !has {
            return Err(self.tag_error(directive, start, "did not find expected tag URI"));
        }
        Ok(s)
    }

    fn uri_escapes(&mut self, directive: bool, start: Mark, s: &mut String) -> Result<(), Error> {
        let mut bytes = Vec::new();
        let mut left = usize::MAX;
        while left > 0 {
            let hex = |c: u8| (c as char).to_digit(16);
            let (Some(h), Some(l)) = (hex(self.at(1)), hex(self.at(2))) else {
                return Err(self.tag_error(directive, start, "did not find URI escaped octet"));
            };
            if self.at(0) != b'%' {
                return Err(self.tag_error(directive, start, "did not find URI escaped octet"));
            }
            let octet = (h * 16 + l) as u8;
            if left == usize::MAX {
                left = match octet {
                    0x00..=0x7F => 1,
                    0xC0..=0xDF => 2,
                    0xE0..=0xEF => 3,
                    0xF0..=0xF7 => 4,
                    _ => {
                        return Err(self.tag_error(
                            directive,
                            start,
                            "found an incorrect leading UTF-8 octet",
                        ));
                    }
                };
            } else if octet & 0xC0 != 0x80 {
                return Err(self.tag_error(
                    directive,
                    start,
                    "found an incorrect trailing UTF-8 octet",
                ));
            }
            bytes.push(octet);
            self.skip();
            self.skip();
            self.skip();
            left -= 1;
        }
        s.push_str(&String::from_utf8_lossy(&bytes));
        Ok(())
    }

    fn fetch_directive(&mut self) -> Result<(), Error> {
        self.unroll_indent(-1);
        self.remove_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        let mut name = String::new();
        while is_alpha(self.at(0)) {
            self.read(&mut name);
        }
        if name.is_empty() {
            return Err(Error::scan(
                start,
                "could not find expected directive name",
                self.mark,
            ));
        }
        if !self.is_blankz(0) {
            return Err(Error::scan(
                start,
                "found unexpected non-alphabetical character",
                self.mark,
            ));
        }
        let kind = match name.as_str() {
            "YAML" => {
                while is_blank(self.at(0)) {
                    self.skip();
                }
                let major = self.version_number(start)?;
                if self.at(0) != b'.' {
                    return Err(Error::scan(
                        start,
                        "did not find expected digit or '.' character",
                        self.mark,
                    ));
                }
                self.skip();
                let minor = self.version_number(start)?;
                Kind::VersionDirective(major, minor)
            }
            "TAG" => {
                while is_blank(self.at(0)) {
                    self.skip();
                }
                let handle = self.tag_handle(true, start)?;
                if !is_blank(self.at(0)) {
                    return Err(Error::scan(
                        start,
                        "did not find expected whitespace",
                        self.mark,
                    ));
                }
                while is_blank(self.at(0)) {
                    self.skip();
                }
                let prefix = self.tag_uri(true, "", start)?;
                if !self.is_blankz(0) {
                    return Err(Error::scan(
                        start,
                        "did not find expected whitespace or line break",
                        self.mark,
                    ));
                }
                Kind::TagDirective(handle, prefix)
            }
            _ => {
                return Err(Error::scan(
                    start,
                    "found unknown directive name",
                    self.mark,
                ));
            }
        };
        let end = self.mark;
        while is_blank(self.at(0)) {
            self.skip();
        }
        if self.at(0) == b'#' {
            while !self.is_breakz(0) {
                self.skip();
            }
        }
        if !self.is_breakz(0) {
            return Err(Error::scan(
                start,
                "did not find expected comment or line break",
                self.mark,
            ));
        }
        self.skip_line();
        self.push(kind, start, end);
        Ok(())
    }

    fn version_number(&mut self, start: Mark) -> Result<u32, Error> {
        let mut value = 0;
        let mut length = 0;
        while self.at(0).is_ascii_digit() {
            length += 1;
            if length > 2 {
                return Err(Error::scan(
                    start,
                    "found extremely long version number",
                    self.mark,
                ));
            }
            value = value * 10 + u32::from(self.at(0) - b'0');
            self.skip();
        }
        if length == 0 {
            return Err(Error::scan(
                start,
                "did not find expected version number",
                self.mark,
            ));
        }
        Ok(value)
    }

    // ---- scalars

    fn fetch_block_scalar(&mut self) -> Result<(), Error> {
        self.remove_simple_key()?;
        self.simple_key_allowed = true;
        let start = self.mark;
        let literal = self.at(0) == b'|';
        self.skip();
        self.need(1)?;
        // The header: a chomping indicator and an indentation indicator, in either order.
        let (mut chomp, mut increment) = (0i8, 0i64);
        let zero = |s: &Scanner<'_>| {
            Error::scan(start, "found an indentation indicator equal to 0", s.mark)
        };
        let chomp_of = |c: u8| if c == b'+' { 1 } else { -1 };
        if matches!(self.at(0), b'+' | b'-') {
            chomp = chomp_of(self.at(0));
            self.skip();
            self.need(1)?;
            if self.at(0).is_ascii_digit() {
                if self.at(0) == b'0' {
                    return Err(zero(self));
                }
                increment = i64::from(self.at(0) - b'0');
                self.skip();
            }
        } else if self.at(0).is_ascii_digit() {
            if self.at(0) == b'0' {
                return Err(zero(self));
            }
            increment = i64::from(self.at(0) - b'0');
            self.skip();
            self.need(1)?;
            if matches!(self.at(0), b'+' | b'-') {
                chomp = chomp_of(self.at(0));
                self.skip();
            }
        }
        self.need(1)?;
        while is_blank(self.at(0)) {
            self.skip();
            self.need(1)?;
        }
        if self.at(0) == b'#' {
            self.line_comment()?;
            while !self.is_breakz(0) {
                self.skip();
                self.need(1)?;
            }
        }
        if !self.is_breakz(0) {
            return Err(Error::scan(
                start,
                "did not find expected comment or line break",
                self.mark,
            ));
        }
        if self.is_break(0) {
            self.need(2)?;
            self.skip_line();
        }
        let mut end = self.mark;
        let mut indent: i64 = if increment > 0 {
            if self.indent >= 0 {
                self.indent + increment
            } else {
                increment
            }
        } else {
            0
        };
        let Scratch {
            value: mut s,
            leading: mut leading_break,
            trailing: mut trailing_breaks,
            blanks,
        } = self.take_scratch();
        self.block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        self.need(1)?;
        let mut leading_blank = false;
        while self.mark.column as i64 == indent && !self.is_z(0) {
            let trailing_blank = is_blank(self.at(0));
            if !literal && !leading_blank && !trailing_blank && leading_break.starts_with('\n') {
                if trailing_breaks.is_empty() {
                    s.push(' ');
                }
            } else {
                s.push_str(&leading_break);
            }
            leading_break.clear();
            s.push_str(&trailing_breaks);
            trailing_breaks.clear();
            leading_blank = is_blank(self.at(0));
            if literal && self.quiet {
                self.literal_lines(&mut s, indent as usize);
            }
            loop {
                // `need(1)` after a read changes nothing while the reader holds a character
                // after it: such a run is read at once.
                let held = self.held();
                self.read_to_break(&mut s, held);
                if self.is_breakz(0) {
                    break;
                }
                self.read(&mut s);
                self.need(1)?;
            }
            self.need(2)?;
            self.read_line(&mut leading_break);
            self.block_scalar_breaks(&mut indent, &mut trailing_breaks, start, &mut end)?;
        }
        if chomp != -1 {
            s.push_str(&leading_break);
        }
        if chomp == 1 {
            s.push_str(&trailing_breaks);
        }
        let style = if literal {
            Style::Literal
        } else {
            Style::Folded
        };
        let value = self.give_back(Scratch {
            value: s,
            leading: leading_break,
            trailing: trailing_breaks,
            blanks,
        });
        self.push(Kind::Scalar(value, style), start, end);
        Ok(())
    }

    /// The lines of a literal block scalar from here that are each followed by a line feed
    /// and another line at the same indentation, read at once: what the general loop of
    /// `fetch_block_scalar` makes of them (the line, then its break), where the reader's
    /// buffering cannot show. Lines with other characters than ASCII or with a carriage
    /// return, a line followed by one that starts with anything but ASCII (NEL, LS and PS
    /// are line breaks) and the scalar's last line are left to the general loop.
    fn literal_lines(&mut self, s: &mut String, indent: usize) {
        loop {
            let rest = &self.b[self.mark.pos..];
            let Some(n) = memchr::memchr(b'\n', rest) else {
                return;
            };
            let (line, next) = (&rest[..n], &rest[n + 1..]);
            let regular = next.len() > indent
                && next[..indent].iter().all(|&c| c == b' ')
                && next[indent].is_ascii()
                && !matches!(next[indent], b'\n' | b'\r');
            if !regular || !line.is_ascii() || line.contains(&b'\r') {
                return;
            }
            s.push_str(&self.text[self.mark.pos..self.mark.pos + n]);
            s.push('\n');
            if !line.iter().all(|&c| is_blank(c)) {
                self.newlines = 0;
            }
            self.newlines += 1;
            let step = n + 1 + indent;
            self.mark.pos += step;
            self.mark.index += step;
            self.mark.column = indent;
            self.mark.line += 1;
        }
    }

    /// Indentation and empty lines in a block scalar: their breaks are collected; the
    /// indentation is set from them when the header did not give it.
    fn block_scalar_breaks(
        &mut self,
        indent: &mut i64,
        breaks: &mut String,
        start: Mark,
        end: &mut Mark,
    ) -> Result<(), Error> {
        *end = self.mark;
        let mut widest = 0i64;
        loop {
            self.need(1)?;
            let held = self.held();
            while (*indent == 0 || (self.mark.column as i64) < *indent) && self.at(0) == b' ' {
                if self.mark.pos < held {
                    // The whole run of spaces the reader holds, up to the indentation.
                    let room = if *indent == 0 {
                        usize::MAX
                    } else {
                        (*indent - self.mark.column as i64) as usize
                    };
                    self.skip_spaces(room, held);
                    continue;
                }
                self.skip();
                self.need(1)?;
            }
            widest = widest.max(self.mark.column as i64);
            if (*indent == 0 || (self.mark.column as i64) < *indent) && self.at(0) == b'\t' {
                return Err(Error::scan(
                    start,
                    "found a tab character where an indentation space is expected",
                    self.mark,
                ));
            }
            if !self.is_break(0) {
                break;
            }
            self.need(2)?;
            self.read_line(breaks);
            *end = self.mark;
        }
        if *indent == 0 {
            *indent = widest.max(self.indent + 1).max(1);
        }
        Ok(())
    }

    fn fetch_flow_scalar(&mut self, single: bool) -> Result<(), Error> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let start = self.mark;
        self.skip();
        let Scratch {
            value: mut s,
            leading: mut leading_break,
            trailing: mut trailing_breaks,
            blanks: mut whitespaces,
        } = self.take_scratch();
        loop {
            self.need(4)?;
            let doc_marker = self.mark.column == 0
                && (self.b[self.mark.pos..].starts_with(b"---")
                    || self.b[self.mark.pos..].starts_with(b"..."))
                && self.is_blankz(3);
            if doc_marker {
                return Err(Error::scan(
                    start,
                    "found unexpected document indicator",
                    self.mark,
                ));
            }
            if self.is_z(0) {
                return Err(Error::scan(
                    start,
                    "found unexpected end of stream",
                    self.mark,
                ));
            }
            let mut leading_blanks = false;
            while !self.is_blankz(0) {
                let c = self.at(0);
                if single && c == b'\'' && self.at(1) == b'\'' {
                    s.push('\'');
                    self.skip();
                    self.skip();
                } else if (single && c == b'\'') || (!single && c == b'"') {
                    break;
                } else if !single && c == b'\\' && self.is_break(1) {
                    self.skip();
                    self.skip_line();
                    leading_blanks = true;
                    break;
                } else if !single && c == b'\\' {
                    self.escape(start, &mut s)?;
                } else {
                    self.read(&mut s);
                }
            }
            if (single && self.at(0) == b'\'') || (!single && self.at(0) == b'"') {
                break;
            }
            while is_blank(self.at(0)) || self.is_break(0) {
                if is_blank(self.at(0)) {
                    if leading_blanks {
                        self.skip();
                    } else {
                        self.read(&mut whitespaces);
                    }
                } else if leading_blanks {
                    self.read_line(&mut trailing_breaks);
                } else {
                    whitespaces.clear();
                    self.read_line(&mut leading_break);
                    leading_blanks = true;
                }
            }
            if leading_blanks {
                if leading_break.starts_with('\n') {
                    if trailing_breaks.is_empty() {
                        s.push(' ');
                    } else {
                        s.push_str(&trailing_breaks);
                    }
                } else {
                    s.push_str(&leading_break);
                    s.push_str(&trailing_breaks);
                }
                trailing_breaks.clear();
                leading_break.clear();
            } else {
                s.push_str(&whitespaces);
                whitespaces.clear();
            }
        }
        self.skip();
        let end = self.mark;
        let style = if single {
            Style::SingleQuoted
        } else {
            Style::DoubleQuoted
        };
        let value = self.give_back(Scratch {
            value: s,
            leading: leading_break,
            trailing: trailing_breaks,
            blanks: whitespaces,
        });
        self.push(Kind::Scalar(value, style), start, end);
        Ok(())
    }

    /// An escape sequence in a double-quoted scalar.
    fn escape(&mut self, start: Mark, s: &mut String) -> Result<(), Error> {
        let code_len = match self.at(1) {
            b'0' => {
                s.push('\0');
                0
            }
            b'a' => {
                s.push('\x07');
                0
            }
            b'b' => {
                s.push('\x08');
                0
            }
            b't' | b'\t' => {
                s.push('\t');
                0
            }
            b'n' => {
                s.push('\n');
                0
            }
            b'v' => {
                s.push('\x0B');
                0
            }
            b'f' => {
                s.push('\x0C');
                0
            }
            b'r' => {
                s.push('\r');
                0
            }
            b'e' => {
                s.push('\x1B');
                0
            }
            b' ' => {
                s.push(' ');
                0
            }
            b'"' => {
                s.push('"');
                0
            }
            b'\'' => {
                s.push('\'');
                0
            }
            b'\\' => {
                s.push('\\');
                0
            }
            b'N' => {
                s.push('\u{85}');
                0
            }
            b'_' => {
                s.push('\u{A0}');
                0
            }
            b'L' => {
                s.push('\u{2028}');
                0
            }
            b'P' => {
                s.push('\u{2029}');
                0
            }
            b'x' => 2,
            b'u' => 4,
            b'U' => 8,
            _ => {
                return Err(Error::scan(
                    start,
                    "found unknown escape character",
                    self.mark,
                ));
            }
        };
        self.skip();
        self.skip();
        if code_len > 0 {
            let mut value: u32 = 0;
            for k in 0..code_len {
                match (self.at(k) as char).to_digit(16) {
                    Some(d) => value = (value << 4) + d,
                    None => {
                        return Err(Error::scan(
                            start,
                            "did not find expected hexdecimal number",
                            self.mark,
                        ));
                    }
                }
            }
            let Some(c) = char::from_u32(value) else {
                return Err(Error::scan(
                    start,
                    "found invalid Unicode character escape code",
                    self.mark,
                ));
            };
            s.push(c);
            for _ in 0..code_len {
                self.skip();
            }
        }
        Ok(())
    }

    fn fetch_plain_scalar(&mut self) -> Result<(), Error> {
        self.save_simple_key()?;
        self.simple_key_allowed = false;
        let indent = self.indent + 1;
        let start = self.mark;
        let mut end = self.mark;
        let Scratch {
            value: mut s,
            leading: mut leading_break,
            trailing: mut trailing_breaks,
            blanks: mut whitespaces,
        } = self.take_scratch();
        let mut leading_blanks = false;
        loop {
            self.need(4)?;
            let doc_marker = self.mark.column == 0
                && (self.b[self.mark.pos..].starts_with(b"---")
                    || self.b[self.mark.pos..].starts_with(b"..."))
                && self.is_blankz(3);
            if doc_marker || self.at(0) == b'#' {
                break;
            }
            while !self.is_blankz(0) {
                let c = self.at(0);
                let stop = (c == b':' && self.is_blankz(1))
                    || (self.flow_level > 0
                        && matches!(c, b',' | b'?' | b'[' | b']' | b'{' | b'}'));
                if stop {
                    break;
                }
                if leading_blanks || !whitespaces.is_empty() {
                    if leading_blanks {
                        if leading_break.starts_with('\n') {
                            if trailing_breaks.is_empty() {
                                s.push(' ');
                            } else {
                                s.push_str(&trailing_breaks);
                            }
                        } else {
                            s.push_str(&leading_break);
                            s.push_str(&trailing_breaks);
                        }
                        trailing_breaks.clear();
                        leading_break.clear();
                        leading_blanks = false;
                    } else {
                        s.push_str(&whitespaces);
                        whitespaces.clear();
                    }
                }
                self.read(&mut s);
                // The characters that cannot end the scalar or need a look ahead, at once.
                let flow = self.flow_level > 0;
                self.read_run(&mut s, usize::MAX, |c| {
                    !(is_blank(c)
                        || c == b':'
                        || (flow && matches!(c, b',' | b'?' | b'[' | b']' | b'{' | b'}')))
                });
                end = self.mark;
            }
            if !(is_blank(self.at(0)) || self.is_break(0)) {
                break;
            }
            while is_blank(self.at(0)) || self.is_break(0) {
                if is_blank(self.at(0)) {
                    if leading_blanks && (self.mark.column as i64) < indent && self.at(0) == b'\t' {
                        return Err(Error::scan(
                            start,
                            "found a tab character that violates indentation",
                            self.mark,
                        ));
                    }
                    if leading_blanks {
                        self.skip();
                    } else {
                        self.read(&mut whitespaces);
                    }
                } else if leading_blanks {
                    self.read_line(&mut trailing_breaks);
                } else {
                    whitespaces.clear();
                    self.read_line(&mut leading_break);
                    leading_blanks = true;
                }
            }
            if self.flow_level == 0 && (self.mark.column as i64) < indent {
                break;
            }
        }
        let value = self.give_back(Scratch {
            value: s,
            leading: leading_break,
            trailing: trailing_breaks,
            blanks: whitespaces,
        });
        self.push(Kind::Scalar(value, Style::Plain), start, end);
        if leading_blanks {
            self.simple_key_allowed = true;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    /// The block-wise run finds the first byte outside the set wherever it is: in the
    /// first block, at a block's edges, in the tail after the last whole block.
    #[test]
    fn plain_ascii_stops_where_a_byte_at_a_time_stops() {
        let naive = |b: &[u8]| {
            b.iter()
                .position(|&x| !matches!(x, b'\t' | b'\n' | b'\r' | 0x20..=0x7E))
                .unwrap_or(b.len())
        };
        for len in [0, 1, 63, 64, 65, 127, 128, 200] {
            let base: Vec<u8> = (0..len).map(|i| b"a: b\t\r\n~ "[i % 9]).collect();
            assert_eq!(super::plain_ascii(&base), len);
            for at in 0..len {
                for odd in [0x00, 0x1F, 0x7F, 0x80, 0xC3, 0xFF] {
                    let mut b = base.clone();
                    b[at] = odd;
                    assert_eq!(super::plain_ascii(&b), naive(&b), "{len} {at} {odd:#x}");
                    assert_eq!(super::plain_ascii(&b), at);
                }
            }
        }
    }
}
