//! Diagnostics: what went wrong or looks wrong, where (JSON path and line:column), and how
//! to print it for people (the upstream validator's line format) and for machines (JSON).

use crate::tree::{JsonPath, LineCol};

pub mod render;
use serde::Serialize;
use std::fmt;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Error,
    Warning,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub path: Option<JsonPath>,
    pub pos: Option<LineCol>,
    pub message: String,
    /// A failure to read the document at all ("couldn't parse config: ..."), printed without
    /// a severity prefix as upstream does.
    pub fatal: bool,
}

impl Diagnostic {
    pub fn error(path: Option<JsonPath>, pos: Option<LineCol>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            path,
            pos,
            message: message.into(),
            fatal: false,
        }
    }

    pub fn warning(
        path: Option<JsonPath>,
        pos: Option<LineCol>,
        message: impl Into<String>,
    ) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(path, pos, message)
        }
    }

    pub fn fatal(message: impl Into<String>) -> Self {
        Diagnostic {
            fatal: true,
            ..Diagnostic::error(None, None, message)
        }
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// The upstream validator's line: `error at $.storage.files.0.path, line 1 col 61: path not
/// absolute`.
impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.fatal {
            return write!(f, "couldn't parse config: {}", self.message);
        }
        write!(f, "{}", self.severity)?;
        match (&self.path, &self.pos) {
            (Some(p), Some(lc)) => write!(f, " at {p}, line {} col {}", lc.line, lc.col)?,
            (None, Some(lc)) => write!(f, " at line {} col {}", lc.line, lc.col)?,
            (Some(p), None) => write!(f, " at {p}")?,
            (None, None) => {}
        }
        write!(f, ": {}", self.message)
    }
}

/// One diagnostic as a JSON object for machines.
#[derive(Serialize)]
pub struct JsonDiagnostic<'a> {
    pub file: &'a str,
    pub severity: Severity,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    pub message: String,
}

impl Diagnostic {
    pub fn to_json(&self, file: &str) -> String {
        let msg = if self.fatal {
            format!("couldn't parse config: {}", self.message)
        } else {
            self.message.clone()
        };
        let j = JsonDiagnostic {
            file,
            severity: self.severity,
            path: self.path.as_ref().map(|p| p.to_string()),
            line: self.pos.map(|p| p.line),
            column: self.pos.map(|p| p.col),
            message: msg,
        };
        serde_json::to_string(&j).unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_like_ignition_validate() {
        let p = JsonPath::root()
            .key("storage")
            .key("files")
            .index(0)
            .key("path");
        let lc = LineCol { line: 1, col: 61 };
        assert_eq!(
            Diagnostic::error(Some(p.clone()), Some(lc), "path not absolute").to_string(),
            "error at $.storage.files.0.path, line 1 col 61: path not absolute"
        );
        assert_eq!(
            Diagnostic::warning(None, Some(lc), "x").to_string(),
            "warning at line 1 col 61: x"
        );
        assert_eq!(
            Diagnostic::fatal("unsupported config version").to_string(),
            "couldn't parse config: unsupported config version"
        );
        let j = Diagnostic::error(Some(p), Some(lc), "m").to_json("a.ign");
        assert_eq!(
            j,
            r#"{"file":"a.ign","severity":"error","path":"$.storage.files.0.path","line":1,"column":61,"message":"m"}"#
        );
    }
}
