//! `soak`: half an hour (by default) of the whole watch path under a load with
//! idle gaps, run by hand, not in CI (issue #32).
//!
//! It starts a real etcd on free loopback ports with etcd's default keepalive
//! policy and progress-notify interval (or uses `--etcd URL`), and
//! `mini-apiserver` on it as a child process, so that its RSS and CPU are read
//! from `/proc/PID`. Against the server it then runs:
//!
//! - `--watchers` raw watches on pods, one connection each (as watch-fanout's),
//!   each asking for a timeout ten minutes beyond the run: none may end;
//! - stage 4's shared informer on pods, whose lists are counted: one is the
//!   initial fill, any more is an unexpected relist;
//! - bursts of `--burst-writes` pod creates, updates and deletes at
//!   `--burst-rate`/s, each followed by `--idle` without a write, until
//!   `--duration` has passed. The idle gaps are what caught the etcd keepalive
//!   bug: the server's etcd client pinged more often than etcd's
//!   `--grpc-keepalive-min-time` allows, etcd closed the connection every ~10 s
//!   while idle, and every watch ended.
//!
//! Every `--sample` it prints one line (elapsed, server RSS and CPU, informer
//! cache size and relists, watch-cache relists, watches open and ended, events);
//! at the end a markdown summary against the targets and the server's memory and
//! CPU over time. Exit code 0 when every target is met, 1 when one is missed, 2
//! when the run could not be made.
//!
//! ```text
//! cargo build --release -p soak -p stage5-apiserver --features stage5-apiserver/etcd
//! target/release/soak                                   # 30 min, 1,000 watches
//! target/release/soak --duration 3m --idle 40s --compaction-interval 1m   # a smoke run
//! ```
//!
//! Everything listens on and talks to 127.0.0.1 only, every wait is bounded, and
//! the run stops by itself after `--duration` (plus at most a few minutes to
//! settle and check). The processes it started are stopped by their PIDs at the
//! end and on every error.

mod duration;
mod http;
mod informer;
mod load;
mod report;
mod server;
mod watches;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};
use workspace_allocator as _;

use clap::Parser;
use hyper::Uri;
use stage5_storage::testing::{
    ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL, EtcdServer, free_port,
};
use watch_fanout::{is_loopback, open_file_limit, read_cpu_seconds, read_rss_kib};

use crate::duration::{format_duration, parse_duration};
use crate::informer::{Informer, differences, pod_state};
use crate::load::{LoadPlan, WriteCounts};
use crate::report::{CacheCheck, Outcome, Sample, Summary};
use crate::server::{ServerLog, ServerProcess, metric_sum};
use crate::watches::Watches;

/// The most watches a run may open (watch-fanout's bound).
const MAX_WATCHERS: usize = 20_000;
/// The longest run.
const MAX_DURATION: Duration = Duration::from_secs(24 * 3600);
/// How long the server may take to answer `/readyz`, and the informer to sync.
const START_TIMEOUT: Duration = Duration::from_secs(30);
/// How long, after the deadline, the last events and the informer may take.
const SETTLE_TIMEOUT: Duration = Duration::from_secs(60);

/// Soaks mini-apiserver on a real etcd: watches, an informer, write bursts and
/// idle gaps; relists, ended watches and the server's memory over time.
#[derive(Debug, Parser)]
#[command(name = "soak", version, about)]
struct Args {
    /// Raw watches on pods to hold open (one connection each).
    #[arg(long, default_value_t = 1000)]
    watchers: usize,
    /// Writes (pod creates, updates and deletes) per burst.
    #[arg(long, default_value_t = 500)]
    burst_writes: u64,
    /// Writes per second within a burst.
    #[arg(long, default_value_t = 100)]
    burst_rate: u32,
    /// The gap without writes after each burst (`3m`, `40s`).
    #[arg(long, default_value = "3m", value_parser = parse_duration)]
    idle: Duration,
    /// How long the load runs.
    #[arg(long, default_value = "30m", value_parser = parse_duration)]
    duration: Duration,
    /// How often a sample line is printed.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    sample: Duration,
    /// The server's `--etcd-compaction-interval`.
    #[arg(long, default_value = "5m", value_parser = parse_duration)]
    compaction_interval: Duration,
    /// Use this etcd (on loopback) instead of starting one.
    #[arg(long, value_name = "URL")]
    etcd: Option<String>,
    /// The `mini-apiserver` binary (built with `--features etcd`) [default: the
    /// one next to this binary].
    #[arg(long, value_name = "PATH")]
    server_bin: Option<PathBuf>,
    /// Where the server's log goes [default: $TMPDIR/soak-mini-apiserver-<pid>.log].
    #[arg(long, value_name = "FILE")]
    server_log: Option<PathBuf>,
    /// The namespace the pods are written and watched in.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// How far (percent) the server's RSS may end above its level after the first
    /// compaction.
    #[arg(long, default_value_t = 10.0)]
    rss_tolerance: f64,
}

