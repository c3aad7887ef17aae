//! `watcher_tests.go`: watches, each scenario named after its upstream `Run*`
//! function.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use apimachinery::apis::meta::v1::{
    ListOptions, ResourceVersionMatch, WatchOptions,
};
use apimachinery::watch::Bookmark;
use futures::FutureExt;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;

use super::*;
use crate::{KeyScope, SelectionPredicate};

/// Mirrors `testWatchStruct`: the object to write (`None`: delete), whether the
/// watch sees it, and as what.
type WatchStep = (Option<Object>, bool, EventType);

fn watch_from(rv: &str) -> WatchOptions {
    WatchOptions {
        resource_version: rv.to_string(),
        ..WatchOptions::default()
    }
}

fn selection(label: &str, field: &str) -> SelectionPredicate {
    SelectionPredicate::parse(&ResourceInfo::PODS, label, field)
        .unwrap_or_else(|e| panic!("bad selector {label:?} / {field:?}: {e}"))
}

fn event(kind: EventType, obj: Object) -> WatchEvent<Object> {
    let obj = Arc::new(obj);
    match kind {
        EventType::Added => WatchEvent::Added(obj),
        EventType::Modified => WatchEvent::Modified(obj),
        EventType::Deleted => WatchEvent::Deleted(obj),
        other => unreachable!("no object event of type {other}"),
    }
}

/// Writes `obj` at `key` with `GuaranteedUpdate(ignoreNotFound=true)`, as upstream's
/// watch tests do.
async fn put<S: Storage + ?Sized>(store: &S, key: &str, obj: Object) -> Arc<Object> {
    store
        .guaranteed_update_with(
            key.to_string(),
            true,
            Preconditions::default(),
            Box::new(move |_| Ok(obj.clone())),
        )
        .await
        .unwrap_or_else(|e| panic!("GuaranteedUpdate failed: {e}"))
}

/// Mirrors `RunTestWatch`: `testWatch` on one object's key, then on its namespace.
pub async fn run_test_watch<S: Storage + ?Sized>(store: &Arc<S>) {
    test_watch(store, false).await;
    test_watch(store, true).await;
}

/// Mirrors `testWatch`: the first occurrence is Added, an update Modified, and an
/// update that the filter drops Deleted.
async fn test_watch<S: Storage + ?Sized>(store: &Arc<S>, recursive: bool) {
    let base_pod = base_namespaced_pod("foo", "");
    let base_pod_assigned = base_namespaced_pod_assigned("foo", "", "bar");
    let selected = |pod: &Object| pod.clone().with_labels([("select", "true")]);
    use EventType::{Added, Deleted, Modified};
    let tests: Vec<(&str, usize, SelectionPredicate, Vec<WatchStep>)> = vec![
        (
            "create a key",
            1,
            SelectionPredicate::default(),
            vec![(Some(base_pod.clone()), true, Added)],
        ),
        (
            "key updated to match predicate",
            2,
            selection("", "spec.nodeName=bar"),
            vec![
                (Some(base_pod.clone()), false, Added),
                (Some(base_pod_assigned.clone()), true, Added),
            ],
        ),
        (
            "update",
            3,
            SelectionPredicate::default(),
            vec![
                (Some(base_pod.clone()), true, Added),
                (Some(base_pod_assigned.clone()), true, Modified),
            ],
        ),
        (
            "delete because of being filtered",
            4,
            selection("", "spec.nodeName!=bar"),
            vec![
                (Some(base_pod.clone()), true, Added),
                (Some(base_pod_assigned.clone()), true, Deleted),
            ],
        ),
        (
            "filtering",
            5,
            selection("select=true", ""),
            vec![
                (Some(selected(&base_pod)), true, Added),
                (Some(base_pod.clone()), true, Deleted),
                (Some(selected(&base_pod)), true, Added),
                (Some(selected(&base_pod_assigned)), true, Modified),
                (None, true, Deleted),
            ],
        ),
    ];
    let cases = tests
        .into_iter()
        .map(|(name, n, pred, watch_tests)| -> Case<'_> {
            let case = async move {
                let namespace = format!("test-ns-{n}-{recursive}");
                let mut watch_key = key(&format!("/pods/{namespace}"));
                let key = format!("{watch_key}/foo");
                let scope = if recursive {
                    KeyScope::Prefix
                } else {
                    watch_key = key.clone();
                    KeyScope::Object
                };
                // The current RV from which we can start watching.
                let out = store
                    .get_list_scoped(
                        watch_key.clone(),
                        scope,
                        ListOptions::default(),
                        pred.clone(),
                    )
                    .await
                    .unwrap_or_else(|e| panic!("List failed: {e}"));
                let mut w = store
                    .watch_scoped(
                        watch_key,
                        scope,
                        watch_from(&out.resource_version.to_string()),
                        pred,
                    )
                    .await
                    .unwrap_or_else(|e| panic!("Watch failed: {e}"));
                // A pod in another namespace first: its event must not reach us.
                let bad_namespace = format!("{namespace}-bad");
                put(
                    &**store,
                    &super::key(&format!("/pods/{bad_namespace}/foo")),
                    in_namespace(base_namespaced_pod("foo", ""), &bad_namespace),
                )
                .await;
                let mut prev: Option<Arc<Object>> = None;
                for (obj, expect_event, kind) in watch_tests {
                    let out = match obj {
                        Some(obj) => {
                            put(&**store, &key, in_namespace(obj, &namespace)).await
                        }
                        None => store
                            .delete(key.clone(), Preconditions::default())
                            .await
                            .unwrap_or_else(|e| panic!("Delete failed: {e}")),
                    };
                    if expect_event {
                        let expected = if kind == EventType::Deleted {
                            let prev =
                                prev.as_ref().expect("an object before the delete");
                            with_rv(prev, out.resource_version())
                        } else {
                            (*out).clone()
                        };
                        check_result(&mut w, event(kind, expected)).await;
                    }
                    prev = Some(out);
                }
                w.stop();
                check_stop(&mut w).await;
            };
            (name.to_string(), case.boxed())
        })
        .collect();
    run_cases_in_order(&format!("RunTestWatch (recursive={recursive})"), cases)
        .await;
}

