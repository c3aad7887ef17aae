//! The KV contract: the same operations give the same revisions, events, `prev_kv`
//! and errors on [`EmbeddedKv`] and on real etcd ([`EtcdKv`], cargo feature `etcd`).
//!
//! Each scenario is written once as `async fn scenario(kv: Arc<dyn Kv>)` and run by
//! the `contract!` macro for each backend. Every etcd test starts its own fresh etcd
//! (revision 1, like a fresh [`EmbeddedKv`]), so absolute revisions can be asserted.
//! Real etcd is the authority: when the two disagree, the embedded store is wrong.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use pretty_assertions::assert_eq;
use stage5_storage::kv::{
    Compare, EmbeddedKv, EmbeddedKvOptions, KeyValue, Kv, KvError, KvEvent,
    KvEventType, KvWatch, RangeRequest, TxnOp, WatchRequest, WatchResponse,
};
use stage5_storage::testing::TEST_PROGRESS_NOTIFY_INTERVAL;

/// The longest any single wait may take.
const WAIT: Duration = Duration::from_secs(10);

fn b(s: &str) -> Bytes {
    Bytes::copy_from_slice(s.as_bytes())
}

fn kv(
    key: &str,
    value: &str,
    create_revision: i64,
    mod_revision: i64,
    version: i64,
) -> KeyValue {
    KeyValue {
        key: b(key),
        value: b(value),
        create_revision,
        mod_revision,
        version,
    }
}

/// A delete event's `kv`: only the key and the delete's revision.
fn tombstone(key: &str, revision: i64) -> KeyValue {
    kv(key, "", 0, revision, 0)
}

fn put_event(kv: KeyValue, prev_kv: Option<KeyValue>) -> KvEvent {
    KvEvent {
        kind: KvEventType::Put,
        kv,
        prev_kv,
    }
}

fn delete_event(key: &str, revision: i64, prev_kv: Option<KeyValue>) -> KvEvent {
    KvEvent {
        kind: KvEventType::Delete,
        kv: tombstone(key, revision),
        prev_kv,
    }
}

async fn put(kv: &Arc<dyn Kv>, key: &str, value: &str) -> i64 {
    kv.put(b(key), b(value)).await.expect("put").0
}

async fn watch(kv: &Arc<dyn Kv>, request: WatchRequest) -> KvWatch {
    tokio::time::timeout(WAIT, kv.watch(request))
        .await
        .expect("watch did not open in time")
        .expect("watch")
}

fn watch_prefix(prefix: &str, start_revision: i64, prev_kv: bool) -> WatchRequest {
    WatchRequest {
        key: b(prefix),
        prefix: true,
        start_revision,
        prev_kv,
        progress_notify: false,
    }
}

/// The next message of a watch (`None` when the stream ended), bounded by [`WAIT`].
async fn next(watch: &mut KvWatch) -> Option<Result<WatchResponse, KvError>> {
    tokio::time::timeout(WAIT, watch.responses.next())
        .await
        .expect("no watch message in time")
}

/// The events of a watch, flattened across responses (batching differs between
/// backends), up to and including the event at `last_revision`. Progress
/// notifications are skipped.
async fn events_until(watch: &mut KvWatch, last_revision: i64) -> Vec<KvEvent> {
    let mut events = Vec::new();
    while events
        .last()
        .is_none_or(|e: &KvEvent| e.kv.mod_revision < last_revision)
    {
        let response = next(watch)
            .await
            .expect("the watch ended early")
            .expect("watch error");
        assert!(!response.canceled, "unexpected cancel: {response:?}");
        events.extend(response.events);
    }
    events
}

// ---------------------------------------------------------------------------------------------
// Scenarios
// ---------------------------------------------------------------------------------------------

