//! `store_tests.go`: create, get, delete, list and update, each scenario named
//! after its upstream `Run*` function.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use apimachinery::apis::meta::v1::{ListOptions, ResourceVersionMatch};
use futures::FutureExt;

use super::*;
use crate::etcd3::encode_continue;
use crate::{GetOptions, KeyScope, ListResult, SelectionPredicate};

/// `storage.ErrResourceVersionSetOnCreate`.
const RESOURCE_VERSION_SET_ON_CREATE: &str =
    "resourceVersion should not be set on objects to be created";

fn predicate(field: &str) -> SelectionPredicate {
    SelectionPredicate::parse(&ResourceInfo::PODS, "", field)
        .unwrap_or_else(|e| panic!("bad field selector {field:?}: {e}"))
}

/// A precondition failure: upstream's `storage.IsInvalidObj`, which the apiserver
/// answers with 409 Conflict; here the storage answers Conflict directly.
fn is_invalid_obj(err: &StorageError) -> bool {
    matches!(err, StorageError::Conflict { message, .. }
        if message.starts_with("Precondition failed"))
}

fn items(list: &ListResult) -> Vec<Object> {
    list.items.iter().map(|o| (**o).clone()).collect()
}

fn sorted_by_key(mut pods: Vec<Object>) -> Vec<Object> {
    pods.sort_by_key(|p| {
        object_key(&ResourceInfo::PODS, Some(p.namespace()), p.name())
    });
    pods
}

/// Mirrors `RunTestCreate`.
pub async fn run_test_create<S: Storage + ?Sized>(
    store: &Arc<S>,
    validation: &KeyValidation,
) {
    let cases = [
        (
            "successful create",
            base_namespaced_pod("foo", "test-ns"),
            None,
        ),
        (
            "create with ResourceVersion set",
            with_rv(&base_namespaced_pod("bar", "test-ns"), "1"),
            Some(RESOURCE_VERSION_SET_ON_CREATE),
        ),
    ];
    let cases = cases
        .into_iter()
        .map(|(name, input, expected_error)| -> Case<'_> {
            let case = async move {
                let key = compute_pod_key(&**store, &input);
                let before = store.get(key.clone()).await;
                assert!(
                    matches!(before, Err(StorageError::NotFound { .. })),
                    "expecting empty result on key {key}, got {before:?}"
                );
                let result = store.create(key.clone(), input.clone()).await;
                match (expected_error, result) {
                    (Some(expected), Err(err)) => {
                        assert_eq!(err.to_string(), expected);
                    }
                    (Some(expected), Ok(out)) => {
                        panic!("expecting error {expected:?}, but got {out:?}")
                    }
                    (None, Err(err)) => panic!("expecting no error, but got: {err}"),
                    (None, Ok(out)) => {
                        assert_eq!(out.name(), input.name(), "pod name");
                        assert!(
                            !out.resource_version().is_empty(),
                            "output should have non-empty resource version"
                        );
                        validation(key).await;
                    }
                }
            };
            (name.to_string(), case.boxed())
        })
        .collect();
    run_cases_in_order("RunTestCreate", cases).await;
}

/// Mirrors `RunTestCreateWithKeyExist`.
pub async fn run_test_create_with_key_exist<S: Storage + ?Sized>(store: &Arc<S>) {
    let obj = base_namespaced_pod("foo", "test-ns");
    let (key, _) = test_propagate_store(&**store, obj.clone()).await;
    let err = store.create(key, obj).await.unwrap_err();
    assert!(
        matches!(err, StorageError::AlreadyExists { .. }),
        "expecting key exists error, but get: {err}"
    );
}

/// Mirrors `RunTestGet`.
pub async fn run_test_get<S: Storage + ?Sized>(store: &Arc<S>) {
    let (key, created) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    // Update the object once to allow get by exact resource version to be tested.
    let update_obj = annotated(&created, &[("test-annotation", "1")]);
    let stored = store
        .guaranteed_update_with(
            key.clone(),
            true,
            Preconditions::default(),
            Box::new(move |_| Ok(update_obj.clone())),
        )
        .await
        .expect("Update failed");
    // An additional object moves the resource version of pods beyond foo's.
    let second = base_namespaced_pod("bar", "test-ns");
    let last_updated = store
        .create(compute_pod_key(&**store, &second), second)
        .await
        .expect("Set failed");

    struct GetCase {
        name: &'static str,
        key: String,
        ignore_not_found: bool,
        expect_not_found_err: bool,
        expect_rv_too_large: bool,
        /// `None` stands for the empty object an ignored NotFound gives.
        expected_out: Option<Option<Arc<Object>>>,
        expected_alternatives: Option<Vec<Option<Arc<Object>>>>,
        rv: String,
    }
    let base = |name, rv: String| GetCase {
        name,
        key: key.clone(),
        ignore_not_found: false,
        expect_not_found_err: false,
        expect_rv_too_large: false,
        expected_out: None,
        expected_alternatives: None,
        rv,
    };
    let tests = vec![
        GetCase {
            expected_out: Some(Some(Arc::clone(&stored))),
            ..base("get existing", String::new())
        },
        // For RV=0 arbitrarily old version is allowed, including from the moment
        // when the object didn't yet exist.
        GetCase {
            ignore_not_found: true,
            expected_alternatives: Some(vec![
                None,
                Some(Arc::clone(&created)),
                Some(Arc::clone(&stored)),
            ]),
            ..base("resource version 0", "0".into())
        },
        // Given that Get with set ResourceVersion is effectively always
        // NotOlderThan semantic, both versions of object are allowed.
        GetCase {
            expected_alternatives: Some(vec![
                Some(Arc::clone(&created)),
                Some(Arc::clone(&stored)),
            ]),
            ..base(
                "object created resource version",
                created.resource_version().into(),
            )
        },
        GetCase {
            expected_out: Some(Some(Arc::clone(&stored))),
            ..base(
                "current object resource version, match=NotOlderThan",
                stored.resource_version().into(),
            )
        },
        GetCase {
            expected_out: Some(Some(Arc::clone(&stored))),
            ..base(
                "latest resource version",
                last_updated.resource_version().into(),
            )
        },
        GetCase {
            expect_rv_too_large: true,
            ..base("too high resource version", i64::MAX.to_string())
        },
        GetCase {
            key: super::key("/pods/non-existing"),
            expect_not_found_err: true,
            ..base("get non-existing", String::new())
        },
        GetCase {
            key: super::key("/pods/non-existing"),
            ignore_not_found: true,
            expected_out: Some(None),
            ..base("get non-existing, ignore not found", String::new())
        },
    ];
    let cases = tests
        .into_iter()
        .map(|tt| -> Case<'_> {
            let name = tt.name.to_string();
            let case = async move {
                let options = GetOptions {
                    ignore_not_found: tt.ignore_not_found,
                    resource_version: tt.rv.clone(),
                };
                let result = store.get_with(tt.key.clone(), options).await;
                if tt.expect_not_found_err {
                    assert!(
                        matches!(result, Err(StorageError::NotFound { .. })),
                        "expecting not found error, but get: {result:?}"
                    );
                    return;
                }
                if tt.expect_rv_too_large {
                    assert!(
                        matches!(
                            result,
                            Err(StorageError::TooLargeResourceVersion { .. })
                        ),
                        "expecting resource version too high error, but get: {result:?}"
                    );
                    return;
                }
                let out = result.unwrap_or_else(|e| panic!("Get failed: {e}"));
                match (&tt.expected_out, &tt.expected_alternatives) {
                    (Some(expected), _) => {
                        assert_eq!(&out, expected, "{}: incorrect pod", tt.name)
                    }
                    (None, Some(alternatives)) => assert!(
                        alternatives.contains(&out),
                        "{}: differs from all items: {out:#?}",
                        tt.name
                    ),
                    (None, None) => unreachable!("every case expects something"),
                }
            };
            (name, case.boxed())
        })
        .collect();
    run_cases_concurrently("RunTestGet", cases).await;
}

/// Mirrors `RunTestUnconditionalDelete`.
pub async fn run_test_unconditional_delete<S: Storage + ?Sized>(store: &Arc<S>) {
    let (key, stored) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    let tests = [
        ("existing key", key, Some(stored.clone())),
        ("non-existing key", super::key("/pods/non-existing"), None),
    ];
    let cases = tests
        .into_iter()
        .map(|(name, key, expected_obj)| -> Case<'_> {
            let stored = Arc::clone(&stored);
            let case = async move {
                let result = store.delete(key, Preconditions::default()).await;
                let Some(expected) = expected_obj else {
                    assert!(
                        matches!(result, Err(StorageError::NotFound { .. })),
                        "expecting not found error, but get: {result:?}"
                    );
                    return;
                };
                let out = result.unwrap_or_else(|e| panic!("Delete failed: {e}"));
                // The returned object carries the delete's resource version.
                assert_ne!(
                    stored.resource_version(),
                    out.resource_version(),
                    "expecting resource version to be updated"
                );
                assert_eq!(
                    with_rv(&out, stored.resource_version()),
                    *expected,
                    "incorrect pod"
                );
            };
            (name.to_string(), case.boxed())
        })
        .collect();
    run_cases_in_order("RunTestUnconditionalDelete", cases).await;
}

fn with_uid(mut obj: Object, uid: &str) -> Object {
    obj.metadata.uid = Some(uid.to_string());
    obj
}

fn uid_precondition(uid: &str) -> Preconditions {
    Preconditions {
        uid: Some(uid.to_string()),
        ..Preconditions::default()
    }
}

/// Mirrors `RunTestConditionalDelete`. Upstream's `IsInvalidObj` is our 409
/// Conflict "Precondition failed".
pub async fn run_test_conditional_delete<S: Storage + ?Sized>(store: &Arc<S>) {
    let obj = with_uid(base_namespaced_pod("foo", "test-ns"), "A");
    let (key, stored) = test_propagate_store(&**store, obj.clone()).await;
    let stored = Arc::new(parking_lot::Mutex::new(stored));
    let tests = [("UID match", "A", false), ("UID mismatch", "B", true)];
    let cases = tests
        .into_iter()
        .map(|(name, uid, expect_invalid_obj_err)| -> Case<'_> {
            let (key, obj, stored) = (key.clone(), obj.clone(), Arc::clone(&stored));
            let case = async move {
                let result = store.delete(key, uid_precondition(uid)).await;
                if expect_invalid_obj_err {
                    let err = result.expect_err("expecting invalid UID error");
                    assert!(
                        is_invalid_obj(&err),
                        "expecting invalid UID error: {err}"
                    );
                    return;
                }
                let out = result.unwrap_or_else(|e| panic!("Delete failed: {e}"));
                let before = stored.lock().clone();
                assert_ne!(before.resource_version(), out.resource_version());
                assert_eq!(
                    with_rv(&out, before.resource_version()),
                    *before,
                    "incorrect pod"
                );
                let (_, again) = test_propagate_store(&**store, obj).await;
                *stored.lock() = again;
            };
            (name.to_string(), case.boxed())
        })
        .collect();
    run_cases_in_order("RunTestConditionalDelete", cases).await;
}

