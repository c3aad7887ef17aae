//! The ownership graph: mirrors kubernetes' `pkg/controller/garbagecollector/graph.go`
//! (`node`, `objectReference`, `concurrentUIDToNode`): one node per object the
//! collector has seen (or only heard of, as some object's owner: a virtual
//! node), with its owner references and the uids of its dependents.

use std::collections::{HashMap, HashSet};

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};

/// Mirrors `objectReference`: what identifies an object across kinds.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ObjectIdentity {
    /// `apps/v1`.
    pub api_version: String,
    /// `ReplicaSet`.
    pub kind: String,
    /// The namespace (`""` for a cluster-scoped object).
    pub namespace: String,
    /// The name.
    pub name: String,
    /// The uid.
    pub uid: String,
}

impl ObjectIdentity {
    /// The identity of an object of `api_version`/`kind` with `meta`.
    pub fn of(api_version: &str, kind: &str, meta: &ObjectMeta) -> Self {
        Self {
            api_version: api_version.to_string(),
            kind: kind.to_string(),
            namespace: meta.namespace.clone().unwrap_or_default(),
            name: meta.name.clone().unwrap_or_default(),
            uid: meta.uid.clone().unwrap_or_default(),
        }
    }

    /// The identity of an owner, in the dependent's namespace (an owner is in
    /// its dependent's namespace, or cluster-scoped).
    pub fn of_owner(owner: &OwnerReference, namespace: &str) -> Self {
        Self {
            api_version: owner.api_version.clone(),
            kind: owner.kind.clone(),
            namespace: namespace.to_string(),
            name: owner.name.clone(),
            uid: owner.uid.clone(),
        }
    }
}

impl std::fmt::Display for ObjectIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "[{}/{}, namespace: {}, name: {}, uid: {}]",
            self.api_version, self.kind, self.namespace, self.name, self.uid
        )
    }
}

// ANCHOR: node
/// What the collector knows of one object: mirrors `node`.
#[derive(Clone, Debug, Default)]
pub struct Node {
    /// Which object.
    pub identity: ObjectIdentity,
    /// Its owner references.
    pub owners: Vec<OwnerReference>,
    /// The uids of the objects that name it as an owner.
    pub dependents: HashSet<String>,
    /// Whether it has a `deletionTimestamp` (`beingDeleted`).
    pub being_deleted: bool,
    /// Whether it waits for its dependents (`foregroundDeletion`).
    pub deleting_dependents: bool,
    /// Whether it waits to orphan its dependents (`orphan`).
    pub orphaning: bool,
    /// Known only as an owner, not observed yet (`virtual`).
    pub is_virtual: bool,
}
// ANCHOR_END: node

impl Node {
    /// Mirrors `blockingDependents`: the dependents whose reference to this
    /// node has `blockOwnerDeletion: true`.
    pub fn blocking_dependents<'g>(&self, graph: &'g Graph) -> Vec<&'g Node> {
        self.dependents
            .iter()
            .filter_map(|uid| graph.nodes.get(uid))
            .filter(|dependent| {
                dependent.owners.iter().any(|owner| {
                    owner.uid == self.identity.uid
                        && owner.block_owner_deletion == Some(true)
                })
            })
            .collect()
    }
}

/// Mirrors `concurrentUIDToNode`: the nodes by uid.
#[derive(Debug, Default)]
pub struct Graph {
    /// Every node.
    pub nodes: HashMap<String, Node>,
}

impl Graph {
    /// The node of `uid`.
    pub fn get(&self, uid: &str) -> Option<&Node> {
        self.nodes.get(uid)
    }
}
