//! What every rollout shares: mirrors kubernetes'
//! [`pkg/controller/deployment/sync.go`] (`syncStatusOnly`, `sync`,
//! `checkPausedConditions`, `getAllReplicaSetsAndSyncRevision`,
//! `getNewReplicaSet`, `scale`, `scaleReplicaSetAndRecordEvent`,
//! `scaleReplicaSet`, `cleanupDeployment`, `syncDeploymentStatus`,
//! `calculateStatus`, `isScalingEvent`).
//!
//! ## The new ReplicaSet and the revisions
//!
//! The ReplicaSet whose template equals the Deployment's (but for the
//! `pod-template-hash` label) is the new one; the others are old. When there is
//! none, `getNewReplicaSet` creates `<deployment>-<hash>` with the hash in its
//! selector, labels and template, so its pods never match another ReplicaSet's.
//! The new ReplicaSet's revision is one more than the highest old revision; a
//! rollback (`kubectl rollout undo` puts an old template back) makes an old
//! ReplicaSet new again, with a new revision.
//!
//! ## Proportional scaling
//!
//! A Deployment scaled in the middle of a rollout (`kubectl scale`) scales all
//! its active ReplicaSets in proportion to their size, so the rollout's pace
//! is unchanged and a bad new template does not suddenly get more pods:
//! `scale` with `GetProportion`, the `max-replicas` annotation remembering the
//! size each ReplicaSet was sized for.
//!
//! ## Decisions and writes
//!
//! Upstream's functions decide and write in one; here the decision is a pure
//! function ([`scale_targets`], [`cleanup_candidates`], [`calculate_status`])
//! that the unit tests call, and the controller's method writes what it
//! decided, in the same order.
//!
//! [`pkg/controller/deployment/sync.go`]: https://github.com/kubernetes/kubernetes/blob/v1.36.0/pkg/controller/deployment/sync.go

use std::collections::HashMap;
use std::sync::Arc;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentStatus, ReplicaSet, ReplicaSetSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::jiff::Timestamp;
use kube::api::{Api, DeleteParams, PostParams};

use crate::controller_utils::{get_controller_of, key_of, new_controller_ref};
use crate::deployment::deployment_controller::{
    API_VERSION, DeploymentController, DeploymentError, KIND,
};
use crate::deployment::util::deployment_util::{
    ConditionStatus, DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, DeploymentConditionType,
    FAILED_RS_CREATE_REASON, FOUND_NEW_RS_REASON, MINIMUM_REPLICAS_AVAILABLE,
    MINIMUM_REPLICAS_UNAVAILABLE, NEW_REPLICA_SET_REASON, PAUSED_DEPLOY_REASON,
    RESUMED_DEPLOY_REASON, REVISION_ANNOTATION, TIMED_OUT_REASON, compute_hash,
    deployment_replicas, equal_ignore_hash, filter_active_replica_sets,
    find_active_or_latest, find_new_replica_set, find_old_replica_sets,
    get_actual_replica_count_for_replica_sets,
    get_available_replica_count_for_replica_sets, get_deployment_condition,
    get_desired_replicas_annotation, get_proportion,
    get_ready_replica_count_for_replica_sets, get_replica_count_for_replica_sets,
    has_progress_deadline, has_revision_history_limit, is_rolling_update,
    is_saturated, max_revision, max_surge, max_unavailable,
    new_deployment_condition, new_rs_new_replicas, replica_sets_by_revision,
    replica_sets_by_size_newer, replica_sets_by_size_older,
    replicas_annotations_need_update, rs_replicas, rs_status_replicas,
    set_deployment_condition, set_deployment_revision,
    set_new_replica_set_annotations, set_replicas_annotations,
};
use crate::record::{NORMAL, WARNING};

/// Mirrors `maxRevHistoryLengthInChars`: the `revision-history` annotation is
/// kept under 2000 characters (about 100 revisions).
pub const MAX_REV_HISTORY_LENGTH_IN_CHARS: usize = 2000;

// ANCHOR: resize
/// One ReplicaSet resize a sync decided, before it is written.
#[derive(Clone, Debug, PartialEq)]
pub enum Resize {
    /// `scaleReplicaSetAndRecordEvent`: written only if the size changes.
    AndRecordEvent {
        /// The ReplicaSet as the decision saw it.
        rs: Arc<ReplicaSet>,
        /// Its new `spec.replicas`.
        new_scale: i32,
    },
    /// `scaleReplicaSet` in proportional scaling: written if the size or the
    /// replicas annotations change; the event says `operation`.
    Proportional {
        /// The ReplicaSet as the decision saw it.
        rs: Arc<ReplicaSet>,
        /// Its new `spec.replicas`.
        new_scale: i32,
        /// `up`, `down`, or empty (the Deployment's size did not change).
        operation: &'static str,
    },
}
// ANCHOR_END: resize

impl Resize {
    /// The ReplicaSet to resize.
    pub fn rs(&self) -> &Arc<ReplicaSet> {
        match self {
            Self::AndRecordEvent { rs, .. } | Self::Proportional { rs, .. } => rs,
        }
    }

    /// Its new size.
    pub fn new_scale(&self) -> i32 {
        match self {
            Self::AndRecordEvent { new_scale, .. }
            | Self::Proportional { new_scale, .. } => *new_scale,
        }
    }

    /// Whether writing it changes anything for Deployment `d`.
    pub fn writes(&self, d: &Deployment) -> bool {
        match self {
            Self::AndRecordEvent { rs, new_scale } => rs_replicas(rs) != *new_scale,
            Self::Proportional { rs, new_scale, .. } => {
                let replicas = deployment_replicas(d);
                rs_replicas(rs) != *new_scale
                    || replicas_annotations_need_update(
                        rs,
                        replicas,
                        replicas + max_surge(d),
                    )
            }
        }
    }
}

impl DeploymentController {
    /// Mirrors `syncStatusOnly`: the status, and nothing else (a Deployment
    /// being deleted).
    pub(super) async fn sync_status_only(
        &self,
        d: &mut Deployment,
        rs_list: &[Arc<ReplicaSet>],
    ) -> Result<(), DeploymentError> {
        let (new_rs, old_rss) = self
            .get_all_replica_sets_and_sync_revision(d, rs_list, false)
            .await?;
        let all_rss = all_replica_sets(&old_rss, new_rs.as_ref());
        self.sync_deployment_status(&all_rss, new_rs.as_ref(), d)
            .await
    }