/// Mirrors `RunTestWatchFromZero`: a watch from 0 starts with the current state,
/// even after compaction; a watch from a compacted version gets 410 Gone (or, as
/// etcd answers, 500 "etcd event received with PrevKv=nil").
pub async fn run_test_watch_from_zero<S: Storage + ?Sized>(
    store: &Arc<S>,
    compaction: Option<&Compaction>,
) {
    let (key, stored) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    let mut w = store
        .watch_scoped(
            key.clone(),
            KeyScope::Object,
            watch_from("0"),
            SelectionPredicate::default(),
        )
        .await
        .expect("Watch failed");
    check_result(&mut w, WatchEvent::Added(Arc::clone(&stored))).await;
    // Update.
    let out = put(
        &**store,
        &key,
        annotated(&base_namespaced_pod("foo", "test-ns"), &[("a", "1")]),
    )
    .await;
    // A Modified event, which also shows that a cache has seen the update.
    check_result(&mut w, WatchEvent::Modified(Arc::clone(&out))).await;
    w.stop();
    // A watch from 0 starts with an ADDED event.
    let mut w = store
        .watch_scoped(
            key.clone(),
            KeyScope::Object,
            watch_from("0"),
            SelectionPredicate::default(),
        )
        .await
        .expect("Watch failed");
    check_result(&mut w, WatchEvent::Added(Arc::clone(&out))).await;
    w.stop();
    drop(w);

    let Some(compaction) = compaction else {
        eprintln!("RunTestWatchFromZero: compaction callback not provided");
        return;
    };
    // Update again, and compact the previous versions.
    let new_out = put(&**store, &key, base_namespaced_pod("foo", "test-ns")).await;
    compaction(rv_of(&new_out)).await;
    // A watch from 0 still gets an ADDED event.
    let mut w = store
        .watch_scoped(
            key.clone(),
            KeyScope::Object,
            watch_from("0"),
            SelectionPredicate::default(),
        )
        .await
        .expect("Watch failed");
    check_result(&mut w, WatchEvent::Added(Arc::clone(&new_out))).await;
    // A watch from an older resource version gets "Gone".
    let mut too_old = store
        .watch_scoped(
            key,
            KeyScope::Object,
            watch_from(out.resource_version()),
            SelectionPredicate::default(),
        )
        .await
        .expect("Watch failed");
    check_result_func(&mut too_old, |event| match event {
        WatchEvent::Error(status) => {
            let expired = is_status(&status, 410, "Expired");
            // Upstream allows etcd's internal error too (see above).
            let internal = is_status(&status, 500, "InternalError");
            assert!(expired || internal, "expected 410 Expired, got {status:?}");
        }
        other => panic!("incorrect event type: expected ERROR, got {other:?}"),
    })
    .await;
}

fn is_status(status: &Status, code: i32, reason: &str) -> bool {
    status.status.as_deref() == Some("Failure")
        && status.code == Some(code)
        && status.reason.as_deref() == Some(reason)
}

/// Mirrors `RunTestDeleteTriggerWatch`.
pub async fn run_test_delete_trigger_watch<S: Storage + ?Sized>(store: &Arc<S>) {
    let (key, stored) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    let mut w = store
        .watch_scoped(
            key.clone(),
            KeyScope::Object,
            watch_from(stored.resource_version()),
            SelectionPredicate::default(),
        )
        .await
        .expect("Watch failed");
    store
        .delete(key, Preconditions::default())
        .await
        .expect("Delete failed");
    check_event_type(&mut w, EventType::Deleted).await;
}

/// Mirrors `RunTestWatchFromNonZero`.
pub async fn run_test_watch_from_non_zero<S: Storage + ?Sized>(store: &Arc<S>) {
    let (key, stored) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    let mut w = store
        .watch_scoped(
            key.clone(),
            KeyScope::Object,
            watch_from(stored.resource_version()),
            SelectionPredicate::default(),
        )
        .await
        .expect("Watch failed");
    let new_obj = annotated(&stored, &[("version", "2")]);
    let out = put(&**store, &key, new_obj).await;
    check_result(&mut w, WatchEvent::Modified(out)).await;
}

/// Mirrors `RunTestDelayedWatchDelivery`: 21 events written before the client reads;
/// at least 10 (the Cacher's buffer) arrive in order. Go stops the watcher and then
/// drains its channel; a stopped [`Watch`] drops what it buffered, so this reads
/// until all 21 arrived or the storage ended the watch, and then stops it.
pub async fn run_test_delayed_watch_delivery<S: Storage + ?Sized>(store: &Arc<S>) {
    let (_, stored) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    let mut watcher = store
        .watch(
            key("/pods/test-ns"),
            watch_from(stored.resource_version()),
            SelectionPredicate::default(),
        )
        .await
        .expect("Unexpected error");
    let total_pods = 21;
    for i in 0..total_pods {
        let pod = base_namespaced_pod(&format!("foo-{i}"), "test-ns");
        put(&**store, &compute_pod_key(&**store, &pod), pod).await;
    }
    let mut watched = 0;
    while watched < total_pods {
        match tokio::time::timeout(WAIT, watcher.next()).await {
            Ok(Some(Ok(event))) => {
                let name = event.object().map(|o| o.name().to_string());
                assert_eq!(
                    name.as_deref(),
                    Some(format!("foo-{watched}").as_str()),
                    "Unexpected object watched: {event:?}"
                );
                watched += 1;
            }
            Ok(Some(Err(err))) => panic!("watch stream error: {err}"),
            Ok(None) => break,
            Err(_) => panic!("time out after waiting {WAIT:?} on the watch"),
        }
    }
    watcher.stop();
    assert!(
        watched >= 10,
        "Unexpected number of events: {watched}, expected: {total_pods}"
    );
}

