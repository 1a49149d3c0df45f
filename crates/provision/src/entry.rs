//! What a stage's entries fail with.

use flint_go::tree::JsonPath;

/// A failure of one entry: its JSON path in the config, and why.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EntryError {
    pub entry: JsonPath,
    pub message: String,
}