    /// Mirrors `sync`: a scaling event, or a paused Deployment: scales, cleans
    /// up old ReplicaSets when paused, and writes the status.
    pub(super) async fn sync(
        &self,
        d: &mut Deployment,
        rs_list: &[Arc<ReplicaSet>],
    ) -> Result<(), DeploymentError> {
        let (new_rs, old_rss) = self
            .get_all_replica_sets_and_sync_revision(d, rs_list, false)
            .await?;
        // A failed scale requeues the Deployment: abort this sync.
        self.scale(d, new_rs.as_ref(), &old_rss).await?;
        if d.spec.paused == Some(true) {
            self.cleanup_deployment(&old_rss, d).await?;
        }
        let all_rss = all_replica_sets(&old_rss, new_rs.as_ref());
        self.sync_deployment_status(&all_rss, new_rs.as_ref(), d)
            .await
    }

    /// Mirrors `checkPausedConditions`: a Progressing condition with reason
    /// `DeploymentPaused` (or `DeploymentResumed`) when the Deployment was
    /// paused (resumed), unless it already timed out.
    pub(super) async fn check_paused_conditions(
        &self,
        d: &mut Deployment,
    ) -> Result<(), DeploymentError> {
        if !has_progress_deadline(d) {
            return Ok(());
        }
        let status = d.status.get_or_insert_default();
        let reason =
            get_deployment_condition(status, DeploymentConditionType::Progressing)
                .and_then(|c| c.reason.clone());
        if reason.as_deref() == Some(TIMED_OUT_REASON) {
            // A reported lack of progress is not overwritten.
            return Ok(());
        }
        let paused_cond_exists = reason.as_deref() == Some(PAUSED_DEPLOY_REASON);
        let paused = d.spec.paused == Some(true);
        let condition = if paused && !paused_cond_exists {
            (PAUSED_DEPLOY_REASON, "Deployment is paused")
        } else if !paused && paused_cond_exists {
            (RESUMED_DEPLOY_REASON, "Deployment is resumed")
        } else {
            return Ok(());
        };
        let status = d.status.get_or_insert_default();
        set_deployment_condition(
            status,
            new_deployment_condition(
                DeploymentConditionType::Progressing,
                ConditionStatus::Unknown,
                condition.0,
                condition.1,
                Timestamp::now(),
            ),
        );
        self.update_status(d).await
    }

    // ANCHOR: get_all_replica_sets_and_sync_revision
    /// Mirrors `getAllReplicaSetsAndSyncRevision`: the new ReplicaSet (created
    /// if `create_if_not_existed`) with its revision raised above the old
    /// ones', and all the old ones. `rs_list` comes from
    /// `get_replica_sets_for_deployment`.
    pub(super) async fn get_all_replica_sets_and_sync_revision(
        &self,
        d: &mut Deployment,
        rs_list: &[Arc<ReplicaSet>],
        create_if_not_existed: bool,
    ) -> Result<(Option<Arc<ReplicaSet>>, Vec<Arc<ReplicaSet>>), DeploymentError>
    {
        let (_, all_old_rss) = find_old_replica_sets(d, rs_list);
        let new_rs = self
            .get_new_replica_set(d, rs_list, &all_old_rss, create_if_not_existed)
            .await?;
        Ok((new_rs, all_old_rss))
    }
    // ANCHOR_END: get_all_replica_sets_and_sync_revision

    // ANCHOR: get_new_replica_set
    /// Mirrors `getNewReplicaSet`: the ReplicaSet whose template is the
    /// Deployment's. One that exists gets its annotations synced (revision,
    /// the Deployment's annotations) and the Deployment the revision; without
    /// one, and with `create_if_not_existed`, it is created: named
    /// `<deployment>-<pod-template-hash>`, sized by `NewRSNewReplicas`. A name
    /// taken by another template is a hash collision: the Deployment's
    /// `collisionCount` goes up and the next sync tries another name.
    async fn get_new_replica_set(
        &self,
        d: &mut Deployment,
        rs_list: &[Arc<ReplicaSet>],
        old_rss: &[Arc<ReplicaSet>],
        create_if_not_existed: bool,
    ) -> Result<Option<Arc<ReplicaSet>>, DeploymentError> {
        let existing_new_rs = find_new_replica_set(d, rs_list);
        let new_revision = (max_revision(old_rss) + 1).to_string();
        let namespace = d.metadata.namespace.clone().unwrap_or_default();
        let rs_api: Api<ReplicaSet> =
            Api::namespaced(self.client.clone(), &namespace);

        if let Some(existing) = existing_new_rs {
            let mut rs_copy = (*existing).clone();
            let annotations_updated = set_new_replica_set_annotations(
                d,
                &mut rs_copy,
                &new_revision,
                true,
                MAX_REV_HISTORY_LENGTH_IN_CHARS,
            );
            let min_ready_seconds_needs_update =
                rs_copy.spec.min_ready_seconds.unwrap_or(0)
                    != d.spec.min_ready_seconds.unwrap_or(0);
            if annotations_updated || min_ready_seconds_needs_update {
                rs_copy.spec.min_ready_seconds = d.spec.min_ready_seconds;
                let stored = rs_api
                    .replace(
                        rs_copy.metadata.name.as_deref().unwrap_or_default(),
                        &PostParams::default(),
                        &rs_copy,
                    )
                    .await?;
                return Ok(Some(Arc::new(stored)));
            }
            // The revision the ReplicaSet carries is the one to copy.
            let revision = rs_copy
                .metadata
                .annotations
                .as_ref()
                .and_then(|a| a.get(REVISION_ANNOTATION))
                .cloned()
                .unwrap_or_default();
            let mut needs_update = set_deployment_revision(d, &revision);
            // A Deployment without a Progressing condition (its user just
            // started caring about progress) starts from this ReplicaSet.
            let has_progressing = d.status.as_ref().is_some_and(|s| {
                get_deployment_condition(s, DeploymentConditionType::Progressing)
                    .is_some()
            });
            if has_progress_deadline(d) && !has_progressing {
                let status = d.status.get_or_insert_default();
                set_deployment_condition(
                    status,
                    new_deployment_condition(
                        DeploymentConditionType::Progressing,
                        ConditionStatus::True,
                        FOUND_NEW_RS_REASON,
                        &format!(
                            "Found new replica set {:?}",
                            rs_copy.metadata.name.as_deref().unwrap_or_default()
                        ),
                        Timestamp::now(),
                    ),
                );
                needs_update = true;
            }
            if needs_update {
                self.update_status(d).await?;
            }
            return Ok(Some(Arc::new(rs_copy)));
        }

        if !create_if_not_existed {
            return Ok(None);
        }

        let collision_count = d.status.as_ref().and_then(|s| s.collision_count);
        let mut new_rs = new_replica_set(d, collision_count);
        let mut all_rss = old_rss.to_vec();
        all_rss.push(Arc::new(new_rs.clone()));
        let new_replicas_count = new_rs_new_replicas(d, &all_rss, &new_rs)?;
        new_rs.spec.replicas = Some(new_replicas_count);
        set_new_replica_set_annotations(
            d,
            &mut new_rs,
            &new_revision,
            false,
            MAX_REV_HISTORY_LENGTH_IN_CHARS,
        );
        let rs_name = new_rs.metadata.name.clone().unwrap_or_default();
        let (created, already_exists) = match rs_api
            .create(&PostParams::default(), &new_rs)
            .await
        {
            Ok(created) => (Arc::new(created), false),
            // A slow cache, or a fast resync of the Deployment: the name is
            // taken, by this template (ours) or by another (a collision).
            Err(kube::Error::Api(status)) if status.reason == "AlreadyExists" => {
                let rs = self.rs_lister.namespaced(&namespace).get(&rs_name)?;
                let ours = get_controller_of(&rs.metadata)
                    .is_some_and(|o| Some(&o.uid) == d.metadata.uid.as_ref());
                if ours
                    && rs
                        .spec
                        .template
                        .as_ref()
                        .is_some_and(|t| equal_ignore_hash(&d.spec.template, t))
                {
                    (rs, true)
                } else {
                    let status = d.status.get_or_insert_default();
                    let previous = status.collision_count.unwrap_or(0);
                    status.collision_count = Some(previous + 1);
                    if self.update_status(d).await.is_ok() {
                        tracing::info!(
                            deployment = %key_of(&d.metadata),
                            old_collision_count = previous,
                            new_collision_count = previous + 1,
                            "found a hash collision for deployment - bumping collisionCount to resolve it"
                        );
                    }
                    return Err(DeploymentError::HashCollision(rs_name));
                }
            }
            Err(error) => {
                let msg =
                    format!("Failed to create new replica set {rs_name:?}: {error}");
                if has_progress_deadline(d) {
                    let status = d.status.get_or_insert_default();
                    set_deployment_condition(
                        status,
                        new_deployment_condition(
                            DeploymentConditionType::Progressing,
                            ConditionStatus::False,
                            FAILED_RS_CREATE_REASON,
                            &msg,
                            Timestamp::now(),
                        ),
                    );
                    // The bigger issue is the failed create; this write's
                    // own failure does not matter.
                    let _ = self.update_status(d).await;
                }
                self.event_recorder.event(
                    &self.reference(d),
                    WARNING,
                    FAILED_RS_CREATE_REASON,
                    &msg,
                );
                return Err(error.into());
            }
        };
        if !already_exists && new_replicas_count > 0 {
            self.event_recorder.event(
                &self.reference(d),
                NORMAL,
                "ScalingReplicaSet",
                &format!("Scaled up replica set {rs_name} to {new_replicas_count}"),
            );
        }
        let mut needs_update = set_deployment_revision(d, &new_revision);
        if !already_exists && has_progress_deadline(d) {
            let status = d.status.get_or_insert_default();
            set_deployment_condition(
                status,
                new_deployment_condition(
                    DeploymentConditionType::Progressing,
                    ConditionStatus::True,
                    NEW_REPLICA_SET_REASON,
                    &format!("Created new replica set {rs_name:?}"),
                    Timestamp::now(),
                ),
            );
            needs_update = true;
        }
        if needs_update {
            self.update_status(d).await?;
        }
        Ok(Some(created))
    }
    // ANCHOR_END: get_new_replica_set