/// Mirrors `RunTestWatcherTimeout`: 50 watchers that never read do not hold back
/// one that does.
pub async fn run_test_watcher_timeout<S: Storage + ?Sized>(store: &Arc<S>) {
    let list = store
        .get_list(
            key("/pods"),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .expect("Failed to list pods");
    let initial_rv = list.resource_version.to_string();
    let mut non_reading = Vec::new();
    for _ in 0..50 {
        non_reading.push(
            store
                .watch(
                    key("/pods/test-ns"),
                    watch_from(&initial_rv),
                    SelectionPredicate::default(),
                )
                .await
                .expect("Unexpected error"),
        );
    }
    let mut reading = store
        .watch(
            key("/pods/test-ns"),
            watch_from(&initial_rv),
            SelectionPredicate::default(),
        )
        .await
        .expect("Unexpected error");
    let start = tokio::time::Instant::now();
    for i in 0..22 {
        let pod = base_namespaced_pod(&format!("foo-{i}"), "test-ns");
        let out = store
            .create(compute_pod_key(&**store, &pod), pod)
            .await
            .expect("Create failed");
        check_result(&mut reading, WatchEvent::Added(out)).await;
    }
    let limit = std::time::Duration::from_millis(250 * 50);
    assert!(
        start.elapsed() <= limit,
        "waiting for events took too long: {:?}",
        start.elapsed()
    );
    drop(non_reading);
}

/// Mirrors `RunTestWatchDeleteEventObjectHaveLatestRV`.
pub async fn run_test_watch_delete_event_object_have_latest_rv<
    S: Storage + ?Sized,
>(
    store: &Arc<S>,
) {
    let (key, stored) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    let mut w = store
        .watch_scoped(
            key.clone(),
            KeyScope::Object,
            watch_from(stored.resource_version()),
            SelectionPredicate::default(),
        )
        .await
        .expect("Watch failed");
    let deleted = store
        .delete(key, Preconditions::default())
        .await
        .expect("Delete failed");
    assert_ne!(
        stored.resource_version(),
        deleted.resource_version(),
        "ResourceVersion didn't change on deletion"
    );
    check_result(&mut w, WatchEvent::Deleted(deleted)).await;
}

/// Mirrors `RunOptionalTestProgressNotify`: a watch that asks for progress gets a
/// bookmark with nothing but a resource version. Here bookmarks are asked for with
/// `allow_watch_bookmarks`, which the etcd3 store turns into etcd's
/// `progress_notify`; the storage must run with a short progress-notify interval.
pub async fn run_optional_test_progress_notify<S: Storage + ?Sized>(
    store: &Arc<S>,
    increase_rv: &IncreaseRv,
) {
    let input = base_namespaced_pod("name", "test-ns");
    let key = compute_pod_key(&**store, &input);
    let out = store
        .create(key.clone(), input)
        .await
        .expect("Create failed");
    // etcd sends no progress notification to a watch on a future revision.
    increase_rv().await;
    let options = WatchOptions {
        allow_watch_bookmarks: true,
        ..watch_from(out.resource_version())
    };
    let mut w = store
        .watch_scoped(
            key,
            KeyScope::Object,
            options,
            SelectionPredicate::default(),
        )
        .await
        .expect("Watch failed");
    check_result_func(&mut w, |event| match event {
        WatchEvent::Bookmark(bookmark) => {
            let rv: u64 = bookmark.resource_version.parse().expect("a numeric rv");
            assert_rv_not_older_than(rv, rv_of(&out), "bookmark");
            assert!(
                bookmark.annotations.is_empty(),
                "bookmark event should contain an object with no fields set other than resourceVersion: {bookmark:?}"
            );
        }
        other => panic!("incorrect event type: expected BOOKMARK, got {other:?}"),
    })
    .await;
}

/// The watch cases of `RunTestClusterScopedWatch` and `RunTestNamespaceScopedWatch`.
struct ScopedWatchCase {
    name: &'static str,
    requested_name: &'static str,
    requested_namespace: &'static str,
    recursive: bool,
    field: &'static str,
    watch_tests: Vec<WatchStep>,
}

async fn run_scoped_watch_case<S: Storage + ?Sized>(store: &S, tt: ScopedWatchCase) {
    // A namespaced watch names an object only within a namespace.
    let mut watch_key = key("/pods");
    if !tt.requested_namespace.is_empty() {
        watch_key = format!("{watch_key}/{}", tt.requested_namespace);
    }
    let namespaced = store.info().namespaced;
    if !tt.requested_name.is_empty()
        && (!namespaced || !tt.requested_namespace.is_empty())
    {
        watch_key = format!("{watch_key}/{}", tt.requested_name);
    }
    let pred = SelectionPredicate::parse(store.info(), "", tt.field)
        .unwrap_or_else(|e| panic!("bad field selector {:?}: {e}", tt.field));
    let list = store
        .get_list(key("/pods"), ListOptions::default(), pred.clone())
        .await
        .unwrap_or_else(|e| panic!("Unexpected error: {e}"));
    let scope = if tt.recursive {
        KeyScope::Prefix
    } else {
        KeyScope::Object
    };
    let mut w = store
        .watch_scoped(
            watch_key,
            scope,
            watch_from(&list.resource_version.to_string()),
            pred,
        )
        .await
        .unwrap_or_else(|e| panic!("Watch failed: {e}"));
    let mut current: HashMap<String, Arc<Object>> = HashMap::new();
    for (obj, expect_event, kind) in tt.watch_tests {
        let obj = obj.expect("scoped watch tests always write");
        let key = compute_pod_key(store, &obj);
        let out = put(store, &key, obj).await;
        let expected = if kind == EventType::Deleted {
            let prev = current.remove(&key).expect("an object before the delete");
            with_rv(&prev, out.resource_version())
        } else {
            current.insert(key, Arc::clone(&out));
            (*out).clone()
        };
        if expect_event {
            check_result(&mut w, event(kind, expected)).await;
        }
    }
    w.stop();
    check_stop(&mut w).await;
}

/// A pod of `store`'s resource (namespaced or not).
fn scoped_pod(
    info: &ResourceInfo,
    name: &str,
    namespace: &str,
    data: serde_json::Value,
) -> Object {
    let namespace = (info.namespaced && !namespace.is_empty()).then_some(namespace);
    Object::new(info, namespace, name).with_data(data)
}

/// Mirrors `RunTestClusterScopedWatch`; `store` holds a cluster-scoped resource such
/// as [`CLUSTER_SCOPED_PODS`].
pub async fn run_test_cluster_scoped_watch<S: Storage + ?Sized>(store: &Arc<S>) {
    use EventType::{Added, Deleted, Modified};
    let info = store.info().clone();
    let pod = |name: &str| Some(scoped_pod(&info, name, "", json!({})));
    let updated = |name: &str| {
        Some(scoped_pod(
            &info,
            name,
            "",
            json!({"status": {"phase": "Running"}}),
        ))
    };
    let assigned = |name: &str, node: &str| {
        Some(scoped_pod(
            &info,
            name,
            "",
            json!({"spec": {"nodeName": node}}),
        ))
    };
    let tests = vec![
        ScopedWatchCase {
            name: "cluster-wide watch, request without name, without field selector",
            requested_name: "",
            requested_namespace: "",
            recursive: true,
            field: "",
            watch_tests: vec![
                (pod("t1-foo1"), true, Added),
                (updated("t1-foo1"), true, Modified),
                (assigned("t1-foo2", "t1-bar1"), true, Added),
            ],
        },
        ScopedWatchCase {
            name: "cluster-wide watch, request without name, field selector with spec.nodeName",
            requested_name: "",
            requested_namespace: "",
            recursive: true,
            field: "spec.nodeName=t2-bar1",
            watch_tests: vec![
                (pod("t2-foo1"), false, Added),
                (assigned("t2-foo1", "t2-bar1"), true, Added),
            ],
        },
        ScopedWatchCase {
            name: "cluster-wide watch, request without name, field selector with spec.nodeName to filter out watch",
            requested_name: "",
            requested_namespace: "",
            recursive: true,
            field: "spec.nodeName!=t3-bar1",
            watch_tests: vec![
                (pod("t3-foo1"), true, Added),
                (pod("t3-foo2"), true, Added),
                (updated("t3-foo1"), true, Modified),
                (assigned("t3-foo1", "t3-bar1"), true, Deleted),
            ],
        },
        ScopedWatchCase {
            name: "cluster-wide watch, request with name, field selector with metadata.name",
            requested_name: "t4-foo1",
            requested_namespace: "",
            recursive: false,
            field: "metadata.name=t4-foo1",
            watch_tests: vec![
                (pod("t4-foo1"), true, Added),
                (pod("t4-foo2"), false, Added),
                (updated("t4-foo1"), true, Modified),
                (updated("t4-foo2"), false, Added),
            ],
        },
        ScopedWatchCase {
            name: "cluster-wide watch, request with name, field selector with metadata.name and spec.nodeName",
            requested_name: "t5-foo1",
            requested_namespace: "",
            recursive: false,
            field: "metadata.name=t5-foo1,spec.nodeName=t5-bar1",
            watch_tests: vec![
                (pod("t5-foo1"), false, Added),
                (pod("t5-foo2"), false, Added),
                (updated("t5-foo1"), false, Added),
                (updated("t5-foo2"), false, Added),
                (assigned("t5-foo1", "t5-bar1"), true, Added),
            ],
        },
        ScopedWatchCase {
            name: "cluster-wide watch, request with name, field selector with metadata.name, and with spec.nodeName to filter out watch",
            requested_name: "t6-foo1",
            requested_namespace: "",
            recursive: false,
            field: "spec.nodeName!=t6-bar1,metadata.name=t6-foo1",
            watch_tests: vec![
                (pod("t6-foo1"), true, Added),
                (pod("t6-foo2"), false, Added),
                (updated("t6-foo1"), true, Modified),
                (assigned("t6-foo1", "t6-bar1"), true, Deleted),
                (assigned("t6-foo2", "t6-bar1"), false, Added),
            ],
        },
    ];
    let cases = tests
        .into_iter()
        .map(|tt| -> Case<'_> {
            let name = tt.name.to_string();
            (name, run_scoped_watch_case(&**store, tt).boxed())
        })
        .collect();
    run_cases_in_order("RunTestClusterScopedWatch", cases).await;
}