/// Mirrors `RunTestDeleteWithSuggestion`. Our `delete` takes no suggestion
/// (`cachedExistingObject`), which upstream allows implementations to ignore.
pub async fn run_test_delete_with_suggestion<S: Storage + ?Sized>(store: &Arc<S>) {
    let (key, _original) =
        test_propagate_store(&**store, base_namespaced_pod("name", "test-ns")).await;
    store
        .delete(key.clone(), Preconditions::default())
        .await
        .expect("Unexpected failure during deletion");
    let err = store.get(key).await.unwrap_err();
    assert!(matches!(err, StorageError::NotFound { .. }), "{err}");
}

fn update_to(obj: Object) -> UpdateFnOf {
    Box::new(move |_| Ok(obj.clone()))
}

type UpdateFnOf = crate::UpdateFn;

fn simple_update(f: impl Fn(&mut Object) + Send + 'static) -> UpdateFnOf {
    Box::new(move |current: &Object| {
        let mut next = current.clone();
        f(&mut next);
        Ok(next)
    })
}

/// Mirrors `RunTestDeleteWithSuggestionAndConflict` (the stale suggestion is not
/// passed: see [`run_test_delete_with_suggestion`]).
pub async fn run_test_delete_with_suggestion_and_conflict<S: Storage + ?Sized>(
    store: &Arc<S>,
) {
    let (key, _original) =
        test_propagate_store(&**store, base_namespaced_pod("name", "test-ns")).await;
    // First update, so the original pod is outdated.
    let updated = store
        .guaranteed_update(
            key.clone(),
            Preconditions::default(),
            simple_update(|pod| {
                pod.metadata.labels =
                    Some(BTreeMap::from([("foo".to_string(), "bar".to_string())]))
            }),
        )
        .await
        .expect("Unexpected failure during updated");
    let out = store
        .delete(key.clone(), Preconditions::default())
        .await
        .expect("Unexpected failure during deletion");
    let err = store.get(key).await.unwrap_err();
    assert!(matches!(err, StorageError::NotFound { .. }), "{err}");
    assert_eq!(
        with_rv(&updated, out.resource_version()),
        *out,
        "incorrect pod"
    );
}

/// Mirrors `RunTestDeleteWithSuggestionOfDeletedObject`.
pub async fn run_test_delete_with_suggestion_of_deleted_object<
    S: Storage + ?Sized,
>(
    store: &Arc<S>,
) {
    let (key, _original) =
        test_propagate_store(&**store, base_namespaced_pod("name", "test-ns")).await;
    store
        .delete(key.clone(), Preconditions::default())
        .await
        .expect("Unexpected failure during deletion");
    // Now try deleting again (upstream: with the stale object as the suggestion).
    let err = store
        .delete(key, Preconditions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(err, StorageError::NotFound { .. }),
        "Unexpected error during deletion: {err}, expected not-found"
    );
}

/// Mirrors `RunTestPreconditionalDeleteWithSuggestion`.
pub async fn run_test_preconditional_delete_with_suggestion<S: Storage + ?Sized>(
    store: &Arc<S>,
) {
    let (key, _original) =
        test_propagate_store(&**store, base_namespaced_pod("name", "test-ns")).await;
    store
        .guaranteed_update(
            key.clone(),
            Preconditions::default(),
            simple_update(|pod| pod.metadata.uid = Some("myUID".into())),
        )
        .await
        .expect("Unexpected failure during updated");
    store
        .delete(key.clone(), uid_precondition("myUID"))
        .await
        .expect("Unexpected failure during deletion");
    let err = store.get(key).await.unwrap_err();
    assert!(matches!(err, StorageError::NotFound { .. }), "{err}");
}

/// Mirrors `RunTestPreconditionalDeleteWithOnlySuggestionPass`.
pub async fn run_test_preconditional_delete_with_only_suggestion_pass<
    S: Storage + ?Sized,
>(
    store: &Arc<S>,
) {
    let (key, _original) = test_propagate_store(
        &**store,
        with_uid(base_namespaced_pod("name", "test-ns"), "myUID"),
    )
    .await;
    let updated = store
        .guaranteed_update(
            key.clone(),
            Preconditions::default(),
            simple_update(|pod| pod.metadata.uid = Some("otherUID".into())),
        )
        .await
        .expect("Unexpected failure during updated");
    // The original pod passes the precondition; the current one does not.
    let err = store
        .delete(key.clone(), uid_precondition("myUID"))
        .await
        .unwrap_err();
    assert!(
        is_invalid_obj(&err),
        "expecting invalid UID error, but get: {err}"
    );
    let out = store
        .get(key)
        .await
        .expect("Unexpected error on reading object");
    assert_eq!(out, updated, "incorrect pod");
}