/// Revisions start at 1 (the first write gets 2); a put answers the previous state;
/// range reads one key, a prefix with limit/more/count, from a key, and counts only.
async fn put_get_and_range(kv: Arc<dyn Kv>) {
    let (revision, prev) = kv.put(b("/a/1"), b("v1")).await.unwrap();
    assert_eq!((revision, prev), (2, None));
    let (revision, prev) = kv.put(b("/a/1"), b("v2")).await.unwrap();
    assert_eq!((revision, prev), (3, Some(kv_at("/a/1", "v1", 2, 2, 1))));
    assert_eq!(put(&kv, "/a/2", "x").await, 4);
    assert_eq!(put(&kv, "/a/3", "y").await, 5);
    assert_eq!(put(&kv, "/b/1", "z").await, 6);

    let one = kv.range(RangeRequest::key("/a/1")).await.unwrap();
    assert_eq!(one.header_revision, 6);
    assert_eq!(one.kvs, vec![kv_at("/a/1", "v2", 2, 3, 2)]);
    assert_eq!((one.count, one.more), (1, false));

    let missing = kv.range(RangeRequest::key("/a/9")).await.unwrap();
    assert_eq!(
        (missing.kvs.len(), missing.count, missing.more),
        (0, 0, false)
    );

    let page = kv
        .range(RangeRequest::prefix("/a/").with_limit(2))
        .await
        .unwrap();
    let keys: Vec<_> = page.kvs.iter().map(|kv| kv.key.clone()).collect();
    assert_eq!(keys, vec![b("/a/1"), b("/a/2")]);
    assert_eq!((page.count, page.more, page.header_revision), (3, true, 6));

    let rest = kv
        .range(
            RangeRequest::prefix("/a/")
                .starting_at("/a/2")
                .with_limit(2),
        )
        .await
        .unwrap();
    let keys: Vec<_> = rest.kvs.iter().map(|kv| kv.key.clone()).collect();
    assert_eq!(keys, vec![b("/a/2"), b("/a/3")]);
    assert_eq!((rest.count, rest.more), (2, false));

    let counted = kv
        .range(RangeRequest {
            count_only: true,
            ..RangeRequest::prefix("/a/")
        })
        .await
        .unwrap();
    assert_eq!(
        (counted.kvs.len(), counted.count, counted.more),
        (0, 3, false)
    );
    let counted_limited = kv
        .range(RangeRequest {
            count_only: true,
            ..RangeRequest::prefix("/a/").with_limit(1)
        })
        .await
        .unwrap();
    assert_eq!(
        (counted_limited.count, counted_limited.more),
        (3, false),
        "count ignores the limit"
    );

    let everything = kv.range(RangeRequest::prefix("")).await.unwrap();
    assert_eq!(everything.count, 4);
}

fn kv_at(
    key: &str,
    value: &str,
    create: i64,
    modified: i64,
    version: i64,
) -> KeyValue {
    kv(key, value, create, modified, version)
}

/// Reads at an old revision see the state then; a future revision is an error.
async fn range_at_old_and_future_revisions(kv: Arc<dyn Kv>) {
    put(&kv, "/k", "v1").await; // 2
    put(&kv, "/k", "v2").await; // 3
    put(&kv, "/other", "o").await; // 4
    let (revision, _) = kv.delete(b("/k")).await.unwrap();
    assert_eq!(revision, 5);

    let at = |revision| kv.range(RangeRequest::prefix("/").at_revision(revision));
    let at2 = at(2).await.unwrap();
    assert_eq!(at2.kvs, vec![kv_at("/k", "v1", 2, 2, 1)]);
    assert_eq!(at2.header_revision, 5, "the header is the current revision");
    assert_eq!(at(3).await.unwrap().kvs, vec![kv_at("/k", "v2", 2, 3, 2)]);
    assert_eq!(at(4).await.unwrap().count, 2);
    assert_eq!(
        at(5).await.unwrap().kvs,
        vec![kv_at("/other", "o", 4, 4, 1)]
    );
    assert_eq!(
        at(1).await.unwrap().count,
        0,
        "revision 1 is the empty store"
    );

    match at(6).await {
        Err(KvError::FutureRevision { current }) => assert_eq!(current, 5),
        other => panic!("expected FutureRevision, got {other:?}"),
    }
}

