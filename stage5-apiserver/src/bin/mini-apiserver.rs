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
//! ```
//!
//! SIGINT or SIGTERM shuts it down gracefully: watch streams end, in-flight requests
//! finish, the watch caches stop.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
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
