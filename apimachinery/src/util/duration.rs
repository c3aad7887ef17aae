//! Durations for humans. [`parse_duration`] reads a command-line flag's duration
//! as Go's `time.ParseDuration` does. Ages mirror apimachinery's
//! [`pkg/util/duration/duration.go`]
//! (`HumanDuration`), which every printer's `AGE` column goes through
//! (`translateTimestampSince` in kubernetes' `pkg/printers/internalversion`).
//!
//! About two or three significant figures: seconds below two minutes, minutes and
//! seconds below ten minutes, minutes below three hours, hours and minutes below
//! eight hours, hours below two days, days and hours below eight days, days below
//! two years, years and days below eight years, then years. A little clock skew
//! (up to a second into the future) reads as `0s`; more reads as `<invalid>`.

//!
//! [`pkg/util/duration/duration.go`]: https://github.com/kubernetes/apimachinery/blob/v0.36.0/pkg/util/duration/duration.go

use k8s_openapi::jiff::SignedDuration;

const SECOND: i128 = 1_000_000_000;
const MINUTE: i128 = 60 * SECOND;
const HOUR: i128 = 60 * MINUTE;

/// Mirrors `duration.HumanDuration`. Every division truncates toward zero, as
/// Go's integer conversions do.
pub fn human_duration(d: SignedDuration) -> String {
    let nanos = d.as_nanos();
    let seconds = nanos / SECOND;
    if seconds < -1 {
        return "<invalid>".to_string();
    } else if seconds < 0 {
        return "0s".to_string();
    } else if seconds < 60 * 2 {
        return format!("{seconds}s");
    }
    let minutes = nanos / MINUTE;
    if minutes < 10 {
        let s = (nanos / SECOND) % 60;
        if s == 0 {
            return format!("{minutes}m");
        }
        return format!("{minutes}m{s}s");
    } else if minutes < 60 * 3 {
        return format!("{minutes}m");
    }
    let hours = nanos / HOUR;
    if hours < 8 {
        let m = (nanos / MINUTE) % 60;
        if m == 0 {
            return format!("{hours}h");
        }
        return format!("{hours}h{m}m");
    } else if hours < 48 {
        return format!("{hours}h");
    } else if hours < 24 * 8 {
        let h = hours % 24;
        if h == 0 {
            return format!("{}d", hours / 24);
        }
        return format!("{}d{h}h", hours / 24);
    } else if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    } else if hours < 24 * 365 * 8 {
        let dy = (hours / 24) % 365;
        if dy == 0 {
            return format!("{}y", hours / 24 / 365);
        }
        return format!("{}y{dy}d", hours / 24 / 365);
    }
    format!("{}y", hours / 24 / 365)
}

/// A duration as Go's `time.ParseDuration` reads the ones command-line flags
/// use (kube-apiserver's `--etcd-compaction-interval=5m`, a tool's `--idle 40s`): numbers
/// with `ms`, `s`, `m` or `h`, summed (`32s`, `500ms`, `1h30m`); a bare number
/// is seconds.
pub fn parse_duration(text: &str) -> Result<std::time::Duration, String> {
    let text = text.trim();
    let bad_unit = |unit: &str| {
        format!(
            "{text:?} has an unknown unit {unit:?}: use ms, s, m or h (like 32s)"
        )
    };
    let not_a_duration = || {
        format!(
            "{text:?} is not a duration: expected a whole number and a unit, like 32s"
        )
    };
    if !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit()) {
        return text
            .parse()
            .map(std::time::Duration::from_secs)
            .map_err(|_| not_a_duration());
    }
    let mut total = std::time::Duration::ZERO;
    let mut rest = text;
    if rest.is_empty() {
        return Err(not_a_duration());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let (number, tail) = rest.split_at(digits);
        let number: u64 = number.parse().map_err(|_| not_a_duration())?;
        let unit_len = tail
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(tail.len());
        let (unit, next) = tail.split_at(unit_len);
        let part = match unit {
            "ms" => std::time::Duration::from_millis(number),
            "s" => std::time::Duration::from_secs(number),
            "m" => std::time::Duration::from_secs(number.saturating_mul(60)),
            "h" => std::time::Duration::from_secs(number.saturating_mul(3600)),
            _ => return Err(bad_unit(unit)),
        };
        total = total.saturating_add(part);
        rest = next;
    }
    Ok(total)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: i64) -> SignedDuration {
        SignedDuration::from_secs(s)
    }

    #[test]
    fn human_duration_boundaries_match_upstream() {
        let cases: &[(SignedDuration, &str)] = &[
            (SignedDuration::from_millis(-2500), "<invalid>"),
            (secs(-2), "<invalid>"),
            (SignedDuration::from_millis(-1999), "0s"),
            (secs(-1), "0s"),
            (SignedDuration::from_millis(-500), "0s"),
            (secs(0), "0s"),
            (SignedDuration::from_millis(1999), "1s"),
            (secs(59), "59s"),
            (secs(60), "60s"),
            (secs(119), "119s"),
            (secs(120), "2m"),
            (secs(121), "2m1s"),
            (secs(9 * 60 + 59), "9m59s"),
            (secs(10 * 60), "10m"),
            (secs(10 * 60 + 59), "10m"),
            (secs(3 * 3600 - 1), "179m"),
            (secs(3 * 3600), "3h"),
            (secs(3 * 3600 + 60), "3h1m"),
            (secs(8 * 3600 - 1), "7h59m"),
            (secs(8 * 3600), "8h"),
            (secs(48 * 3600 - 1), "47h"),
            (secs(48 * 3600), "2d"),
            (secs(49 * 3600), "2d1h"),
            (secs(8 * 24 * 3600 - 1), "7d23h"),
            (secs(8 * 24 * 3600), "8d"),
            (secs(2 * 365 * 24 * 3600 - 1), "729d"),
            (secs(2 * 365 * 24 * 3600), "2y"),
            (secs(2 * 365 * 24 * 3600 + 24 * 3600), "2y1d"),
            (secs(8 * 365 * 24 * 3600 - 1), "7y364d"),
            (secs(8 * 365 * 24 * 3600), "8y"),
            (secs(100 * 365 * 24 * 3600), "100y"),
        ];
        for (d, want) in cases {
            assert_eq!(human_duration(*d), *want, "{d:?}");
        }
    }
}