/// Mirrors `RunTestNamespaceScopedWatch`.
pub async fn run_test_namespace_scoped_watch<S: Storage + ?Sized>(store: &Arc<S>) {
    use EventType::{Added, Deleted, Modified};
    let p = |name: &str, ns: &str| Some(base_namespaced_pod(name, ns));
    let u = |name: &str, ns: &str| Some(base_namespaced_pod_updated(name, ns));
    let a = |name: &str, ns: &str, node: &str| {
        Some(base_namespaced_pod_assigned(name, ns, node))
    };
    let case = |name,
                requested_name,
                requested_namespace,
                recursive,
                field,
                watch_tests| {
        ScopedWatchCase {
            name,
            requested_name,
            requested_namespace,
            recursive,
            field,
            watch_tests,
        }
    };
    let tests = vec![
        case(
            "namespaced watch, request without name, request without namespace, without field selector",
            "",
            "",
            true,
            "",
            vec![
                (p("t1-foo1", "t1-ns1"), true, Added),
                (p("t1-foo2", "t1-ns2"), true, Added),
                (u("t1-foo1", "t1-ns1"), true, Modified),
                (u("t1-foo2", "t1-ns2"), true, Modified),
            ],
        ),
        case(
            "namespaced watch, request without name, request without namespace, field selector with metadata.namespace",
            "",
            "",
            true,
            "metadata.namespace=t2-ns1",
            vec![
                (p("t2-foo1", "t2-ns1"), true, Added),
                (p("t2-foo1", "t2-ns2"), false, Added),
                (u("t2-foo1", "t2-ns1"), true, Modified),
                (u("t2-foo1", "t2-ns2"), false, Added),
            ],
        ),
        case(
            "namespaced watch, request without name, request without namespace, field selector with spec.nodename",
            "",
            "",
            true,
            "spec.nodeName=t3-bar1",
            vec![
                (p("t3-foo1", "t3-ns1"), false, Added),
                (p("t3-foo2", "t3-ns2"), false, Added),
                (a("t3-foo1", "t3-ns1", "t3-bar1"), true, Added),
                (a("t3-foo2", "t3-ns2", "t3-bar1"), true, Added),
            ],
        ),
        case(
            "namespaced watch, request without name, request without namespace, field selector with spec.nodename to filter out watch",
            "",
            "",
            true,
            "spec.nodeName!=t4-bar1",
            vec![
                (p("t4-foo1", "t4-ns1"), true, Added),
                (p("t4-foo2", "t4-ns1"), true, Added),
                (u("t4-foo1", "t4-ns1"), true, Modified),
                (a("t4-foo1", "t4-ns1", "t4-bar1"), true, Deleted),
            ],
        ),
        case(
            "namespaced watch, request without name, request with namespace, without field selector",
            "",
            "t5-ns1",
            true,
            "",
            vec![
                (p("t5-foo1", "t5-ns1"), true, Added),
                (p("t5-foo1", "t5-ns2"), false, Added),
                (p("t5-foo2", "t5-ns1"), true, Added),
                (u("t5-foo1", "t5-ns1"), true, Modified),
                (u("t5-foo1", "t5-ns2"), false, Added),
            ],
        ),
        case(
            "namespaced watch, request without name, request with namespace, field selector with matched metadata.namespace",
            "",
            "t6-ns1",
            true,
            "metadata.namespace=t6-ns1",
            vec![
                (p("t6-foo1", "t6-ns1"), true, Added),
                (p("t6-foo1", "t6-ns2"), false, Added),
                (u("t6-foo1", "t6-ns1"), true, Modified),
            ],
        ),
        case(
            "namespaced watch, request without name, request with namespace, field selector with non-matched metadata.namespace",
            "",
            "t7-ns1",
            true,
            "metadata.namespace=t7-ns2",
            vec![
                (p("t7-foo1", "t7-ns1"), false, Added),
                (p("t7-foo1", "t7-ns2"), false, Added),
                (u("t7-foo1", "t7-ns1"), false, Added),
                (u("t7-foo1", "t7-ns2"), false, Added),
            ],
        ),
        case(
            "namespaced watch, request without name, request with namespace, field selector with spec.nodename",
            "",
            "t8-ns1",
            true,
            "spec.nodeName=t8-bar2",
            vec![
                (p("t8-foo1", "t8-ns1"), false, Added),
                (a("t8-foo1", "t8-ns1", "t8-bar1"), false, Added),
                (a("t8-foo1", "t8-ns2", "t8-bar2"), false, Added),
                (a("t8-foo1", "t8-ns1", "t8-bar2"), true, Added),
            ],
        ),
        case(
            "namespaced watch, request without name, request with namespace, field selector with spec.nodename to filter out watch",
            "",
            "t9-ns2",
            true,
            "spec.nodeName!=t9-bar1",
            vec![
                (p("t9-foo1", "t9-ns1"), false, Added),
                (p("t9-foo1", "t9-ns2"), true, Added),
                (a("t9-foo1", "t9-ns2", "t9-bar1"), true, Deleted),
                (a("t9-foo1", "t9-ns2", "t9-bar2"), true, Added),
            ],
        ),
        case(
            "namespaced watch, request with name, request without namespace, field selector with metadata.name",
            "t10-foo1",
            "",
            true,
            "metadata.name=t10-foo1",
            vec![
                (p("t10-foo1", "t10-ns1"), true, Added),
                (p("t10-foo1", "t10-ns2"), true, Added),
                (p("t10-foo2", "t10-ns1"), false, Added),
                (u("t10-foo1", "t10-ns1"), true, Modified),
                (a("t10-foo1", "t10-ns1", "t10-bar1"), true, Modified),
            ],
        ),
        case(
            "namespaced watch, request with name, request without namespace, field selector with metadata.name and metadata.namespace",
            "t11-foo1",
            "",
            true,
            "metadata.name=t11-foo1,metadata.namespace=t11-ns1",
            vec![
                (p("t11-foo1", "t11-ns1"), true, Added),
                (p("t11-foo2", "t11-ns1"), false, Added),
                (p("t11-foo1", "t11-ns2"), false, Added),
                (u("t11-foo1", "t11-ns1"), true, Modified),
                (a("t11-foo1", "t11-ns1", "t11-bar1"), true, Modified),
            ],
        ),
        case(
            "namespaced watch, request with name, request without namespace, field selector with metadata.name and spec.nodeName",
            "t12-foo1",
            "",
            true,
            "metadata.name=t12-foo1,spec.nodeName=t12-bar1",
            vec![
                (p("t12-foo1", "t12-ns1"), false, Added),
                (u("t12-foo1", "t12-ns1"), false, Added),
                (a("t12-foo1", "t12-ns1", "t12-bar1"), true, Added),
            ],
        ),
        case(
            "namespaced watch, request with name, request without namespace, field selector with metadata.name, and with spec.nodeName to filter out watch",
            "t15-foo1",
            "",
            true,
            "spec.nodeName!=t15-bar1,metadata.name=t15-foo1",
            vec![
                (p("t15-foo1", "t15-ns1"), true, Added),
                (p("t15-foo2", "t15-ns1"), false, Added),
                (u("t15-foo1", "t15-ns1"), true, Modified),
                (a("t15-foo1", "t15-ns1", "t15-bar1"), true, Deleted),
                (a("t15-foo1", "t15-ns1", "t15-bar2"), true, Added),
            ],
        ),
        case(
            "namespaced watch, request with name, request with namespace, with field selector metadata.name",
            "t16-foo1",
            "t16-ns1",
            false,
            "metadata.name=t16-foo1",
            vec![
                (p("t16-foo1", "t16-ns1"), true, Added),
                (p("t16-foo2", "t16-ns1"), false, Added),
                (u("t16-foo1", "t16-ns1"), true, Modified),
                (a("t16-foo1", "t16-ns1", "t16-bar1"), true, Modified),
            ],
        ),
        case(
            "namespaced watch, request with name, request with namespace, with field selector metadata.name and metadata.namespace",
            "t17-foo2",
            "t17-ns1",
            false,
            "metadata.name=t17-foo2,metadata.namespace=t17-ns1",
            vec![
                (p("t17-foo1", "t17-ns1"), false, Added),
                (p("t17-foo2", "t17-ns1"), true, Added),
                (u("t17-foo1", "t17-ns1"), false, Added),
                (a("t17-foo2", "t17-ns1", "t17-bar1"), true, Modified),
            ],
        ),
        case(
            "namespaced watch, request with name, request with namespace, with field selector metadata.name, metadata.namespace and spec.nodename",
            "t18-foo1",
            "t18-ns1",
            false,
            "metadata.name=t18-foo1,metadata.namespace=t18-ns1,spec.nodeName=t18-bar1",
            vec![
                (p("t18-foo1", "t18-ns1"), false, Added),
                (p("t18-foo2", "t18-ns1"), false, Added),
                (p("t18-foo1", "t18-ns2"), false, Added),
                (u("t18-foo1", "t18-ns1"), false, Added),
                (a("t18-foo1", "t18-ns1", "t18-bar1"), true, Added),
            ],
        ),
        case(
            "namespaced watch, request with name, request with namespace, with field selector metadata.name, metadata.namespace, and with spec.nodename to filter out watch",
            "t19-foo2",
            "t19-ns1",
            false,
            "spec.nodeName!=t19-bar1,metadata.name=t19-foo2,metadata.namespace=t19-ns1",
            vec![
                (p("t19-foo1", "t19-ns1"), false, Added),
                (p("t19-foo2", "t19-ns2"), false, Added),
                (p("t19-foo2", "t19-ns1"), true, Added),
                (u("t19-foo2", "t19-ns1"), true, Modified),
                (a("t19-foo2", "t19-ns1", "t19-bar1"), true, Deleted),
            ],
        ),
    ];
    let cases = tests
        .into_iter()
        .map(|tt| -> Case<'_> {
            let name = tt.name.to_string();
            (name, run_scoped_watch_case(&**store, tt).boxed())
        })
        .collect();
    run_cases_in_order("RunTestNamespaceScopedWatch", cases).await;
}