/// Why a run could not be made (exit code 2); what goes wrong during a run is in
/// the summary instead.
#[derive(Debug, thiserror::Error)]
enum SoakError {
    /// A flag is out of bounds.
    #[error("{0}")]
    Invalid(String),
    /// etcd did not start.
    #[error("cannot start etcd (is `etcd` on PATH?): {0}")]
    Etcd(#[source] std::io::Error),
    /// The server did not start or died.
    #[error("mini-apiserver: {0}")]
    Server(String),
    /// A step of the run failed.
    #[error("{0}")]
    Run(String),
}

impl Args {
    fn validate(&self) -> Result<(), SoakError> {
        let invalid = |message: String| Err(SoakError::Invalid(message));
        if self.watchers > MAX_WATCHERS {
            return invalid(format!(
                "--watchers {} is over {MAX_WATCHERS}",
                self.watchers
            ));
        }
        if self.burst_writes == 0 || self.burst_rate == 0 {
            return invalid(
                "--burst-writes and --burst-rate must be at least 1".into(),
            );
        }
        if self.duration.is_zero() || self.duration > MAX_DURATION {
            return invalid(format!(
                "--duration must be above 0 and at most {}",
                format_duration(MAX_DURATION)
            ));
        }
        if self.sample.is_zero() {
            return invalid("--sample must be above 0".into());
        }
        if let Some(url) = &self.etcd {
            let uri: Uri = url.parse().map_err(|error| {
                SoakError::Invalid(format!("--etcd {url:?}: {error}"))
            })?;
            if !is_loopback(uri.host().unwrap_or("")) {
                return invalid(format!("--etcd {url:?} is not on loopback"));
            }
        }
        let needed = self.watchers as u64 + 256;
        if let Some(limit) = open_file_limit()
            && limit < needed
        {
            return invalid(format!(
                "{} watches need {needed} open files, the limit is {limit}: raise it (`ulimit -n {needed}`)",
                self.watchers
            ));
        }
        Ok(())
    }

    /// `--etcd-compaction-interval` as the server reads it.
    fn compaction_flag(&self) -> String {
        format!("{}ms", self.compaction_interval.as_millis())
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                // kube's client logs every refused connection of the
                // readiness probe; the informer's errors are counted anyway.
                .unwrap_or_else(|_| {
                    tracing_subscriber::EnvFilter::new(
                        "warn,kube_client::client::builder=off",
                    )
                }),
        )
        .with_writer(std::io::stderr)
        .init();
    match soak(&args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("soak: {error}");
            ExitCode::from(2)
        }
    }
}

