//! The etcd3 storage and its watchChan (source document 001), over the embedded
//! store and, with feature `etcd`, over a real etcd started by the test.

use std::sync::Arc;
use std::time::Duration;

use apimachinery::apis::meta::v1::{
    ListOptions, ResourceVersionMatch, WatchOptions,
};
use apimachinery::watch::WatchEvent;
use futures::StreamExt;
use serde_json::json;
use stage5_storage::Watch;
use stage5_storage::etcd3::Etcd3Store;
use stage5_storage::kv::{EmbeddedKv, EmbeddedKvOptions, Kv};
use stage5_storage::{Object, ResourceInfo, SelectionPredicate};
use stage5_storage::{Preconditions, StorageError, list_prefix, object_key};

const WAIT: Duration = Duration::from_secs(10);

fn pod(name: &str, app: &str) -> Object {
    Object::new(&ResourceInfo::PODS, Some("default"), name)
        .with_labels([("app", app)])
        .with_data(json!({"spec": {"nodeName": "node-0"}}))
}

fn key(name: &str) -> String {
    object_key(&ResourceInfo::PODS, Some("default"), name)
}

fn prefix() -> String {
    list_prefix(&ResourceInfo::PODS, Some("default"))
}

fn embedded() -> Arc<dyn Kv> {
    Arc::new(EmbeddedKv::with_options(
        EmbeddedKvOptions::default()
            .with_progress_notify_interval(Duration::from_millis(200)),
    ))
}

fn store(kv: &Arc<dyn Kv>) -> Etcd3Store {
    Etcd3Store::new(Arc::clone(kv), ResourceInfo::PODS)
}

async fn next(watch: &mut Watch<Object>) -> WatchEvent<Object> {
    match tokio::time::timeout(WAIT, watch.next()).await {
        Ok(Some(Ok(event))) => event,
        other => panic!("expected a watch event, got {other:?}"),
    }
}

async fn expect_end(watch: &mut Watch<Object>) {
    match tokio::time::timeout(WAIT, watch.next()).await {
        Ok(None) => {}
        other => panic!("expected the end of the watch, got {other:?}"),
    }
}

fn describe(event: &WatchEvent<Object>) -> (String, String, String) {
    match event {
        WatchEvent::Added(o) => {
            ("ADDED".into(), o.name().into(), o.resource_version().into())
        }
        WatchEvent::Modified(o) => (
            "MODIFIED".into(),
            o.name().into(),
            o.resource_version().into(),
        ),
        WatchEvent::Deleted(o) => (
            "DELETED".into(),
            o.name().into(),
            o.resource_version().into(),
        ),
        WatchEvent::Bookmark(b) => {
            ("BOOKMARK".into(), String::new(), b.resource_version.clone())
        }
        WatchEvent::Error(s) => (
            "ERROR".into(),
            format!("{:?}", s.code),
            s.message.clone().unwrap_or_default(),
        ),
    }
}

fn relabel(app: &'static str) -> stage5_storage::UpdateFn {
    Box::new(move |current: &Object| {
        let mut next = current.clone();
        next.metadata.labels = Some([("app".to_string(), app.to_string())].into());
        Ok(next)
    })
}

// ---------------------------------------------------------------- scenarios

async fn create_get_and_conflicts(kv: Arc<dyn Kv>) {
    let s = store(&kv);
    let created = s.create_object(key("a"), pod("a", "web")).await.unwrap();
    let rv: u64 = created.resource_version().parse().unwrap();
    assert!(rv > 0);
    let got = s.get_object(key("a")).await.unwrap();
    assert_eq!(got.resource_version(), created.resource_version());
    let again = s
        .create_object(key("a"), pod("a", "web"))
        .await
        .unwrap_err();
    assert!(
        matches!(again, StorageError::AlreadyExists { .. }),
        "{again:?}"
    );
    assert_eq!(again.code(), 409);
    let missing = s.get_object(key("zzz")).await.unwrap_err();
    assert_eq!(missing.code(), 404);
    let mut with_rv = pod("b", "web");
    with_rv.metadata.resource_version = Some("5".into());
    assert_eq!(
        s.create_object(key("b"), with_rv).await.unwrap_err().code(),
        400
    );
}

