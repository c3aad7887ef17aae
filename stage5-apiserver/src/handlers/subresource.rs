//! The `status` and `scale` subresources: mirrors the status `Store`s every
//! workload registry builds (e.g. `pkg/registry/apps/deployment/storage`'s
//! `StatusREST` and `ScaleREST`).
//!
//! - `status` (pods, deployments, nodes, namespaces): `GET` is the object; `PUT`
//!   and `PATCH` change only its `.status`, whatever else the body holds, as the
//!   status strategies' `PrepareForUpdate` keep the spec and metadata.
//! - `scale` (deployments): an `autoscaling/v1` `Scale` whose `spec.replicas` is
//!   the deployment's, and whose status carries the deployment's replicas and its
//!   selector as a string. `PUT` and `PATCH` on it set the deployment's
//!   `spec.replicas`. This is what `kubectl scale` and kube-client's
//!   `Api::patch_scale` use.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::{Value, json};
use stage5_storage::{Object, ResourceInfo, object_key};

use super::patch::{Patch, PatchType};
use super::rest::{Rejection, conflict, update_or_reject};
use crate::registry::rest::next_generation;
use crate::registry::{RegisteredResource, strategy_for};
use crate::status::ApiError;
use apimachinery::util::strategicpatch::StructMeta;
use apimachinery::util::strategicpatch::meta as patch_meta;

/// A served subresource.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Subresource {
    /// `…/status`.
    Status,
    /// `…/scale`.
    Scale,
    /// A namespace's `…/finalize` (`FinalizeREST`): `PUT` of the whole
    /// namespace changes its `spec.finalizers`.
    Finalize,
    /// A certificate signing request's `…/approval` (`ApprovalREST`): `PUT`
    /// or `PATCH` changes its conditions.
    Approval,
}

impl Subresource {
    /// The subresource `name` of `info`, or 404 when it is not served.
    pub(crate) fn of(info: &ResourceInfo, name: &str) -> Result<Self, ApiError> {
        match name {
            "status" if has_status(info) => Ok(Subresource::Status),
            "scale" if has_scale(info) => Ok(Subresource::Scale),
            "finalize" if strategy_for(info).has_finalize_subresource() => {
                Ok(Subresource::Finalize)
            }
            "approval" if strategy_for(info).has_approval_subresource() => {
                Ok(Subresource::Approval)
            }
            _ => Err(ApiError::path_not_found()),
        }
    }

    /// The `apiVersion` and `kind` a `PUT` body of this subresource holds: the
    /// parent's for `status`, `autoscaling/v1` `Scale` for `scale`.
    pub(crate) fn body_type(self, info: &ResourceInfo) -> (String, &'static str) {
        match self {
            Subresource::Status | Subresource::Finalize | Subresource::Approval => {
                (info.api_version(), info.kind)
            }
            Subresource::Scale => ("autoscaling/v1".to_string(), "Scale"),
        }
    }
}

/// Whether `info` has a `status` subresource (its strategy says, as its
/// upstream registry has a `StatusREST`).
pub fn has_status(info: &ResourceInfo) -> bool {
    strategy_for(info).has_status_subresource()
}

/// Whether `info` has a `scale` subresource (a `ScaleREST`).
pub fn has_scale(info: &ResourceInfo) -> bool {
    strategy_for(info).has_scale_subresource()
}

/// The patch metadata of what a subresource shows: the object's kind for
/// `status`, an `autoscaling/v1` `Scale` (its metadata only) for `scale`.
fn view_schema(sub: Subresource, info: &ResourceInfo) -> &'static StructMeta {
    match sub {
        Subresource::Status | Subresource::Finalize | Subresource::Approval => {
            strategy_for(info).patch_meta()
        }
        Subresource::Scale => &patch_meta::METADATA_ONLY,
    }
}

/// What a subresource shows of `obj`.
fn view(sub: Subresource, info: &ResourceInfo, obj: &Object) -> Value {
    match sub {
        Subresource::Scale => scale_of(info, obj),
        _ => serde_json::to_value(obj).unwrap_or(Value::Null),
    }
}

