//! Logging as upstream's binaries log: to the system log as Go's `log/syslog` writes it
//! (`<PRI>Mmm dd hh:mm:ss ignition[PID]: message`, one datagram a message, on `/dev/log`,
//! so that journald files it under the identifier `ignition`), or to standard output as
//! `LEVEL    : message`. A few lines over the socket rather than a journal library: the
//! binary stays small, and syslog is what upstream speaks too.

use std::io::Write as _;
use std::os::unix::net::UnixDatagram;

/// Syslog severities, as upstream's logger names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Crit = 2,
    Err = 3,
    Info = 6,
    Debug = 7,
}

impl Level {
    /// The fixed-width label of `--log-to-stdout`.
    fn label(self) -> &'static str {
        match self {
            Level::Crit => "CRITICAL :",
            Level::Err => "ERROR    :",
            Level::Info => "INFO     :",
            Level::Debug => "DEBUG    :",
        }
    }
}

/// Where messages go.
pub struct Logger {
    syslog: Option<UnixDatagram>,
}

/// The sockets Go's syslog tries, in order; `FLINT_SYSLOG_SOCKET` replaces them (tests).
fn sockets() -> Vec<String> {
    match std::env::var("FLINT_SYSLOG_SOCKET") {
        Ok(p) if !p.is_empty() => vec![p],
        _ => ["/dev/log", "/var/run/syslog", "/var/run/log"]
            .map(String::from)
            .to_vec(),
    }
}

impl Logger {
    /// Standard output only (`--log-to-stdout`, and `ignition-apply`).
    pub fn stdout() -> Logger {
        Logger { syslog: None }
    }

    /// The system log, or standard output when `to_stdout` or when no system log listens
    /// (which is then said first, in upstream's words).
    pub fn new(to_stdout: bool) -> Logger {
        if to_stdout {
            return Logger::stdout();
        }
        let connect = |p: &String| {
            let s = UnixDatagram::unbound().ok()?;
            s.connect(p).ok().map(|_| s)
        };
        match sockets().iter().find_map(connect) {
            Some(s) => Logger { syslog: Some(s) },
            None => {
                let mut l = Logger::stdout();
                l.log(
                    Level::Err,
                    "unable to open syslog: Unix syslog delivery error",
                );
                l
            }
        }
    }

    pub fn log(&mut self, level: Level, msg: &str) {
        match &self.syslog {
            Some(s) => {
                let line = format!(
                    "<{}>{} ignition[{}]: {msg}{}",
                    level as u8,
                    stamp(),
                    std::process::id(),
                    if msg.ends_with('\n') { "" } else { "\n" }
                );
                // Logging never fails a stage.
                let _ = s.send(line.as_bytes());
            }
            None => {
                // Nor does a reader that went away.
                let _ = writeln!(std::io::stdout(), "{} {msg}", level.label());
            }
        }
    }

    pub fn info(&mut self, msg: &str) {
        self.log(Level::Info, msg);
    }

    pub fn crit(&mut self, msg: &str) {
        self.log(Level::Crit, msg);
    }
}

/// The local time as Go's `time.Stamp` (`Jan _2 15:04:05`), which its syslog writes.
fn stamp() -> String {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    // SAFETY: `time` with a null pointer only returns the time; `localtime_r` fills the
    // zeroed struct it is given and keeps no pointer to it.
    let tm = unsafe {
        let now = libc::time(std::ptr::null_mut());
        let mut tm: libc::tm = std::mem::zeroed();
        libc::localtime_r(&now, &mut tm);
        tm
    };
    format!(
        "{} {:>2} {:02}:{:02}:{:02}",
        MONTHS[tm.tm_mon.clamp(0, 11) as usize],
        tm.tm_mday,
        tm.tm_hour,
        tm.tm_min,
        tm.tm_sec
    )
}
