//! `watch-fanout`: the watch load tool. Opens N watches on pods against a Kubernetes
//! API server (this workspace's `mini-apiserver` or a real one), drives W writes per
//! second for D seconds, and reports events delivered per second, p50/p99/max
//! latency from each write's acknowledgement to each watcher's receipt, broken
//! watches, errors, and the server's RSS and CPU seconds (with `--pid`). The logic
//! lives in the `watch_fanout` library (`src/lib.rs`).
//!
//! ```text
//! cargo build --release -p stage5-apiserver -p watch-fanout
//! target/release/mini-apiserver &
//! target/release/watch-fanout --watchers 1000 --writes-per-second 100 --duration 10 --pid $!
//! target/release/watch-fanout --watchers 10000 --node-selector --nodes 1000 \
//!     --writes-per-second 1000 --duration 10 --json
//! ```
//!
//! Against a real cluster (self-signed certificate, a token, not on loopback):
//!
//! ```text
//! mini-apiserver --secure &     # prints the CA file it wrote
//! watch-fanout --server https://127.0.0.1:6443 \
//!     --certificate-authority /tmp/mini-apiserver/ca.crt --watchers 100
//! watch-fanout --server https://10.0.0.1:6443 --allow-remote --insecure --token "$TOKEN" \
//!     --namespace fanout --watchers 100
//! ```
//!
//! Two servers under the same load, one after the other, in one table (here the
//! same mini-apiserver over TLS on real etcd against any other API server):
//!
//! ```text
//! watch-fanout --server https://127.0.0.1:6443 --certificate-authority ca.crt --pid $MINI \
//!     --compare https://127.0.0.1:7443 --compare-certificate-authority other-ca.crt \
//!     --compare-pid $OTHER --watchers 1000 --writes-per-second 100 --duration 10
//! ```
//!
//! Exits 0 when every expected event arrived and nothing broke, 1 otherwise, and 2
//! when the run could not be made (a refused flag, the open-file limit, an
//! unreachable server).

use std::process::ExitCode;
use std::time::Duration;
use workspace_allocator as _;

use clap::Parser;
use watch_fanout as fanout;
use watch_fanout::FanoutConfig;

/// Measures watch fan-out: N watches, W writes/s, latency from a write's
/// acknowledgement to each watcher's receipt.
#[derive(Debug, Parser)]
#[command(name = "watch-fanout", version, about)]
struct Args {
    /// The API server.
    #[arg(long, default_value = "http://127.0.0.1:8080")]
    server: String,
    /// A bearer token.
    #[arg(long)]
    token: Option<String>,
    /// Accept a self-signed (or any) TLS certificate.
    #[arg(long, conflicts_with = "certificate_authority")]
    insecure: bool,
    /// Trust this PEM CA file for an https server (kubectl's
    /// `--certificate-authority`; `mini-apiserver --secure` prints one).
    #[arg(long, value_name = "FILE")]
    certificate_authority: Option<std::path::PathBuf>,
    /// Allow a server that is not on loopback.
    #[arg(long)]
    allow_remote: bool,
    /// The namespace to create pods and watch in.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Watches to open (at most 20,000).
    #[arg(long, default_value_t = 100)]
    watchers: usize,
    /// Give watch i the field selector `spec.nodeName=node-<i % nodes>`.
    #[arg(long)]
    node_selector: bool,
    /// Nodes the pods and the watchers' selectors are spread over.
    #[arg(long, default_value_t = 100)]
    nodes: usize,
    /// Writes (pod creates and merge patches) per second.
    #[arg(long, default_value_t = 10)]
    writes_per_second: u32,
    /// Seconds to write for (at most 600).
    #[arg(long, default_value_t = 10.0)]
    duration: f64,
    /// The server's pid, to report its VmRSS from /proc/PID/status.
    #[arg(long)]
    pid: Option<u32>,
    /// Pods to create before the watches open (for memory figures).
    #[arg(long, default_value_t = 0)]
    prefill: usize,
    /// Leave the pods the run created in place.
    #[arg(long)]
    no_cleanup: bool,
    /// Watches opened at once.
    #[arg(long, default_value_t = 256)]
    open_concurrency: usize,
    /// Seconds to wait after the last write for the last events.
    #[arg(long, default_value_t = 10.0)]
    drain_timeout: f64,
    /// Print the report as JSON instead of a table.
    #[arg(long)]
    json: bool,
    /// Watch in protobuf (length-prefixed frames) instead of JSON lines.
    #[arg(long)]
    protobuf: bool,
    /// After the run, run the same load against this second server and print
    /// both side by side (the `B/A` column is the second over the first).
    #[arg(long, value_name = "SERVER")]
    compare: Option<String>,
    /// The second server's pid (`--pid` for `--compare`).
    #[arg(long, value_name = "PID", requires = "compare")]
    compare_pid: Option<u32>,
    /// The second server's CA file (`--certificate-authority` for `--compare`).
    #[arg(long, value_name = "FILE", requires = "compare")]
    compare_certificate_authority: Option<std::path::PathBuf>,
    /// The second server's bearer token (`--token` for `--compare`).
    #[arg(long, requires = "compare")]
    compare_token: Option<String>,
}

fn seconds(flag: &str, value: f64) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value)
        .map_err(|_| format!("--{flag} {value} is not a duration"))
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let (duration, drain_timeout) = match (
        seconds("duration", args.duration),
        seconds("drain-timeout", args.drain_timeout),
    ) {
        (Ok(d), Ok(t)) => (d, t),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("watch-fanout: {e}");
            return ExitCode::from(2);
        }
    };
    let config = FanoutConfig {
        server: args.server,
        token: args.token,
        insecure: args.insecure,
        certificate_authority: args.certificate_authority,
        allow_remote: args.allow_remote,
        namespace: args.namespace,
        watchers: args.watchers,
        node_selector: args.node_selector,
        protobuf: args.protobuf,
        nodes: args.nodes,
        writes_per_second: args.writes_per_second,
        duration,
        pid: args.pid,
        prefill: args.prefill,
        cleanup: !args.no_cleanup,
        open_concurrency: args.open_concurrency,
        drain_timeout,
        ..FanoutConfig::default()
    };
    let report = match fanout::run(&config).await {
        Ok(report) => report,
        Err(error) => {
            eprintln!("watch-fanout: {error}");
            return ExitCode::from(2);
        }
    };
    if let Some(second) = args.compare {
        let config = FanoutConfig {
            server: second,
            pid: args.compare_pid,
            certificate_authority: args.compare_certificate_authority,
            token: args.compare_token,
            ..config
        };
        let other = match fanout::run(&config).await {
            Ok(other) => other,
            Err(error) => {
                eprintln!("watch-fanout: the second server: {error}");
                return ExitCode::from(2);
            }
        };
        if args.json {
            let both = serde_json::json!({ "a": report, "b": other });
            println!("{both:#}");
        } else {
            print!("{}", fanout::compare_table(&report, &other));
        }
        return if report.complete() && other.complete() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        };
    }
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(json) => println!("{json}"),
            Err(error) => {
                eprintln!("watch-fanout: cannot encode the report: {error}");
                return ExitCode::from(2);
            }
        }
    } else {
        print!("{}", report.table());
    }
    if report.complete() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