/// After compaction, reads before the compacted revision fail; at it they work;
/// compacting again at or below it fails; compacting the future fails.
async fn compaction_then_read(kv: Arc<dyn Kv>) {
    put(&kv, "/k", "v1").await; // 2
    put(&kv, "/k", "v2").await; // 3
    put(&kv, "/k", "v3").await; // 4
    put(&kv, "/gone", "g").await; // 5
    kv.delete(b("/gone")).await.unwrap(); // 6
    kv.compact(4).await.unwrap();

    match kv.range(RangeRequest::key("/k").at_revision(3)).await {
        Err(KvError::Compacted { compacted }) => assert_eq!(compacted, 4),
        other => panic!("expected Compacted, got {other:?}"),
    }
    let at4 = kv
        .range(RangeRequest::prefix("/").at_revision(4))
        .await
        .unwrap();
    assert_eq!(at4.kvs, vec![kv_at("/k", "v3", 2, 4, 3)]);
    let at5 = kv
        .range(RangeRequest::prefix("/").at_revision(5))
        .await
        .unwrap();
    assert_eq!(at5.count, 2);
    assert_eq!(
        kv.range(RangeRequest::prefix("/")).await.unwrap().count,
        1,
        "the deleted key is gone"
    );
    match kv.compact(4).await {
        Err(KvError::Compacted { compacted }) => assert_eq!(compacted, 4),
        other => panic!("expected Compacted, got {other:?}"),
    }
    match kv.compact(3).await {
        Err(KvError::Compacted { .. }) => {}
        other => panic!("expected Compacted, got {other:?}"),
    }
    match kv.compact(7).await {
        Err(KvError::FutureRevision { current }) => assert_eq!(current, 6),
        other => panic!("expected FutureRevision, got {other:?}"),
    }
    // Compacting everything keeps the newest state.
    kv.compact(6).await.unwrap();
    assert_eq!(
        kv.range(RangeRequest::prefix("/")).await.unwrap().kvs,
        vec![kv_at("/k", "v3", 2, 4, 3)]
    );
}

/// A txn compares `mod_revision` (0: absent); on failure it answers the key's
/// current state; a successful delete answers the deleted state.
async fn txn_compares_mod_revision(kv: Arc<dyn Kv>) {
    let created = kv
        .txn(b("/t"), Compare::ModRevision(0), TxnOp::Put(b("v1")))
        .await
        .unwrap();
    assert!(created.succeeded);
    assert_eq!((created.header_revision, created.kv), (2, None));

    let again = kv
        .txn(b("/t"), Compare::ModRevision(0), TxnOp::Put(b("v1")))
        .await
        .unwrap();
    assert!(!again.succeeded);
    assert_eq!(again.header_revision, 2);
    assert_eq!(again.kv, Some(kv_at("/t", "v1", 2, 2, 1)));

    let stale = kv
        .txn(b("/t"), Compare::ModRevision(1), TxnOp::Delete)
        .await
        .unwrap();
    assert!(!stale.succeeded);
    assert_eq!(stale.kv, Some(kv_at("/t", "v1", 2, 2, 1)));

    let updated = kv
        .txn(b("/t"), Compare::ModRevision(2), TxnOp::Put(b("v2")))
        .await
        .unwrap();
    assert!(updated.succeeded);
    assert_eq!(updated.header_revision, 3);

    let deleted = kv
        .txn(b("/t"), Compare::ModRevision(3), TxnOp::Delete)
        .await
        .unwrap();
    assert!(deleted.succeeded);
    assert_eq!(deleted.header_revision, 4);
    assert_eq!(deleted.kv, Some(kv_at("/t", "v2", 2, 3, 2)));

    let absent_fails = kv
        .txn(b("/t"), Compare::ModRevision(3), TxnOp::Put(b("v3")))
        .await
        .unwrap();
    assert!(!absent_fails.succeeded);
    assert_eq!((absent_fails.header_revision, absent_fails.kv), (4, None));

    let delete_absent = kv
        .txn(b("/t"), Compare::ModRevision(0), TxnOp::Delete)
        .await
        .unwrap();
    assert!(delete_absent.succeeded);
    assert_eq!(
        (delete_absent.header_revision, delete_absent.kv),
        (4, None),
        "deleting nothing makes no revision"
    );

    let recreated = kv
        .txn(b("/t"), Compare::ModRevision(0), TxnOp::Put(b("v3")))
        .await
        .unwrap();
    assert!(recreated.succeeded);
    assert_eq!(recreated.header_revision, 5);
    assert_eq!(
        kv.range(RangeRequest::key("/t")).await.unwrap().kvs,
        vec![kv_at("/t", "v3", 5, 5, 1)],
        "a re-created key starts a new generation"
    );
}

