//! Listers over a stage 1 indexer: client-go's listers.go (`ListAll`,
//! `ListAllByNamespace`) and the generated `PodLister`/`NodeLister`, including the
//! scan that `ListAllByNamespace` falls back to when the indexer has no namespace
//! index.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::core::Selector;
use stage1_store::{Cache, Indexer, Indexers, meta_namespace_key_func, new_indexer};
use stage4_shared_informer::{Lister, ListerError, parse_label_selector};

fn meta(namespace: &str, name: &str, labels: &[(&str, &str)]) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.to_string()),
        namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
        labels: (!labels.is_empty()).then(|| {
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>()
        }),
        ..ObjectMeta::default()
    }
}

fn pod(namespace: &str, name: &str, labels: &[(&str, &str)]) -> Arc<Pod> {
    Arc::new(Pod {
        metadata: meta(namespace, name, labels),
        ..Pod::default()
    })
}

fn node(name: &str, labels: &[(&str, &str)]) -> Arc<Node> {
    Arc::new(Node {
        metadata: meta("", name, labels),
        ..Node::default()
    })
}

fn selector(s: &str) -> Selector {
    parse_label_selector(s).unwrap()
}

/// `namespace/name` of each object, sorted.
fn keys<K: kube::Resource<DynamicType = ()>>(objects: &[Arc<K>]) -> Vec<String> {
    let mut keys: Vec<String> = objects
        .iter()
        .map(|o| meta_namespace_key_func(&**o).unwrap())
        .collect();
    keys.sort();
    keys
}

/// Five pods in three namespaces: web and db tiers, one pod without labels.
fn fill(store: &dyn Indexer<Pod>) {
    for p in [
        pod("default", "web-0", &[("app", "web"), ("tier", "frontend")]),
        pod("default", "web-1", &[("app", "web"), ("tier", "frontend")]),
        pod("default", "db-0", &[("app", "db"), ("tier", "backend")]),
        pod(
            "prod",
            "web-0",
            &[("app", "web"), ("tier", "frontend"), ("canary", "true")],
        ),
        pod("kube-system", "bare", &[]),
    ] {
        store.add(p).unwrap();
    }
}

/// A pod lister over an indexer with the namespace index, as an informer builds it.
fn pod_lister() -> Lister<Pod> {
    let indexer: Arc<dyn Indexer<Pod>> = Arc::new(Cache::<Pod>::for_resources());
    fill(&*indexer);
    Lister::new(indexer)
}

/// A pod lister over an indexer WITHOUT the namespace index.
fn unindexed_pod_lister() -> Lister<Pod> {
    let indexer: Arc<dyn Indexer<Pod>> = Arc::new(new_indexer(
        Arc::new(meta_namespace_key_func::<Pod>),
        Indexers::new(),
    ));
    fill(&*indexer);
    Lister::new(indexer)
}

/// `cache.ListAll`: every namespace.
mod list_all {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn without_a_selector_lists_everything() {
        let lister = pod_lister();
        assert_eq!(
            keys(&lister.list(&Selector::default())),
            [
                "default/db-0",
                "default/web-0",
                "default/web-1",
                "kube-system/bare",
                "prod/web-0"
            ]
        );
        assert_eq!(lister.list(&selector("")).len(), 5);
    }

    #[test]
    fn with_a_selector_across_namespaces() {
        let lister = pod_lister();
        assert_eq!(
            keys(&lister.list(&selector("app=web"))),
            ["default/web-0", "default/web-1", "prod/web-0"]
        );
        assert_eq!(
            keys(&lister.list(&selector("app=web,!canary"))),
            ["default/web-0", "default/web-1"]
        );
        assert_eq!(
            keys(&lister.list(&selector("tier in (backend),app"))),
            ["default/db-0"]
        );
        assert!(lister.list(&selector("app=nothing")).is_empty());
    }

    #[test]
    fn objects_without_labels_match_negative_requirements_only() {
        let lister = pod_lister();
        assert_eq!(keys(&lister.list(&selector("!app"))), ["kube-system/bare"]);
        assert_eq!(
            keys(&lister.list(&selector("app notin (web)"))),
            ["default/db-0", "kube-system/bare"]
        );
        assert!(
            !keys(&lister.list(&selector("app")))
                .contains(&"kube-system/bare".to_string())
        );
    }

    #[test]
    fn answers_share_the_cached_objects() {
        let indexer: Arc<dyn Indexer<Pod>> = Arc::new(Cache::<Pod>::for_resources());
        let web = pod("default", "web-0", &[("app", "web")]);
        indexer.add(Arc::clone(&web)).unwrap();
        let lister = Lister::new(indexer);
        let listed = lister.list(&selector("app=web"));
        assert!(Arc::ptr_eq(&listed[0], &web));
        assert!(Arc::ptr_eq(
            &lister.namespaced("default").get("web-0").unwrap(),
            &web
        ));
    }

    #[test]
    fn sees_later_writes_to_the_indexer() {
        let indexer: Arc<dyn Indexer<Pod>> = Arc::new(Cache::<Pod>::for_resources());
        let lister = Lister::new(Arc::clone(&indexer));
        let clone = lister.clone();
        assert!(lister.list(&Selector::default()).is_empty());
        indexer.add(pod("default", "late", &[])).unwrap();
        assert_eq!(keys(&clone.list(&Selector::default())), ["default/late"]);
    }
}