/// Mirrors `seedMultiLevelData`:
///
/// ```text
/// /registry/pods/first/bar
/// /registry/pods/second/bar, second/foo, (deleted) second/baz
/// /registry/pods/third/barfoo, third/foo
/// ```
///
/// Returns the resource version before any write, the six created pods (in the
/// order above, baz last) and first/bar as updated with `spec.nodeName=fakeNode`.
pub async fn seed_multi_level_data<S: Storage + ?Sized>(
    store: &S,
) -> (u64, Vec<Arc<Object>>, Arc<Object>) {
    let bar_first = base_namespaced_pod("bar", "first");
    let preset = [
        bar_first.clone(),
        base_namespaced_pod("bar", "second"),
        base_namespaced_pod("foo", "second"),
        base_namespaced_pod("barfoo", "third"),
        base_namespaced_pod("foo", "third"),
        base_namespaced_pod("baz", "second"),
    ];
    // The resourceVersion before anything is created.
    let initial = store
        .get_list(
            key("/pods/"),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .expect("failed to determine starting resourceVersion");
    let mut created = Vec::new();
    for obj in preset {
        let key = compute_pod_key(store, &obj);
        created.push(
            store
                .create(key, obj)
                .await
                .expect("failed to create object"),
        );
    }
    // first/bar is updated (spec.nodeName), so that lists can tell the updated
    // object from the created one.
    let updated = store
        .guaranteed_update_with(
            compute_pod_key(store, &bar_first),
            true,
            Preconditions::default(),
            simple_update(|pod| pod.data["spec"] = json!({"nodeName": "fakeNode"})),
        )
        .await
        .expect("failed to update object");
    // second/baz is deleted after being created.
    store
        .delete(
            compute_pod_key(store, &base_namespaced_pod("baz", "second")),
            Preconditions::default(),
        )
        .await
        .expect("failed to delete object");
    (initial.resource_version, created, updated)
}

/// One case of `RunTestList`.
#[derive(Default)]
struct ListCase {
    name: &'static str,
    rv: String,
    rv_match: Option<ResourceVersionMatch>,
    prefix: String,
    field: &'static str,
    limit: u32,
    continue_token: String,
    ignore_for_watch_cache: bool,
    expected_out: Vec<Arc<Object>>,
    expected_alternatives: Option<Vec<Vec<Arc<Object>>>>,
    expect_continue: bool,
    expect_continue_exact: Option<String>,
    expected_remaining_item_count: Option<i64>,
    expect_error: bool,
    expect_rv_too_large: bool,
    expect_rv_too_old: bool,
    expect_continue_too_old: bool,
    expect_rv: Option<u64>,
    expect_rv_not_older_than: Option<u64>,
}

/// Mirrors `RunTestList` (upstream's checks of the Cacher's requests to etcd,
/// `expectCacherRequestsToEtcd`, need its request recorder and are not ported; the
/// two `match=Invalid` cases cannot be written: [`ResourceVersionMatch`] has no
/// invalid value).
pub async fn run_test_list<S: Storage + ?Sized>(
    store: &Arc<S>,
    compact: &Compaction,
    watch_cache_enabled: bool,
) {
    let (initial_rv, created, updated) = seed_multi_level_data(&**store).await;
    let list = store
        .get_list(
            key("/pods/second"),
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await
        .expect("list /pods/second");
    let continue_rv = list.resource_version;
    let list_rv = continue_rv.to_string();
    let c_rv = i64::try_from(continue_rv).expect("rv fits in i64");
    let second_continuation = encode_continue(c_rv, "foo");
    // Compact (which moves the revision by one) to test consistent lists.
    compact(rv_of(&created[0])).await;
    let current_rv = continue_rv + 1;
    let rv = |p: &Arc<Object>| p.resource_version().to_string();
    let rv_n = |p: &Arc<Object>| i64::try_from(rv_of(p)).expect("rv fits in i64");
    let c = |p: &Arc<Object>| Arc::clone(p);
    let all = || {
        vec![
            c(&updated),
            c(&created[1]),
            c(&created[2]),
            c(&created[3]),
            c(&created[4]),
        ]
    };
    let ns_key = |p: &Arc<Object>| format!("{}/{}\0", p.namespace(), p.name());
    let pods = key("/pods/");
    let first = key("/pods/first/");
    let second = key("/pods/second/");

    let tests = vec![
        ListCase {
            name: "rejects invalid resource version",
            prefix: pods.clone(),
            rv: "abc".into(),
            expect_error: true,
            ..ListCase::default()
        },
        ListCase {
            name: "rejects resource version and continue token",
            prefix: pods.clone(),
            limit: 1,
            continue_token: second_continuation.clone(),
            rv: "1".into(),
            expect_error: true,
            ..ListCase::default()
        },
        ListCase {
            name: "rejects resource version set too high",
            prefix: pods.clone(),
            rv: i64::MAX.to_string(),
            expect_rv_too_large: true,
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key",
            prefix: first.clone(),
            expected_out: vec![c(&updated)],
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to 0",
            prefix: first.clone(),
            expected_alternatives: Some(vec![vec![], vec![c(&updated)]]),
            rv: "0".into(),
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before update, match=Exact",
            prefix: first.clone(),
            expected_out: vec![c(&created[0])],
            rv: rv(&created[0]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[0])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before creation, match=Exact",
            prefix: second.clone(),
            rv: rv(&created[0]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[0])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key with resource version set after creation, match=Exact",
            prefix: second.clone(),
            expected_out: vec![c(&created[1])],
            rv: rv(&created[1]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[1])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before first write, match=Exact",
            prefix: first.clone(),
            rv: initial_rv.to_string(),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv_too_old: true,
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to 0, match=NotOlderThan",
            prefix: first.clone(),
            expected_alternatives: Some(vec![vec![], vec![c(&updated)]]),
            rv: "0".into(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key with resource version set before first write, match=NotOlderThan",
            prefix: first.clone(),
            expected_alternatives: Some(vec![vec![], vec![c(&updated)]]),
            rv: initial_rv.to_string(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to current resource version",
            prefix: first.clone(),
            expected_out: vec![c(&updated)],
            rv: list_rv.clone(),
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to current resource version, match=Exact",
            prefix: first.clone(),
            expected_out: vec![c(&updated)],
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(continue_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test List on existing key with resource version set to current resource version, match=NotOlderThan",
            prefix: first.clone(),
            expected_out: vec![c(&updated)],
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListCase::default()
        },
        ListCase {
            name: "test List on non-existing key",
            prefix: key("/pods/non-existing/"),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with pod name matching",
            prefix: first.clone(),
            field: "metadata.name!=bar",
            ..ListCase::default()
        },
        ListCase {
            name: "test List with pod name matching with resource version set to current resource version, match=NotOlderThan",
            prefix: first.clone(),
            field: "metadata.name!=bar",
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit",
            prefix: second.clone(),
            limit: 1,
            expected_out: vec![c(&created[1])],
            expect_rv: Some(current_rv),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                i64::try_from(current_rv).expect("rv fits in i64"),
                &format!("{}\0", created[1].name()),
            )),
            expected_remaining_item_count: Some(1),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit at current resource version",
            prefix: second.clone(),
            limit: 1,
            expected_out: vec![c(&created[1])],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                c_rv,
                &format!("{}\0", created[1].name()),
            )),
            expected_remaining_item_count: Some(1),
            rv: list_rv.clone(),
            expect_rv: Some(continue_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit at current resource version and match=Exact",
            prefix: second.clone(),
            limit: 1,
            expected_out: vec![c(&created[1])],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                c_rv,
                &format!("{}\0", created[1].name()),
            )),
            expected_remaining_item_count: Some(1),
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(continue_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit at current resource version and match=NotOlderThan",
            prefix: second.clone(),
            limit: 1,
            expected_out: vec![c(&created[1])],
            expect_continue: true,
            expected_remaining_item_count: Some(1),
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expect_rv_not_older_than: Some(continue_rv),
            ..ListCase::default()
        },
        // TODO(#108003) upstream: the watch cache ignores the limit with RV=0.
        ListCase {
            name: "test List with limit at resource version 0",
            prefix: second.clone(),
            limit: 1,
            ignore_for_watch_cache: true,
            expected_out: vec![c(&created[1])],
            expect_continue: true,
            expected_remaining_item_count: Some(1),
            rv: "0".into(),
            expect_rv_not_older_than: Some(continue_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit at resource version 0 match=NotOlderThan",
            prefix: second.clone(),
            limit: 1,
            ignore_for_watch_cache: true,
            expected_out: vec![c(&created[1])],
            expect_continue: true,
            expected_remaining_item_count: Some(1),
            rv: "0".into(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expect_rv_not_older_than: Some(continue_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit at resource version before created and match=Exact",
            prefix: second.clone(),
            limit: 1,
            rv: rv(&created[0]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[0])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit at resource version after created and match=Exact",
            prefix: second.clone(),
            limit: 1,
            expected_out: vec![c(&created[1])],
            rv: rv(&created[1]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[1])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with pregenerated continue token",
            prefix: second.clone(),
            limit: 1,
            continue_token: second_continuation.clone(),
            expected_out: vec![c(&created[2])],
            ..ListCase::default()
        },
        ListCase {
            name: "ignores resource version 0 for List with pregenerated continue token",
            prefix: second.clone(),
            limit: 1,
            continue_token: second_continuation.clone(),
            rv: "0".into(),
            expected_out: vec![c(&created[2])],
            ..ListCase::default()
        },
        ListCase {
            name: "test List with multiple levels of directories and expect flattened result",
            prefix: second.clone(),
            expected_out: vec![c(&created[1]), c(&created[2])],
            ..ListCase::default()
        },
        ListCase {
            name: "test List with multiple levels of directories and expect flattened result with current resource version and match=NotOlderThan",
            prefix: second.clone(),
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expected_out: vec![c(&created[1]), c(&created[2])],
            ..ListCase::default()
        },
        ListCase {
            name: "test List with filter returning only one item, ensure only a single page returned",
            prefix: pods.clone(),
            field: "metadata.name=barfoo",
            limit: 1,
            expected_out: vec![c(&created[3])],
            expect_continue: true,
            ..ListCase::default()
        },
        ListCase {
            name: "test List with filter returning only one item, ensure only a single page returned with current resource version and match=NotOlderThan",
            prefix: pods.clone(),
            field: "metadata.name=barfoo",
            limit: 1,
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expected_out: vec![c(&created[3])],
            expect_rv_not_older_than: Some(continue_rv),
            expect_continue: true,
            ..ListCase::default()
        },
        ListCase {
            name: "test List with filter returning only one item, covers the entire list",
            prefix: pods.clone(),
            field: "metadata.name=barfoo",
            limit: 2,
            expected_out: vec![c(&created[3])],
            ..ListCase::default()
        },
        ListCase {
            name: "test List with filter returning only one item, covers the entire list with current resource version and match=NotOlderThan",
            prefix: pods.clone(),
            field: "metadata.name=barfoo",
            limit: 2,
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expected_out: vec![c(&created[3])],
            expect_rv_not_older_than: Some(continue_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with filter returning only one item, covers the entire list, with resource version 0",
            prefix: pods.clone(),
            field: "metadata.name=barfoo",
            limit: 2,
            rv: "0".into(),
            expected_alternatives: Some(vec![vec![], vec![c(&created[3])]]),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with filter returning two items, more pages possible",
            prefix: pods.clone(),
            field: "metadata.name=bar",
            limit: 2,
            expect_continue: true,
            expected_out: vec![c(&updated), c(&created[1])],
            ..ListCase::default()
        },
        ListCase {
            name: "test List with filter returning two items, more pages possible with current resource version and match=NotOlderThan",
            prefix: pods.clone(),
            field: "metadata.name=bar",
            limit: 2,
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expect_continue: true,
            expected_out: vec![c(&updated), c(&created[1])],
            ..ListCase::default()
        },
        ListCase {
            name: "filter returns two items split across multiple pages",
            prefix: pods.clone(),
            field: "metadata.name=foo",
            limit: 2,
            expected_out: vec![c(&created[2]), c(&created[4])],
            ..ListCase::default()
        },
        ListCase {
            name: "filter returns two items split across multiple pages with current resource version and match=NotOlderThan",
            prefix: pods.clone(),
            field: "metadata.name=foo",
            limit: 2,
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expected_out: vec![c(&created[2]), c(&created[4])],
            ..ListCase::default()
        },
        ListCase {
            name: "filter returns one item for last page, ends on last item, not full",
            prefix: pods.clone(),
            field: "metadata.name=foo",
            limit: 2,
            continue_token: encode_continue(c_rv, "third/barfoo"),
            expected_out: vec![c(&created[4])],
            ..ListCase::default()
        },
        ListCase {
            name: "filter returns one item for last page, starts on last item, full",
            prefix: pods.clone(),
            field: "metadata.name=foo",
            limit: 1,
            continue_token: encode_continue(c_rv, "third/barfoo"),
            expected_out: vec![c(&created[4])],
            ..ListCase::default()
        },
        ListCase {
            name: "filter returns one item for last page, starts on last item, partial page",
            prefix: pods.clone(),
            field: "metadata.name=foo",
            limit: 2,
            continue_token: encode_continue(c_rv, "third/barfoo"),
            expected_out: vec![c(&created[4])],
            ..ListCase::default()
        },
        ListCase {
            name: "filter returns two items, page size equal to total list size",
            prefix: pods.clone(),
            field: "metadata.name=foo",
            limit: 5,
            expected_out: vec![c(&created[2]), c(&created[4])],
            ..ListCase::default()
        },
        ListCase {
            name: "filter returns two items, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: pods.clone(),
            field: "metadata.name=foo",
            limit: 5,
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expected_out: vec![c(&created[2]), c(&created[4])],
            ..ListCase::default()
        },
        ListCase {
            name: "filter returns one item, page size equal to total list size",
            prefix: pods.clone(),
            field: "metadata.name=barfoo",
            limit: 5,
            expected_out: vec![c(&created[3])],
            ..ListCase::default()
        },
        ListCase {
            name: "filter returns one item, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: pods.clone(),
            field: "metadata.name=barfoo",
            limit: 5,
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expected_out: vec![c(&created[3])],
            ..ListCase::default()
        },
        ListCase {
            name: "list all items",
            prefix: pods.clone(),
            expected_out: all(),
            ..ListCase::default()
        },
        ListCase {
            name: "list all items with current resource version and match=NotOlderThan",
            prefix: pods.clone(),
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expected_out: all(),
            ..ListCase::default()
        },
        ListCase {
            name: "verify list returns updated version of object; filter returns one item, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: pods.clone(),
            field: "spec.nodeName=fakeNode",
            limit: 5,
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            expected_out: vec![c(&updated)],
            ..ListCase::default()
        },
        ListCase {
            name: "verify list does not return deleted object; filter for deleted object, page size equal to total list size with current resource version and match=NotOlderThan",
            prefix: pods.clone(),
            field: "metadata.name=baz",
            limit: 5,
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            ..ListCase::default()
        },
        ListCase {
            name: "test consistent List",
            prefix: key("/pods/empty"),
            expect_rv: Some(current_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test non-consistent List",
            prefix: key("/pods/empty"),
            rv: "0".into(),
            expect_rv_not_older_than: Some(initial_rv),
            ..ListCase::default()
        },
        // match=Exact
        ListCase {
            name: "test List with resource version set before first write, match=Exact",
            prefix: pods.clone(),
            rv: initial_rv.to_string(),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv_too_old: true,
            ..ListCase::default()
        },
        ListCase {
            name: "test List with resource version of first write, match=Exact",
            prefix: pods.clone(),
            expected_out: vec![c(&created[0])],
            rv: rv(&created[0]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[0])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with resource version of second write, match=Exact",
            prefix: pods.clone(),
            expected_out: created[..2].to_vec(),
            rv: rv(&created[1]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[1])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with resource version of third write, match=Exact",
            prefix: pods.clone(),
            expected_out: created[..3].to_vec(),
            rv: rv(&created[2]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[2])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with resource version of fourth write, match=Exact",
            prefix: pods.clone(),
            expected_out: created[..4].to_vec(),
            rv: rv(&created[3]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[3])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with resource version of fifth write, match=Exact",
            prefix: pods.clone(),
            expected_out: created[..5].to_vec(),
            rv: rv(&created[4]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[4])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with resource version of six write, match=Exact",
            prefix: pods.clone(),
            expected_out: created.clone(),
            rv: rv(&created[5]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[5])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with resource version of seventh write, match=Exact",
            prefix: pods.clone(),
            expected_out: vec![
                c(&updated),
                c(&created[1]),
                c(&created[2]),
                c(&created[3]),
                c(&created[4]),
                c(&created[5]),
            ],
            rv: rv(&updated),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&updated)),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with resource version of eight write, match=Exact",
            prefix: pods.clone(),
            expected_out: all(),
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(continue_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with resource version after writes, match=Exact",
            prefix: pods.clone(),
            expected_out: all(),
            rv: (continue_rv + 1).to_string(),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(continue_rv + 1),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with future resource version, match=Exact",
            prefix: pods.clone(),
            rv: (continue_rv + 2).to_string(),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv_too_large: true,
            ..ListCase::default()
        },
        // limit, match=Exact
        ListCase {
            name: "test List with limit, resource version of second write, match=Exact",
            prefix: pods.clone(),
            limit: 1,
            expected_out: vec![c(&created[0])],
            rv: rv(&created[1]),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                rv_n(&created[1]),
                &ns_key(&created[0]),
            )),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(rv_of(&created[1])),
            expected_remaining_item_count: Some(1),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit, resource version of third write, match=Exact",
            prefix: pods.clone(),
            limit: 2,
            rv: rv(&created[2]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expected_out: created[..2].to_vec(),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                rv_n(&created[2]),
                &ns_key(&created[1]),
            )),
            expect_rv: Some(rv_of(&created[2])),
            expected_remaining_item_count: Some(1),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit, resource version of fourth write, match=Exact",
            prefix: pods.clone(),
            limit: 4,
            rv: rv(&created[3]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expected_out: created[..4].to_vec(),
            expect_rv: Some(rv_of(&created[3])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit, resource version of fifth write, match=Exact",
            prefix: pods.clone(),
            limit: 1,
            rv: rv(&created[4]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expected_out: vec![c(&created[0])],
            expect_rv: Some(rv_of(&created[4])),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                rv_n(&created[4]),
                &ns_key(&created[0]),
            )),
            expected_remaining_item_count: Some(4),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit, resource version of six write, match=Exact",
            prefix: pods.clone(),
            limit: 2,
            rv: rv(&created[5]),
            rv_match: Some(ResourceVersionMatch::Exact),
            expected_out: created[..2].to_vec(),
            expect_rv: Some(rv_of(&created[5])),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                rv_n(&created[5]),
                &ns_key(&created[1]),
            )),
            expected_remaining_item_count: Some(4),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit, resource version of seventh write, match=Exact",
            prefix: pods.clone(),
            limit: 4,
            rv: rv(&updated),
            rv_match: Some(ResourceVersionMatch::Exact),
            expected_out: vec![
                c(&updated),
                c(&created[1]),
                c(&created[5]),
                c(&created[2]),
            ],
            expect_rv: Some(rv_of(&updated)),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                rv_n(&updated),
                &ns_key(&created[2]),
            )),
            expected_remaining_item_count: Some(2),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit, resource version of eight write, match=Exact",
            prefix: pods.clone(),
            limit: 8,
            expected_out: all(),
            rv: list_rv.clone(),
            rv_match: Some(ResourceVersionMatch::Exact),
            expect_rv: Some(continue_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with limit, resource version after writes, match=Exact",
            prefix: pods.clone(),
            limit: 1,
            rv: (continue_rv + 1).to_string(),
            rv_match: Some(ResourceVersionMatch::Exact),
            expected_out: vec![c(&updated)],
            expect_rv: Some(continue_rv + 1),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                c_rv + 1,
                &ns_key(&updated),
            )),
            expected_remaining_item_count: Some(4),
            ..ListCase::default()
        },
        // Continue
        ListCase {
            name: "test List with continue, resource version before first write",
            prefix: pods.clone(),
            limit: 1,
            continue_token: encode_continue(
                i64::try_from(initial_rv).expect("rv fits in i64"),
                &ns_key(&created[0]),
            ),
            expect_continue_too_old: true,
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue, resource version of first write",
            prefix: pods.clone(),
            limit: 1,
            continue_token: encode_continue(rv_n(&created[0]), &ns_key(&created[0])),
            expect_rv: Some(rv_of(&created[0])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue, resource version of second write",
            prefix: pods.clone(),
            limit: 1,
            continue_token: encode_continue(rv_n(&created[1]), &ns_key(&created[0])),
            expected_out: vec![c(&created[1])],
            expect_rv: Some(rv_of(&created[1])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue, resource version of third write",
            prefix: pods.clone(),
            limit: 2,
            continue_token: encode_continue(rv_n(&created[2]), &ns_key(&created[1])),
            expected_out: vec![c(&created[2])],
            expect_rv: Some(rv_of(&created[2])),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue, resource version of fifth write",
            prefix: pods.clone(),
            limit: 1,
            continue_token: encode_continue(rv_n(&created[4]), &ns_key(&created[0])),
            expected_out: vec![c(&created[1])],
            expect_rv: Some(rv_of(&created[4])),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                rv_n(&created[4]),
                &ns_key(&created[1]),
            )),
            expected_remaining_item_count: Some(3),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue, resource version of six write",
            prefix: pods.clone(),
            limit: 2,
            continue_token: encode_continue(rv_n(&created[5]), &ns_key(&created[1])),
            expected_out: vec![c(&created[5]), c(&created[2])],
            expect_rv: Some(rv_of(&created[5])),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                rv_n(&created[5]),
                &ns_key(&created[2]),
            )),
            expected_remaining_item_count: Some(2),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue, resource version of seventh write",
            prefix: pods.clone(),
            limit: 4,
            continue_token: encode_continue(rv_n(&updated), &ns_key(&created[2])),
            expected_out: vec![c(&created[3]), c(&created[4])],
            expect_rv: Some(rv_of(&updated)),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue, resource version after writes",
            prefix: pods.clone(),
            limit: 1,
            continue_token: encode_continue(c_rv + 1, &ns_key(&updated)),
            expected_out: vec![c(&created[1])],
            expect_rv: Some(continue_rv + 1),
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                c_rv + 1,
                &ns_key(&created[1]),
            )),
            expected_remaining_item_count: Some(3),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue from second pod, negative resource version gives consistent read",
            prefix: pods.clone(),
            continue_token: encode_continue(-1, &ns_key(&created[0])),
            expected_out: vec![
                c(&created[1]),
                c(&created[2]),
                c(&created[3]),
                c(&created[4]),
            ],
            expect_rv: Some(current_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue from second pod and limit, negative resource version gives consistent read",
            prefix: pods.clone(),
            limit: 2,
            continue_token: encode_continue(-1, &ns_key(&created[0])),
            expected_out: vec![c(&created[1]), c(&created[2])],
            expect_continue: true,
            expect_continue_exact: Some(encode_continue(
                c_rv + 1,
                &ns_key(&created[2]),
            )),
            expect_rv: Some(current_rv),
            expected_remaining_item_count: Some(2),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue from third pod, negative resource version gives consistent read",
            prefix: pods.clone(),
            continue_token: encode_continue(-1, &ns_key(&created[2])),
            expected_out: vec![c(&created[3]), c(&created[4])],
            expect_rv: Some(current_rv),
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue from empty fails",
            prefix: pods.clone(),
            continue_token: encode_continue(c_rv, ""),
            expect_error: true,
            ..ListCase::default()
        },
        ListCase {
            name: "test List with continue from first pod, empty resource version fails",
            prefix: pods.clone(),
            continue_token: encode_continue(0, &ns_key(&created[0])),
            expect_error: true,
            ..ListCase::default()
        },
        ListCase {
            name: "test List with negative rv fails",
            prefix: pods.clone(),
            rv: "-1".into(),
            expect_error: true,
            ..ListCase::default()
        },
    ];
    let cases = tests
        .into_iter()
        .filter(|tt| !(watch_cache_enabled && tt.ignore_for_watch_cache))
        .map(|tt| -> Case<'_> {
            let name = tt.name.to_string();
            (name, run_list_case(&**store, tt).boxed())
        })
        .collect();
    run_cases_concurrently("RunTestList", cases).await;
}

