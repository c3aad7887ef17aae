//! The rollout's progress: mirrors kubernetes'
//! [`pkg/controller/deployment/progress.go`] (`syncRolloutStatus`,
//! `getReplicaFailures`, `requeueStuckDeployment`).
//!
//! With a `progressDeadlineSeconds`, the `Progressing` condition says how the
//! rollout goes:
//!
//! | reason | status | when |
//! |---|---|---|
//! | `NewReplicaSetCreated` | True | the controller created the new ReplicaSet |
//! | `FoundNewReplicaSet` | True | it found one, with no condition yet |
//! | `ReplicaSetUpdated` | True | pods were updated, became ready or available, or old ones went (its `lastUpdateTime` moves) |
//! | `NewReplicaSetAvailable` | True | complete: every replica updated and available, no old pod |
//! | `ProgressDeadlineExceeded` | False | no progress for `progressDeadlineSeconds` |
//!
//! `kubectl rollout status` waits for the complete one and fails on the
//! deadline. A stuck Deployment is looked at again when its deadline passes
//! (`requeueStuckDeployment`), not at the next resync.
//!
//! [`pkg/controller/deployment/progress.go`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/deployment/progress.go

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet,
};
use k8s_openapi::jiff::{SignedDuration, Timestamp};

use crate::controller_utils::key_of;
use crate::deployment::deployment_controller::{
    DeploymentController, DeploymentError,
};
use crate::deployment::sync::calculate_status;
use crate::deployment::util::deployment_util::{
    ConditionStatus, DeploymentConditionType, NEW_RS_AVAILABLE_REASON,
    REPLICA_SET_UPDATED_REASON, TIMED_OUT_REASON, deployment_complete,
    deployment_progressing, deployment_timed_out, get_deployment_condition,
    has_progress_deadline, new_deployment_condition, remove_deployment_condition,
    replica_set_to_deployment_condition, set_deployment_condition,
};

impl DeploymentController {
    // ANCHOR: sync_rollout_status
    /// Mirrors `syncRolloutStatus`: writes [`rollout_status`] if it differs
    /// from the Deployment's; when nothing changed, a rollout that made no
    /// progress is looked at again at its deadline
    /// (`requeueStuckDeployment`).
    pub(super) async fn sync_rollout_status(
        &self,
        all_rss: &[Arc<ReplicaSet>],
        new_rs: Option<&Arc<ReplicaSet>>,
        d: &mut Deployment,
    ) -> Result<(), DeploymentError> {
        let new_status = rollout_status(all_rss, new_rs, d, Timestamp::now());
        if d.status.as_ref() == Some(&new_status) {
            self.requeue_stuck_deployment(d, &new_status);
            return Ok(());
        }
        d.status = Some(new_status);
        self.update_status(d).await
    }
    // ANCHOR_END: sync_rollout_status

    /// Mirrors `requeueStuckDeployment`: enqueues the Deployment for a
    /// progress check at its deadline (plus a second against clock skew), or
    /// now, rate-limited, when that has passed.
    fn requeue_stuck_deployment(
        &self,
        d: &Deployment,
        new_status: &DeploymentStatus,
    ) {
        match stuck_deployment_requeue(d, new_status, Timestamp::now()) {
            Requeue::Never => {}
            Requeue::Now => {
                tracing::debug!(deployment = %key_of(&d.metadata), "queueing up deployment for a progress check now");
                self.enqueue_rate_limited(d);
            }
            Requeue::After(after) => {
                tracing::debug!(deployment = %key_of(&d.metadata), after_secs = after.as_secs(), "queueing up deployment for a progress check");
                self.enqueue_after(d, after + Duration::from_secs(1));
            }
        }
    }
}

