//! apiserver's storage contract suite, `k8s.io/apiserver/pkg/storage/testing`,
//! ported: one async function per upstream `Run*` function of `store_tests.go`
//! ([`store`]) and `watcher_tests.go` ([`watcher`]), generic over [`Storage`], with
//! the helpers of `utils.go` here.
//!
//! Upstream runs the same functions against the etcd3 store
//! (`pkg/storage/etcd3/store_test.go`, `watcher_test.go`) and the Cacher
//! (`pkg/storage/cacher/cacher_test.go`); stage 5 does the same: this crate's
//! integration tests run them on the etcd3 store over the embedded KV and over a
//! real etcd, and stage5-cacher's on the Cacher over each. A scenario gets the
//! storage under test, freshly created (upstream's `testSetup`), and the hooks its
//! Go counterpart takes as arguments ([`Compaction`], [`IncreaseRv`],
//! [`KeyValidation`], flags).
//!
//! Table-driven cases keep their Go names. Cases that upstream marks `t.Parallel()`
//! run concurrently, each to its end, and the scenario then panics naming every
//! failed case; sequential cases stop at the first that fails
//! ([`run_cases_in_order`]). Every wait is bounded
//! ([`WAIT`]), so a storage that never answers fails the test instead of hanging
//! it. What could not be ported, and why, is listed in the book's
//! `stage5/contract-suite.md`.
//!
//! Keys: upstream's store adds the `/registry` path prefix to keys such as
//! `/pods/ns/name`; here keys are full etcd keys, so `/pods/...` becomes
//! `/registry/pods/...` ([`object_key`], [`key`]).

/// Hands `$runner` the names of every scenario that runs on any [`Storage`], then
/// `extra` names (scenarios only one storage runs, such as the Cacher's
/// `run_wait_until_watch_cache_fresh_and_force_all_events`). Both integration-test
/// binaries, this crate's and stage5-cacher's, take their scenario list from here,
/// so a scenario added to the suite runs on all four combinations.
#[macro_export]
macro_rules! for_each_contract_scenario {
    ($runner:ident $(, $extra:ident)* $(,)?) => {
        $runner!(
            run_test_create,
            run_test_create_with_key_exist,
            run_test_get,
            run_test_unconditional_delete,
            run_test_conditional_delete,
            run_test_delete_with_suggestion,
            run_test_delete_with_suggestion_and_conflict,
            run_test_delete_with_suggestion_of_deleted_object,
            run_test_preconditional_delete_with_suggestion,
            run_test_preconditional_delete_with_only_suggestion_pass,
            run_test_list,
            run_test_consistent_list,
            run_test_get_list_non_recursive,
            run_test_get_list_recursive_prefix,
            run_test_list_continuation,
            run_test_list_pagination_rare_object,
            run_test_list_continuation_with_filter,
            run_test_list_inconsistent_continuation,
            run_test_guaranteed_update,
            run_test_guaranteed_update_with_conflict,
            run_test_guaranteed_update_with_suggestion_and_conflict,
            run_test_list_paging,
            run_test_namespace_scoped_list,
            run_test_count,
            run_test_watch,
            run_test_watch_from_zero,
            run_test_delete_trigger_watch,
            run_test_watch_from_non_zero,
            run_test_delayed_watch_delivery,
            run_test_watcher_timeout,
            run_test_watch_delete_event_object_have_latest_rv,
            run_test_namespace_scoped_watch,
            run_test_watch_dispatch_bookmark_events,
            run_send_initial_events_backward_compatibility,
            run_watch_semantics,
            run_watch_semantic_initial_events_extended,
            run_watch_list_match_single,
            $($extra,)*
        );
    };
}

pub mod store;
pub mod watcher;

pub use store::*;
pub use watcher::*;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Duration;

use crate::Watch;
use apimachinery::watch::{EventType, WatchEvent};
use futures::future::BoxFuture;
use futures::{FutureExt, StreamExt};
use serde_json::json;

use crate::kv::{Kv, RangeRequest};
use crate::{Object, Preconditions, ResourceInfo, Storage, StorageError};
use crate::{object_key, parse_resource_version};

/// How long any single wait of a scenario may take (upstream's
/// `wait.ForeverTestTimeout` is 30 s).
pub const WAIT: Duration = Duration::from_secs(10);

