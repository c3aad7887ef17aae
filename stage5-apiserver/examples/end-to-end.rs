//! The project's main job, end to end on one machine: stage 5's `mini-apiserver`
//! (embedded store, watch cache on) on a free loopback port, and stage 4's shared
//! informer watching it through kube-client and stage 3's `KubeListerWatcher`, with
//! two handlers.
//!
//! ```text
//! cargo run -p stage5-apiserver --example end-to-end
//! ```
//!
//! The story: one pod exists before the informer starts (an initial-list add); then
//! two pods are created, one relabelled, one annotated and one deleted, through
//! kube-client. Each handler prints what it sees, labelled with its name. At the end
//! the informer's cache is printed next to the server's list, and the program exits
//! 0 when they match and 1 when they do not.
//!
//! Everything is bounded: each act waits at most [`ACT_TIMEOUT`] for both handlers,
//! the whole story at most [`STORY_TIMEOUT`], and the server is shut down gracefully
//! at the end either way.
//!
//! The data path of every event printed here:
//!
//! ```text
//! kube-client POST/PATCH/DELETE → mini-apiserver → etcd3 store → watch cache → cacheWatcher
//!   → HTTP watch → kube-client → Reflector → DeltaFIFO → Indexer → processorListener → handler
//! ```

use std::collections::BTreeMap;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;
use workspace_allocator as _;

use k8s_openapi::api::core::v1::Pod;
use kube::Client;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;
use stage3_reflector::KubeListerWatcher;
use stage4_shared_informer::{
    DeletedObject, KubeSource, ResourceEventHandler, SharedInformerFactory,
    parse_label_selector,
};
use stage5_apiserver::{Server, ServerConfig};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long each act may take before the demo gives up.
const ACT_TIMEOUT: Duration = Duration::from_secs(5);
/// How long the whole story may take.
const STORY_TIMEOUT: Duration = Duration::from_secs(15);
/// How long shutting the informer and the server down may take.
const SHUTDOWN_TIMEOUT: Duration = Duration::from_secs(5);
/// The namespace the story plays in.
const NAMESPACE: &str = "default";

type BoxError = Box<dyn std::error::Error + Send + Sync>;

fn pod(name: &str, app: &str) -> Result<Pod, BoxError> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": {"app": app}},
        "spec": {"containers": [{"name": "main", "image": "nginx:1.27"}]},
    }))?)
}

fn key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}

fn rv(pod: &Pod) -> &str {
    pod.metadata.resource_version.as_deref().unwrap_or("")
}

fn app(pod: &Pod) -> &str {
    pod.metadata
        .labels
        .as_ref()
        .and_then(|labels| labels.get("app"))
        .map_or("", String::as_str)
}

/// Prints every notification with its handler's name, and reports it so each act can
/// wait for both handlers.
struct Printer {
    name: &'static str,
    seen: mpsc::UnboundedSender<()>,
}

impl ResourceEventHandler<Pod> for Printer {
    fn on_add(&self, obj: &Arc<Pod>, is_in_initial_list: bool) {
        let initial = if is_in_initial_list {
            " (initial list)"
        } else {
            ""
        };
        println!(
            "   [{}] ADD    {} app={} rv={}{initial}",
            self.name,
            key(obj),
            app(obj),
            rv(obj)
        );
        let _ = self.seen.send(());
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        println!(
            "   [{}] UPDATE {} app={} rv {} -> {}",
            self.name,
            key(new),
            app(new),
            rv(old),
            rv(new)
        );
        let _ = self.seen.send(());
    }

    fn on_delete(&self, obj: &DeletedObject<Pod>) {
        match obj {
            DeletedObject::Object(pod) => {
                println!("   [{}] DELETE {} rv={}", self.name, key(pod), rv(pod));
            }
            DeletedObject::Tombstone(t) => {
                println!("   [{}] DELETE {} (tombstone)", self.name, t.key);
            }
        }
        let _ = self.seen.send(());
    }
}

/// Waits (bounded) until the handlers together have reported `n` more notifications.
async fn wait_for(
    seen: &mut mpsc::UnboundedReceiver<()>,
    n: usize,
    act: &str,
) -> Result<(), BoxError> {
    for _ in 0..n {
        match tokio::time::timeout(ACT_TIMEOUT, seen.recv()).await {
            Ok(Some(())) => {}
            Ok(None) => return Err(format!("{act}: the handlers went away").into()),
            Err(_) => {
                return Err(format!(
                    "{act}: the handlers did not see every event within {ACT_TIMEOUT:?}"
                )
                .into());
            }
        }
    }
    Ok(())
}

/// `namespace/name → resourceVersion`, sorted.
fn state<'a>(pods: impl IntoIterator<Item = &'a Pod>) -> BTreeMap<String, String> {
    pods.into_iter()
        .map(|p| (key(p), rv(p).to_string()))
        .collect()
}

