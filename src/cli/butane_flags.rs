//! The `butane` drop-in's command line, read as upstream's flag library (spf13/pflag) reads
//! it, so that scripts written for upstream behave the same: `-p=1`, `-ofile`, flags after
//! the input, any `--color` value (one it does not know means no colour), hidden flags, and
//! the same usage text and messages (`unknown flag: --bogus`) with exit code 2. A
//! general-purpose parser (clap) cannot be told to read it that way; `flint translate`
//! keeps clap.

use super::go_parse_bool;
use super::render::Color;
use super::translate::{INPUT_DEPRECATED, TranslateArgs};
use flint_go::goquote;
use std::ffi::OsString;
use std::io::Write;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::PathBuf;

/// What the command line asks for.
#[derive(Debug)]
pub enum Action {
    Translate(TranslateArgs),
    /// The usage text on standard output, exit 0.
    Help,
    Version,
    /// The usage text on standard error, then the message if any, exit 2.
    Usage(Option<Vec<u8>>),
}

#[derive(Clone, Copy, PartialEq)]
enum Flag {
    Help,
    Version,
    Debug,
    Check,
    Strict,
    Pretty,
    Raw,
    RawErrors,
    Color,
    Input,
    Output,
    FilesDir,
}

/// (long name, shorthand, flag); `colour` is the hidden second spelling of `color`.
const FLAGS: [(&str, Option<u8>, Flag); 13] = [
    ("help", Some(b'h'), Flag::Help),
    ("version", Some(b'V'), Flag::Version),
    ("debug", Some(b'D'), Flag::Debug),
    ("check", Some(b'c'), Flag::Check),
    ("strict", Some(b's'), Flag::Strict),
    ("pretty", Some(b'p'), Flag::Pretty),
    ("raw", Some(b'r'), Flag::Raw),
    ("raw-errors", None, Flag::RawErrors),
    ("color", None, Flag::Color),
    ("colour", None, Flag::Color),
    ("input", None, Flag::Input),
    ("output", Some(b'o'), Flag::Output),
    ("files-dir", Some(b'd'), Flag::FilesDir),
];

impl Flag {
    /// The value a flag takes when given without one; none for flags that need a value.
    fn no_value_default(self) -> Option<&'static [u8]> {
        match self {
            Flag::Color => Some(b"always"),
            Flag::Input | Flag::Output | Flag::FilesDir => None,
            _ => Some(b"true"),
        }
    }

    /// How the flag's name reads in a message about its value: `-p, --pretty`.
    fn display(self, long: &str) -> String {
        match FLAGS.iter().find(|f| f.2 == self).and_then(|f| f.1) {
            Some(short) => format!("-{}, --{long}", short as char),
            None => format!("--{long}"),
        }
    }
}