async fn run_list_case<S: Storage + ?Sized>(store: &S, tt: ListCase) {
    let options = ListOptions {
        resource_version: tt.rv.clone(),
        resource_version_match: tt.rv_match,
        limit: tt.limit,
        continue_token: tt.continue_token.clone(),
        ..ListOptions::default()
    };
    let result = store
        .get_list(tt.prefix.clone(), options, predicate(tt.field))
        .await;
    if tt.expect_rv_too_large {
        assert!(
            matches!(result, Err(StorageError::TooLargeResourceVersion { .. })),
            "expecting resource version too high error, but get: {result:?}"
        );
        return;
    }
    if tt.expect_rv_too_old {
        let err = result.expect_err("expecting resource version too old error");
        assert!(
            err.to_string()
                .contains("The resourceVersion for the provided list is too old"),
            "expecting resource version too old error, but get: {err}"
        );
        return;
    }
    if tt.expect_continue_too_old {
        let err = result.expect_err("expecting continue too old error");
        assert!(
            err.to_string().contains(
                "The provided continue parameter is too old to display a consistent list result"
            ),
            "expecting continue too old error, but get: {err}"
        );
        return;
    }
    let out = match result {
        Err(_) if tt.expect_error => return,
        Err(err) => panic!("GetList failed: {err}"),
        Ok(_) if tt.expect_error => panic!("expected error but got none"),
        Ok(out) => out,
    };
    assert_eq!(
        !out.continue_token.is_empty(),
        tt.expect_continue,
        "unexpected continue token: {:?}",
        out.continue_token
    );
    if let Some(exact) = &tt.expect_continue_exact {
        assert_eq!(
            decoded_continue(&out.continue_token),
            decoded_continue(exact),
            "continue token"
        );
    }
    // If a client requests an exact resource version, it must be echoed back.
    if let Some(rv) = tt.expect_rv {
        assert_eq!(out.resource_version, rv, "resourceVersion in list response");
    }
    if let Some(sentinel) = tt.expect_rv_not_older_than {
        assert_rv_not_older_than(out.resource_version, sentinel, "list response");
    }
    let got = items(&out);
    match &tt.expected_alternatives {
        None => {
            let expected = sorted_by_key(
                tt.expected_out.iter().map(|o| (**o).clone()).collect(),
            );
            assert_eq!(got, expected, "incorrect list pods");
        }
        Some(alternatives) => {
            let alternatives: Vec<Vec<Object>> = alternatives
                .iter()
                .map(|a| a.iter().map(|o| (**o).clone()).collect())
                .collect();
            assert!(
                alternatives.contains(&got),
                "incorrect list pods: differs from all items: {got:#?}"
            );
        }
    }
    assert_eq!(
        out.remaining_item_count, tt.expected_remaining_item_count,
        "unexpected remainingItemCount"
    );
}

