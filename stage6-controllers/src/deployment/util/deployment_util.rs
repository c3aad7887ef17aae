//! The Deployment controller's helpers: mirrors kubernetes'
//! [`pkg/controller/deployment/util/deployment_util.go`]: the annotations a
//! Deployment keeps on its ReplicaSets (revision, desired and max replicas),
//! its conditions (`Progressing`, `Available`), which ReplicaSet is new and
//! which are old, the counts over ReplicaSets, and the arithmetic of a rolling
//! update (`ResolveFenceposts`, `MaxSurge`, `MaxUnavailable`, `NewRSNewReplicas`,
//! `GetProportion`).
//!
//! It also holds the few helpers of [`pkg/controller/controller_utils.go`] only
//! the Deployment controller uses (`ComputeHash`, `FilterActiveReplicaSets`,
//! the ReplicaSet orderings), and apimachinery's `intstr.GetScaledValueFromIntOrPercent`
//! and `rand.SafeEncodeString`.
//!
//! Everything here is a pure function over the API types: the controller reads
//! its inputs from the informers' caches and writes what these decide.
//!
//! Go reads `*rs.Spec.Replicas` through pointers the API server always
//! defaults; here the same fields are `Option`s, read through
//! [`rs_replicas`] and friends with kube-apiserver's defaults.
//!
//! [`pkg/controller/deployment/util/deployment_util.go`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/deployment/util/deployment_util.go
//! [`pkg/controller/controller_utils.go`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/controller_utils.go

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentCondition, DeploymentStatus, ReplicaSet,
    ReplicaSetCondition,
};
use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;
use kube::core::{Selector, SelectorExt};
use stage4_shared_informer::Lister;

use crate::deployment::deployment_controller::DeploymentError;

/// Mirrors `RevisionAnnotation`: the revision of a Deployment's ReplicaSet,
/// its place in the rollout sequence (`kubectl rollout history` lists them).
pub const REVISION_ANNOTATION: &str = "deployment.kubernetes.io/revision";
/// Mirrors `RevisionHistoryAnnotation`: the earlier revisions a ReplicaSet
/// served (a rollback makes an old ReplicaSet new again).
pub const REVISION_HISTORY_ANNOTATION: &str =
    "deployment.kubernetes.io/revision-history";
/// Mirrors `DesiredReplicasAnnotation`: the Deployment's replicas when the
/// ReplicaSet was last sized, to tell a scaling event from a rollout.
pub const DESIRED_REPLICAS_ANNOTATION: &str =
    "deployment.kubernetes.io/desired-replicas";
/// Mirrors `MaxReplicasAnnotation`: `replicas + maxSurge` when the ReplicaSet
/// was last sized, the base of proportional scaling.
pub const MAX_REPLICAS_ANNOTATION: &str = "deployment.kubernetes.io/max-replicas";
/// Mirrors `apps.DefaultDeploymentUniqueLabelKey`: the label that tells the
/// pods of one ReplicaSet from another's.
pub const DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY: &str = "pod-template-hash";
/// `v1.LastAppliedConfigAnnotation` (kubectl apply's), never copied to a
/// ReplicaSet.
const LAST_APPLIED_CONFIG_ANNOTATION: &str =
    "kubectl.kubernetes.io/last-applied-configuration";
/// `apps.DeprecatedRollbackTo`, never copied to a ReplicaSet.
const DEPRECATED_ROLLBACK_TO: &str = "deprecated.deployment.rollback.to";

/// Mirrors `ReplicaSetUpdatedReason`: a ReplicaSet was resized in a rollout.
pub const REPLICA_SET_UPDATED_REASON: &str = "ReplicaSetUpdated";
/// Mirrors `FailedRSCreateReason`: the new ReplicaSet could not be created.
pub const FAILED_RS_CREATE_REASON: &str = "ReplicaSetCreateError";
/// Mirrors `NewReplicaSetReason`: the controller created the new ReplicaSet.
pub const NEW_REPLICA_SET_REASON: &str = "NewReplicaSetCreated";
/// Mirrors `FoundNewRSReason`: the new ReplicaSet already existed.
pub const FOUND_NEW_RS_REASON: &str = "FoundNewReplicaSet";
/// Mirrors `NewRSAvailableReason`: the rollout is complete.
pub const NEW_RS_AVAILABLE_REASON: &str = "NewReplicaSetAvailable";
/// Mirrors `TimedOutReason`: no progress within `progressDeadlineSeconds`.
pub const TIMED_OUT_REASON: &str = "ProgressDeadlineExceeded";
/// Mirrors `PausedDeployReason`.
pub const PAUSED_DEPLOY_REASON: &str = "DeploymentPaused";
/// Mirrors `ResumedDeployReason`.
pub const RESUMED_DEPLOY_REASON: &str = "DeploymentResumed";
/// Mirrors `MinimumReplicasAvailable`.
pub const MINIMUM_REPLICAS_AVAILABLE: &str = "MinimumReplicasAvailable";
/// Mirrors `MinimumReplicasUnavailable`.
pub const MINIMUM_REPLICAS_UNAVAILABLE: &str = "MinimumReplicasUnavailable";

/// Mirrors `apps.DeploymentConditionType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeploymentConditionType {
    /// `Available`: at least `replicas - maxUnavailable` pods are available.
    Available,
    /// `Progressing`: the rollout moves (or finished, or timed out).
    Progressing,
    /// `ReplicaFailure`: a ReplicaSet could not create or delete pods.
    ReplicaFailure,
}

impl DeploymentConditionType {
    /// The condition's `type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Available => "Available",
            Self::Progressing => "Progressing",
            Self::ReplicaFailure => "ReplicaFailure",
        }
    }
}

/// Mirrors `v1.ConditionStatus`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ConditionStatus {
    /// `True`.
    True,
    /// `False`.
    False,
    /// `Unknown`.
    Unknown,
}

impl ConditionStatus {
    /// The condition's `status`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::True => "True",
            Self::False => "False",
            Self::Unknown => "Unknown",
        }
    }
}

/// Mirrors `apps.DeploymentStrategyType`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeploymentStrategyType {
    /// `Recreate`: every old pod goes before a new one starts.
    Recreate,
    /// `RollingUpdate`: old pods are replaced a few at a time.
    RollingUpdate,
}

impl DeploymentStrategyType {
    /// The strategy of `d`, if it is one the controller knows (the API server
    /// defaults it to `RollingUpdate`).
    pub fn of(d: &Deployment) -> Option<Self> {
        match d.spec.strategy.as_ref().and_then(|s| s.type_.as_deref()) {
            Some("Recreate") => Some(Self::Recreate),
            Some("RollingUpdate") => Some(Self::RollingUpdate),
            _ => None,
        }
    }
}

// ---------------------------------------------------------------------------
// Field access: Go dereferences pointers kube-apiserver always defaults.

/// `*(d.Spec.Replicas)`, defaulted to 1.
pub fn deployment_replicas(d: &Deployment) -> i32 {
    d.spec.replicas.unwrap_or(1)
}

/// `*(rs.Spec.Replicas)`, defaulted to 1.
pub fn rs_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(1)
}

/// `rs.Status.Replicas`: the pods the ReplicaSet controller counted.
pub fn rs_status_replicas(rs: &ReplicaSet) -> i32 {
    rs.status.as_ref().map_or(0, |s| s.replicas)
}

/// `rs.Status.AvailableReplicas`.
pub fn rs_available_replicas(rs: &ReplicaSet) -> i32 {
    rs.status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0)
}

/// `rs.Status.ReadyReplicas`.
pub fn rs_ready_replicas(rs: &ReplicaSet) -> i32 {
    rs.status
        .as_ref()
        .and_then(|s| s.ready_replicas)
        .unwrap_or(0)
}

/// `d.Status`, with Go's zero values where the API left a count out, so two
/// statuses compare as `reflect.DeepEqual` compares them.
pub fn deployment_status(d: &Deployment) -> DeploymentStatus {
    let mut status = d.status.clone().unwrap_or_default();
    for count in [
        &mut status.replicas,
        &mut status.updated_replicas,
        &mut status.ready_replicas,
        &mut status.available_replicas,
        &mut status.unavailable_replicas,
    ] {
        count.get_or_insert(0);
    }
    status.observed_generation.get_or_insert(0);
    if status.conditions.as_ref().is_some_and(Vec::is_empty) {
        status.conditions = None;
    }
    status
}

// ---------------------------------------------------------------------------
// Conditions.

/// Mirrors `NewDeploymentCondition`: a condition last updated and
/// transitioned `now`.
pub fn new_deployment_condition(
    type_: DeploymentConditionType,
    status: ConditionStatus,
    reason: &str,
    message: &str,
    now: Timestamp,
) -> DeploymentCondition {
    DeploymentCondition {
        type_: Some(type_.as_str().to_string()),
        status: Some(status.as_str().to_string()),
        last_update_time: Some(Time(now)),
        last_transition_time: Some(Time(now)),
        reason: Some(reason.to_string()),
        message: Some(message.to_string()),
    }
}

/// Mirrors `GetDeploymentCondition`: the condition of `type_`.
pub fn get_deployment_condition(
    status: &DeploymentStatus,
    type_: DeploymentConditionType,
) -> Option<&DeploymentCondition> {
    status
        .conditions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_.as_deref() == Some(type_.as_str()))
}

/// Mirrors `SetDeploymentCondition`: puts `condition` in `status`, unless one
/// of its type with the same status and reason is there; a condition whose
/// status does not change keeps its `lastTransitionTime`.
pub fn set_deployment_condition(
    status: &mut DeploymentStatus,
    mut condition: DeploymentCondition,
) {
    let type_ = condition.type_.clone();
    if let Some(current) = status
        .conditions
        .as_deref()
        .unwrap_or_default()
        .iter()
        .find(|c| c.type_ == type_)
    {
        if current.status == condition.status && current.reason == condition.reason {
            return;
        }
        if current.status == condition.status {
            condition
                .last_transition_time
                .clone_from(&current.last_transition_time);
        }
    }
    let mut conditions = filter_out_condition(status.conditions.take(), &type_);
    conditions.push(condition);
    status.conditions = Some(conditions);
}