/// Starts etcd and the server, runs the soak, stops both, prints the summary.
/// `Ok(true)` when every target was met.
fn soak(args: &Args) -> Result<bool, SoakError> {
    args.validate()?;
    let runtime = workspace_allocator::runtime().map_err(|error| {
        SoakError::Run(format!("cannot start the runtime: {error}"))
    })?;
    let bin = match &args.server_bin {
        Some(bin) => bin.clone(),
        None => std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(|dir| dir.join("mini-apiserver")))
            .ok_or_else(|| {
                SoakError::Invalid(
                    "no --server-bin, and this binary's folder is unknown".into(),
                )
            })?,
    };
    let etcd = match &args.etcd {
        Some(_) => None,
        None => Some(
            EtcdServer::start_with(ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL)
                .map_err(SoakError::Etcd)?,
        ),
    };
    let etcd_url = match (&args.etcd, &etcd) {
        (Some(url), _) => url.clone(),
        (None, Some(etcd)) => etcd.client_url(),
        (None, None) => return Err(SoakError::Run("no etcd".into())),
    };
    let bind = free_port()
        .map_err(|error| SoakError::Run(format!("no free port: {error}")))?;
    let server_args = vec![
        "--etcd".to_string(),
        etcd_url.clone(),
        "--bind".to_string(),
        bind.to_string(),
        "--etcd-compaction-interval".to_string(),
        args.compaction_flag(),
    ];
    let log_path = args.server_log.clone().unwrap_or_else(|| {
        std::env::temp_dir()
            .join(format!("soak-mini-apiserver-{}.log", std::process::id()))
    });
    println!(
        "etcd {etcd_url} ({}); server: {} {} (log: {})",
        if etcd.is_some() {
            "started here: default keepalive policy, progress notify every 10m"
        } else {
            "--etcd"
        },
        bin.display(),
        server_args.join(" "),
        log_path.display()
    );
    let mut server = ServerProcess::start(&bin, &server_args, &log_path)
        .map_err(SoakError::Server)?;
    let url: Uri = format!("http://{bind}")
        .parse()
        .map_err(|error| SoakError::Run(format!("http://{bind}: {error}")))?;
    let result = runtime.block_on(run(args, &url, &mut server));
    // The server first (SIGINT, then SIGKILL after 10 s), then etcd (dropped: killed).
    let log = Arc::clone(&server.log);
    server.stop();
    drop(etcd);
    drop(runtime);
    let outcome = match result {
        Ok(outcome) => outcome,
        Err(error) => {
            print_log_tail(&log_path);
            return Err(error);
        }
    };
    let summary = Summary::of(&outcome);
    print_summary(args, &outcome, &summary, &log, &log_path);
    Ok(summary.all_met())
}

/// The last lines of the server's log, after a failed run.
fn print_log_tail(log_path: &Path) {
    if let Ok(text) = std::fs::read_to_string(log_path) {
        let lines: Vec<&str> = text.lines().collect();
        eprintln!("the last lines of {}:", log_path.display());
        for line in &lines[lines.len().saturating_sub(20)..] {
            eprintln!("  {line}");
        }
    }
}

