//! [`NodeLeaseController`]: a kubelet's heartbeat, a `coordination.k8s.io/v1`
//! Lease named after its node in `kube-node-lease`, renewed every
//! `renewInterval`.
//!
//! Mirrors component-helpers'
//! [apimachinery/lease/controller.go](https://github.com/kubernetes/component-helpers/blob/v0.36.0/apimachinery/lease/controller.go)
//! (`controller.Run`, `sync`, `backoffEnsureLease`, `ensureLease`,
//! `retryUpdateLease`, `newLease`, `maxUpdateRetries` = 5, `maxBackoff` =
//! 7 s) with the kubelet's
//! [nodelease.go](https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/kubelet/nodelease.go)
//! post-processing (`setNodeOwnerFunc`: the Node owns its Lease, so deleting
//! the Node deletes it). The kubelet's lease lasts 40 s
//! (`nodeLeaseDurationSeconds`) and is renewed every quarter of that
//! (`NodeLeaseRenewIntervalFraction` = 0.25, so 10 s).
//!
//! # Recovery
//!
//! An update that fails with a conflict reads the Lease again and retries; any
//! other failure retries up to five times in a row, then waits for the next
//! interval. A missing Lease is created again, with a backoff from 100 ms to
//! 7 s while the API server refuses.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kube::api::{Api, PostParams};
use tokio_util::sync::CancellationToken;

use apimachinery::apis::meta::v1::time::now_micro;

/// Mirrors `v1.NamespaceNodeLease`.
pub const NAMESPACE_NODE_LEASE: &str = "kube-node-lease";

/// Mirrors `maxUpdateRetries`.
pub const MAX_UPDATE_RETRIES: usize = 5;

/// Mirrors `maxBackoff` of `backoffEnsureLease`.
pub const MAX_BACKOFF: Duration = Duration::from_secs(7);

/// Mirrors the lease `controller`.
pub struct NodeLeaseController {
    client: kube::Client,
    holder_identity: String,
    lease_duration_seconds: i32,
    renew_interval: Duration,
    /// Mirrors `setNodeOwnerFunc`'s result: the Node as the Lease's owner.
    owner: Option<OwnerReference>,
    /// Mirrors `latestLease`.
    latest_lease: Option<Lease>,
}

impl std::fmt::Debug for NodeLeaseController {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeLeaseController")
            .field("holder_identity", &self.holder_identity)
            .field("lease_duration_seconds", &self.lease_duration_seconds)
            .field("renew_interval", &self.renew_interval)
            .finish_non_exhaustive()
    }
}

/// Whether a kube error is the API's `code`.
fn is_status(error: &kube::Error, code: u16) -> bool {
    matches!(error, kube::Error::Api(status) if status.code == code)
}

impl NodeLeaseController {
    /// Mirrors `NewController` as the kubelet calls it: the Lease `node_name`
    /// in `kube-node-lease`, held by `node_name`, lasting
    /// `lease_duration_seconds`, renewed every `renew_interval`, owned by the
    /// Node with `node_uid` when it is known.
    #[must_use]
    pub fn new(
        client: kube::Client,
        node_name: &str,
        node_uid: Option<String>,
        lease_duration_seconds: i32,
        renew_interval: Duration,
    ) -> Self {
        let owner = node_uid.map(|uid| OwnerReference {
            api_version: "v1".into(),
            kind: "Node".into(),
            name: node_name.to_string(),
            uid,
            ..OwnerReference::default()
        });
        NodeLeaseController {
            client,
            holder_identity: node_name.to_string(),
            lease_duration_seconds,
            renew_interval,
            owner,
            latest_lease: None,
        }
    }

    fn leases(&self) -> Api<Lease> {
        Api::namespaced(self.client.clone(), NAMESPACE_NODE_LEASE)
    }