/// `ExpectContinueMatches`: tokens compared decoded, so a difference is readable.
fn decoded_continue(token: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
        .unwrap_or_else(|_| token.to_string())
}

/// Mirrors `RunTestConsistentList`.
pub async fn run_test_consistent_list<S: Storage + ?Sized>(
    store: &Arc<S>,
    increase_rv: &IncreaseRv,
    cache_enabled: bool,
    consistent_reads_supported: bool,
    list_from_cache_snapshot: bool,
) {
    let in_pod = base_namespaced_pod("foo", "default");
    let out_pod = store
        .create(compute_pod_key(&**store, &in_pod), in_pod)
        .await
        .expect("create");
    let last_resource_write_rv = rv_of(&out_pod);
    increase_rv().await;
    let first_consistent_rv = last_resource_write_rv + 1;
    let mut cache_sync_rv = 0;

    struct ConsistentCase {
        name: &'static str,
        request_rv: &'static str,
        continue_token: String,
    }
    let tcs = [
        ConsistentCase {
            name: "Non-consistent list before consistent read",
            request_rv: "0",
            continue_token: String::new(),
        },
        ConsistentCase {
            name: "LIST without RV returns consistent RV",
            request_rv: "",
            continue_token: String::new(),
        },
        ConsistentCase {
            name: "List with negative continue RV returns consistent RV",
            request_rv: "",
            continue_token: encode_continue(-1, "/pods/a"),
        },
        ConsistentCase {
            name: "Non-consistent request after consistent read",
            request_rv: "0",
            continue_token: String::new(),
        },
    ];
    let mut failed = Vec::new();
    for (reads, tc) in (0u64..).zip(tcs) {
        // Every read so far was followed by a write outside the resource.
        let consistent_rv = first_consistent_rv + reads;
        let options = ListOptions {
            resource_version: tc.request_rv.into(),
            continue_token: tc.continue_token.clone(),
            ..ListOptions::default()
        };
        let out = store
            .get_list(key("/pods/empty"), options, SelectionPredicate::default())
            .await;
        let check = AssertUnwindSafe(|| {
            let rv = out.as_ref().expect("GetList").resource_version;
            match tc.name {
                "Non-consistent list before consistent read" if cache_enabled => {
                    // The cache might not have observed the write yet.
                    assert!(
                        rv <= last_resource_write_rv,
                        "{rv} > {last_resource_write_rv}"
                    );
                }
                "LIST without RV returns consistent RV" => {
                    assert_eq!(rv, consistent_rv);
                    cache_sync_rv = rv;
                }
                "List with negative continue RV returns consistent RV" => {
                    assert_eq!(rv, consistent_rv);
                    if list_from_cache_snapshot {
                        cache_sync_rv = rv;
                    }
                }
                "Non-consistent request after consistent read"
                    if cache_enabled && consistent_reads_supported =>
                {
                    // A consistent read syncs the cache.
                    assert_eq!(rv, cache_sync_rv);
                }
                "Non-consistent request after consistent read" if cache_enabled => {
                    assert!(rv <= last_resource_write_rv);
                }
                // etcd always answers at its newest revision.
                _ => assert_eq!(rv, consistent_rv),
            }
        });
        if std::panic::catch_unwind(check).is_err() {
            failed.push(tc.name);
        }
        // Update RV on each read to test multiple reads for consistent RV.
        increase_rv().await;
    }
    assert!(
        failed.is_empty(),
        "RunTestConsistentList: failed cases: {failed:#?}"
    );
}

/// Mirrors `RunTestGetListNonRecursive`: lists of one key ([`KeyScope::Object`]).
pub async fn run_test_get_list_non_recursive<S: Storage + ?Sized>(
    store: &Arc<S>,
    increase_rv: &IncreaseRv,
) {
    let (key, prev) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    let prev_rv = prev.resource_version().to_string();
    let new_pod = annotated(&prev, &[("version", "second")]);
    let stored = store
        .guaranteed_update(key.clone(), Preconditions::default(), update_to(new_pod))
        .await
        .expect("update failed");
    let obj_rv = stored.resource_version().to_string();
    // Increase RV to test consistent List.
    increase_rv().await;

    struct NonRecursiveCase {
        name: &'static str,
        key: String,
        field: &'static str,
        expected_out: Vec<Arc<Object>>,
        expected_alternatives: Option<Vec<Vec<Arc<Object>>>>,
        rv: String,
        rv_match: Option<ResourceVersionMatch>,
        expect_rv_too_large: bool,
    }
    let base = |name| NonRecursiveCase {
        name,
        key: key.clone(),
        field: "",
        expected_out: vec![],
        expected_alternatives: None,
        rv: String::new(),
        rv_match: None,
        expect_rv_too_large: false,
    };
    let s = || Arc::clone(&stored);
    let p = || Arc::clone(&prev);
    let tests = vec![
        NonRecursiveCase {
            expected_out: vec![s()],
            ..base("existing key")
        },
        NonRecursiveCase {
            expected_alternatives: Some(vec![vec![], vec![p()], vec![s()]]),
            rv: "0".into(),
            ..base("existing key, resourceVersion=0")
        },
        NonRecursiveCase {
            expected_alternatives: Some(vec![vec![], vec![p()], vec![s()]]),
            rv: "0".into(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            ..base(
                "existing key, resourceVersion=0, resourceVersionMatch=notOlderThan",
            )
        },
        NonRecursiveCase {
            expected_out: vec![s()],
            rv: obj_rv.clone(),
            ..base("existing key, resourceVersion=current")
        },
        NonRecursiveCase {
            expected_out: vec![s()],
            rv: obj_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            ..base(
                "existing key, resourceVersion=current, resourceVersionMatch=notOlderThan",
            )
        },
        NonRecursiveCase {
            expected_alternatives: Some(vec![vec![p()], vec![s()]]),
            rv: prev_rv.clone(),
            rv_match: Some(ResourceVersionMatch::NotOlderThan),
            ..base(
                "existing key, resourceVersion=previous, resourceVersionMatch=notOlderThan",
            )
        },
        NonRecursiveCase {
            expected_out: vec![s()],
            rv: obj_rv.clone(),
            rv_match: Some(ResourceVersionMatch::Exact),
            ..base(
                "existing key, resourceVersion=current, resourceVersionMatch=exact",
            )
        },
        NonRecursiveCase {
            expected_out: vec![p()],
            rv: prev_rv.clone(),
            rv_match: Some(ResourceVersionMatch::Exact),
            ..base(
                "existing key, resourceVersion=previous, resourceVersionMatch=exact",
            )
        },
        NonRecursiveCase {
            expected_out: vec![s()],
            rv: i64::MAX.to_string(),
            expect_rv_too_large: true,
            ..base("existing key, resourceVersion=too high")
        },
        NonRecursiveCase {
            key: super::key("/pods/non-existing"),
            ..base("non-existing key")
        },
        NonRecursiveCase {
            key: super::key("/pods/non-existing"),
            field: "metadata.name!=foo",
            ..base("with matching pod name")
        },
        NonRecursiveCase {
            field: "metadata.name!=foo",
            rv: obj_rv.clone(),
            ..base(
                "existing key, resourceVersion=current, with not matching pod name",
            )
        },
    ];
    let cases = tests
        .into_iter()
        .map(|tt| -> Case<'_> {
            let name = tt.name.to_string();
            let case = async move {
                let options = ListOptions {
                    resource_version: tt.rv.clone(),
                    resource_version_match: tt.rv_match,
                    ..ListOptions::default()
                };
                let result = store
                    .get_list_scoped(
                        tt.key.clone(),
                        KeyScope::Object,
                        options,
                        predicate(tt.field),
                    )
                    .await;
                if tt.expect_rv_too_large {
                    assert!(
                        matches!(
                            result,
                            Err(StorageError::TooLargeResourceVersion { .. })
                        ),
                        "expecting resource version too high error, but get: {result:?}"
                    );
                    return;
                }
                let out = result.unwrap_or_else(|e| panic!("GetList failed: {e}"));
                assert!(out.resource_version > 0, "unset resourceVersion");
                let got = items(&out);
                match &tt.expected_alternatives {
                    None => {
                        let expected: Vec<Object> =
                            tt.expected_out.iter().map(|o| (**o).clone()).collect();
                        assert_eq!(got, expected, "incorrect list pods");
                    }
                    Some(alternatives) => {
                        let alternatives: Vec<Vec<Object>> = alternatives
                            .iter()
                            .map(|a| a.iter().map(|o| (**o).clone()).collect())
                            .collect();
                        assert!(
                            alternatives.contains(&got),
                            "incorrect list pods: {got:#?}"
                        );
                    }
                }
            };
            (name, case.boxed())
        })
        .collect();
    run_cases_concurrently("RunTestGetListNonRecursive", cases).await;
}

