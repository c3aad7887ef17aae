//! `POST …/pods/{name}/eviction`: mirrors kubernetes'
//! `pkg/registry/core/pod/storage/eviction.go` (`EvictionREST.Create`,
//! `checkAndDecrement`, `getPodDisruptionBudgets`, `canIgnorePDB`,
//! `addConditionAndDeletePod`).
//!
//! An eviction is a delete that respects the pod's disruption budget: `kubectl
//! drain` and the node lifecycle controller ask for one. A pod that does not
//! count for a budget (finished, pending, already being deleted) goes at once.
//! Otherwise the one budget whose selector selects the pod must allow a
//! disruption: the eviction spends it (`disruptionsAllowed` one less, the pod
//! in `disruptedPods`), marks the pod `DisruptionTarget`, then deletes it with
//! the eviction's `deleteOptions`.
//!
//! | Refusal                                          | Answer (as upstream)            |
//! |--------------------------------------------------|---------------------------------|
//! | the body's name is not the URL's                 | 400                             |
//! | no such pod                                      | 404                             |
//! | more than one budget selects the pod             | 500 `Status` (not an error)     |
//! | the budget's controller has not seen its spec    | 429, retry after 10 s           |
//! | no disruption allowed                            | 429 with the budget's numbers   |
//! | a negative budget, too many unconfirmed evictions | 403 on the budget              |
//! | the budget kept conflicting                      | 504, retry after 10 s           |

use std::sync::Arc;

use apimachinery::apis::meta::v1::ListOptions;
use apimachinery::labels::{matches_labels, parse_label_selector, selector_string};
use axum::http::StatusCode;
use axum::response::Response;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause;
use serde_json::{Value, json};
use stage5_storage::{
    Object, Preconditions, SelectionPredicate, StorageError, object_key,
};

use crate::printers::internalversion::has_pod_ready_condition;
use crate::registry::generic::registry::{DeleteOptions, delete};
use crate::registry::rest::now;
use crate::registry::{RegisteredResource, Registry};
use crate::status::ApiError;

/// How often a conflicting budget update is tried again (`EvictionsRetry`'s
/// steps).
const EVICTIONS_RETRY: usize = 20;
/// `MaxDisruptedPodSize`: evictions the budget's controller has not confirmed.
const MAX_DISRUPTED_POD_SIZE: usize = 2000;
const VIOLATION: &str =
    "Cannot evict pod as it would violate the pod's disruption budget.";

/// Mirrors `EvictionREST.Create` for the pod `name`, with `options` the
/// eviction's `deleteOptions` (already read).
pub async fn evict(
    registry: &Registry,
    pods: &RegisteredResource,
    namespace: &str,
    name: &str,
    eviction: &Value,
    options: DeleteOptions,
) -> Result<Response, ApiError> {
    if eviction["metadata"]["name"].as_str().unwrap_or_default() != name {
        return Err(ApiError::bad_request(
            "name in URL does not match name in Eviction object",
        ));
    }
    let key = object_key(&pods.info, Some(namespace), name);
    let pdbs = registry.find("policy", "v1", "poddisruptionbudgets");
    let mut budget_name = String::new();
    for _ in 0..EVICTIONS_RETRY {
        let pod = pods.dyn_storage.get(key.clone()).await?;
        if can_ignore_pdb(&pod) {
            return delete_pod(pods, &key, options, false).await;
        }
        let budgets = match pdbs {
            Some(pdbs) => budgets_of(pdbs, namespace, &pod).await?,
            None => Vec::new(),
        };
        let budget = match budgets.as_slice() {
            [] => return delete_pod(pods, &key, options, true).await,
            [one] => one,
            _ => {
                return Err(ApiError::plain_failure(
                    500,
                    "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
                ));
            }
        };
        budget_name = budget.name().to_string();
        if !is_ready(&pod) && unhealthy_may_go(budget) {
            return delete_pod(pods, &key, options, true).await;
        }
        let Some(pdbs) = pdbs else { break };
        match check_and_decrement(pdbs, namespace, budget, name).await {
            Ok(()) => return delete_pod(pods, &key, options, true).await,
            Err(Spent::Conflict) => continue,
            Err(Spent::Refused(error)) => return Err(error),
        }
    }
    Err(ApiError::timeout(
        &format!(
            "couldn't update PodDisruptionBudget {budget_name:?} due to conflicts"
        ),
        10,
    ))
}

// ANCHOR: budget_rules
/// Mirrors `canIgnorePDB`: a pod that has finished, has not started, or is
/// already going counts for no budget.
fn can_ignore_pdb(pod: &Object) -> bool {
    let phase = pod.data["status"]["phase"].as_str().unwrap_or_default();
    matches!(phase, "Succeeded" | "Failed" | "Pending")
        || pod.metadata.deletion_timestamp.is_some()
}

