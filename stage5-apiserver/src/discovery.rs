//! Discovery, enough for kubectl: mirrors apiserver's `pkg/endpoints/discovery`
//! (`/api`, `/apis`, `/apis/{group}`, the `APIResourceList` of each group version),
//! `/version` (`pkg/server/routes/version.go`), `/openapi/v3` (`routes/openapi.go`)
//! and `healthz`.
//!
//! # What kubectl needs
//! - It first asks for *aggregated* discovery (`Accept:
//!   application/json;g=apidiscovery.k8s.io; v=v2;as=APIGroupDiscoveryList,…`). We
//!   answer the plain (legacy) documents with `Content-Type: application/json`;
//!   kubectl sees that the answer is not aggregated and falls back to reading
//!   `/api/v1` and `/apis/{group}/{version}`.
//! - `kubectl create -f` validates strictly by default. It asks the OpenAPI v3
//!   document of the object's group version whether the server supports the
//!   `fieldValidation` query parameter (`QueryParamVerifierV3`: a PATCH operation
//!   tagged with the kind's `x-kubernetes-group-version-kind` whose own parameters
//!   include `fieldValidation`). If it does, kubectl sends `fieldValidation=Strict`
//!   and leaves validation to the server; if the document is missing it falls back
//!   to OpenAPI v2 and then fails with "failed to download openapi". So we serve a
//!   small v3 document per group version with exactly that, and 404 for
//!   `/openapi/v2`.

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use crate::access_review;
use crate::app_state::AppState;
use crate::status::ApiError;
use stage5_storage::ResourceInfo;

/// The Kubernetes version the server claims (discovery and `/version`).
pub const KUBE_VERSION: (&str, &str) = ("1", "33");

/// The verbs every resource supports (`APIResource.verbs`).
pub const VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// `GET /version`: mirrors `version.Info`.
pub async fn version() -> Json<Value> {
    Json(json!({
        "major": KUBE_VERSION.0,
        "minor": KUBE_VERSION.1,
        "gitVersion": format!("v{}.{}.0+mini-apiserver", KUBE_VERSION.0, KUBE_VERSION.1),
        "gitCommit": "",
        "gitTreeState": "clean",
        "buildDate": "1970-01-01T00:00:00Z",
        "goVersion": "rust",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, std::env::consts::ARCH),
    }))
}

/// `GET /healthz`, `/readyz`, `/livez`: `ok`.
pub async fn ok() -> &'static str {
    "ok"
}

/// `GET /api`: mirrors `discovery.legacyRootAPIHandler` (`APIVersions`).
pub fn core_versions() -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": ""}],
    })
}

fn group_json(group: &str, version: &str) -> Value {
    let gv =
        json!({"groupVersion": format!("{group}/{version}"), "version": version});
    json!({"name": group, "versions": [gv.clone()], "preferredVersion": gv})
}

/// `GET /apis`: mirrors `discovery.rootAPIsHandler` (`APIGroupList`).
pub fn group_list(state: &AppState) -> Value {
    let groups: Vec<Value> = state
        .registry
        .groups()
        .into_iter()
        .map(|(g, v)| group_json(g, v))
        .chain(std::iter::once(group_json(
            access_review::GROUP,
            access_review::VERSION,
        )))
        .collect();
    json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
}

/// `GET /apis/{group}`: mirrors `discovery.APIGroupHandler`; `None` for an unknown
/// group.
pub fn group(state: &AppState, group: &str) -> Option<Value> {
    let (g, v) = state
        .registry
        .groups()
        .into_iter()
        .chain([(access_review::GROUP, access_review::VERSION)])
        .find(|(g, _)| *g == group)?;
    let mut value = group_json(g, v);
    if let Some(map) = value.as_object_mut() {
        map.insert("kind".into(), "APIGroup".into());
        map.insert("apiVersion".into(), "v1".into());
    }
    Some(value)
}

