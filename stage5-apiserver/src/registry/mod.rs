//! The served resource types, their storages and their rules: mirrors the
//! apiserver's `APIGroupInfo` (`VersionedResourcesStorageMap`), the
//! `RESTStorageProvider`s that fill it, and kubernetes' `pkg/registry`, which
//! keeps each kind's rules in one `strategy.go`.
//!
//! | Go                                                        | Rust                          |
//! |-----------------------------------------------------------|-------------------------------|
//! | `APIGroupInfo.VersionedResourcesStorageMap`               | [`Registry`], [`RegisteredResource`] |
//! | `pkg/registry/rest` (the strategy interfaces, `BeforeCreate`, `BeforeUpdate`) | [`rest`] |
//! | `pkg/registry/generic/registry` (`StorageWithCacher`)    | [`generic::registry`]         |
//! | `pkg/registry/core/pod/strategy.go`                       | [`core::pod::strategy`]       |
//! | `pkg/registry/core/namespace/strategy.go`                 | [`core::namespace::strategy`] |
//! | `pkg/registry/core/node/strategy.go`                      | [`core::node::strategy`]      |
//! | `pkg/registry/core/configmap/strategy.go`                 | [`core::configmap::strategy`] |
//! | `pkg/registry/core/secret/strategy.go`                    | [`core::secret::strategy`]    |
//! | `pkg/registry/core/event/strategy.go`                     | [`core::event::strategy`]     |
//! | `pkg/registry/apps/deployment/strategy.go`                | [`apps::deployment::strategy`] |
//! | `pkg/registry/apps/replicaset/strategy.go`                | [`apps::replicaset::strategy`] |
//! | `pkg/registry/coordination/lease/strategy.go`             | [`coordination::lease::strategy`] |
//!
//! A kind's names, etcd prefix and field labels are its [`ResourceInfo`]; every
//! other rule is its strategy's, found by [`strategy_for`]. Serving a new kind
//! is one strategy file and one row of [`STRATEGIES`].

use std::sync::Arc;

use stage5_storage::ResourceInfo;
use stage5_storage::Storage;
use stage5_storage::kv::Kv;

pub use self::generic::registry::{
    RegisteredResource, ResourceStorage, connect_backend, new_storage,
};
use self::rest::{DefaultStrategy, Strategy};

pub mod rest;

/// `pkg/registry/generic`.
pub mod generic {
    pub mod registry;
}

/// `pkg/registry/core`: the core group's kinds.
pub mod core {
    /// `pkg/registry/core/configmap`.
    pub mod configmap {
        pub mod strategy;
    }
    /// `pkg/registry/core/event`.
    pub mod event {
        pub mod strategy;
    }
    /// `pkg/registry/core/namespace`.
    pub mod namespace {
        pub mod strategy;
    }
    /// `pkg/registry/core/node`.
    pub mod node {
        pub mod strategy;
    }
    /// `pkg/registry/core/pod`.
    pub mod pod {
        pub mod strategy;
    }
    /// `pkg/registry/core/secret`.
    pub mod secret {
        pub mod strategy;
    }
}

/// `pkg/registry/apps`.
pub mod apps {
    /// `pkg/registry/apps/deployment`.
    pub mod deployment {
        pub mod strategy;
    }
    /// `pkg/registry/apps/replicaset`.
    pub mod replicaset {
        pub mod strategy;
    }
}

/// `pkg/registry/coordination`.
pub mod coordination {
    /// `pkg/registry/coordination/lease`.
    pub mod lease {
        pub mod strategy;
    }
}

// ANCHOR: strategies
/// Every kind's strategy, by the resource it serves.
pub static STRATEGIES: &[(&ResourceInfo, &dyn Strategy)] = &[
    (&ResourceInfo::PODS, &core::pod::strategy::PodStrategy),
    (
        &ResourceInfo::CONFIGMAPS,
        &core::configmap::strategy::ConfigMapStrategy,
    ),
    (
        &ResourceInfo::SECRETS,
        &core::secret::strategy::SecretStrategy,
    ),
    (
        &ResourceInfo::NAMESPACES,
        &core::namespace::strategy::NamespaceStrategy,
    ),
    (&ResourceInfo::NODES, &core::node::strategy::NodeStrategy),
    (&ResourceInfo::EVENTS, &core::event::strategy::EventStrategy),
    (
        &ResourceInfo::EVENTS_V1,
        &core::event::strategy::EventsV1Strategy,
    ),
    (
        &ResourceInfo::DEPLOYMENTS,
        &apps::deployment::strategy::DeploymentStrategy,
    ),
    (
        &ResourceInfo::REPLICASETS,
        &apps::replicaset::strategy::ReplicaSetStrategy,
    ),
    (
        &ResourceInfo::LEASES,
        &coordination::lease::strategy::LeaseStrategy,
    ),
];

/// The strategy of `info`'s kind; a kind without one has no rules of its own
/// ([`DefaultStrategy`]).
pub fn strategy_for(info: &ResourceInfo) -> &'static dyn Strategy {
    STRATEGIES
        .iter()
        .find(|(served, _)| {
            served.group == info.group
                && served.version == info.version
                && served.plural == info.plural
        })
        .map_or(&DefaultStrategy, |(_, strategy)| *strategy)
}
// ANCHOR_END: strategies

/// Every served resource type, found by group, version and plural: the apiserver's
/// `APIGroupInfo.VersionedResourcesStorageMap`.
pub struct Registry {
    kv: Arc<dyn Kv>,
    resources: Vec<RegisteredResource>,
    probe: stage5_cacher::Probe,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Registry")
            .field("resources", &self.resources)
            .finish_non_exhaustive()
    }
}

