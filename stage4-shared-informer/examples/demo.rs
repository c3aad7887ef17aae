//! The in-process demo: a shared informer factory over stage 3's scriptable fake API
//! server, playing a short story while two handlers print what they see. Needs no
//! cluster.
//!
//! Run with `cargo run -p stage4-shared-informer --example demo`.
//!
//! The story: three pods are listed; a pod is created, one relabelled and one
//! deleted; then the watch expires (410) while a pod is deleted and another changed
//! behind its back, so the informer relists and learns of the deletion through a
//! tombstone.

// ANCHOR: helpers
use std::sync::Arc;
use std::time::Duration;
use workspace_allocator as _;

use k8s_openapi::api::core::v1::Pod;
use stage3_reflector::{Error, FakeListerWatcher, WatchReply, expired_status};
use stage4_shared_informer::{
    DeletedObject, FakeSource, ResourceEventHandler, SharedInformerFactory,
    parse_label_selector,
};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn pod(namespace: &str, name: &str, app: &str) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.name = Some(name.into());
    pod.metadata.namespace = Some(namespace.into());
    pod.metadata.labels = Some([("app".to_string(), app.to_string())].into());
    pod
}

fn key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}

/// Waits until `rx` has received `n` more notifications (bounded).
async fn wait_for(
    rx: &mut mpsc::UnboundedReceiver<()>,
    n: usize,
) -> Result<(), String> {
    for _ in 0..n {
        tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .map_err(|_| {
                "the demo stalled: a handler did not see what it should".to_string()
            })?;
    }
    Ok(())
}
// ANCHOR_END: helpers

// ANCHOR: printer
/// Prints every notification, and counts them so the story can wait for each act.
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
        println!("[{}] ADD    {}{initial}", self.name, key(obj));
        let _ = self.seen.send(());
    }

    fn on_update(&self, old: &Arc<Pod>, new: &Arc<Pod>) {
        let rv = |p: &Pod| p.metadata.resource_version.clone().unwrap_or_default();
        if rv(old) == rv(new) {
            println!("[{}] RESYNC {}", self.name, key(new));
        } else {
            println!(
                "[{}] UPDATE {} (rv {} -> {})",
                self.name,
                key(new),
                rv(old),
                rv(new)
            );
        }
        let _ = self.seen.send(());
    }

    fn on_delete(&self, obj: &DeletedObject<Pod>) {
        match obj {
            DeletedObject::Object(pod) => {
                println!("[{}] DELETE {}", self.name, key(pod))
            }
            DeletedObject::Tombstone(t) => println!(
                "[{}] DELETE {} (missed while the watch was down: a tombstone)",
                self.name, t.key
            ),
        }
        let _ = self.seen.send(());
    }
}
// ANCHOR_END: printer

// ANCHOR: main_setup
#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let fake = FakeListerWatcher::<Pod>::new();
    for (ns, name, app) in [
        ("default", "web-0", "web"),
        ("default", "web-1", "web"),
        ("data", "db-0", "db"),
    ] {
        fake.add(pod(ns, name, app))?;
    }
    let source = FakeSource::new();
    source.insert(fake.clone());
    let factory = SharedInformerFactory::new(source, Duration::ZERO);
    let pods = factory.pods();

    // Two handlers on one informer: one list and one watch serve both.
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    pods.informer().add_event_handler(Printer {
        name: "printer",
        seen: seen_tx.clone(),
    })?;
    pods.informer().add_event_handler(Printer {
        name: "audit  ",
        seen: seen_tx,
    })?;

    println!("-- act 1: start the factory; the first list arrives as initial adds");
    factory.start();
    let synced = factory.wait_for_cache_sync(&CancellationToken::new()).await;
    println!("   synced: {synced:?}");
    wait_for(&mut seen, 2 * 3).await?;
    // ANCHOR_END: main_setup

    // ANCHOR: main_story
    println!("-- act 2: a pod is created, one relabelled, one deleted");
    fake.add(pod("default", "web-2", "web"))?;
    fake.modify(pod("default", "web-0", "canary"))?;
    fake.delete(pod("default", "web-1", "web"))?;
    wait_for(&mut seen, 2 * 3).await?;

    println!(
        "-- act 3: the watch expires (410) while db-0 is deleted \
         and web-2 changes unseen"
    );
    fake.push_watch_reply(WatchReply::Fail(Error::from_status(expired_status(
        "too old resource version",
    ))));
    fake.close_watches();
    fake.delete(pod("data", "db-0", "db"))?;
    fake.modify(pod("default", "web-2", "web"))?;
    // The relist brings web-0 unchanged (a resync, only for syncing handlers), web-2
    // updated and db-0's tombstone.
    wait_for(&mut seen, 2 * 3).await?;

    println!("-- the cache now, through a lister");
    let lister = pods.lister();
    let everything = parse_label_selector("")?;
    let mut keys: Vec<String> =
        lister.list(&everything).iter().map(|p| key(p)).collect();
    keys.sort();
    println!("   all pods:        {keys:?}");
    let web = parse_label_selector("app in (web, canary)")?;
    let mut web_keys: Vec<String> = lister
        .namespaced("default")
        .list(&web)
        .iter()
        .map(|p| key(p))
        .collect();
    web_keys.sort();
    println!("   default, app in (web, canary): {web_keys:?}");
    println!(
        "   lists and watches the fake served: {}",
        fake.calls().len()
    );

    factory.shutdown().await;
    println!("-- shut down; every informer task has ended");
    Ok(())
}
// ANCHOR_END: main_story