/// How long `testCheckNoMoreResults` watches for an unexpected event (1 s
/// upstream).
pub const NO_MORE_EVENTS_WAIT: Duration = Duration::from_millis(500);

/// Mirrors `Compaction`: compacts the storage at a resource version (for the
/// Cacher, its watch cache too).
pub type Compaction = Arc<dyn Fn(u64) -> BoxFuture<'static, ()> + Send + Sync>;

/// Mirrors `IncreaseRVFunc`: moves etcd's revision with a write outside the
/// resource; returns the new revision.
pub type IncreaseRv = Arc<dyn Fn() -> BoxFuture<'static, u64> + Send + Sync>;

/// Mirrors `KeyValidation`: checks what is stored under a key after a write.
pub type KeyValidation = Arc<dyn Fn(String) -> BoxFuture<'static, ()> + Send + Sync>;

/// Pods stored without a namespace (`/registry/pods/<name>`): the cluster-scoped
/// resource of `RunTestClusterScopedWatch` (upstream's `withClusterScopedKeyFunc`).
pub const CLUSTER_SCOPED_PODS: ResourceInfo = ResourceInfo {
    namespaced: false,
    ..ResourceInfo::PODS
};

/// Mirrors the etcd3 tests' `compactStorage` (and etcd3's `compact`): writes
/// `compact_rev_key` (moving the revision by one) and compacts etcd at `rv`.
pub fn compact_storage(kv: Arc<dyn Kv>) -> Compaction {
    Arc::new(move |rv: u64| {
        let kv = Arc::clone(&kv);
        Box::pin(async move {
            kv.put("compact_rev_key".into(), rv.to_string().into())
                .await
                .expect("write compact_rev_key");
            let rev = i64::try_from(rv).expect("a revision fits in i64");
            kv.compact(rev).await.expect("compact etcd");
        })
    })
}

/// Mirrors the etcd3 tests' `increaseRV`: a write to `increaseRV`, a key outside
/// every resource.
pub fn increase_rv(kv: Arc<dyn Kv>) -> IncreaseRv {
    Arc::new(move || {
        let kv = Arc::clone(&kv);
        Box::pin(async move {
            let (rev, _) = kv
                .put("increaseRV".into(), "ok".into())
                .await
                .expect("write increaseRV");
            u64::try_from(rev).expect("a revision is positive")
        })
    })
}

/// Mirrors the etcd3 tests' `checkStorageInvariants`: the key holds a JSON object
/// that decodes, stored without `resourceVersion` and `selfLink`.
pub fn check_storage_invariants(kv: Arc<dyn Kv>) -> KeyValidation {
    Arc::new(move |key: String| {
        let kv = Arc::clone(&kv);
        Box::pin(async move {
            let response = kv
                .range(RangeRequest::key(key.clone()))
                .await
                .expect("read the key");
            let stored = response
                .kvs
                .first()
                .unwrap_or_else(|| panic!("nothing stored under {key}"));
            let value: serde_json::Value = serde_json::from_slice(&stored.value)
                .unwrap_or_else(|e| panic!("{key} does not hold JSON: {e}"));
            let metadata = &value["metadata"];
            assert!(
                metadata.get("resourceVersion").is_none(),
                "{key}: the resourceVersion is stored: {value}"
            );
            assert!(
                metadata.get("selfLink").is_none(),
                "{key}: the selfLink is stored: {value}"
            );
            crate::etcd3::decode(&stored.value, stored.mod_revision)
                .unwrap_or_else(|e| panic!("{key} does not decode: {e}"));
        })
    })
}

/// The Cacher's `checkStorageInvariants`: nothing to check, the Cacher passes
/// writes to the storage underneath.
pub fn no_key_validation() -> KeyValidation {
    Arc::new(|_key: String| Box::pin(async {}))
}

// ---------------------------------------------------------------- objects and keys

/// An upstream key (`/pods/ns/name`) as a full etcd key (`/registry/pods/ns/name`).
pub fn key(upstream: &str) -> String {
    format!("/registry{upstream}")
}

/// Mirrors `baseNamespacedPod`: a pod with only a name and a namespace (`""`: none).
pub fn base_namespaced_pod(name: &str, namespace: &str) -> Object {
    let namespace = (!namespace.is_empty()).then_some(namespace);
    Object::new(&ResourceInfo::PODS, namespace, name)
}

