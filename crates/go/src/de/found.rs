//! How go-yaml names, in a type error, the value it could not decode: by its tag and its
//! text cut short.

use crate::tree::{Node, Value};
use crate::yaml::TagNote;
use crate::yaml::resolve::plain_tag;
use std::collections::HashMap;

/// go-yaml's cut of a long value: over 10 bytes, the first 7 bytes. A character the cut
/// splits is one U+FFFD here, where go-yaml prints its first bytes as they are.
fn short(text: &str) -> String {
    if text.len() <= 10 {
        return text.to_string();
    }
    let mut end = 7;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let split = if end < 7 { "\u{FFFD}" } else { "" };
    format!("{}{split}...", &text[..end])
}

/// How go-yaml names a value it could not decode: by its tag (as written, else as resolved)
/// and its text, shortened.
pub fn yaml_found(node: &Node, tags: Option<&HashMap<u32, TagNote>>) -> String {
    let named = tags.and_then(|t| t.get(&node.start)).and_then(|n| match n {
        TagNote::Named {
            tag,
            text,
            collection,
        } if *collection == node.is_container() => Some((tag, text)),
        _ => None,
    });
    match (named, &node.value) {
        // After these two go-yaml writes the text whole, with no space or quotes.
        (Some((tag, text)), _) if tag == "!!seq" || tag == "!!map" => format!("{tag}{text}"),
        (Some((tag, text)), _) => format!("{tag} `{}`", short(text)),
        (_, Value::Plain(t)) => format!("{} `{}`", plain_tag(t), short(t)),
        (_, Value::String(t)) => format!("!!str `{}`", short(t)),
        (_, Value::Array(_)) => "!!seq".to_string(),
        (_, Value::Object(_)) => "!!map".to_string(),
        (_, v) => v.kind_name().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuts_long_values_by_bytes_as_go_yaml() {
        assert_eq!(short("0123456789"), "0123456789");
        assert_eq!(short("0123456789a"), "0123456...");
        // Ten bytes, five characters: whole. Twelve bytes: cut inside the fourth.
        assert_eq!(short("ééééé"), "ééééé");
        assert_eq!(short("éééééé"), "ééé\u{FFFD}...");
        assert_eq!(short("a€€€"), "a€€€");
        assert_eq!(short("a€€€€"), "a€€...");
    }
}