// ANCHOR: rollout_status
/// The status `syncRolloutStatus` writes: [`calculate_status`], with the
/// `Progressing` condition (removed without a deadline; left alone once the
/// latest rollout completed) and the ReplicaSets' `ReplicaFailure`.
pub fn rollout_status(
    all_rss: &[Arc<ReplicaSet>],
    new_rs: Option<&Arc<ReplicaSet>>,
    d: &Deployment,
    now: Timestamp,
) -> DeploymentStatus {
    let mut new_status = calculate_status(all_rss, new_rs, d, now);
    if !has_progress_deadline(d) {
        remove_deployment_condition(
            &mut new_status,
            DeploymentConditionType::Progressing,
        );
    }
    // With one active ReplicaSet and a complete rollout, this is a resync:
    // no progress to estimate.
    let current = d.status.clone().unwrap_or_default();
    let current_cond =
        get_deployment_condition(&current, DeploymentConditionType::Progressing);
    let is_complete_deployment = new_status.replicas == new_status.updated_replicas
        && current_cond
            .is_some_and(|c| c.reason.as_deref() == Some(NEW_RS_AVAILABLE_REASON));
    let name = |d: &Deployment| d.metadata.name.clone().unwrap_or_default();
    let subject = |what: &str| match new_rs {
        Some(rs) => format!(
            "ReplicaSet {:?} {what}",
            rs.metadata.name.as_deref().unwrap_or_default()
        ),
        None => format!("Deployment {:?} {what}", name(d)),
    };
    if has_progress_deadline(d) && !is_complete_deployment {
        if deployment_complete(d, &new_status) {
            // Done; an existing condition of this reason stays as it is.
            set_deployment_condition(
                &mut new_status,
                new_deployment_condition(
                    DeploymentConditionType::Progressing,
                    ConditionStatus::True,
                    NEW_RS_AVAILABLE_REASON,
                    &subject("has successfully progressed."),
                    now,
                ),
            );
        } else if deployment_progressing(d, &new_status) {
            // Progress: the same reason again, with a new lastUpdateTime
            // (which SetDeploymentCondition would not write), and the
            // transition time kept while it stays True.
            let mut condition = new_deployment_condition(
                DeploymentConditionType::Progressing,
                ConditionStatus::True,
                REPLICA_SET_UPDATED_REASON,
                &subject("is progressing."),
                now,
            );
            if let Some(current_cond) = current_cond {
                if current_cond.status.as_deref()
                    == Some(ConditionStatus::True.as_str())
                {
                    condition
                        .last_transition_time
                        .clone_from(&current_cond.last_transition_time);
                }
                remove_deployment_condition(
                    &mut new_status,
                    DeploymentConditionType::Progressing,
                );
            }
            set_deployment_condition(&mut new_status, condition);
        } else if deployment_timed_out(d, &new_status, now) {
            // Out of time; an existing timeout stays as it is.
            set_deployment_condition(
                &mut new_status,
                new_deployment_condition(
                    DeploymentConditionType::Progressing,
                    ConditionStatus::False,
                    TIMED_OUT_REASON,
                    &subject("has timed out progressing."),
                    now,
                ),
            );
        }
    }
    // The ReplicaSets' failures (at most one is reported).
    match get_replica_failures(all_rss, new_rs).into_iter().next() {
        Some(failure) => set_deployment_condition(&mut new_status, failure),
        None => remove_deployment_condition(
            &mut new_status,
            DeploymentConditionType::ReplicaFailure,
        ),
    }
    new_status
}
// ANCHOR_END: rollout_status

/// Mirrors `getReplicaFailures`: the new ReplicaSet's `ReplicaFailure`
/// conditions, else the old ones', as Deployment conditions.
pub fn get_replica_failures(
    all_rss: &[Arc<ReplicaSet>],
    new_rs: Option<&Arc<ReplicaSet>>,
) -> Vec<DeploymentCondition> {
    let failures = |rs: &ReplicaSet| -> Vec<DeploymentCondition> {
        rs.status
            .as_ref()
            .and_then(|s| s.conditions.as_deref())
            .unwrap_or_default()
            .iter()
            .filter(|c| {
                c.type_.as_deref()
                    == Some(DeploymentConditionType::ReplicaFailure.as_str())
            })
            .map(replica_set_to_deployment_condition)
            .collect()
    };
    if let Some(new_rs) = new_rs {
        let conditions = failures(new_rs);
        if !conditions.is_empty() {
            return conditions;
        }
    }
    all_rss.iter().flat_map(|rs| failures(rs)).collect()
}

/// When `requeueStuckDeployment` looks at a Deployment again.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Requeue {
    /// No deadline, no Progressing condition, complete, or already timed out
    /// (upstream's `-1`).
    Never,
    /// The deadline has passed, or is less than a second away: now,
    /// rate-limited (upstream's `0`).
    Now,
    /// After this long, when the deadline passes.
    After(Duration),
}

