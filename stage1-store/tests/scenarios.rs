//! The store and index scenarios of client-go's store_test.go, index_test.go and
//! thread_safe_store_test.go, rewritten in Rust.

mod common;

use std::borrow::Cow;
use std::sync::Arc;

use common::{names, pod, pod_with_labels, pod_with_users, strs, users_index_func};
use k8s_openapi::api::core::v1::Pod;

use stage1_store::{
    BoxError, Cache, IndexValues, Indexer, KeyGetter, KeyLister, NAMESPACE_INDEX,
    Store, StoreError, ThreadSafeStore, index_func, indexers, labels_index_func,
    meta_namespace_index_func, new_indexer,
};

/// A store keyed by plain name, with the "byUser" index (client-go's
/// TestMultiIndexKeys).
fn users_store() -> stage1_store::Cache<Pod> {
    new_indexer(
        Arc::new(|p: &Pod| Ok(p.metadata.name.clone().unwrap_or_default())),
        indexers([("byUser", index_func(users_index_func))]),
    )
}

/// Client-go's doTestStore, doTestIndexedStore: the basic verbs over a pod cache.
mod store_scenarios {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn add_get_update_delete() {
        let store = Cache::<Pod>::for_resources();
        store.add(pod("ns", "foo")).unwrap();
        assert_eq!(
            store.get(&pod("ns", "foo")).unwrap().as_deref(),
            Some(&*pod("ns", "foo"))
        );

        let mut updated = (*pod("ns", "foo")).clone();
        updated.metadata.resource_version = Some("2".into());
        store.update(Arc::new(updated.clone())).unwrap();
        assert_eq!(store.get_by_key("ns/foo").as_deref(), Some(&updated));
        assert_eq!(store.len(), 1);

        store.delete(pod("ns", "foo")).unwrap();
        assert!(store.get_by_key("ns/foo").is_none());
        assert!(store.is_empty());
        // Deleting what is not there is fine.
        store.delete(pod("ns", "foo")).unwrap();
    }

    #[test]
    fn list_and_list_keys_see_every_object() {
        let store = Cache::<Pod>::for_resources();
        for name in ["a", "b", "c"] {
            store.add(pod("ns", name)).unwrap();
        }
        assert_eq!(names(&store.list()), ["a", "b", "c"]);
        let mut keys = store.list_keys().to_vec();
        keys.sort();
        assert_eq!(strs(&keys), ["ns/a", "ns/b", "ns/c"]);
    }

    /// `list` and `list_keys` hand out a cached snapshot: every kind of write must
    /// drop it, and a snapshot already handed out must not change.
    #[test]
    fn list_and_list_keys_follow_every_change() {
        let store = Cache::<Pod>::for_resources();
        let sorted_keys = |store: &Cache<Pod>| {
            let mut keys = strs(&store.list_keys())
                .into_iter()
                .map(String::from)
                .collect::<Vec<_>>();
            keys.sort();
            keys
        };
        store.add(pod("ns", "a")).unwrap();
        let before = store.list();
        assert_eq!(sorted_keys(&store), ["ns/a"]);

        store.add(pod("ns", "b")).unwrap();
        assert_eq!(names(&store.list()), ["a", "b"]);
        assert_eq!(sorted_keys(&store), ["ns/a", "ns/b"]);
        assert_eq!(
            names(&before),
            ["a"],
            "a snapshot handed out stays as it was"
        );

        let mut updated = (*pod("ns", "a")).clone();
        updated.metadata.resource_version = Some("2".into());
        store.update(Arc::new(updated)).unwrap();
        assert!(
            store
                .list()
                .iter()
                .any(|p| { p.metadata.resource_version.as_deref() == Some("2") })
        );
        assert_eq!(sorted_keys(&store), ["ns/a", "ns/b"]);

        store.delete(pod("ns", "a")).unwrap();
        assert_eq!(names(&store.list()), ["b"]);
        assert_eq!(sorted_keys(&store), ["ns/b"]);

        store.replace(vec![pod("ns", "c")], "3").unwrap();
        assert_eq!(names(&store.list()), ["c"]);
        assert_eq!(sorted_keys(&store), ["ns/c"]);
    }