/// Whether the pod's `Ready` condition is `True` (`podutil.IsPodReady`).
fn is_ready(pod: &Object) -> bool {
    has_pod_ready_condition(&pod.data["status"])
}

/// Mirrors the unhealthy-pod rule of `EvictionREST.Create`: with
/// `AlwaysAllow` a pod that is not ready may go; with `IfHealthyBudget` (the
/// default) only while the budget is met.
fn unhealthy_may_go(budget: &Object) -> bool {
    let policy = budget.data["spec"]["unhealthyPodEvictionPolicy"].as_str();
    let status = &budget.data["status"];
    let healthy = status["currentHealthy"].as_i64().unwrap_or(0);
    let desired = status["desiredHealthy"].as_i64().unwrap_or(0);
    match policy {
        Some("AlwaysAllow") => true,
        _ => healthy >= desired && desired > 0,
    }
}

// ANCHOR_END: budget_rules

/// Mirrors `getPodDisruptionBudgets`: the namespace's budgets whose selector
/// selects the pod (in `policy/v1` an empty selector selects every pod; one
/// that does not parse selects none).
async fn budgets_of(
    pdbs: &RegisteredResource,
    namespace: &str,
    pod: &Object,
) -> Result<Vec<Arc<Object>>, ApiError> {
    let prefix = format!("{}{namespace}/", pdbs.info.key_prefix());
    let list = pdbs
        .dyn_storage
        .get_list(
            prefix,
            ListOptions::default(),
            SelectionPredicate::default(),
        )
        .await?;
    Ok(list
        .items
        .into_iter()
        .filter(|budget| {
            parse_label_selector(&selector_string(&budget.data["spec"]["selector"]))
                .is_ok_and(|s| matches_labels(&s, pod.metadata.labels.as_ref()))
        })
        .collect())
}

/// Why a budget was not spent.
enum Spent {
    /// Somebody else wrote the budget first: read it again.
    Conflict,
    /// The budget refuses the eviction.
    Refused(ApiError),
}

/// Mirrors `checkAndDecrement`: one disruption spent from `budget`, written
/// with its resourceVersion as a precondition.
async fn check_and_decrement(
    pdbs: &RegisteredResource,
    namespace: &str,
    budget: &Object,
    pod_name: &str,
) -> Result<(), Spent> {
    let status = &budget.data["status"];
    let name = budget.name();
    let observed = status["observedGeneration"].as_i64().unwrap_or(0);
    if observed < budget.metadata.generation.unwrap_or(0) {
        return Err(Spent::Refused(ApiError::too_many_requests(
            VIOLATION,
            10,
            vec![disruption_cause(format!(
                "The disruption budget {name} is still being processed by the server."
            ))],
        )));
    }
    let allowed = status["disruptionsAllowed"].as_i64().unwrap_or(0);
    let forbidden = |reason: &str| {
        Spent::Refused(ApiError::forbidden(
            "policy",
            "poddisruptionbudget",
            name,
            reason,
        ))
    };
    if allowed < 0 {
        return Err(forbidden("pdb disruptions allowed is negative"));
    }
    let disrupted = status["disruptedPods"].as_object().map_or(0, |m| m.len());
    if disrupted > MAX_DISRUPTED_POD_SIZE {
        return Err(forbidden(
            "DisruptedPods map too big - too many evictions not confirmed by PDB controller",
        ));
    }
    if allowed == 0 {
        let desired = status["desiredHealthy"].as_i64().unwrap_or(0);
        let healthy = status["currentHealthy"].as_i64().unwrap_or(0);
        return Err(Spent::Refused(ApiError::too_many_requests(
            VIOLATION,
            0,
            vec![disruption_cause(format!(
                "The disruption budget {name} needs {desired} healthy pods and has {healthy} currently"
            ))],
        )));
    }
    let key = object_key(&pdbs.info, Some(namespace), name);
    let preconditions = Preconditions {
        uid: budget.metadata.uid.clone(),
        resource_version: Some(budget.resource_version().to_string()),
    };
    let pod_name = pod_name.to_string();
    let written = pdbs
        .dyn_storage
        .guaranteed_update(
            key,
            preconditions,
            Box::new(move |current: &Object| {
                let mut next = current.clone();
                let status = &mut next.data["status"];
                let left = status["disruptionsAllowed"].as_i64().unwrap_or(0) - 1;
                status["disruptionsAllowed"] = json!(left);
                if !status["disruptedPods"].is_object() {
                    status["disruptedPods"] = json!({});
                }
                status["disruptedPods"][&pod_name] = json!(now());
                if left == 0 {
                    set_disruption_allowed_condition(status);
                }
                next.metadata.resource_version = None;
                Ok(next)
            }),
        )
        .await;
    match written {
        Ok(_) => Ok(()),
        Err(StorageError::Conflict { .. }) => Err(Spent::Conflict),
        Err(error) => Err(Spent::Refused(error.into())),
    }
}

