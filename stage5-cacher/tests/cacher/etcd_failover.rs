//! Failover over a three-member etcd cluster ([`EtcdCluster`]): a Storage and its Cacher
//! over all three endpoints keep writing while a follower dies, and then, with the
//! follower back, while the leader dies. Every write eventually succeeds (the
//! writer retries as an apiserver client retries a 5xx); the client sends nothing
//! to the dead member twice (clientv3's retry of a request that never left); the
//! Cacher's Reflector relists and rewatches after its etcd watch ends, so its
//! list equals etcd's, and a consumer that resumes its watch from the last
//! resource version it saw receives every write.
//!
//! Prints the failed-write window (from the kill to the first write that
//! succeeded after it) for the follower and for the leader.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use apimachinery::apis::meta::v1::{ListOptions, WatchOptions};
use apimachinery::watch::WatchEvent;
use futures::StreamExt;
use stage5_cacher::{Cacher, CacherConfig};
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::kv::{EtcdKv, Kv};
use stage5_storage::testing::EtcdCluster;
use stage5_storage::{
    Object, ResourceInfo, SelectionPredicate, Storage, StorageError, list_prefix,
    object_key,
};
use tokio::sync::mpsc;

/// The whole scenario must end within this.
const SCENARIO_TIMEOUT: Duration = Duration::from_secs(45);
/// How long one write attempt may take before the writer gives up on it.
const ATTEMPT_TIMEOUT: Duration = Duration::from_secs(5);

/// What the writer reports: each write that succeeded, with when.
struct Written {
    name: String,
    resource_version: String,
    at: Instant,
}

/// Creates `pod-0`, `pod-1`, … one after another; retries each until it succeeds
/// (an attempt whose outcome was unknown may have created it: then the retry
/// finds it already there and reads it back). Counts the failed attempts.
async fn writer(
    store: Arc<Cacher>,
    written: mpsc::UnboundedSender<Written>,
    stop: tokio_util::sync::CancellationToken,
) -> usize {
    let mut failures = 0;
    for i in 0.. {
        let name = format!("pod-{i}");
        let key = object_key(&ResourceInfo::PODS, Some("ns"), &name);
        loop {
            if stop.is_cancelled() {
                return failures;
            }
            let obj = Object::new(&ResourceInfo::PODS, Some("ns"), &name);
            let attempt = tokio::time::timeout(
                ATTEMPT_TIMEOUT,
                store.create(key.clone(), obj),
            );
            let created = match attempt.await {
                Ok(Ok(created)) => Some(created),
                Ok(Err(StorageError::AlreadyExists { .. })) => {
                    store.get(key.clone()).await.ok()
                }
                Ok(Err(_)) | Err(_) => None,
            };
            match created {
                Some(created) => {
                    let _ = written.send(Written {
                        name: name.clone(),
                        resource_version: created.resource_version().to_string(),
                        at: Instant::now(),
                    });
                    break;
                }
                None => {
                    failures += 1;
                    // A client's backoff before retrying a failed request.
                    tokio::time::sleep(Duration::from_millis(10)).await;
                }
            }
        }
    }
    failures
}

/// Watches the Cacher from `"0"` and, each time its watch ends, resumes from the
/// last resource version it saw (as an informer does). Sends every object's name
/// and resource version.
async fn consumer(
    cacher: Arc<Cacher>,
    seen: mpsc::UnboundedSender<(String, String)>,
    stop: tokio_util::sync::CancellationToken,
) -> usize {
    let prefix = list_prefix(&ResourceInfo::PODS, Some("ns"));
    let mut resource_version = "0".to_string();
    let mut restarts = 0;
    while !stop.is_cancelled() {
        let options = WatchOptions {
            resource_version: resource_version.clone(),
            ..WatchOptions::default()
        };
        let watch = cacher
            .watch(prefix.clone(), options, SelectionPredicate::default())
            .await;
        let Ok(mut watch) = watch else {
            // The cache is relisting: not ready yet.
            tokio::time::sleep(Duration::from_millis(20)).await;
            continue;
        };
        loop {
            let event = tokio::select! {
                event = watch.next() => event,
                () = stop.cancelled() => return restarts,
            };
            match event {
                Some(Ok(WatchEvent::Added(o) | WatchEvent::Modified(o))) => {
                    resource_version = o.resource_version().to_string();
                    let _ =
                        seen.send((o.name().to_string(), resource_version.clone()));
                }
                Some(Ok(WatchEvent::Bookmark(b))) => {
                    resource_version = b.resource_version.clone();
                }
                Some(Ok(_)) | Some(Err(_)) | None => break,
            }
        }
        restarts += 1;
    }
    restarts
}

/// Waits (bounded) until a write that started after `since` has succeeded; returns
/// the window from `since` to it.
async fn first_success_after(
    written: &mut mpsc::UnboundedReceiver<Written>,
    all: &mut Vec<Written>,
    since: Instant,
) -> Duration {
    loop {
        let w = tokio::time::timeout(Duration::from_secs(20), written.recv())
            .await
            .expect("a write succeeds within 20 s of the kill")
            .expect("the writer runs");
        let at = w.at;
        all.push(w);
        if at > since {
            return at - since;
        }
    }
}

