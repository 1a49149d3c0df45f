//! Text quoted as Go quotes it (`strconv.Quote`, the `%q` verb), for messages that must read
//! as upstream's: printable characters as they are, the others escaped (`\a`, `\x00`,
//! `\u00a0`, `\U000e0001`), bytes that are not UTF-8 as `\xNN`.

mod print;

/// Go's `strconv.IsPrint`: letters, marks, numbers, punctuation, symbols and the ASCII space.
pub fn is_print(c: char) -> bool {
    let u = c as u32;
    if u < 0x80 {
        return (0x20..0x7f).contains(&u);
    }
    let i = print::PRINT.partition_point(|&(_, hi)| hi < u);
    print::PRINT.get(i).is_some_and(|&(lo, _)| lo <= u)
}

/// A character as Go's `strconv.Quote` writes it inside its quotes (a quote is the
/// caller's to escape).
pub fn escape_char(ch: char) -> String {
    match ch {
        '\u{7}' => "\\a".into(),
        '\u{8}' => "\\b".into(),
        '\u{c}' => "\\f".into(),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '\u{b}' => "\\v".into(),
        '\\' => "\\\\".into(),
        c if (c as u32) < 0x20 || c == '\u{7f}' => format!("\\x{:02x}", c as u32),
        c if is_print(c) => c.to_string(),
        c if (c as u32) < 0x10000 => format!("\\u{:04x}", c as u32),
        c => format!("\\U{:08x}", c as u32),
    }
}

/// `bytes` in double quotes as Go's `%q` writes them.
pub fn quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::from("\"");
    for chunk in bytes.utf8_chunks() {
        for c in chunk.valid().chars() {
            match c {
                '"' => out.push_str("\\\""),
                c => out.push_str(&escape_char(c)),
            }
        }
        for b in chunk.invalid() {
            out.push_str(&format!("\\x{b:02x}"));
        }
    }
    out.push('"');
    out
}

/// `s` in double quotes as Go's `%q` writes it.
pub fn quote(s: &str) -> String {
    quote_bytes(s.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_as_go() {
        assert_eq!(quote("a\u{7}\0\u{1b}\u{7f}"), r#""a\a\x00\x1b\x7f""#);
        assert_eq!(
            quote("\u{85}\u{feff}\u{e0001}"),
            r#""\u0085\ufeff\U000e0001""#
        );
        // Combining marks and letters of recent Unicode versions are printable; unassigned
        // code points, format characters and separators other than the space are not.
        assert_eq!(
            quote("e\u{301}\u{20c1}é \"\\"),
            "\"e\u{301}\u{20c1}é \\\"\\\\\""
        );
        assert_eq!(quote("\u{378}\u{891}\u{a0}"), r#""\u0378\u0891\u00a0""#);
        assert_eq!(quote_bytes(b"\xff\xe2\x82"), r#""\xff\xe2\x82""#);
    }
}
