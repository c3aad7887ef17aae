//! `scale-run`: how long a cluster of these crates takes to run a Deployment
//! of R replicas over N hollow nodes, and what each component spends on it.
//!
//! It starts `mini-apiserver` (embedded store), `hollow-node --nodes N`,
//! `mini-scheduler` and `mini-controller-manager` as four processes from
//! `--bin-dir` (by default the folder it runs from), on free loopback ports;
//! waits until the N nodes are Ready; creates a Deployment of one replica and
//! waits for its pod to run; then scales it to R (as `kubectl scale` does,
//! through the scale subresource) and times, from that write, until R pods are
//! Running on the nodes. It prints the time and, per process, the CPU seconds
//! spent during the scale-up and the resident memory at its end (`VmRSS`) and
//! at its most (`VmHWM`); then stops the processes it started, by their PIDs.
//!
//! ```text
//! cargo build --release -p stage5-apiserver -p stage6-controllers -p scale-run
//! target/release/scale-run --nodes 100 --replicas 1000
//! ```
//!
//! Everything is bounded by `--timeout`: a run that does not finish in time
//! stops every process and fails.

use std::collections::HashMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};
use workspace_allocator as _;

use clap::Parser;
use futures::{StreamExt as _, TryStreamExt as _};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Node, Pod};
use kube::ResourceExt as _;
use kube::api::{
    Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use tokio::sync::mpsc;
use watch_fanout::{read_cpu_seconds, read_status_kib};

/// Times a Deployment's scale-up over hollow nodes, with each component's CPU and memory.
#[derive(Debug, Parser)]
#[command(name = "scale-run", version, about)]
struct Args {
    /// The hollow nodes.
    #[arg(long, default_value_t = 100)]
    nodes: u32,
    /// The replicas the Deployment is scaled to.
    #[arg(long, default_value_t = 1000)]
    replicas: u32,
    /// Where `mini-apiserver`, `mini-controller-manager`, `mini-scheduler` and
    /// `hollow-node` are [default: the folder of this binary].
    #[arg(long, value_name = "DIR")]
    bin_dir: Option<PathBuf>,
    /// The most the whole run may take, in seconds.
    #[arg(long, default_value_t = 600)]
    timeout: u64,
}

/// One component this run started.
struct Process {
    name: &'static str,
    child: Child,
}

impl Process {
    /// Starts `bin_dir/name ARGS`; its output lines go to `lines`, tagged.
    fn start(
        bin_dir: &Path,
        name: &'static str,
        args: &[String],
        lines: &mpsc::UnboundedSender<(&'static str, String)>,
    ) -> Result<Self, String> {
        let path = bin_dir.join(name);
        let mut child = Command::new(&path)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|error| format!("cannot start {}: {error}", path.display()))?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let tx = lines.clone();
        std::thread::spawn(move || {
            // Read to the end, whoever still listens.
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send((name, line));
            }
        });
        Ok(Process { name, child })
    }

    fn pid(&self) -> u32 {
        self.child.id()
    }

    /// SIGINT, then the exit; a process that does not stop within 10 s is killed.
    fn stop(mut self) {
        let pid = self.pid().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// The URL in a `mini-apiserver serving on URL` line.
fn serving_url(line: &str) -> Option<&str> {
    line.strip_prefix("mini-apiserver serving on ")
        .map(str::trim)
}

/// Whether a node reports `Ready=True`.
fn node_ready(node: &Node) -> bool {
    node.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|c| c.iter().any(|c| c.type_ == "Ready" && c.status == "True"))
}

/// Whether a pod is Running on a node and not being deleted.
fn pod_running(pod: &Pod) -> bool {
    pod.metadata.deletion_timestamp.is_none()
        && pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_ref())
            .is_some()
        && pod.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Running")
}

/// Follows `api` (a list, then a watch) until `done` holds for the objects.
async fn follow<K>(
    api: &Api<K>,
    params: ListParams,
    done: impl Fn(&HashMap<String, K>) -> bool,
) where
    K: kube::Resource
        + Clone
        + serde::de::DeserializeOwned
        + std::fmt::Debug
        + Send
        + 'static,
{
    loop {
        let Ok(list) = api.list(&params).await else {
            // The server is busy: try again shortly (the run's timeout bounds it).
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut objects: HashMap<String, K> =
            list.items.into_iter().map(|o| (o.name_any(), o)).collect();
        if done(&objects) {
            return;
        }
        let version = list.metadata.resource_version.unwrap_or_default();
        let mut watch = WatchParams::default().timeout(290);
        watch.label_selector = params.label_selector.clone();
        let Ok(events) = api.watch(&watch, &version).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let mut events = events.boxed();
        while let Ok(Some(event)) = events.try_next().await {
            match event {
                WatchEvent::Added(o) | WatchEvent::Modified(o) => {
                    objects.insert(o.name_any(), o);
                }
                WatchEvent::Deleted(o) => {
                    objects.remove(&o.name_any());
                }
                WatchEvent::Bookmark(_) => {}
                WatchEvent::Error(_) => break,
            }
            if done(&objects) {
                return;
            }
        }
    }
}

/// CPU seconds and memory of one process.
struct Usage {
    cpu: f64,
    rss_mib: f64,
    peak_mib: f64,
}

fn usage(pid: u32, cpu_before: f64) -> Usage {
    let mib = |field| {
        read_status_kib(pid, field).map_or(f64::NAN, |kib| kib as f64 / 1024.0)
    };
    Usage {
        cpu: read_cpu_seconds(Some(pid)).map_or(f64::NAN, |cpu| cpu - cpu_before),
        rss_mib: mib("VmRSS"),
        peak_mib: mib("VmHWM"),
    }
}

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match workspace_allocator::runtime() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("scale-run: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    let bin_dir = args.bin_dir.clone().or_else(|| {
        std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(Path::to_path_buf))
    });
    let Some(bin_dir) = bin_dir else {
        eprintln!(
            "scale-run: no --bin-dir, and the folder of this binary is unknown"
        );
        return ExitCode::FAILURE;
    };
    let (tx, lines) = mpsc::unbounded_channel();
    let mut processes = Vec::new();
    let outcome = runtime.block_on(async {
        tokio::time::timeout(
            Duration::from_secs(args.timeout),
            run(&args, &bin_dir, &tx, lines, &mut processes),
        )
        .await
        .unwrap_or_else(|_| {
            Err(format!("the run took longer than {} s", args.timeout))
        })
    });
    // The components in reverse order of their start: the server last.
    while let Some(process) = processes.pop() {
        process.stop();
    }
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("scale-run: {error}");
            ExitCode::FAILURE
        }
    }
}