/// A delete answers the new revision and the old state; deleting a missing key
/// answers the current revision and nothing. The delete event's kv has only the key
/// and the revision.
async fn delete_semantics_and_event_shape(kv: Arc<dyn Kv>) {
    assert_eq!(kv.delete(b("/d")).await.unwrap(), (1, None));
    put(&kv, "/d", "v1").await; // 2
    put(&kv, "/d", "v2").await; // 3
    let (revision, prev) = kv.delete(b("/d")).await.unwrap();
    assert_eq!((revision, prev), (4, Some(kv_at("/d", "v2", 2, 3, 2))));
    assert_eq!(kv.delete(b("/d")).await.unwrap(), (4, None));

    let mut with_prev = watch(&kv, watch_prefix("/d", 4, true)).await;
    assert_eq!(
        events_until(&mut with_prev, 4).await,
        vec![delete_event("/d", 4, Some(kv_at("/d", "v2", 2, 3, 2)))]
    );
    let mut without_prev = watch(&kv, watch_prefix("/d", 4, false)).await;
    let events = events_until(&mut without_prev, 4).await;
    assert_eq!(events, vec![delete_event("/d", 4, None)]);
    assert!(!events[0].is_create());
}

/// A watch replays history from its start revision, in order, with `prev_kv` for
/// every event that is not a create when asked; then it streams live events.
async fn watch_replays_then_streams(kv: Arc<dyn Kv>) {
    put(&kv, "/w/1", "a").await; // 2
    put(&kv, "/w/1", "b").await; // 3
    put(&kv, "/w/2", "c").await; // 4
    kv.delete(b("/w/1")).await.unwrap(); // 5
    put(&kv, "/x/1", "outside").await; // 6
    put(&kv, "/w/1", "d").await; // 7: re-created

    let everything = vec![
        put_event(kv_at("/w/1", "a", 2, 2, 1), None),
        put_event(
            kv_at("/w/1", "b", 2, 3, 2),
            Some(kv_at("/w/1", "a", 2, 2, 1)),
        ),
        put_event(kv_at("/w/2", "c", 4, 4, 1), None),
        delete_event("/w/1", 5, Some(kv_at("/w/1", "b", 2, 3, 2))),
        put_event(kv_at("/w/1", "d", 7, 7, 1), None),
    ];
    let mut from_start = watch(&kv, watch_prefix("/w/", 2, true)).await;
    assert_eq!(events_until(&mut from_start, 7).await, everything);

    let mut without_prev = watch(&kv, watch_prefix("/w/", 2, false)).await;
    let stripped: Vec<_> = everything
        .iter()
        .cloned()
        .map(|e| KvEvent { prev_kv: None, ..e })
        .collect();
    assert_eq!(events_until(&mut without_prev, 7).await, stripped);

    let mut from_middle = watch(&kv, watch_prefix("/w/", 4, true)).await;
    assert_eq!(
        events_until(&mut from_middle, 7).await,
        everything[2..].to_vec()
    );

    // Live.
    assert_eq!(put(&kv, "/w/2", "e").await, 8);
    let live = put_event(
        kv_at("/w/2", "e", 4, 8, 2),
        Some(kv_at("/w/2", "c", 4, 4, 1)),
    );
    assert_eq!(events_until(&mut from_start, 8).await, vec![live.clone()]);
    assert_eq!(events_until(&mut from_middle, 8).await, vec![live]);

    // A live delete carries the old state as prev_kv.
    let (revision, _) = kv.delete(b("/w/2")).await.unwrap();
    assert_eq!(revision, 9);
    assert_eq!(
        events_until(&mut from_start, 9).await,
        vec![delete_event("/w/2", 9, Some(kv_at("/w/2", "e", 4, 8, 2)))]
    );

    // From "now" (0): only what comes after.
    let mut from_now = watch(&kv, watch_prefix("/w/", 0, false)).await;
    assert_eq!(put(&kv, "/w/3", "f").await, 10);
    let response = next(&mut from_now).await.unwrap().unwrap();
    assert_eq!(response.header_revision, 10);
    assert_eq!(
        response.events,
        vec![put_event(kv_at("/w/3", "f", 10, 10, 1), None)]
    );
}

