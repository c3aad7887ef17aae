//! The rolling update: mirrors kubernetes'
//! [`pkg/controller/deployment/rolling.go`] (`rolloutRolling`,
//! `reconcileNewReplicaSet`, `reconcileOldReplicaSets`,
//! `cleanupUnhealthyReplicas`, `scaleDownOldReplicaSetsForRollingUpdate`).
//!
//! Each sync takes one step, and the next event takes the next:
//!
//! ```text
//!  replicas 4, maxSurge 1, maxUnavailable 1: at most 5 pods, at least 3 available
//!
//!  new RS  0 ─► 1 ──────────► 2 ──────────► 3 ──────────► 4
//!  old RS  4 ─► 3 (1 new is   ─► 2 (a new   ─► 1 ...       ─► 0
//!                 unavailable,     one became
//!                 3 still          available)
//!                 available)
//! ```
//!
//! * scale the new ReplicaSet up while all ReplicaSets together stay within
//!   `replicas + maxSurge` (`reconcileNewReplicaSet`, `NewRSNewReplicas`);
//! * else scale old ReplicaSets down: first their unhealthy (unavailable)
//!   replicas, then available ones while `replicas - maxUnavailable` stay
//!   available, counting the new ReplicaSet's unavailable pods against the
//!   budget (`reconcileOldReplicaSets`);
//! * once complete, delete old ReplicaSets beyond `revisionHistoryLimit`;
//! * always end with the status (`syncRolloutStatus`).
//!
//! The decisions are pure functions returning [`Resize`]s, written by the
//! controller in order.
//!
//! [`pkg/controller/deployment/rolling.go`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/deployment/rolling.go

use std::sync::Arc;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};

use crate::controller_utils::key_of;
use crate::deployment::deployment_controller::{
    DeploymentController, DeploymentError,
};
use crate::deployment::sync::{Resize, all_replica_sets};
use crate::deployment::util::deployment_util::{
    deployment_complete, deployment_replicas, deployment_status,
    filter_active_replica_sets, get_available_replica_count_for_replica_sets,
    get_replica_count_for_replica_sets, max_unavailable, new_rs_new_replicas,
    replica_sets_by_creation_timestamp, rs_available_replicas, rs_replicas,
};

impl DeploymentController {
    // ANCHOR: rollout_rolling
    /// Mirrors `rolloutRolling`: one step of a rolling update, then the
    /// status.
    pub(super) async fn rollout_rolling(
        &self,
        d: &mut Deployment,
        rs_list: &[Arc<ReplicaSet>],
    ) -> Result<(), DeploymentError> {
        let (new_rs, old_rss) = self
            .get_all_replica_sets_and_sync_revision(d, rs_list, true)
            .await?;
        let new_rs = new_rs
            .ok_or_else(|| DeploymentError::NoNewReplicaSet(key_of(&d.metadata)))?;
        let all_rss = all_replica_sets(&old_rss, Some(&new_rs));

        // Scale up, if we can.
        if let Some(resize) = reconcile_new_replica_set(&all_rss, &new_rs, d)? {
            self.apply_resizes(d, vec![resize]).await?;
            return self.sync_rollout_status(&all_rss, Some(&new_rs), d).await;
        }

        // Scale down, if we can. Upstream reports a failed scale-down as "not
        // scaled" and goes on to the status.
        let resizes = reconcile_old_replica_sets(
            &all_rss,
            &filter_active_replica_sets(&old_rss),
            &new_rs,
            d,
        );
        let scaled_down = match self.apply_resizes(d, resizes).await {
            Ok(scaled) => scaled > 0,
            Err(error) => {
                tracing::debug!(deployment = %key_of(&d.metadata), %error, "scaling down old replica sets failed");
                false
            }
        };
        if scaled_down {
            return self.sync_rollout_status(&all_rss, Some(&new_rs), d).await;
        }

        if deployment_complete(d, &deployment_status(d)) {
            self.cleanup_deployment(&old_rss, d).await?;
        }

        self.sync_rollout_status(&all_rss, Some(&new_rs), d).await
    }
    // ANCHOR_END: rollout_rolling
}

