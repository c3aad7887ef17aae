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

use std::process::ExitCode;
use workspace_allocator as _;

use clap::Parser;
use stage5_apiserver::app::server::shutdown_signal;
use stage6_controllers::app::client::{ClientOptions, start_component};
use stage6_controllers::scheduler::{Scheduler, SchedulerOptions};
use tokio_util::sync::CancellationToken;

/// kube-scheduler at its simplest.
#[derive(Debug, Parser)]
#[command(name = "mini-scheduler", version, about)]
struct Args {
    #[command(flatten)]
    client: ClientOptions,
    #[command(flatten)]
    scheduler: SchedulerOptions,
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
    let client =
        match start_component("mini-scheduler", &args.client, &args.log).await {
            Ok(client) => client,
            Err(code) => return code,
        };
    let shutdown = CancellationToken::new();
    let scheduler = tokio::spawn(
        Scheduler::new(client, args.scheduler.config()).run(shutdown.clone()),
    );
    shutdown_signal().await;
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