/// A watch from before the compacted revision gets one message with
/// `compact_revision` and `canceled`, then the stream ends.
async fn watch_from_compacted_revision_is_cancelled(kv: Arc<dyn Kv>) {
    for value in ["1", "2", "3", "4"] {
        put(&kv, "/c/k", value).await; // 2..=5
    }
    kv.compact(4).await.unwrap();
    let mut compacted = watch(&kv, watch_prefix("/c/", 3, true)).await;
    let response = next(&mut compacted).await.unwrap().unwrap();
    assert_eq!(response.compact_revision, 4);
    assert!(response.canceled);
    assert!(response.events.is_empty());
    assert!(
        next(&mut compacted).await.is_none(),
        "the stream ends after the cancel"
    );

    // From exactly the compacted revision the watch works, but the event at it has
    // no prev_kv: etcd reads prev_kv at mod_revision - 1, which is compacted.
    let mut at_compacted = watch(&kv, watch_prefix("/c/", 4, true)).await;
    assert_eq!(
        events_until(&mut at_compacted, 5).await,
        vec![
            put_event(kv_at("/c/k", "3", 2, 4, 3), None),
            put_event(
                kv_at("/c/k", "4", 2, 5, 4),
                Some(kv_at("/c/k", "3", 2, 4, 3))
            ),
        ]
    );
}

/// A delete at exactly the compacted revision is not replayed by a watch from that
/// revision: etcd's `keyIndex.compact` drops a tombstone at the compaction point, so
/// the event is gone although reads at that revision still work.
async fn watch_from_compacted_revision_loses_a_delete_at_it(kv: Arc<dyn Kv>) {
    put(&kv, "/q/a", "1").await; // 2
    kv.delete(b("/q/a")).await.unwrap(); // 3
    put(&kv, "/q/b", "2").await; // 4
    kv.compact(3).await.unwrap();
    let mut from_compacted = watch(&kv, watch_prefix("/q/", 3, true)).await;
    assert_eq!(
        events_until(&mut from_compacted, 4).await,
        vec![put_event(kv_at("/q/b", "2", 4, 4, 1), None)]
    );
    let at3 = kv
        .range(RangeRequest::prefix("/q/").at_revision(3))
        .await
        .unwrap();
    assert_eq!(at3.count, 0);
}

/// A prefix watch sees only keys under its prefix; a key watch only its key.
async fn watches_are_isolated_by_prefix(kv: Arc<dyn Kv>) {
    let mut prefix = watch(&kv, watch_prefix("/p/", 0, false)).await;
    let mut exact = watch(
        &kv,
        WatchRequest {
            key: b("/p/x"),
            ..WatchRequest::default()
        },
    )
    .await;
    put(&kv, "/p", "no").await; // 2
    put(&kv, "/pa/1", "no").await; // 3
    put(&kv, "/p/xy", "prefix only").await; // 4
    put(&kv, "/q/1", "no").await; // 5
    put(&kv, "/p/x", "both").await; // 6
    let events = events_until(&mut prefix, 6).await;
    let keys: Vec<_> = events.iter().map(|e| e.kv.key.clone()).collect();
    assert_eq!(keys, vec![b("/p/xy"), b("/p/x")]);
    let events = events_until(&mut exact, 6).await;
    let keys: Vec<_> = events.iter().map(|e| e.kv.key.clone()).collect();
    assert_eq!(keys, vec![b("/p/x")]);
}

/// A watch that asked for progress notifications and sees no events gets one,
/// carrying the current revision.
async fn progress_notification_arrives(kv: Arc<dyn Kv>) {
    put(&kv, "/other", "1").await; // 2
    let mut watch = watch(
        &kv,
        WatchRequest {
            progress_notify: true,
            ..watch_prefix("/quiet/", 0, false)
        },
    )
    .await;
    put(&kv, "/other", "2").await; // 3: not in the watch's range
    let response = next(&mut watch).await.unwrap().unwrap();
    assert!(response.is_progress_notify(), "{response:?}");
    assert_eq!(response.header_revision, 3);
}

/// `request_progress` is answered with a progress notification at the current
/// revision, after the events before it.
async fn request_progress_is_answered(kv: Arc<dyn Kv>) {
    let mut watch = watch(&kv, watch_prefix("/r/", 0, false)).await;
    put(&kv, "/r/1", "a").await; // 2
    put(&kv, "/elsewhere", "b").await; // 3
    assert_eq!(events_until(&mut watch, 2).await.len(), 1);
    watch.progress.request_progress().await.unwrap();
    let response = next(&mut watch).await.unwrap().unwrap();
    assert!(response.is_progress_notify(), "{response:?}");
    assert_eq!(response.header_revision, 3);
}