/// The usage text, for the program called `argv0`.
pub fn usage(argv0: &[u8]) -> Vec<u8> {
    let mut out = b"Usage: ".to_vec();
    out.extend_from_slice(argv0);
    out.extend_from_slice(
        b" [options] [input-file]
Options:
  -c, --check                     check config without producing output
      --color string[=\"always\"]   control color output: \"auto\", \"always\", or \"never\" (default \"auto\")
  -d, --files-dir string          allow embedding local files from this directory
  -h, --help                      show usage and exit
  -o, --output string             write to output file instead of stdout
  -p, --pretty                    output formatted json
  -r, --raw                       never wrap in a MachineConfig; force Ignition output
      --raw-errors                show raw errors, rather than pretty printing them
  -s, --strict                    fail on any warning
  -V, --version                   print the version and exit
",
    );
    out
}

/// Reads the arguments after the program's name. Notes the flag library prints as it goes
/// (a deprecated flag) go to `notes`.
pub fn parse(args: impl IntoIterator<Item = OsString>, notes: &mut impl Write) -> Action {
    let mut st = State::default();
    let mut args = args.into_iter().map(OsString::into_vec);
    let mut positional: Vec<Vec<u8>> = Vec::new();
    while let Some(a) = args.next() {
        if a.len() < 2 || a[0] != b'-' {
            positional.push(a);
        } else if a == b"--" {
            positional.extend(args.by_ref());
        } else if a[1] == b'-' {
            if let Err(e) = st.long(&a, &mut args, notes) {
                return Action::Usage(Some(e));
            }
        } else if let Err(e) = st.shorts(&a, &mut args) {
            return Action::Usage(Some(e));
        }
    }
    let input = match (positional.len(), st.input.is_empty()) {
        (0, _) => std::mem::take(&mut st.input),
        (1, true) => positional.remove(0),
        _ => return Action::Usage(None),
    };
    if st.help {
        return Action::Help;
    }
    if st.version {
        return Action::Version;
    }
    let path = |v: Vec<u8>| (!v.is_empty()).then(|| PathBuf::from(OsString::from_vec(v)));
    Action::Translate(TranslateArgs {
        strict: st.strict,
        pretty: st.pretty,
        raw: st.raw,
        raw_errors: st.raw_errors,
        files_dir: path(st.files_dir),
        output: path(st.output),
        check: st.check,
        color: match st.color.as_deref().unwrap_or(b"auto") {
            b"always" | b"yes" => Color::Always,
            b"auto" => Color::Auto,
            // "never", "no" and anything else
            _ => Color::Never,
        },
        input_flag: None,
        debug: st.debug,
        input: path(input),
    })
}

#[derive(Default)]
struct State {
    help: bool,
    version: bool,
    debug: bool,
    check: bool,
    strict: bool,
    pretty: bool,
    raw: bool,
    raw_errors: bool,
    /// As given; none is `auto`.
    color: Option<Vec<u8>>,
    input: Vec<u8>,
    output: Vec<u8>,
    files_dir: Vec<u8>,
}

impl State {
    /// `--name`, `--name=value` or `--name value`.
    fn long(
        &mut self,
        arg: &[u8],
        rest: &mut impl Iterator<Item = Vec<u8>>,
        notes: &mut impl Write,
    ) -> Result<(), Vec<u8>> {
        let body = &arg[2..];
        if body.is_empty() || body[0] == b'-' || body[0] == b'=' {
            return Err([&b"bad flag syntax: "[..], arg].concat());
        }
        let (name, value) = match body.iter().position(|&b| b == b'=') {
            Some(i) => (&body[..i], Some(body[i + 1..].to_vec())),
            None => (body, None),
        };
        let Some(&(long, _, flag)) = FLAGS.iter().find(|f| f.0.as_bytes() == name) else {
            return Err([&b"unknown flag: --"[..], name].concat());
        };
        let value = match (value, flag.no_value_default()) {
            (Some(v), _) => v,
            (None, Some(d)) => d.to_vec(),
            (None, None) => rest
                .next()
                .ok_or_else(|| format!("flag needs an argument: --{long}").into_bytes())?,
        };
        self.set(flag, long, value)?;
        if flag == Flag::Input {
            let _ = writeln!(notes, "{INPUT_DEPRECATED}");
        }
        Ok(())
    }

    /// A run of shorthands: `-cs`, `-p=1`, `-ofile`, `-o file`.
    fn shorts(
        &mut self,
        arg: &[u8],
        rest: &mut impl Iterator<Item = Vec<u8>>,
    ) -> Result<(), Vec<u8>> {
        let mut shorts = &arg[1..];
        while let Some((&c, after)) = shorts.split_first() {
            // The flag library leaves the rest to Go's test runner when it reads `test.`.
            if shorts.starts_with(b"test.") {
                return Ok(());
            }
            // Messages name the shorthands from this one on.
            let here = shorts;
            let Some(&(long, _, flag)) = FLAGS.iter().find(|f| f.1 == Some(c)) else {
                let c = format!("'{}'", go_quote_rune(c));
                return Err(
                    [format!("unknown shorthand flag: {c} in -").as_bytes(), here].concat(),
                );
            };
            let value = if let Some(v) = after.strip_prefix(b"=").filter(|_| after.len() > 1) {
                shorts = b"";
                v.to_vec()
            } else if let Some(d) = flag.no_value_default() {
                shorts = after;
                d.to_vec()
            } else if !after.is_empty() {
                shorts = b"";
                after.to_vec()
            } else {
                shorts = b"";
                rest.next().ok_or_else(|| {
                    [
                        format!("flag needs an argument: '{}' in -", go_quote_rune(c)).as_bytes(),
                        here,
                    ]
                    .concat()
                })?
            };
            self.set(flag, long, value)?;
        }
        Ok(())
    }

    fn set(&mut self, flag: Flag, long: &str, value: Vec<u8>) -> Result<(), Vec<u8>> {
        let slot = match flag {
            Flag::Color => self.color.insert(Vec::new()),
            Flag::Input => &mut self.input,
            Flag::Output => &mut self.output,
            Flag::FilesDir => &mut self.files_dir,
            _ => {
                let on = go_parse_bool(&value).ok_or_else(|| {
                    let v = goquote::quote_bytes(&value);
                    format!(
                        "invalid argument {v} for \"{}\" flag: strconv.ParseBool: parsing {v}: invalid syntax",
                        flag.display(long)
                    )
                    .into_bytes()
                })?;
                *match flag {
                    Flag::Help => &mut self.help,
                    Flag::Version => &mut self.version,
                    Flag::Debug => &mut self.debug,
                    Flag::Check => &mut self.check,
                    Flag::Strict => &mut self.strict,
                    Flag::Pretty => &mut self.pretty,
                    Flag::Raw => &mut self.raw,
                    _ => &mut self.raw_errors,
                } = on;
                return Ok(());
            }
        };
        *slot = value;
        Ok(())
    }
}

/// A byte as Go's `%q` writes it (as the character of that number), without the quotes.
fn go_quote_rune(b: u8) -> String {
    match b {
        b'\'' => "\\'".into(),
        b'"' => "\"".into(),
        b => goquote::escape_char(char::from(b)),
    }
}

/// Writes what `action` prints and returns the exit code, or `None` to translate.
pub fn answer(action: &Action, argv0: &std::ffi::OsStr) -> Option<i32> {
    let usage = || usage(argv0.as_bytes());
    match action {
        Action::Translate(_) => None,
        Action::Help => {
            let _ = std::io::stdout().write_all(&usage());
            Some(0)
        }
        Action::Version => {
            println!("Butane v{} (flint)", env!("CARGO_PKG_VERSION"));
            Some(0)
        }
        Action::Usage(message) => {
            let mut err = std::io::stderr().lock();
            let _ = err.write_all(&usage());
            if let Some(m) = message {
                let _ = err.write_all(m);
                let _ = err.write_all(b"\n");
            }
            Some(2)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str]) -> (Action, String) {
        let mut notes = Vec::new();
        let a = parse(args.iter().map(OsString::from), &mut notes);
        (a, String::from_utf8(notes).unwrap())
    }

    fn message(args: &[&str]) -> String {
        match run(args).0 {
            Action::Usage(Some(m)) => String::from_utf8(m).unwrap(),
            other => panic!("{args:?}: {other:?}"),
        }
    }

    fn translate(args: &[&str]) -> TranslateArgs {
        match run(args).0 {
            Action::Translate(t) => t,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn messages_are_upstreams() {
        assert_eq!(message(&["--bogus=1"]), "unknown flag: --bogus");
        assert_eq!(message(&["-cx"]), "unknown shorthand flag: 'x' in -x");
        assert_eq!(message(&["-p="]), "unknown shorthand flag: '=' in -=");
        assert_eq!(message(&["-co"]), "flag needs an argument: 'o' in -o");
        assert_eq!(message(&["-'"]), r"unknown shorthand flag: '\'' in -'");
        assert_eq!(message(&["-o"]), "flag needs an argument: 'o' in -o");
        assert_eq!(message(&["--output"]), "flag needs an argument: --output");
        assert_eq!(message(&["---x"]), "bad flag syntax: ---x");
        assert_eq!(message(&["--=x"]), "bad flag syntax: --=x");
        assert_eq!(
            message(&["--pretty=maybe"]),
            "invalid argument \"maybe\" for \"-p, --pretty\" flag: strconv.ParseBool: parsing \"maybe\": invalid syntax"
        );
        assert_eq!(
            message(&["--raw-errors=2"]),
            "invalid argument \"2\" for \"--raw-errors\" flag: strconv.ParseBool: parsing \"2\": invalid syntax"
        );
        // Two inputs: the usage alone; help comes after that check.
        assert!(matches!(run(&["a", "b", "-h"]).0, Action::Usage(None)));
        assert!(matches!(run(&["--input=a", "b"]).0, Action::Usage(None)));
        assert!(matches!(run(&["-V", "-h"]).0, Action::Help));
        assert!(matches!(run(&["--help=false", "-V"]).0, Action::Version));
    }

    #[test]
    fn values_as_the_flag_library_reads_them() {
        let t = translate(&[
            "-p=1",
            "-ofile",
            "-d",
            "dir",
            "in.bu",
            "--strict=false",
            "-cs",
        ]);
        assert!(t.pretty && t.check && t.strict);
        assert_eq!(t.output, Some("file".into()));
        assert_eq!(t.files_dir, Some("dir".into()));
        assert_eq!(t.input, Some("in.bu".into()));
        // A bool flag takes no separate value: `maybe` is the input.
        assert_eq!(
            translate(&["--pretty", "maybe"]).input,
            Some("maybe".into())
        );
        assert_eq!(translate(&["--color=bogus"]).color, Color::Never);
        assert_eq!(translate(&["--colour"]).color, Color::Always);
        assert_eq!(translate(&["--color", "x"]).input, Some("x".into()));
        assert_eq!(translate(&["--", "-c"]).input, Some("-c".into()));
        assert!(!translate(&["--", "-c"]).check);
        assert_eq!(translate(&["-test.v", "-"]).input, Some("-".into()));
        assert!(translate(&["-ctest.x"]).check);
        assert_eq!(translate(&[""]).input, None);
        let (a, notes) = run(&["--input", "x.bu"]);
        assert!(matches!(a, Action::Translate(t) if t.input == Some("x.bu".into())));
        assert!(notes.starts_with("Flag --input has been deprecated"));
    }
}
