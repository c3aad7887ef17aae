//! A pod informer against a real API server: a factory over kube-client, two
//! handlers (one printing every event, one resyncing every 10 s), and a namespaced
//! lister query every few seconds. Stop it with Ctrl-C.
//!
//! The factory has a default resync period (five minutes), so its informers resync
//! at all: on a factory built with zero, the 10 s request would be dropped. The
//! resync handler asks for 10 s before the informer starts, which lowers the
//! informer's check period to 10 s; the printing handler asks for none.
//!
//! ```text
//! cargo run -p stage4-shared-informer --example pod-informer                      # kubeconfig
//! cargo run -p stage4-shared-informer --example pod-informer -- --server http://127.0.0.1:8080
//! ```
//!
//! Options: `--server URL` (plain http, no auth: for stage 5's server), `--namespace
//! NS` for the lister query (default `default`), `--ui ADDR` to serve the
//! informer's live page at `http://ADDR/debug/ui` (e.g. `127.0.0.1:8081`).

use std::sync::Arc;
use std::time::Duration;
use workspace_allocator as _;

use clap::Parser;
use k8s_openapi::api::core::v1::Pod;
use stage3_reflector::KubeListerWatcher;
use stage4_shared_informer::debug_ui::InformerPage;
use stage4_shared_informer::{
    DeletedObject, InformerError, KubeSource, ListerWatcherSource,
    ResourceEventHandler, ResourceEventHandlerFuncs, SharedInformerFactory,
    parse_label_selector,
};
use tokio_util::sync::CancellationToken;

/// The factory's default resync period: what a handler added without a period of
/// its own gets. Any period above zero makes the informers resync at all.
const DEFAULT_RESYNC: Duration = Duration::from_secs(300);

/// The resync period the second handler asks for.
const RESYNC_EVERY: Duration = Duration::from_secs(10);

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

/// The factory, with a default resync period so that its informers resync.
fn factory<S: ListerWatcherSource>(source: S) -> SharedInformerFactory<S> {
    SharedInformerFactory::new(source, DEFAULT_RESYNC)
}

/// Registers the two handlers on the pod informer, before the factory starts: one
/// that prints every event and asks for no resync, and one that asks for a resync
/// every [`RESYNC_EVERY`] and calls `on_resync` for each pod it is resynced.
fn add_handlers<S: ListerWatcherSource>(
    factory: &SharedInformerFactory<S>,
    on_resync: impl Fn(&Pod) + Send + Sync + 'static,
) -> Result<(), InformerError> {
    let informer = factory.pods().informer();
    informer
        .add_event_handler_with_resync_period(PrintEverything, Duration::ZERO)?;
    informer.add_event_handler_with_resync_period(
        ResourceEventHandlerFuncs::<Pod>::new().update_func(move |old, new| {
            if old.metadata.resource_version == new.metadata.resource_version {
                on_resync(new);
            }
        }),
        RESYNC_EVERY,
    )?;
    Ok(())
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

/// A pod informer with two handlers and a lister query every 5 s.
#[derive(Debug, Parser)]
struct Args {
    /// The API server (plain http, no auth), e.g. `http://127.0.0.1:8080`;
    /// without it, the kubeconfig's.
    #[arg(long)]
    server: Option<String>,
    /// The namespace of the lister query.
    #[arg(long, default_value = "default")]
    namespace: String,
    /// Serve the informer's live page at `http://ADDR/debug/ui`.
    #[arg(long, value_name = "ADDR")]
    ui: Option<std::net::SocketAddr>,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let Args {
        server,
        namespace,
        ui,
    } = Args::parse();
    let factory = factory(KubeSource::new(client(server).await?));
    add_handlers(&factory, |pod| println!("RESYNC {}", key(pod)))?;
    let pods = factory.pods();
    factory.start();
    let stop = CancellationToken::new();
    if let Some(addr) = ui {
        let listener = tokio::net::TcpListener::bind(addr).await?;
        println!("live page: http://{}/debug/ui", listener.local_addr()?);
        let page = InformerPage::new().with("pods", Arc::new(pods.informer()));
        tokio::spawn(page.serve(listener, stop.clone()));
    }
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
    stop.cancel();
    factory.shutdown().await;
    Ok(())
}

/// The resync behaviour of this example's factory and handlers, over stage 3's fake
/// instead of a cluster, on a paused clock.
#[cfg(test)]
mod tests {
    use std::time::Duration;

    use k8s_openapi::api::core::v1::Pod;
    use stage3_reflector::FakeListerWatcher;
    use stage4_shared_informer::FakeSource;
    use tokio::sync::mpsc;
    use tokio_util::sync::CancellationToken;

    use super::{RESYNC_EVERY, add_handlers, factory, key};

    fn pod(name: &str) -> Pod {
        let mut pod = Pod::default();
        pod.metadata.name = Some(name.into());
        pod.metadata.namespace = Some("default".into());
        pod
    }

    /// The pods resynced within `wait`, sorted.
    async fn resynced_within(
        rx: &mut mpsc::UnboundedReceiver<String>,
        wait: Duration,
    ) -> Vec<String> {
        let deadline = tokio::time::Instant::now() + wait;
        let mut seen = Vec::new();
        while let Ok(Some(key)) = tokio::time::timeout_at(deadline, rx.recv()).await
        {
            seen.push(key);
        }
        seen.sort();
        seen
    }

    #[tokio::test(start_paused = true)]
    async fn the_resync_handler_is_resynced_every_10_s() {
        let pods = FakeListerWatcher::<Pod>::new();
        pods.add(pod("web-0")).unwrap();
        pods.add(pod("web-1")).unwrap();
        let source = FakeSource::new();
        source.insert(pods);
        let factory = factory(source);
        let (tx, mut rx) = mpsc::unbounded_channel();
        add_handlers(&factory, move |pod| {
            let _ = tx.send(key(pod));
        })
        .unwrap();
        let started = tokio::time::Instant::now();
        factory.start();
        // A bounded wait: an informer that never syncs fails the test instead of hanging it.
        let give_up = CancellationToken::new();
        let synced = tokio::select! {
            synced = factory.wait_for_cache_sync(&give_up) => synced,
            _ = tokio::time::sleep(RESYNC_EVERY) => panic!("the informers did not sync within {RESYNC_EVERY:?}"),
        };
        assert!(synced.values().all(|synced| *synced), "{synced:?}");

        // Nothing before the period is up, then every pod once per period.
        let early = RESYNC_EVERY - Duration::from_secs(1) - started.elapsed();
        assert_eq!(resynced_within(&mut rx, early).await, Vec::<String>::new());
        let both = vec!["default/web-0".to_string(), "default/web-1".to_string()];
        assert_eq!(resynced_within(&mut rx, Duration::from_secs(2)).await, both);
        assert_eq!(resynced_within(&mut rx, RESYNC_EVERY).await, both);

        factory.shutdown().await;
    }
}
