//! Reading systemd unit files the way the upstream validator does, to report malformed
//! contents and to tell whether a unit has an `[Install]` section.

/// One `Name=Value` line of a unit, with the section it stands in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitOption {
    pub section: String,
    pub name: String,
    pub value: String,
}

/// Lines longer than this are refused, as upstream's reader does.
const MAX_LINE: usize = 4096;

/// Parses unit contents. Text before the first section header is ignored, as upstream does.
pub fn parse(contents: &str) -> Result<Vec<UnitOption>, String> {
    if contents.lines().any(|l| l.len() >= MAX_LINE) {
        return Err("line too long (max 2048 bytes)".into());
    }
    let b = contents.as_bytes();
    let mut i = 0;
    let mut section: Option<String> = None;
    let mut out = Vec::new();
    let skip_comment = |mut i: usize| -> usize {
        // A comment runs to the end of the line, continued while a line ends in a backslash.
        loop {
            let end = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            let line = contents[i..end].trim_end();
            i = (end + 1).min(b.len());
            if !line.ends_with('\\') || end >= b.len() {
                return i;
            }
        }
    };
    while i < b.len() {
        let c = b[i];
        if c == b'[' {
            let Some(close) = b[i + 1..].iter().position(|&c| c == b']') else {
                return Err("unable to find end of section".into());
            };
            let name = &contents[i + 1..i + 1 + close];
            let after = i + 2 + close;
            let eol = b[after..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| after + p);
            let garbage = contents[after..eol].trim();
            if !garbage.is_empty() {
                return Err(format!("found garbage after section name : {garbage:?}"));
            }
            section = Some(name.to_string());
            i = (eol + 1).min(b.len());
            continue;
        }
        if c == b'#' || c == b';' {
            i = skip_comment(i);
            continue;
        }
        let Some(sec) = &section else {
            i += 1;
            continue;
        };
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        // An option: a name up to '=', then a value to the end of the line, continued while
        // the line ends in a backslash.
        let Some(eq) = b[i..]
            .iter()
            .position(|&c| c == b'=' || c == b'\n' || c == b'\r')
        else {
            return Err("EOF".into());
        };
        if b[i + eq] != b'=' {
            return Err("unexpected newline encountered while parsing option name".into());
        }
        let name = contents[i..i + eq].trim().to_string();
        i += eq + 1;
        let mut value = String::new();
        loop {
            let eol = b[i..]
                .iter()
                .position(|&c| c == b'\n')
                .map_or(b.len(), |p| i + p);
            let line = contents[i..eol].trim_end_matches('\r');
            i = (eol + 1).min(b.len());
            if line.ends_with('\\') && eol < b.len() {
                value.push_str(line);
                value.push('\n');
                let next_eol = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |p| i + p);
                if contents[i..next_eol].trim().is_empty() {
                    break;
                }
            } else {
                value.push_str(line);
                break;
            }
        }
        out.push(UnitOption {
            section: sec.clone(),
            name,
            value: value.trim().to_string(),
        });
    }
    Ok(out)
}

/// Whether parsed options include one in `[Install]`.
pub fn has_install(options: &[UnitOption]) -> bool {
    options.iter().any(|o| o.section == "Install")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sections_and_options() {
        let o = parse("junk before\n[Unit]\nDescription=x \\\n  y\n# c\n[Install]\nWantedBy=multi-user.target\n").unwrap();
        assert_eq!(o.len(), 2);
        assert_eq!(o[0].section, "Unit");
        assert_eq!(o[0].value, "x \\\n  y");
        assert!(has_install(&o));
        assert!(!has_install(&parse("[Install]\n").unwrap()));
    }

    #[test]
    fn reports_upstream_errors() {
        assert_eq!(
            parse("[Unit\nDescription=x\n").unwrap_err(),
            "unable to find end of section"
        );
        assert_eq!(
            parse("[Unit]\nNoEquals\n").unwrap_err(),
            "unexpected newline encountered while parsing option name"
        );
        assert!(
            parse("[Unit] x\n")
                .unwrap_err()
                .starts_with("found garbage")
        );
        assert!(parse("Description=outside-section\n").is_ok());
    }
}
