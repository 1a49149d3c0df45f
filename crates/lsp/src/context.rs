//! Where the cursor is in a config: the path of the mapping around it, the key it is on or
//! whose value it is in, and the word under it. Read from the text itself, not from a parsed
//! tree: while a person types, the document is mostly not valid YAML or JSON.

use crate::text::Text;

/// A step from the root to the mapping around the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    Key(String),
    /// An item of a sequence (which one does not matter for the schema).
    Item,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Cursor {
    /// The path of the mapping the cursor is in.
    pub(crate) parent: Vec<Seg>,
    /// The key the cursor is on, or whose value it is in.
    pub(crate) key: Option<String>,
    /// Whether the cursor is in a value (after the key's colon).
    pub(crate) in_value: bool,
    /// Inside a block scalar or anything else no help applies to.
    pub(crate) opaque: bool,
    /// The byte range of the word under the cursor (a key, or a scalar value without its
    /// quotes), and its text up to the cursor.
    pub(crate) word: (usize, usize),
    pub(crate) typed: String,
    /// The keys the mapping already has.
    pub(crate) siblings: Vec<String>,
}

impl Cursor {
    /// The path of the key the cursor is on or in.
    pub(crate) fn key_path(&self) -> Option<Vec<Seg>> {
        let mut p = self.parent.clone();
        p.push(Seg::Key(self.key.clone()?));
        Some(p)
    }

    pub(crate) fn word<'t>(&self, text: &'t Text) -> &'t str {
        text.as_str()
            .get(self.word.0..self.word.1)
            .unwrap_or_default()
    }
}

/// One YAML line taken apart: its indentation, the columns of its `- ` item markers, and
/// where its content starts.
struct Line<'a> {
    dashes: Vec<usize>,
    content_col: usize,
    content: &'a str,
}

fn split_line(line: &str) -> Line<'_> {
    let mut col = line.len() - line.trim_start_matches(' ').len();
    let mut dashes = Vec::new();
    loop {
        let rest = &line[col..];
        if rest == "-" || rest.starts_with("- ") {
            dashes.push(col);
            col += 1 + (rest.len() - 1 - rest[1..].trim_start_matches(' ').len());
        } else {
            break;
        }
    }
    Line {
        dashes,
        content_col: col,
        content: &line[col..],
    }
}

/// The key of a `key: value` or `key:` line, and where its value starts (after the colon).
fn key_of(content: &str) -> Option<(String, usize)> {
    if content.starts_with('#') {
        return None;
    }
    let (raw, colon) = if let Some(q @ ('"' | '\'')) = content.chars().next() {
        let close = content[1..].find(q)? + 1;
        (&content[1..close], close + 1)
    } else {
        let colon = content
            .match_indices(':')
            .map(|(i, _)| i)
            .find(|&i| matches!(content.as_bytes().get(i + 1), None | Some(b' ' | b'\t')))?;
        (content[..colon].trim_end(), colon)
    };
    (content.as_bytes().get(colon) == Some(&b':')).then(|| (raw.to_string(), colon + 1))
}

/// Whether a value starts a block scalar (`|`, `>-`, …): the lines below are text.
fn starts_block_scalar(value: &str) -> bool {
    let v = value.split(" #").next().unwrap_or_default().trim();
    v.starts_with('|') || v.starts_with('>')
}

fn is_blank(line: &str) -> bool {
    let t = line.trim();
    t.is_empty() || t.starts_with('#') || t == "---"
}

/// The cursor at byte `offset` of a YAML (Butane) document.
pub(crate) fn yaml(text: &Text, offset: usize) -> Cursor {
    let pos = text.position(offset);
    let n = pos.line as usize;
    let start = text.line_start(n);
    let line = text.line(n);
    let col = (offset - start).min(line.len());
    let mut cur = Cursor::default();
    let parsed = split_line(line);
    let blank = is_blank(line) && !line.trim_start().starts_with('#');
    let content_col = if blank { col } else { parsed.content_col };
    if !blank && col >= parsed.content_col {
        locate_in_line(&parsed, start, col, &mut cur);
    } else {
        cur.word = (offset, offset);
    }
    // The mapping around the cursor: walk up the lines, each less indented one a parent.
    let mut rev: Vec<Seg> = Vec::new();
    let mut need = content_col;
    let mut allow_equal = false;
    let mut own_level = true;
    if !blank && !parsed.dashes.is_empty() {
        rev.extend(parsed.dashes.iter().map(|_| Seg::Item));
        need = parsed.dashes[0];
        allow_equal = true;
        own_level = false;
    }
    for i in (0..n).rev() {
        let l = text.line(i);
        if is_blank(l) {
            continue;
        }
        let p = split_line(l);
        let key = key_of(p.content);
        if p.content_col > need || (p.content_col == need && p.dashes.is_empty() && !allow_equal) {
            if p.content_col == need && own_level {
                cur.siblings.extend(key.map(|k| k.0));
            }
            continue;
        }
        if p.content_col == need && !p.dashes.is_empty() {
            // A sibling on the line that starts the item this mapping is.
            if own_level {
                cur.siblings.extend(key.map(|k| k.0));
            }
        } else {
            let Some((k, value_at)) = key else { break };
            if starts_block_scalar(&p.content[value_at..]) {
                cur.opaque = true;
            }
            rev.push(Seg::Key(k));
        }
        rev.extend(p.dashes.iter().map(|_| Seg::Item));
        need = p.dashes.first().copied().unwrap_or(p.content_col);
        allow_equal = !p.dashes.is_empty();
        own_level = false;
        if need == 0 && !allow_equal {
            break;
        }
    }
    rev.reverse();
    cur.parent = rev;
    siblings_below(text, n, content_col, &mut cur.siblings);
    cur
}

