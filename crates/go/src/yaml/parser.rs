//! go-yaml's (v3) parser: tokens from [`scanner`](super::scanner) into events (documents,
//! collections, scalars, aliases), with its grammar and its errors — which production it
//! was in (the context, placed where that collection began) and what it found instead.
//!
//! Events are made one at a time as the reader asks for them, so that, as with go-yaml,
//! nothing after the end of the first document is read beyond the token that ends it.

use super::scanner::{Error, Kind, Mark, Scanner, Style};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum EventKind {
    StreamStart,
    StreamEnd,
    DocumentStart,
    DocumentEnd,
    Alias(String),
    Scalar {
        value: String,
        style: Style,
        anchor: Option<String>,
        /// The resolved tag (`tag:yaml.org,2002:str` for `!!str`), if one was written.
        tag: Option<String>,
    },
    SequenceStart {
        anchor: Option<String>,
        tag: Option<String>,
    },
    SequenceEnd,
    MappingStart {
        anchor: Option<String>,
        tag: Option<String>,
    },
    MappingEnd,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) struct Event {
    pub kind: EventKind,
    pub start: Mark,
    pub end: Mark,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    StreamStart,
    ImplicitDocumentStart,
    DocumentStart,
    DocumentContent,
    DocumentEnd,
    BlockNode,
    BlockSequenceFirstEntry,
    BlockSequenceEntry,
    IndentlessSequenceEntry,
    BlockMappingFirstKey,
    BlockMappingKey,
    BlockMappingValue,
    FlowSequenceFirstEntry,
    FlowSequenceEntry,
    FlowSequenceEntryMappingKey,
    FlowSequenceEntryMappingValue,
    FlowSequenceEntryMappingEnd,
    FlowMappingFirstKey,
    FlowMappingKey,
    FlowMappingValue,
    FlowMappingEmptyValue,
    End,
}

/// A token's kind without its contents, to decide on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum T {
    StreamStart,
    StreamEnd,
    VersionDirective,
    TagDirective,
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
    Alias,
    Anchor,
    Tag,
    Scalar,
}

fn t(kind: &Kind) -> T {
    match kind {
        Kind::StreamStart => T::StreamStart,
        Kind::StreamEnd => T::StreamEnd,
        Kind::VersionDirective(..) => T::VersionDirective,
        Kind::TagDirective(..) => T::TagDirective,
        Kind::DocumentStart => T::DocumentStart,
        Kind::DocumentEnd => T::DocumentEnd,
        Kind::BlockSequenceStart => T::BlockSequenceStart,
        Kind::BlockMappingStart => T::BlockMappingStart,
        Kind::BlockEnd => T::BlockEnd,
        Kind::FlowSequenceStart => T::FlowSequenceStart,
        Kind::FlowSequenceEnd => T::FlowSequenceEnd,
        Kind::FlowMappingStart => T::FlowMappingStart,
        Kind::FlowMappingEnd => T::FlowMappingEnd,
        Kind::BlockEntry => T::BlockEntry,
        Kind::FlowEntry => T::FlowEntry,
        Kind::Key => T::Key,
        Kind::Value => T::Value,
        Kind::Alias(_) => T::Alias,
        Kind::Anchor(_) => T::Anchor,
        Kind::Tag(..) => T::Tag,
        Kind::Scalar(..) => T::Scalar,
    }
}

/// What may precede a node's content: its anchor and its tag (the handle expanded), and
/// where they start and end (both at the content when there are none).
struct Properties {
    anchor: Option<String>,
    tag: Option<String>,
    start: Mark,
    end: Mark,
}

pub(super) struct Parser<'a> {
    scanner: Scanner<'a>,
    state: State,
    states: Vec<State>,
    /// Where each open collection began (the context of errors inside it).
    marks: Vec<Mark>,
    /// `%TAG` handles and prefixes of the current document, then the defaults.
    tags: Vec<(String, String)>,
}

fn parse_error(context: Option<Mark>, problem: &str, at: Mark) -> Error {
    Error {
        problem: problem.into(),
        problem_mark: at,
        context_mark: context,
        scanner: false,
        reader: false,
    }
}

