//! The Cacher end to end over the embedded store: EmbeddedKv → watchChan → Reflector
//! → watchCache → dispatch → cacheWatcher. The scenarios of upstream's
//! `cacher_test.go` and `cache_watcher_test.go`, in this crate's words; and, in
//! [`storage_contract`], apiserver's storage contract suite on the Cacher.

#[cfg(feature = "etcd")]
#[path = "cacher/etcd_failover.rs"]
mod etcd_failover;
#[path = "cacher/large_lists.rs"]
mod large_lists;
#[path = "cacher/storage_contract.rs"]
mod storage_contract;

use std::sync::Arc;
use std::time::Duration;

use apimachinery::apis::meta::v1::{
    ListOptions, ResourceVersionMatch, WatchOptions,
};
use apimachinery::watch::WatchEvent;
use futures::StreamExt;
use serde_json::json;
use stage5_cacher::{Cacher, CacherConfig};
use stage5_storage::Watch;
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::kv::{EmbeddedKv, Kv};
use stage5_storage::{Object, ResourceInfo, SelectionPredicate};
use stage5_storage::{
    Preconditions, Storage, StorageError, UpdateFn, list_prefix, object_key,
};

const WAIT: Duration = Duration::from_secs(10);

fn pod(name: &str, labels: &[(&str, &str)], node: &str) -> Object {
    Object::new(&ResourceInfo::PODS, Some("ns"), name)
        .with_labels(labels.iter().copied())
        .with_data(json!({"spec": {"nodeName": node}}))
}

fn key(name: &str) -> String {
    object_key(&ResourceInfo::PODS, Some("ns"), name)
}

fn prefix() -> String {
    list_prefix(&ResourceInfo::PODS, Some("ns"))
}

struct Fixture {
    kv: Arc<dyn Kv>,
    store: Etcd3Store,
    cacher: Arc<Cacher>,
}

async fn fixture(config: CacherConfig) -> Fixture {
    let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::new());
    let store = Etcd3Store::new(Arc::clone(&kv), ResourceInfo::PODS);
    let cacher = Cacher::new(store.clone(), config);
    let ready = tokio::time::timeout(WAIT, async {
        while !cacher.is_ready() {
            tokio::task::yield_now().await;
        }
    });
    ready.await.expect("the cacher lists and becomes ready");
    Fixture { kv, store, cacher }
}

fn set_labels(labels: &'static [(&'static str, &'static str)]) -> UpdateFn {
    Box::new(move |o: &Object| Ok(o.clone().with_labels(labels.iter().copied())))
}

fn set_count(n: u64) -> UpdateFn {
    Box::new(move |o: &Object| {
        let mut next = o.clone();
        next.data["count"] = json!(n);
        Ok(next)
    })
}

async fn watch(
    f: &Fixture,
    options: WatchOptions,
    labels: &str,
    fields: &str,
) -> Watch<Object> {
    let predicate =
        SelectionPredicate::parse(&ResourceInfo::PODS, labels, fields).unwrap();
    f.cacher.watch(prefix(), options, predicate).await.unwrap()
}

fn from(rv: &str) -> WatchOptions {
    WatchOptions {
        resource_version: rv.into(),
        ..WatchOptions::default()
    }
}

async fn next(w: &mut Watch<Object>) -> WatchEvent<Object> {
    match tokio::time::timeout(WAIT, w.next()).await {
        Ok(Some(Ok(event))) => event,
        other => panic!("expected a watch event, got {other:?}"),
    }
}

async fn nothing_within(w: &mut Watch<Object>, wait: Duration) {
    if let Ok(item) = tokio::time::timeout(wait, w.next()).await {
        panic!("expected nothing, got {item:?}");
    }
}

