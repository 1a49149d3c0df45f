//! Messages in and out over standard input and output. A reader thread frames incoming
//! messages; a message that is no JSON-RPC is answered with a parse error instead of ending
//! the server (lsp-server's own stdio transport stops reading at the first one).

use lsp_server::Message;
use std::io::{self, BufRead, Write};
use std::sync::mpsc::{Receiver, channel};

pub(crate) enum Incoming {
    Message(Message),
    /// A message whose payload could not be read, with why.
    Malformed(String),
}

/// Starts the reader thread: incoming messages, until standard input ends.
pub(crate) fn read_stdin() -> Receiver<Incoming> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        let stdin = io::stdin();
        let mut input = stdin.lock();
        loop {
            let next = match Message::read(&mut input) {
                Ok(None) => break,
                Ok(Some(m)) => Incoming::Message(m),
                Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                    Incoming::Malformed(e.to_string())
                }
                Err(_) => break,
            };
            if tx.send(next).is_err() {
                break;
            }
            // A bad header leaves the stream where it was: nothing more can come when
            // input has ended.
            if input.fill_buf().map(|b| b.is_empty()).unwrap_or(true) {
                break;
            }
        }
    });
    rx
}

/// Writes messages to standard output.
#[derive(Default)]
pub(crate) struct Out;

impl Out {
    pub(crate) fn send(&mut self, m: Message) {
        let stdout = io::stdout();
        let mut w = stdout.lock();
        // A client that is gone takes no more answers; the reader then ends the loop.
        let _ = m.write(&mut w).and_then(|_| w.flush());
    }

    /// JSON-RPC's answer to a payload that is not JSON (or not a message): a parse error
    /// with a null id.
    pub(crate) fn parse_error(&mut self, why: &str) {
        let body = serde_json::json!({
            "jsonrpc": "2.0",
            "id": null,
            "error": {"code": -32700, "message": why},
        })
        .to_string();
        let stdout = io::stdout();
        let mut w = stdout.lock();
        let _ = write!(w, "Content-Length: {}\r\n\r\n{body}", body.len()).and_then(|_| w.flush());
    }
}
