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

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;
use workspace_allocator as _;

use clap::Parser;
use stage6_controllers::kubemark::{HollowKubelet, HollowKubeletConfig};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

mod common;

/// kubemark's hollow kubelets.
#[derive(Debug, Parser)]
#[command(name = "hollow-node", version, about)]
struct Args {
    /// The API server, plain HTTP without auth (stage 5's `mini-apiserver`).
    /// Without it, `--kubeconfig` or the usual kubeconfig is used.
    #[arg(long, value_name = "URL")]
    server: Option<String>,
    /// A kubeconfig file.
    #[arg(long, value_name = "FILE", conflicts_with = "server")]
    kubeconfig: Option<PathBuf>,
    /// How many hollow nodes to run.
    #[arg(long, default_value_t = 1)]
    nodes: u32,
    /// The nodes are named `<prefix><index>`.
    #[arg(long, default_value = "hollow-node-")]
    name_prefix: String,
    /// The first node's index (its pod CIDR is `10.244.<index>.0/24`): give
    /// each hollow-node process its own range.
    #[arg(long, default_value_t = 0)]
    first_index: u32,
    /// Each node's cpu capacity (a quantity: 4, 3500m).
    #[arg(long, default_value = "4")]
    cpu: String,
    /// Each node's memory capacity (8Gi, 16G).
    #[arg(long, default_value = "8Gi")]
    memory: String,
    /// Each node's pod capacity (`maxPods`).
    #[arg(long, default_value_t = 110)]
    pods: u32,
    /// Each node's ephemeral-storage capacity.
    #[arg(long, default_value = "100Gi")]
    ephemeral_storage: String,
    /// The kubelet version the nodes report.
    #[arg(long, default_value = "v1.36.0-mini")]
    kubelet_version: String,
    /// How often a node computes its status (`nodeStatusUpdateFrequency`).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = common::parse_duration)]
    node_status_update_frequency: Duration,
    /// The longest time between two status reports, the Ready heartbeat
    /// (`nodeStatusReportFrequency`).
    #[arg(long, value_name = "DURATION", default_value = "5m", value_parser = common::parse_duration)]
    node_status_report_frequency: Duration,
    /// How long a node Lease lasts (`nodeLeaseDurationSeconds`); it is renewed
    /// every quarter of that.
    #[arg(long, default_value_t = 40)]
    node_lease_duration_seconds: i32,
    /// From a pod's arrival on a node to its Running status.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = common::parse_duration)]
    pod_start_delay: Duration,
    /// The longest a deleted pod takes to stop (its grace period if shorter).
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = common::parse_duration)]
    pod_stop_delay: Duration,
    /// Log filter, as `RUST_LOG` (e.g. `info`, `stage6_controllers=debug`).
    #[arg(long, default_value = "info")]
    log: String,
}

impl Args {
    /// The configuration of the node with `index`.
    fn kubelet_config(&self, index: u32) -> HollowKubeletConfig {
        let renew = Duration::from_secs(
            u64::try_from(self.node_lease_duration_seconds).unwrap_or(40),
        ) / 4;
        HollowKubeletConfig::new(format!("{}{index}", self.name_prefix), index)
            .cpu(self.cpu.clone())
            .memory(self.memory.clone())
            .pods(self.pods)
            .ephemeral_storage(self.ephemeral_storage.clone())
            .kubelet_version(self.kubelet_version.clone())
            .node_lease(self.node_lease_duration_seconds, renew)
            .node_status_frequencies(
                self.node_status_update_frequency,
                self.node_status_report_frequency,
            )
            .pod_start_delay(self.pod_start_delay)
            .pod_stop_delay(self.pod_stop_delay)
    }
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
    common::init_tracing(&args.log);
    let client =
        match common::client(args.server.as_deref(), args.kubeconfig.as_ref()).await
        {
            Ok(client) => client,
            Err(error) => {
                eprintln!("hollow-node: {error}");
                return ExitCode::FAILURE;
            }
        };
    let Some(last) = args.first_index.checked_add(args.nodes) else {
        eprintln!("hollow-node: --first-index plus --nodes is too large");
        return ExitCode::from(2);
    };
    let mut kubelets = Vec::new();
    for index in args.first_index..last {
        match HollowKubelet::new(client.clone(), args.kubelet_config(index)) {
            Ok(kubelet) => kubelets.push(kubelet),
            Err(error) => {
                eprintln!("hollow-node: {error}");
                return ExitCode::from(2);
            }
        }
    }
    let shutdown = CancellationToken::new();
    let tasks = TaskTracker::new();
    for kubelet in kubelets {
        tasks.spawn(kubelet.run(shutdown.clone()));
    }
    tracing::info!(nodes = args.nodes, "hollow kubelets started");
    common::shutdown_signal().await;
    tracing::info!("shutting down");
    shutdown.cancel();
    tasks.close();
    tasks.wait().await;
    ExitCode::SUCCESS
}
