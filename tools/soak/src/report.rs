//! The samples printed while the soak runs, and the summary at its end: a
//! markdown table of figures against the soak's targets, and the server's memory
//! and CPU over time. [`Summary::all_met`] decides the exit code.
//!
//! The targets (issue #32):
//! - no unexpected relist, by the informer or by the server's watch cache;
//! - no watch ended before its timeout;
//! - the server's RSS flat after the first compaction: at the end at most
//!   `rss_tolerance_percent` above the first sample after that compaction;
//! - the informer's cache equal to a fresh LIST (names and resourceVersions).
//!
//! And two the soak adds because they cost nothing to check: no failed write,
//! and every open watch received one event per pod it started with plus one per
//! acknowledged write.

use std::fmt::Write as _;
use std::time::Duration;

use crate::duration::format_duration;
use crate::watches::EndedWatch;

/// One sample, printed as one line every `--sample`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sample {
    /// Since the load started.
    pub elapsed: Duration,
    /// The server's `VmRSS`.
    pub rss_kib: Option<u64>,
    /// The server's CPU seconds (user + system) since it started.
    pub cpu_seconds: Option<f64>,
    /// Pods in the informer's cache.
    pub informer_pods: usize,
    /// The informer's lists beyond the first.
    pub informer_relists: u64,
    /// The watch cache's relists against etcd (from the server's log).
    pub cache_relists: u64,
    /// Raw watches still open.
    pub watches_open: usize,
    /// Raw watches that ended.
    pub watches_ended: usize,
    /// Events received by all raw watches.
    pub events: u64,
    /// Writes acknowledged.
    pub writes: u64,
    /// Compactions the server logged.
    pub compactions: u64,
    /// This process's CPU seconds: when it nears the cores the machine has,
    /// the soak, not the server, is the limit (watch-fanout's "tool CPU").
    pub soak_cpu_seconds: Option<f64>,
    /// The machine's one-minute load average (`/proc/loadavg`).
    pub load_average: Option<f64>,
}

/// The one-minute load average, from `/proc/loadavg`.
pub fn load_average() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn mib(kib: Option<u64>) -> String {
    kib.map_or("-".to_string(), |kib| {
        format!("{:.1} MiB", kib as f64 / 1024.0)
    })
}

fn seconds(cpu: Option<f64>) -> String {
    cpu.map_or("-".to_string(), |s| format!("{s:.2} s"))
}

impl Sample {
    /// The sample's line.
    pub fn line(&self) -> String {
        format!(
            "[{:>8}] server RSS {} CPU {} | informer {} pods, {} relists | cache relists {} | \
             watches {} open, {} ended | events {} | writes {} | compactions {} | \
             soak CPU {} | load {}",
            format_duration(self.elapsed),
            mib(self.rss_kib),
            seconds(self.cpu_seconds),
            self.informer_pods,
            self.informer_relists,
            self.cache_relists,
            self.watches_open,
            self.watches_ended,
            self.events,
            self.writes,
            self.compactions,
            seconds(self.soak_cpu_seconds),
            self.load_average
                .map_or("-".to_string(), |load| format!("{load:.2}")),
        )
    }
}

/// How the final check of the informer's cache against a fresh LIST went.
#[derive(Clone, Debug, PartialEq)]
pub enum CacheCheck {
    /// Equal, with this many pods.
    Equal(usize),
    /// Still different at the end of the wait: where.
    Differ(String),
    /// The LIST could not be made.
    Failed(String),
}

