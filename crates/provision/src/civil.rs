//! Unix time as a UTC calendar date and time of day, for the timestamps the provisioner
//! writes (its record of a run, SigV4's request dates). No time zones: UTC only.

/// A moment in UTC, to the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Utc {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl Utc {
    /// The moment `secs` seconds after 1970-01-01T00:00:00Z (before it when negative).
    pub(crate) fn from_unix(secs: i64) -> Utc {
        let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400) as u32);
        let (year, month, day) = civil_from_days(days);
        Utc {
            year,
            month,
            day,
            hour: rem / 3600,
            minute: rem % 3600 / 60,
            second: rem % 60,
        }
    }

    /// The current time (the epoch when the clock is before it).
    pub(crate) fn now() -> Utc {
        let secs = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        Utc::from_unix(secs)
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (RFC 3339).
    pub(crate) fn rfc3339(&self) -> String {
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// The (year, month, day) of the day `days` after 1970-01-01: Howard Hinnant's
/// `civil_from_days`, which counts in 400-year eras of 146,097 days from 0000-03-01 (so
/// that the leap day ends a year).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m as u32, d as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates() {
        let ymd = |s| {
            let t = Utc::from_unix(s);
            (t.year, t.month, t.day, t.hour, t.minute, t.second)
        };
        assert_eq!(ymd(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(ymd(1369353600), (2013, 5, 24, 0, 0, 0));
        assert_eq!(ymd(951_782_400 + 3661), (2000, 2, 29, 1, 1, 1));
        assert_eq!(ymd(-1), (1969, 12, 31, 23, 59, 59));
        assert_eq!(ymd(4_107_542_400), (2100, 3, 1, 0, 0, 0));
        assert_eq!(Utc::from_unix(86_399).rfc3339(), "1970-01-01T23:59:59Z");
    }
}
