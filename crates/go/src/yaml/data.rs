//! What a tree's values mean as data once read: nulls, and plain JSON (plain scalars
//! typed as YAML 1.2 types them).

use super::resolve;
use crate::tree::{Node, Value};

/// Whether `node` means null: a null, or a plain scalar go-yaml reads as one (`~`, `null`,
/// nothing). A JSON tree has no plain scalars: only its nulls are.
pub fn is_null(node: &Node) -> bool {
    match &node.value {
        Value::Null => true,
        Value::Plain(s) => resolve::is_null(s),
        _ => false,
    }
}

/// The document as plain JSON data, plain scalars typed the YAML 1.2 way (for checking a
/// document against a JSON Schema, as editors do).
pub fn to_json(node: &Node) -> serde_json::Value {
    use resolve::{Resolved, resolve};
    use serde_json::Value as J;
    match &node.value {
        Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Number(n) => n.parse::<i64>().map(J::from).unwrap_or(J::Null),
        Value::String(s) => J::String(s.clone()),
        Value::Plain(s) => match resolve(s) {
            Resolved::Null => J::Null,
            Resolved::Bool(b) => J::Bool(b),
            Resolved::Int(i) => i64::try_from(i).map_or_else(|_| J::from(i as u64), J::from),
            Resolved::Float(f) => serde_json::Number::from_f64(f).map_or(J::Null, J::Number),
            Resolved::Str => J::String(s.clone()),
        },
        Value::Array(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Object(entries) => J::Object(
            entries
                .iter()
                .map(|e| (e.key.clone(), to_json(&e.value)))
                .collect(),
        ),
    }
}