/// Mirrors `RunTestGetListRecursivePrefix`: how the scope works for keys that are
/// prefixes of each other.
pub async fn run_test_get_list_recursive_prefix<S: Storage + ?Sized>(
    store: &Arc<S>,
) {
    let (foo_key, foo_obj) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    let (foo_bar_key, foo_bar) =
        test_propagate_store(&**store, base_namespaced_pod("foobar", "test-ns"))
            .await;
    let (_, other_namespace) =
        test_propagate_store(&**store, base_namespaced_pod("baz", "test-ns2")).await;
    let last_rev = other_namespace.resource_version().to_string();
    let tests = [
        (
            "NonRecursive on resource prefix doesn't return any objects",
            key("/pods/"),
            KeyScope::Object,
            vec![],
        ),
        (
            "Recursive on resource prefix returns all objects",
            key("/pods/"),
            KeyScope::Prefix,
            vec![&foo_obj, &foo_bar, &other_namespace],
        ),
        (
            "NonRecursive on namespace prefix doesn't return any objects",
            key("/pods/test-ns/"),
            KeyScope::Object,
            vec![],
        ),
        (
            "Recursive on resource prefix returns objects in the namespace",
            key("/pods/test-ns/"),
            KeyScope::Prefix,
            vec![&foo_obj, &foo_bar],
        ),
        (
            "NonRecursive on object key (prefix) returns object and no other objects with the same prefix",
            foo_key.clone(),
            KeyScope::Object,
            vec![&foo_obj],
        ),
        (
            "Recursive on object key (prefix) doesn't return anything",
            foo_key.clone(),
            KeyScope::Prefix,
            vec![],
        ),
        (
            "NonRecursive on object key (no-prefix) return object",
            foo_bar_key.clone(),
            KeyScope::Object,
            vec![&foo_bar],
        ),
        (
            "Recursive on object key (no-prefix) doesn't return anything",
            foo_bar_key.clone(),
            KeyScope::Prefix,
            vec![],
        ),
    ];
    let list_types = [
        ("Exact", last_rev.clone(), Some(ResourceVersionMatch::Exact)),
        ("Consistent", String::new(), None),
        (
            "NotOlderThan",
            "0".to_string(),
            Some(ResourceVersionMatch::NotOlderThan),
        ),
    ];
    let mut cases: Vec<Case<'_>> = Vec::new();
    for (list_type, rv, rv_match) in list_types {
        for (name, key, scope, expected) in &tests {
            let expected: Vec<Object> =
                expected.iter().map(|o| (***o).clone()).collect();
            let (key, scope, rv) = (key.clone(), *scope, rv.clone());
            let case = async move {
                let options = ListOptions {
                    resource_version: rv,
                    resource_version_match: rv_match,
                    ..ListOptions::default()
                };
                let out = store
                    .get_list_scoped(
                        key,
                        scope,
                        options,
                        SelectionPredicate::default(),
                    )
                    .await
                    .unwrap_or_else(|e| panic!("GetList failed: {e}"));
                assert_eq!(items(&out), expected, "incorrect list pods");
            };
            cases.push((format!("{list_type}/{name}"), case.boxed()));
        }
    }
    run_cases_in_order("RunTestGetListRecursivePrefix", cases).await;
}

fn paged(limit: u32, continue_token: &str) -> ListOptions {
    ListOptions {
        limit,
        continue_token: continue_token.to_string(),
        ..ListOptions::default()
    }
}

/// Creates the pods in order and returns them as stored, and the last one's
/// resource version.
async fn create_all<S: Storage + ?Sized>(
    store: &S,
    pods: Vec<Object>,
) -> (Vec<Arc<Object>>, u64) {
    let mut stored = Vec::new();
    for pod in pods {
        let key = compute_pod_key(store, &pod);
        stored.push(store.create(key, pod).await.expect("Set failed"));
    }
    let last = stored.last().map_or(0, |p| rv_of(p));
    (stored, last)
}

fn unwrap_items(list: &ListResult) -> Vec<Object> {
    items(list)
}

/// Mirrors `RunTestListContinuation` (upstream's `CallsValidation`, which counts
/// etcd reads, is not ported).
pub async fn run_test_list_continuation<S: Storage + ?Sized>(store: &Arc<S>) {
    let (preset, current_rv) = create_all(
        &**store,
        vec![
            base_namespaced_pod("bar", "first"),
            base_namespaced_pod("bar", "second"),
            base_namespaced_pod("foo", "second"),
        ],
    )
    .await;
    let everything = SelectionPredicate::default;
    let pods = key("/pods/");
    let first = store
        .get_list(pods.clone(), paged(1, ""), everything())
        .await
        .expect("Unable to get initial list");
    assert!(
        !first.continue_token.is_empty(),
        "No continuation token set"
    );
    assert_eq!(
        unwrap_items(&first),
        vec![(*preset[0]).clone()],
        "incorrect first page"
    );
    assert_eq!(first.resource_version, current_rv);
    let continue_from_second_item = first.continue_token.clone();

    // No limit: two items.
    let out = store
        .get_list(
            pods.clone(),
            paged(0, &continue_from_second_item),
            everything(),
        )
        .await
        .expect("Unable to get second page");
    assert!(
        out.continue_token.is_empty(),
        "Unexpected continuation token set"
    );
    assert_eq!(
        unwrap_items(&out),
        vec![(*preset[1]).clone(), (*preset[2]).clone()],
        "incorrect second page"
    );
    assert_eq!(out.resource_version, current_rv);

    // A limit: two more pages.
    let out = store
        .get_list(
            pods.clone(),
            paged(1, &continue_from_second_item),
            everything(),
        )
        .await
        .expect("Unable to get second page");
    assert!(!out.continue_token.is_empty(), "No continuation token set");
    assert_eq!(
        unwrap_items(&out),
        vec![(*preset[1]).clone()],
        "incorrect second page"
    );
    assert_eq!(out.resource_version, current_rv);
    let continue_from_third_item = out.continue_token.clone();
    let out = store
        .get_list(pods, paged(1, &continue_from_third_item), everything())
        .await
        .expect("Unable to get second page");
    assert!(
        out.continue_token.is_empty(),
        "Unexpected continuation token set"
    );
    assert_eq!(
        unwrap_items(&out),
        vec![(*preset[2]).clone()],
        "incorrect third page"
    );
    assert_eq!(out.resource_version, current_rv);
}

/// Mirrors `RunTestListPaginationRareObject`: 1000 pods (created 50 at a time),
/// one of which a field selector picks, listed with limit 1.
pub async fn run_test_list_pagination_rare_object<S: Storage + ?Sized>(
    store: &Arc<S>,
) {
    let pod_count = 1000;
    let mut pods = Vec::with_capacity(pod_count);
    let names: Vec<String> = (0..pod_count).map(|i| format!("pod-{i}")).collect();
    for chunk in names.chunks(50) {
        let created = futures::future::join_all(chunk.iter().map(|name| {
            let obj = base_namespaced_pod(name, "");
            let key = compute_pod_key(&**store, &obj);
            store.create(key, obj)
        }))
        .await;
        for pod in created {
            pods.push(pod.expect("Set failed"));
        }
    }
    let out = store
        .get_list(
            key("/pods/"),
            paged(1, ""),
            predicate("metadata.name=pod-999"),
        )
        .await
        .expect("Unable to get initial list");
    assert!(
        out.continue_token.is_empty(),
        "Unexpected continuation token set"
    );
    assert_eq!(
        unwrap_items(&out),
        vec![(*pods[999]).clone()],
        "Unexpected first page"
    );
}

/// Mirrors `RunTestListContinuationWithFilter`.
pub async fn run_test_list_continuation_with_filter<S: Storage + ?Sized>(
    store: &Arc<S>,
) {
    let (preset, current_rv) = create_all(
        &**store,
        vec![
            base_namespaced_pod("foo", "1"),
            base_namespaced_pod("bar", "2"), // this should not match
            base_namespaced_pod("foo", "3"),
            base_namespaced_pod("foo", "4"),
        ],
    )
    .await;
    let not_bar = || predicate("metadata.name!=bar");
    let out = store
        .get_list(key("/pods/"), paged(2, ""), not_bar())
        .await
        .expect("Unable to get initial list");
    assert!(!out.continue_token.is_empty(), "No continuation token set");
    assert_eq!(
        unwrap_items(&out),
        vec![(*preset[0]).clone(), (*preset[2]).clone()],
        "incorrect first page"
    );
    assert_eq!(out.resource_version, current_rv);
    let out = store
        .get_list(key("/pods/"), paged(2, &out.continue_token), not_bar())
        .await
        .expect("Unable to get second page");
    assert!(
        out.continue_token.is_empty(),
        "Unexpected continuation token set"
    );
    assert_eq!(
        unwrap_items(&out),
        vec![(*preset[3]).clone()],
        "incorrect second page"
    );
    assert_eq!(out.resource_version, current_rv);
}

/// Mirrors `RunTestListInconsistentContinuation`: a continue token whose revision
/// was compacted is 410 with a token that goes on at the newest revision.
pub async fn run_test_list_inconsistent_continuation<S: Storage + ?Sized>(
    store: &Arc<S>,
    compaction: Option<&Compaction>,
) {
    let Some(compaction) = compaction else {
        eprintln!(
            "RunTestListInconsistentContinuation: compaction callback not provided"
        );
        return;
    };
    let (mut preset, _) = create_all(
        &**store,
        vec![
            base_namespaced_pod("bar", "first"),
            base_namespaced_pod("bar", "second"),
            base_namespaced_pod("foo", "second"),
        ],
    )
    .await;
    let rv0 = |limit, token: &str| ListOptions {
        resource_version: "0".into(),
        ..paged(limit, token)
    };
    let pods = key("/pods/");
    let out = store
        .get_list(pods.clone(), rv0(1, ""), SelectionPredicate::default())
        .await
        .expect("Unable to get initial list");
    assert!(!out.continue_token.is_empty(), "No continuation token set");
    assert_eq!(
        unwrap_items(&out),
        vec![(*preset[0]).clone()],
        "incorrect first page"
    );
    let continue_from_second_item = out.continue_token.clone();

    // Update /second/foo (as upstream does: to a pod with no namespace).
    let new_pod = Object::new(&ResourceInfo::PODS, None, preset[2].name())
        .with_labels([("state", "new")]);
    let key_2 = compute_pod_key(&**store, &preset[2]);
    preset[2] = store
        .guaranteed_update(key_2, Preconditions::default(), update_to(new_pod))
        .await
        .expect("update failed");
    // Compact to the latest revision.
    let last_rv = rv_of(&preset[2]);
    compaction(last_rv).await;

    // The old continue token has expired.
    let err = store
        .get_list(
            pods.clone(),
            rv0(0, &continue_from_second_item),
            SelectionPredicate::default(),
        )
        .await
        .expect_err("unexpected no error");
    assert!(
        err.to_string()
            .contains("The provided continue parameter is too old "),
        "unexpected error message {err}"
    );
    let status = err.to_status();
    let inconsistent = status.metadata.continue_.clone().unwrap_or_default();
    assert!(
        !inconsistent.is_empty(),
        "expect non-empty continue token: {status:?}"
    );

    let out = store
        .get_list(
            pods.clone(),
            rv0(1, &inconsistent),
            SelectionPredicate::default(),
        )
        .await
        .expect("Unable to get second page");
    assert!(!out.continue_token.is_empty(), "No continuation token set");
    assert_eq!(
        unwrap_items(&out),
        vec![(*preset[1]).clone()],
        "incorrect second page"
    );
    assert_rv_not_older_than(out.resource_version, last_rv, "second page");
    let resolved = out.resource_version;
    let out = store
        .get_list(
            pods,
            rv0(1, &out.continue_token),
            SelectionPredicate::default(),
        )
        .await
        .expect("Unable to get third page");
    assert!(
        out.continue_token.is_empty(),
        "Unexpected continuation token set"
    );
    assert_eq!(
        unwrap_items(&out),
        vec![(*preset[2]).clone()],
        "incorrect third page"
    );
    assert_eq!(out.resource_version, resolved);
}