async fn run(
    args: &Args,
    bin_dir: &Path,
    tx: &mpsc::UnboundedSender<(&'static str, String)>,
    mut lines: mpsc::UnboundedReceiver<(&'static str, String)>,
    processes: &mut Vec<Process>,
) -> Result<(), String> {
    let bind = ["--bind".to_string(), "127.0.0.1:0".to_string()];
    processes.push(Process::start(bin_dir, "mini-apiserver", &bind, tx)?);
    let url = loop {
        let (_, line) = lines.recv().await.ok_or("mini-apiserver ended")?;
        if let Some(url) = serving_url(&line) {
            break url.to_string();
        }
    };
    let master = ["--master".to_string(), url.clone()];
    let nodes = [
        &master[..],
        &["--nodes".to_string(), args.nodes.to_string()],
    ]
    .concat();
    processes.push(Process::start(bin_dir, "hollow-node", &nodes, tx)?);
    processes.push(Process::start(bin_dir, "mini-scheduler", &master, tx)?);
    let manager = [
        &master[..],
        &["--bind-address".to_string(), "127.0.0.1:0".to_string()],
    ]
    .concat();
    processes.push(Process::start(
        bin_dir,
        "mini-controller-manager",
        &manager,
        tx,
    )?);
    // Later output is not needed; the readers keep draining the pipes.
    drop(lines);

    let mut config =
        kube::Config::new(url.parse().map_err(|e| format!("{url}: {e}"))?);
    config.default_retry = false;
    let client = kube::Client::try_from(config).map_err(|e| e.to_string())?;
    let started = Instant::now();
    let wanted_nodes = args.nodes as usize;
    follow(
        &Api::<Node>::all(client.clone()),
        ListParams::default(),
        |nodes| nodes.values().filter(|n| node_ready(n)).count() >= wanted_nodes,
    )
    .await;
    println!(
        "{} nodes Ready after {:.1} s",
        args.nodes,
        started.elapsed().as_secs_f64()
    );

    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client.clone(), "default");
    let deployment: Deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "scale"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "scale"}},
            "template": {
                "metadata": {"labels": {"app": "scale"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]},
            },
        },
    }))
    .map_err(|e| e.to_string())?;
    deployments
        .create(&PostParams::default(), &deployment)
        .await
        .map_err(|e| format!("create the deployment: {e}"))?;
    let selector = ListParams::default().labels("app=scale");
    follow(&pods, selector.clone(), |pods| {
        pods.values().filter(|p| pod_running(p)).count() >= 1
    })
    .await;

    let cpu_before: Vec<f64> = processes
        .iter()
        .map(|p| read_cpu_seconds(Some(p.pid())).unwrap_or(f64::NAN))
        .collect();
    let scaling = Instant::now();
    deployments
        .patch_scale(
            "scale",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"spec": {"replicas": args.replicas}})),
        )
        .await
        .map_err(|e| format!("scale the deployment: {e}"))?;
    let wanted = args.replicas as usize;
    follow(&pods, selector, |pods| {
        pods.values().filter(|p| pod_running(p)).count() >= wanted
    })
    .await;
    let took = scaling.elapsed();
    println!(
        "scaled to {} replicas over {} nodes: all Running after {:.2} s",
        args.replicas,
        args.nodes,
        took.as_secs_f64()
    );
    println!();
    println!("| process | CPU during the scale-up | RSS after | peak RSS |");
    println!("|---|---|---|---|");
    for (process, before) in processes.iter().zip(cpu_before) {
        let usage = usage(process.pid(), before);
        println!(
            "| {} | {:.2} s ({:.0} % of a core) | {:.1} MiB | {:.1} MiB |",
            process.name,
            usage.cpu,
            100.0 * usage.cpu / took.as_secs_f64(),
            usage.rss_mib,
            usage.peak_mib
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_serving_line_names_the_url() {
        assert_eq!(
            serving_url("mini-apiserver serving on http://127.0.0.1:41234"),
            Some("http://127.0.0.1:41234")
        );
        assert_eq!(
            serving_url("  kubectl --server http://127.0.0.1:41234 get pods -A"),
            None
        );
    }

    #[test]
    fn a_pod_runs_only_on_a_node_and_until_deleted() {
        let mut pod: Pod = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {"nodeName": "hollow-node-0", "containers": []},
            "status": {"phase": "Running"},
        }))
        .expect("pod");
        assert!(pod_running(&pod));
        pod.metadata.deletion_timestamp =
            Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
                k8s_openapi::jiff::Timestamp::UNIX_EPOCH,
            ));
        assert!(!pod_running(&pod));
        pod.metadata.deletion_timestamp = None;
        pod.spec.as_mut().expect("spec").node_name = None;
        assert!(!pod_running(&pod));
    }
}