async fn updates_swap_on_mod_revision(kv: Arc<dyn Kv>) {
    let s = store(&kv);
    let created = s.create_object(key("a"), pod("a", "web")).await.unwrap();
    let updated = s
        .update_object(key("a"), Preconditions::default(), relabel("db"))
        .await
        .unwrap();
    assert!(
        updated.resource_version().parse::<u64>().unwrap()
            > created.resource_version().parse::<u64>().unwrap()
    );
    // An unchanged object is not written.
    let same = s
        .update_object(key("a"), Preconditions::default(), relabel("db"))
        .await
        .unwrap();
    assert_eq!(same.resource_version(), updated.resource_version());
    // Preconditions.
    let stale = Preconditions {
        resource_version: Some(created.resource_version().to_string()),
        ..Preconditions::default()
    };
    let err = s
        .update_object(key("a"), stale, relabel("x"))
        .await
        .unwrap_err();
    assert!(matches!(err, StorageError::Conflict { .. }), "{err:?}");
    let wrong_uid = Preconditions {
        uid: Some("nope".into()),
        ..Preconditions::default()
    };
    assert_eq!(
        s.delete_object(key("a"), wrong_uid)
            .await
            .unwrap_err()
            .code(),
        409
    );
    // Concurrent read-modify-writes: every increment survives.
    let mut tasks = Vec::new();
    for _ in 0..4 {
        let s = s.clone();
        tasks.push(tokio::spawn(async move {
            for _ in 0..10 {
                s.update_object(
                    key("a"),
                    Preconditions::default(),
                    Box::new(|current: &Object| {
                        let mut next = current.clone();
                        let n = next.data["count"].as_u64().unwrap_or(0);
                        next.data["count"] = json!(n + 1);
                        Ok(next)
                    }),
                )
                .await
                .unwrap();
            }
        }));
    }
    for task in tasks {
        task.await.unwrap();
    }
    assert_eq!(
        s.get_object(key("a")).await.unwrap().data["count"],
        json!(40)
    );
    // Delete: the last state at the delete's revision.
    let before = s.get_object(key("a")).await.unwrap();
    let deleted = s
        .delete_object(key("a"), Preconditions::default())
        .await
        .unwrap();
    assert!(
        deleted.resource_version().parse::<u64>().unwrap()
            > before.resource_version().parse::<u64>().unwrap()
    );
    assert_eq!(deleted.data["count"], json!(40));
    assert_eq!(
        s.delete_object(key("a"), Preconditions::default())
            .await
            .unwrap_err()
            .code(),
        404
    );
}