fn describe(event: &WatchEvent<Object>) -> (&'static str, String, String) {
    match event {
        WatchEvent::Added(o) => {
            ("ADDED", o.name().into(), o.resource_version().into())
        }
        WatchEvent::Modified(o) => {
            ("MODIFIED", o.name().into(), o.resource_version().into())
        }
        WatchEvent::Deleted(o) => {
            ("DELETED", o.name().into(), o.resource_version().into())
        }
        WatchEvent::Bookmark(b) => {
            ("BOOKMARK", String::new(), b.resource_version.clone())
        }
        WatchEvent::Error(s) => (
            "ERROR",
            s.code.unwrap_or(0).to_string(),
            s.message.clone().unwrap_or_default(),
        ),
    }
}

#[tokio::test]
async fn a_watch_below_the_window_gets_410_and_one_at_the_current_version_waits() {
    let f = fixture(CacherConfig::default().capacity(5)).await;
    let first = f
        .store
        .create_object(key("p"), pod("p", &[], "n"))
        .await
        .unwrap();
    let mut last = first.clone();
    for n in 0..10 {
        last = f
            .store
            .update_object(key("p"), Preconditions::default(), set_count(n))
            .await
            .unwrap();
    }
    // A consistent list waits until the cache has the last write.
    f.cacher
        .get_list(
            prefix(),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .unwrap();
    let mut current = watch(&f, from(last.resource_version()), "", "").await;
    let mut old = watch(&f, from(first.resource_version()), "", "").await;
    let (kind, code, message) = describe(&next(&mut old).await);
    assert_eq!((kind, code.as_str()), ("ERROR", "410"));
    assert!(
        message.starts_with("too old resource version: "),
        "{message}"
    );
    assert!(old.next().await.is_none(), "the error ends the watch");
    nothing_within(&mut current, Duration::from_millis(300)).await;
}

#[tokio::test]
async fn three_selectors_see_label_changes_and_a_delete() {
    let f = fixture(CacherConfig::default()).await;
    let start = f
        .store
        .current_resource_version()
        .await
        .unwrap()
        .to_string();
    let mut all = watch(&f, from(&start), "", "").await;
    let mut foo = watch(&f, from(&start), "filter=foo", "").await;
    let mut bar = watch(&f, from(&start), "filter=bar", "").await;

    let created = f
        .store
        .create_object(key("p"), pod("p", &[("filter", "foo")], "n"))
        .await
        .unwrap();
    let v1 = created.resource_version().to_string();
    let to_bar = f
        .store
        .update_object(
            key("p"),
            Preconditions::default(),
            set_labels(&[("filter", "bar")]),
        )
        .await
        .unwrap();
    let v2 = to_bar.resource_version().to_string();
    let gone = f
        .store
        .delete_object(key("p"), Preconditions::default())
        .await
        .unwrap();
    let v3 = gone.resource_version().to_string();

    let p = "p".to_string();
    assert_eq!(
        describe(&next(&mut all).await),
        ("ADDED", p.clone(), v1.clone())
    );
    assert_eq!(
        describe(&next(&mut all).await),
        ("MODIFIED", p.clone(), v2.clone())
    );
    assert_eq!(
        describe(&next(&mut all).await),
        ("DELETED", p.clone(), v3.clone())
    );

    assert_eq!(
        describe(&next(&mut foo).await),
        ("ADDED", p.clone(), v1.clone())
    );
    let left = next(&mut foo).await;
    assert_eq!(describe(&left), ("DELETED", p.clone(), v2.clone()));
    let WatchEvent::Deleted(obj) = left else {
        unreachable!()
    };
    assert_eq!(
        obj.metadata.labels.as_ref().unwrap()["filter"],
        "foo",
        "the object as foo last saw it"
    );

    assert_eq!(
        describe(&next(&mut bar).await),
        ("ADDED", p.clone(), v2.clone())
    );
    let deleted = next(&mut bar).await;
    assert_eq!(describe(&deleted), ("DELETED", p.clone(), v3.clone()));
    let WatchEvent::Deleted(obj) = deleted else {
        unreachable!()
    };
    assert_eq!(obj.metadata.labels.as_ref().unwrap()["filter"], "bar");

    nothing_within(&mut foo, Duration::from_millis(200)).await;
}

/// Creates pod `p` and returns its resource version.
async fn create_p(f: &Fixture) -> String {
    let created = f
        .store
        .create_object(key("p"), pod("p", &[], "n"))
        .await
        .unwrap();
    created.resource_version().to_string()
}

/// Writes `count` updates, each only after every `readers` watch has received the
/// previous one.
async fn lock_step(
    f: &Fixture,
    readers: &mut [Watch<Object>],
    count: u64,
) -> Vec<Vec<String>> {
    let mut seen = vec![Vec::new(); readers.len()];
    for n in 0..count {
        let updated = f
            .store
            .update_object(key("p"), Preconditions::default(), set_count(n))
            .await
            .unwrap();
        for (reader, seen) in readers.iter_mut().zip(&mut seen) {
            let event = next(reader).await;
            let (kind, _, rv) = describe(&event);
            assert_eq!(kind, "MODIFIED");
            assert_eq!(rv, updated.resource_version(), "in order, nothing skipped");
            seen.push(rv);
        }
    }
    seen
}

mod ex5_dispatch {
    use super::*;

    #[tokio::test]
    async fn ex5_dispatch_closes_a_blocked_watcher_and_the_fast_ones_get_everything_once()
     {
        let f = fixture(CacherConfig::default()).await;
        let rv = create_p(&f).await;
        let mut fast = Vec::new();
        for _ in 0..3 {
            fast.push(watch(&f, from(&rv), "", "").await);
        }
        let mut slow = watch(&f, from(&rv), "", "").await;
        let seen = lock_step(&f, &mut fast, 60).await;
        for reader in &seen {
            assert_eq!(reader.len(), 60);
        }
        assert_eq!(f.cacher.stats().watchers_terminated_slow, 1);
        // The slow watcher got what fit in its buffers, then its stream ended.
        let mut received = 0;
        while let Ok(Some(item)) = tokio::time::timeout(WAIT, slow.next()).await {
            assert!(item.is_ok());
            received += 1;
        }
        assert!(
            received < 60,
            "the slow watcher was closed, not fed everything ({received})"
        );
        // Each fast watcher saw every event exactly once.
        for w in &mut fast {
            nothing_within(w, Duration::from_millis(100)).await;
        }
    }

    #[tokio::test]
    async fn ex5_dispatch_fifty_idle_watchers_do_not_stall_a_reader() {
        let f = fixture(CacherConfig::default()).await;
        let rv = create_p(&f).await;
        let mut idle = Vec::new();
        for _ in 0..50 {
            idle.push(watch(&f, from(&rv), "", "").await);
        }
        let mut reader = vec![watch(&f, from(&rv), "", "").await];
        let seen = lock_step(&f, &mut reader, 40).await;
        assert_eq!(seen[0].len(), 40);
        assert_eq!(f.cacher.stats().watchers_terminated_slow, 50);
        assert_eq!(f.cacher.stats().watchers, 1);
    }

    #[tokio::test]
    async fn ex5_dispatch_only_wakes_watchers_of_the_event_s_node() {
        let f = fixture(CacherConfig::default()).await;
        let rv = f
            .store
            .current_resource_version()
            .await
            .unwrap()
            .to_string();
        let mut node1 = watch(&f, from(&rv), "", "spec.nodeName=node-1").await;
        let mut node2 = watch(&f, from(&rv), "", "spec.nodeName=node-2").await;
        let a = f
            .store
            .create_object(key("a"), pod("a", &[], "node-1"))
            .await
            .unwrap();
        assert_eq!(
            describe(&next(&mut node1).await),
            ("ADDED", "a".into(), a.resource_version().into())
        );
        let moved = f
            .store
            .update_object(
                key("a"),
                Preconditions::default(),
                Box::new(|o: &Object| {
                    let mut n = o.clone();
                    n.data["spec"]["nodeName"] = json!("node-2");
                    Ok(n)
                }),
            )
            .await
            .unwrap();
        // The previous node's watcher gets the Deleted, the new node's the Added.
        assert_eq!(
            describe(&next(&mut node1).await),
            ("DELETED", "a".into(), moved.resource_version().into())
        );
        assert_eq!(
            describe(&next(&mut node2).await),
            ("ADDED", "a".into(), moved.resource_version().into())
        );
    }
}

#[tokio::test(start_paused = true)]
async fn bookmarks_arrive_when_allowed_and_never_otherwise() {
    let f =
        fixture(CacherConfig::default().bookmark_frequency(Duration::from_secs(1)))
            .await;
    let created = f
        .store
        .create_object(key("p"), pod("p", &[], "n"))
        .await
        .unwrap();
    let rv = created.resource_version().to_string();
    let with = WatchOptions {
        allow_watch_bookmarks: true,
        ..from(&rv)
    };
    let mut bookmarks = watch(&f, with, "", "").await;
    let mut none = watch(&f, from(&rv), "", "").await;
    let start = tokio::time::Instant::now();
    let updated = f
        .store
        .update_object(key("p"), Preconditions::default(), set_count(1))
        .await
        .unwrap();
    assert_eq!(describe(&next(&mut bookmarks).await).0, "MODIFIED");
    assert_eq!(describe(&next(&mut none).await).0, "MODIFIED");
    let event = next(&mut bookmarks).await;
    assert_eq!(
        describe(&event),
        (
            "BOOKMARK",
            String::new(),
            updated.resource_version().to_string()
        )
    );
    assert!(
        start.elapsed() <= Duration::from_secs(3),
        "bookmark after {:?}",
        start.elapsed()
    );
    // Versions never go backwards, and the next bookmark comes about a second later.
    let again = next(&mut bookmarks).await;
    assert_eq!(describe(&again).0, "BOOKMARK");
    nothing_within(&mut none, Duration::from_secs(10)).await;
}

#[tokio::test]
async fn send_initial_events_streams_the_state_then_a_bookmark_then_changes() {
    let f = fixture(CacherConfig::default()).await;
    let a = f
        .store
        .create_object(key("a"), pod("a", &[], "n"))
        .await
        .unwrap();
    let b = f
        .store
        .create_object(key("b"), pod("b", &[], "n"))
        .await
        .unwrap();
    let current = b.resource_version().to_string();
    // resourceVersion "" (consistent), "0" (any) and an explicit version, with
    // NotOlderThan.
    for rv in ["", "0", current.as_str()] {
        let options = WatchOptions {
            resource_version: rv.into(),
            resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
            send_initial_events: true,
            allow_watch_bookmarks: true,
            ..WatchOptions::default()
        };
        let mut w = watch(&f, options, "", "").await;
        assert_eq!(
            describe(&next(&mut w).await),
            ("ADDED", "a".into(), a.resource_version().into()),
            "rv {rv:?}"
        );
        assert_eq!(
            describe(&next(&mut w).await),
            ("ADDED", "b".into(), b.resource_version().into())
        );
        match next(&mut w).await {
            WatchEvent::Bookmark(bm) => {
                assert!(bm.is_initial_events_end(), "rv {rv:?}: {bm:?}");
                assert_eq!(bm.resource_version, current);
            }
            other => panic!(
                "rv {rv:?}: expected the initial-events-end bookmark, got {other:?}"
            ),
        }
    }
    // Without bookmarks allowed: the state, no bookmark, then changes.
    let options = WatchOptions {
        send_initial_events: true,
        ..WatchOptions::default()
    };
    let mut w = watch(&f, options, "", "").await;
    assert_eq!(describe(&next(&mut w).await).0, "ADDED");
    assert_eq!(describe(&next(&mut w).await).0, "ADDED");
    let c = f
        .store
        .create_object(key("c"), pod("c", &[], "n"))
        .await
        .unwrap();
    assert_eq!(
        describe(&next(&mut w).await),
        ("ADDED", "c".into(), c.resource_version().into())
    );
}

#[tokio::test(start_paused = true)]
async fn a_version_the_cache_does_not_reach_is_504() {
    let f = fixture(CacherConfig::default()).await;
    let options = WatchOptions {
        resource_version: "999999".into(),
        send_initial_events: true,
        allow_watch_bookmarks: true,
        ..WatchOptions::default()
    };
    let mut w = watch(&f, options, "", "").await;
    let (kind, code, _) = describe(&next(&mut w).await);
    assert_eq!((kind, code.as_str()), ("ERROR", "504"));
    let list = ListOptions {
        resource_version: "999999".into(),
        ..ListOptions::default()
    };
    let err = f
        .cacher
        .get_list(prefix(), list, SelectionPredicate::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), 504);
}

