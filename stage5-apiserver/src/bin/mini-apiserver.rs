//! `mini-apiserver`: stage 5's storage and watch cache behind a
//! Kubernetes-compatible HTTP API, for kubectl, kube-client and this workspace's
//! informers. Mirrors `kube-apiserver`'s `cmd/kube-apiserver/app/server.go`
//! (`NewAPIServerCommand` → `Run`), with only the flags that matter for the watch.
//!
//! ```text
//! cargo run -p stage5-apiserver --bin mini-apiserver                       # 127.0.0.1:8080, embedded store
//! cargo run -p stage5-apiserver --bin mini-apiserver -- --no-watch-cache   # every watch is an etcd watch
//! cargo run -p stage5-apiserver --features etcd --bin mini-apiserver -- --etcd http://127.0.0.1:2379
//! cargo run -p stage5-apiserver --features etcd --bin mini-apiserver -- \
//!     --etcd http://127.0.0.1:2379,http://127.0.0.1:22379,http://127.0.0.1:32379
//! kubectl --server http://127.0.0.1:8080 get pods -w
//! cargo run -p stage5-apiserver --bin mini-apiserver -- --idle-timeout 30s --max-connections 256
//! cargo run -p stage5-apiserver --bin mini-apiserver -- --secure          # HTTPS on 127.0.0.1:6443
//! kubectl --kubeconfig /tmp/mini-apiserver/kubeconfig get pods            # the path it printed
//! cargo run -p stage5-apiserver --bin mini-apiserver -- \
//!     --tls-cert-file apiserver.crt --tls-private-key-file apiserver.key
//! ```
//!
//! SIGINT or SIGTERM shuts it down gracefully: watch streams end, in-flight requests
//! finish, the watch caches stop.

use std::process::ExitCode;
use workspace_allocator as _;

use clap::Parser;
use stage5_apiserver::app::options::ServerRunOptions;
use stage5_apiserver::app::server::{self, shutdown_signal};

/// A Kubernetes-compatible API server over stage 5's etcd3 storage and watch cache.
#[derive(Debug, Parser)]
#[command(name = "mini-apiserver", version, about)]
struct Args {
    #[command(flatten)]
    server: ServerRunOptions,
    /// Log filter, as `RUST_LOG` (e.g. `info`, `stage5_apiserver=debug`).
    #[arg(long, default_value = "info")]
    log: String,
}

fn main() -> ExitCode {
    // The workspace's runtime: workers hand freed memory back when they go idle.
    match workspace_allocator::runtime() {
        Ok(runtime) => runtime.block_on(serve()),
        Err(error) => {
            eprintln!("mini-apiserver: cannot start the runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn serve() -> ExitCode {
    let args = Args::parse();
    let filter = tracing_subscriber::EnvFilter::try_new(&args.log)
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    tracing_subscriber::fmt().with_env_filter(filter).init();
    let started = match server::start(&args.server, "mini-apiserver").await {
        Ok(started) => started,
        Err(error) => {
            eprintln!("mini-apiserver: {error}");
            return ExitCode::FAILURE;
        }
    };
    shutdown_signal().await;
    tracing::info!("shutting down");
    started.server.shutdown().await;
    ExitCode::SUCCESS
}