/// `cache.ListAllByNamespace` and the namespace lister's `Get`.
mod namespaced {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn list_through_the_namespace_index() {
        let lister = pod_lister();
        let default = lister.namespaced("default");
        assert_eq!(default.namespace(), "default");
        assert_eq!(
            keys(&default.list(&Selector::default())),
            ["default/db-0", "default/web-0", "default/web-1"]
        );
        assert_eq!(
            keys(&default.list(&selector("app=web"))),
            ["default/web-0", "default/web-1"]
        );
        assert_eq!(
            keys(&lister.namespaced("prod").list(&selector("app=web"))),
            ["prod/web-0"]
        );
        assert!(
            lister
                .namespaced("staging")
                .list(&Selector::default())
                .is_empty()
        );
    }

    #[test]
    fn the_empty_namespace_means_all_namespaces() {
        let lister = pod_lister();
        assert_eq!(
            keys(&lister.namespaced("").list(&selector("app=web"))),
            ["default/web-0", "default/web-1", "prod/web-0"]
        );
    }

    #[test]
    fn list_falls_back_to_a_scan_without_the_namespace_index() {
        let lister = unindexed_pod_lister();
        let default = lister.namespaced("default");
        assert_eq!(
            keys(&default.list(&Selector::default())),
            ["default/db-0", "default/web-0", "default/web-1"]
        );
        assert_eq!(
            keys(&default.list(&selector("tier=frontend"))),
            ["default/web-0", "default/web-1"]
        );
        assert_eq!(
            keys(&lister.namespaced("kube-system").list(&selector("!app"))),
            ["kube-system/bare"]
        );
        assert!(
            lister
                .namespaced("staging")
                .list(&Selector::default())
                .is_empty()
        );
    }

    #[test]
    fn index_and_scan_give_the_same_answers() {
        let (indexed, unindexed) = (pod_lister(), unindexed_pod_lister());
        for namespace in ["", "default", "prod", "kube-system", "staging"] {
            for s in ["", "app=web", "!app", "tier notin (frontend)", "canary"] {
                assert_eq!(
                    keys(&indexed.namespaced(namespace).list(&selector(s))),
                    keys(&unindexed.namespaced(namespace).list(&selector(s))),
                    "namespace {namespace:?}, selector {s:?}"
                );
            }
        }
    }

    #[test]
    fn get_present_objects() {
        for lister in [pod_lister(), unindexed_pod_lister()] {
            let got = lister.namespaced("prod").get("web-0").unwrap();
            assert_eq!(got.metadata.namespace.as_deref(), Some("prod"));
            assert_eq!(got.metadata.name.as_deref(), Some("web-0"));
            let got = lister.namespaced("default").get("web-0").unwrap();
            assert_eq!(got.metadata.namespace.as_deref(), Some("default"));
        }
    }

    #[test]
    fn get_missing_object_is_not_found_without_the_namespace() {
        let lister = pod_lister();
        let err = lister.namespaced("prod").get("web-1").unwrap_err();
        assert_eq!(
            err,
            ListerError::NotFound {
                resource: "pods".into(),
                name: "web-1".into(),
            }
        );
        assert_eq!(err.to_string(), "pods \"web-1\" not found");
        assert_eq!(err.code(), 404);
        assert_eq!(err.reason(), "NotFound");
        assert!(err.is_not_found());
        // The namespace is part of the key: a pod elsewhere is not found here.
        assert!(lister.namespaced("staging").get("web-0").is_err());
    }

    #[test]
    fn grouped_resources_are_qualified_with_their_group() {
        let indexer: Arc<dyn Indexer<Deployment>> =
            Arc::new(Cache::<Deployment>::for_resources());
        let lister = Lister::new(indexer);
        let err = lister.namespaced("default").get("web").unwrap_err();
        assert_eq!(err.to_string(), "deployments.apps \"web\" not found");
    }
}

/// A cluster-scoped type: keys are bare names and `Lister::get` reads them.
mod cluster_scoped {
    use super::*;
    use pretty_assertions::assert_eq;

    fn node_lister() -> Lister<Node> {
        let indexer: Arc<dyn Indexer<Node>> =
            Arc::new(Cache::<Node>::for_resources());
        for n in [
            node(
                "n1",
                &[("zone", "a"), ("node-role.kubernetes.io/control-plane", "")],
            ),
            node("n2", &[("zone", "b")]),
            node("n3", &[("zone", "a")]),
        ] {
            indexer.add(n).unwrap();
        }
        Lister::new(indexer)
    }

    #[test]
    fn list_with_and_without_a_selector() {
        let lister = node_lister();
        assert_eq!(keys(&lister.list(&Selector::default())), ["n1", "n2", "n3"]);
        assert_eq!(keys(&lister.list(&selector("zone=a"))), ["n1", "n3"]);
        assert_eq!(
            keys(&lister.list(&selector("node-role.kubernetes.io/control-plane"))),
            ["n1"]
        );
        assert_eq!(
            keys(&lister.list(&selector(
                "zone in (a,b),!node-role.kubernetes.io/control-plane"
            ))),
            ["n2", "n3"]
        );
    }

    #[test]
    fn get_present_and_missing() {
        let lister = node_lister();
        assert_eq!(
            lister.get("n2").unwrap().metadata.name.as_deref(),
            Some("n2")
        );
        let err = lister.get("n9").unwrap_err();
        assert_eq!(
            err,
            ListerError::NotFound {
                resource: "nodes".into(),
                name: "n9".into(),
            }
        );
        assert_eq!(err.to_string(), "nodes \"n9\" not found");
        assert_eq!((err.code(), err.reason()), (404, "NotFound"));
    }

    #[test]
    fn not_found_is_built_from_the_type() {
        assert_eq!(
            ListerError::not_found::<Node>("x").to_string(),
            "nodes \"x\" not found"
        );
        assert_eq!(
            ListerError::not_found::<Pod>("web-0").to_string(),
            "pods \"web-0\" not found"
        );
    }
}