/// The decision of `requeueStuckDeployment`, as of `now`: the Progressing
/// condition's `lastUpdateTime + progressDeadlineSeconds - now`.
pub fn stuck_deployment_requeue(
    d: &Deployment,
    new_status: &DeploymentStatus,
    now: Timestamp,
) -> Requeue {
    let current = d.status.clone().unwrap_or_default();
    let Some(current_cond) =
        get_deployment_condition(&current, DeploymentConditionType::Progressing)
    else {
        return Requeue::Never;
    };
    if !has_progress_deadline(d) {
        return Requeue::Never;
    }
    if deployment_complete(d, new_status)
        || current_cond.reason.as_deref() == Some(TIMED_OUT_REASON)
    {
        return Requeue::Never;
    }
    // No sign of progress: probably stuck. Look again at the deadline
    // (kubernetes#34458), not at the informer's resync.
    let last_update = current_cond
        .last_update_time
        .as_ref()
        .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
    let deadline = SignedDuration::from_secs(i64::from(
        d.spec.progress_deadline_seconds.unwrap_or(0),
    ));
    let after = last_update
        .checked_add(deadline)
        .map_or(SignedDuration::ZERO, |until| until.duration_since(now));
    if after < SignedDuration::from_secs(1) {
        return Requeue::Now;
    }
    Duration::try_from(after).map_or(Requeue::Now, Requeue::After)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::deployment::sync::tests::rs;
    use k8s_openapi::api::apps::v1::{
        DeploymentSpec, DeploymentStrategy, ReplicaSetStatus,
    };
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};

    /// progress_test.go's `currentDeployment`: a Recreate Deployment, its
    /// status observed.
    fn current_deployment(
        pds: Option<i32>,
        replicas: i32,
        status_replicas: i32,
        updated_replicas: i32,
        available_replicas: i32,
        conditions: Vec<DeploymentCondition>,
    ) -> Deployment {
        Deployment {
            metadata: ObjectMeta {
                name: Some("progress-test".into()),
                ..ObjectMeta::default()
            },
            spec: DeploymentSpec {
                progress_deadline_seconds: pds,
                replicas: Some(replicas),
                strategy: Some(DeploymentStrategy {
                    type_: Some("Recreate".into()),
                    rolling_update: None,
                }),
                ..DeploymentSpec::default()
            },
            status: Some(DeploymentStatus {
                replicas: Some(status_replicas),
                updated_replicas: Some(updated_replicas),
                available_replicas: Some(available_replicas),
                conditions: Some(conditions),
                ..DeploymentStatus::default()
            }),
        }
    }

    fn new_deployment_status(
        replicas: i32,
        updated: i32,
        available: i32,
    ) -> DeploymentStatus {
        DeploymentStatus {
            replicas: Some(replicas),
            updated_replicas: Some(updated),
            available_replicas: Some(available),
            ..DeploymentStatus::default()
        }
    }

    /// progress_test.go's `newRSWithAvailable`.
    fn new_rs_with_available(
        name: &str,
        spec: i32,
        status: i32,
        available: i32,
    ) -> Arc<ReplicaSet> {
        let mut rs = rs(name, spec, &[], 0);
        rs.status = Some(ReplicaSetStatus {
            replicas: status,
            available_replicas: Some(available),
            ..ReplicaSetStatus::default()
        });
        Arc::new(rs)
    }

    /// 2017-02-15T18:49:00Z plus seconds (and nanoseconds).
    fn test_time(seconds: i64, nanos: i32) -> Timestamp {
        Timestamp::new(1_487_184_540 + seconds, nanos).expect("a time")
    }

    fn progressing(
        status: ConditionStatus,
        reason: &str,
        at: Option<Timestamp>,
    ) -> DeploymentCondition {
        DeploymentCondition {
            type_: Some("Progressing".into()),
            status: Some(status.as_str().into()),
            reason: Some(reason.into()),
            last_update_time: at.map(Time),
            last_transition_time: at.map(Time),
            message: None,
        }
    }

    /// progress_test.go's `TestRequeueStuckDeployment`.
    #[test]
    fn test_requeue_stuck_deployment() {
        let failed =
            vec![progressing(ConditionStatus::False, TIMED_OUT_REASON, None)];
        let stuck = vec![DeploymentCondition {
            reason: None,
            last_transition_time: None,
            ..progressing(ConditionStatus::True, "", Some(test_time(0, 0)))
        }];
        let cases = [
            (
                "nil progressDeadlineSeconds specified",
                current_deployment(None, 4, 3, 3, 2, vec![]),
                new_deployment_status(3, 3, 2),
                test_time(0, 0),
                Requeue::Never,
            ),
            (
                "infinite progressDeadlineSeconds specified",
                current_deployment(Some(i32::MAX), 4, 3, 3, 2, vec![]),
                new_deployment_status(3, 3, 2),
                test_time(0, 0),
                Requeue::Never,
            ),
            (
                "no progressing condition found",
                current_deployment(Some(60), 4, 3, 3, 2, vec![]),
                new_deployment_status(3, 3, 2),
                test_time(0, 0),
                Requeue::Never,
            ),
            (
                "complete deployment does not need to be requeued",
                current_deployment(Some(60), 3, 3, 3, 3, vec![]),
                new_deployment_status(3, 3, 3),
                test_time(0, 0),
                Requeue::Never,
            ),
            (
                "already failed deployment does not need to be requeued",
                current_deployment(Some(60), 3, 3, 3, 0, failed),
                new_deployment_status(3, 3, 0),
                test_time(0, 0),
                Requeue::Never,
            ),
            (
                "stuck deployment - 30s",
                current_deployment(Some(60), 3, 3, 3, 1, stuck.clone()),
                new_deployment_status(3, 3, 1),
                test_time(30, 0),
                Requeue::After(Duration::from_secs(30)),
            ),
            (
                "stuck deployment - 1s",
                current_deployment(Some(60), 3, 3, 3, 1, stuck.clone()),
                new_deployment_status(3, 3, 1),
                test_time(59, 0),
                Requeue::After(Duration::from_secs(1)),
            ),
            (
                "failed deployment - less than a second => now",
                current_deployment(Some(60), 3, 3, 3, 1, stuck.clone()),
                new_deployment_status(3, 3, 1),
                test_time(59, 1),
                Requeue::Now,
            ),
            (
                "failed deployment - now",
                current_deployment(Some(60), 3, 3, 3, 1, stuck.clone()),
                new_deployment_status(3, 3, 1),
                test_time(60, 0),
                Requeue::Now,
            ),
            (
                "failed deployment - 1s after deadline",
                current_deployment(Some(60), 3, 3, 3, 1, stuck.clone()),
                new_deployment_status(3, 3, 1),
                test_time(61, 0),
                Requeue::Now,
            ),
            (
                "failed deployment - 60s after deadline",
                current_deployment(Some(60), 3, 3, 3, 1, stuck),
                new_deployment_status(3, 3, 1),
                test_time(120, 0),
                Requeue::Now,
            ),
        ];
        for (name, d, status, now, expected) in cases {
            assert_eq!(
                stuck_deployment_requeue(&d, &status, now),
                expected,
                "{name}"
            );
        }
    }

    /// progress_test.go's `TestSyncRolloutStatus`: the Progressing condition
    /// `syncRolloutStatus` writes, and which of its times it keeps.
    #[test]
    fn test_sync_rollout_status() {
        let pds = Some(60);
        let test_time = test_time(0, 0);
        let failed_timed_out =
            progressing(ConditionStatus::False, TIMED_OUT_REASON, None);
        let new_rs_available = progressing(
            ConditionStatus::True,
            NEW_RS_AVAILABLE_REASON,
            Some(test_time),
        );
        let replica_set_updated = progressing(
            ConditionStatus::True,
            REPLICA_SET_UPDATED_REASON,
            Some(test_time),
        );
        struct Case {
            name: &'static str,
            d: Deployment,
            all_rss: Vec<Arc<ReplicaSet>>,
            new_rs: Option<Arc<ReplicaSet>>,
            /// The expected Progressing condition: status and reason.
            expected: Option<(ConditionStatus, &'static str)>,
            last_update_kept: bool,
            last_transition_kept: bool,
        }
        let cases = vec![
            Case {
                name: "General: remove Progressing condition and do not estimate progress if deployment has no Progress Deadline",
                d: current_deployment(
                    None,
                    3,
                    2,
                    2,
                    2,
                    vec![replica_set_updated.clone()],
                ),
                all_rss: vec![new_rs_with_available("bar", 0, 1, 1)],
                new_rs: Some(new_rs_with_available("foo", 3, 2, 2)),
                expected: None,
                last_update_kept: false,
                last_transition_kept: false,
            },
            Case {
                name: "General: do not estimate progress of deployment with only one active ReplicaSet",
                d: current_deployment(
                    pds,
                    3,
                    3,
                    3,
                    3,
                    vec![new_rs_available.clone()],
                ),
                all_rss: vec![new_rs_with_available("bar", 3, 3, 3)],
                new_rs: None,
                expected: Some((ConditionStatus::True, NEW_RS_AVAILABLE_REASON)),
                last_update_kept: true,
                last_transition_kept: true,
            },
            Case {
                name: "DeploymentProgressing: dont update lastTransitionTime if deployment already has Progressing=True",
                d: current_deployment(
                    pds,
                    3,
                    2,
                    2,
                    2,
                    vec![replica_set_updated.clone()],
                ),
                all_rss: vec![new_rs_with_available("bar", 0, 1, 1)],
                new_rs: Some(new_rs_with_available("foo", 3, 2, 2)),
                expected: Some((ConditionStatus::True, REPLICA_SET_UPDATED_REASON)),
                last_update_kept: false,
                last_transition_kept: true,
            },
            Case {
                name: "DeploymentProgressing: update everything if deployment has Progressing=False",
                d: current_deployment(
                    pds,
                    3,
                    2,
                    2,
                    2,
                    vec![failed_timed_out.clone()],
                ),
                all_rss: vec![new_rs_with_available("bar", 0, 1, 1)],
                new_rs: Some(new_rs_with_available("foo", 3, 2, 2)),
                expected: Some((ConditionStatus::True, REPLICA_SET_UPDATED_REASON)),
                last_update_kept: false,
                last_transition_kept: false,
            },
            Case {
                name: "DeploymentProgressing: create Progressing condition if it does not exist",
                d: current_deployment(pds, 3, 2, 2, 2, vec![]),
                all_rss: vec![new_rs_with_available("bar", 0, 1, 1)],
                new_rs: Some(new_rs_with_available("foo", 3, 2, 2)),
                expected: Some((ConditionStatus::True, REPLICA_SET_UPDATED_REASON)),
                last_update_kept: false,
                last_transition_kept: false,
            },
            Case {
                name: "DeploymentComplete: dont update lastTransitionTime if deployment already has Progressing=True",
                d: current_deployment(
                    pds,
                    3,
                    3,
                    3,
                    3,
                    vec![replica_set_updated.clone()],
                ),
                all_rss: vec![],
                new_rs: Some(new_rs_with_available("foo", 3, 3, 3)),
                expected: Some((ConditionStatus::True, NEW_RS_AVAILABLE_REASON)),
                last_update_kept: false,
                last_transition_kept: true,
            },
            Case {
                name: "DeploymentComplete: update everything if deployment has Progressing=False",
                d: current_deployment(
                    pds,
                    3,
                    3,
                    3,
                    3,
                    vec![failed_timed_out.clone()],
                ),
                all_rss: vec![],
                new_rs: Some(new_rs_with_available("foo", 3, 3, 3)),
                expected: Some((ConditionStatus::True, NEW_RS_AVAILABLE_REASON)),
                last_update_kept: false,
                last_transition_kept: false,
            },
            Case {
                name: "DeploymentComplete: create Progressing condition if it does not exist",
                d: current_deployment(pds, 3, 3, 3, 3, vec![]),
                all_rss: vec![],
                new_rs: Some(new_rs_with_available("foo", 3, 3, 3)),
                expected: Some((ConditionStatus::True, NEW_RS_AVAILABLE_REASON)),
                last_update_kept: false,
                last_transition_kept: false,
            },
            Case {
                name: "DeploymentComplete: defend against NPE when newRS=nil",
                d: current_deployment(
                    pds,
                    0,
                    3,
                    3,
                    3,
                    vec![replica_set_updated.clone()],
                ),
                all_rss: vec![new_rs_with_available("foo", 0, 0, 0)],
                new_rs: None,
                expected: Some((ConditionStatus::True, NEW_RS_AVAILABLE_REASON)),
                last_update_kept: false,
                last_transition_kept: true,
            },
            Case {
                name: "DeploymentTimedOut: update status if rollout exceeds Progress Deadline",
                d: current_deployment(
                    pds,
                    3,
                    2,
                    2,
                    2,
                    vec![replica_set_updated.clone()],
                ),
                all_rss: vec![],
                new_rs: Some(new_rs_with_available("foo", 3, 2, 2)),
                expected: Some((ConditionStatus::False, TIMED_OUT_REASON)),
                last_update_kept: false,
                last_transition_kept: false,
            },
            Case {
                name: "DeploymentTimedOut: do not update status if deployment has existing timedOut condition",
                d: current_deployment(
                    pds,
                    3,
                    2,
                    2,
                    2,
                    vec![DeploymentCondition {
                        last_update_time: Some(Time(test_time)),
                        last_transition_time: Some(Time(test_time)),
                        ..failed_timed_out.clone()
                    }],
                ),
                all_rss: vec![],
                new_rs: Some(new_rs_with_available("foo", 3, 2, 2)),
                expected: Some((ConditionStatus::False, TIMED_OUT_REASON)),
                last_update_kept: true,
                last_transition_kept: true,
            },
        ];
        // Far past the deadlines of the conditions above.
        let now = Timestamp::new(1_600_000_000, 0).expect("a time");
        for case in cases {
            let mut all = case.all_rss.clone();
            all.extend(case.new_rs.clone());
            let status = rollout_status(&all, case.new_rs.as_ref(), &case.d, now);
            let cond = get_deployment_condition(
                &status,
                DeploymentConditionType::Progressing,
            );
            match (cond, case.expected) {
                (None, None) => {}
                (Some(cond), Some((expected_status, expected_reason))) => {
                    assert_eq!(
                        cond.status.as_deref(),
                        Some(expected_status.as_str()),
                        "{}",
                        case.name
                    );
                    assert_eq!(
                        cond.reason.as_deref(),
                        Some(expected_reason),
                        "{}",
                        case.name
                    );
                    if case.last_update_kept {
                        assert_eq!(
                            cond.last_update_time,
                            Some(Time(test_time)),
                            "{}: lastUpdateTime",
                            case.name
                        );
                    }
                    if case.last_transition_kept {
                        assert_eq!(
                            cond.last_transition_time,
                            Some(Time(test_time)),
                            "{}: lastTransitionTime",
                            case.name
                        );
                    } else {
                        assert_ne!(
                            cond.last_transition_time,
                            Some(Time(test_time)),
                            "{}: lastTransitionTime",
                            case.name
                        );
                    }
                }
                (cond, expected) => {
                    panic!("{}: got {cond:?}, expected {expected:?}", case.name)
                }
            }
        }
    }

    /// `getReplicaFailures`: the new ReplicaSet's failure wins over an old
    /// one's.
    #[test]
    fn replica_failures_of_the_new_replica_set_come_first() {
        use k8s_openapi::api::apps::v1::ReplicaSetCondition;
        let failing = |name: &str, reason: &str| {
            let mut rs = rs(name, 1, &[], 0);
            rs.status = Some(ReplicaSetStatus {
                conditions: Some(vec![ReplicaSetCondition {
                    type_: Some("ReplicaFailure".into()),
                    status: Some("True".into()),
                    reason: Some(reason.into()),
                    ..ReplicaSetCondition::default()
                }]),
                ..ReplicaSetStatus::default()
            });
            Arc::new(rs)
        };
        let old = failing("old", "FailedDelete");
        let new = failing("new", "FailedCreate");
        let all = vec![Arc::clone(&old), Arc::clone(&new)];
        let got = get_replica_failures(&all, Some(&new));
        assert_eq!(got.len(), 1);
        assert_eq!(got[0].reason.as_deref(), Some("FailedCreate"));
        assert_eq!(
            get_replica_failures(&[old], None)[0].reason.as_deref(),
            Some("FailedDelete")
        );
    }
}
