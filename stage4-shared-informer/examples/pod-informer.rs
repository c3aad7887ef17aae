//! A pod informer against a real API server: a factory over kube-client, two
//! handlers (one printing every event, one resyncing every 10 s), and a namespaced
//! lister query every few seconds. Stop it with Ctrl-C.
//!
//! ```text
//! cargo run -p stage4-shared-informer --example pod-informer                      # kubeconfig
//! cargo run -p stage4-shared-informer --example pod-informer -- --server http://127.0.0.1:8080
//! ```
//!
//! Options: `--server URL` (plain http, no auth: for stage 5's server), `--namespace
//! NS` for the lister query (default `default`).

use std::sync::Arc;
use std::time::Duration;
use workspace_allocator as _;

use k8s_openapi::api::core::v1::Pod;
use stage3_reflector::KubeListerWatcher;
use stage4_shared_informer::{
    DeletedObject, KubeSource, ResourceEventHandler, ResourceEventHandlerFuncs,
    SharedInformerFactory, parse_label_selector,
};
use tokio_util::sync::CancellationToken;

fn key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}

struct PrintEverything;

impl ResourceEventHandler<Pod> for PrintEverything {
    fn on_add(&self, obj: &Arc<Pod>, is_in_initial_list: bool) {
        let initial = if is_in_initial_list {
            " (initial list)"
        } else {
            ""
        };
        println!("ADD    {}{initial}", key(obj));
    }
    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        let phase = |p: &Pod| {
            p.status
                .as_ref()
                .and_then(|s| s.phase.clone())
                .unwrap_or_default()
        };
        println!(
            "UPDATE {} rv {} phase {}",
            key(new),
            new.metadata.resource_version.as_deref().unwrap_or(""),
            if phase(old) == phase(new) {
                phase(new)
            } else {
                format!("{} -> {}", phase(old), phase(new))
            }
        );
    }
    fn on_delete(&self, obj: &DeletedObject<Pod>) {
        match obj {
            DeletedObject::Object(pod) => println!("DELETE {}", key(pod)),
            DeletedObject::Tombstone(t) => println!("DELETE {} (tombstone)", t.key),
        }
    }
}

/// A client for informers: kube's own retry layer off, so 429 and 504 reach the
/// Reflector.
async fn client(
    server: Option<String>,
) -> Result<kube::Client, Box<dyn std::error::Error>> {
    let config = match server {
        Some(url) => kube::Config::new(url.parse()?),
        None => kube::Config::infer().await?,
    };
    Ok(KubeListerWatcher::<Pod>::client(config)?)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let mut args = std::env::args().skip(1);
    let (mut server, mut namespace) = (None, "default".to_string());
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--server" => server = args.next(),
            "--namespace" => namespace = args.next().unwrap_or(namespace),
            other => {
                return Err(format!(
                    "unknown argument {other:?}; see the file's docs"
                )
                .into());
            }
        }
    }
    let factory = SharedInformerFactory::new(
        KubeSource::new(client(server).await?),
        Duration::ZERO,
    );
    let pods = factory.pods();
    pods.informer().add_event_handler(PrintEverything)?;
    pods.informer().add_event_handler_with_resync_period(
        ResourceEventHandlerFuncs::<Pod>::new().update_func(|old, new| {
            if old.metadata.resource_version == new.metadata.resource_version {
                println!("RESYNC {}", key(new));
            }
        }),
        Duration::from_secs(10),
    )?;
    factory.start();
    let stop = CancellationToken::new();
    println!("synced: {:?}", factory.wait_for_cache_sync(&stop).await);

    let lister = pods.lister();
    let everything = parse_label_selector("")?;
    let mut ticker = tokio::time::interval(Duration::from_secs(5));
    loop {
        tokio::select! {
            _ = tokio::signal::ctrl_c() => break,
            _ = ticker.tick() => {
                let in_ns = lister.namespaced(&namespace).list(&everything);
                println!("lister: {} pod(s) in {namespace}, {} in all", in_ns.len(), lister.list(&everything).len());
            }
        }
    }
    factory.shutdown().await;
    Ok(())
}