#[tokio::test]
async fn not_ready_is_429() {
    let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::new());
    let store = Etcd3Store::new(kv, ResourceInfo::PODS);
    // On this single-threaded runtime the Reflector has not run yet.
    let cacher = Cacher::new(store, CacherConfig::default());
    let err = cacher
        .watch(
            prefix(),
            WatchOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err, StorageError::TooManyRequests);
    assert_eq!(err.to_status().code, Some(429));
    // Lists go to etcd meanwhile.
    assert!(
        cacher
            .get_list(
                prefix(),
                ListOptions::default(),
                SelectionPredicate::default()
            )
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn lists_come_from_the_cache_by_resource_version() {
    let f = fixture(CacherConfig::default()).await;
    let a = f
        .store
        .create_object(key("a"), pod("a", &[("app", "web")], "node-0"))
        .await
        .unwrap();
    f.store
        .create_object(key("b"), pod("b", &[("app", "db")], "node-1"))
        .await
        .unwrap();
    // "": consistent: sees the writes just made.
    let list = f
        .cacher
        .get_list(
            prefix(),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        list.items.iter().map(|o| o.name()).collect::<Vec<_>>(),
        ["a", "b"]
    );
    let on_node =
        SelectionPredicate::parse(&ResourceInfo::PODS, "", "spec.nodeName=node-0")
            .unwrap();
    let at_a = ListOptions {
        resource_version: a.resource_version().into(),
        ..ListOptions::default()
    };
    let list = f.cacher.get_list(prefix(), at_a, on_node).await.unwrap();
    assert_eq!(list.items.len(), 1);
    assert!(list.resource_version >= a.resource_version().parse::<u64>().unwrap());
    // The objects' JSON is the cache's, shared, not copies: the watch cache keeps
    // each object encoded, and a list shares that encoding.
    let everything_at_0 = || {
        (
            prefix(),
            ListOptions {
                resource_version: "0".into(),
                ..ListOptions::default()
            },
            SelectionPredicate::default(),
        )
    };
    let (p, o, s) = everything_at_0();
    let again = f.cacher.get_list_encoded(p, o, s).await.unwrap();
    let (p, o, s) = everything_at_0();
    let first = f.cacher.get_list_encoded(p, o, s).await.unwrap();
    assert!(std::ptr::eq(
        again.items[0].as_ptr(),
        first.items[0].as_ptr()
    ));
    // Decoded, it is the object the list of objects returns.
    let (p, o, s) = everything_at_0();
    let everything = f.cacher.get_list(p, o, s).await.unwrap();
    let decoded: Object = serde_json::from_slice(&first.items[0]).unwrap();
    assert_eq!(decoded, *everything.items[0]);
    assert_eq!(first.items.len(), everything.items.len());
}

#[tokio::test]
async fn every_watcher_shares_one_object() {
    let f = fixture(CacherConfig::default()).await;
    let rv = f
        .store
        .current_resource_version()
        .await
        .unwrap()
        .to_string();
    let mut watches = Vec::new();
    let mut encoded = Vec::new();
    for _ in 0..3 {
        watches.push(watch(&f, from(&rv), "", "").await);
        encoded.push(
            f.cacher
                .watch_encoded(prefix(), from(&rv), SelectionPredicate::default())
                .await
                .unwrap(),
        );
    }
    f.store
        .create_object(key("a"), pod("a", &[], "n"))
        .await
        .unwrap();
    let mut objects = Vec::new();
    for w in &mut watches {
        match next(w).await {
            WatchEvent::Added(obj) => objects.push(obj),
            other => panic!("{other:?}"),
        }
    }
    // A watch of objects decodes its own copy of the one encoding.
    assert!(objects.windows(2).all(|w| w[0] == w[1]));
    // The server's watches share the one line.
    let mut lines = Vec::new();
    for w in &mut encoded {
        let event = tokio::time::timeout(WAIT, w.next())
            .await
            .expect("an event in time")
            .expect("an event");
        lines.push(event.line);
    }
    assert!(
        lines
            .windows(2)
            .all(|w| std::ptr::eq(w[0].as_ptr(), w[1].as_ptr()))
    );
}

#[tokio::test]
async fn stop_ends_every_watch_and_the_cacher_s_tasks() {
    let f = fixture(CacherConfig::default()).await;
    let mut w = watch(&f, WatchOptions::default(), "", "").await;
    tokio::time::timeout(WAIT, f.cacher.stop())
        .await
        .expect("stop finishes");
    match tokio::time::timeout(WAIT, w.next()).await {
        Ok(None) => {}
        other => panic!("expected the end of the watch, got {other:?}"),
    }
    assert_eq!(f.cacher.stats().watchers, 0);
    drop(f.kv);
}

#[tokio::test]
async fn writes_go_through_to_etcd() {
    let f = fixture(CacherConfig::default()).await;
    let created = f.cacher.create(key("a"), pod("a", &[], "n")).await.unwrap();
    let got = f.store.get_object(key("a")).await.unwrap();
    assert_eq!(got.resource_version(), created.resource_version());
    f.cacher
        .guaranteed_update(key("a"), Preconditions::default(), set_count(3))
        .await
        .unwrap();
    f.cacher
        .delete(key("a"), Preconditions::default())
        .await
        .unwrap();
    assert_eq!(f.cacher.get(key("a")).await.unwrap_err().code(), 404);
}

/// An embedded store that says its progress notifications cannot be trusted (as
/// etcd before 3.4.31 and 3.5.13 says), and counts the progress requests it gets
/// anyway.
#[derive(Default)]
struct UntrustedProgressKv {
    inner: EmbeddedKv,
    requests: Arc<std::sync::atomic::AtomicUsize>,
}

struct CountedProgress {
    inner: Arc<dyn stage5_storage::kv::ProgressRequester>,
    requests: Arc<std::sync::atomic::AtomicUsize>,
}

impl stage5_storage::kv::ProgressRequester for CountedProgress {
    fn request_progress(
        &self,
    ) -> futures::future::BoxFuture<'_, Result<(), stage5_storage::kv::KvError>>
    {
        self.requests
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.inner.request_progress()
    }
}

impl Kv for UntrustedProgressKv {
    fn range(
        &self,
        request: stage5_storage::kv::RangeRequest,
    ) -> futures::future::BoxFuture<
        '_,
        Result<stage5_storage::kv::RangeResponse, stage5_storage::kv::KvError>,
    > {
        self.inner.range(request)
    }

    fn put(
        &self,
        key: bytes::Bytes,
        value: bytes::Bytes,
    ) -> futures::future::BoxFuture<
        '_,
        Result<
            (i64, Option<stage5_storage::kv::KeyValue>),
            stage5_storage::kv::KvError,
        >,
    > {
        self.inner.put(key, value)
    }

    fn delete(
        &self,
        key: bytes::Bytes,
    ) -> futures::future::BoxFuture<
        '_,
        Result<
            (i64, Option<stage5_storage::kv::KeyValue>),
            stage5_storage::kv::KvError,
        >,
    > {
        self.inner.delete(key)
    }

    fn txn(
        &self,
        key: bytes::Bytes,
        compare: stage5_storage::kv::Compare,
        op: stage5_storage::kv::TxnOp,
    ) -> futures::future::BoxFuture<
        '_,
        Result<stage5_storage::kv::TxnResponse, stage5_storage::kv::KvError>,
    > {
        self.inner.txn(key, compare, op)
    }

    fn compact(
        &self,
        revision: i64,
    ) -> futures::future::BoxFuture<'_, Result<(), stage5_storage::kv::KvError>>
    {
        self.inner.compact(revision)
    }

    fn watch(
        &self,
        request: stage5_storage::kv::WatchRequest,
    ) -> futures::future::BoxFuture<
        '_,
        Result<stage5_storage::kv::KvWatch, stage5_storage::kv::KvError>,
    > {
        Box::pin(async move {
            let mut watch = self.inner.watch(request).await?;
            watch.progress = Arc::new(CountedProgress {
                inner: watch.progress,
                requests: Arc::clone(&self.requests),
            });
            Ok(watch)
        })
    }

    fn supports_request_watch_progress(
        &self,
    ) -> futures::future::BoxFuture<'_, bool> {
        Box::pin(async { false })
    }
}