/// Mirrors `baseNamespacedPodUpdated`: the pod with `status.phase=Running`.
pub fn base_namespaced_pod_updated(name: &str, namespace: &str) -> Object {
    base_namespaced_pod(name, namespace)
        .with_data(json!({"status": {"phase": "Running"}}))
}

/// Mirrors `baseNamespacedPodAssigned`: the pod with `spec.nodeName`.
pub fn base_namespaced_pod_assigned(
    name: &str,
    namespace: &str,
    node_name: &str,
) -> Object {
    base_namespaced_pod(name, namespace)
        .with_data(json!({"spec": {"nodeName": node_name}}))
}

/// Mirrors `makePod`: `pod-<suffix>`, namespace set by the caller.
pub fn make_pod(suffix: &str) -> Object {
    base_namespaced_pod(&format!("pod-{suffix}"), "")
}

/// The same object with these annotations (and no others).
pub fn annotated(obj: &Object, pairs: &[(&str, &str)]) -> Object {
    let mut obj = obj.clone();
    obj.metadata.annotations = Some(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    obj
}

/// The same object in `namespace`.
pub fn in_namespace(mut obj: Object, namespace: &str) -> Object {
    obj.metadata.namespace = Some(namespace.to_string());
    obj
}

/// Mirrors `computePodKey`: where the storage keeps `obj`.
pub fn compute_pod_key<S: Storage + ?Sized>(store: &S, obj: &Object) -> String {
    object_key(store.info(), Some(obj.namespace()), obj.name())
}

/// Mirrors `testPropagateStore`: deletes whatever is at the object's key, creates
/// the object, and returns the key and the stored object.
pub async fn test_propagate_store<S: Storage + ?Sized>(
    store: &S,
    obj: Object,
) -> (String, Arc<Object>) {
    let key = compute_pod_key(store, &obj);
    match store.delete(key.clone(), Preconditions::default()).await {
        Ok(_) | Err(StorageError::NotFound { .. }) => {}
        Err(err) => panic!("Cleanup failed: {err}"),
    }
    let stored = store
        .create(key.clone(), obj)
        .await
        .unwrap_or_else(|err| panic!("Set failed: {err}"));
    (key, stored)
}

/// The same object at another resource version.
pub fn with_rv(obj: &Object, rv: &str) -> Object {
    let mut obj = obj.clone();
    obj.metadata.resource_version = Some(rv.to_string());
    obj
}

/// A resource version as a number (`mustParseResourceVersion`).
pub fn rv_of(obj: &Object) -> u64 {
    parse_resource_version(obj.resource_version())
        .expect("a numeric resourceVersion")
}

/// Mirrors `resourceVersionNotOlderThan`.
pub fn assert_rv_not_older_than(got: u64, sentinel: u64, what: &str) {
    assert!(
        got >= sentinel,
        "{what}: expected a resourceVersion no smaller than {sentinel}, but got {got}"
    );
}

// ---------------------------------------------------------------- cases

/// One table-driven case: its upstream name and its body.
pub type Case<'a> = (String, BoxFuture<'a, ()>);

/// Runs cases one after the other (upstream's sequential `t.Run`). Unlike `t.Run`,
/// the first failing case ends the scenario and the cases after it are named as not
/// run: most failures here are a [`WAIT`] timeout, and a broken storage should fail
/// a scenario in one timeout, not in one per case.
pub async fn run_cases_in_order(scenario: &str, cases: Vec<Case<'_>>) {
    let mut cases = cases.into_iter();
    while let Some((name, case)) = cases.next() {
        if AssertUnwindSafe(case).catch_unwind().await.is_err() {
            let not_run: Vec<String> = cases.map(|(name, _)| name).collect();
            panic!(
                "{scenario}: case {name:?} failed; not run after it: {not_run:#?}"
            );
        }
    }
}

/// Runs cases concurrently (upstream's `t.Parallel()` cases), then fails naming
/// every failed case.
pub async fn run_cases_concurrently(scenario: &str, cases: Vec<Case<'_>>) {
    let results = futures::future::join_all(cases.into_iter().map(
        |(name, case)| async move {
            let failed = AssertUnwindSafe(case).catch_unwind().await.is_err();
            failed.then_some(name)
        },
    ))
    .await;
    let failed: Vec<String> = results.into_iter().flatten().collect();
    assert!(failed.is_empty(), "{scenario}: failed cases: {failed:#?}");
}