macro_rules! contract {
    ($($scenario:ident),* $(,)?) => {
        mod embedded {
            use super::*;
            $(
                #[tokio::test]
                async fn $scenario() {
                    let options = EmbeddedKvOptions::default()
                        .with_progress_notify_interval(TEST_PROGRESS_NOTIFY_INTERVAL);
                    let kv: Arc<dyn Kv> = Arc::new(EmbeddedKv::with_options(options));
                    super::$scenario(kv).await;
                }
            )*
        }

        #[cfg(feature = "etcd")]
        mod etcd {
            use super::*;
            use stage5_storage::kv::EtcdKv;
            use stage5_storage::testing::EtcdServer;
            $(
                #[tokio::test]
                async fn $scenario() {
                    let Some(server) = EtcdServer::start_or_skip(stringify!($scenario)) else {
                        return;
                    };
                    let kv = EtcdKv::connect([server.client_url()]).await.expect("connect");
                    let kv: Arc<dyn Kv> = Arc::new(kv);
                    super::$scenario(kv).await;
                    drop(server);
                }
            )*
        }
    };
}

contract!(
    put_get_and_range,
    range_at_old_and_future_revisions,
    compaction_then_read,
    txn_compares_mod_revision,
    delete_semantics_and_event_shape,
    watch_replays_then_streams,
    watch_from_compacted_revision_is_cancelled,
    watch_from_compacted_revision_loses_a_delete_at_it,
    watches_are_isolated_by_prefix,
    progress_notification_arrives,
    request_progress_is_answered,
);

/// Fault: etcd killed under an open watch → the stream yields an error (or ends) in
/// bounded time, never hangs.
#[cfg(feature = "etcd")]
#[tokio::test]
async fn etcd_killed_under_an_open_watch_ends_the_stream_with_an_error() {
    use stage5_storage::kv::EtcdKv;
    use stage5_storage::testing::EtcdServer;
    let Some(mut server) = EtcdServer::start_or_skip(
        "etcd_killed_under_an_open_watch_ends_the_stream_with_an_error",
    ) else {
        return;
    };
    let kv: Arc<dyn Kv> =
        Arc::new(EtcdKv::connect([server.client_url()]).await.unwrap());
    let mut watch = watch(&kv, watch_prefix("/f/", 0, true)).await;
    put(&kv, "/f/1", "a").await;
    assert_eq!(events_until(&mut watch, 2).await.len(), 1);
    server.kill();
    match next(&mut watch).await {
        Some(Err(KvError::Unavailable(message))) => {
            eprintln!("watch ended with: {message}")
        }
        other => panic!("expected an Unavailable error, got {other:?}"),
    }
    assert!(
        next(&mut watch).await.is_none(),
        "the stream ends after the error"
    );
    match tokio::time::timeout(WAIT, kv.range(RangeRequest::key("/f/1"))).await {
        Ok(Err(KvError::Unavailable(_))) => {}
        other => panic!("expected Unavailable from a dead etcd, got {other:?}"),
    }
}

/// An idle connection stays up: etcd allows a client's keep-alive ping at most
/// every 5 s (`--grpc-keepalive-min-time`) and closes the connection of a client
/// that pings more often ("too many pings"), which ends every watch on it. The
/// client pings as clientv3 does for kube-apiserver: every 30 s, 10 s to answer.
/// etcd runs with its default progress-notify interval, so nothing but pings
/// crosses the connection while the store is idle; the idle time is what is
/// tested.
#[cfg(feature = "etcd")]
#[tokio::test]
async fn an_idle_etcd_watch_outlives_the_servers_ping_window() {
    use stage5_storage::kv::EtcdKv;
    use stage5_storage::testing::{
        ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL, EtcdServer,
    };
    let Some(server) = EtcdServer::start_or_skip_with(
        "an_idle_etcd_watch_outlives_the_servers_ping_window",
        ETCD_DEFAULT_PROGRESS_NOTIFY_INTERVAL,
    ) else {
        return;
    };
    let kv: Arc<dyn Kv> =
        Arc::new(EtcdKv::connect([server.client_url()]).await.unwrap());
    let mut watch = watch(&kv, watch_prefix("/idle/", 0, false)).await;
    let first = put(&kv, "/idle/1", "a").await;
    assert_eq!(events_until(&mut watch, first).await.len(), 1);
    // Three of etcd's 5 s ping windows with nothing to send.
    tokio::time::sleep(Duration::from_secs(16)).await;
    let second = put(&kv, "/idle/2", "b").await;
    let events = events_until(&mut watch, second).await;
    assert_eq!(events.len(), 1, "the watch is still open: {events:?}");
}