#[tokio::test]
async fn an_etcd_whose_progress_cannot_be_trusted_is_never_asked_for_it() {
    let untrusted = Arc::new(UntrustedProgressKv::default());
    let requests = Arc::clone(&untrusted.requests);
    let kv: Arc<dyn Kv> = untrusted;
    let store = Etcd3Store::new(Arc::clone(&kv), ResourceInfo::PODS);
    let cacher = Cacher::new(store.clone(), CacherConfig::default());
    assert!(cacher.wait_ready(WAIT).await);
    store
        .create_object(key("a"), pod("a", &[], "n"))
        .await
        .unwrap();
    // Another resource moves etcd's revision past anything pods will ever see.
    let configmaps = Etcd3Store::new(Arc::clone(&kv), ResourceInfo::CONFIGMAPS);
    let cm = Object::new(&ResourceInfo::CONFIGMAPS, Some("ns"), "cm");
    configmaps
        .create_object(object_key(&ResourceInfo::CONFIGMAPS, Some("ns"), "cm"), cm)
        .await
        .unwrap();
    let current = configmaps.current_resource_version().await.unwrap();
    // A list at that revision waits its 3 s for the pods cache, which no event
    // and no trusted progress notification can move, and is then too new.
    let options = ListOptions {
        resource_version: current.to_string(),
        ..ListOptions::default()
    };
    let result = tokio::time::timeout(
        WAIT,
        cacher.get_list(prefix(), options, SelectionPredicate::default()),
    )
    .await
    .expect("answered after the 3 s block");
    assert_eq!(result.unwrap_err().code(), 504);
    assert_eq!(
        requests.load(std::sync::atomic::Ordering::Relaxed),
        0,
        "no progress was asked of an etcd that cannot be trusted with it"
    );
}