/// Mirrors `RunTestWatchDispatchBookmarkEvents`: a watch that does not allow
/// bookmarks never gets one; one that does gets one (before its 3 s deadline) when
/// `expected_watch_bookmarks`. Go's 3 s context deadline is the watch's
/// `timeout_seconds`. The two cases run concurrently.
pub async fn run_test_watch_dispatch_bookmark_events<S: Storage + ?Sized>(
    store: &Arc<S>,
    expected_watch_bookmarks: bool,
) {
    let (key, stored) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    let start_rv = stored.resource_version().to_string();
    let tests = [
        // An old client gets no bookmark.
        ("allowWatchBookmarks=false", false, false),
        ("allowWatchBookmarks=true", expected_watch_bookmarks, true),
    ];
    let cases = tests
        .into_iter()
        .enumerate()
        .map(|(i, (name, expected, allow_watch_bookmarks))| -> Case<'_> {
            let (key, start_rv) = (key.clone(), start_rv.clone());
            let case = async move {
                let timeout = std::time::Duration::from_secs(3);
                let options = WatchOptions {
                    allow_watch_bookmarks,
                    timeout_seconds: Some(3),
                    ..watch_from(&start_rv)
                };
                let mut watcher = store
                    .watch_scoped(
                        key,
                        KeyScope::Object,
                        options,
                        SelectionPredicate::default(),
                    )
                    .await
                    .expect("Unexpected error");
                // Events of pods in a different namespace.
                let obj = base_namespaced_pod("foo", &format!("other-ns-{i}"));
                store
                    .create(compute_pod_key(&**store, &obj), obj)
                    .await
                    .expect("Create failed");
                // Now wait for a bookmark.
                match tokio::time::timeout(timeout, watcher.next()).await {
                    Ok(Some(Ok(event))) => assert!(
                        !expected || matches!(event, WatchEvent::Bookmark(_)),
                        "Unexpected object watched {event:?}"
                    ),
                    Ok(Some(Err(err))) => panic!("watch stream error: {err}"),
                    Ok(None) => {
                        assert!(!expected, "Unexpected object watched (no objects)")
                    }
                    Err(_) => {
                        assert!(!expected, "Unexpected object watched (timeout)")
                    }
                }
            };
            (name.to_string(), case.boxed())
        })
        .collect();
    run_cases_concurrently("RunTestWatchDispatchBookmarkEvents", cases).await;
}