/// Mirrors `RunTestGuaranteedUpdate` (the case "same data, stale" needs a value
/// transformer that reports stale data, which is not modelled). Upstream's
/// `IsInvalidObj` is our 409 Conflict "Precondition failed".
pub async fn run_test_guaranteed_update<S: Storage + ?Sized>(
    store: &Arc<S>,
    validation: &KeyValidation,
) {
    let input_obj = with_uid(base_namespaced_pod("foo", "test-ns"), "A");
    let key = compute_pod_key(&**store, &input_obj);
    struct UpdateCase {
        name: &'static str,
        key: String,
        ignore_not_found: bool,
        precondition: Option<&'static str>,
        expect_not_found_err: bool,
        expect_invalid_obj_err: bool,
        expect_no_update: bool,
        has_self_link: bool,
    }
    let base = |name, key: &String| UpdateCase {
        name,
        key: key.clone(),
        ignore_not_found: false,
        precondition: None,
        expect_not_found_err: false,
        expect_invalid_obj_err: false,
        expect_no_update: false,
        has_self_link: false,
    };
    let non_existing = super::key("/pods/non-existing");
    let tests = vec![
        UpdateCase {
            expect_not_found_err: true,
            ..base("non-existing key, ignoreNotFound=false", &non_existing)
        },
        UpdateCase {
            ignore_not_found: true,
            ..base("non-existing key, ignoreNotFound=true", &non_existing)
        },
        base("existing key", &key),
        UpdateCase {
            expect_no_update: true,
            ..base("same data", &key)
        },
        UpdateCase {
            expect_no_update: true,
            has_self_link: true,
            ..base("same data, a selfLink", &key)
        },
        UpdateCase {
            precondition: Some("A"),
            expect_no_update: true,
            ..base("UID match", &key)
        },
        UpdateCase {
            precondition: Some("B"),
            expect_invalid_obj_err: true,
            expect_no_update: true,
            ..base("UID mismatch", &key)
        },
    ];
    let cases = tests
        .into_iter()
        .enumerate()
        .map(|(i, tt)| -> Case<'_> {
            let name = tt.name.to_string();
            let input_obj = input_obj.clone();
            let validation = Arc::clone(validation);
            let case = async move {
                let (key, store_obj) =
                    test_propagate_store(&**store, input_obj).await;
                let annotations = (!tt.expect_no_update).then(|| {
                    BTreeMap::from([("version".to_string(), i.to_string())])
                });
                let version = store_obj.resource_version().to_string();
                let mut pod = (*store_obj).clone();
                if tt.has_self_link {
                    pod.metadata.self_link = Some("testlink".into());
                }
                pod.metadata.annotations = annotations.clone();
                let preconditions = Preconditions {
                    uid: tt.precondition.map(str::to_string),
                    ..Preconditions::default()
                };
                let result = store
                    .guaranteed_update_with(
                        tt.key.clone(),
                        tt.ignore_not_found,
                        preconditions,
                        update_to(pod),
                    )
                    .await;
                if tt.expect_not_found_err {
                    assert!(
                        matches!(result, Err(StorageError::NotFound { .. })),
                        "expecting not found error, but get: {result:?}"
                    );
                    return;
                }
                if tt.expect_invalid_obj_err {
                    let err = result.expect_err("expecting invalid UID error");
                    assert!(
                        is_invalid_obj(&err),
                        "expecting invalid UID error: {err}"
                    );
                    return;
                }
                let out = result
                    .unwrap_or_else(|e| panic!("GuaranteedUpdate failed: {e}"));
                assert_eq!(out.metadata.annotations, annotations, "pod annotations");
                assert_eq!(
                    out.metadata.self_link, None,
                    "selfLink should not be set"
                );
                // The key holds what was written.
                validation(key).await;
                if tt.expect_no_update {
                    assert_eq!(
                        version,
                        out.resource_version(),
                        "expect no version change"
                    );
                } else {
                    assert_ne!(
                        version,
                        out.resource_version(),
                        "expect version change"
                    );
                }
            };
            (name, case.boxed())
        })
        .collect();
    run_cases_in_order("RunTestGuaranteedUpdate", cases).await;
}

/// Mirrors `RunTestGuaranteedUpdateWithConflict`: the second of two interleaved
/// updates loses the swap and calls its update function again. The update
/// functions block (as the Go test's `WaitGroup`s do), so this needs a
/// multi-threaded runtime; each block is bounded by [`WAIT`].
pub async fn run_test_guaranteed_update_with_conflict<S: Storage + ?Sized>(
    store: &Arc<S>,
) {
    let (key, _) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    let (second_entered_tx, second_entered_rx) = std::sync::mpsc::channel::<()>();
    let (first_finished_tx, first_finished_rx) = std::sync::mpsc::channel::<()>();
    let first = tokio::spawn({
        let store = Arc::clone(store);
        let key = key.clone();
        async move {
            let result = store
                .guaranteed_update(
                    key,
                    Preconditions::default(),
                    Box::new(move |obj: &Object| {
                        let mut pod = obj.clone();
                        pod.metadata.name = Some("foo-1".into());
                        tokio::task::block_in_place(|| {
                            second_entered_rx.recv_timeout(WAIT)
                        })
                        .map_err(|_| {
                            StorageError::Internal("second never entered".into())
                        })?;
                        Ok(pod)
                    }),
                )
                .await;
            let _ = first_finished_tx.send(());
            result
        }
    });
    let update_count = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&update_count);
    let second = store
        .guaranteed_update(
            key,
            Preconditions::default(),
            Box::new(move |obj: &Object| {
                if counter.load(Ordering::SeqCst) == 0 {
                    let _ = second_entered_tx.send(());
                    tokio::task::block_in_place(|| {
                        first_finished_rx.recv_timeout(WAIT)
                    })
                    .map_err(|_| {
                        StorageError::Internal("first never finished".into())
                    })?;
                }
                counter.fetch_add(1, Ordering::SeqCst);
                let mut pod = obj.clone();
                pod.metadata.name = Some("foo-2".into());
                Ok(pod)
            }),
        )
        .await;
    second.expect("Second GuaranteedUpdate error");
    tokio::time::timeout(WAIT, first)
        .await
        .expect("the first update finishes")
        .expect("the first update does not panic")
        .expect("First GuaranteedUpdate error");
    assert_eq!(
        update_count.load(Ordering::SeqCst),
        2,
        "Should have conflict and called update func twice"
    );
}

/// Mirrors `RunTestGuaranteedUpdateWithSuggestionAndConflict` (no suggestion is
/// passed, which upstream allows implementations to ignore).
pub async fn run_test_guaranteed_update_with_suggestion_and_conflict<
    S: Storage + ?Sized,
>(
    store: &Arc<S>,
) {
    let (key, _original) =
        test_propagate_store(&**store, base_namespaced_pod("foo", "test-ns")).await;
    // First, update so that the original pod is outdated.
    store
        .guaranteed_update(
            key.clone(),
            Preconditions::default(),
            simple_update(|pod| pod.metadata.generation = Some(2)),
        )
        .await
        .expect("unexpected error");
    // Second: a stale object gets a conflict from the update function.
    let mut saw_conflict = false;
    let updated2 = store
        .guaranteed_update(
            key.clone(),
            Preconditions::default(),
            Box::new(move |obj: &Object| {
                if obj.metadata.generation != Some(2) {
                    assert!(!saw_conflict, "unexpected second conflict");
                    saw_conflict = true;
                    return Err(StorageError::Conflict {
                        plural: "pods".into(),
                        name: "name".into(),
                        message: "foo".into(),
                    });
                }
                let mut pod = obj.clone();
                pod.metadata.generation = Some(3);
                Ok(pod)
            }),
        )
        .await
        .expect("unexpected error");
    assert_eq!(
        updated2.metadata.generation,
        Some(3),
        "unexpected pod generation"
    );
    // Third: an error from the update function is returned, after at most two
    // attempts.
    let attempts = Arc::new(AtomicUsize::new(0));
    let counter = Arc::clone(&attempts);
    let err = store
        .guaranteed_update(
            key,
            Preconditions::default(),
            Box::new(move |_: &Object| {
                counter.fetch_add(1, Ordering::SeqCst);
                Err(StorageError::BadRequest(
                    "validation or admission error".into(),
                ))
            }),
        )
        .await;
    assert!(err.is_err(), "expected error, got none");
    assert!(
        attempts.load(Ordering::SeqCst) <= 2,
        "update function should have been called at most twice"
    );
}

/// Mirrors `RunTestListPaging`: pages keep to the first page's revision, even when a
/// pod is created between pages.
pub async fn run_test_list_paging<S: Storage + ?Sized>(store: &Arc<S>) {
    for i in 0..4 {
        let pod = base_namespaced_pod(&format!("test-{i}"), "paging");
        store
            .create(compute_pod_key(&**store, &pod), pod)
            .await
            .expect("create");
    }
    let mut names = Vec::new();
    let mut options = paged(1, "");
    let mut calls = 0;
    loop {
        calls += 1;
        assert!(calls <= 10, "unbounded paging: {names:?}");
        let out = store
            .get_list(
                key("/pods/"),
                options.clone(),
                SelectionPredicate::default(),
            )
            .await
            .expect("Unexpected error");
        names.extend(out.items.iter().map(|p| p.name().to_string()));
        if out.continue_token.is_empty() {
            break;
        }
        if calls == 2 {
            let pod = base_namespaced_pod("test-5", "paging");
            store
                .create(compute_pod_key(&**store, &pod), pod)
                .await
                .expect("create");
        }
        options.continue_token = out.continue_token;
    }
    assert_eq!(calls, 4, "unexpected list invocations");
    assert_eq!(
        names,
        ["test-0", "test-1", "test-2", "test-3"],
        "unexpected items"
    );
}