/// Everything the summary is made of.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    /// The samples, in order.
    pub samples: Vec<Sample>,
    /// When the server first compacted, since the load started.
    pub first_compaction: Option<Duration>,
    /// Compactions logged.
    pub compactions: u64,
    /// The informer's lists (its ListerWatcher's count).
    pub informer_lists: u64,
    /// The informer's watches opened.
    pub informer_watches: u64,
    /// Errors the informer's Reflector reported, and the first few.
    pub informer_errors: (u64, Vec<String>),
    /// LIST requests for pods the server answered, less the soak's own
    /// (`apiserver_request_total{verb="LIST",resource="pods"}`).
    pub server_lists_by_informer: Option<u64>,
    /// The watch cache's relists against etcd (server log), and when.
    pub cache_relists: Vec<Duration>,
    /// Raw watches opened.
    pub watchers: usize,
    /// Raw watches that ended before their timeout.
    pub ended: Vec<EndedWatch>,
    /// Events received by all raw watches.
    pub events: u64,
    /// Bookmarks received by all raw watches.
    pub bookmarks: u64,
    /// The fewest and most events one open raw watch received.
    pub events_per_open_watch: Option<(u64, u64)>,
    /// Pods when the watches opened plus writes acknowledged: what each watch
    /// should have received.
    pub expected_events_per_watch: u64,
    /// Bursts run.
    pub bursts: u64,
    /// Writes acknowledged.
    pub writes_acked: u64,
    /// Writes that failed, and the first few messages.
    pub writes_failed: (u64, Vec<String>),
    /// The final cache check.
    pub cache_check: Option<CacheCheck>,
    /// How far the RSS may end above its level after the first compaction.
    pub rss_tolerance_percent: f64,
    /// Watchers the server closed for being slow (`apiserver_terminated_watchers_total`).
    pub terminated_slow: Option<u64>,
    /// ERROR events the server wrote to watch streams (`apiserver_watch_error_events_total`).
    pub watch_error_events: Option<u64>,
    /// WARN and ERROR lines in the server's log, and the first few.
    pub server_warnings: (u64, Vec<String>),
}

/// Whether a row is a target and met.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// A target, met.
    Met,
    /// A target, missed.
    Missed,
    /// A figure without a target.
    Info,
}

/// One row of the summary table.
#[derive(Clone, Debug)]
pub struct Row {
    figure: String,
    value: String,
    target: String,
    verdict: Verdict,
}

fn row(figure: &str, value: String, target: &str, verdict: Verdict) -> Row {
    Row {
        figure: figure.to_string(),
        value,
        target: target.to_string(),
        verdict,
    }
}

fn met(ok: bool) -> Verdict {
    if ok { Verdict::Met } else { Verdict::Missed }
}

/// The server's RSS at the points the RSS target looks at: (when, KiB).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RssFigures {
    /// The first sample.
    pub start: Option<(Duration, u64)>,
    /// The first sample after the first compaction: the baseline.
    pub after_compaction: Option<(Duration, u64)>,
    /// The most from the baseline on.
    pub max_after: Option<(Duration, u64)>,
    /// The last sample.
    pub end: Option<(Duration, u64)>,
}

impl RssFigures {
    /// Reads them off the samples.
    pub fn of(samples: &[Sample], first_compaction: Option<Duration>) -> RssFigures {
        let with_rss =
            || samples.iter().filter_map(|s| Some((s.elapsed, s.rss_kib?)));
        let after_compaction = first_compaction
            .and_then(|at| with_rss().find(|(elapsed, _)| *elapsed > at));
        let max_after = after_compaction.and_then(|(from, _)| {
            with_rss()
                .filter(|(elapsed, _)| *elapsed >= from)
                .max_by_key(|(_, kib)| *kib)
        });
        RssFigures {
            start: with_rss().next(),
            after_compaction,
            max_after,
            end: with_rss().next_back(),
        }
    }

    /// Whether the RSS stayed flat: the end at most `tolerance_percent` above the
    /// baseline. `None` without a baseline (no compaction seen in time).
    pub fn flat(&self, tolerance_percent: f64) -> Option<bool> {
        let (_, baseline) = self.after_compaction?;
        let (_, end) = self.end?;
        Some(end as f64 <= baseline as f64 * (1.0 + tolerance_percent / 100.0))
    }
}

/// When watches ended, grouped by the whole second: `9s ×747, 51s ×3`.
pub fn ends_by_second(ended: &[EndedWatch]) -> String {
    let mut by_second = std::collections::BTreeMap::<u64, usize>::new();
    for end in ended {
        *by_second.entry(end.at.as_secs()).or_default() += 1;
    }
    let groups: Vec<String> = by_second
        .iter()
        .take(10)
        .map(|(second, count)| {
            format!("{} ×{count}", format_duration(Duration::from_secs(*second)))
        })
        .collect();
    let more = if by_second.len() > 10 { ", …" } else { "" };
    format!("{}{more}", groups.join(", "))
}

fn at(point: Option<(Duration, u64)>) -> String {
    point.map_or("-".to_string(), |(when, kib)| {
        format!("{} at {}", mib(Some(kib)), format_duration(when))
    })
}