/// Mirrors `RemoveDeploymentCondition`.
pub fn remove_deployment_condition(
    status: &mut DeploymentStatus,
    type_: DeploymentConditionType,
) {
    let conditions = filter_out_condition(
        status.conditions.take(),
        &Some(type_.as_str().to_string()),
    );
    status.conditions = (!conditions.is_empty()).then_some(conditions);
}

/// Mirrors `filterOutCondition`.
fn filter_out_condition(
    conditions: Option<Vec<DeploymentCondition>>,
    type_: &Option<String>,
) -> Vec<DeploymentCondition> {
    conditions
        .unwrap_or_default()
        .into_iter()
        .filter(|c| &c.type_ != type_)
        .collect()
}

/// Mirrors `ReplicaSetToDeploymentCondition`: a ReplicaSet's failure, as the
/// Deployment reports it.
pub fn replica_set_to_deployment_condition(
    condition: &ReplicaSetCondition,
) -> DeploymentCondition {
    DeploymentCondition {
        type_: condition.type_.clone(),
        status: condition.status.clone(),
        last_transition_time: condition.last_transition_time.clone(),
        last_update_time: condition.last_transition_time.clone(),
        reason: condition.reason.clone(),
        message: condition.message.clone(),
    }
}

// ---------------------------------------------------------------------------
// Revisions and annotations.

/// Mirrors `SetDeploymentRevision`: whether the Deployment's revision
/// annotation changed.
pub fn set_deployment_revision(deployment: &mut Deployment, revision: &str) -> bool {
    let annotations = deployment.metadata.annotations.get_or_insert_default();
    if annotations.get(REVISION_ANNOTATION).map(String::as_str) == Some(revision) {
        return false;
    }
    annotations.insert(REVISION_ANNOTATION.to_string(), revision.to_string());
    true
}

/// Mirrors `MaxRevision`: the highest revision among the ReplicaSets (those
/// whose revision does not parse are skipped).
pub fn max_revision(all_rss: &[Arc<ReplicaSet>]) -> i64 {
    all_rss
        .iter()
        .filter_map(|rs| match revision(&rs.metadata) {
            Ok(v) => Some(v),
            Err(error) => {
                tracing::debug!(replica_set = ?rs.metadata.name, %error, "couldn't parse the revision; skipped");
                None
            }
        })
        .fold(0, i64::max)
}

/// Mirrors `Revision`: the object's revision annotation, 0 without one.
pub fn revision(meta: &ObjectMeta) -> Result<i64, std::num::ParseIntError> {
    match meta
        .annotations
        .as_ref()
        .and_then(|a| a.get(REVISION_ANNOTATION))
    {
        None => Ok(0),
        Some(v) => v.parse(),
    }
}

/// Mirrors `SetNewReplicaSetAnnotations`: copies the Deployment's annotations
/// to its new ReplicaSet (but those of [`skip_copy_annotation`]), raises the
/// ReplicaSet's revision to `new_revision` (recording the one it had in
/// `revision-history`, at most `rev_history_limit_in_chars` long), and, for a
/// ReplicaSet about to be created (`exists` false), sets the replicas
/// annotations. Whether any annotation changed.
pub fn set_new_replica_set_annotations(
    deployment: &Deployment,
    new_rs: &mut ReplicaSet,
    new_revision: &str,
    exists: bool,
    rev_history_limit_in_chars: usize,
) -> bool {
    let mut annotation_changed =
        copy_deployment_annotations_to_replica_set(deployment, new_rs);
    let annotations = new_rs.metadata.annotations.get_or_insert_default();
    let old_revision = annotations.get(REVISION_ANNOTATION).cloned();
    let old_revision_int = match old_revision.as_deref() {
        None | Some("") => 0,
        Some(v) => match v.parse::<i64>() {
            Ok(n) => n,
            Err(error) => {
                tracing::info!(%error, "updating replica set revision: the old revision is not an integer");
                return false;
            }
        },
    };
    let Ok(new_revision_int) = new_revision.parse::<i64>() else {
        tracing::info!(
            new_revision,
            "updating replica set revision: the new revision is not an integer"
        );
        return false;
    };
    if old_revision_int < new_revision_int {
        annotations
            .insert(REVISION_ANNOTATION.to_string(), new_revision.to_string());
        annotation_changed = true;
    }
    // A ReplicaSet that had a revision and gets a newer one is rolled back
    // to: keep the revisions it served.
    if let Some(old_revision) = old_revision
        && old_revision_int < new_revision_int
    {
        let history = annotations
            .get(REVISION_HISTORY_ANNOTATION)
            .cloned()
            .unwrap_or_default();
        if history.is_empty() {
            annotations
                .insert(REVISION_HISTORY_ANNOTATION.to_string(), old_revision);
        } else {
            let old_revisions: Vec<&str> = history.split(',').collect();
            let mut total_len = history.len() + old_revision.len() + 1;
            let mut start = 0;
            while total_len > rev_history_limit_in_chars
                && start < old_revisions.len()
            {
                total_len -= old_revisions[start].len() + 1;
                start += 1;
            }
            if total_len <= rev_history_limit_in_chars {
                let mut kept: Vec<&str> = old_revisions[start..].to_vec();
                kept.push(&old_revision);
                annotations
                    .insert(REVISION_HISTORY_ANNOTATION.to_string(), kept.join(","));
            } else {
                tracing::info!(
                    rev_history_limit_in_chars,
                    "not appending the revision: the revision history is at its limit"
                );
            }
        }
    }
    if !exists {
        let replicas = deployment_replicas(deployment);
        if set_replicas_annotations(
            new_rs,
            replicas,
            replicas + max_surge(deployment),
        ) {
            annotation_changed = true;
        }
    }
    annotation_changed
}

/// Mirrors `skipCopyAnnotation` over `annotationsToSkip`: the annotations a
/// Deployment never copies to its ReplicaSets (kubectl apply's, and the
/// controller's own).
pub fn skip_copy_annotation(key: &str) -> bool {
    matches!(
        key,
        LAST_APPLIED_CONFIG_ANNOTATION
            | REVISION_ANNOTATION
            | REVISION_HISTORY_ANNOTATION
            | DESIRED_REPLICAS_ANNOTATION
            | MAX_REPLICAS_ANNOTATION
            | DEPRECATED_ROLLBACK_TO
    )
}

/// Mirrors `copyDeploymentAnnotationsToReplicaSet` (so `kubernetes.io/change-cause`
/// reaches the ReplicaSet `kubectl rollout history` reads it from): whether the
/// ReplicaSet's annotations changed.
fn copy_deployment_annotations_to_replica_set(
    deployment: &Deployment,
    rs: &mut ReplicaSet,
) -> bool {
    let mut changed = false;
    let annotations = rs.metadata.annotations.get_or_insert_default();
    for (k, v) in deployment.metadata.annotations.iter().flatten() {
        if skip_copy_annotation(k) || annotations.get(k) == Some(v) {
            continue;
        }
        annotations.insert(k.clone(), v.clone());
        changed = true;
    }
    changed
}

/// Mirrors `FindActiveOrLatest`: the only active ReplicaSet, or the newest one
/// when none is active; `None` when several are active (they scale
/// proportionally).
pub fn find_active_or_latest(
    new_rs: Option<&Arc<ReplicaSet>>,
    old_rss: &[Arc<ReplicaSet>],
) -> Option<Arc<ReplicaSet>> {
    if new_rs.is_none() && old_rss.is_empty() {
        return None;
    }
    let mut old_sorted = old_rss.to_vec();
    old_sorted.sort_by(|a, b| replica_sets_by_creation_timestamp(b, a));
    let mut all = old_sorted.clone();
    all.extend(new_rs.cloned());
    let active = filter_active_replica_sets(&all);
    match active.len() {
        0 => new_rs.cloned().or_else(|| old_sorted.first().cloned()),
        1 => active.into_iter().next(),
        _ => None,
    }
}

/// Mirrors `GetDesiredReplicasAnnotation`.
pub fn get_desired_replicas_annotation(rs: &ReplicaSet) -> Option<i32> {
    get_non_negative_int32_from_annotation_verbose(rs, DESIRED_REPLICAS_ANNOTATION)
}

/// Mirrors `getMaxReplicasAnnotation`.
fn get_max_replicas_annotation(rs: &ReplicaSet) -> Option<i32> {
    get_non_negative_int32_from_annotation_verbose(rs, MAX_REPLICAS_ANNOTATION)
}

/// Mirrors `getNonNegativeInt32FromAnnotationVerbose`: the value, logging one
/// that does not parse.
fn get_non_negative_int32_from_annotation_verbose(
    rs: &ReplicaSet,
    key: &str,
) -> Option<i32> {
    match get_non_negative_int32_from_annotation(rs, key) {
        Ok(value) => value,
        Err(error) => {
            tracing::debug!(replica_set = ?rs.metadata.name, key, %error, "could not convert the annotation");
            None
        }
    }
}

/// Why an annotation is not a non-negative int32.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum AnnotationError {
    /// Not a decimal number (`strconv`'s "invalid syntax"; a sign is one).
    #[error("parsing {0:?}: invalid syntax")]
    InvalidSyntax(String),
    /// Above `math.MaxInt32` (`strconv`'s "value out of range").
    #[error("parsing {0:?}: value out of range")]
    OutOfRange(String),
}

/// Mirrors `getNonNegativeInt32FromAnnotation`: `Ok(None)` without the
/// annotation.
pub fn get_non_negative_int32_from_annotation(
    rs: &ReplicaSet,
    key: &str,
) -> Result<Option<i32>, AnnotationError> {
    let Some(value) = rs.metadata.annotations.as_ref().and_then(|a| a.get(key))
    else {
        return Ok(None);
    };
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(AnnotationError::InvalidSyntax(value.clone()));
    }
    match value.parse::<u64>() {
        Ok(n) => i32::try_from(n)
            .map(Some)
            .map_err(|_| AnnotationError::OutOfRange(value.clone())),
        Err(_) => Err(AnnotationError::OutOfRange(value.clone())),
    }
}

