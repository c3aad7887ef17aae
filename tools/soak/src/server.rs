//! The server under test: `mini-apiserver` as a child process (so that its
//! memory and CPU are read from `/proc/PID`), its log, and its `/metrics`.
//!
//! Its log (stdout and stderr) goes to a file and is read as it comes, for the
//! figures no metric exports:
//!
//! - **compactions**: the compactor's `etcd: compacted rev` (debug level of
//!   `stage5_storage::etcd3::compact`, mirroring `compact.go`'s log line);
//! - **watch-cache relists**: every list-and-watch round of the Cacher's
//!   Reflector (`listing and watching reflector=cacher/pods`, debug level of
//!   `stage3_reflector::reflector`): the first fills the cache, each later one
//!   is a relist against etcd, after which the Cacher closes every watcher
//!   (`terminateAllWatchers`);
//! - **warnings and errors**, counted, the first few kept.
//!
//! # Recovery
//! [`ServerProcess::stop`] sends SIGINT, waits 10 s and then kills; dropping it
//! kills the process at once, so an early return never leaves it running.

use std::fs::File;
use std::io::{BufRead, BufReader, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

/// The log filter given to the server: its own info lines, plus the two debug
/// lines this tool counts (see the module docs).
pub const LOG_FILTER: &str =
    "info,stage3_reflector::reflector=debug,stage5_storage::etcd3::compact=debug";

/// Warning and error lines kept for the report.
const KEPT_LINES: usize = 8;

/// What the server's log has shown so far.
#[derive(Debug, Default)]
pub struct ServerLog {
    /// Lines read.
    pub lines: AtomicU64,
    /// List-and-watch rounds of the `cacher/pods` Reflector (the first is the
    /// initial fill).
    pub cache_list_rounds: AtomicU64,
    /// When each of those rounds began (as read).
    pub cache_list_times: Mutex<Vec<Instant>>,
    /// Compactions done.
    pub compactions: AtomicU64,
    /// When the first compaction was logged.
    pub first_compaction: Mutex<Option<Instant>>,
    /// `WARN` and `ERROR` lines.
    pub warnings: AtomicU64,
    /// The first few of them.
    pub warning_samples: Mutex<Vec<String>>,
}

impl ServerLog {
    /// Relists of the watch cache against etcd: rounds after the first.
    pub fn cache_relists(&self) -> u64 {
        self.cache_list_rounds
            .load(Ordering::Relaxed)
            .saturating_sub(1)
    }

    fn read(&self, raw: &str) {
        let line = strip_ansi(raw);
        self.lines.fetch_add(1, Ordering::Relaxed);
        match classify(&line) {
            LogLine::CacheListRound => {
                self.cache_list_rounds.fetch_add(1, Ordering::Relaxed);
                self.cache_list_times.lock().push(Instant::now());
            }
            LogLine::Compacted => {
                self.compactions.fetch_add(1, Ordering::Relaxed);
                self.first_compaction
                    .lock()
                    .get_or_insert_with(Instant::now);
            }
            LogLine::Warning => {
                self.warnings.fetch_add(1, Ordering::Relaxed);
                let mut samples = self.warning_samples.lock();
                if samples.len() < KEPT_LINES {
                    samples.push(line.chars().take(400).collect());
                }
            }
            LogLine::Other => {}
        }
    }
}

/// What one log line means to the soak.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogLine {
    /// The `cacher/pods` Reflector starts a list-and-watch round.
    CacheListRound,
    /// The compactor compacted.
    Compacted,
    /// A `WARN` or `ERROR` line.
    Warning,
    /// Anything else.
    Other,
}

/// Reads one line of the server's log (ANSI colours already removed).
pub fn classify(line: &str) -> LogLine {
    if line.contains("listing and watching")
        && has_field(line, "reflector", "cacher/pods")
    {
        LogLine::CacheListRound
    } else if line.contains("etcd: compacted rev") {
        LogLine::Compacted
    } else if line.contains(" WARN ") || line.contains(" ERROR ") {
        LogLine::Warning
    } else {
        LogLine::Other
    }
}

/// Whether `line` has the field `name=value` (the whole value, not a prefix).
fn has_field(line: &str, name: &str, value: &str) -> bool {
    let needle = format!("{name}={value}");
    line.match_indices(&needle).any(|(at, _)| {
        let before = line[..at].chars().next_back();
        let after = line[at + needle.len()..].chars().next();
        before.is_none_or(char::is_whitespace)
            && after.is_none_or(char::is_whitespace)
    })
}

/// Removes ANSI escape sequences (`ESC [ ... letter`) from a log line.
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            continue;
        }
        out.push(c);
    }
    out
}

/// A running `mini-apiserver`.
pub struct ServerProcess {
    child: Child,
    readers: Vec<JoinHandle<()>>,
    /// What its log has shown.
    pub log: Arc<ServerLog>,
    /// Where its log goes.
    pub log_path: PathBuf,
}