// ANCHOR: reconcile_new_replica_set
/// Mirrors `reconcileNewReplicaSet`: the new ReplicaSet's resize, if any:
/// down to `replicas` when above, else up by what `NewRSNewReplicas` allows.
pub fn reconcile_new_replica_set(
    all_rss: &[Arc<ReplicaSet>],
    new_rs: &Arc<ReplicaSet>,
    deployment: &Deployment,
) -> Result<Option<Resize>, DeploymentError> {
    let replicas = deployment_replicas(deployment);
    let current = rs_replicas(new_rs);
    let new_scale = match current.cmp(&replicas) {
        std::cmp::Ordering::Equal => return Ok(None),
        std::cmp::Ordering::Greater => replicas,
        std::cmp::Ordering::Less => {
            new_rs_new_replicas(deployment, all_rss, new_rs)?
        }
    };
    Ok((new_scale != current).then(|| Resize::AndRecordEvent {
        rs: Arc::clone(new_rs),
        new_scale,
    }))
}
// ANCHOR_END: reconcile_new_replica_set

// ANCHOR: reconcile_old_replica_sets
/// Mirrors `reconcileOldReplicaSets`: the old ReplicaSets' resizes, if any.
///
/// At most `maxScaledDown = allPods - minAvailable - newRSUnavailable` pods
/// go. Counting the new ReplicaSet's unavailable pods keeps a crash-looping
/// new template from eating the availability budget; and, after a rollback
/// to a good template, lets the bad pods be scaled down. Unhealthy old
/// replicas go first (removing them costs no availability), then available
/// ones within `maxUnavailable`. A resize the guards refuse ends the step
/// with what was decided before, as upstream's "not scaled".
pub fn reconcile_old_replica_sets(
    all_rss: &[Arc<ReplicaSet>],
    old_rss: &[Arc<ReplicaSet>],
    new_rs: &Arc<ReplicaSet>,
    deployment: &Deployment,
) -> Vec<Resize> {
    if get_replica_count_for_replica_sets(old_rss) == 0 {
        // Nothing left to scale down.
        return Vec::new();
    }
    let all_pods_count = get_replica_count_for_replica_sets(all_rss);
    tracing::debug!(replica_set = %key_of(&new_rs.metadata), available = rs_available_replicas(new_rs), "new replica set");
    let min_available =
        deployment_replicas(deployment) - max_unavailable(deployment);
    let new_rs_unavailable_pod_count =
        rs_replicas(new_rs) - rs_available_replicas(new_rs);
    let max_scaled_down =
        all_pods_count - min_available - new_rs_unavailable_pod_count;
    if max_scaled_down <= 0 {
        return Vec::new();
    }
    // Unhealthy replicas first, or they would block the rollout until its
    // deadline (kubernetes#16737).
    let mut old_rss = old_rss.to_vec();
    let Ok((mut resizes, cleanup_count)) =
        cleanup_unhealthy_replicas(&mut old_rss, deployment, max_scaled_down)
    else {
        return Vec::new();
    };
    tracing::debug!(
        count = cleanup_count,
        "cleaned up unhealthy replicas from old replica sets"
    );
    // Then available ones, within maxUnavailable.
    let all_rss = all_replica_sets(&old_rss, Some(new_rs));
    match scale_down_old_replica_sets_for_rolling_update(
        &all_rss,
        &mut old_rss,
        deployment,
    ) {
        Ok((scale_down, count)) => {
            tracing::debug!(deployment = %key_of(&deployment.metadata), count, "scaled down old replica sets");
            resizes.extend(scale_down);
        }
        Err(error) => {
            tracing::debug!(%error, "not scaling down old replica sets");
        }
    }
    resizes
}
// ANCHOR_END: reconcile_old_replica_sets