impl Registry {
    /// Storages for `resources` over `kv`.
    pub fn new(
        kv: Arc<dyn Kv>,
        resources: &[ResourceInfo],
        watch_cache: bool,
        capacity: usize,
    ) -> Registry {
        let probe = stage5_cacher::Probe::new();
        let resources = resources
            .iter()
            .map(|info| {
                let storage = new_storage(
                    Arc::clone(&kv),
                    info.clone(),
                    watch_cache,
                    capacity,
                    &probe,
                );
                RegisteredResource {
                    info: info.clone(),
                    strategy: strategy_for(info),
                    dyn_storage: storage.storage(),
                    storage,
                }
            })
            .collect::<Vec<_>>();
        // `events.k8s.io/v1` is served from the core events' storage, as
        // upstream's events REST storage provider does.
        let events_v1 = resources
            .iter()
            .find(|r| r.info == ResourceInfo::EVENTS)
            .map(|core| {
                let storage: Arc<dyn Storage> =
                    Arc::new(crate::events_v1::EventsV1Storage::new(Arc::clone(
                        &core.dyn_storage,
                    )));
                RegisteredResource {
                    info: ResourceInfo::EVENTS_V1,
                    strategy: strategy_for(&ResourceInfo::EVENTS_V1),
                    storage: ResourceStorage::Converted(Arc::clone(&storage)),
                    dyn_storage: storage,
                }
            });
        let mut resources = resources;
        resources.extend(events_v1);
        Registry {
            kv,
            resources,
            probe,
        }
    }

    /// Where the watch caches and the HTTP layer send what the live page
    /// (`/debug/ui`) draws.
    pub fn probe(&self) -> &stage5_cacher::Probe {
        &self.probe
    }

    /// The backend, e.g. to compact it in tests.
    pub fn kv(&self) -> Arc<dyn Kv> {
        Arc::clone(&self.kv)
    }

    /// Every served resource.
    pub fn resources(&self) -> &[RegisteredResource] {
        &self.resources
    }

    /// The resource `plural` of `group`/`version`.
    pub fn find(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<&RegisteredResource> {
        self.resources.iter().find(|r| {
            r.info.group == group
                && r.info.version == version
                && r.info.plural == plural
        })
    }

    /// The groups other than core, with their versions, in registration order.
    pub fn groups(&self) -> Vec<(&'static str, &'static str)> {
        let mut groups: Vec<(&'static str, &'static str)> = Vec::new();
        for r in &self.resources {
            if !r.info.group.is_empty()
                && !groups.contains(&(r.info.group, r.info.version))
            {
                groups.push((r.info.group, r.info.version));
            }
        }
        groups
    }

    /// Stops every watch cache, all at once, and waits for their tasks.
    pub async fn stop(&self) {
        futures::future::join_all(self.resources.iter().map(|r| r.storage.stop()))
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use apimachinery::api::validation::objectmeta::NameRule;
    use apimachinery::util::strategicpatch::meta::lookup;

    #[test]
    fn every_served_kind_names_its_own_rules() {
        let patch_root =
            |info: &ResourceInfo| strategy_for(info).patch_meta().go_type;
        assert_eq!(patch_root(&ResourceInfo::PODS), "Pod");
        assert_eq!(patch_root(&ResourceInfo::DEPLOYMENTS), "Deployment");
        assert_eq!(patch_root(&ResourceInfo::NODES), "Node");
        assert_eq!(patch_root(&ResourceInfo::NAMESPACES), "Namespace");
        for info in [
            ResourceInfo::CONFIGMAPS,
            ResourceInfo::SECRETS,
            ResourceInfo::EVENTS,
        ] {
            let schema = strategy_for(&info).patch_meta();
            assert!(lookup(Some(schema), "metadata").schema.is_some());
        }
        let with_status: Vec<&str> = ResourceInfo::BUILTIN
            .iter()
            .filter(|info| strategy_for(info).has_status_subresource())
            .map(|info| info.plural)
            .collect();
        assert_eq!(
            with_status,
            ["pods", "namespaces", "nodes", "deployments", "replicasets"]
        );
        let with_scale: Vec<&str> = ResourceInfo::BUILTIN
            .iter()
            .filter(|info| strategy_for(info).has_scale_subresource())
            .map(|info| info.plural)
            .collect();
        assert_eq!(with_scale, ["deployments", "replicasets"]);
        assert_eq!(
            strategy_for(&ResourceInfo::NAMESPACES).name_rule(),
            NameRule::DnsLabel
        );
        assert_eq!(
            strategy_for(&ResourceInfo::PODS).name_rule(),
            NameRule::DnsSubdomain
        );
        assert!(strategy_for(&ResourceInfo::NAMESPACES).delete_terminates());
        assert!(!strategy_for(&ResourceInfo::PODS).delete_terminates());
    }

    #[test]
    fn a_kind_without_a_strategy_has_the_defaults() {
        let other = ResourceInfo {
            plural: "widgets",
            kind: "Widget",
            ..ResourceInfo::CONFIGMAPS
        };
        let strategy = strategy_for(&other);
        assert!(!strategy.has_status_subresource());
        assert_eq!(strategy.patch_meta().go_type, "ObjectWithMetadata");
        assert_eq!(strategy.table_handler().columns.len(), 2);
        assert_eq!(strategy.new_object(), serde_json::json!({}));
    }
}
