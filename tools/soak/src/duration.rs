//! Go-style durations on the command line (`30m`, `3m`, `40s`, `1m30s`,
//! `500ms`), as kube-apiserver's flags take them (`time.ParseDuration`, whole
//! numbers only), and back to text for the report.

use std::time::Duration;

/// Parses `30m`, `1h30m`, `40s`, `500ms`; a bare number is seconds.
pub use apimachinery::util::duration::parse_duration;

/// `1h02m03s`, `5m00s`, `40s`, `0.250s`: for the sample lines and the summary.
pub fn format_duration(duration: Duration) -> String {
    let seconds = duration.as_secs();
    let (h, m, s) = (seconds / 3600, seconds / 60 % 60, seconds % 60);
    if h > 0 {
        format!("{h}h{m:02}m{s:02}s")
    } else if m > 0 {
        format!("{m}m{s:02}s")
    } else if duration.subsec_millis() > 0 && seconds < 10 {
        format!("{:.3}s", duration.as_secs_f64())
    } else {
        format!("{s}s")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_for_the_report() {
        assert_eq!(format_duration(Duration::from_secs(0)), "0s");
        assert_eq!(format_duration(Duration::from_secs(40)), "40s");
        assert_eq!(format_duration(Duration::from_secs(300)), "5m00s");
        assert_eq!(format_duration(Duration::from_secs(3723)), "1h02m03s");
        assert_eq!(format_duration(Duration::from_millis(250)), "0.250s");
    }
}