    #[test]
    fn replace_swaps_contents_and_rebuilds_the_index() {
        let store = Cache::<Pod>::for_resources();
        store.add(pod("old", "gone")).unwrap();
        store
            .replace(vec![pod("ns1", "foo"), pod("ns2", "bar")], "10")
            .unwrap();
        assert_eq!(names(&store.list()), ["bar", "foo"]);
        assert!(store.get_by_key("old/gone").is_none());
        assert_eq!(
            store.list_index_func_values(NAMESPACE_INDEX).unwrap(),
            ["ns1", "ns2"]
        );
        assert!(store.by_index(NAMESPACE_INDEX, "old").unwrap().is_empty());
    }

    #[test]
    fn by_namespace_queries_on_the_default_indexer() {
        let store = Cache::<Pod>::for_resources();
        for (ns, name) in [("a", "1"), ("a", "2"), ("b", "3"), ("", "node-pod")] {
            store.add(pod(ns, name)).unwrap();
        }
        assert_eq!(
            names(&store.by_index(NAMESPACE_INDEX, "a").unwrap()),
            ["1", "2"]
        );
        assert_eq!(
            strs(&store.index_keys(NAMESPACE_INDEX, "b").unwrap()),
            ["b/3"]
        );
        assert_eq!(
            strs(&store.index_keys(NAMESPACE_INDEX, "").unwrap()),
            ["node-pod"]
        );
        assert_eq!(
            store.list_index_func_values(NAMESPACE_INDEX).unwrap(),
            ["", "a", "b"]
        );
    }

    #[test]
    fn a_nameless_object_is_refused_with_a_key_error() {
        let store = Cache::<Pod>::for_resources();
        let nameless = Arc::new(Pod::default());
        let err = store.add(nameless).unwrap_err();
        assert!(matches!(err, StoreError::Key(_)), "{err:?}");
        assert!(store.is_empty());
    }
}

/// How keys move between index sets (updateIndices / updateSingleIndex).
mod ex1_update_index {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn multi_valued_index_moves_keys_on_update_and_delete() {
        // client-go's TestMultiIndexKeys.
        let store = users_store();
        store.add(pod_with_users("one", "ernie,bert")).unwrap();
        store.add(pod_with_users("two", "bert,oscar")).unwrap();
        store.add(pod_with_users("tre", "ernie,elmo")).unwrap();

        let keys = |user: &str| {
            store
                .index_keys("byUser", user)
                .unwrap()
                .iter()
                .map(|k| k.to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(keys("ernie"), ["one", "tre"]);
        assert_eq!(keys("bert"), ["one", "two"]);
        assert_eq!(keys("elmo"), ["tre"]);
        assert_eq!(keys("oscar"), ["two"]);
        assert!(keys("elmo1").is_empty());

        store.delete(pod_with_users("tre", "ernie,elmo")).unwrap();
        assert_eq!(keys("ernie"), ["one"]);
        assert!(keys("elmo").is_empty());

        store.update(pod_with_users("two", "oscar")).unwrap();
        assert_eq!(keys("bert"), ["one"]);
        assert_eq!(keys("oscar"), ["two"]);
        assert_eq!(
            store.list_index_func_values("byUser").unwrap(),
            ["bert", "ernie", "oscar"]
        );
    }

    #[test]
    fn deleting_the_last_key_removes_the_empty_set() {
        // client-go's TestThreadSafeStoreDeleteRemovesEmptySetsFromIndex (issue
        // 84959).
        let store = ThreadSafeStore::new(indexers([(
            "byUser",
            index_func(users_index_func),
        )]));
        store.add("one", pod_with_users("one", "ernie")).unwrap();
        store.update("one", pod_with_users("one", "bert")).unwrap();
        assert_eq!(store.list_index_func_values("byUser").unwrap(), ["bert"]);
        store.delete("one").unwrap();
        assert!(store.list_index_func_values("byUser").unwrap().is_empty());
    }

    #[test]
    fn a_set_with_other_keys_survives_a_delete() {
        // client-go's TestThreadSafeStoreAddKeepsNonEmptySetPostDeleteFromIndex.
        let store = ThreadSafeStore::new(indexers([(
            "byUser",
            index_func(users_index_func),
        )]));
        store.add("one", pod_with_users("one", "ernie")).unwrap();
        store.add("two", pod_with_users("two", "ernie")).unwrap();
        store.delete("one").unwrap();
        assert_eq!(strs(&store.index_keys("byUser", "ernie").unwrap()), ["two"]);
    }

    #[test]
    fn update_with_unchanged_values_keeps_the_key_in_place() {
        let store = ThreadSafeStore::new(indexers([(
            "ns",
            index_func(meta_namespace_index_func::<Pod>),
        )]));
        store.add("a/p", pod("a", "p")).unwrap();
        store.update("a/p", pod("a", "p")).unwrap();
        store.update("a/p", pod("a", "p")).unwrap();
        assert_eq!(strs(&store.index_keys("ns", "a").unwrap()), ["a/p"]);
        store.update("a/p", pod("b", "p")).unwrap();
        assert!(store.index_keys("ns", "a").unwrap().is_empty());
        assert_eq!(strs(&store.index_keys("ns", "b").unwrap()), ["a/p"]);
        assert_eq!(store.list_index_func_values("ns").unwrap(), ["b"]);
    }

    #[test]
    fn overlapping_old_and_new_values_keep_shared_ones() {
        let store = ThreadSafeStore::new(indexers([(
            "labels",
            index_func(labels_index_func),
        )]));
        store
            .add(
                "p",
                pod_with_labels("", "p", &[("app", "web"), ("tier", "fe")]),
            )
            .unwrap();
        store
            .update(
                "p",
                pod_with_labels("", "p", &[("app", "web"), ("tier", "be")]),
            )
            .unwrap();
        assert_eq!(
            store.list_index_func_values("labels").unwrap(),
            ["app=web", "tier=be"]
        );
        assert_eq!(strs(&store.index_keys("labels", "app=web").unwrap()), ["p"]);
    }
}

/// The `Index` query: the objects sharing any index value with a given object.
mod ex1_index_query {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn single_value_query_finds_the_namespace() {
        let store = ThreadSafeStore::new(indexers([(
            NAMESPACE_INDEX,
            index_func(meta_namespace_index_func::<Pod>),
        )]));
        store.add("a/1", pod("a", "1")).unwrap();
        store.add("a/2", pod("a", "2")).unwrap();
        store.add("b/3", pod("b", "3")).unwrap();
        // As listers.go's ListAllByNamespace does: query with any object in the
        // namespace.
        let query = Pod {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                namespace: Some("a".into()),
                ..Default::default()
            },
            ..Default::default()
        };
        assert_eq!(
            names(&store.index(NAMESPACE_INDEX, &query).unwrap()),
            ["1", "2"]
        );
        let empty = pod("c", "x");
        assert!(store.index(NAMESPACE_INDEX, &empty).unwrap().is_empty());
    }