/// Mirrors `cleanupUnhealthyReplicas`: scales the old ReplicaSets down by
/// their unavailable replicas, oldest first, at most `max_cleanup_count` in
/// all (the ReplicaSet controller deletes not-ready, unscheduled and pending
/// pods first, so this costs no availability). `old_rss` is left with the
/// new sizes; the resizes and how many replicas they remove.
pub fn cleanup_unhealthy_replicas(
    old_rss: &mut [Arc<ReplicaSet>],
    deployment: &Deployment,
    max_cleanup_count: i32,
) -> Result<(Vec<Resize>, i32), DeploymentError> {
    old_rss.sort_by(|a, b| replica_sets_by_creation_timestamp(a, b));
    let mut resizes = Vec::new();
    let mut total_scaled_down = 0;
    for target in old_rss.iter_mut() {
        if total_scaled_down >= max_cleanup_count {
            break;
        }
        let replicas = rs_replicas(target);
        if replicas == 0 {
            continue;
        }
        let available = rs_available_replicas(target);
        tracing::debug!(replica_set = %key_of(&target.metadata), deployment = %key_of(&deployment.metadata), available, "found available pods in old replica set");
        if replicas == available {
            // No unhealthy replicas.
            continue;
        }
        let scaled_down_count =
            (max_cleanup_count - total_scaled_down).min(replicas - available);
        let new_replicas_count = replicas - scaled_down_count;
        if new_replicas_count > replicas {
            return Err(DeploymentError::InvalidScaleDown {
                step: "cleaning up unhealthy replicas",
                rs: key_of(&target.metadata),
                from: replicas,
                to: new_replicas_count,
            });
        }
        resizes.push(Resize::AndRecordEvent {
            rs: Arc::clone(target),
            new_scale: new_replicas_count,
        });
        *target = resized(target, new_replicas_count);
        total_scaled_down += scaled_down_count;
    }
    Ok((resizes, total_scaled_down))
}

/// Mirrors `scaleDownOldReplicaSetsForRollingUpdate`: scales old ReplicaSets
/// down, oldest first, by as many available pods as exceed `replicas -
/// maxUnavailable`. `old_rss` is left with the new sizes; the resizes and how
/// many replicas they remove.
pub fn scale_down_old_replica_sets_for_rolling_update(
    all_rss: &[Arc<ReplicaSet>],
    old_rss: &mut [Arc<ReplicaSet>],
    deployment: &Deployment,
) -> Result<(Vec<Resize>, i32), DeploymentError> {
    let min_available =
        deployment_replicas(deployment) - max_unavailable(deployment);
    let available_pod_count = get_available_replica_count_for_replica_sets(all_rss);
    if available_pod_count <= min_available {
        // Cannot scale down.
        return Ok((Vec::new(), 0));
    }
    tracing::debug!(deployment = %key_of(&deployment.metadata), available = available_pod_count, "found available pods, scaling down old replica sets");
    old_rss.sort_by(|a, b| replica_sets_by_creation_timestamp(a, b));
    let total_scale_down_count = available_pod_count - min_available;
    let mut total_scaled_down = 0;
    let mut resizes = Vec::new();
    for target in old_rss.iter_mut() {
        if total_scaled_down >= total_scale_down_count {
            break;
        }
        let replicas = rs_replicas(target);
        if replicas == 0 {
            continue;
        }
        let scale_down_count =
            replicas.min(total_scale_down_count - total_scaled_down);
        let new_replicas_count = replicas - scale_down_count;
        if new_replicas_count > replicas {
            return Err(DeploymentError::InvalidScaleDown {
                step: "scaling down old RS",
                rs: key_of(&target.metadata),
                from: replicas,
                to: new_replicas_count,
            });
        }
        resizes.push(Resize::AndRecordEvent {
            rs: Arc::clone(target),
            new_scale: new_replicas_count,
        });
        *target = resized(target, new_replicas_count);
        total_scaled_down += scale_down_count;
    }
    Ok((resizes, total_scaled_down))
}