async fn lists_follow_resource_version_rules(kv: Arc<dyn Kv>) {
    let s = store(&kv);
    for i in 0..5 {
        s.create_object(
            key(&format!("p{i}")),
            pod(&format!("p{i}"), if i % 2 == 0 { "web" } else { "db" }),
        )
        .await
        .unwrap();
    }
    let all = s
        .list_objects(
            prefix(),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .unwrap();
    assert_eq!(all.items.len(), 5);
    let names: Vec<_> = all.items.iter().map(|o| o.name().to_string()).collect();
    assert_eq!(names, ["p0", "p1", "p2", "p3", "p4"]);
    let at = all.resource_version;

    // An exact read at an older revision sees the older state.
    s.delete_object(key("p0"), Preconditions::default())
        .await
        .unwrap();
    let exact = ListOptions {
        resource_version: at.to_string(),
        resource_version_match: Some(ResourceVersionMatch::Exact),
        ..ListOptions::default()
    };
    let old = s
        .list_objects(prefix(), exact.clone(), SelectionPredicate::default())
        .await
        .unwrap();
    assert_eq!(old.items.len(), 5);
    assert_eq!(old.resource_version, at);
    let now = s
        .list_objects(
            prefix(),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .unwrap();
    assert_eq!(now.items.len(), 4);

    // Paging with a selector: pages are pinned to the first page's revision.
    let web = SelectionPredicate::parse(&ResourceInfo::PODS, "app=web", "").unwrap();
    let first = s
        .list_objects(
            prefix(),
            ListOptions {
                limit: 1,
                ..ListOptions::default()
            },
            web.clone(),
        )
        .await
        .unwrap();
    assert_eq!(first.items.len(), 1);
    assert!(!first.continue_token.is_empty());
    s.create_object(key("p9"), pod("p9", "web")).await.unwrap();
    let second = s
        .list_objects(
            prefix(),
            ListOptions {
                limit: 5,
                continue_token: first.continue_token.clone(),
                ..ListOptions::default()
            },
            web.clone(),
        )
        .await
        .unwrap();
    let names: Vec<_> = first
        .items
        .iter()
        .chain(&second.items)
        .map(|o| o.name().to_string())
        .collect();
    assert_eq!(
        names,
        ["p2", "p4"],
        "p9 came after the first page's revision"
    );
    assert_eq!(second.resource_version, first.resource_version);
    assert!(second.continue_token.is_empty());

    // NotOlderThan a future version: 504; a malformed version: 400.
    let future = ListOptions {
        resource_version: (now.resource_version + 1000).to_string(),
        resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
        ..ListOptions::default()
    };
    let err = s
        .list_objects(prefix(), future, SelectionPredicate::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), 504, "{err:?}");
    let bad = ListOptions {
        resource_version: "abc".into(),
        ..ListOptions::default()
    };
    assert_eq!(
        s.list_objects(prefix(), bad, SelectionPredicate::default())
            .await
            .unwrap_err()
            .code(),
        400
    );
    let bad_token = ListOptions {
        continue_token: "!!".into(),
        ..ListOptions::default()
    };
    assert_eq!(
        s.list_objects(prefix(), bad_token, SelectionPredicate::default())
            .await
            .unwrap_err()
            .code(),
        400
    );

    // Compaction: the old exact read and the old continue token are 410.
    let latest = s.current_resource_version().await.unwrap();
    kv.compact(i64::try_from(latest).unwrap()).await.unwrap();
    let err = s
        .list_objects(prefix(), exact, SelectionPredicate::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), 410, "{err:?}");
    let err = s
        .list_objects(
            prefix(),
            ListOptions {
                limit: 5,
                continue_token: first.continue_token,
                ..ListOptions::default()
            },
            web,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), 410, "{err:?}");
    assert!(err.to_string().contains("continue"), "{err}");
}