/// Mirrors `SetReplicasAnnotations`: whether either annotation changed.
pub fn set_replicas_annotations(
    rs: &mut ReplicaSet,
    desired_replicas: i32,
    max_replicas: i32,
) -> bool {
    let annotations = rs.metadata.annotations.get_or_insert_default();
    let mut updated = false;
    for (key, value) in [
        (DESIRED_REPLICAS_ANNOTATION, desired_replicas),
        (MAX_REPLICAS_ANNOTATION, max_replicas),
    ] {
        let value = value.to_string();
        if annotations.get(key) != Some(&value) {
            annotations.insert(key.to_string(), value);
            updated = true;
        }
    }
    updated
}

/// Mirrors `ReplicasAnnotationsNeedUpdate`.
pub fn replicas_annotations_need_update(
    rs: &ReplicaSet,
    desired_replicas: i32,
    max_replicas: i32,
) -> bool {
    let Some(annotations) = rs.metadata.annotations.as_ref() else {
        return true;
    };
    annotations.get(DESIRED_REPLICAS_ANNOTATION)
        != Some(&desired_replicas.to_string())
        || annotations.get(MAX_REPLICAS_ANNOTATION)
            != Some(&max_replicas.to_string())
}

// ---------------------------------------------------------------------------
// Rolling-update arithmetic.

/// Mirrors `MaxUnavailable`: how many pods a rolling update may take below
/// `replicas` (0 for Recreate, at most `replicas`).
pub fn max_unavailable(deployment: &Deployment) -> i32 {
    let replicas = deployment_replicas(deployment);
    if !is_rolling_update(deployment) || replicas == 0 {
        return 0;
    }
    let (surge, unavailable) = rolling_params(deployment);
    let (_, max_unavailable) =
        resolve_fenceposts(surge, unavailable, replicas).unwrap_or((0, 0));
    max_unavailable.min(replicas)
}

/// Mirrors `MinAvailable`.
pub fn min_available(deployment: &Deployment) -> i32 {
    if !is_rolling_update(deployment) {
        return 0;
    }
    deployment_replicas(deployment) - max_unavailable(deployment)
}

/// Mirrors `MaxSurge`: how many pods a rolling update may run above
/// `replicas` (0 for Recreate).
pub fn max_surge(deployment: &Deployment) -> i32 {
    if !is_rolling_update(deployment) {
        return 0;
    }
    let (surge, unavailable) = rolling_params(deployment);
    resolve_fenceposts(surge, unavailable, deployment_replicas(deployment))
        .map_or(0, |(max_surge, _)| max_surge)
}

/// `maxSurge` and `maxUnavailable` of the Deployment's rolling update.
fn rolling_params(
    deployment: &Deployment,
) -> (Option<&IntOrString>, Option<&IntOrString>) {
    let rolling = deployment
        .spec
        .strategy
        .as_ref()
        .and_then(|s| s.rolling_update.as_ref());
    (
        rolling.and_then(|r| r.max_surge.as_ref()),
        rolling.and_then(|r| r.max_unavailable.as_ref()),
    )
}

/// Mirrors `GetProportion`: how many replicas `rs` gets (or loses) of the
/// `to_add` the Deployment scales by, `added` of which the ReplicaSets before
/// it already took: its fraction, capped by what is left.
pub fn get_proportion(
    rs: Option<&ReplicaSet>,
    d: &Deployment,
    deployment_replicas_to_add: i32,
    deployment_replicas_added: i32,
) -> i32 {
    let Some(rs) = rs else { return 0 };
    if rs_replicas(rs) == 0
        || deployment_replicas_to_add == 0
        || deployment_replicas_to_add == deployment_replicas_added
    {
        return 0;
    }
    let rs_fraction = get_replica_set_fraction(rs, d);
    let allowed = deployment_replicas_to_add - deployment_replicas_added;
    if deployment_replicas_to_add > 0 {
        // Scaling up: never more than what may still be added.
        rs_fraction.min(allowed)
    } else {
        // Scaling down: never more than what may still be removed.
        rs_fraction.max(allowed)
    }
}

/// Mirrors `getReplicaSetFraction`: the replicas `rs` would gain (negative:
/// lose) to keep its share of `replicas + maxSurge`, its share of the
/// `max-replicas` it was sized for (or, without that annotation, of the
/// replicas the Deployment counted; nothing when that is 0).
pub fn get_replica_set_fraction(rs: &ReplicaSet, d: &Deployment) -> i32 {
    let rs_replicas = rs_replicas(rs);
    if deployment_replicas(d) == 0 {
        return -rs_replicas;
    }
    let deployment_max_replicas = deployment_replicas(d) + max_surge(d);
    let before_scale = match get_max_replicas_annotation(rs) {
        Some(n) if n > 0 => n,
        _ => {
            // A third party removed or zeroed the annotation: fall back to the
            // current size, and do not scale an unsynced Deployment at all.
            let replicas = d.status.as_ref().and_then(|s| s.replicas).unwrap_or(0);
            if replicas == 0 {
                return 0;
            }
            replicas
        }
    };
    let new_rs_size = (f64::from(rs_replicas) * f64::from(deployment_max_replicas))
        / f64::from(before_scale);
    round_to_i32(new_rs_size) - rs_replicas
}

/// `integer.RoundToInt32`: half away from zero.
fn round_to_i32(x: f64) -> i32 {
    // The inputs are ReplicaSet sizes: the product stays within i32 after
    // the division by a positive size.
    #[allow(clippy::cast_possible_truncation)]
    let rounded = x.round().clamp(f64::from(i32::MIN), f64::from(i32::MAX)) as i32;
    rounded
}

/// Mirrors `EqualIgnoreHash`: whether two pod templates are equal but for
/// their `pod-template-hash` label. As apimachinery's semantic equality, a
/// template whose labels (or annotations) are empty equals one without.
pub fn equal_ignore_hash(
    template1: &PodTemplateSpec,
    template2: &PodTemplateSpec,
) -> bool {
    fn without_hash(template: &PodTemplateSpec) -> PodTemplateSpec {
        let mut copy = template.clone();
        let mut meta = copy.metadata.take().unwrap_or_default();
        if let Some(labels) = meta.labels.as_mut() {
            labels.remove(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY);
        }
        if meta.labels.as_ref().is_some_and(BTreeMap::is_empty) {
            meta.labels = None;
        }
        if meta.annotations.as_ref().is_some_and(BTreeMap::is_empty) {
            meta.annotations = None;
        }
        copy.metadata = (meta != ObjectMeta::default()).then_some(meta);
        copy
    }
    without_hash(template1) == without_hash(template2)
}

/// Mirrors `FindNewReplicaSet`: the oldest ReplicaSet whose template equals
/// the Deployment's (but for the hash label).
pub fn find_new_replica_set(
    deployment: &Deployment,
    rs_list: &[Arc<ReplicaSet>],
) -> Option<Arc<ReplicaSet>> {
    let mut sorted = rs_list.to_vec();
    sorted.sort_by(|a, b| replica_sets_by_creation_timestamp(a, b));
    // After a cluster upgrade there may be more than one (kubernetes#40415):
    // the oldest is the new one, deterministically.
    sorted.into_iter().find(|rs| {
        rs.spec
            .template
            .as_ref()
            .is_some_and(|t| equal_ignore_hash(t, &deployment.spec.template))
    })
}

/// Mirrors `FindOldReplicaSets`: the ReplicaSets other than the new one, as
/// `(those with replicas, all)`.
pub fn find_old_replica_sets(
    deployment: &Deployment,
    rs_list: &[Arc<ReplicaSet>],
) -> (Vec<Arc<ReplicaSet>>, Vec<Arc<ReplicaSet>>) {
    let new_rs = find_new_replica_set(deployment, rs_list);
    let all: Vec<Arc<ReplicaSet>> = rs_list
        .iter()
        .filter(|rs| {
            new_rs
                .as_ref()
                .is_none_or(|n| n.metadata.uid != rs.metadata.uid)
        })
        .cloned()
        .collect();
    let required = all
        .iter()
        .filter(|rs| rs_replicas(rs) != 0)
        .cloned()
        .collect();
    (required, all)
}

/// Mirrors `GetReplicaCountForReplicaSets`: the sum of `spec.replicas`.
pub fn get_replica_count_for_replica_sets(rss: &[Arc<ReplicaSet>]) -> i32 {
    rss.iter().map(|rs| rs_replicas(rs)).sum()
}

/// Mirrors `GetActualReplicaCountForReplicaSets`: the sum of `status.replicas`.
pub fn get_actual_replica_count_for_replica_sets(rss: &[Arc<ReplicaSet>]) -> i32 {
    rss.iter().map(|rs| rs_status_replicas(rs)).sum()
}

/// Mirrors `GetReadyReplicaCountForReplicaSets`.
pub fn get_ready_replica_count_for_replica_sets(rss: &[Arc<ReplicaSet>]) -> i32 {
    rss.iter().map(|rs| rs_ready_replicas(rs)).sum()
}

/// Mirrors `GetAvailableReplicaCountForReplicaSets`.
pub fn get_available_replica_count_for_replica_sets(rss: &[Arc<ReplicaSet>]) -> i32 {
    rss.iter().map(|rs| rs_available_replicas(rs)).sum()
}

/// Mirrors `IsRollingUpdate`.
pub fn is_rolling_update(deployment: &Deployment) -> bool {
    DeploymentStrategyType::of(deployment)
        == Some(DeploymentStrategyType::RollingUpdate)
}

/// Mirrors `DeploymentComplete`: every desired replica is updated and
/// available, no old pod runs, and the status saw the latest generation.
pub fn deployment_complete(
    deployment: &Deployment,
    new_status: &DeploymentStatus,
) -> bool {
    let replicas = deployment_replicas(deployment);
    new_status.updated_replicas.unwrap_or(0) == replicas
        && new_status.replicas.unwrap_or(0) == replicas
        && new_status.available_replicas.unwrap_or(0) == replicas
        && new_status.observed_generation.unwrap_or(0)
            >= deployment.metadata.generation.unwrap_or(0)
}

