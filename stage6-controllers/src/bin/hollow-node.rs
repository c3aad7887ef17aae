//! `hollow-node`: kubemark's hollow kubelets, N of them in one process. Each
//! registers a Node, renews its Lease in `kube-node-lease`, keeps its Ready
//! condition fresh, reports the pods bound to it Running (with an IP from its
//! pod CIDR and container statuses) and removes them when they are deleted.
//! Mirrors `cmd/kubemark` with `--morph=kubelet`. Runs until Ctrl-C or
//! SIGTERM, then stops every kubelet (the Nodes stay registered).
//!
//! ```text
//! cargo run -p stage6-controllers --bin hollow-node -- --server http://127.0.0.1:8080 --nodes 3
//! cargo run -p stage6-controllers --bin hollow-node -- --server http://127.0.0.1:8080 \
//!     --nodes 1 --first-index 3 --name-prefix big-node- --cpu 16 --memory 64Gi
//! kubectl --server http://127.0.0.1:8080 get nodes -o wide
//! ```

use std::process::ExitCode;
use workspace_allocator as _;

use clap::Parser;
use stage5_apiserver::app::server::shutdown_signal;
use stage6_controllers::app::client::{ClientOptions, start_component};
use stage6_controllers::kubemark::HollowNodeOptions;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// kubemark's hollow kubelets.
#[derive(Debug, Parser)]
#[command(name = "hollow-node", version, about)]
struct Args {
    #[command(flatten)]
    client: ClientOptions,
    /// How many hollow nodes to run.
    #[arg(long, default_value_t = 1)]
    nodes: u32,
    #[command(flatten)]
    node: HollowNodeOptions,
    /// Log filter, as `RUST_LOG` (e.g. `info`, `stage6_controllers=debug`).
    #[arg(long, default_value = "info")]
    log: String,
}

fn main() -> ExitCode {
    match workspace_allocator::runtime() {
        Ok(runtime) => runtime.block_on(run()),
        Err(error) => {
            eprintln!("hollow-node: cannot start the runtime: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> ExitCode {
    let args = Args::parse();
    let client = match start_component("hollow-node", &args.client, &args.log).await
    {
        Ok(client) => client,
        Err(code) => return code,
    };
    if args.node.first_index.checked_add(args.nodes).is_none() {
        eprintln!("hollow-node: --first-index plus --nodes is too large");
        return ExitCode::from(2);
    }
    let kubelets = match args.node.kubelets(&client, args.nodes) {
        Ok(kubelets) => kubelets,
        Err(error) => {
            eprintln!("hollow-node: {error}");
            return ExitCode::from(2);
        }
    };
    let shutdown = CancellationToken::new();
    let tasks = TaskTracker::new();
    for kubelet in kubelets {
        tasks.spawn(kubelet.run(shutdown.clone()));
    }
    tracing::info!(nodes = args.nodes, "hollow kubelets started");
    shutdown_signal().await;
    tracing::info!("shutting down");
    shutdown.cancel();
    tasks.close();
    tasks.wait().await;
    ExitCode::SUCCESS
}