/// The soak itself, on the runtime: see the crate docs.
async fn run(
    args: &Args,
    url: &Uri,
    server: &mut ServerProcess,
) -> Result<Outcome, SoakError> {
    let pid = server.pid();
    let log = Arc::clone(&server.log);
    let client = http::client(url).map_err(SoakError::Run)?;
    wait_ready(&client, server).await?;
    let cpu_at_ready = read_cpu_seconds(Some(pid));
    println!(
        "server ready (pid {pid}): RSS {:.1} MiB, CPU {:.2} s",
        read_rss_kib(pid).unwrap_or(0) as f64 / 1024.0,
        cpu_at_ready.unwrap_or(f64::NAN)
    );

    let informer = Informer::start(url, START_TIMEOUT)
        .await
        .map_err(SoakError::Run)?;
    println!("informer synced: {} pods", informer.cache_len());
    let pods_path = load::pods_path(&args.namespace);
    // The soak's own LISTs of pods, to tell the informer's apart on `/metrics`.
    let mut own_lists = 1u64;
    let initial_pods = list_state(&client, &pods_path)
        .await
        .map_err(SoakError::Run)?
        .len() as u64;

    let started = Instant::now();
    let timeout_seconds = (args.duration + Duration::from_secs(600)).as_secs();
    let watch_path = format!(
        "{pods_path}?watch=1&timeoutSeconds={timeout_seconds}&allowWatchBookmarks=true"
    );
    let watches = Watches::open(url, &watch_path, args.watchers, started)
        .await
        .map_err(SoakError::Run)?;
    println!(
        "{} watches open in {:.1} s (timeoutSeconds={timeout_seconds}); load: {} writes at {}/s, then {} idle, for {}",
        args.watchers,
        started.elapsed().as_secs_f64(),
        args.burst_writes,
        args.burst_rate,
        format_duration(args.idle),
        format_duration(args.duration)
    );

    let writes = Arc::new(WriteCounts::default());
    let deadline = tokio::time::Instant::from_std(started + args.duration);
    let plan = LoadPlan {
        writes: args.burst_writes,
        rate: args.burst_rate,
        idle: args.idle,
    };
    let writer = tokio::spawn(load::run(
        client.clone(),
        args.namespace.clone(),
        plan,
        deadline,
        Arc::clone(&writes),
    ));

    let take_sample = |informer: &Informer| Sample {
        elapsed: started.elapsed(),
        rss_kib: read_rss_kib(pid),
        cpu_seconds: read_cpu_seconds(Some(pid)),
        informer_pods: informer.cache_len(),
        informer_relists: informer.counts.relists(),
        cache_relists: log.cache_relists(),
        watches_open: watches.open_count(),
        watches_ended: watches.ended_count(),
        events: watches.events.load(Ordering::Relaxed),
        writes: writes.acked.load(Ordering::Relaxed),
        compactions: log.compactions.load(Ordering::Relaxed),
        soak_cpu_seconds: read_cpu_seconds(None),
        load_average: report::load_average(),
    };
    let mut samples = Vec::new();
    let first = take_sample(&informer);
    println!("{}", first.line());
    samples.push(first);
    let mut ticker = tokio::time::interval_at(
        tokio::time::Instant::now() + args.sample,
        args.sample,
    );
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut server_died = None;
    loop {
        tokio::select! {
            () = tokio::time::sleep_until(deadline) => break,
            _ = ticker.tick() => {}
        }
        let sample = take_sample(&informer);
        println!("{}", sample.line());
        samples.push(sample);
        if let Some(status) = server.exited() {
            server_died = Some(format!(
                "exited ({status}) at {}",
                format_duration(started.elapsed())
            ));
            break;
        }
    }
    // The writer stops at the deadline (it starts no burst it cannot finish).
    if tokio::time::timeout(SETTLE_TIMEOUT, writer).await.is_err() {
        eprintln!(
            "soak: the writes did not finish within {SETTLE_TIMEOUT:?} of the deadline"
        );
    }
    if let Some(died) = server_died {
        let _ = watches.stop().await;
        informer.stop().await;
        return Err(SoakError::Server(died));
    }

    // Settle: every open watch has every event (bounded).
    let expected = initial_pods + writes.acked.load(Ordering::Relaxed);
    let settle_until = tokio::time::Instant::now() + SETTLE_TIMEOUT;
    while tokio::time::Instant::now() < settle_until
        && watches
            .events_range_of_open()
            .is_some_and(|(lo, _)| lo < expected)
    {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let last = take_sample(&informer);
    println!("{}", last.line());
    samples.push(last);

    // The informer's cache against a fresh LIST, until equal (bounded).
    let all_pods = "/api/v1/pods";
    let check_until = tokio::time::Instant::now() + SETTLE_TIMEOUT;
    let cache_check = loop {
        own_lists += 1;
        let server_state = match list_state(&client, all_pods).await {
            Ok(state) => state,
            Err(error) => break CacheCheck::Failed(error),
        };
        let informer_state = informer.state();
        if informer_state == server_state {
            break CacheCheck::Equal(server_state.len());
        }
        if tokio::time::Instant::now() >= check_until {
            break CacheCheck::Differ(differences(
                &informer_state,
                &server_state,
                5,
            ));
        }
        tokio::time::sleep(Duration::from_millis(500)).await;
    };

    let metrics = http::get(&client, "/metrics")
        .await
        .map(|body| String::from_utf8_lossy(&body).into_owned())
        .unwrap_or_default();
    let counter = |name: &str, labels: &[(&str, &str)]| {
        metric_sum(&metrics, name, labels).map(|v| v as u64)
    };
    let server_lists = counter(
        "apiserver_request_total",
        &[("verb", "LIST"), ("resource", "pods")],
    );
    let outcome = Outcome {
        first_compaction: first_compaction(&log, started),
        compactions: log.compactions.load(Ordering::Relaxed),
        informer_lists: informer.counts.lists.load(Ordering::Relaxed),
        informer_watches: informer.counts.watches.load(Ordering::Relaxed),
        informer_errors: (
            informer.counts.errors.load(Ordering::Relaxed),
            informer.counts.error_samples.lock().clone(),
        ),
        server_lists_by_informer: server_lists.map(|n| n.saturating_sub(own_lists)),
        cache_relists: log
            .cache_list_times
            .lock()
            .iter()
            .skip(1)
            .map(|at| at.saturating_duration_since(started))
            .collect(),
        watchers: watches.slots.len(),
        ended: watches.ended.lock().clone(),
        events: watches.events.load(Ordering::Relaxed),
        bookmarks: watches.bookmarks.load(Ordering::Relaxed),
        events_per_open_watch: watches.events_range_of_open(),
        expected_events_per_watch: expected,
        bursts: writes.bursts.load(Ordering::Relaxed),
        writes_acked: writes.acked.load(Ordering::Relaxed),
        writes_failed: (
            writes.failed.load(Ordering::Relaxed),
            writes.error_samples.lock().clone(),
        ),
        cache_check: Some(cache_check),
        rss_tolerance_percent: args.rss_tolerance,
        terminated_slow: counter(
            "apiserver_terminated_watchers_total",
            &[("resource", "pods")],
        ),
        watch_error_events: counter("apiserver_watch_error_events_total", &[]),
        server_warnings: (
            log.warnings.load(Ordering::Relaxed),
            log.warning_samples.lock().clone(),
        ),
        samples,
    };
    if let Err(error) = watches.stop().await {
        eprintln!("soak: {error}");
    }
    informer.stop().await;
    Ok(outcome)
}

/// When the server first compacted, since `started`.
fn first_compaction(log: &ServerLog, started: Instant) -> Option<Duration> {
    log.first_compaction
        .lock()
        .map(|at| at.saturating_duration_since(started))
}

/// Waits (within [`START_TIMEOUT`]) until the server answers `/readyz`.
async fn wait_ready(
    client: &kube::Client,
    server: &mut ServerProcess,
) -> Result<(), SoakError> {
    let deadline = tokio::time::Instant::now() + START_TIMEOUT;
    loop {
        if let Some(status) = server.exited() {
            return Err(SoakError::Server(format!(
                "exited at start ({status}); its log is {}",
                server.log_path.display()
            )));
        }
        let probe = tokio::time::timeout(
            Duration::from_secs(2),
            http::get(client, "/readyz"),
        );
        if let Ok(Ok(_)) = probe.await {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(SoakError::Server(format!(
                "not ready within {START_TIMEOUT:?}; its log is {}",
                server.log_path.display()
            )));
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// A LIST of `path` as `namespace/name` → resourceVersion.
async fn list_state(
    client: &kube::Client,
    path: &str,
) -> Result<std::collections::BTreeMap<String, String>, String> {
    let body = http::get(client, path)
        .await
        .map_err(|error| format!("LIST {path}: {error}"))?;
    let list: serde_json::Value = serde_json::from_slice(&body)
        .map_err(|error| format!("LIST {path}: {error}"))?;
    let items = list["items"]
        .as_array()
        .ok_or_else(|| format!("LIST {path}: no items"))?;
    items
        .iter()
        .map(|item| {
            serde_json::from_value::<k8s_openapi::api::core::v1::Pod>(item.clone())
                .map(|pod| pod_state(&pod))
                .map_err(|error| format!("LIST {path}: an item: {error}"))
        })
        .collect()
}

fn print_summary(
    args: &Args,
    outcome: &Outcome,
    summary: &Summary,
    log: &ServerLog,
    log_path: &Path,
) {
    println!();
    println!("## Soak summary");
    println!();
    println!(
        "{} watchers, bursts of {} writes at {}/s then {} idle, for {}; compaction every {}; sample every {}.",
        args.watchers,
        args.burst_writes,
        args.burst_rate,
        format_duration(args.idle),
        format_duration(args.duration),
        format_duration(args.compaction_interval),
        format_duration(args.sample)
    );
    println!();
    print!("{}", summary.table());
    println!();
    let step = if args.duration >= Duration::from_secs(1200) {
        Duration::from_secs(300)
    } else {
        Duration::from_secs(60)
    };
    println!("### Server memory and CPU over time");
    println!();
    print!(
        "{}",
        report::over_time(&outcome.samples, outcome.first_compaction, step)
    );
    let lists = [
        (
            "watches that ended (the server closes a watcher it finds too slow with \
             an EOF: compare apiserver_terminated_watchers_total above)",
            outcome
                .ended
                .iter()
                .take(10)
                .map(|e| {
                    format!(
                        "watch {} at {} after {} events: {}",
                        e.index,
                        format_duration(e.at),
                        e.events,
                        e.reason
                    )
                })
                .collect::<Vec<_>>(),
        ),
        ("failed writes", outcome.writes_failed.1.clone()),
        (
            "informer Reflector errors",
            outcome.informer_errors.1.clone(),
        ),
        ("server WARN/ERROR lines", outcome.server_warnings.1.clone()),
    ];
    for (title, items) in lists {
        if items.is_empty() {
            continue;
        }
        println!();
        println!("### The first {title}");
        println!();
        for item in items {
            println!("- {item}");
        }
    }
    println!();
    println!(
        "The server's log ({} lines): {}",
        log.lines.load(Ordering::Relaxed),
        log_path.display()
    );
    println!(
        "Result: {}",
        if summary.all_met() {
            "every target met"
        } else {
            "a target was MISSED"
        }
    );
}