/// Mirrors `DeploymentProgressing`: whether `new_status` moved on from the
/// Deployment's status: more updated, ready or available pods, or fewer old
/// ones.
pub fn deployment_progressing(
    deployment: &Deployment,
    new_status: &DeploymentStatus,
) -> bool {
    let old = deployment.status.clone().unwrap_or_default();
    let count = |v: Option<i32>| v.unwrap_or(0);
    let old_status_old_replicas = count(old.replicas) - count(old.updated_replicas);
    let new_status_old_replicas =
        count(new_status.replicas) - count(new_status.updated_replicas);
    count(new_status.updated_replicas) > count(old.updated_replicas)
        || new_status_old_replicas < old_status_old_replicas
        || count(new_status.ready_replicas) > count(old.ready_replicas)
        || count(new_status.available_replicas) > count(old.available_replicas)
}

/// Mirrors `DeploymentTimedOut`: whether the last progress (the
/// `Progressing` condition's `lastUpdateTime`) is older than
/// `progressDeadlineSeconds` as of `now`, or the timeout is already reported.
pub fn deployment_timed_out(
    deployment: &Deployment,
    new_status: &DeploymentStatus,
    now: Timestamp,
) -> bool {
    if !has_progress_deadline(deployment) {
        return false;
    }
    let Some(condition) =
        get_deployment_condition(new_status, DeploymentConditionType::Progressing)
    else {
        return false;
    };
    // A finished rollout estimates no progress (its new ReplicaSet may show
    // up in a resync before the status does).
    match condition.reason.as_deref() {
        Some(NEW_RS_AVAILABLE_REASON) => return false,
        Some(TIMED_OUT_REASON) => return true,
        _ => {}
    }
    let from = condition
        .last_update_time
        .as_ref()
        .map_or(Timestamp::UNIX_EPOCH, |t| t.0);
    let deadline = k8s_openapi::jiff::SignedDuration::from_secs(i64::from(
        deployment.spec.progress_deadline_seconds.unwrap_or(0),
    ));
    let timed_out = from.checked_add(deadline).is_ok_and(|until| until < now);
    tracing::debug!(deployment = ?deployment.metadata.name, timed_out, %from, %now, "checked the deployment's progress deadline");
    timed_out
}

/// Mirrors `NewRSNewReplicas`: the replicas the new ReplicaSet should have:
/// for a rolling update, as many more as `replicas + maxSurge` leaves room
/// for (never above `replicas`); for Recreate, `replicas`.
pub fn new_rs_new_replicas(
    deployment: &Deployment,
    all_rss: &[Arc<ReplicaSet>],
    new_rs: &ReplicaSet,
) -> Result<i32, DeploymentError> {
    let replicas = deployment_replicas(deployment);
    match DeploymentStrategyType::of(deployment) {
        Some(DeploymentStrategyType::RollingUpdate) => {
            let (surge, _) = rolling_params(deployment);
            let max_surge = get_scaled_value_from_int_or_percent(
                surge.unwrap_or(&IntOrString::Int(0)),
                replicas,
                true,
            )?;
            let current_pod_count = get_replica_count_for_replica_sets(all_rss);
            let max_total_pods = replicas + max_surge;
            if current_pod_count >= max_total_pods {
                return Ok(rs_replicas(new_rs));
            }
            let scale_up_count = (max_total_pods - current_pod_count)
                .min(replicas - rs_replicas(new_rs));
            Ok(rs_replicas(new_rs) + scale_up_count)
        }
        Some(DeploymentStrategyType::Recreate) => Ok(replicas),
        None => Err(DeploymentError::UnsupportedStrategy(strategy_name(
            deployment,
        ))),
    }
}

/// The strategy type as written, for errors.
pub(crate) fn strategy_name(deployment: &Deployment) -> String {
    deployment
        .spec
        .strategy
        .as_ref()
        .and_then(|s| s.type_.clone())
        .unwrap_or_default()
}

/// Mirrors `IsSaturated`: the new ReplicaSet runs all the Deployment's
/// replicas, was sized for them, and all its pods are available.
pub fn is_saturated(deployment: &Deployment, rs: Option<&ReplicaSet>) -> bool {
    let Some(rs) = rs else { return false };
    let Some(desired) = get_desired_replicas_annotation(rs) else {
        return false;
    };
    let replicas = deployment_replicas(deployment);
    rs_replicas(rs) == replicas
        && desired == replicas
        && rs_available_replicas(rs) == replicas
}

/// Mirrors `ResolveFenceposts`: `maxSurge` (rounded up) and `maxUnavailable`
/// (rounded down) of `desired`, resolved together: when both come to 0,
/// `maxUnavailable` is 1, so a rollout can always move.
pub fn resolve_fenceposts(
    max_surge: Option<&IntOrString>,
    max_unavailable: Option<&IntOrString>,
    desired: i32,
) -> Result<(i32, i32), DeploymentError> {
    let zero = IntOrString::Int(0);
    let surge = get_scaled_value_from_int_or_percent(
        max_surge.unwrap_or(&zero),
        desired,
        true,
    )?;
    let mut unavailable = get_scaled_value_from_int_or_percent(
        max_unavailable.unwrap_or(&zero),
        desired,
        false,
    )?;
    if surge == 0 && unavailable == 0 {
        // Validation refuses 0 for both, but a percentage may round down to
        // 0: then allow one unavailable pod, since surge may fail on quota.
        unavailable = 1;
    }
    Ok((surge, unavailable))
}

/// Mirrors apimachinery's `intstr.GetScaledValueFromIntOrPercent`: an int as
/// it is, a percentage of `total` rounded up or down.
pub fn get_scaled_value_from_int_or_percent(
    value: &IntOrString,
    total: i32,
    round_up: bool,
) -> Result<i32, DeploymentError> {
    match value {
        IntOrString::Int(n) => Ok(*n),
        IntOrString::String(s) => {
            let invalid =
                || DeploymentError::InvalidIntOrPercent { value: s.clone() };
            let percent: i32 = s
                .strip_suffix('%')
                .ok_or_else(invalid)?
                .parse()
                .map_err(|_| invalid())?;
            let scaled = f64::from(percent) * f64::from(total) / 100.0;
            let scaled = if round_up {
                scaled.ceil()
            } else {
                scaled.floor()
            };
            Ok(round_to_i32(scaled))
        }
    }
}

/// Mirrors `HasProgressDeadline`: a deadline that is set and not
/// `math.MaxInt32`.
pub fn has_progress_deadline(d: &Deployment) -> bool {
    d.spec
        .progress_deadline_seconds
        .is_some_and(|s| s != i32::MAX)
}

/// Mirrors `HasRevisionHistoryLimit`: a limit that is set and not
/// `math.MaxInt32` (which keeps every revision).
pub fn has_revision_history_limit(d: &Deployment) -> bool {
    d.spec.revision_history_limit.is_some_and(|l| l != i32::MAX)
}

/// Mirrors `GetDeploymentsForReplicaSet`: the Deployments of the ReplicaSet's
/// namespace whose (non-empty) selector matches its labels; only the one its
/// controller reference names manages it.
pub fn get_deployments_for_replica_set(
    deployment_lister: &Lister<Deployment>,
    rs: &ReplicaSet,
) -> Vec<Arc<Deployment>> {
    let Some(labels) = rs.metadata.labels.as_ref().filter(|l| !l.is_empty()) else {
        return Vec::new();
    };
    let namespace = rs.metadata.namespace.as_deref().unwrap_or_default();
    deployment_lister
        .namespaced(namespace)
        .list(&Selector::default())
        .into_iter()
        .filter(|d| {
            Selector::try_from(d.spec.selector.clone())
                .is_ok_and(|s| !s.selects_all() && s.matches(labels))
        })
        .collect()
}

/// Mirrors `ReplicaSetsByRevision`: by revision, then (a revision that does
/// not parse, or a tie) by creation.
pub fn replica_sets_by_revision(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    match (revision(&a.metadata), revision(&b.metadata)) {
        (Ok(ra), Ok(rb)) if ra != rb => ra.cmp(&rb),
        _ => replica_sets_by_creation_timestamp(a, b),
    }
}

// ---------------------------------------------------------------------------
// From pkg/controller/controller_utils.go.

/// Mirrors `controller.ReplicaSetsByCreationTimestamp`: older first, then by
/// name.
pub fn replica_sets_by_creation_timestamp(
    a: &ReplicaSet,
    b: &ReplicaSet,
) -> Ordering {
    let created =
        |rs: &ReplicaSet| rs.metadata.creation_timestamp.as_ref().map(|t| t.0);
    created(a)
        .cmp(&created(b))
        .then_with(|| a.metadata.name.cmp(&b.metadata.name))
}

/// Mirrors `controller.ReplicaSetsBySizeOlder`: larger first; among equals,
/// older first (scaling down takes from the old first).
pub fn replica_sets_by_size_older(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b)
        .cmp(&rs_replicas(a))
        .then_with(|| replica_sets_by_creation_timestamp(a, b))
}

/// Mirrors `controller.ReplicaSetsBySizeNewer`: larger first; among equals,
/// newer first (scaling up gives to the new first).
pub fn replica_sets_by_size_newer(a: &ReplicaSet, b: &ReplicaSet) -> Ordering {
    rs_replicas(b)
        .cmp(&rs_replicas(a))
        .then_with(|| replica_sets_by_creation_timestamp(b, a))
}

/// Mirrors `controller.FilterActiveReplicaSets`: those with replicas.
pub fn filter_active_replica_sets(rss: &[Arc<ReplicaSet>]) -> Vec<Arc<ReplicaSet>> {
    rss.iter()
        .filter(|rs| rs_replicas(rs) > 0)
        .cloned()
        .collect()
}

