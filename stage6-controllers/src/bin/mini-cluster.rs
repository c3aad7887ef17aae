//! `mini-cluster`: a whole cluster in one process, as k3s puts one in a single
//! binary: stage 5's API server (on the embedded store, or `--etcd`), the
//! controller manager (ReplicaSets, Deployments, the garbage collector), the
//! scheduler and N hollow nodes. It takes `mini-apiserver`'s flags, the
//! controller manager's, the scheduler's and the hollow nodes', and serves plain
//! HTTP on 127.0.0.1:8080 by default, so kubectl works as against
//! `mini-apiserver`:
//!
//! ```text
//! cargo run -p stage6-controllers --bin mini-cluster                 # 3 nodes, embedded store
//! kubectl --server http://127.0.0.1:8080 create deployment web --image=nginx:1.27 --replicas=3
//! kubectl --server http://127.0.0.1:8080 get pods -o wide -w
//! cargo run -p stage6-controllers --bin mini-cluster -- --nodes 100 --pods 20
//! cargo run -p stage6-controllers --features etcd --bin mini-cluster -- --etcd http://127.0.0.1:2379
//! curl -s http://127.0.0.1:10257/metrics | grep workqueue_depth
//! ```
//!
//! The separate binaries (`mini-apiserver`, `mini-controller-manager`,
//! `mini-scheduler`, `hollow-node`) run the same parts one process each.
//! SIGINT or SIGTERM stops it: the nodes, the scheduler and the controllers
//! first, then the server.

use std::net::SocketAddr;
use std::process::ExitCode;
use workspace_allocator as _;

use clap::Parser;
use stage5_apiserver::app::options::ServerRunOptions;
use stage5_apiserver::app::server::{self, StartedServer, shutdown_signal};
use stage5_apiserver::say;
use stage6_controllers::app::client::in_process_client;
use stage6_controllers::app::controllermanager::ControllerManager;
use stage6_controllers::app::logs;
use stage6_controllers::app::options::ControllerManagerOptions;
use stage6_controllers::kubemark::HollowNodeOptions;
use stage6_controllers::scheduler::{Scheduler, SchedulerOptions};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// A Kubernetes cluster in one process: API server, controller manager,
/// scheduler and hollow nodes.
#[derive(Debug, Parser)]
#[command(name = "mini-cluster", version, about)]
struct Args {
    #[command(flatten)]
    server: ServerRunOptions,
    #[command(flatten)]
    controllers: ControllerManagerOptions,
    #[command(flatten)]
    scheduler: SchedulerOptions,
    /// How many hollow nodes to run (kubemark's hollow kubelets).
    #[arg(long, default_value_t = 3)]
    nodes: u32,
    #[command(flatten)]
    node: HollowNodeOptions,
    /// Where the controller manager serves `/metrics` (its workqueues) and
    /// `/healthz`, over plain HTTP.
    #[arg(long, default_value = "127.0.0.1:10257")]
    controller_manager_bind_address: SocketAddr,
    /// Log filter, as `RUST_LOG` (e.g. `info`, `stage6_controllers=debug`).
    #[arg(long, default_value = "warn,mini_cluster=info")]
    log: String,
}

fn main() -> ExitCode {
    match workspace_allocator::runtime() {
        Ok(runtime) => runtime.block_on(run()),
        Err(error) => {
            eprintln!("mini-cluster: cannot start the runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> ExitCode {
    let args = Args::parse();
    logs::init(&args.log);
    if let Err(error) = args.controllers.validate() {
        eprintln!("mini-cluster: --controllers: {error}");
        return ExitCode::from(2);
    }
    if args.node.first_index.checked_add(args.nodes).is_none() {
        eprintln!("mini-cluster: --first-index plus --nodes is too large");
        return ExitCode::from(2);
    }
    let metrics = match tokio::net::TcpListener::bind(
        args.controller_manager_bind_address,
    )
    .await
    {
        Ok(listener) => listener,
        Err(error) => {
            eprintln!(
                "mini-cluster: cannot listen on {} for the controller manager's metrics: {error}",
                args.controller_manager_bind_address
            );
            return ExitCode::FAILURE;
        }
    };
    let started = match server::start(&args.server, "mini-cluster").await {
        Ok(started) => started,
        Err(error) => {
            eprintln!("mini-cluster: {error}");
            return ExitCode::FAILURE;
        }
    };
    let code = run_components(&args, &started, metrics).await;
    started.server.shutdown().await;
    code
}

/// Runs the controllers, the scheduler and the nodes against `started` until
/// the stop signal, then stops them.
async fn run_components(
    args: &Args,
    started: &StartedServer,
    metrics: tokio::net::TcpListener,
) -> ExitCode {
    let client = match in_process_client(started).await {
        Ok(client) => client,
        Err(error) => {
            eprintln!("mini-cluster: {error}");
            return ExitCode::FAILURE;
        }
    };
    let kubelets = match args.node.kubelets(&client, args.nodes) {
        Ok(kubelets) => kubelets,
        Err(error) => {
            eprintln!("mini-cluster: {error}");
            return ExitCode::from(2);
        }
    };
    let manager =
        match ControllerManager::start(client.clone(), &args.controllers).await {
            Ok(manager) => manager,
            Err(error) => {
                eprintln!("mini-cluster: {error}");
                return ExitCode::FAILURE;
            }
        };
    let stop = CancellationToken::new();
    let tasks = TaskTracker::new();
    tasks.spawn(Scheduler::new(client, args.scheduler.config()).run(stop.clone()));
    for kubelet in kubelets {
        tasks.spawn(kubelet.run(stop.clone()));
    }
    let metrics_address = metrics.local_addr().ok();
    let metrics_stop = stop.clone();
    let router =
        ControllerManager::router().merge(manager.page_router(stop.clone()));
    tasks.spawn(async move {
        let serve = axum::serve(metrics, router)
            .with_graceful_shutdown(metrics_stop.cancelled_owned());
        if let Err(error) = serve.await {
            tracing::error!(%error, "the controller manager's metrics server failed");
        }
    });
    tasks.close();
    say!("  controllers: {}", manager.started().join(", "));
    say!("  scheduler: {}", args.scheduler.scheduler_name);
    if args.nodes > 0 {
        let last = args.node.first_index + args.nodes - 1;
        say!(
            "  nodes: {} ({}{} .. {}{last})",
            args.nodes,
            args.node.name_prefix,
            args.node.first_index,
            args.node.name_prefix
        );
    }
    if let Some(address) = metrics_address {
        say!("  controller manager metrics: http://{address}/metrics");
        say!("  controller manager's informers, live: http://{address}/debug/ui");
    }
    shutdown_signal().await;
    tracing::info!("shutting down");
    stop.cancel();
    tasks.wait().await;
    manager.shutdown().await;
    ExitCode::SUCCESS
}
