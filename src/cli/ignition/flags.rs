//! The two flag syntaxes of upstream's binaries, read as their Go libraries read them:
//! `ignition` uses Go's `flag` package, `ignition-apply` and `ignition-rmcfg` use
//! spf13/pflag. Each parser takes the known flags (name, whether boolean) and hands every
//! value, in order, to a setter, which refuses a bad value with the reason; messages are
//! the libraries' own.

use crate::cli::go_parse_bool;
use flint_go::goquote::quote;

/// Why parsing stopped before the end.
#[derive(Debug, PartialEq, Eq)]
pub enum Stop {
    /// `-h` or `--help` (when no flag of that name exists): usage, exit 0.
    Help,
    /// The library's message for a bad command line: exit 2.
    Error(String),
}

impl Stop {
    /// What a command using Go's `flag` prints and returns: the message, then `usage`,
    /// on stderr; 0 for help, 2 for an error.
    pub fn go_exit(self, usage: &str) -> i32 {
        self.exit(usage, false)
    }

    /// The same with pflag, which prints `usage` before the message.
    pub fn pflag_exit(self, usage: &str) -> i32 {
        self.exit(usage, true)
    }

    fn exit(self, usage: &str, usage_first: bool) -> i32 {
        match self {
            Stop::Help => {
                eprint!("{usage}");
                0
            }
            Stop::Error(msg) if usage_first => {
                eprint!("{usage}");
                eprintln!("{msg}");
                2
            }
            Stop::Error(msg) => {
                eprintln!("{msg}");
                eprint!("{usage}");
                2
            }
        }
    }
}

/// A flag: its name and whether it is boolean (takes no separate value).
pub type Spec = (&'static str, bool);

/// Go's `flag`: `-name` or `--name`, `=value` or a separate value (not for booleans);
/// parsing ends at the first argument that is not a flag (a lone `-` and the empty string
/// included) or after `--`. Returns the index of the first argument left.
pub fn parse_go(
    args: &[String],
    specs: &[Spec],
    set: &mut dyn FnMut(&str, &str) -> Result<(), String>,
) -> Result<usize, Stop> {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if a.len() < 2 || !a.starts_with('-') {
            break;
        }
        i += 1;
        if a == "--" {
            break;
        }
        let name = a.strip_prefix("--").unwrap_or(&a[1..]);
        if name.is_empty() || name.starts_with('-') || name.starts_with('=') {
            return Err(Stop::Error(format!("bad flag syntax: {a}")));
        }
        let (name, value) = match name.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (name, None),
        };
        let Some(&(_, boolean)) = specs.iter().find(|(n, _)| *n == name) else {
            if name == "h" || name == "help" {
                return Err(Stop::Help);
            }
            return Err(Stop::Error(format!(
                "flag provided but not defined: -{name}"
            )));
        };
        let value = if boolean {
            let v = value.unwrap_or("true");
            match go_parse_bool(v.as_bytes()) {
                Some(b) => b.to_string(),
                None => {
                    let q = quote(v);
                    return Err(Stop::Error(format!(
                        "invalid boolean value {q} for -{name}: parse error"
                    )));
                }
            }
        } else {
            match value {
                Some(v) => v.to_string(),
                None if i < args.len() => {
                    i += 1;
                    args[i - 1].clone()
                }
                None => return Err(Stop::Error(format!("flag needs an argument: -{name}"))),
            }
        };
        set(name, &value).map_err(|e| {
            let q = quote(&value);
            Stop::Error(format!("invalid value {q} for flag -{name}: {e}"))
        })?;
    }
    Ok(i)
}

/// pflag: long flags with two dashes (`--name=value` or `--name value`), a single dash for
/// shorthand letters (none are defined but `-h`), flags and arguments in any order, `--`
/// ending the flags. Returns the arguments that are not flags.
pub fn parse_pflag(
    args: &[String],
    specs: &[Spec],
    set: &mut dyn FnMut(&str, &str) -> Result<(), String>,
) -> Result<Vec<String>, Stop> {
    let mut rest = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        i += 1;
        if a == "--" {
            rest.extend(args[i..].iter().cloned());
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            if long.starts_with('-') || long.starts_with('=') {
                return Err(Stop::Error(format!("bad flag syntax: {a}")));
            }
            let (name, value) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let Some(&(_, boolean)) = specs.iter().find(|(n, _)| *n == name) else {
                if name == "help" {
                    return Err(Stop::Help);
                }
                return Err(Stop::Error(format!("unknown flag: --{name}")));
            };
            let value = match value {
                Some(v) => v,
                None if boolean => "true".into(),
                None if i < args.len() => {
                    i += 1;
                    args[i - 1].clone()
                }
                None => return Err(Stop::Error(format!("flag needs an argument: --{name}"))),
            };
            let checked = match boolean {
                true => match go_parse_bool(value.as_bytes()) {
                    Some(b) => set(name, &b.to_string()),
                    None => Err(format!(
                        "strconv.ParseBool: parsing {}: invalid syntax",
                        quote(&value)
                    )),
                },
                false => set(name, &value),
            };
            checked.map_err(|e| {
                let q = quote(&value);
                Stop::Error(format!("invalid argument {q} for \"--{name}\" flag: {e}"))
            })?;
        } else if a.len() > 1 && a.starts_with('-') {
            // Shorthand letters: only pflag's own -h exists.
            let c = a[1..].chars().next().unwrap_or('-');
            if c == 'h' {
                return Err(Stop::Help);
            }
            return Err(Stop::Error(format!("unknown shorthand flag: '{c}' in {a}")));
        } else {
            rest.push(a.clone());
        }
    }
    Ok(rest)
}