/// Mirrors `RunTestOptionalWatchBookmarksWithCorrectResourceVersion`: while pods are
/// created (one every 10 ms: pacing, not synchronisation), bookmarks never go back
/// in resource version and events always go forward; the watch ends at its 3 s
/// deadline, having seen a bookmark.
pub async fn run_test_optional_watch_bookmarks_with_correct_resource_version<
    S: Storage + ?Sized,
>(
    store: &Arc<S>,
) {
    let list = store
        .get_list(
            key("/pods"),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .expect("Unexpected error");
    let options = WatchOptions {
        allow_watch_bookmarks: true,
        timeout_seconds: Some(3),
        ..watch_from(&list.resource_version.to_string())
    };
    let mut watcher = store
        .watch(key("/pods/test-ns"), options, SelectionPredicate::default())
        .await
        .expect("Unexpected error");
    let done = AtomicBool::new(false);
    let creator = async {
        let mut pace = tokio::time::interval(std::time::Duration::from_millis(10));
        for i in 0..100 {
            if done.load(Ordering::Relaxed) {
                return;
            }
            pace.tick().await;
            let pod = base_namespaced_pod(&format!("foo-{i}"), "test-ns");
            store
                .create(compute_pod_key(&**store, &pod), pod)
                .await
                .unwrap_or_else(|e| panic!("failed to create pod: {e}"));
        }
    };
    let reader = async {
        let mut bookmark_received = false;
        let mut last_observed = 0u64;
        loop {
            let item = tokio::time::timeout(WAIT, watcher.next())
                .await
                .expect("the watch ends at its deadline");
            let Some(item) = item else { break };
            let event = item.expect("no stream error");
            let (rv, is_bookmark) = match &event {
                WatchEvent::Bookmark(b) => {
                    (b.resource_version.parse().unwrap_or(0), true)
                }
                other => (other.object().map_or(0, |o| rv_of(o)), false),
            };
            if is_bookmark {
                bookmark_received = true;
                // A bookmark's RV is at least the one before.
                assert!(
                    rv >= last_observed,
                    "Unexpected bookmark resourceVersion {rv} less than observed {last_observed}"
                );
            } else {
                // Any other event's RV is greater than anything before.
                assert!(
                    rv > last_observed,
                    "Unexpected event resourceVersion {rv} less than or equal to bookmark {last_observed}"
                );
            }
            last_observed = rv;
        }
        done.store(true, Ordering::Relaxed);
        assert!(bookmark_received, "we did not receive a bookmark event");
    };
    futures::join!(creator, reader);
}

/// Mirrors `RunSendInitialEventsBackwardCompatibility`: `sendInitialEvents` without
/// a resource version and without bookmarks still opens a watch.
pub async fn run_send_initial_events_backward_compatibility<S: Storage + ?Sized>(
    store: &Arc<S>,
) {
    let options = WatchOptions {
        send_initial_events: true,
        ..WatchOptions::default()
    };
    let mut w = store
        .watch(key("/pods"), options, SelectionPredicate::default())
        .await
        .expect("the watch opens");
    w.stop();
}

/// The bookmark that ends the initial events, at `rv`.
fn initial_events_end(rv: &str) -> WatchEvent<Object> {
    WatchEvent::Bookmark(Bookmark::initial_events_end(rv))
}

/// Mirrors `RunWatchSemantics` (14 of its 18 cases: `sendInitialEvents` is a Go
/// `*bool`, and stage 3's `WatchOptions::send_initial_events` a `bool`, so the four
/// cases with an explicit `false` and RV unset or 0 cannot be asked for; with RV 1
/// or the current RV, `false` and unset mean the same). Cases run concurrently,
/// each in its own namespace.
pub async fn run_watch_semantics<S: Storage + ?Sized>(store: &Arc<S>) {
    struct Scenario {
        name: &'static str,
        allow_watch_bookmarks: bool,
        send_initial_events: bool,
        resource_version: &'static str,
        use_current_rv: bool,
        expect_initial_events: bool,
        expect_initial_events_end_bookmark: bool,
    }
    let s = |name,
             allow_watch_bookmarks,
             send_initial_events,
             resource_version,
             use_current_rv,
             expect_initial_events,
             expect_initial_events_end_bookmark| Scenario {
        name,
        allow_watch_bookmarks,
        send_initial_events,
        resource_version,
        use_current_rv,
        expect_initial_events,
        expect_initial_events_end_bookmark,
    };
    let scenarios = vec![
        s(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=unset",
            true,
            true,
            "",
            false,
            true,
            true,
        ),
        s(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=unset",
            false,
            true,
            "",
            false,
            true,
            false,
        ),
        s(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=0",
            true,
            true,
            "0",
            false,
            true,
            true,
        ),
        s(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=0",
            false,
            true,
            "0",
            false,
            true,
            false,
        ),
        s(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=1",
            true,
            true,
            "1",
            false,
            true,
            true,
        ),
        s(
            "allowWatchBookmarks=true, sendInitialEvents=false, RV=1",
            true,
            false,
            "1",
            false,
            true,
            false,
        ),
        s(
            "allowWatchBookmarks=false, sendInitialEvents=false, RV=1",
            false,
            false,
            "1",
            false,
            true,
            false,
        ),
        s(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=1",
            false,
            true,
            "1",
            false,
            true,
            false,
        ),
        s(
            "allowWatchBookmarks=true, sendInitialEvents=true, RV=useCurrentRV",
            true,
            true,
            "",
            true,
            true,
            true,
        ),
        s(
            "allowWatchBookmarks=true, sendInitialEvents=false, RV=useCurrentRV",
            true,
            false,
            "",
            true,
            false,
            false,
        ),
        s(
            "allowWatchBookmarks=false, sendInitialEvents=false, RV=useCurrentRV",
            false,
            false,
            "",
            true,
            false,
            false,
        ),
        s(
            "allowWatchBookmarks=false, sendInitialEvents=true, RV=useCurrentRV",
            false,
            true,
            "",
            true,
            true,
            false,
        ),
        s("legacy, RV=0", false, false, "0", false, true, false),
        s("legacy, RV=unset", false, false, "", false, true, false),
    ];
    let cases = scenarios
        .into_iter()
        .enumerate()
        .map(|(idx, scenario)| -> Case<'_> {
            let case = async move {
                let ns = format!("ns-{idx}");
                let mut created = Vec::new();
                for suffix in ["1", "2", "3"] {
                    let obj = in_namespace(make_pod(suffix), &ns);
                    created.push(
                        store
                            .create(compute_pod_key(&**store, &obj), obj)
                            .await
                            .expect("failed to add a pod"),
                    );
                }
                let last_created_rv = created.last().map_or(0, |p| rv_of(p));
                // This list makes sure a cache has seen the created pods, so the
                // watch below is deterministic.
                let options = ListOptions {
                    resource_version: last_created_rv.to_string(),
                    resource_version_match: Some(ResourceVersionMatch::NotOlderThan),
                    ..ListOptions::default()
                };
                let list = store
                    .get_list(
                        key(&format!("/pods/{ns}")),
                        options,
                        SelectionPredicate::default(),
                    )
                    .await
                    .expect("list");
                assert_eq!(list.items.len(), created.len());
                let mut resource_version = scenario.resource_version.to_string();
                if scenario.use_current_rv {
                    let current = store
                        .get_current_resource_version()
                        .await
                        .expect("current resource version");
                    resource_version = current.to_string();
                }
                let options = WatchOptions {
                    resource_version,
                    allow_watch_bookmarks: scenario.allow_watch_bookmarks,
                    send_initial_events: scenario.send_initial_events,
                    ..WatchOptions::default()
                };
                let mut w = store
                    .watch(
                        key(&format!("/pods/{ns}")),
                        options,
                        SelectionPredicate::default(),
                    )
                    .await
                    .expect("failed to create watch");
                // Only the initial events first.
                if scenario.expect_initial_events {
                    let expected = created
                        .iter()
                        .map(|p| WatchEvent::Added(Arc::clone(p)))
                        .collect();
                    check_results_in_strict_order(&mut w, expected).await;
                }
                // The bookmark that ends them has at least the RV of the last pod.
                if scenario.expect_initial_events_end_bookmark {
                    check_result_func(&mut w, |event| match event {
                        WatchEvent::Bookmark(bookmark) => {
                            let rv: u64 = bookmark
                                .resource_version
                                .parse()
                                .expect("numeric rv");
                            assert!(
                                rv >= last_created_rv,
                                "bookmark rv {rv} < {last_created_rv}"
                            );
                            assert!(
                                same_event(
                                    &initial_events_end(&bookmark.resource_version),
                                    &WatchEvent::Bookmark(bookmark.clone())
                                ),
                                "incorrect event: {bookmark:?}"
                            );
                        }
                        other => panic!(
                            "expected the initial-events-end bookmark, got {other:?}"
                        ),
                    })
                    .await;
                }
                // Pods created after the watch started.
                let mut after = Vec::new();
                for suffix in ["4", "5"] {
                    let obj = in_namespace(make_pod(suffix), &ns);
                    after.push(WatchEvent::Added(
                        store
                            .create(compute_pod_key(&**store, &obj), obj)
                            .await
                            .expect("failed to add a pod"),
                    ));
                }
                check_result_with_ignore_func(&mut w, after, is_bookmark).await;
                check_no_more_results_with_ignore_func(&mut w, Some(is_bookmark))
                    .await;
            };
            (scenario.name.to_string(), case.boxed())
        })
        .collect();
    run_cases_concurrently("RunWatchSemantics", cases).await;
}