impl ServerProcess {
    /// Starts `bin ARGS --log LOG_FILTER`, its stdout and stderr into `log_path`
    /// and into [`ServerLog`].
    pub fn start(
        bin: &Path,
        args: &[String],
        log_path: &Path,
    ) -> Result<Self, String> {
        let file = File::create(log_path).map_err(|error| {
            format!(
                "cannot write the server log {}: {error}",
                log_path.display()
            )
        })?;
        let file = Arc::new(Mutex::new(file));
        let mut child = Command::new(bin)
            .args(args)
            .args(["--log", LOG_FILTER])
            .env("NO_COLOR", "1")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|error| format!("cannot start {}: {error}", bin.display()))?;
        let log = Arc::new(ServerLog::default());
        let mut readers = Vec::new();
        let stdout = child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>);
        let stderr = child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn std::io::Read + Send>);
        for pipe in [stdout, stderr].into_iter().flatten() {
            let (log, file) = (Arc::clone(&log), Arc::clone(&file));
            // Reads to the end of the pipe, which comes when the process exits.
            readers.push(std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    log.read(&line);
                    let _ = writeln!(file.lock(), "{line}");
                }
            }));
        }
        Ok(ServerProcess {
            child,
            readers,
            log,
            log_path: log_path.to_path_buf(),
        })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it has exited, and how.
    pub fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// SIGINT (graceful shutdown: watch streams end, caches stop), then the exit;
    /// killed when it has not stopped within 10 s. Waits for its log readers.
    pub fn stop(mut self) {
        if self.exited().is_none() {
            let pid = self.pid().to_string();
            let _ = Command::new("kill").args(["-INT", &pid]).status();
            let deadline = Instant::now() + Duration::from_secs(10);
            while Instant::now() < deadline && self.exited().is_none() {
                // Polling an outside process until it exits.
                std::thread::sleep(Duration::from_millis(50));
            }
        }
        self.kill();
        for reader in self.readers.drain(..) {
            let _ = reader.join();
        }
    }

    fn kill(&mut self) {
        if self.exited().is_none() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The sum of a metric's samples whose labels include all of `labels`, from
/// Prometheus text (`name{k="v",...} value`); `None` when no sample matches.
/// Counters are looked up by their full name (`apiserver_request_total`).
pub fn metric_sum(text: &str, name: &str, labels: &[(&str, &str)]) -> Option<f64> {
    let mut sum = None;
    for line in text.lines() {
        if line.starts_with('#') {
            continue;
        }
        let Some(rest) = line.strip_prefix(name) else {
            continue;
        };
        let (label_text, value) = if let Some(rest) = rest.strip_prefix('{') {
            let Some(end) = rest.find('}') else { continue };
            (&rest[..end], rest[end + 1..].trim())
        } else if rest.starts_with(' ') {
            ("", rest.trim())
        } else {
            continue; // a longer name with this prefix
        };
        let matches = labels.iter().all(|(k, v)| {
            label_text
                .split(',')
                .any(|pair| pair == format!("{k}=\"{v}\""))
        });
        if !matches {
            continue;
        }
        if let Some(value) = value
            .split_whitespace()
            .next()
            .and_then(|v| v.parse::<f64>().ok())
        {
            *sum.get_or_insert(0.0) += value;
        }
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_lines_it_counts() {
        let relist = "2025-11-27T23:00:00.000000Z DEBUG stage3_reflector::reflector: listing and watching reflector=cacher/pods";
        assert_eq!(classify(relist), LogLine::CacheListRound);
        let other_cache = "2025-11-27T23:00:00Z DEBUG stage3_reflector::reflector: listing and watching reflector=cacher/podtemplates";
        assert_eq!(classify(other_cache), LogLine::Other);
        let compacted = "2025-11-27T23:10:00Z DEBUG stage5_storage::etcd3::compact: etcd: compacted rev revision=1234";
        assert_eq!(classify(compacted), LogLine::Compacted);
        let warning = "2025-11-27T23:10:00Z  WARN stage3_reflector::reflector: failed to watch reflector=cacher/pods";
        assert_eq!(classify(warning), LogLine::Warning);
        assert_eq!(
            classify("mini-apiserver serving on http://127.0.0.1:1"),
            LogLine::Other
        );

        let log = ServerLog::default();
        log.read(relist);
        assert_eq!(log.cache_relists(), 0);
        log.read(relist);
        log.read(compacted);
        assert_eq!(log.cache_relists(), 1);
        assert_eq!(log.compactions.load(Ordering::Relaxed), 1);
        assert!(log.first_compaction.lock().is_some());
    }

    #[test]
    fn strips_colours() {
        let coloured = "\u{1b}[2m2025\u{1b}[0m \u{1b}[34mDEBUG\u{1b}[0m x: listing and watching \u{1b}[3mreflector\u{1b}[0m\u{1b}[2m=\u{1b}[0mcacher/pods";
        let plain = strip_ansi(coloured);
        assert_eq!(
            plain,
            "2025 DEBUG x: listing and watching reflector=cacher/pods"
        );
        assert_eq!(classify(&plain), LogLine::CacheListRound);
    }

    #[test]
    fn sums_metric_samples_by_label() {
        let text = "# HELP apiserver_request_total Requests answered.\n\
                    # TYPE apiserver_request_total counter\n\
                    apiserver_request_total{verb=\"LIST\",resource=\"pods\",code=\"200\"} 3\n\
                    apiserver_request_total{verb=\"LIST\",resource=\"pods\",code=\"410\"} 1\n\
                    apiserver_request_total{verb=\"LIST\",resource=\"nodes\",code=\"200\"} 7\n\
                    apiserver_request_total{verb=\"WATCH\",resource=\"pods\",code=\"200\"} 1000\n\
                    apiserver_request_total_other{verb=\"LIST\",resource=\"pods\"} 99\n\
                    apiserver_watch_error_events_total 2\n";
        let list = [("verb", "LIST"), ("resource", "pods")];
        assert_eq!(
            metric_sum(text, "apiserver_request_total", &list),
            Some(4.0)
        );
        assert_eq!(
            metric_sum(text, "apiserver_watch_error_events_total", &[]),
            Some(2.0)
        );
        assert_eq!(
            metric_sum(text, "apiserver_request_total", &[("verb", "DELETE")]),
            None
        );
    }
}