/// One `APIResource`; `shortNames` and `categories` are left out when empty, as
/// upstream's `omitempty` leaves them.
fn api_resource(info: &ResourceInfo) -> Value {
    let mut resource = json!({
        "name": info.plural,
        "singularName": info.singular,
        "namespaced": info.namespaced,
        "kind": info.kind,
        "verbs": VERBS,
        "storageVersionHash": "",
    });
    if !info.short_names.is_empty() {
        resource["shortNames"] = json!(info.short_names);
    }
    if !info.categories.is_empty() {
        resource["categories"] = json!(info.categories);
    }
    resource
}

/// The `APIResource`s of a resource's subresources, as upstream lists them next to
/// it: `status`, `finalize` and `approval` with the resource's own kind,
/// `binding` as a `Binding`, `eviction` as a `policy/v1` `Eviction`, `scale` as
/// an `autoscaling/v1` `Scale` (the scale client finds the kind here).
fn api_subresources(info: &ResourceInfo) -> Vec<Value> {
    const READ_WRITE: &[&str] = &["get", "patch", "update"];
    let strategy = crate::registry::strategy_for(info);
    let own = ("", "", info.kind);
    [
        (strategy.has_status_subresource(), "status", own, READ_WRITE),
        (
            strategy.has_binding_subresource(),
            "binding",
            ("", "", "Binding"),
            &["create"],
        ),
        (
            strategy.has_eviction_subresource(),
            "eviction",
            ("policy", "v1", "Eviction"),
            &["create"],
        ),
        (
            strategy.has_finalize_subresource(),
            "finalize",
            own,
            &["update"],
        ),
        (
            strategy.has_approval_subresource(),
            "approval",
            own,
            READ_WRITE,
        ),
        (
            strategy.has_scale_subresource(),
            "scale",
            ("autoscaling", "v1", "Scale"),
            READ_WRITE,
        ),
    ]
    .into_iter()
    .filter(|(served, ..)| *served)
    .map(|(_, name, (group, version, kind), verbs)| {
        let mut subresource = json!({
            "name": format!("{}/{name}", info.plural),
            "singularName": "",
            "namespaced": info.namespaced,
            "kind": kind,
            "verbs": verbs,
        });
        if !group.is_empty() {
            subresource["group"] = json!(group);
            subresource["version"] = json!(version);
        }
        subresource
    })
    .collect()
}

/// `GET /api/v1`, `/apis/{group}/{version}`: mirrors
/// `discovery.APIResourceListHandler`; `None` for a group version nothing is served
/// in.
pub fn resource_list(state: &AppState, group: &str, version: &str) -> Option<Value> {
    if group == access_review::GROUP && version == access_review::VERSION {
        return Some(json!({
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": format!("{group}/{version}"),
            "resources": access_review::api_resources(),
        }));
    }
    let resources: Vec<Value> = state
        .registry
        .resources()
        .iter()
        .filter(|r| r.info.group == group && r.info.version == version)
        .flat_map(|r| {
            std::iter::once(api_resource(&r.info)).chain(api_subresources(&r.info))
        })
        .collect();
    if resources.is_empty() {
        return None;
    }
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": group_version,
        "resources": resources,
    }))
}

/// `GET /openapi/v2`: not served (404). kubectl only reaches it when `/openapi/v3`
/// fails.
pub async fn openapi_v2() -> ApiError {
    ApiError::path_not_found()
}

fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `GET /openapi/v3`: the index of group-version documents
/// (`handler3.OpenAPIV3Discovery`).
pub async fn openapi_v3_root(State(state): State<Arc<AppState>>) -> Json<Value> {
    let mut paths = serde_json::Map::new();
    for r in state.registry.resources() {
        let path = gv_path(r.info.group, r.info.version);
        let url = format!("/openapi/v3/{path}?hash=mini-{}", KUBE_VERSION.1);
        paths.insert(path, json!({"serverRelativeURL": url}));
    }
    Json(json!({"paths": paths}))
}

