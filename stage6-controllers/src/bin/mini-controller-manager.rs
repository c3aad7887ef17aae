//! `mini-controller-manager`: the ReplicaSet, Deployment and garbage-collector
//! controllers of stage 6 in one process, against any API server. Mirrors
//! `cmd/kube-controller-manager` (`NewControllerManagerCommand` → `Run`).
//!
//! ```text
//! cargo run -p stage5-apiserver --bin mini-apiserver                # terminal 1
//! cargo run -p stage6-controllers --bin mini-controller-manager     # terminal 2
//! kubectl --server http://127.0.0.1:8080 create deployment web --image=nginx:1.27 --replicas=3
//! kubectl --server http://127.0.0.1:8080 get rs,pods
//! curl -s http://127.0.0.1:10257/metrics | grep workqueue_adds_total
//! open http://127.0.0.1:10257/debug/ui                               # its informers, live
//! cargo run -p stage6-controllers --bin mini-controller-manager -- --controllers '*,-garbage-collector-controller'
//! cargo run -p stage6-controllers --bin mini-controller-manager -- --kubeconfig /tmp/mini-apiserver/kubeconfig
//! ```
//!
//! SIGINT or SIGTERM stops it: each controller finishes the keys it is syncing.

use std::net::SocketAddr;
use std::process::ExitCode;
use workspace_allocator as _;

use clap::Parser;
use stage5_apiserver::app::server::shutdown_signal;
use stage5_apiserver::say;
use stage6_controllers::app::client::{ClientOptions, start_component};
use stage6_controllers::app::controllermanager::ControllerManager;
use stage6_controllers::app::options::ControllerManagerOptions;
use tokio_util::sync::CancellationToken;

/// Kubernetes' ReplicaSet, Deployment and garbage-collector controllers over
/// client-go's informers and workqueues, rebuilt in Rust.
#[derive(Debug, Parser)]
#[command(name = "mini-controller-manager", version, about)]
struct Args {
    #[command(flatten)]
    client: ClientOptions,
    #[command(flatten)]
    controllers: ControllerManagerOptions,
    /// Where `/metrics` (the workqueues) and `/healthz` are served, over
    /// plain HTTP (upstream: `--bind-address` and `--secure-port` 10257,
    /// HTTPS).
    #[arg(long, default_value = "127.0.0.1:10257")]
    bind_address: SocketAddr,
    /// Log filter, as `RUST_LOG` (e.g. `info`, `stage6_controllers=debug`).
    #[arg(long, default_value = "info")]
    log: String,
}

fn main() -> ExitCode {
    match workspace_allocator::runtime() {
        Ok(runtime) => runtime.block_on(run()),
        Err(error) => {
            eprintln!("mini-controller-manager: cannot start the runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> ExitCode {
    let args = Args::parse();
    let client =
        match start_component("mini-controller-manager", &args.client, &args.log)
            .await
        {
            Ok(client) => client,
            Err(code) => return code,
        };
    let listener = match tokio::net::TcpListener::bind(args.bind_address).await {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!(
                "mini-controller-manager: cannot listen on {}: {error}",
                args.bind_address
            );
            return ExitCode::FAILURE;
        }
    };
    let manager = match ControllerManager::start(client, &args.controllers).await {
        Ok(manager) => manager,
        Err(error) => {
            eprintln!("mini-controller-manager: {error}");
            return ExitCode::FAILURE;
        }
    };
    say!(
        "mini-controller-manager running {} against {}",
        manager.started().join(", "),
        args.client.describe()
    );
    say!("  metrics: http://{}/metrics", args.bind_address);
    say!("  live page: http://{}/debug/ui", args.bind_address);
    let pages_stop = CancellationToken::new();
    let router =
        ControllerManager::router().merge(manager.page_router(pages_stop.clone()));
    let serve = axum::serve(listener, router).with_graceful_shutdown(async move {
        shutdown_signal().await;
        pages_stop.cancel();
    });
    if let Err(error) = serve.await {
        tracing::error!(%error, "metrics server failed");
    }
    tracing::info!("shutting down");
    manager.shutdown().await;
    ExitCode::SUCCESS
}