// ---------------------------------------------------------------- watch checks

/// The next event, within [`WAIT`]; the end of the stream, a stream error or the
/// timeout fails.
pub async fn next_event(w: &mut Watch<Object>) -> WatchEvent<Object> {
    match tokio::time::timeout(WAIT, w.next()).await {
        Ok(Some(Ok(event))) => event,
        Ok(Some(Err(err))) => panic!("watch stream error: {err}"),
        Ok(None) => panic!("the watch ended, expected an event"),
        Err(_) => panic!("time out after waiting {WAIT:?} on the watch"),
    }
}

/// Whether two events are the same: type and object (or bookmark, or status).
pub fn same_event(expected: &WatchEvent<Object>, got: &WatchEvent<Object>) -> bool {
    match (expected, got) {
        (WatchEvent::Added(a), WatchEvent::Added(b))
        | (WatchEvent::Modified(a), WatchEvent::Modified(b))
        | (WatchEvent::Deleted(a), WatchEvent::Deleted(b)) => a == b,
        (WatchEvent::Bookmark(a), WatchEvent::Bookmark(b)) => a == b,
        (WatchEvent::Error(a), WatchEvent::Error(b)) => a == b,
        _ => false,
    }
}

/// Mirrors `testCheckResult`: the next event is `expected`.
pub async fn check_result(w: &mut Watch<Object>, expected: WatchEvent<Object>) {
    let got = next_event(w).await;
    assert!(
        same_event(&expected, &got),
        "incorrect event:\nexpected: {expected:#?}\ngot: {got:#?}"
    );
}

/// Mirrors `testCheckResultFunc`: the next event passes `check`.
pub async fn check_result_func(
    w: &mut Watch<Object>,
    check: impl FnOnce(WatchEvent<Object>),
) {
    check(next_event(w).await);
}

/// Mirrors `testCheckEventType`.
pub async fn check_event_type(w: &mut Watch<Object>, expected: EventType) {
    let got = next_event(w).await;
    assert_eq!(got.event_type(), expected, "event type: {got:?}");
}

/// Mirrors `testCheckStop`: after `stop`, the watch yields nothing more.
pub async fn check_stop(w: &mut Watch<Object>) {
    match tokio::time::timeout(WAIT, w.next()).await {
        Ok(None) => {}
        Ok(Some(item)) => panic!("the watch should have been closed, got {item:?}"),
        Err(_) => panic!("time out after waiting {WAIT:?} on the watch"),
    }
}

/// Mirrors `testCheckResultsInStrictOrder`.
pub async fn check_results_in_strict_order(
    w: &mut Watch<Object>,
    expected: Vec<WatchEvent<Object>>,
) {
    for event in expected {
        check_result(w, event).await;
    }
}

/// Mirrors `testCheckResultWithIgnoreFunc`: the expected events, in order, skipping
/// the events `ignore` accepts.
pub async fn check_result_with_ignore_func(
    w: &mut Watch<Object>,
    expected: Vec<WatchEvent<Object>>,
    ignore: fn(&WatchEvent<Object>) -> bool,
) {
    for want in expected {
        let got = loop {
            let got = next_event(w).await;
            if !ignore(&got) {
                break got;
            }
        };
        assert!(
            same_event(&want, &got),
            "incorrect event:\nexpected: {want:#?}\ngot: {got:#?}"
        );
    }
}

/// Mirrors `TestCheckNoMoreResultsWithIgnoreFunc`: for [`NO_MORE_EVENTS_WAIT`], no
/// event that `ignore` does not accept.
pub async fn check_no_more_results_with_ignore_func(
    w: &mut Watch<Object>,
    ignore: Option<fn(&WatchEvent<Object>) -> bool>,
) {
    let quiet = async {
        loop {
            match w.next().await {
                Some(Ok(event)) if ignore.is_some_and(|ignore| ignore(&event)) => {}
                other => panic!("unexpected: {other:?}, expected no events"),
            }
        }
    };
    let _ = tokio::time::timeout(NO_MORE_EVENTS_WAIT, quiet).await;
}

/// Whether an event is a bookmark (the usual `ignoreEventsFn`).
pub fn is_bookmark(event: &WatchEvent<Object>) -> bool {
    matches!(event, WatchEvent::Bookmark(_))
}
