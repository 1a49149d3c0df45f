//! The server: the protocol's life cycle (initialize, shutdown, exit), the open documents,
//! and diagnostics published once changes stop arriving for a moment.

use crate::doc::Doc;
use crate::knowledge::Schemas;
use crate::transport::{Incoming, Out, read_stdin};
use crate::{actions, complete, diagnostics, hover};
use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;
use lsp_types::notification::{self as note, Notification as _};
use lsp_types::request::{self as req, Request as _};
use serde_json::Value;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::str::FromStr;
use std::sync::mpsc::RecvTimeoutError;
use std::time::Duration;

/// How long the server waits after a change for the next one before it checks the
/// document: changes that come together (an editor's edits of one command, keystrokes
/// queued while a check ran) are checked once, and the check still comes well within 100 ms
/// of the last change.
const QUIET: Duration = Duration::from_millis(10);

#[derive(Default)]
struct Server {
    docs: HashMap<String, Doc>,
    /// Documents changed since their diagnostics were published.
    dirty: BTreeSet<String>,
    schemas: Schemas,
    /// The files directory for `local:` references, from the client's settings.
    files_dir: Option<PathBuf>,
    initialized: bool,
    shut_down: bool,
    out: Out,
}

/// Serves one client over standard input and output; returns the exit code the protocol
/// asks for (0 after shutdown then exit, 1 otherwise).
pub fn serve_stdio() -> i32 {
    let rx = read_stdin();
    let mut s = Server::default();
    loop {
        let next = if s.dirty.is_empty() {
            rx.recv().map_err(|_| RecvTimeoutError::Disconnected)
        } else {
            rx.recv_timeout(QUIET)
        };
        match next {
            Err(RecvTimeoutError::Timeout) => s.publish_dirty(),
            Err(RecvTimeoutError::Disconnected) => return 1,
            Ok(Incoming::Malformed(why)) => s.out.parse_error(&why),
            Ok(Incoming::Message(Message::Request(r))) => s.request(r),
            Ok(Incoming::Message(Message::Notification(n))) => {
                if n.method == note::Exit::METHOD {
                    return if s.shut_down { 0 } else { 1 };
                }
                s.notification(n);
            }
            Ok(Incoming::Message(Message::Response(_))) => {}
        }
    }
}

fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(vec![":".into(), "\"".into(), ".".into(), " ".into()]),
            ..Default::default()
        }),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
            lsp::CodeActionOptions {
                code_action_kinds: Some(vec![
                    lsp::CodeActionKind::QUICKFIX,
                    lsp::CodeActionKind::REFACTOR_REWRITE,
                ]),
                ..Default::default()
            },
        )),
        ..Default::default()
    }
}

impl Server {
    fn reply(&mut self, id: RequestId, result: Result<Value, (ErrorCode, String)>) {
        let r = match result {
            Ok(v) => Response::new_ok(id, v),
            Err((code, msg)) => Response::new_err(id, code as i32, msg),
        };
        self.out.send(Message::Response(r));
    }