/// Mirrors `scaleFromDeployment` (and `scaleFromRC`, `scaleFromStatefulSet`,
/// whose selectors their strategies write): an `autoscaling/v1` `Scale`.
pub fn scale_of(info: &ResourceInfo, deployment: &Object) -> Value {
    let mut metadata = json!({
        "name": deployment.name(),
        "namespace": deployment.namespace(),
        "resourceVersion": deployment.resource_version(),
    });
    if let Some(uid) = &deployment.metadata.uid {
        metadata["uid"] = json!(uid);
    }
    if let Some(created) = &deployment.metadata.creation_timestamp {
        metadata["creationTimestamp"] = json!(created);
    }
    let replicas = deployment.data["spec"]["replicas"].as_i64().unwrap_or(1);
    json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": { "replicas": replicas },
        "status": {
            "replicas": deployment.data["status"]["replicas"].as_i64().unwrap_or(0),
            "selector": strategy_for(info).scale_selector(deployment),
        },
    })
}

/// Carries a changed view back into the object: the status, or the replicas.
fn apply_view(
    sub: Subresource,
    info: &ResourceInfo,
    current: &Object,
    view: &Value,
) -> Result<Object, ApiError> {
    let mut next = current.clone();
    match sub {
        Subresource::Status => {
            match view.get("status") {
                Some(status) if !status.is_null() => {
                    next.data["status"] = status.clone()
                }
                _ => {
                    if let Some(data) = next.data.as_object_mut() {
                        data.remove("status");
                    }
                }
            }
            let written = written_metadata(view)?;
            strategy_for(info).prepare_for_status_update(&mut next, &written);
            crate::registry::rest::omit_empty_metadata(&mut next.metadata);
        }
        Subresource::Finalize => {
            // `namespaceFinalizeStrategy.PrepareForUpdate`: only the status
            // stays; `ValidateNamespaceFinalizeUpdate` checks the names.
            next.data["spec"] = view
                .get("spec")
                .cloned()
                .unwrap_or_else(|| serde_json::json!({}));
            let written = written_metadata(view)?;
            strategy_for(info).prepare_for_status_update(&mut next, &written);
            let errors =
                crate::apis::core::validation::validate_namespace_finalizers(
                    &next.data,
                );
            crate::registry::rest::invalid(info, current.name(), &errors)?;
        }
        Subresource::Approval => {
            // `csrApprovalStrategy.PrepareForUpdate`: the conditions change
            // (their times filled as `populateConditionTimestamps` fills
            // them), nothing else.
            let mut conditions = view["status"]["conditions"].clone();
            populate_condition_timestamps(
                &mut conditions,
                &current.data["status"]["conditions"],
            );
            next.data["status"]["conditions"] = conditions;
            let errors = crate::apis::certificates::validation::validate_conditions(
                &next.data,
            );
            crate::registry::rest::invalid(info, current.name(), &errors)?;
        }
        Subresource::Scale => {
            let replicas = &view["spec"]["replicas"];
            let Some(count) = replicas.as_i64().filter(|n| *n >= 0) else {
                return Err(ApiError::invalid(
                    "Scale.autoscaling",
                    current.name(),
                    "spec.replicas",
                    &format!(
                        "Invalid value: {replicas}: must be greater than or equal to 0"
                    ),
                ));
            };
            next.data["spec"]["replicas"] = json!(count);
        }
    }
    next.types = Some(info.type_meta());
    next.metadata.resource_version = None;
    next.metadata.generation = next_generation(&next, current, false);
    Ok(next)
}

/// The metadata a written view carries. Upstream decodes the whole object
/// first: bad metadata is a 400.
fn written_metadata(view: &Value) -> Result<ObjectMeta, ApiError> {
    match view.get("metadata") {
        None | Some(Value::Null) => Ok(ObjectMeta::default()),
        Some(metadata) => serde_json::from_value(metadata.clone())
            .map_err(|error| ApiError::bad_request(format!("metadata: {error}"))),
    }
}