    #[test]
    fn multi_value_query_returns_each_object_once() {
        let store = ThreadSafeStore::new(indexers([(
            "byUser",
            index_func(users_index_func),
        )]));
        store
            .add("one", pod_with_users("one", "ernie,bert"))
            .unwrap();
        store
            .add("two", pod_with_users("two", "bert,oscar"))
            .unwrap();
        store.add("tre", pod_with_users("tre", "elmo")).unwrap();
        let found = store
            .index("byUser", &pod_with_users("q", "ernie,bert,oscar"))
            .unwrap();
        assert_eq!(found.len(), 2, "each object once");
        assert_eq!(names(&found), ["one", "two"]);
    }

    #[test]
    fn a_query_object_with_no_values_matches_nothing() {
        let store = ThreadSafeStore::new(indexers([(
            "byUser",
            index_func(users_index_func),
        )]));
        store.add("one", pod_with_users("one", "ernie")).unwrap();
        assert!(store.index("byUser", &pod("", "q")).unwrap().is_empty());
    }
}

/// Registering indexers, and asking for ones that do not exist.
mod indexers_scenarios {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn add_indexers_on_a_non_empty_store_indexes_existing_items() {
        // client-go's TestThreadSafeStoreAddIndexers (allowed since 1.26).
        let store = ThreadSafeStore::new(indexers([(
            NAMESPACE_INDEX,
            index_func(meta_namespace_index_func::<Pod>),
        )]));
        store
            .add("one", pod_with_users("one", "ernie,bert"))
            .unwrap();
        store.add("two", pod_with_users("two", "bert")).unwrap();
        store
            .add_indexers(indexers([("byUser", index_func(users_index_func))]))
            .unwrap();
        assert_eq!(
            strs(&store.index_keys("byUser", "bert").unwrap()),
            ["one", "two"]
        );
        store.add("tre", pod_with_users("tre", "bert")).unwrap();
        assert_eq!(store.index_keys("byUser", "bert").unwrap().len(), 3);
        let names: Vec<String> = store.get_indexers().into_keys().collect();
        assert_eq!(names, ["byUser", NAMESPACE_INDEX]);
    }

