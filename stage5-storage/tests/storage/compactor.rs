//! The compactor (`etcd3/compact.rs`, apiserver's `pkg/storage/etcd3/compact.go`)
//! end to end: a watch from a revision it compacted away ends with 410, as
//! upstream's etcd3 watcher answers; and, with feature `etcd`, one compaction
//! through the compactor on a real etcd started by the test.

use std::sync::Arc;
use std::time::Duration;

use apimachinery::apis::meta::v1::WatchOptions;
use apimachinery::watch::WatchEvent;
use futures::StreamExt;
use serde_json::json;
use stage5_storage::Watch;
use stage5_storage::etcd3::{Compactor, Etcd3Store};
use stage5_storage::kv::{EmbeddedKv, Kv};
use stage5_storage::{Object, Preconditions, ResourceInfo, SelectionPredicate};
use stage5_storage::{list_prefix, object_key};
use tokio_util::sync::CancellationToken;

const WAIT: Duration = Duration::from_secs(10);

fn pod(name: &str, image: &str) -> Object {
    Object::new(&ResourceInfo::PODS, Some("default"), name)
        .with_data(json!({"spec": {"containers": [{"name": "c", "image": image}]}}))
}

fn key(name: &str) -> String {
    object_key(&ResourceInfo::PODS, Some("default"), name)
}

/// Creates `a`, then updates it: answers the created object's resourceVersion.
async fn create_and_update(store: &Etcd3Store) -> String {
    let created = store.create_object(key("a"), pod("a", "v1")).await.unwrap();
    let update: stage5_storage::UpdateFn = Box::new(|current: &Object| {
        let mut obj = current.clone();
        obj.data = json!({"spec": {"containers": [{"name": "c", "image": "v2"}]}});
        Ok(obj)
    });
    store
        .update_object(key("a"), Preconditions::default(), update)
        .await
        .unwrap();
    created.resource_version().to_string()
}

/// A watch of the pods from `resource_version`.
async fn watch_from(store: &Etcd3Store, resource_version: String) -> Watch<Object> {
    let options = WatchOptions {
        resource_version,
        ..WatchOptions::default()
    };
    store
        .watch_objects(
            list_prefix(&ResourceInfo::PODS, Some("default")),
            options,
            SelectionPredicate::default(),
        )
        .await
        .unwrap()
}

/// A watch of the pods from `resource_version`: its first event.
async fn first_event(
    store: &Etcd3Store,
    resource_version: String,
) -> WatchEvent<Object> {
    next(&mut watch_from(store, resource_version).await).await
}

async fn next(watch: &mut Watch<Object>) -> WatchEvent<Object> {
    match tokio::time::timeout(WAIT, watch.next()).await {
        Ok(Some(Ok(event))) => event,
        other => panic!("expected a watch event, got {other:?}"),
    }
}

/// Upstream's answer to a watch from a compacted revision (`interpretWatchError`):
/// an ERROR event, 410 Expired.
fn assert_too_old(event: &WatchEvent<Object>) {
    let WatchEvent::Error(status) = event else {
        panic!("expected an ERROR event, got {event:?}");
    };
    assert_eq!(status.code, Some(410), "{status:?}");
    assert_eq!(status.reason.as_deref(), Some("Expired"));
    assert_eq!(
        status.message.as_deref(),
        Some("The resourceVersion for the provided watch is too old.")
    );
}

#[tokio::test(start_paused = true)]
async fn compaction_by_the_compactor_ends_a_watch_from_before_it_with_410() {
    let embedded = Arc::new(EmbeddedKv::new());
    let kv: Arc<dyn Kv> = embedded.clone();
    let store = Etcd3Store::new(Arc::clone(&kv), ResourceInfo::PODS);
    let interval = Duration::from_secs(300);
    let shutdown = CancellationToken::new();
    let compactor = Compactor::start(Arc::clone(&kv), interval, &shutdown);
    let created = create_and_update(&store).await;
    // Round one (at 5 minutes) sets up the key; round two (at 10) compacts to the
    // revision round one saw, after both writes. The paused clock jumps there.
    let mut compacted = compactor.subscribe();
    tokio::time::timeout(3 * interval, compacted.wait_for(|revision| *revision > 0))
        .await
        .expect("compacted within two intervals")
        .expect("the compactor runs");
    let revision = compactor.compact_revision();
    assert_eq!(embedded.compacted_revision(), revision);
    assert!(revision > created.parse::<i64>().unwrap());

    assert_too_old(&first_event(&store, created).await);
    // From the compacted revision on, the watch works.
    let mut watch = watch_from(&store, revision.to_string()).await;
    store.create_object(key("b"), pod("b", "v1")).await.unwrap();
    let event = next(&mut watch).await;
    assert!(
        matches!(&event, WatchEvent::Added(b) if b.name() == "b"),
        "{event:?}"
    );
    compactor.stop().await;
}

#[cfg(feature = "etcd")]
#[tokio::test]
async fn compaction_through_the_compactor_on_real_etcd() {
    use stage5_storage::etcd3::compact::COMPACT_REV_KEY;
    use stage5_storage::kv::{EtcdKv, KvError, RangeRequest};
    use stage5_storage::testing::EtcdServer;

    let Some(server) = EtcdServer::start_or_skip(
        "compactor::compaction_through_the_compactor_on_real_etcd",
    ) else {
        return;
    };
    let kv: Arc<dyn Kv> = Arc::new(
        EtcdKv::connect([server.client_url()])
            .await
            .expect("connect to the test etcd"),
    );
    let store = Etcd3Store::new(Arc::clone(&kv), ResourceInfo::PODS);
    let created = create_and_update(&store).await;
    // Real time: a short interval, and a bounded wait for the compaction.
    let shutdown = CancellationToken::new();
    let compactor =
        Compactor::start(Arc::clone(&kv), Duration::from_millis(100), &shutdown);
    let mut compacted = compactor.subscribe();
    tokio::time::timeout(WAIT, compacted.wait_for(|revision| *revision > 0))
        .await
        .expect("compacted within the wait")
        .expect("the compactor runs");
    let revision = compactor.compact_revision();
    compactor.stop().await;

    // etcd agrees: reads before the revision are compacted, the key records it.
    let old = kv
        .range(RangeRequest::key(key("a")).at_revision(revision - 1))
        .await;
    assert!(matches!(old, Err(KvError::Compacted { .. })), "{old:?}");
    let record = kv.range(RangeRequest::key(COMPACT_REV_KEY)).await.unwrap();
    let record = record.kvs.first().expect("compact_rev_key exists");
    assert!(
        record.version >= 2,
        "at least the bootstrap and one compaction"
    );
    let stored: i64 = String::from_utf8_lossy(&record.value).parse().unwrap();
    assert!(stored >= revision);
    assert_too_old(&first_event(&store, created).await);
}
