//! What a tag written on a scalar does to it: the value it gives (`!!str` text, `!!binary`
//! decoded, core-schema tags checked against the text) and how go-yaml names or refuses
//! the node afterwards ([`TagNote`]).

use super::scanner::Style;
use super::{TagNote, resolve};
use crate::tree::Value;

/// The data of a `!!binary` scalar written as `text` (base64; line breaks in it ignored, as
/// go-yaml ignores them), or `None` if it is not base64.
pub fn binary_data(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    let compact: String = text.chars().filter(|c| !matches!(c, '\r' | '\n')).collect();
    base64::engine::general_purpose::STANDARD
        .decode(compact)
        .ok()
}

/// The value of a scalar with its tag applied, and what else the tag means.
pub(super) fn scalar_value(
    text: String,
    style: Style,
    tag: Option<&str>,
) -> (Value, Option<TagNote>) {
    // `!` alone is no tag: the scalar resolves as if untagged.
    let Some(tag) = tag.filter(|t| *t != "!").map(resolve::short_tag) else {
        return match style {
            Style::Plain => (Value::Plain(text), None),
            _ => (Value::String(text), None),
        };
    };
    let named = |text: &str| TagNote::Named {
        tag: tag.clone(),
        text: text.to_string(),
        collection: false,
    };
    match tag.as_str() {
        "!!str" => (Value::String(text), None),
        // go-yaml decodes binary data given to a string (line breaks in the data ignored).
        "!!binary" => {
            match binary_data(&text) {
                // Text as Go makes it of the bytes; embedded contents take the bytes
                // themselves (see `spec::base::BinaryValues`).
                Some(data) => {
                    let note = named(&text);
                    (
                        Value::String(crate::bytes::go_lossy(&data).into_owned()),
                        Some(note),
                    )
                }
                None => (
                    Value::String(text),
                    Some(TagNote::Refused(
                        "!!binary value contains invalid base64 data".into(),
                    )),
                ),
            }
        }
        "!!null" | "!!bool" | "!!int" | "!!float" | "!!timestamp" => {
            match resolve::check_explicit(&tag, &text) {
                // Text, so that no walk over the tree takes it for a null (go-yaml's
                // decoding stops at it, a null or not).
                Err(m) => (Value::String(text), Some(TagNote::Refused(m))),
                Ok(()) if tag == "!!null" => (Value::Null, None),
                // A timestamp decodes into a string only, as its text.
                Ok(()) if tag == "!!timestamp" => {
                    let note = named(&text);
                    (Value::String(text), Some(note))
                }
                Ok(()) => {
                    let note = named(&text);
                    (Value::Plain(text), Some(note))
                }
            }
        }
        // Any other tag leaves the text a string that go-yaml names by the tag.
        _ => {
            let note = named(&text);
            (Value::String(text), Some(note))
        }
    }
}