/// The key or value the cursor is on, within its own line.
fn locate_in_line(parsed: &Line<'_>, start: usize, col: usize, cur: &mut Cursor) {
    let c0 = parsed.content_col;
    let content = parsed.content;
    match key_of(content) {
        Some((k, value_at)) if col > c0 + value_at - 1 => {
            cur.in_value = true;
            cur.key = Some(k);
            let value = &content[value_at..];
            let lead = value.len() - value.trim_start().len();
            let body = value.trim_start();
            let body = body.split(" #").next().unwrap_or_default().trim_end();
            let quote = body.chars().next().filter(|c| *c == '"' || *c == '\'');
            let closed = quote.is_some_and(|q| body.len() > 1 && body.ends_with(q));
            let from = c0 + value_at + lead + usize::from(quote.is_some());
            let to = (c0 + value_at + lead + body.len() - usize::from(closed)).max(from);
            cur.word = (start + from, start + to);
            cur.typed = content
                .get(from - c0..col.clamp(from, to) - c0)
                .unwrap_or_default()
                .to_string();
        }
        found => {
            let end = match &found {
                Some((k, _)) => k.len() + usize::from(content.starts_with(['"', '\''])),
                None => content.find([' ', ':']).unwrap_or(content.len()),
            };
            cur.key = found.map(|(k, _)| k).or_else(|| {
                let w = &content[..end];
                (!w.is_empty()).then(|| w.to_string())
            });
            cur.word = (start + c0, start + c0 + end);
            cur.typed = content
                .get(..col.saturating_sub(c0).min(end))
                .unwrap_or_default()
                .to_string();
        }
    }
}

/// Keys below line `n` at column `col` of the same mapping.
fn siblings_below(text: &Text, n: usize, col: usize, out: &mut Vec<String>) {
    for i in n + 1..text.line_count() {
        let l = text.line(i);
        if is_blank(l) {
            continue;
        }
        let p = split_line(l);
        let first = p.dashes.first().copied().unwrap_or(p.content_col);
        if first < col || (p.content_col == col && !p.dashes.is_empty()) {
            break;
        }
        if p.content_col == col
            && let Some((k, _)) = key_of(p.content)
        {
            out.push(k);
        }
    }
}

enum Frame {
    Object {
        key: Option<String>,
        keys: Vec<String>,
        after_colon: bool,
    },
    Array,
}

