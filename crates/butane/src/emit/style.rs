//! Which style a scalar is written in: go-yaml's choice, or the readable one.

use super::Quoting;
use super::chars::Analysis;

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Style {
    Plain,
    Single,
    Double,
    Literal,
    /// Double-quoted with JSON's escapes.
    Json,
}

/// The style of scalar `text` (a string, or a token when not `string`), as a simple
/// mapping key or not, given go-yaml's analysis of it.
pub(super) fn choose(
    q: Quoting,
    text: &str,
    string: bool,
    simple_key: bool,
    a: &Analysis,
) -> Style {
    if q == Quoting::Readable && string {
        return if readable_plain(text) {
            Style::Plain
        } else if !simple_key && readable_block(text) {
            Style::Literal
        } else {
            Style::Json
        };
    }
    let mut style = if !string {
        Style::Plain
    } else if text.contains('\n') {
        Style::Literal
    } else if plain_reads_as_string(text) {
        Style::Plain
    } else {
        Style::Double
    };
    // go-yaml's emitter falls back from the style asked for to one the value allows.
    if simple_key && a.multiline {
        style = Style::Double;
    }
    if style == Style::Plain && (!a.block_plain_allowed || (text.is_empty() && simple_key)) {
        style = Style::Single;
    }
    if style == Style::Single && !a.single_quoted_allowed {
        style = Style::Double;
    }
    if style == Style::Literal && (!a.block_allowed || simple_key) {
        style = Style::Double;
    }
    style
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

/// Whether a person's YAML reader takes `s` written plain for this string: words and paths
/// of letters, digits and `/._-`, starting with a letter or `/`, that no YAML version
/// reads as a boolean or null.
fn readable_plain(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "/._-".contains(c))
        && s.starts_with(|c: char| c.is_ascii_alphabetic() || c == '/')
        && !matches!(
            s.to_ascii_lowercase().as_str(),
            "y" | "n" | "yes" | "no" | "on" | "off" | "true" | "false" | "null"
        )
}

/// Whether `s` can be written as a literal block scalar and read back unchanged.
fn readable_block(s: &str) -> bool {
    s.contains('\n')
        && !s.starts_with([' ', '\n'])
        && s.chars().all(|c| c == '\n' || !c.is_control())
        && !s.contains('\u{feff}')
        && s.lines()
            .all(|l| l.trim_end() == l && !l.is_empty() || l.is_empty())
        && !s.trim_end_matches('\n').is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn readable_scalars_read_back_as_strings() {
        assert!(readable_plain("/etc/hosts"));
        for s in ["yes", "0644", "a: b", ""] {
            assert!(!readable_plain(s), "{s}");
        }
        assert!(readable_block("[Unit]\nA=b\n"));
        assert!(!readable_block(" lead\n"));
        assert!(!readable_block("tab\there\r\n"));
    }
}