/// The summary: rows, and whether every target was met.
#[derive(Clone, Debug)]
pub struct Summary {
    /// The rows, targets first.
    pub rows: Vec<Row>,
}

impl Summary {
    /// Builds the rows from an outcome.
    pub fn of(outcome: &Outcome) -> Summary {
        let mut rows = Vec::new();
        let relists = outcome.informer_lists.saturating_sub(1);
        rows.push(row(
            "unexpected relists: informer (its ListerWatcher's LIST count − 1)",
            format!(
                "{relists} ({} LISTs, {} watches opened)",
                outcome.informer_lists, outcome.informer_watches
            ),
            "0",
            met(outcome.informer_lists == 1),
        ));
        let cache_relists = outcome.cache_relists.len();
        let when: Vec<String> = outcome
            .cache_relists
            .iter()
            .take(5)
            .map(|d| format_duration(*d))
            .collect();
        rows.push(row(
            "unexpected relists: server watch cache against etcd (server log: `cacher/pods` list-and-watch rounds − 1)",
            if when.is_empty() {
                cache_relists.to_string()
            } else {
                format!("{cache_relists} (at {})", when.join(", "))
            },
            "0",
            met(cache_relists == 0),
        ));
        let ended = outcome.ended.len();
        rows.push(row(
            "watches ended before their timeout",
            if ended == 0 {
                format!("0 of {}", outcome.watchers)
            } else {
                format!(
                    "{ended} of {} (when: {})",
                    outcome.watchers,
                    ends_by_second(&outcome.ended)
                )
            },
            "0",
            met(ended == 0),
        ));
        let rss = RssFigures::of(&outcome.samples, outcome.first_compaction);
        let tolerance = outcome.rss_tolerance_percent;
        let (rss_value, rss_verdict) =
            match (rss.flat(tolerance), rss.after_compaction, rss.end) {
                (Some(flat), Some((_, base)), Some((_, end))) => (
                    format!(
                        "{} → {} ({:+.1} %)",
                        mib(Some(base)),
                        mib(Some(end)),
                        100.0 * (end as f64 - base as f64) / base as f64
                    ),
                    met(flat),
                ),
                _ => ("no sample after a compaction".to_string(), Verdict::Missed),
            };
        rows.push(row(
            "server RSS flat after the first compaction (first sample after it → end)",
            rss_value,
            &format!("end ≤ +{tolerance:.0} %"),
            rss_verdict,
        ));
        let (cache_value, cache_verdict) = match &outcome.cache_check {
            Some(CacheCheck::Equal(pods)) => {
                (format!("equal ({pods} pods)"), Verdict::Met)
            }
            Some(CacheCheck::Differ(how)) => {
                (format!("differs: {how}"), Verdict::Missed)
            }
            Some(CacheCheck::Failed(why)) => {
                (format!("not checked: {why}"), Verdict::Missed)
            }
            None => ("not checked".to_string(), Verdict::Missed),
        };
        rows.push(row(
            "informer cache = fresh LIST (names + resourceVersions)",
            cache_value,
            "equal",
            cache_verdict,
        ));
        let (failed, _) = &outcome.writes_failed;
        rows.push(row(
            "writes failed",
            format!(
                "{failed} ({} acknowledged in {} bursts)",
                outcome.writes_acked, outcome.bursts
            ),
            "0",
            met(*failed == 0),
        ));
        let expected = outcome.expected_events_per_watch;
        let (events_value, events_verdict) = match outcome.events_per_open_watch {
            Some((lo, hi)) => (
                if lo == hi {
                    format!("{lo} each")
                } else {
                    format!("{lo} to {hi}")
                },
                met(lo == expected && hi == expected),
            ),
            None => ("no open watch".to_string(), Verdict::Missed),
        };
        rows.push(row(
            "events per open watch (ADDED/MODIFIED/DELETED)",
            events_value,
            &format!("{expected} each"),
            events_verdict,
        ));
        rows.push(row(
            "events received (all watches)",
            format!("{} (+ {} bookmarks)", outcome.events, outcome.bookmarks),
            "",
            Verdict::Info,
        ));
        rows.push(row(
            "server LISTs of pods not made by the soak (`apiserver_request_total`)",
            outcome
                .server_lists_by_informer
                .map_or("-".to_string(), |n| n.to_string()),
            "",
            Verdict::Info,
        ));
        rows.push(row("server RSS at start", at(rss.start), "", Verdict::Info));
        rows.push(row(
            &format!(
                "server RSS after the first compaction ({})",
                outcome
                    .first_compaction
                    .map_or("none".to_string(), format_duration)
            ),
            at(rss.after_compaction),
            "",
            Verdict::Info,
        ));
        rows.push(row(
            "server RSS max after it",
            at(rss.max_after),
            "",
            Verdict::Info,
        ));
        rows.push(row("server RSS at end", at(rss.end), "", Verdict::Info));
        let cpu_at = |s: Option<&Sample>| {
            s.map_or("-".to_string(), |s| {
                format!(
                    "{} at {}",
                    seconds(s.cpu_seconds),
                    format_duration(s.elapsed)
                )
            })
        };
        let baseline = rss.after_compaction.and_then(|(when, _)| {
            outcome.samples.iter().find(|s| s.elapsed == when)
        });
        rows.push(row(
            "server CPU (cumulative): start / after first compaction / end",
            format!(
                "{} / {} / {}",
                cpu_at(outcome.samples.first()),
                cpu_at(baseline),
                cpu_at(outcome.samples.last())
            ),
            "",
            Verdict::Info,
        ));
        rows.push(row(
            "compactions",
            outcome.compactions.to_string(),
            "",
            Verdict::Info,
        ));
        rows.push(row(
            "watchers closed as slow / ERROR events written (server `/metrics`)",
            format!(
                "{} / {}",
                outcome
                    .terminated_slow
                    .map_or("-".to_string(), |n| n.to_string()),
                outcome
                    .watch_error_events
                    .map_or("-".to_string(), |n| n.to_string())
            ),
            "",
            Verdict::Info,
        ));
        rows.push(row(
            "informer Reflector errors",
            outcome.informer_errors.0.to_string(),
            "",
            Verdict::Info,
        ));
        rows.push(row(
            "server log WARN/ERROR lines",
            outcome.server_warnings.0.to_string(),
            "",
            Verdict::Info,
        ));
        Summary { rows }
    }