#[tokio::test]
async fn a_quiet_resource_serves_consistent_reads_through_progress_requests() {
    let f = fixture(CacherConfig::default()).await;
    f.store
        .create_object(key("a"), pod("a", &[], "n"))
        .await
        .unwrap();
    // Another resource moves etcd's revision; nothing changes for pods.
    let configmaps = Etcd3Store::new(Arc::clone(&f.kv), ResourceInfo::CONFIGMAPS);
    for i in 0..5 {
        let cm =
            Object::new(&ResourceInfo::CONFIGMAPS, Some("ns"), &format!("cm{i}"));
        configmaps
            .create_object(
                object_key(&ResourceInfo::CONFIGMAPS, Some("ns"), &format!("cm{i}")),
                cm,
            )
            .await
            .unwrap();
    }
    let current = configmaps.current_resource_version().await.unwrap();
    // A consistent list: the pods cache must reach etcd's current revision.
    let list = tokio::time::timeout(
        Duration::from_secs(2),
        f.cacher.get_list(
            prefix(),
            ListOptions::default(),
            SelectionPredicate::default(),
        ),
    )
    .await
    .expect("well within the 3 s limit")
    .unwrap();
    assert_eq!(list.items.len(), 1);
    assert!(
        list.resource_version >= current,
        "{} < {current}",
        list.resource_version
    );
    // A streaming list from "" ends its initial events at that revision too.
    let options = WatchOptions {
        send_initial_events: true,
        allow_watch_bookmarks: true,
        resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
        ..WatchOptions::default()
    };
    let mut w = watch(&f, options, "", "").await;
    assert_eq!(describe(&next(&mut w).await).0, "ADDED");
    match next(&mut w).await {
        WatchEvent::Bookmark(bm) => {
            assert!(bm.is_initial_events_end());
            assert!(bm.resource_version.parse::<u64>().unwrap() >= current);
        }
        other => panic!("expected the initial-events-end bookmark, got {other:?}"),
    }
}

