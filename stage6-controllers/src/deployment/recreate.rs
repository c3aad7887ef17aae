//! The Recreate strategy: mirrors kubernetes'
//! [`pkg/controller/deployment/recreate.go`] (`rolloutRecreate`,
//! `scaleDownOldReplicaSetsForRecreate`, `oldPodsRunning`,
//! `scaleUpNewReplicaSetForRecreate`).
//!
//! Every old pod goes before any new one starts: old ReplicaSets are scaled to
//! 0; while any of their pods is still there (or a ReplicaSet still counts
//! one) the controller only reports status, and the deletion of the last pod
//! wakes it (`deletePod`); then the new ReplicaSet is created, or found, and
//! scaled to `replicas` at once.
//!
//! [`pkg/controller/deployment/recreate.go`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/deployment/recreate.go

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::deployment::deployment_controller::{
    DeploymentController, DeploymentError, PodMap,
};
use crate::deployment::sync::{Resize, all_replica_sets};
use crate::deployment::util::deployment_util::{
    deployment_complete, deployment_replicas, deployment_status,
    filter_active_replica_sets, get_actual_replica_count_for_replica_sets,
    rs_replicas,
};

impl DeploymentController {
    // ANCHOR: rollout_recreate
    /// Mirrors `rolloutRecreate`.
    pub(super) async fn rollout_recreate(
        &self,
        d: &mut Deployment,
        rs_list: &[Arc<ReplicaSet>],
        pod_map: &PodMap,
    ) -> Result<(), DeploymentError> {
        // The new ReplicaSet is not created yet: nothing scales up before
        // the old pods are gone.
        let (mut new_rs, mut old_rss) = self
            .get_all_replica_sets_and_sync_revision(d, rs_list, false)
            .await?;
        let mut all_rss = all_replica_sets(&old_rss, new_rs.as_ref());
        let active_old_rss = filter_active_replica_sets(&old_rss);

        // Scale the old ReplicaSets down.
        let scaled_down = self
            .apply_resizes(
                d,
                scale_down_old_replica_sets_for_recreate(&active_old_rss),
            )
            .await?;
        if scaled_down > 0 {
            return self.sync_rollout_status(&all_rss, new_rs.as_ref(), d).await;
        }

        // Wait for every old pod to be gone.
        if old_pods_running(new_rs.as_ref(), &old_rss, pod_map) {
            return self.sync_rollout_status(&all_rss, new_rs.as_ref(), d).await;
        }

        // Create the new ReplicaSet now, if needed.
        if new_rs.is_none() {
            (new_rs, old_rss) = self
                .get_all_replica_sets_and_sync_revision(d, rs_list, true)
                .await?;
            all_rss = all_replica_sets(&old_rss, new_rs.as_ref());
        }

        // Scale the new ReplicaSet up.
        if let Some(new_rs) = &new_rs {
            self.apply_resizes(
                d,
                vec![scale_up_new_replica_set_for_recreate(new_rs, d)],
            )
            .await?;
        }

        if deployment_complete(d, &deployment_status(d)) {
            self.cleanup_deployment(&old_rss, d).await?;
        }

        self.sync_rollout_status(&all_rss, new_rs.as_ref(), d).await
    }
    // ANCHOR_END: rollout_recreate
}

/// Mirrors `scaleDownOldReplicaSetsForRecreate`: every old ReplicaSet with
/// replicas to 0.
pub fn scale_down_old_replica_sets_for_recreate(
    old_rss: &[Arc<ReplicaSet>],
) -> Vec<Resize> {
    old_rss
        .iter()
        .filter(|rs| rs_replicas(rs) != 0)
        .map(|rs| Resize::AndRecordEvent {
            rs: Arc::clone(rs),
            new_scale: 0,
        })
        .collect()
}

/// Mirrors `oldPodsRunning`: whether an old ReplicaSet still counts pods, or
/// a pod of one is not finished (`Failed` and `Succeeded` pods are; a pod in
/// the deprecated `Unknown` phase may still run, so it counts).
pub fn old_pods_running(
    new_rs: Option<&Arc<ReplicaSet>>,
    old_rss: &[Arc<ReplicaSet>],
    pod_map: &PodMap,
) -> bool {
    if get_actual_replica_count_for_replica_sets(old_rss) > 0 {
        return true;
    }
    pod_map.iter().any(|(rs_uid, pods)| {
        if new_rs.is_some_and(|n| n.metadata.uid.as_ref() == Some(rs_uid)) {
            // The new ReplicaSet's pods do not count.
            return false;
        }
        pods.iter().any(|pod| {
            !matches!(
                pod.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Failed" | "Succeeded")
            )
        })
    })
}