    #[test]
    fn a_name_already_registered_is_an_indexer_conflict() {
        let store = ThreadSafeStore::new(indexers([(
            "byUser",
            index_func(users_index_func),
        )]));
        store.add("one", pod_with_users("one", "ernie")).unwrap();
        let err = store
            .add_indexers(indexers([
                ("byUser", index_func(users_index_func)),
                ("other", index_func(users_index_func)),
            ]))
            .unwrap_err();
        match err {
            StoreError::IndexerConflict { names } => assert_eq!(names, ["byUser"]),
            other => panic!("want IndexerConflict, got {other:?}"),
        }
        // Nothing was added, not even the non-conflicting name.
        assert_eq!(store.get_indexers().len(), 1);
    }

    #[test]
    fn unknown_index_names_are_errors_for_every_query() {
        let store: ThreadSafeStore<Pod> = ThreadSafeStore::default();
        store.add("a", pod("", "a")).unwrap();
        let is_not_found = |e: StoreError| {
            matches!(&e, StoreError::IndexNotFound { name } if name == "nope")
                && e.to_string().contains("add_indexers")
        };
        assert!(is_not_found(
            store.index("nope", &pod("", "a")).unwrap_err()
        ));
        assert!(is_not_found(store.by_index("nope", "x").unwrap_err()));
        assert!(is_not_found(store.index_keys("nope", "x").unwrap_err()));
        assert!(is_not_found(
            store.list_index_func_values("nope").unwrap_err()
        ));
    }

    #[test]
    fn resync_is_a_no_op() {
        let store = users_store();
        store.add(pod_with_users("one", "ernie")).unwrap();
        store.resync().unwrap();
        assert_eq!(store.len(), 1);
    }
}

/// A failing index function: client-go panics; here the write fails and nothing
/// changes.
mod failures {
    use super::*;
    use pretty_assertions::assert_eq;

    fn picky(pod: &Pod) -> Result<IndexValues<'_>, BoxError> {
        match pod.metadata.name.as_deref() {
            Some("bad") => Err("cannot index pods named bad".into()),
            Some("boom") => panic!("index function exploded"),
            name => Ok(smallvec::smallvec![Cow::Borrowed(name.unwrap_or(""))]),
        }
    }

    fn store() -> ThreadSafeStore<Pod> {
        let store = ThreadSafeStore::new(indexers([("picky", index_func(picky))]));
        store.add("k", pod("", "good")).unwrap();
        store
    }

    fn assert_unchanged(store: &ThreadSafeStore<Pod>) {
        assert_eq!(names(&store.list()), ["good"]);
        assert_eq!(strs(&store.index_keys("picky", "good").unwrap()), ["k"]);
        assert_eq!(store.list_index_func_values("picky").unwrap(), ["good"]);
    }

    #[test]
    fn failing_update_leaves_item_and_index_unchanged() {
        let store = store();
        let err = store.update("k", pod("", "bad")).unwrap_err();
        assert!(
            matches!(&err, StoreError::IndexFunc { index, key, .. } if index == "picky" && key == "k"),
            "{err:?}"
        );
        assert!(
            err.to_string().contains("cannot index pods named bad"),
            "{err}"
        );
        assert_unchanged(&store);
        assert!(store.add("new", pod("", "bad")).is_err());
        assert_unchanged(&store);
    }

    #[test]
    fn panicking_index_function_is_an_error_not_a_crash() {
        let store = store();
        let err = store.add("x", pod("", "boom")).unwrap_err();
        assert!(err.to_string().contains("index function exploded"), "{err}");
        assert_unchanged(&store);
        // The lock is still usable afterwards.
        store.add("y", pod("", "fine")).unwrap();
        assert_eq!(store.len(), 2);
    }

    #[test]
    fn failing_replace_keeps_the_old_contents() {
        let store = store();
        let err = store
            .replace([("a", pod("", "fine")), ("b", pod("", "bad"))], "7")
            .unwrap_err();
        assert!(matches!(err, StoreError::IndexFunc { .. }));
        assert_unchanged(&store);
    }

    #[test]
    fn failing_add_indexers_adds_nothing() {
        let store: ThreadSafeStore<Pod> = ThreadSafeStore::default();
        store.add("k", pod("", "bad")).unwrap();
        assert!(
            store
                .add_indexers(indexers([("picky", index_func(picky))]))
                .is_err()
        );
        assert!(store.get_indexers().is_empty());
        assert!(store.list_index_func_values("picky").is_err());
    }
}
