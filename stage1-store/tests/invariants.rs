//! Randomised: after any sequence of writes, every index equals a recomputation from
//! the items, and no index keeps an empty set.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use common::pod_with_users;
use k8s_openapi::api::core::v1::Pod;
use proptest::prelude::*;
use stage1_store::{
    NAMESPACE_INDEX, ThreadSafeStore, index_func, indexers,
    meta_namespace_index_func,
};

#[derive(Debug, Clone)]
enum Op {
    Add(usize, Arc<Pod>),
    Delete(usize),
    Replace(Vec<(usize, Arc<Pod>)>),
}

const KEYS: [&str; 6] = ["k0", "k1", "k2", "k3", "k4", "k5"];

fn object() -> impl Strategy<Value = Arc<Pod>> {
    let users = prop::sample::subsequence(vec!["ann", "bob", "cid", "dee"], 0..=3);
    let namespace = prop::sample::select(vec!["x", "y", ""]);
    (users, namespace).prop_map(|(users, namespace)| {
        let mut pod = (*pod_with_users("p", &users.join(","))).clone();
        pod.metadata.namespace =
            (!namespace.is_empty()).then(|| namespace.to_string());
        Arc::new(pod)
    })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0..KEYS.len(), object()).prop_map(|(k, o)| Op::Add(k, o)),
        2 => (0..KEYS.len()).prop_map(Op::Delete),
        1 => prop::collection::vec((0..KEYS.len(), object()), 0..5).prop_map(Op::Replace),
    ]
}

type Expected = BTreeMap<String, BTreeSet<String>>;

fn recompute(
    items: &BTreeMap<&str, Arc<Pod>>,
    f: impl Fn(&Pod) -> Vec<String>,
) -> Expected {
    let mut index = Expected::new();
    for (key, obj) in items {
        for value in f(obj) {
            index.entry(value).or_default().insert(key.to_string());
        }
    }
    index
}

fn observed(store: &ThreadSafeStore<Pod>, name: &str) -> Expected {
    store
        .list_index_func_values(name)
        .unwrap()
        .into_iter()
        .map(|value| {
            let keys = store.index_keys(name, &value).unwrap();
            let keys = keys.iter().map(|k| k.to_string()).collect();
            (value, keys)
        })
        .collect()
}

proptest! {
    #[test]
    fn ex1_update_index_indices_match_a_recomputation(ops in prop::collection::vec(op(), 1..40)) {
        let store = ThreadSafeStore::new(indexers([
            ("byUser", index_func(common::users_index_func)),
            (NAMESPACE_INDEX, index_func(meta_namespace_index_func::<Pod>)),
        ]));
        let mut model: BTreeMap<&str, Arc<Pod>> = BTreeMap::new();
        for op in ops {
            match op {
                Op::Add(k, obj) => {
                    store.add(KEYS[k], obj.clone()).unwrap();
                    model.insert(KEYS[k], obj);
                }
                Op::Delete(k) => {
                    store.delete(KEYS[k]).unwrap();
                    model.remove(KEYS[k]);
                }
                Op::Replace(items) => {
                    store.replace(items.iter().map(|(k, o)| (KEYS[*k], o.clone())), "1").unwrap();
                    model = items.into_iter().map(|(k, o)| (KEYS[k], o)).collect();
                }
            }
            let users = recompute(&model, |p| {
                common::users_index_func(p).unwrap().iter().map(|v| v.to_string()).collect()
            });
            let namespaces = recompute(&model, |p| {
                vec![p.metadata.namespace.clone().unwrap_or_default()]
            });
            prop_assert_eq!(observed(&store, "byUser"), users);
            prop_assert_eq!(observed(&store, NAMESPACE_INDEX), namespaces);
            prop_assert_eq!(store.len(), model.len());
            for (key, obj) in &model {
                prop_assert_eq!(store.get(key), Some(obj.clone()));
            }
        }
    }
}