async fn watch_from_zero_lists_then_streams(kv: Arc<dyn Kv>) {
    let s = store(&kv);
    let a = s.create_object(key("a"), pod("a", "web")).await.unwrap();
    let mut watch = s
        .watch_objects(
            prefix(),
            WatchOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .unwrap();
    assert_eq!(
        describe(&next(&mut watch).await),
        ("ADDED".into(), "a".into(), a.resource_version().into())
    );
    let b = s.create_object(key("b"), pod("b", "web")).await.unwrap();
    assert_eq!(
        describe(&next(&mut watch).await),
        ("ADDED".into(), "b".into(), b.resource_version().into())
    );
    let a2 = s
        .update_object(key("a"), Preconditions::default(), relabel("db"))
        .await
        .unwrap();
    assert_eq!(
        describe(&next(&mut watch).await),
        ("MODIFIED".into(), "a".into(), a2.resource_version().into())
    );
    let gone = s
        .delete_object(key("b"), Preconditions::default())
        .await
        .unwrap();
    let event = next(&mut watch).await;
    assert_eq!(
        describe(&event),
        ("DELETED".into(), "b".into(), gone.resource_version().into())
    );
    // The deleted object is the last state (its labels), at the delete's revision.
    if let WatchEvent::Deleted(obj) = event {
        assert_eq!(obj.metadata.labels.as_ref().unwrap()["app"], "web");
    }
    // Objects in other namespaces are not under the prefix.
    let other = Object::new(&ResourceInfo::PODS, Some("other"), "x");
    s.create_object(object_key(&ResourceInfo::PODS, Some("other"), "x"), other)
        .await
        .unwrap();
    let c = s.create_object(key("c"), pod("c", "web")).await.unwrap();
    assert_eq!(
        describe(&next(&mut watch).await),
        ("ADDED".into(), "c".into(), c.resource_version().into())
    );
}

async fn watch_from_a_version_replays_after_it(kv: Arc<dyn Kv>) {
    let s = store(&kv);
    let a = s.create_object(key("a"), pod("a", "web")).await.unwrap();
    let b = s.create_object(key("b"), pod("b", "web")).await.unwrap();
    let a2 = s
        .update_object(key("a"), Preconditions::default(), relabel("db"))
        .await
        .unwrap();
    let options = WatchOptions {
        resource_version: a.resource_version().into(),
        ..WatchOptions::default()
    };
    let mut watch = s
        .watch_objects(prefix(), options, SelectionPredicate::default())
        .await
        .unwrap();
    assert_eq!(
        describe(&next(&mut watch).await),
        ("ADDED".into(), "b".into(), b.resource_version().into())
    );
    assert_eq!(
        describe(&next(&mut watch).await),
        ("MODIFIED".into(), "a".into(), a2.resource_version().into())
    );
}

async fn compaction_ends_a_watch_with_410(kv: Arc<dyn Kv>) {
    let s = store(&kv);
    let a = s.create_object(key("a"), pod("a", "web")).await.unwrap();
    for app in ["b", "c", "d"] {
        s.update_object(key("a"), Preconditions::default(), relabel(app))
            .await
            .unwrap();
    }
    let latest = s.current_resource_version().await.unwrap();
    kv.compact(i64::try_from(latest).unwrap()).await.unwrap();
    let options = WatchOptions {
        resource_version: a.resource_version().into(),
        ..WatchOptions::default()
    };
    let mut watch = s
        .watch_objects(prefix(), options, SelectionPredicate::default())
        .await
        .unwrap();
    let event = next(&mut watch).await;
    let (kind, code, message) = describe(&event);
    assert_eq!(
        (kind.as_str(), code.as_str()),
        ("ERROR", "Some(410)"),
        "{event:?}"
    );
    assert_eq!(
        message,
        "The resourceVersion for the provided watch is too old."
    );
    expect_end(&mut watch).await;
}

async fn bookmarks_come_from_progress_notifications(kv: Arc<dyn Kv>) {
    let s = store(&kv);
    s.create_object(key("a"), pod("a", "web")).await.unwrap();
    let options = WatchOptions {
        allow_watch_bookmarks: true,
        send_initial_events: true,
        ..WatchOptions::default()
    };
    let mut watch = s
        .watch_objects(prefix(), options, SelectionPredicate::default())
        .await
        .unwrap();
    assert_eq!(describe(&next(&mut watch).await).0, "ADDED");
    match next(&mut watch).await {
        WatchEvent::Bookmark(b) => assert!(b.is_initial_events_end(), "{b:?}"),
        other => panic!("expected the initial-events-end bookmark, got {other:?}"),
    }
    let current = s.current_resource_version().await.unwrap();
    // Then progress notifications, as plain bookmarks at the current revision.
    match next(&mut watch).await {
        WatchEvent::Bookmark(b) => {
            assert!(!b.is_initial_events_end());
            assert_eq!(b.resource_version, current.to_string());
        }
        other => panic!("expected a progress bookmark, got {other:?}"),
    }
}

async fn undecodable_values_end_the_watch_with_500(kv: Arc<dyn Kv>) {
    let s = store(&kv);
    let mut watch = s
        .watch_objects(
            prefix(),
            WatchOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .unwrap();
    kv.put(key("bad").into(), "not json".into()).await.unwrap();
    let (kind, code, _) = describe(&next(&mut watch).await);
    assert_eq!((kind.as_str(), code.as_str()), ("ERROR", "Some(500)"));
    expect_end(&mut watch).await;
}

/// Mirrors the `RunWatchSemantics` case "allowWatchBookmarks=true,
/// sendInitialEvents=true, RV=useCurrentRV"
/// (`k8s.io/apiserver/pkg/storage/testing/watcher_tests.go`), as upstream's
/// `watcher.go` runs it on etcd3: a watch-list at an explicit version lists the
/// current state first (`areInitialEventsRequired`, then `if forceInitialEvents {
/// wc.sync() }`), ends it with the initial-events-end bookmark, and then streams
/// what follows.
async fn run_watch_semantics_watch_list_at_the_current_rv(kv: Arc<dyn Kv>) {
    let s = store(&kv);
    s.create_object(key("a"), pod("a", "web")).await.unwrap();
    s.create_object(key("b"), pod("b", "web")).await.unwrap();
    let current = s.current_resource_version().await.unwrap();
    let options = WatchOptions {
        resource_version: current.to_string(),
        allow_watch_bookmarks: true,
        send_initial_events: true,
        ..WatchOptions::default()
    };
    let mut watch = s
        .watch_objects(prefix(), options, SelectionPredicate::default())
        .await
        .unwrap();
    let mut initial = Vec::new();
    for _ in 0..2 {
        let (kind, name, _) = describe(&next(&mut watch).await);
        initial.push((kind, name));
    }
    initial.sort();
    assert_eq!(
        initial,
        [
            ("ADDED".to_string(), "a".to_string()),
            ("ADDED".to_string(), "b".to_string())
        ]
    );
    match next(&mut watch).await {
        WatchEvent::Bookmark(b) => {
            assert!(b.is_initial_events_end(), "{b:?}");
            assert_eq!(b.resource_version, current.to_string());
        }
        other => panic!("expected the initial-events-end bookmark, got {other:?}"),
    }
    s.create_object(key("c"), pod("c", "web")).await.unwrap();
    let (kind, name, _) = describe(&next(&mut watch).await);
    assert_eq!((kind.as_str(), name.as_str()), ("ADDED", "c"));
}

/// Mirrors the `RunWatchSemantics` case "sendInitialEvents=true, RV=useFutureRV"
/// (upstream expects `NewTooLargeResourceVersionError` from etcd3's
/// `startWatching`): a watch-list at a version the store has not reached is one
/// ERROR event, 504 with the cause `ResourceVersionTooLarge` and a Retry-After, and
/// then the end of the stream.
async fn run_watch_semantics_watch_list_at_a_future_rv_is_too_large(
    kv: Arc<dyn Kv>,
) {
    let s = store(&kv);
    s.create_object(key("a"), pod("a", "web")).await.unwrap();
    let current = s.current_resource_version().await.unwrap();
    let options = WatchOptions {
        resource_version: (current + 100).to_string(),
        allow_watch_bookmarks: true,
        send_initial_events: true,
        ..WatchOptions::default()
    };
    let mut watch = s
        .watch_objects(prefix(), options, SelectionPredicate::default())
        .await
        .unwrap();
    match next(&mut watch).await {
        WatchEvent::Error(status) => {
            assert_eq!(status.code, Some(504), "{status:?}");
            assert_eq!(status.reason.as_deref(), Some("Timeout"));
            let details = status.details.as_ref().expect("details");
            assert_eq!(details.retry_after_seconds, Some(1));
            let causes = details.causes.as_ref().expect("causes");
            assert_eq!(causes[0].reason.as_deref(), Some("ResourceVersionTooLarge"));
            assert!(apimachinery::api::errors::has_status_cause(
                &status,
                apimachinery::api::errors::reason::CAUSE_RESOURCE_VERSION_TOO_LARGE
            ));
        }
        other => panic!("expected a 504 error event, got {other:?}"),
    }
    expect_end(&mut watch).await;
}

// ---------------------------------------------------------------- embedded

macro_rules! embedded_tests {
    ($($name:ident),* $(,)?) => {
        mod embedded {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name(super::embedded()).await;
                }
            )*
        }
    };
}