/// Mirrors `RunWatchSemanticInitialEventsExtended`: the bookmark that ends the
/// initial events carries the global resource version (moved by a pod in another
/// namespace).
pub async fn run_watch_semantic_initial_events_extended<S: Storage + ?Sized>(
    store: &Arc<S>,
) {
    let ns = "ns-foo";
    let mut initial = Vec::new();
    for suffix in ["1", "2", "3", "4", "5"] {
        let obj = in_namespace(make_pod(suffix), ns);
        initial.push(WatchEvent::Added(
            store
                .create(compute_pod_key(&**store, &obj), obj)
                .await
                .expect("failed to add a pod"),
        ));
    }
    // A pod in a different namespace advances the global RV.
    let other = in_namespace(make_pod("1"), "other-ns-foo");
    let other_ns_pod = store
        .create(compute_pod_key(&**store, &other), other)
        .await
        .expect("failed to add a pod");
    let options = WatchOptions {
        allow_watch_bookmarks: true,
        send_initial_events: true,
        ..WatchOptions::default()
    };
    let mut w = store
        .watch(
            key(&format!("/pods/{ns}")),
            options,
            SelectionPredicate::default(),
        )
        .await
        .expect("failed to create watch");
    // Only the initial events of the namespace, then the bookmark at the global RV.
    initial.push(initial_events_end(other_ns_pod.resource_version()));
    check_results_in_strict_order(&mut w, initial).await;
    check_no_more_results_with_ignore_func(&mut w, None).await;
}