/// The cursor at byte `offset` of a JSON (Ignition) document.
pub(crate) fn json(text: &Text, offset: usize) -> Cursor {
    let s = text.as_str().as_bytes();
    let mut stack: Vec<Frame> = Vec::new();
    let mut i = 0;
    let mut cur = Cursor {
        word: (offset, offset),
        ..Cursor::default()
    };
    let mut in_string = None;
    while i < offset.min(s.len()) {
        match s[i] {
            b'"' => {
                let end = string_end(s, i);
                if end > offset || (end == s.len() && s.get(end - 1) != Some(&b'"')) {
                    in_string = Some(i);
                    break;
                }
                // A string closed by its quote, or cut short by the line's end.
                let close = if end > i + 1 && s[end - 1] == b'"' {
                    end - 1
                } else {
                    end
                };
                let value = String::from_utf8_lossy(&s[i + 1..close.max(i + 1)]).into_owned();
                if let Some(Frame::Object {
                    key,
                    keys,
                    after_colon: false,
                }) = stack.last_mut()
                {
                    *key = Some(value.clone());
                    keys.push(value);
                }
                i = end;
                continue;
            }
            b'{' => stack.push(Frame::Object {
                key: None,
                keys: Vec::new(),
                after_colon: false,
            }),
            b'[' => stack.push(Frame::Array),
            b'}' | b']' => {
                stack.pop();
            }
            b':' | b',' => {
                if let Some(Frame::Object {
                    after_colon, key, ..
                }) = stack.last_mut()
                {
                    *after_colon = s[i] == b':';
                    if s[i] == b',' {
                        *key = None;
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    let Some(top) = stack.last() else {
        return cur;
    };
    for f in &stack[..stack.len() - 1] {
        cur.parent.push(match f {
            Frame::Object { key, .. } => Seg::Key(key.clone().unwrap_or_default()),
            Frame::Array => Seg::Item,
        });
    }
    match top {
        Frame::Array => {
            cur.parent.push(Seg::Item);
            cur.opaque = true;
        }
        Frame::Object {
            key,
            keys,
            after_colon,
        } => {
            cur.in_value = *after_colon;
            cur.siblings = keys.clone();
            if let Some(q) = in_string {
                let end = string_end(s, q);
                let close = end - usize::from(s.get(end - 1) == Some(&b'"') && end > q + 1);
                cur.word = (q + 1, close.max(q + 1));
                cur.typed = String::from_utf8_lossy(&s[q + 1..offset]).into_owned();
            }
            cur.key = if *after_colon {
                key.clone()
            } else {
                in_string.map(|_| cur.word(text).to_string())
            };
        }
    }
    cur
}

/// One past the closing quote of the string opening at `at` (the end of the line or text
/// when it is not closed there).
fn string_end(s: &[u8], at: usize) -> usize {
    let mut i = at + 1;
    while i < s.len() {
        match s[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            b'\n' => return i,
            _ => i += 1,
        }
    }
    s.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Seg {
        Seg::Key(k.into())
    }

    fn at(doc: &str, json_doc: bool) -> (Text, Cursor) {
        let off = doc.find('|').unwrap();
        let t = Text::new(doc.replacen('|', "", 1));
        let c = if json_doc {
            json(&t, off)
        } else {
            yaml(&t, off)
        };
        (t, c)
    }

    #[test]
    fn yaml_paths_through_mappings_and_items() {
        let doc = "variant: flatcar\nstorage:\n  files:\n    - path: /a\n      contents:\n        inl|\n      mode: 420\n";
        let (_, c) = at(doc, false);
        assert_eq!(
            c.parent,
            [key("storage"), key("files"), Seg::Item, key("contents")]
        );
        assert_eq!(
            (c.key.as_deref(), c.typed.as_str(), c.in_value),
            (Some("inl"), "inl", false)
        );
        let (_, c) = at(
            doc.replace("inl|", "inline: x")
                .replace("mode", "mo|de")
                .as_str(),
            false,
        );
        assert_eq!(c.parent, [key("storage"), key("files"), Seg::Item]);
        let mut sib = c.siblings.clone();
        sib.sort();
        assert_eq!(sib, ["contents", "path"]);
        assert_eq!(c.typed, "mo");
        // Indentless sequences, and the first key of an item.
        let (_, c) = at("storage:\n  files:\n  - pa|th: /a\n    mode: 1\n", false);
        assert_eq!(c.parent, [key("storage"), key("files"), Seg::Item]);
        assert_eq!(c.siblings, ["mode"]);
    }

    #[test]
    fn yaml_values_blank_lines_and_block_scalars() {
        // A quote not closed yet, before a character of several bytes.
        let (t, c) = at("variant: fcos\nversion: \"1.|é\n", false);
        assert_eq!((c.word(&t), c.typed.as_str()), ("1.é", "1."));
        let (t, c) = at("variant: fcos\nversion: \"1.|5.0\"\n", false);
        assert_eq!((c.key.as_deref(), c.in_value), (Some("version"), true));
        assert_eq!((c.word(&t), c.typed.as_str()), ("1.5.0", "1."));
        let (_, c) = at("storage:\n  files:\n    - path: /a\n      |\n", false);
        assert_eq!(c.parent, [key("storage"), key("files"), Seg::Item]);
        assert_eq!(c.siblings, ["path"]);
        let (_, c) = at(
            "files:\n  - contents:\n      inline: >-\n        te|xt\n",
            false,
        );
        assert!(c.opaque);
    }

    #[test]
    fn any_text_at_any_offset_gives_a_cursor() {
        let texts = [
            "a: \"é\n- - \"k\": 'v\n  x: |\n    ü\n\t: :\n",
            "{\"a\": [{\"é\": \"\\\"ü\", \"b\n}]}}]\"",
            "- \n-\n  - k: \"😀\n'",
        ];
        for doc in texts {
            let t = Text::new(doc.to_string());
            for off in (0..=doc.len()).filter(|&o| doc.is_char_boundary(o)) {
                for c in [yaml(&t, off), json(&t, off)] {
                    let _ = (c.word(&t), c.key_path());
                    assert!(c.word.0 <= c.word.1 || c.word(&t).is_empty());
                }
            }
        }
    }

    #[test]
    fn json_paths_keys_and_values() {
        let doc =
            r#"{"ignition": {"version": "3.4.0"}, "storage": {"files": [{"path": "/a", "mo|"}]}}"#;
        let (t, c) = at(doc, true);
        assert_eq!(c.parent, [key("storage"), key("files"), Seg::Item]);
        assert_eq!(
            (c.key.as_deref(), c.typed.as_str(), c.in_value),
            (Some("mo"), "mo", false)
        );
        assert_eq!(c.siblings, ["path"]);
        assert_eq!(c.word(&t), "mo");
        let (t, c) = at(r#"{"ignition": {"version": "3.|4.0"}}"#, true);
        assert_eq!(c.parent, [key("ignition")]);
        assert_eq!(
            (c.key.as_deref(), c.in_value, c.word(&t)),
            (Some("version"), true, "3.4.0")
        );
    }
}
