//! `mini-scheduler`: stage 6's kube-scheduler. Watches the pods no node runs
//! and the nodes, and binds each pod to the node that fits it best
//! (`NodeUnschedulable`, `TaintToleration`, `NodeResourcesFit` with least
//! allocated scoring). Mirrors `cmd/kube-scheduler` (`NewSchedulerCommand` →
//! `Run`) with only the flags that matter here. Runs until Ctrl-C or SIGTERM,
//! then stops everything it started.
//!
//! ```text
//! cargo run -p stage5-apiserver --bin mini-apiserver &
//! cargo run -p stage6-controllers --bin hollow-node -- --server http://127.0.0.1:8080 --nodes 3 &
//! cargo run -p stage6-controllers --bin mini-scheduler -- --server http://127.0.0.1:8080
//! kubectl --server http://127.0.0.1:8080 run web --image nginx
//! kubectl --server http://127.0.0.1:8080 get pods -o wide
//! ```

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use workspace_allocator as _;

use clap::Parser;
use stage6_controllers::scheduler::{
    DEFAULT_SCHEDULER_NAME, Scheduler, SchedulerConfig,
};
use tokio_util::sync::CancellationToken;

mod common;

/// kube-scheduler at its simplest.
#[derive(Debug, Parser)]
#[command(name = "mini-scheduler", version, about)]
struct Args {
    /// The API server, plain HTTP without auth (stage 5's `mini-apiserver`).
    /// Without it, `--kubeconfig` or the usual kubeconfig is used.
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// A kubeconfig file (kube-scheduler's `--kubeconfig`).
    #[arg(long, value_name = "FILE", conflicts_with = "server")]
    kubeconfig: Option<PathBuf>,
    /// The `schedulerName` this scheduler serves (its profile's name).
    #[arg(long, default_value = DEFAULT_SCHEDULER_NAME)]
    scheduler_name: String,
    /// The first retry's delay (`podInitialBackoffSeconds`).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = common::parse_duration)]
    pod_initial_backoff: Duration,
    /// The longest retry delay (`podMaxBackoffSeconds`).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = common::parse_duration)]
    pod_max_backoff: Duration,
    /// How long an unschedulable pod waits for a cluster event before it is
    /// tried again anyway.
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = common::parse_duration)]
    pod_max_in_unschedulable_pods_duration: Duration,
    /// Log filter, as `RUST_LOG` (e.g. `info`, `stage6_controllers=debug`).
    #[arg(long, default_value = "info")]
    log: String,
}

fn main() -> ExitCode {
    match workspace_allocator::runtime() {
        Ok(runtime) => runtime.block_on(run()),
        Err(error) => {
            eprintln!("mini-scheduler: cannot start the runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> ExitCode {
    let args = Args::parse();
    common::init_tracing(&args.log);
    let client =
        match common::client(args.server.as_deref(), args.kubeconfig.as_ref()).await
        {
            Ok(client) => client,
            Err(error) => {
                eprintln!("mini-scheduler: {error}");
                return ExitCode::FAILURE;
            }
        };
    let config = SchedulerConfig::default()
        .scheduler_name(args.scheduler_name)
        .pod_initial_backoff(args.pod_initial_backoff)
        .pod_max_backoff(args.pod_max_backoff)
        .pod_max_in_unschedulable_pods_duration(
            args.pod_max_in_unschedulable_pods_duration,
        );
    let shutdown = CancellationToken::new();
    let scheduler =
        tokio::spawn(Scheduler::new(client, config).run(shutdown.clone()));
    common::shutdown_signal().await;
    tracing::info!("shutting down");
    shutdown.cancel();
    match scheduler.await {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("mini-scheduler: the scheduler failed: {error}");
            ExitCode::FAILURE
        }
    }
}