/// Every scenario above, handed to `$runner`, which runs each on one backend.
macro_rules! for_each_scenario {
    ($runner:ident) => {
        $runner!(
            create_get_and_conflicts,
            updates_swap_on_mod_revision,
            lists_follow_resource_version_rules,
            watch_from_zero_lists_then_streams,
            watch_from_a_version_replays_after_it,
            compaction_ends_a_watch_with_410,
            bookmarks_come_from_progress_notifications,
            undecodable_values_end_the_watch_with_500,
            run_watch_semantics_watch_list_at_the_current_rv,
            run_watch_semantics_watch_list_at_a_future_rv_is_too_large,
        );
    };
}

for_each_scenario!(embedded_tests);

#[tokio::test]
async fn dropping_the_watch_stops_the_watch_chan() {
    let embedded = Arc::new(EmbeddedKv::new());
    let kv: Arc<dyn Kv> = embedded.clone();
    let s = store(&kv);
    let watch = s
        .watch_objects(
            prefix(),
            WatchOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .unwrap();
    let started = tokio::time::timeout(WAIT, async {
        while embedded.watcher_count() == 0 {
            tokio::task::yield_now().await;
        }
    });
    started.await.expect("the watchChan opened its etcd watch");
    drop(watch);
    let stopped = tokio::time::timeout(WAIT, async {
        while embedded.watcher_count() != 0 {
            tokio::task::yield_now().await;
        }
    });
    stopped
        .await
        .expect("dropping the watch cancels the etcd watch");
}

/// The transform of source document 001: the filter decides Added, Modified and
/// Deleted.
mod ex5_transform {
    use super::*;

    #[tokio::test]
    async fn ex5_transform_follows_the_filter_across_label_changes() {
        let kv = embedded();
        let s = store(&kv);
        let web =
            SelectionPredicate::parse(&ResourceInfo::PODS, "app=web", "").unwrap();
        let options = WatchOptions {
            resource_version: "1".into(),
            ..WatchOptions::default()
        };
        let mut watch = s.watch_objects(prefix(), options, web).await.unwrap();
        s.create_object(key("db"), pod("db", "db")).await.unwrap(); // never passes: nothing
        let a = s.create_object(key("a"), pod("a", "web")).await.unwrap();
        assert_eq!(
            describe(&next(&mut watch).await),
            ("ADDED".into(), "a".into(), a.resource_version().into())
        );
        let out = s
            .update_object(key("a"), Preconditions::default(), relabel("db"))
            .await
            .unwrap();
        let event = next(&mut watch).await;
        assert_eq!(
            describe(&event),
            ("DELETED".into(), "a".into(), out.resource_version().into())
        );
        if let WatchEvent::Deleted(old) = event {
            assert_eq!(
                old.metadata.labels.as_ref().unwrap()["app"],
                "web",
                "the old object"
            );
        }
        let back = s
            .update_object(key("a"), Preconditions::default(), relabel("web"))
            .await
            .unwrap();
        assert_eq!(
            describe(&next(&mut watch).await),
            ("ADDED".into(), "a".into(), back.resource_version().into())
        );
        let modified = s
            .update_object(
                key("a"),
                Preconditions::default(),
                Box::new(|o: &Object| {
                    let mut n = o.clone();
                    n.data["spec"]["nodeName"] = json!("node-1");
                    Ok(n)
                }),
            )
            .await
            .unwrap();
        assert_eq!(
            describe(&next(&mut watch).await),
            (
                "MODIFIED".into(),
                "a".into(),
                modified.resource_version().into()
            )
        );
        let gone = s
            .delete_object(key("a"), Preconditions::default())
            .await
            .unwrap();
        assert_eq!(
            describe(&next(&mut watch).await),
            ("DELETED".into(), "a".into(), gone.resource_version().into())
        );
    }

    #[tokio::test]
    async fn ex5_transform_turns_progress_into_bookmarks() {
        bookmarks_come_from_progress_notifications(embedded()).await;
    }
}

// ---------------------------------------------------------------- real etcd

#[cfg(feature = "etcd")]
mod real_etcd {
    use super::*;
    use stage5_storage::kv::EtcdKv;
    use stage5_storage::testing::EtcdServer;

    async fn connect(server: &EtcdServer) -> Arc<dyn Kv> {
        Arc::new(
            EtcdKv::connect([server.client_url()])
                .await
                .expect("connect to the test etcd"),
        )
    }

    macro_rules! etcd_tests {
        ($($name:ident),* $(,)?) => {
            $(
                #[tokio::test]
                async fn $name() {
                    let Some(server) = EtcdServer::start_or_skip(concat!("etcd3_storage::real_etcd::", stringify!($name))) else {
                        return;
                    };
                    super::$name(connect(&server).await).await;
                }
            )*
        };
    }

    for_each_scenario!(etcd_tests);

    #[tokio::test]
    async fn etcd_killed_while_watching_gives_an_error_event() {
        let Some(mut server) = EtcdServer::start_or_skip(
            "etcd_killed_while_watching_gives_an_error_event",
        ) else {
            return;
        };
        let kv = connect(&server).await;
        let s = store(&kv);
        s.create_object(key("a"), pod("a", "web")).await.unwrap();
        let mut watch = s
            .watch_objects(
                prefix(),
                WatchOptions::default(),
                SelectionPredicate::default(),
            )
            .await
            .unwrap();
        assert_eq!(describe(&next(&mut watch).await).0, "ADDED");
        server.kill();
        // An Error event, then the end; never a hang.
        let (kind, code, _) = describe(&next(&mut watch).await);
        assert_eq!((kind.as_str(), code.as_str()), ("ERROR", "Some(500)"));
        expect_end(&mut watch).await;
    }
}
