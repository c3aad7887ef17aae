//! Adoption and release: mirrors kubernetes'
//! [`pkg/controller/controller_ref_manager.go`] (`BaseControllerRefManager.ClaimObject`,
//! `PodControllerRefManager.ClaimPods`, `ReplicaSetControllerRefManager.ClaimReplicaSets`,
//! `AdoptPod`, `ReleasePod`, `RecheckDeletionTimestamp`).
//!
//! A controller owns what carries its controller reference. What its selector
//! matches but nobody owns, it adopts (a strategic merge patch adds its
//! reference, with the object's uid as the precondition); what it owns but
//! its selector no longer matches, it releases (the patch deletes its
//! reference). An object owned by another controller is left alone, and a
//! controller being deleted adopts nothing and releases nothing. Before its
//! first adoption the controller checks, once, against the API server, that it
//! still exists and is not being deleted (its informer may be stale).
//!
//! [`pkg/controller/controller_ref_manager.go`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/controller_ref_manager.go

use std::fmt::Debug;
use std::future::Future;
use std::sync::Arc;

use futures::future::BoxFuture;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::Resource;
use kube::api::{Api, Patch, PatchParams};
use kube::core::{Selector, SelectorExt};
use serde::de::DeserializeOwned;
use serde_json::json;

use crate::controller_utils::get_controller_of;

/// Makes the client of a namespace.
type ApiFor<'a, K> = Box<dyn Fn(&str) -> Api<K> + Send + Sync + 'a>;

/// Mirrors `BaseControllerRefManager` over objects of type `K`.
pub struct ControllerRefManager<'a, K> {
    /// The controller's own metadata (from its informer).
    controller: &'a ObjectMeta,
    /// The reference it puts in what it adopts.
    controller_ref: OwnerReference,
    /// What it may own.
    selector: &'a Selector,
    /// Writes adoptions and releases.
    api_for: ApiFor<'a, K>,
    /// `CanAdopt`: checked once, before the first adoption.
    can_adopt: tokio::sync::OnceCell<bool>,
    recheck: Box<dyn Fn() -> BoxFuture<'a, bool> + Send + Sync + 'a>,
}

impl<K> Debug for ControllerRefManager<'_, K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerRefManager")
            .field("controller", &self.controller.name)
            .finish_non_exhaustive()
    }
}

impl<'a, K> ControllerRefManager<'a, K>
where
    K: Resource<DynamicType = (), Scope = kube::core::NamespaceResourceScope>
        + Clone
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    /// A manager for `controller` (with `controller_ref`, its reference) and
    /// its `selector`, writing through `client`. `recheck` is
    /// `RecheckDeletionTimestamp`: a fresh read of the controller that says
    /// whether it still exists, with the same uid, and is not being deleted.
    pub fn new<F>(
        client: kube::Client,
        controller: &'a ObjectMeta,
        controller_ref: OwnerReference,
        selector: &'a Selector,
        recheck: impl Fn() -> F + Send + Sync + 'a,
    ) -> Self
    where
        F: Future<Output = bool> + Send + 'a,
    {
        Self {
            controller,
            controller_ref,
            selector,
            api_for: Box::new(move |namespace| {
                Api::namespaced(client.clone(), namespace)
            }),
            can_adopt: tokio::sync::OnceCell::new(),
            recheck: Box::new(move || Box::pin(recheck())),
        }
    }

    // ANCHOR: claim
    /// Mirrors `ClaimPods` / `ClaimReplicaSets` over `ClaimObject`: the objects
    /// this controller owns after adopting the matching orphans and releasing
    /// the owned ones that no longer match. A write that fails with 404 (the
    /// object is gone) leaves it out; any other failure is returned after the
    /// rest are claimed.
    pub async fn claim(
        &self,
        objects: &[Arc<K>],
    ) -> Result<Vec<Arc<K>>, kube::Error> {
        let mut claimed = Vec::new();
        let mut first_error = None;
        for object in objects {
            match self.claim_object(object).await {
                Ok(true) => claimed.push(Arc::clone(object)),
                Ok(false) => {}
                Err(error) => {
                    first_error.get_or_insert(error);
                }
            }
        }
        match first_error {
            Some(error) => Err(error),
            None => Ok(claimed),
        }
    }
    // ANCHOR_END: claim

    // ANCHOR: claim_object
    /// Mirrors `ClaimObject` for one object: whether it is ours afterwards.
    async fn claim_object(&self, object: &K) -> Result<bool, kube::Error> {
        let meta = object.meta();
        let matches = self
            .selector
            .matches(meta.labels.as_ref().unwrap_or(&Default::default()));
        if let Some(owner) = get_controller_of(meta) {
            if Some(&owner.uid) != self.controller.uid.as_ref() {
                // Owned by another controller.
                return Ok(false);
            }
            if matches {
                return Ok(true);
            }
            // Ours, but no longer selected: release it, unless we are going.
            if self.controller.deletion_timestamp.is_some() {
                return Ok(false);
            }
            self.release(object).await?;
            return Ok(false);
        }
        // An orphan: adopt it if it matches and neither side is going.
        if self.controller.deletion_timestamp.is_some()
            || !matches
            || meta.deletion_timestamp.is_some()
        {
            return Ok(false);
        }
        if !*self.can_adopt.get_or_init(|| (self.recheck)()).await {
            return Ok(false);
        }
        match self.adopt(object).await {
            Ok(()) => Ok(true),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(false),
            Err(error) => Err(error),
        }
    }
    // ANCHOR_END: claim_object

    // ANCHOR: adopt_release
    /// Mirrors `AdoptPod` / `AdoptReplicaSet`: a strategic merge patch that adds
    /// the controller reference, with the object's uid as a precondition.
    async fn adopt(&self, object: &K) -> Result<(), kube::Error> {
        let meta = object.meta();
        let patch = json!({"metadata": {
            "ownerReferences": [self.controller_ref],
            "uid": meta.uid,
        }});
        self.patch(meta, patch).await
    }

    /// Mirrors `ReleasePod` / `ReleaseReplicaSet`: a strategic merge patch that
    /// deletes the controller reference (`$patch: delete`); an object already
    /// gone is released.
    async fn release(&self, object: &K) -> Result<(), kube::Error> {
        let meta = object.meta();
        let patch = json!({"metadata": {
            "ownerReferences": [{"$patch": "delete", "uid": self.controller_ref.uid}],
            "uid": meta.uid,
        }});
        match self.patch(meta, patch).await {
            Err(kube::Error::Api(status))
                if status.code == 404 || status.code == 422 =>
            {
                Ok(())
            }
            other => other,
        }
    }
    // ANCHOR_END: adopt_release

    async fn patch(
        &self,
        meta: &ObjectMeta,
        patch: serde_json::Value,
    ) -> Result<(), kube::Error> {
        let api = (self.api_for)(meta.namespace.as_deref().unwrap_or_default());
        api.patch(
            meta.name.as_deref().unwrap_or_default(),
            &PatchParams::default(),
            &Patch::Strategic(patch),
        )
        .await
        .map(|_| ())
    }
}