    fn request(&mut self, r: Request) {
        let id = r.id.clone();
        let result = if r.method == req::Initialize::METHOD {
            self.initialize(r.params)
        } else if !self.initialized {
            Err((ErrorCode::ServerNotInitialized, "initialize first".into()))
        } else if self.shut_down {
            Err((ErrorCode::InvalidRequest, "the server is shut down".into()))
        } else if r.method == req::Shutdown::METHOD {
            self.shut_down = true;
            Ok(Value::Null)
        } else {
            // A bug of the server's is an error answer, never the end of the editor's help.
            let answer = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.answer(&r.method, r.params)
            }));
            answer.unwrap_or_else(|_| {
                let why = format!("{}: internal error (please report it)", r.method);
                Err((ErrorCode::InternalError, why))
            })
        };
        self.reply(id, result);
    }

    fn initialize(&mut self, params: Value) -> Result<Value, (ErrorCode, String)> {
        if self.initialized {
            return Err((
                ErrorCode::InvalidRequest,
                "initialize was already sent".into(),
            ));
        }
        let p: lsp::InitializeParams = serde_json::from_value(params)
            .map_err(|e| (ErrorCode::InvalidParams, format!("initialize: {e}")))?;
        self.settings(p.initialization_options.as_ref());
        self.initialized = true;
        let result = lsp::InitializeResult {
            capabilities: capabilities(),
            server_info: Some(lsp::ServerInfo {
                name: "flint".into(),
                version: Some(env!("CARGO_PKG_VERSION").into()),
            }),
        };
        Ok(serde_json::to_value(result).unwrap_or_default())
    }

    /// Reads `{"filesDir": DIR}` (or `{"flint": {"filesDir": DIR}}`, as settings arrive).
    fn settings(&mut self, v: Option<&Value>) {
        let Some(v) = v else { return };
        let v = v.get("flint").unwrap_or(v);
        if let Some(d) = v.get("filesDir") {
            self.files_dir = d.as_str().filter(|s| !s.is_empty()).map(PathBuf::from);
            self.dirty.extend(self.docs.keys().cloned());
        }
    }

    fn answer(&mut self, method: &str, params: Value) -> Result<Value, (ErrorCode, String)> {
        let bad = |e: serde_json::Error| (ErrorCode::InvalidParams, format!("{method}: {e}"));
        let to_value = |v: Result<Value, serde_json::Error>| v.map_err(bad);
        match method {
            req::HoverRequest::METHOD => {
                let p: lsp::HoverParams = serde_json::from_value(params).map_err(bad)?;
                let at = p.text_document_position_params;
                let h = self
                    .docs
                    .get(at.text_document.uri.as_str())
                    .and_then(|d| hover::hover(d, &mut self.schemas, at.position));
                to_value(serde_json::to_value(h))
            }
            req::Completion::METHOD => {
                let p: lsp::CompletionParams = serde_json::from_value(params).map_err(bad)?;
                let at = p.text_document_position;
                let items = match self.docs.get(at.text_document.uri.as_str()) {
                    Some(d) => complete::complete(d, &mut self.schemas, at.position),
                    None => Vec::new(),
                };
                to_value(serde_json::to_value(items))
            }
            req::CodeActionRequest::METHOD => {
                let p: lsp::CodeActionParams = serde_json::from_value(params).map_err(bad)?;
                let uri = p.text_document.uri;
                let found = match self.docs.get(uri.as_str()) {
                    Some(d) => {
                        let dir = d.files_dir(self.files_dir.as_deref());
                        actions::actions(d, &uri, p.range, dir.as_deref())
                    }
                    None => Vec::new(),
                };
                to_value(serde_json::to_value(found))
            }
            _ => Err((
                ErrorCode::MethodNotFound,
                format!("unknown method {method}"),
            )),
        }
    }

    fn notification(&mut self, n: Notification) {
        // A notification gets no answer, even when it is malformed; it is left alone.
        let _ = self.try_notification(n);
    }

    fn try_notification(&mut self, n: Notification) -> Option<()> {
        if !self.initialized {
            return None;
        }
        match n.method.as_str() {
            note::DidOpenTextDocument::METHOD => {
                let p: lsp::DidOpenTextDocumentParams = serde_json::from_value(n.params).ok()?;
                let uri = p.text_document.uri.as_str().to_string();
                self.docs
                    .insert(uri.clone(), Doc::new(&uri, p.text_document.text));
                // A document just opened is checked at once.
                self.publish(&uri);
            }
            note::DidChangeTextDocument::METHOD => {
                let p: lsp::DidChangeTextDocumentParams = serde_json::from_value(n.params).ok()?;
                let uri = p.text_document.uri.as_str().to_string();
                let doc = self.docs.get_mut(&uri)?;
                for c in p.content_changes {
                    doc.text.apply(c.range, &c.text);
                }
                self.dirty.insert(uri);
            }
            note::DidCloseTextDocument::METHOD => {
                let p: lsp::DidCloseTextDocumentParams = serde_json::from_value(n.params).ok()?;
                let uri = p.text_document.uri.as_str().to_string();
                self.docs.remove(&uri);
                self.dirty.remove(&uri);
                self.send_diagnostics(&uri, Vec::new());
            }
            note::DidChangeConfiguration::METHOD => {
                let p: lsp::DidChangeConfigurationParams = serde_json::from_value(n.params).ok()?;
                self.settings(Some(&p.settings));
            }
            _ => {}
        }
        Some(())
    }

    fn publish_dirty(&mut self) {
        for uri in std::mem::take(&mut self.dirty) {
            self.publish(&uri);
        }
    }

    fn publish(&mut self, uri: &str) {
        self.dirty.remove(uri);
        let Some(doc) = self.docs.get(uri) else {
            return;
        };
        let dir = doc.files_dir(self.files_dir.as_deref());
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            diagnostics::compute(doc, dir.as_deref())
        }));
        self.send_diagnostics(uri, found.unwrap_or_default());
    }

    fn send_diagnostics(&mut self, uri: &str, diagnostics: Vec<lsp::Diagnostic>) {
        let Ok(uri) = lsp::Uri::from_str(uri) else {
            return;
        };
        let p = lsp::PublishDiagnosticsParams {
            uri,
            diagnostics,
            version: None,
        };
        let n = Notification::new(note::PublishDiagnostics::METHOD.into(), p);
        self.out.send(Message::Notification(n));
    }
}