/// Mirrors `RunTestNamespaceScopedList`.
pub async fn run_test_namespace_scoped_list<S: Storage + ?Sized>(store: &Arc<S>) {
    type Pods = fn(&str) -> Vec<Object>;
    /// Name, requested namespace, field selector, pods to create, pods expected.
    type ScopedListCase =
        (&'static str, &'static str, fn(&str) -> String, Pods, Pods);
    use super::{
        base_namespaced_pod as p, base_namespaced_pod_assigned as pa,
        base_namespaced_pod_updated as pu,
    };
    let n = |ns: &str, suffix: &str| format!("{ns}{suffix}");
    let tests: Vec<ScopedListCase> = vec![
        (
            "request without namespace, without field selector",
            "",
            |_| String::new(),
            |_| vec![p("foo1", "ns1"), p("foo2", "ns2")],
            |_| vec![p("foo1", "ns1"), p("foo2", "ns2")],
        ),
        (
            "request without namespace, field selector with metadata.namespace",
            "",
            |ns| format!("metadata.namespace={ns}ns1"),
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                ]
            },
            |ns| vec![p("foo1", &format!("{ns}ns1"))],
        ),
        (
            "request without namespace, field selector with spec.nodename",
            "",
            |_| "spec.nodeName=bar1".into(),
            |ns| {
                vec![
                    pa("foo1", &format!("{ns}ns1"), "bar1"),
                    pa("foo2", &format!("{ns}ns2"), "bar2"),
                ]
            },
            |ns| vec![pa("foo1", &format!("{ns}ns1"), "bar1")],
        ),
        (
            "request without namespace, field selector with spec.nodename to filter out",
            "",
            |_| "spec.nodeName!=bar1".into(),
            |ns| {
                vec![
                    pa("foo1", &format!("{ns}ns1"), "bar1"),
                    pa("foo2", &format!("{ns}ns2"), "bar2"),
                ]
            },
            |ns| vec![pa("foo2", &format!("{ns}ns2"), "bar2")],
        ),
        (
            "request with namespace, without field selector",
            "ns1",
            |_| String::new(),
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                    p("foo2", &format!("{ns}ns1")),
                ]
            },
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo2", &format!("{ns}ns1")),
                ]
            },
        ),
        (
            "request with namespace, field selector with matched metadata.namespace",
            "ns1",
            |ns| format!("metadata.namespace={ns}ns1"),
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                ]
            },
            |ns| vec![p("foo1", &format!("{ns}ns1"))],
        ),
        (
            "request with namespace, field selector with non-matched metadata.namespace",
            "ns1",
            |ns| format!("metadata.namespace={ns}ns2"),
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                    pu("foo2", &format!("{ns}ns1")),
                    pu("foo2", &format!("{ns}ns2")),
                ]
            },
            |_| vec![],
        ),
        (
            "request with namespace, field selector with spec.nodename",
            "ns1",
            |_| "spec.nodeName=bar2".into(),
            |ns| {
                vec![
                    pa("foo1", &format!("{ns}ns1"), "bar1"),
                    pa("foo1", &format!("{ns}ns2"), "bar2"),
                    pa("foo2", &format!("{ns}ns1"), "bar2"),
                ]
            },
            |ns| vec![pa("foo2", &format!("{ns}ns1"), "bar2")],
        ),
        (
            "request with namespace, field selector with spec.nodename to filter out",
            "ns2",
            |_| "spec.nodeName!=bar1".into(),
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                    pa("foo3", &format!("{ns}ns2"), "bar1"),
                    pa("foo2", &format!("{ns}ns2"), "bar2"),
                ]
            },
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns2")),
                    pa("foo2", &format!("{ns}ns2"), "bar2"),
                ]
            },
        ),
        (
            "request without namespace, field selector with metadata.name",
            "",
            |_| "metadata.name=foo1".into(),
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                    p("foo2", &format!("{ns}ns1")),
                ]
            },
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                ]
            },
        ),
        (
            "request without namespace, field selector with metadata.name and metadata.namespace",
            "",
            |ns| format!("metadata.name=foo1,metadata.namespace={ns}ns1"),
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo2", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                ]
            },
            |ns| vec![p("foo1", &format!("{ns}ns1"))],
        ),
        (
            "request without namespace, field selector with metadata.name and spec.nodeName",
            "",
            |_| "metadata.name=foo1,spec.nodeName=bar1".into(),
            |ns| vec![pa("foo1", &format!("{ns}ns1"), "bar1")],
            |ns| vec![pa("foo1", &format!("{ns}ns1"), "bar1")],
        ),
        (
            "request without namespace, field selector with metadata.name, and with spec.nodeName to filter out watch",
            "",
            |_| "spec.nodeName!=bar1,metadata.name=foo1".into(),
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo2", &format!("{ns}ns1")),
                    pa("foo1", &format!("{ns}ns2"), "bar1"),
                    pa("foo2", &format!("{ns}ns2"), "bar1"),
                    pa("foo1", &format!("{ns}ns3"), "bar2"),
                    pa("foo2", &format!("{ns}ns3"), "bar2"),
                ]
            },
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    pa("foo1", &format!("{ns}ns3"), "bar2"),
                ]
            },
        ),
        (
            "request with namespace, with field selector metadata.name",
            "ns1",
            |_| "metadata.name=foo1".into(),
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo2", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                    p("foo2", &format!("{ns}ns2")),
                ]
            },
            |ns| vec![p("foo1", &format!("{ns}ns1"))],
        ),
        (
            "request with namespace, with field selector metadata.name and metadata.namespace",
            "ns1",
            |ns| format!("metadata.name=foo1,metadata.namespace={ns}ns1"),
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo2", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                    p("foo2", &format!("{ns}ns2")),
                ]
            },
            |ns| vec![p("foo1", &format!("{ns}ns1"))],
        ),
        (
            "request with namespace, with field selector metadata.name, metadata.namespace and spec.nodename",
            "ns2",
            |ns| {
                format!(
                    "metadata.name=foo2,metadata.namespace={ns}ns2,spec.nodeName=bar1"
                )
            },
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo2", &format!("{ns}ns1")),
                    p("foo1", &format!("{ns}ns2")),
                    pa("foo2", &format!("{ns}ns2"), "bar1"),
                    pa("foo1", &format!("{ns}ns3"), "bar1"),
                    pa("foo2", &format!("{ns}ns3"), "bar1"),
                ]
            },
            |ns| vec![pa("foo2", &format!("{ns}ns2"), "bar1")],
        ),
        (
            "request with namespace, with field selector metadata.name, metadata.namespace, and with spec.nodename to filter out",
            "ns2",
            |ns| {
                format!(
                    "spec.nodeName!=bar2,metadata.name=foo1,metadata.namespace={ns}ns2"
                )
            },
            |ns| {
                vec![
                    p("foo1", &format!("{ns}ns1")),
                    p("foo2", &format!("{ns}ns1")),
                    pa("foo1", &format!("{ns}ns2"), "bar1"),
                    pa("foo2", &format!("{ns}ns2"), "bar2"),
                    pa("foo1", &format!("{ns}ns3"), "bar2"),
                ]
            },
            |ns| vec![pa("foo1", &format!("{ns}ns2"), "bar1")],
        ),
    ];
    let cases =
        tests
            .into_iter()
            .enumerate()
            .map(
                |(
                    i,
                    (name, requested_namespace, field, input_pods, expect_pods),
                )|
                 -> Case<'_> {
                    let case = async move {
                        let namespace = format!("t{i}-");
                        let mut keys = std::collections::HashSet::new();
                        for pod in input_pods(&namespace) {
                            let key = compute_pod_key(&**store, &pod);
                            keys.insert(key.clone());
                            store.create(key, pod).await.expect("create failed");
                        }
                        let path = if requested_namespace.is_empty() {
                            key("/pods/")
                        } else {
                            key(&format!(
                                "/pods/{}",
                                n(&namespace, requested_namespace)
                            ))
                        };
                        let out = store
                            .get_list(
                                path,
                                ListOptions::default(),
                                predicate(&field(&namespace)),
                            )
                            .await
                            .unwrap_or_else(|e| panic!("Unexpected error: {e}"));
                        // Only the pods of this case, without resource versions.
                        let got: Vec<Object> = out
                            .items
                            .iter()
                            .filter(|pod| {
                                keys.contains(&compute_pod_key(&**store, pod))
                            })
                            .map(|pod| {
                                let mut pod = (**pod).clone();
                                pod.metadata.resource_version = None;
                                pod
                            })
                            .collect();
                        assert_eq!(
                            got,
                            expect_pods(&namespace),
                            "incorrect list pods"
                        );
                    };
                    (name.to_string(), case.boxed())
                },
            )
            .collect();
    run_cases_in_order("RunTestNamespaceScopedList", cases).await;
}

/// Mirrors `RunTestCount` (from the releases that had `storage.Interface.Count`):
/// a count of one prefix leaves out a sibling that extends it.
pub async fn run_test_count<S: Storage + ?Sized>(store: &Arc<S>) {
    let resource_a = key("/foo.bar.io/abc");
    // resourceA is intentionally a prefix of resourceB.
    let resource_b = format!("{resource_a}def");
    let resource_a_count_expected = 5;
    for i in 1..=resource_a_count_expected {
        let obj = base_namespaced_pod(&format!("foo-{i}"), "");
        store
            .create(format!("{resource_a}/{i}"), obj)
            .await
            .expect("Create failed");
    }
    for i in 1..=4 {
        let obj = base_namespaced_pod(&format!("foo-{i}"), "");
        store
            .create(format!("{resource_b}/{i}"), obj)
            .await
            .expect("Create failed");
    }
    let got = store.count(resource_a).await.expect("store.Count failed");
    assert_eq!(
        got, resource_a_count_expected,
        "store.Count for resource A did not return expected value"
    );
}