/// The ReplicaSet as it is after a resize is written.
fn resized(rs: &Arc<ReplicaSet>, replicas: i32) -> Arc<ReplicaSet> {
    let mut copy = (**rs).clone();
    copy.spec.replicas = Some(replicas);
    Arc::new(copy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::sync::tests::{new_deployment, rs};
    use k8s_openapi::api::apps::v1::ReplicaSetStatus;
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

    fn available(mut rs: ReplicaSet, available: i32) -> Arc<ReplicaSet> {
        rs.status = Some(ReplicaSetStatus {
            available_replicas: Some(available),
            ..ReplicaSetStatus::default()
        });
        Arc::new(rs)
    }

    /// rolling_test.go's `TestDeploymentController_reconcileNewReplicaSet`.
    #[test]
    fn test_deployment_controller_reconcile_new_replica_set() {
        // (deploymentReplicas, maxSurge, oldReplicas, newReplicas, expected new size)
        let cases = [
            // Should not scale up.
            (10, 0, 10, 0, None),
            (10, 2, 10, 0, Some(2)),
            (10, 2, 5, 0, Some(7)),
            (10, 2, 10, 2, None),
            // Should scale down.
            (10, 2, 2, 11, Some(10)),
        ];
        for (i, (replicas, surge, old, new, expected)) in
            cases.into_iter().enumerate()
        {
            let new_rs = Arc::new(rs("foo-v2", new, &[], 0));
            let old_rs = Arc::new(rs("foo-v2", old, &[], 0));
            let all = vec![Arc::clone(&new_rs), old_rs];
            let d = new_deployment(
                "foo",
                replicas,
                None,
                Some(IntOrString::Int(surge)),
                Some(IntOrString::Int(0)),
                &[("foo", "bar")],
            );
            let got = reconcile_new_replica_set(&all, &new_rs, &d)
                .expect("no error")
                .map(|r| r.new_scale());
            assert_eq!(got, expected, "scenario {i}");
        }
    }

    /// rolling_test.go's `TestDeploymentController_reconcileOldReplicaSets`.
    #[test]
    fn test_deployment_controller_reconcile_old_replica_sets() {
        // (deploymentReplicas, maxUnavailable, oldReplicas, newReplicas,
        //  readyPodsFromOldRS, readyPodsFromNewRS, scaleExpected, expectedOldReplicas)
        let cases = [
            (10, 0, 10, 0, 10, 0, true, 9),
            (10, 2, 10, 0, 10, 0, true, 8),
            // Unhealthy replicas from old replica sets are cleaned up.
            (10, 2, 10, 0, 8, 0, true, 8),
            // One unhealthy replica cleaned up, one ready pod scaled down.
            (10, 2, 10, 0, 9, 0, true, 8),
            // The new RS's unavailable pods do not let old ones go further.
            (10, 2, 8, 2, 8, 0, false, 8),
        ];
        for (
            i,
            (
                replicas,
                unavailable,
                old,
                new,
                ready_old,
                ready_new,
                scale_expected,
                expected_old,
            ),
        ) in cases.into_iter().enumerate()
        {
            let new_rs =
                available(rs("foo-new", new, &[("foo", "new")], 0), ready_new);
            let old_rs =
                available(rs("foo-old", old, &[("foo", "old")], 0), ready_old);
            let all = vec![Arc::clone(&old_rs), Arc::clone(&new_rs)];
            let d = new_deployment(
                "foo",
                replicas,
                None,
                Some(IntOrString::Int(0)),
                Some(IntOrString::Int(unavailable)),
                &[("foo", "new")],
            );
            let resizes = reconcile_old_replica_sets(&all, &[old_rs], &new_rs, &d);
            assert_eq!(!resizes.is_empty(), scale_expected, "scenario {i}");
            let final_size = resizes.last().map_or(old, Resize::new_scale);
            assert_eq!(final_size, expected_old, "scenario {i}");
        }
    }

    /// rolling_test.go's `TestDeploymentController_cleanupUnhealthyReplicas`.
    #[test]
    fn test_deployment_controller_cleanup_unhealthy_replicas() {
        // (oldReplicas, readyPods, maxCleanupCount, cleanupCountExpected)
        let cases = [(10, 8, 1, 1), (10, 8, 3, 2), (10, 8, 0, 0), (10, 10, 3, 0)];
        for (i, (old, ready, max_cleanup, expected)) in cases.into_iter().enumerate()
        {
            let mut old_rss = vec![available(rs("foo-v2", old, &[], 0), ready)];
            let d = new_deployment(
                "foo",
                10,
                None,
                Some(IntOrString::Int(2)),
                Some(IntOrString::Int(2)),
                &[],
            );
            let (resizes, count) =
                cleanup_unhealthy_replicas(&mut old_rss, &d, max_cleanup)
                    .expect("no error");
            assert_eq!(count, expected, "scenario {i}");
            assert_eq!(rs_replicas(&old_rss[0]), old - expected, "scenario {i}");
            assert_eq!(resizes.len(), usize::from(expected > 0), "scenario {i}");
        }
    }

    /// rolling_test.go's
    /// `TestDeploymentController_scaleDownOldReplicaSetsForRollingUpdate`.
    #[test]
    fn test_deployment_controller_scale_down_old_replica_sets_for_rolling_update() {
        // (deploymentReplicas, maxUnavailable, readyPods, oldReplicas,
        //  scaleExpected, expectedOldReplicas)
        let cases = [
            (10, 0, 10, 10, true, 9),
            (10, 2, 10, 10, true, 8),
            (10, 2, 8, 10, false, 10),
            (10, 2, 10, 0, false, 0),
            (10, 2, 1, 10, false, 10),
        ];
        for (i, (replicas, unavailable, ready, old, scale_expected, expected_old)) in
            cases.into_iter().enumerate()
        {
            let old_rs = available(rs("foo-v2", old, &[], 0), ready);
            let all = vec![Arc::clone(&old_rs)];
            let mut old_rss = vec![old_rs];
            let d = new_deployment(
                "foo",
                replicas,
                None,
                Some(IntOrString::Int(0)),
                Some(IntOrString::Int(unavailable)),
                &[("foo", "bar")],
            );
            let (resizes, scaled) = scale_down_old_replica_sets_for_rolling_update(
                &all,
                &mut old_rss,
                &d,
            )
            .expect("no error");
            assert_eq!(scaled != 0, scale_expected, "scenario {i}");
            if scale_expected {
                assert_eq!(resizes.len(), 1, "scenario {i}: one update");
                assert_eq!(resizes[0].new_scale(), expected_old, "scenario {i}");
            }
            assert_eq!(rs_replicas(&old_rss[0]), expected_old, "scenario {i}");
        }
    }

    /// A ReplicaSet both cleaned up and scaled down appears twice, in that
    /// order, the second from the first's size.
    #[test]
    fn cleanup_then_scale_down_resize_the_same_replica_set_in_order() {
        let new_rs = available(rs("foo-new", 0, &[], 1), 0);
        let old_rs = available(rs("foo-old", 10, &[], 0), 9);
        let all = vec![Arc::clone(&old_rs), Arc::clone(&new_rs)];
        let d = new_deployment(
            "foo",
            10,
            None,
            Some(IntOrString::Int(0)),
            Some(IntOrString::Int(2)),
            &[],
        );
        let sizes: Vec<i32> =
            reconcile_old_replica_sets(&all, &[old_rs], &new_rs, &d)
                .iter()
                .map(Resize::new_scale)
                .collect();
        assert_eq!(sizes, [9, 8]);
    }
}