async fn successes(
    written: &mut mpsc::UnboundedReceiver<Written>,
    all: &mut Vec<Written>,
    n: usize,
) {
    for _ in 0..n {
        let w = tokio::time::timeout(Duration::from_secs(20), written.recv())
            .await
            .expect("writes succeed")
            .expect("the writer runs");
        all.push(w);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_and_watches_survive_the_death_of_any_one_of_three_members() {
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if !stage5_storage::testing::etcd_available() {
        assert!(!ci, "`etcd` is not on PATH and CI=true");
        eprintln!("SKIPPED: `etcd` is not on PATH");
        return;
    }
    tokio::time::timeout(SCENARIO_TIMEOUT, scenario())
        .await
        .expect("the failover scenario ends within 45 s");
}

async fn scenario() {
    let mut cluster = tokio::task::spawn_blocking(EtcdCluster::start)
        .await
        .unwrap()
        .expect("a three-member etcd cluster starts");
    let urls: Vec<String> = cluster.client_urls();
    let kv: Arc<dyn Kv> = Arc::new(EtcdKv::connect(&urls).await.unwrap());
    let store = Etcd3Store::new(Arc::clone(&kv), ResourceInfo::PODS);
    let cacher = Cacher::new(store.clone(), CacherConfig::default());
    assert!(cacher.wait_ready(Duration::from_secs(10)).await);

    let stop = tokio_util::sync::CancellationToken::new();
    let stop_consumer = tokio_util::sync::CancellationToken::new();
    let (written_tx, mut written) = mpsc::unbounded_channel();
    let (seen_tx, mut seen) = mpsc::unbounded_channel();
    let writer = tokio::spawn(writer(Arc::clone(&cacher), written_tx, stop.clone()));
    let consumer = tokio::spawn(consumer(
        Arc::clone(&cacher),
        seen_tx,
        stop_consumer.clone(),
    ));
    let mut all = Vec::new();
    successes(&mut written, &mut all, 20).await;

    // A follower dies.
    let leader = cluster.leader().expect("the cluster has a leader");
    let follower = (leader + 1) % 3;
    let killed = Instant::now();
    cluster.members[follower].kill();
    let follower_window = first_success_after(&mut written, &mut all, killed).await;
    successes(&mut written, &mut all, 20).await;

    // It comes back; then the leader dies.
    cluster.start_member(follower).unwrap();
    tokio::task::block_in_place(|| cluster.wait_healthy(follower)).unwrap();
    successes(&mut written, &mut all, 10).await;
    let leader = cluster.leader().expect("the cluster has a leader");
    let killed = Instant::now();
    cluster.members[leader].kill();
    let leader_window = first_success_after(&mut written, &mut all, killed).await;
    successes(&mut written, &mut all, 20).await;

    stop.cancel();
    let failures = writer.await.unwrap();
    while let Ok(w) = written.try_recv() {
        all.push(w);
    }

    // The Cacher's list equals etcd's.
    let prefix = list_prefix(&ResourceInfo::PODS, Some("ns"));
    let names = |items: &[Arc<Object>]| -> BTreeMap<String, String> {
        items
            .iter()
            .map(|o| (o.name().to_string(), o.resource_version().to_string()))
            .collect()
    };
    let in_etcd = store
        .get_list(
            prefix.clone(),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .unwrap();
    let in_etcd = names(&in_etcd.items);
    for w in &all {
        assert_eq!(
            in_etcd.get(&w.name),
            Some(&w.resource_version),
            "{}",
            w.name
        );
    }
    // The newest version as a number: as strings, "9" sorts after "86", and a
    // list at "9" may be answered before the cache has the last writes.
    let newest = in_etcd
        .values()
        .filter_map(|rv| rv.parse::<u64>().ok())
        .max()
        .unwrap_or_default();
    let latest = ListOptions {
        resource_version: newest.to_string(),
        ..ListOptions::default()
    };
    let cached = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Ok(list) = cacher
                .get_list(
                    prefix.clone(),
                    latest.clone(),
                    SelectionPredicate::default(),
                )
                .await
            {
                return list;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the Cacher catches up with etcd");
    assert_eq!(names(&cached.items), in_etcd, "the Cacher's list is etcd's");

    // The watching consumer received every write.
    let mut received = BTreeMap::new();
    let all_received = tokio::time::timeout(Duration::from_secs(10), async {
        while all
            .iter()
            .any(|w| received.get(&w.name) != Some(&w.resource_version))
        {
            let Some((name, rv)) = seen.recv().await else {
                return;
            };
            received.insert(name, rv);
        }
    });
    let _ = all_received.await;
    stop_consumer.cancel();
    let restarts = consumer.await.unwrap();
    for w in &all {
        assert_eq!(
            received.get(&w.name),
            Some(&w.resource_version),
            "{}",
            w.name
        );
    }
    cacher.stop().await;
    println!(
        "etcd failover: {} writes, {failures} failed attempts; failed-write window \
         {follower_window:?} after killing a follower, {leader_window:?} after \
         killing the leader; the consumer's watch restarted {restarts} times",
        all.len()
    );
}