/// The story, from the first write to the final comparison; returns whether the
/// informer's cache matched the server's list.
async fn story(
    url: &str,
    factory: &SharedInformerFactory<KubeSource>,
    seen: &mut mpsc::UnboundedReceiver<()>,
) -> Result<bool, BoxError> {
    let writer = Client::try_from(kube::Config::new(url.parse()?))?;
    let pods: Api<Pod> = Api::namespaced(writer, NAMESPACE);
    let post = PostParams::default();
    let patch = PatchParams::default();

    println!(
        "-- act 1: web-0 exists before the informer starts; start it and wait for sync"
    );
    pods.create(&post, &pod("web-0", "web")?).await?;
    factory.start();
    let stop = CancellationToken::new();
    let synced =
        tokio::time::timeout(ACT_TIMEOUT, factory.wait_for_cache_sync(&stop)).await;
    match synced {
        Ok(status) if status.values().all(|synced| *synced) => {
            println!("   synced: {status:?}");
        }
        _ => return Err("the informer did not sync in time".into()),
    }
    wait_for(seen, 2, "act 1").await?;

    println!("-- act 2: create web-1 and db-0");
    pods.create(&post, &pod("web-1", "web")?).await?;
    pods.create(&post, &pod("db-0", "db")?).await?;
    wait_for(seen, 2 * 2, "act 2").await?;

    println!(
        "-- act 3: relabel web-0 (app=canary) and annotate db-0 (JSON merge patches)"
    );
    pods.patch(
        "web-0",
        &patch,
        &Patch::Merge(json!({"metadata": {"labels": {"app": "canary"}}})),
    )
    .await?;
    pods.patch(
        "db-0",
        &patch,
        &Patch::Merge(json!({"metadata": {"annotations": {"backup": "nightly"}}})),
    )
    .await?;
    wait_for(seen, 2 * 2, "act 3").await?;

    println!("-- act 4: delete web-1");
    pods.delete("web-1", &DeleteParams::default()).await?;
    wait_for(seen, 2, "act 4").await?;

    println!("-- the informer's cache next to the server's list");
    let server_list = pods.list(&ListParams::default()).await?;
    let server = state(&server_list.items);
    let everything = parse_label_selector("")?;
    let cached: Vec<Arc<Pod>> = factory
        .pods()
        .lister()
        .namespaced(NAMESPACE)
        .list(&everything);
    let informer = state(cached.iter().map(|p| p.as_ref()));
    println!("   {:<16} {:>14} {:>14}", "pod", "informer rv", "server rv");
    let keys: std::collections::BTreeSet<&String> =
        server.keys().chain(informer.keys()).collect();
    for key in keys {
        let show =
            |m: &BTreeMap<String, String>| m.get(key).cloned().unwrap_or("-".into());
        println!(
            "   {:<16} {:>14} {:>14}",
            key,
            show(&informer),
            show(&server)
        );
    }
    println!(
        "   server list resourceVersion: {}",
        server_list.metadata.resource_version.unwrap_or_default()
    );
    Ok(informer == server)
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();

    // A free loopback port, the embedded store, the watch cache on.
    let config = ServerConfig::default().bind(([127, 0, 0, 1], 0).into());
    let server = match Server::start(config).await {
        Ok(server) => server,
        Err(error) => {
            eprintln!("end-to-end: cannot start the server: {error}");
            return ExitCode::FAILURE;
        }
    };
    let url = server.url();
    println!("-- mini-apiserver (embedded store, watch cache on) at {url}");

    let outcome = run(&url).await;
    match tokio::time::timeout(SHUTDOWN_TIMEOUT, server.shutdown()).await {
        Ok(()) => println!("-- server shut down"),
        Err(_) => eprintln!(
            "end-to-end: the server did not shut down within {SHUTDOWN_TIMEOUT:?}"
        ),
    }
    match outcome {
        Ok(true) => {
            println!("-- MATCH: the informer's cache equals the server's state");
            ExitCode::SUCCESS
        }
        Ok(false) => {
            println!(
                "-- MISMATCH: the informer's cache differs from the server's state"
            );
            ExitCode::FAILURE
        }
        Err(error) => {
            eprintln!("end-to-end: {error}");
            ExitCode::FAILURE
        }
    }
}

/// Builds the informer with its two handlers, plays the story (bounded), and stops
/// the informer.
async fn run(url: &str) -> Result<bool, BoxError> {
    // Reflectors need kube's own retries off, so that 429 and 504 reach them.
    let client = KubeListerWatcher::<Pod>::client(kube::Config::new(url.parse()?))?;
    let factory =
        SharedInformerFactory::builder(KubeSource::new(client), Duration::ZERO)
            .namespace(NAMESPACE)
            .build();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    // Two handlers on one informer: one list and one watch serve both.
    let informer = factory.pods().informer();
    informer.add_event_handler(Printer {
        name: "printer",
        seen: seen_tx.clone(),
    })?;
    informer.add_event_handler(Printer {
        name: "auditor",
        seen: seen_tx,
    })?;

    let outcome =
        match tokio::time::timeout(STORY_TIMEOUT, story(url, &factory, &mut seen))
            .await
        {
            Ok(outcome) => outcome,
            Err(_) => {
                Err(format!("the story did not finish within {STORY_TIMEOUT:?}")
                    .into())
            }
        };
    if tokio::time::timeout(SHUTDOWN_TIMEOUT, factory.shutdown())
        .await
        .is_err()
    {
        eprintln!(
            "end-to-end: the informer did not stop within {SHUTDOWN_TIMEOUT:?}"
        );
    } else {
        println!("-- informer stopped; every task it started has ended");
    }
    outcome
}