/// Mirrors `pdbhelper.UpdateDisruptionAllowedCondition` with no disruption
/// left: `DisruptionAllowed` is `False`, reason `InsufficientPods`.
fn set_disruption_allowed_condition(status: &mut Value) {
    let condition = json!({"type": "DisruptionAllowed", "status": "False",
        "reason": "InsufficientPods", "message": "", "lastTransitionTime": now()});
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    if let Some(conditions) = status["conditions"].as_array_mut() {
        match conditions
            .iter_mut()
            .find(|c| c["type"] == "DisruptionAllowed")
        {
            Some(existing) if existing["status"] == "False" => {}
            Some(existing) => *existing = condition,
            None => conditions.push(condition),
        }
    }
}

fn disruption_cause(message: String) -> StatusCause {
    StatusCause {
        reason: Some("DisruptionBudget".into()),
        message: Some(message),
        field: None,
    }
}

/// Mirrors `addConditionAndDeletePod`: unless `conditional` is false (a pod
/// no budget counts), the pod's status gets `DisruptionTarget`, and the
/// delete carries the pod's resourceVersion unless the caller gave one.
async fn delete_pod(
    pods: &RegisteredResource,
    key: &str,
    mut options: DeleteOptions,
    conditional: bool,
) -> Result<Response, ApiError> {
    if conditional {
        let preconditions = options.preconditions.clone();
        let marked = pods
            .dyn_storage
            .guaranteed_update(
                key.to_string(),
                preconditions,
                Box::new(|current: &Object| {
                    let mut next = current.clone();
                    add_disruption_target(&mut next.data["status"]);
                    next.metadata.resource_version = None;
                    Ok(next)
                }),
            )
            .await?;
        if options.preconditions.resource_version.is_none() {
            options.preconditions.resource_version =
                Some(marked.resource_version().to_string());
        }
    }
    delete(pods, key.to_string(), options).await?;
    Ok(crate::status::success(StatusCode::CREATED))
}

/// The pod condition an eviction adds (`DisruptionTarget`, reason
/// `EvictionByEvictionAPI`).
fn add_disruption_target(status: &mut Value) {
    let condition = json!({"type": "DisruptionTarget", "status": "True",
        "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting",
        "lastProbeTime": null, "lastTransitionTime": now()});
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    if let Some(conditions) = status["conditions"].as_array_mut() {
        conditions.retain(|c| c["type"] != "DisruptionTarget");
        conditions.push(condition);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use stage5_storage::ResourceInfo;

    fn pod(phase: &str, ready: bool) -> Object {
        Object::new(&ResourceInfo::PODS, Some("ns"), "p").with_data(json!({
            "status": {"phase": phase, "conditions": [
                {"type": "Ready", "status": if ready { "True" } else { "False" }}]},
        }))
    }

    #[test]
    fn only_running_pods_count_for_a_budget() {
        assert!(can_ignore_pdb(&pod("Pending", false)));
        assert!(can_ignore_pdb(&pod("Succeeded", false)));
        assert!(!can_ignore_pdb(&pod("Running", true)));
        assert!(is_ready(&pod("Running", true)));
    }

    #[test]
    fn an_unhealthy_pod_goes_while_the_budget_is_met_or_always_if_allowed() {
        let budget = |policy: Value, healthy: i64, desired: i64| {
            Object::new(&ResourceInfo::POD_DISRUPTION_BUDGETS, Some("ns"), "b")
                .with_data(json!({
                "spec": {"unhealthyPodEvictionPolicy": policy},
                "status": {"currentHealthy": healthy, "desiredHealthy": desired}}))
        };
        assert!(unhealthy_may_go(&budget(json!(null), 3, 2)));
        assert!(!unhealthy_may_go(&budget(json!(null), 1, 2)));
        assert!(!unhealthy_may_go(&budget(json!("IfHealthyBudget"), 0, 0)));
        assert!(unhealthy_may_go(&budget(json!("AlwaysAllow"), 0, 2)));
    }

    #[test]
    fn the_last_disruption_closes_the_budget() {
        let mut status = json!({});
        set_disruption_allowed_condition(&mut status);
        assert_eq!(status["conditions"][0]["reason"], "InsufficientPods");
        let mut pod_status =
            json!({"conditions": [{"type": "Ready", "status": "True"}]});
        add_disruption_target(&mut pod_status);
        assert_eq!(pod_status["conditions"][1]["type"], "DisruptionTarget");
    }
}