    // ANCHOR: scale
    /// Mirrors `scale`: writes what [`scale_targets`] decided, in order; the
    /// first failure ends the sync (the Deployment is requeued).
    pub(super) async fn scale(
        &self,
        d: &Deployment,
        new_rs: Option<&Arc<ReplicaSet>>,
        old_rss: &[Arc<ReplicaSet>],
    ) -> Result<(), DeploymentError> {
        self.apply_resizes(d, scale_targets(d, new_rs, old_rss))
            .await
            .map(|_| ())
    }
    // ANCHOR_END: scale

    /// Writes `resizes` in order (`scaleReplicaSetAndRecordEvent` or
    /// `scaleReplicaSet` for each), stopping at the first failure. A
    /// ReplicaSet resized twice (cleanup, then scale-down) is written the
    /// second time from the first write's answer, as upstream keeps the
    /// updated object. How many changed size.
    pub(super) async fn apply_resizes(
        &self,
        d: &Deployment,
        resizes: Vec<Resize>,
    ) -> Result<usize, DeploymentError> {
        let mut written: HashMap<String, Arc<ReplicaSet>> = HashMap::new();
        let mut scaled = 0;
        for resize in resizes {
            let name = resize.rs().metadata.name.clone().unwrap_or_default();
            let base = written
                .get(&name)
                .cloned()
                .unwrap_or_else(|| Arc::clone(resize.rs()));
            let (changed, stored) = match resize {
                Resize::AndRecordEvent { new_scale, .. } => {
                    self.scale_replica_set_and_record_event(&base, new_scale, d)
                        .await?
                }
                Resize::Proportional {
                    new_scale,
                    operation,
                    ..
                } => {
                    self.scale_replica_set(&base, new_scale, d, operation)
                        .await?
                }
            };
            if changed {
                scaled += 1;
            }
            written.insert(name, stored);
        }
        Ok(scaled)
    }

    /// Mirrors `scaleReplicaSetAndRecordEvent`: resizes `rs` if its size
    /// changes; whether it did, and the ReplicaSet as stored.
    pub(super) async fn scale_replica_set_and_record_event(
        &self,
        rs: &Arc<ReplicaSet>,
        new_scale: i32,
        d: &Deployment,
    ) -> Result<(bool, Arc<ReplicaSet>), DeploymentError> {
        if rs_replicas(rs) == new_scale {
            return Ok((false, Arc::clone(rs)));
        }
        let operation = if rs_replicas(rs) < new_scale {
            "up"
        } else {
            "down"
        };
        self.scale_replica_set(rs, new_scale, d, operation).await
    }

    /// Mirrors `scaleReplicaSet`: writes the new size and the replicas
    /// annotations (`desired-replicas`, `max-replicas`) when either changes,
    /// and records `ScalingReplicaSet` on the Deployment for a new size.
    pub(super) async fn scale_replica_set(
        &self,
        rs: &Arc<ReplicaSet>,
        new_scale: i32,
        d: &Deployment,
        operation: &str,
    ) -> Result<(bool, Arc<ReplicaSet>), DeploymentError> {
        let replicas = deployment_replicas(d);
        let max_replicas = replicas + max_surge(d);
        let size_needs_update = rs_replicas(rs) != new_scale;
        let annotations_need_update =
            replicas_annotations_need_update(rs, replicas, max_replicas);
        if !size_needs_update && !annotations_need_update {
            return Ok((false, Arc::clone(rs)));
        }
        let old_scale = rs_replicas(rs);
        let mut rs_copy = (**rs).clone();
        rs_copy.spec.replicas = Some(new_scale);
        set_replicas_annotations(&mut rs_copy, replicas, max_replicas);
        let name = rs_copy.metadata.name.clone().unwrap_or_default();
        let api: Api<ReplicaSet> = Api::namespaced(
            self.client.clone(),
            rs_copy.metadata.namespace.as_deref().unwrap_or_default(),
        );
        let stored =
            Arc::new(api.replace(&name, &PostParams::default(), &rs_copy).await?);
        if size_needs_update {
            self.event_recorder.event(
                &self.reference(d),
                NORMAL,
                "ScalingReplicaSet",
                &format!("Scaled {operation} replica set {name} to {new_scale} from {old_scale}"),
            );
        }
        Ok((size_needs_update, stored))
    }