/// The live page's notes (`stage5_cacher::probe`), in the order the machinery
/// takes its steps: a watcher registered, an event entering the ring and
/// dispatched, a 410, a slow watcher closed; and the view the page draws.
#[tokio::test]
async fn the_probe_notes_each_step_and_the_view_draws_the_ring_and_watchers() {
    use stage5_cacher::{EndReason, Probe, What};

    let probe = Probe::new();
    let mut notes = probe.subscribe();
    let f = fixture(CacherConfig::default().capacity(4).probe(probe)).await;
    let mut next_note = async || {
        tokio::time::timeout(WAIT, notes.recv())
            .await
            .expect("a note in time")
            .expect("the probe is open")
    };
    while !matches!(next_note().await.what, What::Relisted { .. }) {}

    let mut w = watch(&f, from("0"), "", "").await;
    let added = next_note().await;
    assert!(
        matches!(added.what, What::WatcherAdded { id: 0, .. }),
        "{added:?}"
    );
    let rv = create_p(&f).await;
    let rv: u64 = rv.parse().unwrap();
    let entered = next_note().await;
    assert!(
        matches!(&entered.what, What::Entered { rv: r, key, .. } if *r == rv && &**key == "ns/p"),
        "{entered:?}"
    );
    let dispatched = next_note().await;
    assert!(
        matches!(&dispatched.what, What::Dispatched { rv: r, .. } if *r == rv),
        "{dispatched:?}"
    );
    assert_eq!(entered.resource, "pods");
    assert_eq!(describe(&next(&mut w).await).0, "ADDED");

    let view = f.cacher.view();
    assert_eq!(view.ring.capacity, 4);
    assert_eq!(view.ring.versions, [rv]);
    assert_eq!(view.watcher_count, 1);
    assert_eq!(view.watchers[0].buffer_capacity, 10);

    // Five more writes push the create and the first update out of the ring
    // of four: a watch from the create's version is refused.
    let mut last = 0;
    for n in 1..=5 {
        let updated = f
            .store
            .update_object(key("p"), Preconditions::default(), set_count(n))
            .await
            .unwrap();
        last = updated.resource_version().parse().unwrap();
    }
    // The ring has them once the last one entered it.
    while !matches!(next_note().await.what, What::Entered { rv, .. } if rv == last) {
    }
    let mut old = watch(&f, from(&rv.to_string()), "", "").await;
    assert_eq!(describe(&next(&mut old).await).0, "ERROR");
    let expired = loop {
        let note = next_note().await;
        if matches!(note.what, What::Expired { .. }) {
            break note;
        }
    };
    assert!(
        matches!(expired.what, What::Expired { requested, .. } if requested == rv)
    );

    // The client goes: its watcher ends as ClientGone.
    drop(w);
    let ended = loop {
        let note = next_note().await;
        if let What::WatcherEnded { reason, .. } = note.what {
            break reason;
        }
    };
    assert_eq!(ended, EndReason::ClientGone);
}