/// Mirrors `scaleUpNewReplicaSetForRecreate`: the new ReplicaSet to
/// `replicas`.
pub fn scale_up_new_replica_set_for_recreate(
    new_rs: &Arc<ReplicaSet>,
    d: &Deployment,
) -> Resize {
    Resize::AndRecordEvent {
        rs: Arc::clone(new_rs),
        new_scale: deployment_replicas(d),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::sync::tests::rs;
    use k8s_openapi::api::apps::v1::ReplicaSetStatus;
    use k8s_openapi::api::core::v1::{Pod, PodStatus};

    fn pod(phase: &str) -> Arc<Pod> {
        Arc::new(Pod {
            status: Some(PodStatus {
                phase: Some(phase.into()),
                ..PodStatus::default()
            }),
            ..Pod::default()
        })
    }

    fn with_status_replicas(name: &str, spec: i32, status: i32) -> Arc<ReplicaSet> {
        let mut rs = rs(name, spec, &[], 0);
        rs.status = Some(ReplicaSetStatus {
            replicas: status,
            ..ReplicaSetStatus::default()
        });
        Arc::new(rs)
    }

    /// recreate_test.go's `TestOldPodsRunning`.
    #[test]
    fn test_old_pods_running() {
        let map = |entries: &[(&str, &[&str])]| -> PodMap {
            entries
                .iter()
                .map(|(uid, phases)| {
                    (uid.to_string(), phases.iter().map(|p| pod(p)).collect())
                })
                .collect()
        };
        let rs1 = || vec![with_status_replicas("rs-1", 0, 0)];
        /// (name, new RS, old RSs, pods, old pods running)
        type Case = (
            &'static str,
            Option<Arc<ReplicaSet>>,
            Vec<Arc<ReplicaSet>>,
            PodMap,
            bool,
        );
        let cases: Vec<Case> = vec![
            ("no old RSs", None, vec![], PodMap::new(), false),
            (
                "old RSs with running pods",
                None,
                vec![
                    with_status_replicas("some", 0, 0),
                    with_status_replicas("other", 0, 0),
                ],
                map(&[("uid-some", &["Running"]), ("uid-other", &["Running"])]),
                true,
            ),
            (
                "old RSs without pods but with non-zero status replicas",
                None,
                vec![with_status_replicas("rs-1", 0, 1)],
                PodMap::new(),
                true,
            ),
            (
                "old RSs without pods or non-zero status replicas",
                None,
                rs1(),
                PodMap::new(),
                false,
            ),
            (
                "old RSs with zero status replicas but pods in terminal state are present",
                None,
                rs1(),
                map(&[("uid-rs-1", &["Failed", "Succeeded"])]),
                false,
            ),
            (
                "old RSs with zero status replicas but pod in unknown phase present",
                None,
                rs1(),
                map(&[("uid-rs-1", &["Unknown"])]),
                true,
            ),
            (
                "old RSs with zero status replicas with pending pod present",
                None,
                rs1(),
                map(&[("uid-rs-1", &["Pending"])]),
                true,
            ),
            (
                "old RSs with zero status replicas with running pod present",
                None,
                rs1(),
                map(&[("uid-rs-1", &["Running"])]),
                true,
            ),
            (
                "old RSs with zero status replicas but pods in terminal state and pending are present",
                None,
                rs1(),
                map(&[("uid-rs-1", &["Failed", "Succeeded", "Pending"])]),
                true,
            ),
            (
                "the new RS's running pods do not count",
                Some(with_status_replicas("new", 1, 1)),
                rs1(),
                map(&[("uid-new", &["Running"]), ("uid-rs-1", &[])]),
                false,
            ),
        ];
        for (name, new_rs, old_rss, pod_map, expected) in cases {
            assert_eq!(
                old_pods_running(new_rs.as_ref(), &old_rss, &pod_map),
                expected,
                "{name}"
            );
        }
    }

    /// recreate_test.go's `TestScaleDownOldReplicaSets`: every active old
    /// ReplicaSet goes to 0, an empty one is left alone.
    #[test]
    fn test_scale_down_old_replica_sets() {
        let old = vec![
            with_status_replicas("a", 3, 3),
            with_status_replicas("b", 0, 0),
            with_status_replicas("c", 1, 1),
        ];
        let resizes = scale_down_old_replica_sets_for_recreate(&old);
        let got: Vec<(String, i32)> = resizes
            .iter()
            .map(|r| {
                (
                    r.rs().metadata.name.clone().unwrap_or_default(),
                    r.new_scale(),
                )
            })
            .collect();
        assert_eq!(got, [("a".to_string(), 0), ("c".to_string(), 0)]);
    }
}