    // ANCHOR: cleanup_deployment
    /// Mirrors `cleanupDeployment`: deletes the old ReplicaSets beyond
    /// `revisionHistoryLimit` ([`cleanup_candidates`]), the oldest revisions
    /// first; stops at the first failed delete, as upstream does not to
    /// overload the API server.
    pub(super) async fn cleanup_deployment(
        &self,
        old_rss: &[Arc<ReplicaSet>],
        d: &Deployment,
    ) -> Result<(), DeploymentError> {
        for rs in cleanup_candidates(old_rss, d) {
            tracing::debug!(replica_set = %key_of(&rs.metadata), deployment = %key_of(&d.metadata), "cleaning up the replica set");
            let api: Api<ReplicaSet> = Api::namespaced(
                self.client.clone(),
                rs.metadata.namespace.as_deref().unwrap_or_default(),
            );
            match api
                .delete(
                    rs.metadata.name.as_deref().unwrap_or_default(),
                    &DeleteParams::default(),
                )
                .await
            {
                Ok(_) => {}
                Err(kube::Error::Api(status)) if status.code == 404 => {}
                Err(error) => return Err(error.into()),
            }
        }
        Ok(())
    }
    // ANCHOR_END: cleanup_deployment

    /// Mirrors `syncDeploymentStatus`: writes [`calculate_status`] if it
    /// differs from the Deployment's.
    pub(super) async fn sync_deployment_status(
        &self,
        all_rss: &[Arc<ReplicaSet>],
        new_rs: Option<&Arc<ReplicaSet>>,
        d: &mut Deployment,
    ) -> Result<(), DeploymentError> {
        let new_status = calculate_status(all_rss, new_rs, d, Timestamp::now());
        if d.status.as_ref() == Some(&new_status) {
            return Ok(());
        }
        d.status = Some(new_status);
        self.update_status(d).await
    }

    /// Mirrors `isScalingEvent`: whether an active ReplicaSet was sized for
    /// another number of replicas than the Deployment has now (its
    /// `desired-replicas` annotation).
    pub(super) async fn is_scaling_event(
        &self,
        d: &mut Deployment,
        rs_list: &[Arc<ReplicaSet>],
    ) -> Result<bool, DeploymentError> {
        let (new_rs, old_rss) = self
            .get_all_replica_sets_and_sync_revision(d, rs_list, false)
            .await?;
        let all_rss = all_replica_sets(&old_rss, new_rs.as_ref());
        let replicas = deployment_replicas(d);
        Ok(filter_active_replica_sets(&all_rss)
            .iter()
            .filter_map(|rs| get_desired_replicas_annotation(rs))
            .any(|desired| desired != replicas))
    }
}

/// `append(oldRSs, newRS)`, without a missing new one.
pub(super) fn all_replica_sets(
    old_rss: &[Arc<ReplicaSet>],
    new_rs: Option<&Arc<ReplicaSet>>,
) -> Vec<Arc<ReplicaSet>> {
    let mut all = old_rss.to_vec();
    all.extend(new_rs.cloned());
    all
}

/// The ReplicaSet `getNewReplicaSet` creates for the Deployment's template,
/// before it is sized and annotated: `<deployment>-<hash>`, the hash in its
/// labels, template labels and selector, owned by the Deployment.
pub fn new_replica_set(d: &Deployment, collision_count: Option<i32>) -> ReplicaSet {
    let mut template = d.spec.template.clone();
    let pod_template_spec_hash = compute_hash(&template, collision_count);
    let template_meta = template.metadata.get_or_insert_default();
    template_meta.labels.get_or_insert_default().insert(
        DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.to_string(),
        pod_template_spec_hash.clone(),
    );
    let labels = template_meta.labels.clone();
    let mut selector = d.spec.selector.clone();
    selector.match_labels.get_or_insert_default().insert(
        DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.to_string(),
        pod_template_spec_hash.clone(),
    );
    ReplicaSet {
        metadata: ObjectMeta {
            // A deterministic name keeps the create idempotent.
            name: Some(format!(
                "{}-{pod_template_spec_hash}",
                d.metadata.name.as_deref().unwrap_or_default()
            )),
            namespace: d.metadata.namespace.clone(),
            owner_references: Some(vec![new_controller_ref(
                &d.metadata,
                API_VERSION,
                KIND,
            )]),
            labels,
            ..ObjectMeta::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(0),
            min_ready_seconds: d.spec.min_ready_seconds,
            selector,
            template: Some(template),
        },
        status: None,
    }
}

