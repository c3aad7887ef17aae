//! `mini-apiserver`: stage 5's storage and watch cache behind a
//! Kubernetes-compatible HTTP API, for kubectl, kube-client and this workspace's
//! informers. Mirrors `kube-apiserver`'s `cmd/kube-apiserver/app/server.go`
//! (`NewAPIServerCommand` → `Run`), with only the flags that matter for the watch.
//!
//! ```text
//! cargo run -p stage5-cacher --bin mini-apiserver                       # 127.0.0.1:8080, embedded store
//! cargo run -p stage5-cacher --bin mini-apiserver -- --no-watch-cache   # every watch is an etcd watch
//! cargo run -p stage5-cacher --features etcd --bin mini-apiserver -- --etcd http://127.0.0.1:2379
//! kubectl --server http://127.0.0.1:8080 get pods -w
//! cargo run -p stage5-cacher --bin mini-apiserver -- --idle-timeout 30s --max-connections 256
//! ```
//!
//! SIGINT or SIGTERM shuts it down gracefully: watch streams end, in-flight requests
//! finish, the watch caches stop.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;
use stage5_apiserver::config::{
    DEFAULT_IDLE_TIMEOUT, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_HEADER_BYTES,
    DEFAULT_READ_HEADER_TIMEOUT,
};
use stage5_apiserver::{
    Backend, DEFAULT_BIND, DEFAULT_WATCH_CACHE_CAPACITY, Server, ServerConfig,
};

/// A Kubernetes-compatible API server over stage 5's etcd3 storage and watch cache.
#[derive(Debug, Parser)]
#[command(name = "mini-apiserver", version, about)]
struct Args {
    /// Address to listen on (`--bind-address` and `--secure-port` upstream; plain
    /// HTTP here).
    #[arg(long, default_value = DEFAULT_BIND)]
    bind: SocketAddr,
    /// Use real etcd at this URL instead of the embedded store (needs the `etcd`
    /// cargo feature).
    #[arg(long, value_name = "URL")]
    etcd: Option<String>,
    /// Bearer tokens, one `token,user` a line; without it there is no
    /// authentication.
    #[arg(long, value_name = "FILE")]
    token_file: Option<PathBuf>,
    /// Serve every list and watch straight from etcd (`--watch-cache=false`).
    #[arg(long)]
    no_watch_cache: bool,
    /// Events each resource's watch cache keeps.
    #[arg(long, default_value_t = DEFAULT_WATCH_CACHE_CAPACITY)]
    watch_cache_capacity: usize,
    /// From a request's first byte, how long its line and headers may take
    /// (`http.Server.ReadHeaderTimeout`, 32s in apiserver's secure serving; no flag
    /// upstream). A Go-style duration: `32s`, `500ms`, `2m`. [default: 32s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    read_header_timeout: Option<Duration>,
    /// How long a connection may wait for its next request, a new one included
    /// (`http.Server.IdleTimeout`, 90s upstream; no flag upstream). Watches are never
    /// idle. [default: 90s]
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    idle_timeout: Option<Duration>,
    /// The largest request line plus headers (`http.Server.MaxHeaderBytes`, 1 MiB
    /// upstream); more is a 431 (414 for the line alone) `Status`.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_HEADER_BYTES)]
    max_header_bytes: usize,
    /// The most connections open at once; the next ones wait to be accepted (no
    /// flag upstream: Go's `netutil.LimitListener`). The default leaves a quarter
    /// of a 1,024 open-file limit for everything else.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS,
          value_parser = parse_max_connections)]
    max_connections: usize,
    /// Log filter, as `RUST_LOG` (e.g. `info`, `stage5_apiserver=debug`).
    #[arg(long, default_value = "info")]
    log: String,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(&args.log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();

    if args.etcd.is_some() && !cfg!(feature = "etcd") {
        eprintln!(
            "mini-apiserver: --etcd needs real etcd support, which this binary was built without.\n\
             Rebuild with `cargo run -p stage5-cacher --features etcd --bin mini-apiserver -- --etcd URL`\n\
             (needs `protoc`), or leave --etcd out to use the embedded store."
        );
        return ExitCode::from(2);
    }
    let config = ServerConfig {
        bind: args.bind,
        backend: args.etcd.map_or(Backend::Embedded, Backend::Etcd),
        token_file: args.token_file,
        watch_cache: !args.no_watch_cache,
        watch_cache_capacity: args.watch_cache_capacity,
        read_header_timeout: args
            .read_header_timeout
            .unwrap_or(DEFAULT_READ_HEADER_TIMEOUT),
        idle_timeout: args.idle_timeout.unwrap_or(DEFAULT_IDLE_TIMEOUT),
        max_header_bytes: args.max_header_bytes,
        max_connections: args.max_connections,
        ..ServerConfig::default()
    };
    let server = match Server::start(config).await {
        Ok(server) => server,
        Err(error) => {
            eprintln!("mini-apiserver: {error}");
            return ExitCode::FAILURE;
        }
    };
    println!("mini-apiserver serving on {}", server.url());
    println!("  kubectl --server {} get pods -A", server.url());
    shutdown_signal().await;
    tracing::info!("shutting down");
    server.shutdown().await;
    ExitCode::SUCCESS
}

/// A duration as Go's `time.ParseDuration` writes the simple ones: a whole number
/// with `ms`, `s`, `m` or `h` (`32s`, `500ms`, `2m`); a bare number is seconds.
fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let split = text
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let number: u64 = number.parse().map_err(|_| {
        format!("{text:?} is not a duration: expected a whole number and a unit, like 32s")
    })?;
    match unit {
        "ms" => Ok(Duration::from_millis(number)),
        "" | "s" => Ok(Duration::from_secs(number)),
        "m" => Ok(Duration::from_secs(number * 60)),
        "h" => Ok(Duration::from_secs(number * 3600)),
        _ => Err(format!(
            "{text:?} has an unknown unit {unit:?}: use ms, s, m or h (like 32s)"
        )),
    }
}

/// A connection cap: a whole number, at least 1.
fn parse_max_connections(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(cap) if cap >= 1 => Ok(cap),
        _ => Err(format!(
            "{text:?} is not a connection cap: use a whole number >= 1"
        )),
    }
}

/// SIGINT (Ctrl-C) or, on Unix, SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        if let Err(error) = tokio::signal::ctrl_c().await {
            tracing::error!(%error, "cannot listen for Ctrl-C");
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(
            tokio::signal::unix::SignalKind::terminate(),
        ) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}