// ANCHOR: compute_hash
/// Mirrors `controller.ComputeHash`: the `pod-template-hash` of a template.
///
/// Upstream hashes the template printed by `spew` (`DeepHashObject`) with
/// FNV-32a, then the collision count as 4 little-endian bytes, and renders the
/// 32-bit sum's decimal digits through `rand.SafeEncodeString`. Here the
/// template is printed as its JSON (k8s-openapi's field order, labels and
/// annotations sorted by key: the same bytes for the same template on every
/// run and machine), then the same FNV-32a, collision bytes and rendering. The
/// value differs from Go's for the same template, and is as stable.
pub fn compute_hash(
    template: &PodTemplateSpec,
    collision_count: Option<i32>,
) -> String {
    let printed = serde_json::to_vec(template).unwrap_or_default();
    let mut hash = fnv32a(FNV32_OFFSET_BASIS, &printed);
    if let Some(count) = collision_count {
        hash = fnv32a(hash, &count.to_le_bytes());
    }
    safe_encode_string(&hash.to_string())
}
// ANCHOR_END: compute_hash

/// FNV-1a's 32-bit offset basis (`hash/fnv`).
const FNV32_OFFSET_BASIS: u32 = 0x811c_9dc5;
/// FNV-1a's 32-bit prime.
const FNV32_PRIME: u32 = 0x0100_0193;

/// `fnv.New32a().Write(bytes)` continued from `hash`.
fn fnv32a(mut hash: u32, bytes: &[u8]) -> u32 {
    for byte in bytes {
        hash ^= u32::from(*byte);
        hash = hash.wrapping_mul(FNV32_PRIME);
    }
    hash
}