/// Mirrors `RunWatchListMatchSingle`: a watch-list with a field selector on one
/// name gets that pod, then the bookmark at the global RV.
pub async fn run_watch_list_match_single<S: Storage + ?Sized>(store: &Arc<S>) {
    let ns = "ns-foo";
    let initial = in_namespace(make_pod("1"), ns);
    let expected = store
        .create(compute_pod_key(&**store, &initial), initial)
        .await
        .expect("failed to add a pod");
    // More pods that the field selector does not match.
    let mut last_added = Arc::clone(&expected);
    for suffix in ["2", "3", "4", "5"] {
        let obj = in_namespace(make_pod(suffix), ns);
        last_added = store
            .create(compute_pod_key(&**store, &obj), obj)
            .await
            .expect("failed to add a pod");
    }
    let options = WatchOptions {
        allow_watch_bookmarks: true,
        send_initial_events: true,
        ..WatchOptions::default()
    };
    let mut w = store
        .watch(key("/pods"), options, selection("", "metadata.name=pod-1"))
        .await
        .expect("failed to create watch");
    check_results_in_strict_order(
        &mut w,
        vec![
            WatchEvent::Added(expected),
            initial_events_end(last_added.resource_version()),
        ],
    )
    .await;
    check_no_more_results_with_ignore_func(&mut w, None).await;
}