    /// Whether every target was met.
    pub fn all_met(&self) -> bool {
        self.rows.iter().all(|row| row.verdict != Verdict::Missed)
    }

    /// The markdown table.
    pub fn table(&self) -> String {
        let mut out = String::from(
            "| figure | value | target | result |\n|---|---|---|---|\n",
        );
        for row in &self.rows {
            let result = match row.verdict {
                Verdict::Met => "met",
                Verdict::Missed => "**MISSED**",
                Verdict::Info => "",
            };
            let _ = writeln!(
                out,
                "| {} | {} | {} | {result} |",
                row.figure,
                row.value.replace('|', "\\|"),
                row.target
            );
        }
        out
    }
}

/// The server's memory and CPU over time: the first sample, the first of each
/// `step`, the first after the first compaction, and the last; with the CPU used
/// between rows as a share of one core.
pub fn over_time(
    samples: &[Sample],
    first_compaction: Option<Duration>,
    step: Duration,
) -> String {
    let mut out = String::from(
        "| elapsed | server RSS | server CPU (cumulative) | server CPU since previous row \
         (% of a core) | soak CPU since previous row | informer pods | events | note |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    let step = step.max(Duration::from_secs(1));
    let baseline = RssFigures::of(samples, first_compaction)
        .after_compaction
        .map(|(when, _)| when);
    let mut previous: Option<&Sample> = None;
    let mut last_bucket = None;
    for (i, sample) in samples.iter().enumerate() {
        let bucket = sample.elapsed.as_secs() / step.as_secs();
        let is_last = i + 1 == samples.len();
        let is_baseline = baseline == Some(sample.elapsed);
        if !(last_bucket != Some(bucket) || is_last || is_baseline) {
            continue;
        }
        last_bucket = Some(bucket);
        let share = |cpu: fn(&Sample) -> Option<f64>| match previous {
            Some(p) if sample.elapsed > p.elapsed => match (cpu(p), cpu(sample)) {
                (Some(before), Some(now)) => format!(
                    "{:.0} %",
                    100.0 * (now - before)
                        / (sample.elapsed - p.elapsed).as_secs_f64()
                ),
                _ => "-".to_string(),
            },
            _ => "-".to_string(),
        };
        let server_share = share(|s| s.cpu_seconds);
        let soak_share = share(|s| s.soak_cpu_seconds);
        let note = if i == 0 {
            "start"
        } else if is_baseline {
            "first sample after the first compaction"
        } else if is_last {
            "end"
        } else {
            ""
        };
        let _ = writeln!(
            out,
            "| {} | {} | {} | {server_share} | {soak_share} | {} | {} | {note} |",
            format_duration(sample.elapsed),
            mib(sample.rss_kib),
            seconds(sample.cpu_seconds),
            sample.informer_pods,
            sample.events,
        );
        previous = Some(sample);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(minute: u64, rss_mib: u64) -> Sample {
        Sample {
            elapsed: Duration::from_secs(60 * minute),
            rss_kib: Some(rss_mib * 1024),
            cpu_seconds: Some(minute as f64),
            ..Sample::default()
        }
    }

    fn good() -> Outcome {
        Outcome {
            samples: (0..=30)
                .map(|m| sample(m, if m < 10 { 40 + m } else { 60 }))
                .collect(),
            first_compaction: Some(Duration::from_secs(600)),
            compactions: 4,
            informer_lists: 1,
            informer_watches: 5,
            watchers: 1000,
            events_per_open_watch: Some((5000, 5000)),
            expected_events_per_watch: 5000,
            writes_acked: 5000,
            cache_check: Some(CacheCheck::Equal(170)),
            rss_tolerance_percent: 10.0,
            ..Outcome::default()
        }
    }

    #[test]
    fn the_baseline_is_the_first_sample_after_the_first_compaction() {
        let outcome = good();
        let rss = RssFigures::of(&outcome.samples, outcome.first_compaction);
        assert_eq!(rss.start, Some((Duration::ZERO, 40 * 1024)));
        assert_eq!(
            rss.after_compaction,
            Some((Duration::from_secs(660), 60 * 1024))
        );
        assert_eq!(rss.end, Some((Duration::from_secs(1800), 60 * 1024)));
        assert_eq!(rss.flat(10.0), Some(true));
        assert_eq!(RssFigures::of(&outcome.samples, None).flat(10.0), None);
    }

    #[test]
    fn ends_are_grouped_by_second() {
        let end = |ms: u64| EndedWatch {
            index: 0,
            at: Duration::from_millis(ms),
            reason: "EOF".into(),
            events: 0,
        };
        let ended = [end(9_700), end(9_800), end(51_000)];
        assert_eq!(ends_by_second(&ended), "9s ×2, 51s ×1");
    }

    #[test]
    fn a_clean_run_meets_every_target() {
        let summary = Summary::of(&good());
        assert!(summary.all_met(), "{}", summary.table());
        assert!(
            summary
                .table()
                .starts_with("| figure | value | target | result |")
        );
    }

    #[test]
    fn each_miss_fails_the_run() {
        let misses: Vec<fn(&mut Outcome)> = vec![
            |o| o.informer_lists = 2,
            |o| o.cache_relists = vec![Duration::from_secs(100)],
            |o| {
                o.ended = vec![EndedWatch {
                    index: 3,
                    at: Duration::from_secs(10),
                    reason: "EOF".into(),
                    events: 0,
                }]
            },
            |o| o.samples.last_mut().unwrap().rss_kib = Some(70 * 1024),
            |o| o.first_compaction = None,
            |o| o.cache_check = Some(CacheCheck::Differ("x".into())),
            |o| o.cache_check = None,
            |o| o.writes_failed = (1, vec!["create: 500".into()]),
            |o| o.events_per_open_watch = Some((4999, 5000)),
        ];
        for (i, miss) in misses.iter().enumerate() {
            let mut outcome = good();
            miss(&mut outcome);
            assert!(!Summary::of(&outcome).all_met(), "miss {i} went unnoticed");
        }
    }

    #[test]
    fn over_time_keeps_one_row_per_step_and_the_marked_ones() {
        let outcome = good();
        let table = over_time(
            &outcome.samples,
            outcome.first_compaction,
            Duration::from_secs(300),
        );
        // A header, a rule, rows at 0, 5, 10, 11 (baseline), 15, 20, 25, 30 min.
        assert_eq!(table.lines().count(), 2 + 8, "{table}");
        assert!(table.contains("| 11m00s | 60.0 MiB |"), "{table}");
        assert!(table.contains("first sample after the first compaction"));
        assert!(table.lines().last().unwrap().ends_with("| end |"));
    }
}