/// apimachinery's `rand.SafeEncodeString`: each byte mapped to an alphabet
/// without vowels (no words) and without look-alikes (`0`/`o`, `1`/`l`, `3`).
fn safe_encode_string(s: &str) -> String {
    const ALPHANUMS: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    s.bytes()
        .map(|b| char::from(ALPHANUMS[usize::from(b) % ALPHANUMS.len()]))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::apps::v1::{
        DeploymentSpec, DeploymentStrategy, ReplicaSetSpec, ReplicaSetStatus,
        RollingUpdateDeployment,
    };
    use k8s_openapi::api::core::v1::{Container, PodSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        LabelSelector, OwnerReference,
    };

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// deployment_util_test.go's `generateDeployment`.
    fn generate_deployment(image: &str) -> Deployment {
        let pod_labels = labels(&[("name", image)]);
        Deployment {
            metadata: ObjectMeta {
                name: Some(image.into()),
                uid: Some(format!("uid-{image}")),
                annotations: Some(BTreeMap::new()),
                ..ObjectMeta::default()
            },
            spec: DeploymentSpec {
                replicas: Some(1),
                selector: LabelSelector {
                    match_labels: Some(pod_labels.clone()),
                    ..LabelSelector::default()
                },
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(pod_labels),
                        ..ObjectMeta::default()
                    }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: image.into(),
                            image: Some(image.into()),
                            image_pull_policy: Some("Always".into()),
                            ..Container::default()
                        }],
                        restart_policy: Some("Always".into()),
                        ..PodSpec::default()
                    }),
                },
                ..DeploymentSpec::default()
            },
            status: None,
        }
    }

    /// deployment_util_test.go's `generateRS`: a ReplicaSet with the
    /// Deployment's template, owned by it.
    fn generate_rs(deployment: &Deployment, name: &str) -> ReplicaSet {
        let template = deployment.spec.template.clone();
        let template_labels = template
            .metadata
            .as_ref()
            .and_then(|m| m.labels.clone())
            .unwrap_or_default();
        ReplicaSet {
            metadata: ObjectMeta {
                uid: Some(format!("uid-{name}")),
                name: Some(name.into()),
                labels: Some(template_labels.clone()),
                owner_references: Some(vec![OwnerReference {
                    api_version: "apps/v1".into(),
                    kind: "Deployment".into(),
                    name: deployment.metadata.name.clone().unwrap_or_default(),
                    uid: deployment.metadata.uid.clone().unwrap_or_default(),
                    controller: Some(true),
                    block_owner_deletion: None,
                }]),
                ..ObjectMeta::default()
            },
            spec: ReplicaSetSpec {
                replicas: Some(0),
                template: Some(template),
                selector: LabelSelector {
                    match_labels: Some(template_labels),
                    ..LabelSelector::default()
                },
                ..ReplicaSetSpec::default()
            },
            status: None,
        }
    }

    fn at(seconds: i64) -> Option<Time> {
        Some(Time(Timestamp::from_second(seconds).expect("a time")))
    }

    fn rolling(d: &mut Deployment, surge: IntOrString, unavailable: IntOrString) {
        d.spec.strategy = Some(DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(surge),
                max_unavailable: Some(unavailable),
            }),
        });
    }

    fn pod_template(
        name: &str,
        node: &str,
        annotations: &[(&str, &str)],
        label_pairs: &[(&str, &str)],
    ) -> PodTemplateSpec {
        PodTemplateSpec {
            metadata: Some(ObjectMeta {
                name: Some(name.into()),
                annotations: Some(labels(annotations)),
                labels: Some(labels(label_pairs)),
                ..ObjectMeta::default()
            }),
            spec: Some(PodSpec {
                node_name: Some(node.into()),
                ..PodSpec::default()
            }),
        }
    }

    /// deployment_util_test.go's `TestEqualIgnoreHash`, both ways round.
    #[test]
    fn test_equal_ignore_hash() {
        const H: &str = DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY;
        let cases = [
            (
                "Same spec, same labels",
                pod_template(
                    "foo",
                    "foo-node",
                    &[],
                    &[(H, "value-1"), ("something", "else")],
                ),
                pod_template(
                    "foo",
                    "foo-node",
                    &[],
                    &[(H, "value-1"), ("something", "else")],
                ),
                true,
            ),
            (
                "Same spec, only pod-template-hash label value is different",
                pod_template(
                    "foo",
                    "foo-node",
                    &[],
                    &[(H, "value-1"), ("something", "else")],
                ),
                pod_template(
                    "foo",
                    "foo-node",
                    &[],
                    &[(H, "value-2"), ("something", "else")],
                ),
                true,
            ),
            (
                "Same spec, the former doesn't have pod-template-hash label",
                pod_template("foo", "foo-node", &[], &[("something", "else")]),
                pod_template(
                    "foo",
                    "foo-node",
                    &[],
                    &[(H, "value-2"), ("something", "else")],
                ),
                true,
            ),
            (
                "Same spec, the label is different, the former doesn't have pod-template-hash label, same number of labels",
                pod_template("foo", "foo-node", &[], &[("something", "else")]),
                pod_template("foo", "foo-node", &[], &[(H, "value-2")]),
                false,
            ),
            (
                "Same spec, the label is different, the latter doesn't have pod-template-hash label, same number of labels",
                pod_template("foo", "foo-node", &[], &[(H, "value-1")]),
                pod_template("foo", "foo-node", &[], &[("something", "else")]),
                false,
            ),
            (
                "Same spec, the label is different, and the pod-template-hash label value is the same",
                pod_template("foo", "foo-node", &[], &[(H, "value-1")]),
                pod_template(
                    "foo",
                    "foo-node",
                    &[],
                    &[(H, "value-1"), ("something", "else")],
                ),
                false,
            ),
            (
                "Different spec, same labels",
                pod_template(
                    "foo",
                    "foo-node",
                    &[("former", "value")],
                    &[(H, "value-1"), ("something", "else")],
                ),
                pod_template(
                    "foo",
                    "foo-node",
                    &[("latter", "value")],
                    &[(H, "value-1"), ("something", "else")],
                ),
                false,
            ),
            (
                "Different spec, different pod-template-hash label value",
                pod_template(
                    "foo-1",
                    "foo-node",
                    &[],
                    &[(H, "value-1"), ("something", "else")],
                ),
                pod_template(
                    "foo-2",
                    "foo-node",
                    &[],
                    &[(H, "value-2"), ("something", "else")],
                ),
                false,
            ),
            (
                "Different spec, the former doesn't have pod-template-hash label",
                pod_template("foo-1", "foo-node-1", &[], &[("something", "else")]),
                pod_template(
                    "foo-2",
                    "foo-node-2",
                    &[],
                    &[(H, "value-2"), ("something", "else")],
                ),
                false,
            ),
            (
                "Different spec, different labels",
                pod_template("foo", "foo-node-1", &[], &[("something", "else")]),
                pod_template("foo", "foo-node-2", &[], &[("nothing", "else")]),
                false,
            ),
        ];
        for (name, former, latter, expected) in cases {
            assert_eq!(equal_ignore_hash(&former, &latter), expected, "{name}");
            assert_eq!(
                equal_ignore_hash(&latter, &former),
                expected,
                "{name} (reverse order)"
            );
            // The inputs are untouched (upstream checks their labels stay).
            assert!(
                former
                    .metadata
                    .as_ref()
                    .and_then(|m| m.labels.as_ref())
                    .is_some()
            );
        }
    }

    /// deployment_util_test.go's `TestFindNewReplicaSet`.
    #[test]
    fn test_find_new_replica_set() {
        let deployment = generate_deployment("nginx");
        let mut new_rs = generate_rs(&deployment, "nginx-new");
        new_rs
            .spec
            .template
            .as_mut()
            .unwrap()
            .metadata
            .as_mut()
            .unwrap()
            .labels
            .as_mut()
            .unwrap()
            .insert(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.into(), "hash".into());
        new_rs.metadata.creation_timestamp = at(60);
        let mut new_rs_dup = generate_rs(&deployment, "nginx-dup");
        new_rs_dup
            .spec
            .template
            .as_mut()
            .unwrap()
            .metadata
            .as_mut()
            .unwrap()
            .labels
            .as_mut()
            .unwrap()
            .insert(
                DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.into(),
                "different-hash".into(),
            );
        new_rs_dup.metadata.creation_timestamp = at(0);
        let mut old_deployment = generate_deployment("nginx");
        old_deployment
            .spec
            .template
            .spec
            .as_mut()
            .unwrap()
            .containers[0]
            .name = "nginx-old-1".into();
        let old_rs = generate_rs(&old_deployment, "nginx-old");
        let (new_rs, new_rs_dup, old_rs) =
            (Arc::new(new_rs), Arc::new(new_rs_dup), Arc::new(old_rs));

        let name =
            |rs: Option<Arc<ReplicaSet>>| rs.and_then(|r| r.metadata.name.clone());
        // Same template as the Deployment, a different hash.
        assert_eq!(
            name(find_new_replica_set(
                &deployment,
                &[Arc::clone(&new_rs), Arc::clone(&old_rs)]
            )),
            Some("nginx-new".into())
        );
        // The oldest when several have the template.
        assert_eq!(
            name(find_new_replica_set(
                &deployment,
                &[
                    Arc::clone(&new_rs),
                    Arc::clone(&old_rs),
                    Arc::clone(&new_rs_dup)
                ]
            )),
            Some("nginx-dup".into())
        );
        assert_eq!(
            name(find_new_replica_set(&deployment, &[Arc::clone(&old_rs)])),
            None
        );
    }

    /// deployment_util_test.go's `TestFindOldReplicaSets`.
    #[test]
    fn test_find_old_replica_sets() {
        let deployment = generate_deployment("nginx");
        let mut new_rs = generate_rs(&deployment, "nginx-new");
        new_rs.spec.replicas = Some(1);
        new_rs.metadata.creation_timestamp = at(120);
        let mut new_rs_dup = generate_rs(&deployment, "nginx-dup");
        new_rs_dup.metadata.creation_timestamp = at(60);
        let mut old_deployment = generate_deployment("nginx");
        old_deployment
            .spec
            .template
            .spec
            .as_mut()
            .unwrap()
            .containers[0]
            .name = "nginx-old-1".into();
        let mut old_rs = generate_rs(&old_deployment, "nginx-old");
        old_rs.metadata.creation_timestamp = at(0);
        let (new_rs, new_rs_dup, old_rs) =
            (Arc::new(new_rs), Arc::new(new_rs_dup), Arc::new(old_rs));
        let names = |rss: Vec<Arc<ReplicaSet>>| -> Vec<String> {
            let mut rss = rss;
            rss.sort_by(|a, b| replica_sets_by_creation_timestamp(a, b));
            rss.iter()
                .map(|r| r.metadata.name.clone().unwrap_or_default())
                .collect()
        };
        let (required, all) = find_old_replica_sets(
            &deployment,
            &[Arc::clone(&new_rs), Arc::clone(&old_rs)],
        );
        assert_eq!(
            (names(all), names(required)),
            (vec!["nginx-old".to_string()], vec![])
        );
        let (required, all) =
            find_old_replica_sets(&deployment, &[Arc::clone(&old_rs)]);
        assert_eq!(
            (names(all), names(required)),
            (vec!["nginx-old".to_string()], vec![])
        );
        // Only the oldest of two with the template is new.
        let (required, all) = find_old_replica_sets(
            &deployment,
            &[
                Arc::clone(&old_rs),
                Arc::clone(&new_rs),
                Arc::clone(&new_rs_dup),
            ],
        );
        assert_eq!(names(all), ["nginx-old", "nginx-new"]);
        assert_eq!(names(required), ["nginx-new"]);
        let (required, all) =
            find_old_replica_sets(&deployment, &[Arc::clone(&new_rs)]);
        assert!(all.is_empty() && required.is_empty());
    }

    /// deployment_util_test.go's `TestGetReplicaCountForReplicaSets` (the
    /// spec and actual counts; terminating replicas are not tracked here).
    #[test]
    fn test_get_replica_count_for_replica_sets() {
        let with = |name: &str, spec: i32, status: i32| {
            let mut rs = generate_rs(&generate_deployment(name), name);
            rs.spec.replicas = Some(spec);
            rs.status = Some(ReplicaSetStatus {
                replicas: status,
                ..ReplicaSetStatus::default()
            });
            Arc::new(rs)
        };
        let rs1 = with("foo-rs", 1, 2);
        let rs2 = with("bar-rs", 2, 3);
        let rs3 = with("unsynced-rs", 3, 0);
        for (name, sets, count, actual) in [
            ("scaling down rs1", vec![Arc::clone(&rs1)], 1, 2),
            (
                "scaling down rs1 and rs2",
                vec![Arc::clone(&rs1), Arc::clone(&rs2)],
                3,
                5,
            ),
            ("scaling up rs3", vec![Arc::clone(&rs3)], 3, 0),
            (
                "scaling down rs1 and rs2 and scaling up rs3",
                vec![Arc::clone(&rs1), Arc::clone(&rs2), Arc::clone(&rs3)],
                6,
                5,
            ),
        ] {
            assert_eq!(get_replica_count_for_replica_sets(&sets), count, "{name}");
            assert_eq!(
                get_actual_replica_count_for_replica_sets(&sets),
                actual,
                "{name}"
            );
        }
    }

    /// deployment_util_test.go's `TestResolveFenceposts`.
    #[test]
    fn test_resolve_fenceposts() {
        let s = |v: &str| Some(IntOrString::String(v.into()));
        /// (maxSurge, maxUnavailable, desired, (surge, unavailable) or an error)
        type Case = (
            Option<IntOrString>,
            Option<IntOrString>,
            i32,
            Option<(i32, i32)>,
        );
        let cases: [Case; 7] = [
            (s("0%"), s("0%"), 0, Some((0, 1))),
            (s("39%"), s("39%"), 10, Some((4, 3))),
            (s("oops"), s("39%"), 10, None),
            (s("55%"), s("urg"), 10, None),
            (None, s("39%"), 10, Some((0, 3))),
            (s("39%"), None, 10, Some((4, 0))),
            (None, None, 10, Some((0, 1))),
        ];
        for (num, (surge, unavailable, desired, expected)) in
            cases.into_iter().enumerate()
        {
            let got =
                resolve_fenceposts(surge.as_ref(), unavailable.as_ref(), desired)
                    .ok();
            assert_eq!(got, expected, "#{num}");
        }
    }

    /// deployment_util_test.go's `TestNewRSNewReplicas`.
    #[test]
    fn test_new_rs_new_replicas() {
        let cases = [
            (
                "can not scale up - to newRSReplicas",
                "RollingUpdate",
                1,
                5,
                1,
                5,
            ),
            ("scale up - to depReplicas", "RollingUpdate", 6, 2, 10, 6),
            ("recreate - to depReplicas", "Recreate", 3, 1, 1, 3),
        ];
        let mut deployment = generate_deployment("nginx");
        let mut new_rc = generate_rs(&deployment, "new");
        let mut rs5 = generate_rs(&deployment, "rs5");
        rs5.spec.replicas = Some(5);
        let rs5 = Arc::new(rs5);
        for (name, strategy, dep_replicas, new_rs_replicas, surge, expected) in cases
        {
            deployment.spec.replicas = Some(dep_replicas);
            rolling(
                &mut deployment,
                IntOrString::Int(surge),
                IntOrString::Int(1),
            );
            deployment.spec.strategy.as_mut().unwrap().type_ = Some(strategy.into());
            new_rc.spec.replicas = Some(new_rs_replicas);
            let got = new_rs_new_replicas(&deployment, &[Arc::clone(&rs5)], &new_rc)
                .expect("no error");
            assert_eq!(got, expected, "{name}");
        }
    }

    fn condition(
        type_: DeploymentConditionType,
        status: ConditionStatus,
        reason: &str,
    ) -> DeploymentCondition {
        DeploymentCondition {
            type_: Some(type_.as_str().into()),
            status: Some(status.as_str().into()),
            reason: Some(reason.into()),
            ..DeploymentCondition::default()
        }
    }

    /// deployment_util_test.go's `TestGetCondition`, `TestSetCondition` and
    /// `TestRemoveCondition`.
    #[test]
    fn test_set_get_and_remove_condition() {
        use ConditionStatus::{False, True};
        use DeploymentConditionType::{Available, Progressing, ReplicaFailure};
        let cond_progressing = condition(Progressing, False, "ForSomeReason");
        let cond_progressing2 = condition(Progressing, True, "BecauseItIs");
        let cond_available = condition(Available, True, "AwesomeController");
        let status = || DeploymentStatus {
            conditions: Some(vec![cond_progressing.clone(), cond_available.clone()]),
            ..DeploymentStatus::default()
        };
        assert!(get_deployment_condition(&status(), Available).is_some());
        assert!(get_deployment_condition(&status(), ReplicaFailure).is_none());

        let mut first = DeploymentStatus::default();
        set_deployment_condition(&mut first, cond_available.clone());
        assert_eq!(
            first.conditions,
            Some(vec![cond_available.clone()]),
            "set for the first time"
        );
        let mut simple = DeploymentStatus {
            conditions: Some(vec![cond_progressing.clone()]),
            ..DeploymentStatus::default()
        };
        set_deployment_condition(&mut simple, cond_available.clone());
        assert_eq!(simple, status(), "simple set");
        let mut overwrite = DeploymentStatus {
            conditions: Some(vec![cond_progressing.clone()]),
            ..DeploymentStatus::default()
        };
        set_deployment_condition(&mut overwrite, cond_progressing2.clone());
        assert_eq!(
            overwrite.conditions,
            Some(vec![cond_progressing2]),
            "overwrite"
        );

        let mut empty = DeploymentStatus::default();
        remove_deployment_condition(&mut empty, Progressing);
        assert_eq!(
            empty,
            DeploymentStatus::default(),
            "remove from empty status"
        );
        let mut one = DeploymentStatus {
            conditions: Some(vec![cond_progressing.clone()]),
            ..DeploymentStatus::default()
        };
        remove_deployment_condition(&mut one, Progressing);
        assert_eq!(one, DeploymentStatus::default(), "simple remove");
        let mut untouched = status();
        remove_deployment_condition(&mut untouched, ReplicaFailure);
        assert_eq!(untouched, status(), "doesn't remove anything");
    }

    fn with_status(
        desired: i32,
        current: i32,
        updated: i32,
        available: i32,
        max_unavailable: i32,
        max_surge: i32,
    ) -> Deployment {
        let mut d = generate_deployment("d");
        d.spec.replicas = Some(desired);
        rolling(
            &mut d,
            IntOrString::Int(max_surge),
            IntOrString::Int(max_unavailable),
        );
        d.status = Some(DeploymentStatus {
            replicas: Some(current),
            updated_replicas: Some(updated),
            available_replicas: Some(available),
            ..DeploymentStatus::default()
        });
        d
    }

    /// deployment_util_test.go's `TestDeploymentComplete`.
    #[test]
    fn test_deployment_complete() {
        let cases = [
            (
                "not complete: min but not all pods become available",
                with_status(5, 5, 5, 4, 1, 0),
                false,
            ),
            (
                "not complete: min availability is not honored",
                with_status(5, 5, 5, 3, 1, 0),
                false,
            ),
            ("complete", with_status(5, 5, 5, 5, 0, 0), true),
            (
                "not complete: all pods are available but not updated",
                with_status(5, 5, 4, 5, 0, 0),
                false,
            ),
            (
                "not complete: still running old pods",
                with_status(1, 2, 1, 1, 0, 1),
                false,
            ),
            (
                "not complete: one replica deployment never comes up",
                with_status(1, 1, 1, 0, 1, 1),
                false,
            ),
        ];
        for (name, d, expected) in cases {
            let status = d.status.clone().unwrap_or_default();
            assert_eq!(deployment_complete(&d, &status), expected, "{name}");
        }
    }

    /// deployment_util_test.go's `TestDeploymentProgressing`.
    #[test]
    fn test_deployment_progressing() {
        let status = |current, updated, ready, available| DeploymentStatus {
            replicas: Some(current),
            updated_replicas: Some(updated),
            ready_replicas: Some(ready),
            available_replicas: Some(available),
            ..DeploymentStatus::default()
        };
        let deployment = |s: DeploymentStatus| {
            let mut d = generate_deployment("d");
            d.status = Some(s);
            d
        };
        let cases = [
            (
                "progressing: updated pods",
                status(10, 4, 4, 4),
                status(10, 6, 4, 4),
                true,
            ),
            (
                "not progressing",
                status(10, 4, 4, 4),
                status(10, 4, 4, 4),
                false,
            ),
            (
                "progressing: old pods removed",
                status(10, 4, 6, 6),
                status(8, 4, 6, 6),
                true,
            ),
            (
                "not progressing: less new pods",
                status(10, 7, 3, 3),
                status(10, 6, 3, 3),
                false,
            ),
            (
                "progressing: less overall but more new pods",
                status(10, 4, 7, 7),
                status(8, 8, 5, 5),
                true,
            ),
            (
                "progressing: more ready pods",
                status(10, 10, 9, 8),
                status(10, 10, 10, 8),
                true,
            ),
            (
                "progressing: more available pods",
                status(10, 10, 10, 9),
                status(10, 10, 10, 10),
                true,
            ),
        ];
        for (name, old, new, expected) in cases {
            assert_eq!(
                deployment_progressing(&deployment(old), &new),
                expected,
                "{name}"
            );
        }
    }

    /// deployment_util_test.go's `TestDeploymentTimedOut`.
    #[test]
    fn test_deployment_timed_out() {
        // 2016-01-01T00:00:00Z plus minutes and seconds.
        let time = |min: i64, sec: i64| {
            Timestamp::from_second(1_451_606_400 + min * 60 + sec).expect("a time")
        };
        let deployment = |reason: &str, pds: Option<i32>, from: Timestamp| {
            let mut d = generate_deployment("d");
            d.spec.progress_deadline_seconds = pds;
            d.status = Some(DeploymentStatus {
                conditions: Some(vec![DeploymentCondition {
                    last_update_time: Some(Time(from)),
                    ..condition(
                        DeploymentConditionType::Progressing,
                        ConditionStatus::True,
                        reason,
                    )
                }]),
                ..DeploymentStatus::default()
            });
            d
        };
        let cases = [
            (
                "nil progressDeadlineSeconds specified - no timeout",
                deployment("", None, time(1, 9)),
                time(1, 20),
                false,
            ),
            (
                "infinite progressDeadlineSeconds specified - no timeout",
                deployment("", Some(i32::MAX), time(1, 9)),
                time(1, 20),
                false,
            ),
            (
                "progressDeadlineSeconds: 10s, now - started => 00:01:20 - 00:01:09 => 11s",
                deployment("", Some(10), time(1, 9)),
                time(1, 20),
                true,
            ),
            (
                "progressDeadlineSeconds: 10s, now - started => 00:01:20 - 00:01:11 => 9s",
                deployment("", Some(10), time(1, 11)),
                time(1, 20),
                false,
            ),
            (
                "previous status was a complete deployment",
                deployment(NEW_RS_AVAILABLE_REASON, None, Timestamp::UNIX_EPOCH),
                time(1, 20),
                false,
            ),
        ];
        for (name, d, now, expected) in cases {
            let status = d.status.clone().unwrap_or_default();
            assert_eq!(deployment_timed_out(&d, &status, now), expected, "{name}");
        }
    }

    /// deployment_util_test.go's `TestMaxUnavailable`.
    #[test]
    fn test_max_unavailable() {
        let deployment = |replicas: i32, max_unavailable: IntOrString| {
            let mut d = generate_deployment("d");
            d.spec.replicas = Some(replicas);
            rolling(&mut d, IntOrString::Int(1), max_unavailable);
            d
        };
        let mut recreate = generate_deployment("d");
        recreate.spec.strategy = Some(DeploymentStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
        let pct = |s: &str| IntOrString::String(s.into());
        let cases = [
            (
                "maxUnavailable less than replicas",
                deployment(10, IntOrString::Int(5)),
                5,
            ),
            (
                "maxUnavailable equal replicas",
                deployment(10, IntOrString::Int(10)),
                10,
            ),
            (
                "maxUnavailable greater than replicas",
                deployment(5, IntOrString::Int(10)),
                5,
            ),
            (
                "maxUnavailable with replicas is 0",
                deployment(0, IntOrString::Int(10)),
                0,
            ),
            (
                "maxUnavailable with Recreate deployment strategy",
                recreate,
                0,
            ),
            (
                "maxUnavailable less than replicas with percents",
                deployment(10, pct("50%")),
                5,
            ),
            (
                "maxUnavailable equal replicas with percents",
                deployment(10, pct("100%")),
                10,
            ),
            (
                "maxUnavailable greater than replicas with percents",
                deployment(5, pct("100%")),
                5,
            ),
        ];
        for (name, d, expected) in cases {
            assert_eq!(max_unavailable(&d), expected, "{name}");
        }
    }

    /// deployment_util_test.go's `TestMinAvailable`.
    #[test]
    fn test_min_available() {
        let deployment = |replicas: i32, max_unavailable: IntOrString| {
            let mut d = generate_deployment("d");
            d.spec.replicas = Some(replicas);
            rolling(&mut d, IntOrString::Int(1), max_unavailable);
            d
        };
        let mut recreate = generate_deployment("d");
        recreate.spec.replicas = Some(10);
        recreate.spec.strategy = Some(DeploymentStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
        let pct = |s: &str| IntOrString::String(s.into());
        let cases = [
            (
                "replicas greater than maxUnavailable",
                deployment(10, IntOrString::Int(5)),
                5,
            ),
            (
                "replicas equal maxUnavailable",
                deployment(10, IntOrString::Int(10)),
                0,
            ),
            (
                "replicas less than maxUnavailable",
                deployment(5, IntOrString::Int(10)),
                0,
            ),
            ("replicas is 0", deployment(0, IntOrString::Int(10)), 0),
            (
                "minAvailable with Recreate deployment strategy",
                recreate,
                0,
            ),
            (
                "replicas greater than maxUnavailable with percents",
                deployment(10, pct("60%")),
                4,
            ),
            (
                "replicas equal maxUnavailable with percents",
                deployment(10, pct("100%")),
                0,
            ),
            (
                "replicas less than maxUnavailable with percents",
                deployment(5, pct("100%")),
                0,
            ),
        ];
        for (name, d, expected) in cases {
            assert_eq!(min_available(&d), expected, "{name}");
        }
    }

    /// deployment_util_test.go's `TestGetNonNegativeInt32FromAnnotation`.
    #[test]
    fn test_get_non_negative_int32_from_annotation() {
        let max = i32::MAX.to_string();
        let above = (u64::from(i32::MAX.unsigned_abs()) + 1).to_string();
        let way_above = (u64::from(u32::MAX) + 1).to_string();
        /// (name, the annotation, the value or the error's words)
        type Case<'a> = (&'a str, Option<&'a str>, Result<Option<i32>, &'a str>);
        let cases: [Case; 8] = [
            ("invalid empty", None, Ok(None)),
            ("invalid", Some("invalid"), Err("invalid syntax")),
            ("invalid negative ", Some("-1"), Err("invalid syntax")),
            ("valid zero", Some("0"), Ok(Some(0))),
            ("valid", Some("13"), Ok(Some(13))),
            ("valid max", Some(&max), Ok(Some(i32::MAX))),
            (
                "invalid max out of range",
                Some(&above),
                Err("out of range"),
            ),
            (
                "invalid max out of range 2",
                Some(&way_above),
                Err("out of range"),
            ),
        ];
        for (name, value, expected) in cases {
            let mut rs = generate_rs(&generate_deployment("nginx"), "rs");
            let mut annotations = labels(&[("foo", "2")]);
            if let Some(value) = value {
                annotations.insert("test".into(), value.into());
            }
            rs.metadata.annotations = Some(annotations);
            let got = get_non_negative_int32_from_annotation(&rs, "test");
            match (got, expected) {
                (Ok(got), Ok(expected)) => assert_eq!(got, expected, "{name}"),
                (Err(error), Err(expected)) => {
                    assert!(error.to_string().contains(expected), "{name}: {error}");
                }
                (got, expected) => {
                    panic!("{name}: got {got:?}, expected {expected:?}")
                }
            }
        }
    }

    /// deployment_util_test.go's `TestAnnotationUtils`: revisions, their
    /// history, the replicas annotations and saturation.
    #[test]
    fn test_annotation_utils() {
        let mut deployment = generate_deployment("nginx");
        let mut rs = generate_rs(&deployment, "nginx-rs");
        deployment
            .metadata
            .annotations
            .get_or_insert_default()
            .insert(REVISION_ANNOTATION.into(), "1".into());
        for i in 10..20 {
            let next_revision = (i + 1).to_string();
            set_new_replica_set_annotations(
                &deployment,
                &mut rs,
                &next_revision,
                true,
                5,
            );
            let annotations = rs.metadata.annotations.clone().unwrap_or_default();
            if i >= 12 {
                assert_eq!(
                    annotations.get(REVISION_HISTORY_ANNOTATION),
                    Some(&format!("{},{}", i - 1, i)),
                    "revision history at {i}"
                );
            }
            assert_eq!(annotations.get(REVISION_ANNOTATION), Some(&next_revision));
        }

        assert!(
            set_replicas_annotations(&mut rs, 10, 11),
            "SetReplicasAnnotations"
        );
        let annotations = rs.metadata.annotations.clone().unwrap_or_default();
        assert_eq!(
            annotations
                .get(DESIRED_REPLICAS_ANNOTATION)
                .map(String::as_str),
            Some("10")
        );
        assert_eq!(
            annotations.get(MAX_REPLICAS_ANNOTATION).map(String::as_str),
            Some("11")
        );

        rs.metadata
            .annotations
            .get_or_insert_default()
            .insert(DESIRED_REPLICAS_ANNOTATION.into(), "1".into());
        rs.status = Some(ReplicaSetStatus {
            available_replicas: Some(1),
            ..ReplicaSetStatus::default()
        });
        rs.spec.replicas = Some(1);
        assert!(is_saturated(&deployment, Some(&rs)), "IsSaturated");
    }

    /// deployment_util_test.go's `TestReplicasAnnotationsNeedUpdate`.
    #[test]
    fn test_replicas_annotations_need_update() {
        let rs = |annotations: Option<&[(&str, &str)]>| ReplicaSet {
            metadata: ObjectMeta {
                name: Some("hello".into()),
                namespace: Some("test".into()),
                annotations: annotations.map(labels),
                ..ObjectMeta::default()
            },
            ..ReplicaSet::default()
        };
        let cases = [
            ("test Annotations nil", rs(None), true),
            (
                "test desiredReplicas update",
                rs(Some(&[
                    (DESIRED_REPLICAS_ANNOTATION, "8"),
                    (MAX_REPLICAS_ANNOTATION, "20"),
                ])),
                true,
            ),
            (
                "test maxReplicas update",
                rs(Some(&[
                    (DESIRED_REPLICAS_ANNOTATION, "10"),
                    (MAX_REPLICAS_ANNOTATION, "16"),
                ])),
                true,
            ),
            (
                "test needn't update",
                rs(Some(&[
                    (DESIRED_REPLICAS_ANNOTATION, "10"),
                    (MAX_REPLICAS_ANNOTATION, "20"),
                ])),
                false,
            ),
        ];
        for (name, rs, expected) in cases {
            assert_eq!(
                replicas_annotations_need_update(&rs, 10, 20),
                expected,
                "{name}"
            );
        }
    }

    /// deployment_util_test.go's `TestGetReplicaSetFraction`.
    #[test]
    fn test_get_replica_set_fraction() {
        /// (name, replicas, status replicas, maxSurge, RS replicas,
        /// max-replicas annotation, fraction)
        type Case = (&'static str, i32, i32, i32, i32, Option<&'static str>, i32);
        let cases: [Case; 9] = [
            (
                "empty deployment always scales to 0",
                0,
                0,
                0,
                10,
                None,
                -10,
            ),
            (
                "unsynced deployment does not scale when max-replicas annotation is missing (removed by a 3rd party)",
                10,
                0,
                0,
                5,
                None,
                0,
            ),
            (
                "unsynced deployment does not scale when max-replicas annotation is incorrectly set to 0 (by a 3rd party)",
                10,
                0,
                0,
                5,
                Some("0"),
                0,
            ),
            (
                "scale up by 1/5 should increase RS replicas by 1/5 when max-replicas annotation is missing (removed by a 3rd party)",
                120,
                100,
                0,
                50,
                None,
                10,
            ),
            (
                "scale up by 1/5 should increase RS replicas by 1/5 when max-replicas annotation is incorrectly set to 0 (by a 3rd party)",
                120,
                100,
                0,
                50,
                Some("0"),
                10,
            ),
            (
                "scale up by 1/5 should increase RS replicas by 1/5",
                120,
                0,
                0,
                50,
                Some("100"),
                10,
            ),
            (
                "scale up with maxSurge by 1/5 should increase RS replicas approximately by 1/5",
                120,
                0,
                10,
                50,
                Some("110"),
                9,
            ),
            (
                "scale down by 1/6 should decrease RS replicas by 1/6",
                10,
                0,
                0,
                6,
                Some("12"),
                -1,
            ),
            (
                "scale down with maxSurge by 1/6 should decrease RS replicas approximately by 1/6",
                100,
                0,
                10,
                50,
                Some("130"),
                -8,
            ),
        ];
        for (
            name,
            replicas,
            status_replicas,
            surge,
            rs_replicas,
            max_annotation,
            expected,
        ) in cases
        {
            let mut d = generate_deployment("nginx");
            d.status = Some(DeploymentStatus {
                replicas: Some(status_replicas),
                ..DeploymentStatus::default()
            });
            d.spec.replicas = Some(replicas);
            rolling(&mut d, IntOrString::Int(surge), IntOrString::Int(1));
            let mut rs = generate_rs(&d, "rs");
            rs.metadata.annotations =
                max_annotation.map(|v| labels(&[(MAX_REPLICAS_ANNOTATION, v)]));
            rs.spec.replicas = Some(rs_replicas);
            assert_eq!(get_replica_set_fraction(&rs, &d), expected, "{name}");
        }
    }

    /// deployment_util_test.go's `TestGetDeploymentsForReplicaSet`, over a
    /// lister built on a store filled by hand.
    #[test]
    fn test_get_deployments_for_replica_set() {
        use stage1_store::{Cache, Store as _};
        let cache = Arc::new(Cache::<Deployment>::for_resources());
        for i in 0..3 {
            let mut d = Deployment::default();
            d.metadata.name = Some(format!("deployment-{i}"));
            d.metadata.namespace = Some("test".into());
            d.spec.selector.match_labels =
                Some(labels(&[("app", &format!("test-{i}"))]));
            cache.add(Arc::new(d)).expect("added");
        }
        let lister = Lister::new(cache);
        for i in 0..5 {
            let rs = ReplicaSet {
                metadata: ObjectMeta {
                    namespace: Some("test".into()),
                    name: Some(format!("test-replicaSet-{i}")),
                    labels: Some(labels(&[
                        ("app", &format!("test-{i}")),
                        ("label", &format!("label-{i}")),
                    ])),
                    ..ObjectMeta::default()
                },
                ..ReplicaSet::default()
            };
            let got: Vec<String> = get_deployments_for_replica_set(&lister, &rs)
                .iter()
                .map(|d| d.metadata.name.clone().unwrap_or_default())
                .collect();
            let expected: Vec<String> = if i < 3 {
                vec![format!("deployment-{i}")]
            } else {
                vec![]
            };
            assert_eq!(got, expected, "GetDeploymentsForReplicaSet for rs-{i}");
        }
    }

    /// hash_test.go's `TestPodTemplateSpecHash`: the hash is the same for the
    /// same template on every call, and each collision count gives another.
    #[test]
    fn test_pod_template_spec_hash() {
        let d = generate_deployment("nginx");
        let hash = compute_hash(&d.spec.template, None);
        assert_eq!(hash, compute_hash(&d.spec.template.clone(), None));
        assert!(
            hash.bytes()
                .all(|b| b"bcdfghjklmnpqrstvwxz2456789".contains(&b))
        );
        let mut seen = std::collections::HashSet::new();
        for count in 0..100 {
            assert!(
                seen.insert(compute_hash(&d.spec.template, Some(count))),
                "collision count {count}"
            );
        }
        assert!(!seen.contains(&hash));
        let other = generate_deployment("httpd");
        assert_ne!(compute_hash(&other.spec.template, None), hash);
    }

    /// apimachinery's `TestSafeEncodeString` and FNV-32a's reference vectors.
    #[test]
    fn safe_encode_string_and_fnv32a_match_upstream() {
        assert_eq!(fnv32a(FNV32_OFFSET_BASIS, b""), 0x811c_9dc5);
        assert_eq!(fnv32a(FNV32_OFFSET_BASIS, b"a"), 0xe40c_292c);
        assert_eq!(fnv32a(FNV32_OFFSET_BASIS, b"foobar"), 0xbf9c_f968);
        // '0' is byte 48, 48 % 27 = 21 -> '4'; '9' is 57 % 27 = 3 -> 'f'.
        assert_eq!(safe_encode_string("0"), "4");
        assert_eq!(safe_encode_string("9"), "f");
        assert_eq!(safe_encode_string("1234567890"), "56789bcdf4");
    }

    #[test]
    fn replica_set_orderings() {
        let rs = |name: &str, replicas: i32, created: i64| {
            Arc::new(ReplicaSet {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    creation_timestamp: at(created),
                    annotations: Some(labels(&[(
                        REVISION_ANNOTATION,
                        &created.to_string(),
                    )])),
                    ..ObjectMeta::default()
                },
                spec: ReplicaSetSpec {
                    replicas: Some(replicas),
                    ..ReplicaSetSpec::default()
                },
                status: None,
            })
        };
        let mut rss = vec![rs("b", 1, 2), rs("a", 1, 1), rs("c", 3, 3)];
        let names = |rss: &[Arc<ReplicaSet>]| -> Vec<String> {
            rss.iter()
                .map(|r| r.metadata.name.clone().unwrap_or_default())
                .collect()
        };
        rss.sort_by(|a, b| replica_sets_by_size_older(a, b));
        assert_eq!(names(&rss), ["c", "a", "b"]);
        rss.sort_by(|a, b| replica_sets_by_size_newer(a, b));
        assert_eq!(names(&rss), ["c", "b", "a"]);
        rss.sort_by(|a, b| replica_sets_by_revision(a, b));
        assert_eq!(names(&rss), ["a", "b", "c"]);
        assert_eq!(max_revision(&rss), 3);
    }
}