    // ANCHOR: lease_run
    /// Mirrors `controller.Run`: syncs now and every `renew_interval` until
    /// `shutdown` is cancelled.
    pub async fn run(mut self, shutdown: CancellationToken) {
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = self.sync(&shutdown) => {}
            }
            tokio::select! {
                () = shutdown.cancelled() => return,
                () = tokio::time::sleep(self.renew_interval) => {}
            }
        }
    }
    // ANCHOR_END: lease_run

    /// Mirrors `sync`: updates the last Lease written without reading it
    /// first; on failure ensures the Lease exists and updates that.
    async fn sync(&mut self, shutdown: &CancellationToken) {
        if let Some(latest) = self.latest_lease.clone() {
            match self.retry_update_lease(latest, shutdown).await {
                Ok(()) => return,
                Err(error) => tracing::info!(
                    node = %self.holder_identity, %error,
                    "failed to update lease using latest lease, fallback to ensure lease"
                ),
            }
        }
        let Some((lease, created)) = self.backoff_ensure_lease(shutdown).await
        else {
            return;
        };
        self.latest_lease = Some(lease.clone());
        if !created
            && let Err(error) = self.retry_update_lease(lease, shutdown).await
        {
            tracing::warn!(node = %self.holder_identity, %error, "will retry updating lease");
        }
    }

    /// Mirrors `backoffEnsureLease`: [`Self::ensure_lease`] until it works,
    /// waiting 100 ms, then twice as long each time, at most [`MAX_BACKOFF`].
    /// `None` when `shutdown` is cancelled meanwhile.
    async fn backoff_ensure_lease(
        &self,
        shutdown: &CancellationToken,
    ) -> Option<(Lease, bool)> {
        let mut sleep = Duration::from_millis(100);
        loop {
            match self.ensure_lease().await {
                Ok(found) => return Some(found),
                Err(error) => {
                    tracing::warn!(node = %self.holder_identity, %error, "failed to ensure lease exists, will retry");
                }
            }
            tokio::select! {
                () = shutdown.cancelled() => return None,
                () = tokio::time::sleep(sleep) => {}
            }
            sleep = (sleep * 2).min(MAX_BACKOFF);
        }
    }

    /// Mirrors `ensureLease`: the Lease, created (`true`) when missing.
    async fn ensure_lease(&self) -> Result<(Lease, bool), kube::Error> {
        match self.leases().get(&self.holder_identity).await {
            Ok(lease) => Ok((lease, false)),
            Err(error) if is_status(&error, 404) => {
                let lease = self
                    .leases()
                    .create(&PostParams::default(), &self.new_lease(None))
                    .await?;
                Ok((lease, true))
            }
            Err(error) => Err(error),
        }
    }

    /// Mirrors `retryUpdateLease`: up to [`MAX_UPDATE_RETRIES`] updates; a
    /// conflict reads the Lease again first. The error is the last update's.
    async fn retry_update_lease(
        &mut self,
        mut base: Lease,
        shutdown: &CancellationToken,
    ) -> Result<(), kube::Error> {
        let mut attempt = 0;
        loop {
            attempt += 1;
            let lease = self.new_lease(Some(&base));
            match self
                .leases()
                .replace(&self.holder_identity, &PostParams::default(), &lease)
                .await
            {
                Ok(lease) => {
                    self.latest_lease = Some(lease);
                    return Ok(());
                }
                Err(error) if attempt >= MAX_UPDATE_RETRIES => return Err(error),
                Err(error) => {
                    tracing::warn!(node = %self.holder_identity, %error, "failed to update lease");
                    // A conflict needs the newer Lease to go on.
                    if is_status(&error, 409)
                        && let Some((lease, _)) =
                            self.backoff_ensure_lease(shutdown).await
                    {
                        base = lease;
                    }
                }
            }
        }
    }

    /// Mirrors `newLease` with `setNodeOwnerFunc`: a new Lease or a copy of
    /// `base`, with the holder, the duration, `renewTime` now, and the Node as
    /// owner.
    fn new_lease(&self, base: Option<&Lease>) -> Lease {
        let mut lease = base.cloned().unwrap_or_else(|| Lease {
            metadata: ObjectMeta {
                name: Some(self.holder_identity.clone()),
                namespace: Some(NAMESPACE_NODE_LEASE.to_string()),
                ..ObjectMeta::default()
            },
            spec: Some(LeaseSpec {
                holder_identity: Some(self.holder_identity.clone()),
                ..LeaseSpec::default()
            }),
        });
        let spec = lease.spec.get_or_insert_with(LeaseSpec::default);
        spec.lease_duration_seconds = Some(self.lease_duration_seconds);
        spec.renew_time = Some(now_micro());
        if lease
            .metadata
            .owner_references
            .as_ref()
            .is_none_or(Vec::is_empty)
            && let Some(owner) = &self.owner
        {
            lease.metadata.owner_references = Some(vec![owner.clone()]);
        }
        lease
    }
}