// ANCHOR: scale_targets
/// The decision half of `scale`: the resizes of a scaling event (or of a
/// paused Deployment).
///
/// 1. One active ReplicaSet (or none: the newest) takes all the replicas.
/// 2. A saturated new ReplicaSet: the active old ones go to 0.
/// 3. Otherwise, in a rolling update, `replicas + maxSurge` minus what the
///    active ReplicaSets have is spread over them in proportion to their size
///    (`GetProportion`): growing, the larger and then the newer first;
///    shrinking, the larger and then the older first; the rounding leftover
///    goes to the first.
pub fn scale_targets(
    d: &Deployment,
    new_rs: Option<&Arc<ReplicaSet>>,
    old_rss: &[Arc<ReplicaSet>],
) -> Vec<Resize> {
    let replicas = deployment_replicas(d);
    if let Some(active_or_latest) = find_active_or_latest(new_rs, old_rss) {
        if rs_replicas(&active_or_latest) == replicas {
            return Vec::new();
        }
        return vec![Resize::AndRecordEvent {
            rs: active_or_latest,
            new_scale: replicas,
        }];
    }
    // Adoption during a saturated new ReplicaSet: the old ones go.
    if is_saturated(d, new_rs.map(|rs| &**rs)) {
        return filter_active_replica_sets(old_rss)
            .into_iter()
            .map(|rs| Resize::AndRecordEvent { rs, new_scale: 0 })
            .collect();
    }
    if !is_rolling_update(d) {
        return Vec::new();
    }
    let mut all_rss = filter_active_replica_sets(&all_replica_sets(old_rss, new_rs));
    let all_rss_replicas = get_replica_count_for_replica_sets(&all_rss);
    let allowed_size = if replicas > 0 {
        replicas + max_surge(d)
    } else {
        0
    };
    // What may be added to (or, negative, removed from) the active
    // ReplicaSets, in proportion.
    let deployment_replicas_to_add = allowed_size - all_rss_replicas;
    let operation = match deployment_replicas_to_add.signum() {
        1 => {
            all_rss.sort_by(|a, b| replica_sets_by_size_newer(a, b));
            "up"
        }
        -1 => {
            all_rss.sort_by(|a, b| replica_sets_by_size_older(a, b));
            "down"
        }
        _ => "",
    };
    let mut deployment_replicas_added = 0;
    let mut sizes: Vec<i32> = Vec::with_capacity(all_rss.len());
    for rs in &all_rss {
        if deployment_replicas_to_add == 0 {
            sizes.push(rs_replicas(rs));
            continue;
        }
        let proportion = get_proportion(
            Some(rs),
            d,
            deployment_replicas_to_add,
            deployment_replicas_added,
        );
        sizes.push(rs_replicas(rs) + proportion);
        deployment_replicas_added += proportion;
    }
    // The leftover of the rounding goes to the largest.
    if deployment_replicas_to_add != 0
        && let Some(first) = sizes.first_mut()
    {
        *first =
            (*first + deployment_replicas_to_add - deployment_replicas_added).max(0);
    }
    all_rss
        .into_iter()
        .zip(sizes)
        .map(|(rs, new_scale)| Resize::Proportional {
            rs,
            new_scale,
            operation,
        })
        .collect()
}
// ANCHOR_END: scale_targets

/// The decision half of `cleanupDeployment`: the old ReplicaSets beyond
/// `revisionHistoryLimit`, oldest revision first, that may go: no replicas
/// wanted or running, the latest generation observed, not being deleted.
pub fn cleanup_candidates(
    old_rss: &[Arc<ReplicaSet>],
    d: &Deployment,
) -> Vec<Arc<ReplicaSet>> {
    if !has_revision_history_limit(d) {
        return Vec::new();
    }
    let mut cleanable: Vec<Arc<ReplicaSet>> = old_rss
        .iter()
        .filter(|rs| rs.metadata.deletion_timestamp.is_none())
        .cloned()
        .collect();
    let limit =
        usize::try_from(d.spec.revision_history_limit.unwrap_or(0)).unwrap_or(0);
    let diff = cleanable.len().saturating_sub(limit);
    if diff == 0 {
        return Vec::new();
    }
    cleanable.sort_by(|a, b| replica_sets_by_revision(a, b));
    cleanable
        .into_iter()
        .take(diff)
        .filter(|rs| {
            let observed = rs
                .status
                .as_ref()
                .and_then(|s| s.observed_generation)
                .unwrap_or(0);
            rs_status_replicas(rs) == 0
                && rs_replicas(rs) == 0
                && rs.metadata.generation.unwrap_or(0) <= observed
                && rs.metadata.deletion_timestamp.is_none()
        })
        .collect()
}