/// A duration as Go's `time.ParseDuration` reads it (`90s`, `1m30s`, `1.5h`, `500ms`; a
/// bare `0`; a number without a unit is refused). Negative durations are read as zero.
pub fn parse_go_duration(s: &str) -> Option<std::time::Duration> {
    let (negative, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Some(std::time::Duration::ZERO);
    }
    if rest.is_empty() {
        return None;
    }
    let mut nanos: f64 = 0.0;
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        let (number, after) = rest.split_at(digits);
        // Digits on at least one side of at most one point.
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return None;
        }
        let unit_len = after
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(after.len());
        let (unit, next) = after.split_at(unit_len);
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        let value: f64 = format!("0{number}").parse().ok()?;
        nanos += value * scale;
        rest = next;
    }
    // Go refuses what overflows its 64-bit nanoseconds.
    if nanos > i64::MAX as f64 {
        return None;
    }
    Some(match negative {
        true => std::time::Duration::ZERO,
        false => std::time::Duration::from_nanos(nanos as u64),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn go_flag_rules() {
        let specs = [("root", false), ("version", true)];
        let run = |a: &[&str]| {
            let mut got = Vec::new();
            let r = parse_go(&strings(a), &specs, &mut |n, v| {
                got.push(format!("{n}={v}"));
                Ok(())
            });
            (r, got)
        };
        assert_eq!(
            run(&["--root", "/x", "-version"]),
            (Ok(3), strings(&["root=/x", "version=true"]))
        );
        assert_eq!(run(&["-root=/y", "", "-version"]).0, Ok(1));
        assert_eq!(run(&["-version", "1"]), (Ok(1), strings(&["version=true"])));
        assert_eq!(
            run(&["-version=yes"]).0,
            Err(Stop::Error(
                "invalid boolean value \"yes\" for -version: parse error".into()
            ))
        );
        assert_eq!(run(&["--", "-version"]).0, Ok(1));
        assert_eq!(run(&["-help"]).0, Err(Stop::Help));
        assert_eq!(
            run(&["---version"]).0,
            Err(Stop::Error("bad flag syntax: ---version".into()))
        );
        assert_eq!(
            run(&["--root"]).0,
            Err(Stop::Error("flag needs an argument: -root".into()))
        );
        assert_eq!(
            run(&["--bogus"]).0,
            Err(Stop::Error("flag provided but not defined: -bogus".into()))
        );
    }

    #[test]
    fn pflag_rules() {
        let specs = [("root", false), ("offline", true)];
        let run = |a: &[&str]| parse_pflag(&strings(a), &specs, &mut |_, _| Ok(()));
        assert_eq!(
            run(&["c.ign", "--root", "x", "--offline"]),
            Ok(strings(&["c.ign"]))
        );
        assert_eq!(run(&["--", "--root", ""]), Ok(strings(&["--root", ""])));
        assert_eq!(run(&["-h"]), Err(Stop::Help));
        assert_eq!(
            run(&["-version"]),
            Err(Stop::Error(
                "unknown shorthand flag: 'v' in -version".into()
            ))
        );
        assert_eq!(
            run(&["--offline=yes"]),
            Err(Stop::Error(
                "invalid argument \"yes\" for \"--offline\" flag: strconv.ParseBool: parsing \"yes\": invalid syntax".into()
            ))
        );
        assert_eq!(
            run(&["--bogus"]),
            Err(Stop::Error("unknown flag: --bogus".into()))
        );
        assert_eq!(
            run(&["--root"]),
            Err(Stop::Error("flag needs an argument: --root".into()))
        );
    }

    #[test]
    fn go_durations() {
        let d = |s: &str| parse_go_duration(s).map(|d| d.as_millis());
        assert_eq!(d("2m0s"), Some(120_000));
        assert_eq!(d("90s"), Some(90_000));
        assert_eq!(d("1h30m"), Some(5_400_000));
        assert_eq!(d("1.5s"), Some(1_500));
        assert_eq!(d(".5s"), Some(500));
        assert_eq!(d("0"), Some(0));
        assert_eq!(d("-5s"), Some(0));
        for bad in ["", "5", "abc", "1x", ".s", "1..2s", "s"] {
            assert_eq!(d(bad), None, "{bad}");
        }
    }
}
