//! Helpers shared by the stage 1 tests.
#![allow(dead_code)]

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use stage1_store::{BoxError, IndexValues};

/// A pod with a namespace (empty for none) and a name.
pub fn pod(namespace: &str, name: &str) -> Arc<Pod> {
    Arc::new(Pod {
        metadata: ObjectMeta {
            name: Some(name.to_string()),
            namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
            ..ObjectMeta::default()
        },
        ..Pod::default()
    })
}

/// A pod whose `users` annotation is `users`, as in client-go's index_test.go.
pub fn pod_with_users(name: &str, users: &str) -> Arc<Pod> {
    let mut p = (*pod("", name)).clone();
    p.metadata.annotations =
        Some(BTreeMap::from([("users".to_string(), users.to_string())]));
    Arc::new(p)
}

/// A pod with labels.
pub fn pod_with_labels(
    namespace: &str,
    name: &str,
    labels: &[(&str, &str)],
) -> Arc<Pod> {
    let mut p = (*pod(namespace, name)).clone();
    p.metadata.labels = Some(
        labels
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    Arc::new(p)
}

/// The "users" index function: the comma-separated values of the `users` annotation.
pub fn users_index_func(pod: &Pod) -> Result<IndexValues<'_>, BoxError> {
    Ok(pod
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("users"))
        .map(|users| users.split(',').map(Cow::Borrowed).collect())
        .unwrap_or_default())
}

/// Sorted names of the given pods.
pub fn names(pods: &[Arc<Pod>]) -> Vec<String> {
    let mut names: Vec<String> = pods
        .iter()
        .map(|p| p.metadata.name.clone().unwrap_or_default())
        .collect();
    names.sort();
    names
}

/// Keys as plain strings.
pub fn strs(keys: &[Arc<str>]) -> Vec<&str> {
    keys.iter().map(|k| &**k).collect()
}