/// `GET /openapi/v3/{api/v1 | apis/g/v}`: an OpenAPI 3 document for one group
/// version. Each resource's object path has operations tagged with its kind that
/// declare the `fieldValidation` parameter, which kubectl's field-validation
/// check reads; `components.schemas` holds each kind's schema and every schema
/// it refers to, with descriptions ([`component_schemas`]), which `kubectl
/// explain` reads.
pub async fn openapi_v3_group_version(
    State(state): State<Arc<AppState>>,
    Path(path): Path<String>,
) -> Response {
    let mut paths = serde_json::Map::new();
    for r in state.registry.resources() {
        if gv_path(r.info.group, r.info.version) != path {
            continue;
        }
        let info = &r.info;
        let base = format!("/{path}");
        let object_path = if info.namespaced {
            format!("{base}/namespaces/{{namespace}}/{}/{{name}}", info.plural)
        } else {
            format!("{base}/{}/{{name}}", info.plural)
        };
        let gvk =
            json!({"group": info.group, "version": info.version, "kind": info.kind});
        let parameters = json!([
            {"name": "fieldValidation", "in": "query", "schema": {"type": "string"}},
            {"name": "fieldManager", "in": "query", "schema": {"type": "string"}},
            {"name": "dryRun", "in": "query", "schema": {"type": "string"}},
        ]);
        let operation = |action: &str| {
            json!({
                "operationId": format!("{action}{}", info.kind),
                "x-kubernetes-action": action,
                "x-kubernetes-group-version-kind": gvk,
                "parameters": parameters,
                "responses": {"200": {"description": "OK"}},
            })
        };
        paths.insert(
            object_path,
            json!({
                "get": operation("get"),
                "put": operation("put"),
                "patch": operation("patch"),
                "delete": operation("delete"),
                "parameters": [
                    {"name": "name", "in": "path", "required": true, "schema": {"type": "string"}},
                ],
            }),
        );
    }
    if paths.is_empty() {
        return ApiError::path_not_found().into_response();
    }
    let infos: Vec<&ResourceInfo> = state
        .registry
        .resources()
        .iter()
        .filter(|r| gv_path(r.info.group, r.info.version) == path)
        .map(|r| &r.info)
        .collect();
    let doc = json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": format!("v{}.{}.0", KUBE_VERSION.0, KUBE_VERSION.1)},
        "paths": paths,
        "components": {"schemas": component_schemas(&infos)},
    });
    ([(header::CONTENT_TYPE, "application/json")], Json(doc)).into_response()
}

/// The component schemas of the kinds in `infos` and of every type they refer to,
/// as kube-apiserver's OpenAPI v3 document has them: generated from the
/// k8s-openapi types (their `schemars` feature carries the upstream schema and
/// descriptions) with OpenAPI 3 settings (`#/components/schemas/` references, a
/// described reference wrapped in `allOf`), each kind's schema tagged with its
/// `x-kubernetes-group-version-kind`, which is how `kubectl explain` finds it.
pub fn component_schemas(infos: &[&ResourceInfo]) -> serde_json::Map<String, Value> {
    let mut generator =
        schemars::generate::SchemaSettings::openapi3().into_generator();
    let mut kinds = Vec::new();
    for info in infos {
        let Some(schema) =
            crate::registry::strategy_for(info).openapi_schema(&mut generator)
        else {
            continue;
        };
        if let Some(name) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.rsplit('/').next())
        {
            kinds.push((name.to_string(), *info));
        }
    }
    let mut schemas = generator.take_definitions(true);
    for (name, info) in kinds {
        if let Some(Value::Object(schema)) = schemas.get_mut(&name) {
            schema.insert(
                "x-kubernetes-group-version-kind".into(),
                json!([{"group": info.group, "version": info.version, "kind": info.kind}]),
            );
        }
    }
    schemas
}