// ANCHOR: calculate_status
/// Mirrors `calculateStatus`: the Deployment's status from its ReplicaSets'
/// (pods counted by the ReplicaSet controller, updated ones are the new
/// ReplicaSet's), its generation, and the `Available` condition: at least
/// `replicas - maxUnavailable` available pods.
pub fn calculate_status(
    all_rss: &[Arc<ReplicaSet>],
    new_rs: Option<&Arc<ReplicaSet>>,
    deployment: &Deployment,
    now: Timestamp,
) -> DeploymentStatus {
    let available_replicas = get_available_replica_count_for_replica_sets(all_rss);
    let total_replicas = get_replica_count_for_replica_sets(all_rss);
    // More available than wanted (scaling down): none unavailable.
    let unavailable_replicas = (total_replicas - available_replicas).max(0);
    let current = deployment.status.clone().unwrap_or_default();
    let mut status = DeploymentStatus {
        observed_generation: Some(deployment.metadata.generation.unwrap_or(0)),
        replicas: Some(get_actual_replica_count_for_replica_sets(all_rss)),
        updated_replicas: Some(get_actual_replica_count_for_replica_sets(
            &new_rs.into_iter().cloned().collect::<Vec<_>>(),
        )),
        ready_replicas: Some(get_ready_replica_count_for_replica_sets(all_rss)),
        available_replicas: Some(available_replicas),
        unavailable_replicas: Some(unavailable_replicas),
        collision_count: current.collision_count,
        conditions: current.conditions,
        terminating_replicas: None,
    };
    let condition = if available_replicas
        >= deployment_replicas(deployment) - max_unavailable(deployment)
    {
        new_deployment_condition(
            DeploymentConditionType::Available,
            ConditionStatus::True,
            MINIMUM_REPLICAS_AVAILABLE,
            "Deployment has minimum availability.",
            now,
        )
    } else {
        new_deployment_condition(
            DeploymentConditionType::Available,
            ConditionStatus::False,
            MINIMUM_REPLICAS_UNAVAILABLE,
            "Deployment does not have minimum availability.",
            now,
        )
    };
    set_deployment_condition(&mut status, condition);
    status
}
// ANCHOR_END: calculate_status

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::deployment::util::deployment_util::MAX_REPLICAS_ANNOTATION;
    use k8s_openapi::api::apps::v1::{
        DeploymentSpec, DeploymentStrategy, ReplicaSetStatus,
        RollingUpdateDeployment,
    };
    use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, Time};
    use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
    use std::collections::BTreeMap;

    /// deployment_controller_test.go's `newDeployment`: a rolling update
    /// with maxSurge and maxUnavailable 0 unless given.
    pub(crate) fn new_deployment(
        name: &str,
        replicas: i32,
        revision_history_limit: Option<i32>,
        max_surge: Option<IntOrString>,
        max_unavailable: Option<IntOrString>,
        selector: &[(&str, &str)],
    ) -> Deployment {
        let selector: BTreeMap<String, String> = selector
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Deployment {
            metadata: ObjectMeta {
                uid: Some(format!("uid-{name}")),
                name: Some(name.into()),
                namespace: Some("default".into()),
                annotations: Some(BTreeMap::new()),
                ..ObjectMeta::default()
            },
            spec: DeploymentSpec {
                strategy: Some(DeploymentStrategy {
                    type_: Some("RollingUpdate".into()),
                    rolling_update: Some(RollingUpdateDeployment {
                        max_surge: Some(max_surge.unwrap_or(IntOrString::Int(0))),
                        max_unavailable: Some(
                            max_unavailable.unwrap_or(IntOrString::Int(0)),
                        ),
                    }),
                }),
                replicas: Some(replicas),
                selector: LabelSelector {
                    match_labels: Some(selector.clone()),
                    ..LabelSelector::default()
                },
                template: PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels: Some(selector),
                        ..ObjectMeta::default()
                    }),
                    spec: Some(PodSpec {
                        containers: vec![Container {
                            name: "foo".into(),
                            image: Some("foo/bar".into()),
                            ..Container::default()
                        }],
                        ..PodSpec::default()
                    }),
                },
                revision_history_limit,
                ..DeploymentSpec::default()
            },
            status: None,
        }
    }

    /// deployment_controller_test.go's `rs`: a ReplicaSet of `replicas`
    /// created at `created` seconds.
    pub(crate) fn rs(
        name: &str,
        replicas: i32,
        selector: &[(&str, &str)],
        created: i64,
    ) -> ReplicaSet {
        ReplicaSet {
            metadata: ObjectMeta {
                name: Some(name.into()),
                uid: Some(format!("uid-{name}")),
                namespace: Some("default".into()),
                creation_timestamp: Some(Time(
                    Timestamp::from_second(created).expect("a time"),
                )),
                ..ObjectMeta::default()
            },
            spec: ReplicaSetSpec {
                replicas: Some(replicas),
                selector: LabelSelector {
                    match_labels: Some(
                        selector
                            .iter()
                            .map(|(k, v)| (k.to_string(), v.to_string()))
                            .collect(),
                    ),
                    ..LabelSelector::default()
                },
                template: Some(PodTemplateSpec::default()),
                ..ReplicaSetSpec::default()
            },
            status: None,
        }
    }

    /// What the resizes leave: each ReplicaSet's size after the writes that
    /// change something (upstream reads the fake clientset's update actions).
    fn sizes_after(
        d: &Deployment,
        rss: &[Arc<ReplicaSet>],
        resizes: &[Resize],
    ) -> HashMap<String, i32> {
        let mut sizes: HashMap<String, i32> = rss
            .iter()
            .map(|rs| {
                (
                    rs.metadata.name.clone().unwrap_or_default(),
                    rs_replicas(rs),
                )
            })
            .collect();
        for resize in resizes.iter().filter(|r| r.writes(d)) {
            sizes.insert(
                resize.rs().metadata.name.clone().unwrap_or_default(),
                resize.new_scale(),
            );
        }
        sizes
    }

    /// sync_test.go's `TestScale`.
    #[test]
    fn test_scale() {
        const NEW: i64 = 7200;
        const OLD: i64 = 3600;
        const OLDER: i64 = 0;
        let updated_template = |replicas: i32| {
            let mut d =
                new_deployment("foo", replicas, None, None, None, &[("foo", "bar")]);
            d.spec
                .template
                .metadata
                .as_mut()
                .unwrap()
                .labels
                .as_mut()
                .unwrap()
                .insert("another".into(), "label".into());
            d
        };
        let surge = |n: i32| Some(IntOrString::Int(n));
        let broken_new = {
            let mut rs = rs("foo-v2", 2, &[], NEW);
            rs.status = Some(ReplicaSetStatus {
                available_replicas: Some(0),
                ..ReplicaSetStatus::default()
            });
            rs
        };
        struct Case {
            name: &'static str,
            deployment: Deployment,
            old_deployment: Deployment,
            new_rs: Option<ReplicaSet>,
            old_rss: Vec<ReplicaSet>,
            expected_new: Option<i32>,
            expected_old: Vec<i32>,
            desired_replicas_annotations: &'static [(&'static str, i32)],
        }
        let d =
            |replicas: i32| new_deployment("foo", replicas, None, None, None, &[]);
        let cases = vec![
            Case {
                name: "normal scaling event: 10 -> 12",
                deployment: d(12),
                old_deployment: d(10),
                new_rs: Some(rs("foo-v1", 10, &[], NEW)),
                old_rss: vec![],
                expected_new: Some(12),
                expected_old: vec![],
                desired_replicas_annotations: &[],
            },
            Case {
                name: "normal scaling event: 10 -> 5",
                deployment: d(5),
                old_deployment: d(10),
                new_rs: Some(rs("foo-v1", 10, &[], NEW)),
                old_rss: vec![],
                expected_new: Some(5),
                expected_old: vec![],
                desired_replicas_annotations: &[],
            },
            Case {
                name: "proportional scaling: 5 -> 10",
                deployment: d(10),
                old_deployment: d(5),
                new_rs: Some(rs("foo-v2", 2, &[], NEW)),
                old_rss: vec![rs("foo-v1", 3, &[], OLD)],
                expected_new: Some(4),
                expected_old: vec![6],
                desired_replicas_annotations: &[],
            },
            Case {
                name: "proportional scaling: 5 -> 3",
                deployment: d(3),
                old_deployment: d(5),
                new_rs: Some(rs("foo-v2", 2, &[], NEW)),
                old_rss: vec![rs("foo-v1", 3, &[], OLD)],
                expected_new: Some(1),
                expected_old: vec![2],
                desired_replicas_annotations: &[],
            },
            Case {
                name: "proportional scaling: 9 -> 4",
                deployment: d(4),
                old_deployment: d(9),
                new_rs: Some(rs("foo-v2", 8, &[], NEW)),
                old_rss: vec![rs("foo-v1", 1, &[], OLD)],
                expected_new: Some(4),
                expected_old: vec![0],
                desired_replicas_annotations: &[],
            },
            Case {
                name: "proportional scaling: 7 -> 10",
                deployment: d(10),
                old_deployment: d(7),
                new_rs: Some(rs("foo-v3", 2, &[], NEW)),
                old_rss: vec![
                    rs("foo-v2", 3, &[], OLD),
                    rs("foo-v1", 2, &[], OLDER),
                ],
                expected_new: Some(3),
                expected_old: vec![4, 3],
                desired_replicas_annotations: &[],
            },
            Case {
                name: "proportional scaling: 13 -> 8",
                deployment: d(8),
                old_deployment: d(13),
                new_rs: Some(rs("foo-v3", 2, &[], NEW)),
                old_rss: vec![
                    rs("foo-v2", 8, &[], OLD),
                    rs("foo-v1", 3, &[], OLDER),
                ],
                expected_new: Some(1),
                expected_old: vec![5, 2],
                desired_replicas_annotations: &[],
            },
            // Scales up the new replica set.
            Case {
                name: "leftover distribution: 3 -> 4",
                deployment: d(4),
                old_deployment: d(3),
                new_rs: Some(rs("foo-v3", 1, &[], NEW)),
                old_rss: vec![
                    rs("foo-v2", 1, &[], OLD),
                    rs("foo-v1", 1, &[], OLDER),
                ],
                expected_new: Some(2),
                expected_old: vec![1, 1],
                desired_replicas_annotations: &[],
            },
            // Scales down the older replica set.
            Case {
                name: "leftover distribution: 3 -> 2",
                deployment: d(2),
                old_deployment: d(3),
                new_rs: Some(rs("foo-v3", 1, &[], NEW)),
                old_rss: vec![
                    rs("foo-v2", 1, &[], OLD),
                    rs("foo-v1", 1, &[], OLDER),
                ],
                expected_new: Some(1),
                expected_old: vec![1, 0],
                desired_replicas_annotations: &[],
            },
            // Scales up the latest replica set first.
            Case {
                name: "proportional scaling (no new rs): 4 -> 5",
                deployment: d(5),
                old_deployment: d(4),
                new_rs: None,
                old_rss: vec![
                    rs("foo-v2", 2, &[], OLD),
                    rs("foo-v1", 2, &[], OLDER),
                ],
                expected_new: None,
                expected_old: vec![3, 2],
                desired_replicas_annotations: &[],
            },
            // Scales down to zero.
            Case {
                name: "proportional scaling: 6 -> 0",
                deployment: d(0),
                old_deployment: d(6),
                new_rs: Some(rs("foo-v3", 3, &[], NEW)),
                old_rss: vec![
                    rs("foo-v2", 2, &[], OLD),
                    rs("foo-v1", 1, &[], OLDER),
                ],
                expected_new: Some(0),
                expected_old: vec![0, 0],
                desired_replicas_annotations: &[],
            },
            // Scales up from zero.
            Case {
                name: "proportional scaling: 0 -> 6",
                deployment: d(6),
                old_deployment: d(6),
                new_rs: Some(rs("foo-v3", 0, &[], NEW)),
                old_rss: vec![
                    rs("foo-v2", 0, &[], OLD),
                    rs("foo-v1", 0, &[], OLDER),
                ],
                expected_new: Some(6),
                expected_old: vec![0, 0],
                desired_replicas_annotations: &[],
            },
            // foo-v2 was sized for 3: it takes the one added replica.
            Case {
                name: "failed rs update",
                deployment: d(5),
                old_deployment: d(5),
                new_rs: Some(rs("foo-v3", 2, &[], NEW)),
                old_rss: vec![
                    rs("foo-v2", 1, &[], OLD),
                    rs("foo-v1", 1, &[], OLDER),
                ],
                expected_new: Some(2),
                expected_old: vec![2, 1],
                desired_replicas_annotations: &[("foo-v2", 3)],
            },
            Case {
                name: "deployment with surge pods",
                deployment: new_deployment("foo", 20, None, surge(2), None, &[]),
                old_deployment: new_deployment("foo", 10, None, surge(2), None, &[]),
                new_rs: Some(rs("foo-v2", 6, &[], NEW)),
                old_rss: vec![rs("foo-v1", 6, &[], OLD)],
                expected_new: Some(11),
                expected_old: vec![11],
                desired_replicas_annotations: &[],
            },
            Case {
                name: "change both surge and size",
                deployment: new_deployment("foo", 50, None, surge(6), None, &[]),
                old_deployment: new_deployment("foo", 10, None, surge(3), None, &[]),
                new_rs: Some(rs("foo-v2", 5, &[], NEW)),
                old_rss: vec![rs("foo-v1", 8, &[], OLD)],
                expected_new: Some(22),
                expected_old: vec![34],
                desired_replicas_annotations: &[],
            },
            Case {
                name: "change both size and template",
                deployment: updated_template(14),
                old_deployment: new_deployment(
                    "foo",
                    10,
                    None,
                    None,
                    None,
                    &[("foo", "bar")],
                ),
                new_rs: None,
                old_rss: vec![rs("foo-v2", 7, &[], NEW), rs("foo-v1", 3, &[], OLD)],
                expected_new: None,
                expected_old: vec![10, 4],
                desired_replicas_annotations: &[],
            },
            Case {
                name: "saturated but broken new replica set does not affect old pods",
                deployment: new_deployment("foo", 2, None, surge(1), surge(1), &[]),
                old_deployment: new_deployment(
                    "foo",
                    2,
                    None,
                    surge(1),
                    surge(1),
                    &[],
                ),
                new_rs: Some(broken_new),
                old_rss: vec![rs("foo-v1", 1, &[], OLD)],
                expected_new: Some(2),
                expected_old: vec![1],
                desired_replicas_annotations: &[],
            },
        ];
        for case in cases {
            let annotate = |mut rs: ReplicaSet| {
                let name = rs.metadata.name.clone().unwrap_or_default();
                let desired = case
                    .desired_replicas_annotations
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map_or(deployment_replicas(&case.old_deployment), |(_, d)| *d);
                set_replicas_annotations(
                    &mut rs,
                    desired,
                    desired + max_surge(&case.old_deployment),
                );
                Arc::new(rs)
            };
            let new_rs = case.new_rs.map(annotate);
            let old_rss: Vec<Arc<ReplicaSet>> =
                case.old_rss.into_iter().map(annotate).collect();
            let resizes = scale_targets(&case.deployment, new_rs.as_ref(), &old_rss);
            let all = all_replica_sets(&old_rss, new_rs.as_ref());
            let sizes = sizes_after(&case.deployment, &all, &resizes);
            if let (Some(new_rs), Some(expected)) = (&new_rs, case.expected_new) {
                assert_eq!(
                    sizes[new_rs.metadata.name.as_deref().unwrap()],
                    expected,
                    "{}: new",
                    case.name
                );
            }
            let got_old: Vec<i32> = old_rss
                .iter()
                .map(|rs| sizes[rs.metadata.name.as_deref().unwrap()])
                .collect();
            assert_eq!(got_old, case.expected_old, "{}: old", case.name);
        }
    }

    fn new_rs_with_status(
        name: &str,
        spec_replicas: i32,
        status_replicas: i32,
    ) -> Arc<ReplicaSet> {
        let mut rs = rs(name, spec_replicas, &[("foo", "bar")], 0);
        rs.status = Some(ReplicaSetStatus {
            replicas: status_replicas,
            ..ReplicaSetStatus::default()
        });
        rs.metadata.annotations = Some(BTreeMap::new());
        Arc::new(rs)
    }

    /// sync_test.go's `TestDeploymentController_cleanupDeployment`.
    #[test]
    fn test_deployment_controller_cleanup_deployment() {
        let already_deleted = {
            let mut rs = (*new_rs_with_status("foo-1", 0, 0)).clone();
            rs.metadata.deletion_timestamp = Some(Time(Timestamp::now()));
            Arc::new(rs)
        };
        let cases = [
            (
                vec![
                    new_rs_with_status("foo-1", 0, 0),
                    new_rs_with_status("foo-2", 0, 0),
                    new_rs_with_status("foo-3", 0, 0),
                ],
                1,
                2,
            ),
            // Only the ReplicaSet with spec.replicas = status.replicas = 0 goes.
            (
                vec![
                    new_rs_with_status("foo-1", 0, 0),
                    new_rs_with_status("foo-2", 0, 1),
                    new_rs_with_status("foo-3", 1, 0),
                    new_rs_with_status("foo-4", 1, 1),
                ],
                0,
                1,
            ),
            (
                vec![
                    new_rs_with_status("foo-1", 0, 0),
                    new_rs_with_status("foo-2", 0, 0),
                ],
                0,
                2,
            ),
            (
                vec![
                    new_rs_with_status("foo-1", 1, 1),
                    new_rs_with_status("foo-2", 1, 1),
                ],
                0,
                0,
            ),
            (vec![already_deleted], 0, 0),
            // With an unlimited revisionHistoryLimit.
            (
                vec![
                    new_rs_with_status("foo-1", 0, 0),
                    new_rs_with_status("foo-2", 0, 0),
                    new_rs_with_status("foo-3", 0, 0),
                ],
                i32::MAX,
                0,
            ),
        ];
        for (i, (old_rss, limit, expected_deletions)) in
            cases.into_iter().enumerate()
        {
            let d =
                new_deployment("foo", 1, Some(limit), None, None, &[("foo", "bar")]);
            assert_eq!(
                cleanup_candidates(&old_rss, &d).len(),
                expected_deletions,
                "scenario {i}"
            );
        }
    }

    /// sync_test.go's `TestDeploymentController_cleanupDeploymentOrder`: the
    /// oldest revisions go first.
    #[test]
    fn test_deployment_controller_cleanup_deployment_order() {
        let with_revision = |name: &str, revision: &str| {
            let mut rs = (*new_rs_with_status(name, 0, 0)).clone();
            rs.metadata
                .annotations
                .get_or_insert_default()
                .insert(REVISION_ANNOTATION.into(), revision.into());
            Arc::new(rs)
        };
        let old_rss = vec![
            with_revision("foo-3", "3"),
            with_revision("foo-1", "1"),
            with_revision("foo-2", "2"),
        ];
        let d = new_deployment("foo", 1, Some(1), None, None, &[("foo", "bar")]);
        let names: Vec<String> = cleanup_candidates(&old_rss, &d)
            .iter()
            .map(|rs| rs.metadata.name.clone().unwrap_or_default())
            .collect();
        assert_eq!(names, ["foo-1", "foo-2"]);
    }

    /// The new ReplicaSet carries the hash in its name, labels, selector and
    /// template; a collision count gives another name.
    #[test]
    fn the_new_replica_set_is_named_and_labelled_by_its_template_hash() {
        let d = new_deployment("web", 3, None, None, None, &[("app", "web")]);
        let rs = new_replica_set(&d, None);
        let hash = compute_hash(&d.spec.template, None);
        assert_eq!(
            rs.metadata.name.as_deref(),
            Some(format!("web-{hash}").as_str())
        );
        let label = |m: &Option<BTreeMap<String, String>>| {
            m.as_ref()
                .and_then(|l| l.get(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY))
                .cloned()
        };
        assert_eq!(label(&rs.metadata.labels), Some(hash.clone()));
        assert_eq!(label(&rs.spec.selector.match_labels), Some(hash.clone()));
        assert_eq!(
            label(
                &rs.spec
                    .template
                    .as_ref()
                    .unwrap()
                    .metadata
                    .as_ref()
                    .unwrap()
                    .labels
            ),
            Some(hash)
        );
        assert!(equal_ignore_hash(
            rs.spec.template.as_ref().unwrap(),
            &d.spec.template
        ));
        let owner = &rs.metadata.owner_references.as_ref().unwrap()[0];
        assert_eq!(
            (owner.kind.as_str(), owner.uid.as_str(), owner.controller),
            ("Deployment", "uid-web", Some(true))
        );
        assert_ne!(new_replica_set(&d, Some(1)).metadata.name, rs.metadata.name);
        // The Deployment's own template is untouched.
        assert_eq!(
            label(&d.spec.template.metadata.as_ref().unwrap().labels),
            None
        );
    }

    /// `calculateStatus`: counts from the ReplicaSets, the generation, and
    /// the Available condition.
    #[test]
    fn test_calculate_status() {
        let mut d = new_deployment(
            "foo",
            3,
            None,
            Some(IntOrString::Int(1)),
            Some(IntOrString::Int(1)),
            &[],
        );
        d.metadata.generation = Some(7);
        let with =
            |name: &str, spec: i32, replicas: i32, ready: i32, available: i32| {
                let mut rs = rs(name, spec, &[], 0);
                rs.status = Some(ReplicaSetStatus {
                    replicas,
                    ready_replicas: Some(ready),
                    available_replicas: Some(available),
                    ..ReplicaSetStatus::default()
                });
                Arc::new(rs)
            };
        let new_rs = with("new", 2, 2, 1, 1);
        let old_rs = with("old", 2, 2, 2, 2);
        let all = vec![Arc::clone(&old_rs), Arc::clone(&new_rs)];
        let status =
            calculate_status(&all, Some(&new_rs), &d, Timestamp::UNIX_EPOCH);
        assert_eq!(status.observed_generation, Some(7));
        assert_eq!(status.replicas, Some(4));
        assert_eq!(status.updated_replicas, Some(2));
        assert_eq!(status.ready_replicas, Some(3));
        assert_eq!(status.available_replicas, Some(3));
        assert_eq!(status.unavailable_replicas, Some(1));
        let available =
            get_deployment_condition(&status, DeploymentConditionType::Available)
                .unwrap();
        assert_eq!(available.status.as_deref(), Some("True"));
        assert_eq!(
            available.reason.as_deref(),
            Some(MINIMUM_REPLICAS_AVAILABLE)
        );
        let thin = vec![with("only", 3, 3, 1, 1)];
        let status = calculate_status(&thin, None, &d, Timestamp::UNIX_EPOCH);
        let available =
            get_deployment_condition(&status, DeploymentConditionType::Available)
                .unwrap();
        assert_eq!(
            available.reason.as_deref(),
            Some(MINIMUM_REPLICAS_UNAVAILABLE)
        );
        assert_eq!(status.updated_replicas, Some(0));
    }

    #[test]
    fn the_max_replicas_annotation_is_what_proportional_scaling_reads() {
        let mut rs = rs("foo", 1, &[], 0);
        set_replicas_annotations(&mut rs, 4, 5);
        assert_eq!(
            rs.metadata
                .annotations
                .as_ref()
                .unwrap()
                .get(MAX_REPLICAS_ANNOTATION)
                .map(String::as_str),
            Some("5")
        );
    }
}