/// Mirrors `populateConditionTimestamps`: a condition without a
/// `lastUpdateTime` is updated now; one without a `lastTransitionTime` keeps
/// the old one of the same type and status, or moves now.
fn populate_condition_timestamps(conditions: &mut Value, old: &Value) {
    let now = crate::registry::rest::now();
    for condition in conditions.as_array_mut().into_iter().flatten() {
        if condition["lastUpdateTime"].is_null() {
            condition["lastUpdateTime"] = serde_json::json!(now);
        }
        if condition["lastTransitionTime"].is_null() {
            let same = crate::apis::items(old).iter().find(|o| {
                o["type"] == condition["type"] && o["status"] == condition["status"]
            });
            condition["lastTransitionTime"] = match same {
                Some(old) if !old["lastTransitionTime"].is_null() => {
                    old["lastTransitionTime"].clone()
                }
                _ => serde_json::json!(now),
            };
        }
    }
}

/// The resourceVersion a view asks for, as a precondition ("" for none).
fn wanted_version(view: &Value) -> String {
    view["metadata"]["resourceVersion"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

fn view_response(sub: Subresource, info: &ResourceInfo, obj: &Object) -> Response {
    let body = serde_json::to_vec(&view(sub, info, obj)).unwrap_or_default();
    (
        StatusCode::OK,
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        body,
    )
        .into_response()
}

/// `GET …/{status,scale}`.
pub(crate) async fn get(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    sub: Subresource,
) -> Result<Response, ApiError> {
    let key = object_key(&resource.info, namespace, name);
    let obj = resource.dyn_storage.get(key).await?;
    Ok(view_response(sub, &resource.info, &obj))
}

/// How a write computes the new view from the current one.
enum Change {
    /// `PUT`: the body is the new view.
    Replace(Value),
    /// `PATCH`: the patch applies to the current view.
    Patch(Patch),
}

/// `PUT` or `PATCH` on `…/{status,scale}`: a guaranteed update of the object
/// that changes only what the subresource shows.
async fn write(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    sub: Subresource,
    manager: &str,
    change: Change,
) -> Result<Response, ApiError> {
    let info = resource.info.clone();
    let manager = manager.to_string();
    let key = object_key(&info, namespace, name);
    let schema = view_schema(sub, &info);
    let updated = update_or_reject(
        resource,
        key,
        move |current: &Object, rejected: &Rejection| {
            let before = view(sub, &info, current);
            let after = match &change {
                Change::Replace(body) => body.clone(),
                Change::Patch(patch) => {
                    let mut patched = before.clone();
                    patch
                        .apply(&mut patched, schema)
                        .map_err(|error| rejected.reject(error))?;
                    patched
                }
            };
            let wanted = wanted_version(&after);
            if !wanted.is_empty() && wanted != current.resource_version() {
                return Err(conflict(&info, current.name()));
            }
            let mut next = apply_view(sub, &info, current, &after)
                .map_err(|error| rejected.reject(error))?;
            // The manager's `Update` through the subresource, recorded on the
            // object (upstream's scale handler maps `.spec.replicas` so too).
            let name = match sub {
                Subresource::Status => "status",
                Subresource::Scale => "scale",
                Subresource::Finalize => "finalize",
                Subresource::Approval => "approval",
            };
            crate::fieldmanager::update_no_errors(
                &info,
                Some(current),
                &mut next,
                &manager,
                Some(name),
            );
            Ok(next)
        },
    )
    .await?;
    Ok(view_response(sub, &resource.info, &updated))
}

/// `PUT …/{status,scale}`.
pub(crate) async fn put(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    sub: Subresource,
    manager: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let view: Value = serde_json::from_slice(body).map_err(|e| {
        ApiError::bad_request(format!(
            "the body of the request could not be decoded: {e}"
        ))
    })?;
    if !view.is_object() {
        return Err(ApiError::bad_request("the body must be a JSON object"));
    }
    write(
        resource,
        namespace,
        name,
        sub,
        manager,
        Change::Replace(view),
    )
    .await
}

/// `PATCH …/{status,scale}`, with any patch type `PATCH` takes.
pub(crate) async fn patch(
    resource: &RegisteredResource,
    namespace: Option<&str>,
    name: &str,
    sub: Subresource,
    patch_type: PatchType,
    manager: &str,
    body: &[u8],
) -> Result<Response, ApiError> {
    let patch = Patch::decode(patch_type, body)?;
    write(
        resource,
        namespace,
        name,
        sub,
        manager,
        Change::Patch(patch),
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn deployment() -> Object {
        let mut d = Object::new(&ResourceInfo::DEPLOYMENTS, Some("ns"), "web").with_data(json!({
            "spec": {
                "replicas": 2,
                "selector": {
                    "matchLabels": {"tier": "front", "app": "web"},
                    "matchExpressions": [
                        {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                        {"key": "canary", "operator": "DoesNotExist"},
                    ],
                },
            },
            "status": {"replicas": 1},
        }));
        d.metadata.resource_version = Some("7".into());
        d
    }

    #[test]
    fn a_scale_shows_the_replicas_and_the_selector_as_a_string() {
        let scale = scale_of(&ResourceInfo::DEPLOYMENTS, &deployment());
        assert_eq!(scale["apiVersion"], "autoscaling/v1");
        assert_eq!(scale["kind"], "Scale");
        assert_eq!(scale["metadata"]["resourceVersion"], "7");
        assert_eq!(scale["spec"]["replicas"], 2);
        assert_eq!(scale["status"]["replicas"], 1);
        assert_eq!(
            scale["status"]["selector"],
            "app=web,!canary,env in (dev,prod),tier=front"
        );
    }

    #[test]
    fn a_scale_sets_only_the_replicas_and_refuses_a_negative_count() {
        let current = deployment();
        let mut wanted = scale_of(&ResourceInfo::DEPLOYMENTS, &current);
        wanted["spec"]["replicas"] = json!(5);
        wanted["status"]["replicas"] = json!(99);
        let info = ResourceInfo::DEPLOYMENTS;
        let next =
            apply_view(Subresource::Scale, &info, &current, &wanted).expect("valid");
        assert_eq!(next.data["spec"]["replicas"], 5);
        assert_eq!(next.data["status"], current.data["status"]);
        wanted["spec"]["replicas"] = json!(-1);
        let error = apply_view(Subresource::Scale, &info, &current, &wanted)
            .expect_err("negative");
        assert_eq!(error.code(), 422);
    }

    #[test]
    fn a_status_write_changes_the_status_and_nothing_else() {
        let current = deployment();
        let mut wanted =
            view(Subresource::Status, &ResourceInfo::DEPLOYMENTS, &current);
        wanted["spec"]["replicas"] = json!(9);
        wanted["metadata"]["labels"] = json!({"x": "y"});
        wanted["status"] = json!({"replicas": 2, "readyReplicas": 2});
        let info = ResourceInfo::DEPLOYMENTS;
        let next = apply_view(Subresource::Status, &info, &current, &wanted)
            .expect("valid");
        assert_eq!(
            next.data["status"],
            json!({"replicas": 2, "readyReplicas": 2})
        );
        assert_eq!(next.data["spec"], current.data["spec"]);
        assert_eq!(next.metadata.labels, current.metadata.labels);
    }

    #[test]
    fn only_served_subresources_resolve() {
        assert!(Subresource::of(&ResourceInfo::DEPLOYMENTS, "scale").is_ok());
        assert!(Subresource::of(&ResourceInfo::PODS, "status").is_ok());
        assert_eq!(
            Subresource::of(&ResourceInfo::PODS, "scale")
                .err()
                .map(|e| e.code()),
            Some(404)
        );
        assert_eq!(
            Subresource::of(&ResourceInfo::CONFIGMAPS, "status")
                .err()
                .map(|e| e.code()),
            Some(404)
        );
    }
}