impl<'a> Parser<'a> {
    pub(super) fn new(text: &'a str) -> Parser<'a> {
        Parser {
            scanner: Scanner::new(text),
            state: State::StreamStart,
            states: Vec::new(),
            marks: Vec::new(),
            tags: Vec::new(),
        }
    }

    fn head(&mut self) -> Result<(T, Mark, Mark), Error> {
        let tok = self.scanner.peek()?;
        Ok((t(&tok.kind), tok.start, tok.end))
    }

    fn pop_state(&mut self) {
        self.state = self.states.pop().unwrap_or(State::End);
    }

    fn event(kind: EventKind, start: Mark, end: Mark) -> Event {
        Event { kind, start, end }
    }

    fn empty(mark: Mark) -> Event {
        Self::event(
            EventKind::Scalar {
                value: String::new(),
                style: Style::Plain,
                anchor: None,
                tag: None,
            },
            mark,
            mark,
        )
    }

    /// The next event; `None` after the end of the stream.
    pub(super) fn next(&mut self) -> Result<Option<Event>, Error> {
        let ev = match self.state {
            State::End => return Ok(None),
            State::StreamStart => {
                let (_, s, e) = self.head()?;
                self.scanner.skip_token();
                self.state = State::ImplicitDocumentStart;
                Self::event(EventKind::StreamStart, s, e)
            }
            State::ImplicitDocumentStart => self.document_start(true)?,
            State::DocumentStart => self.document_start(false)?,
            State::DocumentContent => {
                let (k, s, _) = self.head()?;
                if matches!(
                    k,
                    T::VersionDirective
                        | T::TagDirective
                        | T::DocumentStart
                        | T::DocumentEnd
                        | T::StreamEnd
                ) {
                    self.pop_state();
                    Self::empty(s)
                } else {
                    self.node(true, false)?
                }
            }
            State::DocumentEnd => {
                let (k, s, e) = self.head()?;
                let mut end = s;
                if k == T::DocumentEnd {
                    end = e;
                    self.scanner.skip_token();
                }
                self.tags.clear();
                self.state = State::DocumentStart;
                Self::event(EventKind::DocumentEnd, s, end)
            }
            State::BlockNode => self.node(true, false)?,
            State::BlockSequenceFirstEntry => self.block_sequence_entry(true)?,
            State::BlockSequenceEntry => self.block_sequence_entry(false)?,
            State::IndentlessSequenceEntry => self.indentless_sequence_entry()?,
            State::BlockMappingFirstKey => self.block_mapping_key(true)?,
            State::BlockMappingKey => self.block_mapping_key(false)?,
            State::BlockMappingValue => self.block_mapping_value()?,
            State::FlowSequenceFirstEntry => self.flow_sequence_entry(true)?,
            State::FlowSequenceEntry => self.flow_sequence_entry(false)?,
            State::FlowSequenceEntryMappingKey => {
                let (k, _, e) = self.head()?;
                if !matches!(k, T::Value | T::FlowEntry | T::FlowSequenceEnd) {
                    self.states.push(State::FlowSequenceEntryMappingValue);
                    self.node(false, false)?
                } else {
                    self.scanner.skip_token();
                    self.state = State::FlowSequenceEntryMappingValue;
                    Self::empty(e)
                }
            }
            State::FlowSequenceEntryMappingValue => {
                let (mut k, mut s, _) = self.head()?;
                let mut value = None;
                if k == T::Value {
                    self.scanner.skip_token();
                    (k, s, _) = self.head()?;
                    if !matches!(k, T::FlowEntry | T::FlowSequenceEnd) {
                        self.states.push(State::FlowSequenceEntryMappingEnd);
                        value = Some(self.node(false, false)?);
                    }
                }
                match value {
                    Some(v) => v,
                    None => {
                        self.state = State::FlowSequenceEntryMappingEnd;
                        Self::empty(s)
                    }
                }
            }
            State::FlowSequenceEntryMappingEnd => {
                let (_, s, _) = self.head()?;
                self.state = State::FlowSequenceEntry;
                Self::event(EventKind::MappingEnd, s, s)
            }
            State::FlowMappingFirstKey => self.flow_mapping_key(true)?,
            State::FlowMappingKey => self.flow_mapping_key(false)?,
            State::FlowMappingValue => self.flow_mapping_value(false)?,
            State::FlowMappingEmptyValue => self.flow_mapping_value(true)?,
        };
        if ev.kind == EventKind::StreamEnd {
            self.state = State::End;
        }
        Ok(Some(ev))
    }

    fn document_start(&mut self, implicit: bool) -> Result<Event, Error> {
        let (mut k, mut s, mut e) = self.head()?;
        if !implicit {
            while k == T::DocumentEnd {
                self.scanner.skip_token();
                (k, s, e) = self.head()?;
            }
        }
        let directive = matches!(k, T::VersionDirective | T::TagDirective);
        if implicit && !directive && k != T::DocumentStart && k != T::StreamEnd {
            self.directives()?;
            self.states.push(State::DocumentEnd);
            self.state = State::BlockNode;
            return Ok(Self::event(EventKind::DocumentStart, s, e));
        }
        if k == T::StreamEnd {
            self.scanner.skip_token();
            self.state = State::End;
            return Ok(Self::event(EventKind::StreamEnd, s, e));
        }
        let start = s;
        self.directives()?;
        let (k, s, e) = self.head()?;
        if k != T::DocumentStart {
            return Err(parse_error(
                None,
                "did not find expected <document start>",
                s,
            ));
        }
        self.states.push(State::DocumentEnd);
        self.state = State::DocumentContent;
        self.scanner.skip_token();
        Ok(Self::event(EventKind::DocumentStart, start, e))
    }

    /// `%YAML` and `%TAG` directives before a document, then the default tag handles.
    fn directives(&mut self) -> Result<(), Error> {
        let mut version = false;
        loop {
            let tok = self.scanner.peek()?;
            let at = tok.start;
            match &tok.kind {
                Kind::VersionDirective(major, minor) => {
                    if version {
                        return Err(parse_error(None, "found duplicate %YAML directive", at));
                    }
                    if (*major, *minor) != (1, 1) {
                        return Err(parse_error(None, "found incompatible YAML document", at));
                    }
                    version = true;
                }
                Kind::TagDirective(handle, prefix) => {
                    if self.tags.iter().any(|(h, _)| h == handle) {
                        return Err(parse_error(None, "found duplicate %TAG directive", at));
                    }
                    let pair = (handle.clone(), prefix.clone());
                    self.tags.push(pair);
                }
                _ => break,
            }
            self.scanner.skip_token();
        }
        for (h, p) in [("!", "!"), ("!!", "tag:yaml.org,2002:")] {
            if !self.tags.iter().any(|(x, _)| x == h) {
                self.tags.push((h.into(), p.into()));
            }
        }
        Ok(())
    }

    /// Reads a node's properties, an anchor and a tag in either order, and expands the tag's
    /// handle: a node with properties but no content is an empty plain scalar, so the
    /// caller needs where they end as well as what they are.
    fn properties(&mut self) -> Result<Properties, Error> {
        let mut start = self.scanner.peek()?.start;
        let mut end = start;
        let mut anchor = None;
        let mut tag_parts: Option<(String, String, Mark)> = None;
        let take_anchor = |p: &mut Self| -> Result<Option<(String, Mark, Mark)>, Error> {
            let tok = p.scanner.peek()?;
            if let Kind::Anchor(name) = &tok.kind {
                let r = (name.clone(), tok.start, tok.end);
                p.scanner.skip_token();
                return Ok(Some(r));
            }
            Ok(None)
        };
        let take_tag = |p: &mut Self| -> Result<Option<(String, String, Mark, Mark)>, Error> {
            let tok = p.scanner.peek()?;
            if let Kind::Tag(h, s) = &tok.kind {
                let r = (h.clone(), s.clone(), tok.start, tok.end);
                p.scanner.skip_token();
                return Ok(Some(r));
            }
            Ok(None)
        };
        if let Some((name, s, e)) = take_anchor(self)? {
            anchor = Some(name);
            start = s;
            end = e;
            if let Some((h, suf, s, e)) = take_tag(self)? {
                tag_parts = Some((h, suf, s));
                end = e;
            }
        } else if let Some((h, suf, s, e)) = take_tag(self)? {
            tag_parts = Some((h, suf, s));
            start = s;
            end = e;
            if let Some((name, _, e)) = take_anchor(self)? {
                anchor = Some(name);
                end = e;
            }
        }
        let mut tag = None;
        if let Some((handle, suffix, mark)) = tag_parts {
            if handle.is_empty() {
                tag = Some(suffix);
            } else {
                match self.tags.iter().find(|(h, _)| *h == handle) {
                    Some((_, prefix)) => tag = Some(format!("{prefix}{suffix}")),
                    None => {
                        return Err(parse_error(Some(start), "found undefined tag handle", mark));
                    }
                }
            }
        }
        Ok(Properties {
            anchor,
            tag,
            start,
            end,
        })
    }

    fn node(&mut self, block: bool, indentless: bool) -> Result<Event, Error> {
        let tok = self.scanner.peek()?;
        if let Kind::Alias(name) = &tok.kind {
            let ev = Self::event(EventKind::Alias(name.clone()), tok.start, tok.end);
            self.scanner.skip_token();
            self.pop_state();
            return Ok(ev);
        }
        let Properties {
            anchor,
            tag,
            start,
            end,
        } = self.properties()?;
        let tok = self.scanner.peek()?;
        let (k, ts, te) = (t(&tok.kind), tok.start, tok.end);
        if indentless && k == T::BlockEntry {
            self.state = State::IndentlessSequenceEntry;
            return Ok(Self::event(
                EventKind::SequenceStart { anchor, tag },
                start,
                te,
            ));
        }
        if k == T::Scalar {
            let tok = self.scanner.skip_token();
            let Kind::Scalar(value, style) = tok.kind else {
                unreachable!("peeked a scalar")
            };
            self.pop_state();
            return Ok(Self::event(
                EventKind::Scalar {
                    value,
                    style,
                    anchor,
                    tag,
                },
                start,
                te,
            ));
        }
        let collection = match k {
            T::FlowSequenceStart => Some((State::FlowSequenceFirstEntry, true)),
            T::FlowMappingStart => Some((State::FlowMappingFirstKey, false)),
            T::BlockSequenceStart if block => Some((State::BlockSequenceFirstEntry, true)),
            T::BlockMappingStart if block => Some((State::BlockMappingFirstKey, false)),
            _ => None,
        };
        if let Some((state, sequence)) = collection {
            self.state = state;
            let kind = if sequence {
                EventKind::SequenceStart { anchor, tag }
            } else {
                EventKind::MappingStart { anchor, tag }
            };
            return Ok(Self::event(kind, start, te));
        }
        if anchor.is_some() || tag.is_some() {
            self.pop_state();
            return Ok(Self::event(
                EventKind::Scalar {
                    value: String::new(),
                    style: Style::Plain,
                    anchor,
                    tag,
                },
                start,
                end,
            ));
        }
        Err(parse_error(
            Some(start),
            "did not find expected node content",
            ts,
        ))
    }

    fn block_sequence_entry(&mut self, first: bool) -> Result<Event, Error> {
        if first {
            let (_, s, _) = self.head()?;
            self.marks.push(s);
            self.scanner.skip_token();
        }
        let (k, s, e) = self.head()?;
        if k == T::BlockEntry {
            self.scanner.skip_token();
            let (k, _, _) = self.head()?;
            if k != T::BlockEntry && k != T::BlockEnd {
                self.states.push(State::BlockSequenceEntry);
                return self.node(true, false);
            }
            self.state = State::BlockSequenceEntry;
            return Ok(Self::empty(e));
        }
        let context = self.marks.pop().unwrap_or_default();
        if k == T::BlockEnd {
            self.pop_state();
            self.scanner.skip_token();
            return Ok(Self::event(EventKind::SequenceEnd, s, e));
        }
        Err(parse_error(
            Some(context),
            "did not find expected '-' indicator",
            s,
        ))
    }

    fn indentless_sequence_entry(&mut self) -> Result<Event, Error> {
        let (k, s, e) = self.head()?;
        if k == T::BlockEntry {
            self.scanner.skip_token();
            let (k, _, _) = self.head()?;
            if !matches!(k, T::BlockEntry | T::Key | T::Value | T::BlockEnd) {
                self.states.push(State::IndentlessSequenceEntry);
                return self.node(true, false);
            }
            self.state = State::IndentlessSequenceEntry;
            return Ok(Self::empty(e));
        }
        self.pop_state();
        Ok(Self::event(EventKind::SequenceEnd, s, s))
    }

    fn block_mapping_key(&mut self, first: bool) -> Result<Event, Error> {
        if first {
            let (_, s, _) = self.head()?;
            self.marks.push(s);
            self.scanner.skip_token();
        }
        let (k, s, e) = self.head()?;
        if k == T::Key {
            self.scanner.skip_token();
            let (k, _, _) = self.head()?;
            if !matches!(k, T::Key | T::Value | T::BlockEnd) {
                self.states.push(State::BlockMappingValue);
                return self.node(true, true);
            }
            self.state = State::BlockMappingValue;
            return Ok(Self::empty(e));
        }
        let context = self.marks.pop().unwrap_or_default();
        if k == T::BlockEnd {
            self.pop_state();
            self.scanner.skip_token();
            return Ok(Self::event(EventKind::MappingEnd, s, e));
        }
        Err(parse_error(Some(context), "did not find expected key", s))
    }

    fn block_mapping_value(&mut self) -> Result<Event, Error> {
        let (k, s, e) = self.head()?;
        if k == T::Value {
            self.scanner.skip_token();
            let (k, _, _) = self.head()?;
            if !matches!(k, T::Key | T::Value | T::BlockEnd) {
                self.states.push(State::BlockMappingKey);
                return self.node(true, true);
            }
            self.state = State::BlockMappingKey;
            return Ok(Self::empty(e));
        }
        self.state = State::BlockMappingKey;
        Ok(Self::empty(s))
    }

    fn flow_sequence_entry(&mut self, first: bool) -> Result<Event, Error> {
        if first {
            let (_, s, _) = self.head()?;
            self.marks.push(s);
            self.scanner.skip_token();
        }
        let (mut k, mut s, mut e) = self.head()?;
        if k != T::FlowSequenceEnd {
            if !first {
                if k == T::FlowEntry {
                    self.scanner.skip_token();
                    (k, s, e) = self.head()?;
                } else {
                    let context = self.marks.pop().unwrap_or_default();
                    return Err(parse_error(
                        Some(context),
                        "did not find expected ',' or ']'",
                        s,
                    ));
                }
            }
            if k == T::Key {
                self.state = State::FlowSequenceEntryMappingKey;
                self.scanner.skip_token();
                return Ok(Self::event(
                    EventKind::MappingStart {
                        anchor: None,
                        tag: None,
                    },
                    s,
                    e,
                ));
            }
            if k != T::FlowSequenceEnd {
                self.states.push(State::FlowSequenceEntry);
                return self.node(false, false);
            }
        }
        self.pop_state();
        self.marks.pop();
        self.scanner.skip_token();
        Ok(Self::event(EventKind::SequenceEnd, s, e))
    }

    fn flow_mapping_key(&mut self, first: bool) -> Result<Event, Error> {
        if first {
            let (_, s, _) = self.head()?;
            self.marks.push(s);
            self.scanner.skip_token();
        }
        let (mut k, mut s, mut e) = self.head()?;
        if k != T::FlowMappingEnd {
            if !first {
                if k == T::FlowEntry {
                    self.scanner.skip_token();
                    (k, s, e) = self.head()?;
                } else {
                    let context = self.marks.pop().unwrap_or_default();
                    return Err(parse_error(
                        Some(context),
                        "did not find expected ',' or '}'",
                        s,
                    ));
                }
            }
            if k == T::Key {
                self.scanner.skip_token();
                let (k, s, _) = self.head()?;
                if !matches!(k, T::Value | T::FlowEntry | T::FlowMappingEnd) {
                    self.states.push(State::FlowMappingValue);
                    return self.node(false, false);
                }
                self.state = State::FlowMappingValue;
                return Ok(Self::empty(s));
            }
            if k != T::FlowMappingEnd {
                self.states.push(State::FlowMappingEmptyValue);
                return self.node(false, false);
            }
        }
        self.pop_state();
        self.marks.pop();
        self.scanner.skip_token();
        Ok(Self::event(EventKind::MappingEnd, s, e))
    }

    fn flow_mapping_value(&mut self, empty: bool) -> Result<Event, Error> {
        let (k, s, _) = self.head()?;
        if empty {
            self.state = State::FlowMappingKey;
            return Ok(Self::empty(s));
        }
        if k == T::Value {
            self.scanner.skip_token();
            let (k, s, _) = self.head()?;
            if !matches!(k, T::FlowEntry | T::FlowMappingEnd) {
                self.states.push(State::FlowMappingKey);
                return self.node(false, false);
            }
            self.state = State::FlowMappingKey;
            return Ok(Self::empty(s));
        }
        self.state = State::FlowMappingKey;
        Ok(Self::empty(s))
    }
}
