//! Mirrors the parts of kubernetes' `pkg/apis/core/validation/validation.go`
//! that the core kinds served besides pods meet: `ValidateService` and
//! `ValidateServiceUpdate`, `ValidateEndpoints`, `ValidatePersistentVolume`
//! (and its update), `ValidatePersistentVolumeClaim` (and its update),
//! `ValidateReplicationController`, `ValidateResourceQuota`, and
//! `ValidateNamespaceFinalizeUpdate`.

use apimachinery::util::validation::field::{ErrorList, FieldError};
use apimachinery::util::validation::{is_dns1123_subdomain, is_qualified_name};
use serde_json::Value;

use crate::apis::{
    go_value, is_empty, items, non_negative, text, validate_pod_template,
};

const SERVICE_TYPES: &[&str] =
    &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const PROTOCOLS: &[&str] = &["SCTP", "TCP", "UDP"];

/// Mirrors `ValidateService`'s spec checks: the type, the ports (required
/// unless headless or `ExternalName`; each named when there are several,
/// names unique, numbers in range, a known protocol), and `externalName` for
/// an `ExternalName` service.
pub fn validate_service(service: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = &service["spec"];
    let kind = text(&spec["type"]);
    if !SERVICE_TYPES.contains(&kind) {
        errors.push(FieldError::not_supported("spec.type", kind, SERVICE_TYPES));
    }
    let headless = text(&spec["clusterIP"]) == "None";
    let ports = items(&spec["ports"]);
    if kind == "ExternalName" {
        if text(&spec["externalName"]).is_empty() {
            errors.push(FieldError::required("spec.externalName", ""));
        }
    } else if ports.is_empty() && !headless {
        errors.push(FieldError::required("spec.ports", ""));
    }
    let mut names = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let path = format!("spec.ports[{i}]");
        let name = text(&port["name"]);
        if ports.len() > 1 && name.is_empty() {
            errors.push(FieldError::required(&format!("{path}.name"), ""));
        } else if !name.is_empty() && names.contains(&name) {
            errors.push(FieldError::duplicate(&format!("{path}.name"), name));
        }
        names.push(name);
        let number = port["port"].as_i64().unwrap_or(0);
        if !(1..=65535).contains(&number) {
            errors.push(FieldError::invalid_number(
                &format!("{path}.port"),
                number,
                "must be between 1 and 65535, inclusive",
            ));
        }
        let protocol = text(&port["protocol"]);
        if !PROTOCOLS.contains(&protocol) {
            errors.push(FieldError::not_supported(
                &format!("{path}.protocol"),
                protocol,
                PROTOCOLS,
            ));
        }
        if let Some(node_port) = port["nodePort"].as_i64()
            && node_port != 0
            && !matches!(kind, "NodePort" | "LoadBalancer")
        {
            errors.push(FieldError::forbidden(
                &format!("{path}.nodePort"),
                "may not be used when `type` is 'ClusterIP'",
            ));
        }
    }
    errors
}

/// Mirrors `ValidateServiceUpdate`'s rule on addresses: a cluster IP, once
/// allocated, stays (unless the service becomes or stops being
/// `ExternalName`).
pub fn validate_service_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_service(new);
    let was_external = text(&old["spec"]["type"]) == "ExternalName";
    let is_external = text(&new["spec"]["type"]) == "ExternalName";
    let old_ip = text(&old["spec"]["clusterIP"]);
    let new_ip = text(&new["spec"]["clusterIP"]);
    if !was_external && !is_external && !old_ip.is_empty() && new_ip != old_ip {
        errors.push(FieldError::invalid(
            "spec.clusterIPs[0]",
            new_ip,
            "may not change once set",
        ));
    }
    errors
}

/// Mirrors `ValidateEndpoints`' subsets: every address has an IP, every port
/// a number in range and a known protocol.
pub fn validate_endpoints(endpoints: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    for (i, subset) in items(&endpoints["subsets"]).iter().enumerate() {
        for list in ["addresses", "notReadyAddresses"] {
            for (j, address) in items(&subset[list]).iter().enumerate() {
                let ip = text(&address["ip"]);
                if ip.parse::<std::net::IpAddr>().is_err() {
                    errors.push(FieldError::invalid(
                        &format!("subsets[{i}].{list}[{j}].ip"),
                        ip,
                        "must be a valid IP address",
                    ));
                }
            }
        }
        for (j, port) in items(&subset["ports"]).iter().enumerate() {
            let number = port["port"].as_i64().unwrap_or(0);
            if !(1..=65535).contains(&number) {
                errors.push(FieldError::invalid_number(
                    &format!("subsets[{i}].ports[{j}].port"),
                    number,
                    "must be between 1 and 65535, inclusive",
                ));
            }
        }
    }
    errors
}

/// The fields of a `PersistentVolumeSpec` that are not its volume source.
const PV_SPEC_FIELDS: &[&str] = &[
    "capacity",
    "accessModes",
    "claimRef",
    "persistentVolumeReclaimPolicy",
    "storageClassName",
    "mountOptions",
    "volumeMode",
    "nodeAffinity",
    "volumeAttributesClassName",
];

/// A persistent volume's source: every spec field that is not one of
/// [`PV_SPEC_FIELDS`] (`hostPath`, `nfs`, `csi`, `local`, …).
fn pv_sources(spec: &Value) -> Vec<(&String, &Value)> {
    spec.as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !PV_SPEC_FIELDS.contains(&k.as_str()))
        .collect()
}

/// Mirrors `ValidatePersistentVolumeSpec`: a capacity with `storage`, at least
/// one access mode, and exactly one volume source.
pub fn validate_persistent_volume(pv: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = &pv["spec"];
    if is_empty(&spec["accessModes"]) {
        errors.push(FieldError::required("spec.accessModes", ""));
    }
    if is_empty(&spec["capacity"]["storage"]) {
        errors.push(FieldError::required("spec.capacity", ""));
    }
    match pv_sources(spec).len() {
        0 => errors.push(FieldError::required("spec", "must specify a volume type")),
        1 => {}
        _ => errors.push(FieldError::forbidden(
            "spec",
            "may not specify more than 1 volume type",
        )),
    }
    errors
}

/// Mirrors `ValidatePersistentVolumeUpdate`: the volume source and the volume
/// mode are fixed at creation.
pub fn validate_persistent_volume_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_persistent_volume(new);
    if pv_sources(&new["spec"]) != pv_sources(&old["spec"]) {
        errors.push(FieldError::forbidden(
            "spec.persistentvolumesource",
            "spec.persistentvolumesource is immutable after creation",
        ));
    }
    if let Some(error) = crate::apis::immutable(
        &new["spec"]["volumeMode"],
        &old["spec"]["volumeMode"],
        "volumeMode",
    ) {
        errors.push(error);
    }
    errors
}

/// Mirrors `ValidatePersistentVolumeClaimSpec`: at least one access mode and
/// a storage request.
pub fn validate_persistent_volume_claim(pvc: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = &pvc["spec"];
    if is_empty(&spec["accessModes"]) {
        errors.push(FieldError::required(
            "spec.accessModes",
            "at least 1 access mode is required",
        ));
    }
    if is_empty(&spec["resources"]["requests"]["storage"]) {
        errors.push(FieldError::required("spec.resources[storage]", ""));
    }
    errors
}

/// Mirrors `ValidatePersistentVolumeClaimUpdate`: besides the storage request
/// and the volume attributes class, the spec is fixed once created, except
/// that the volume a claim is bound to may be set once.
pub fn validate_persistent_volume_claim_update(
    new: &Value,
    old: &Value,
) -> ErrorList {
    let mut errors = validate_persistent_volume_claim(new);
    let strip = |spec: &Value| {
        let mut spec = spec.clone();
        if let Some(map) = spec.as_object_mut() {
            map.remove("resources");
            map.remove("volumeAttributesClassName");
            if text(&old["spec"]["volumeName"]).is_empty() {
                map.remove("volumeName");
            }
        }
        spec
    };
    if strip(&new["spec"]) != strip(&old["spec"]) {
        errors.push(FieldError::forbidden(
            "spec",
            "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
        ));
    }
    errors
}

/// Mirrors `ValidateReplicationControllerSpec`: a non-negative replica count,
/// a selector that is not empty and selects the template's labels, and a
/// template with containers.
pub fn validate_replication_controller(rc: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = &rc["spec"];
    errors.extend(non_negative(&spec["replicas"], "spec.replicas"));
    let selector = spec["selector"].as_object();
    if selector.is_none_or(|s| s.is_empty()) {
        errors.push(FieldError::required("spec.selector", ""));
    }
    let template = &spec["template"];
    if template.is_null() {
        errors.push(FieldError::required("spec.template", ""));
        return errors;
    }
    let labels = &template["metadata"]["labels"];
    let selected = selector.into_iter().flatten().all(|(k, v)| labels[k] == *v);
    if !selected {
        errors.push(FieldError::invalid(
            "spec.template.metadata.labels",
            &go_value(labels),
            "selector does not match template labels",
        ));
    }
    validate_pod_template(template, "spec.template", &mut errors);
    errors
}

/// Mirrors `ValidateResourceQuotaSpec`'s names: every `hard` key is a
/// qualified name.
pub fn validate_resource_quota(quota: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    for key in quota["spec"]["hard"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        for message in is_qualified_name(key) {
            errors.push(FieldError::invalid(
                &format!("spec.hard[{key}]"),
                key,
                message,
            ));
        }
    }
    errors
}

/// Mirrors `ValidateNamespaceFinalizeUpdate`'s finalizer names
/// (`validateFinalizerName`): qualified names, `kubernetes` for the built-in
/// one, or a DNS subdomain prefix.
pub fn validate_namespace_finalizers(namespace: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    for (i, finalizer) in items(&namespace["spec"]["finalizers"]).iter().enumerate()
    {
        let name = text(finalizer);
        let mut problems = is_qualified_name(name);
        if name.contains('/') {
            let (prefix, _) = name.split_once('/').unwrap_or_default();
            problems.extend(is_dns1123_subdomain(prefix));
        }
        for message in problems {
            errors.push(FieldError::invalid(
                &format!("spec.finalizers[{i}]"),
                name,
                message,
            ));
        }
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_service_needs_ports_in_range_with_unique_names() {
        let service = json!({"spec": {"type": "ClusterIP", "ports": [
            {"name": "http", "port": 80, "protocol": "TCP"},
            {"name": "http", "port": 70000, "protocol": "TCP"},
            {"port": 81, "protocol": "ICMP"},
        ]}});
        let errors = validate_service(&service);
        let fields: Vec<&str> = errors.iter().map(|e| e.field.as_str()).collect();
        assert_eq!(
            fields,
            [
                "spec.ports[1].name",
                "spec.ports[1].port",
                "spec.ports[2].name",
                "spec.ports[2].protocol"
            ]
        );
        assert!(
            validate_service(&json!({"spec": {"type": "ClusterIP"}}))[0]
                .field
                .ends_with("ports")
        );
        assert!(
            validate_service(
                &json!({"spec": {"type": "ClusterIP", "clusterIP": "None"}})
            )
            .is_empty()
        );
        let errors = validate_service(&json!({"spec": {"type": "ExternalName"}}));
        assert_eq!(errors[0].field, "spec.externalName");
    }

    #[test]
    fn a_cluster_ip_stays_and_a_volume_source_is_fixed() {
        let old = json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10",
            "ports": [{"port": 80, "protocol": "TCP"}]}});
        let mut new = old.clone();
        new["spec"]["clusterIP"] = json!("10.96.0.11");
        assert_eq!(
            validate_service_update(&new, &old)[0].error_body(),
            "Invalid value: \"10.96.0.11\": may not change once set"
        );
        let pv = json!({"spec": {"capacity": {"storage": "1Gi"},
            "accessModes": ["ReadWriteOnce"], "hostPath": {"path": "/a"}}});
        assert!(validate_persistent_volume(&pv).is_empty());
        let mut moved = pv.clone();
        moved["spec"]["hostPath"]["path"] = json!("/b");
        assert_eq!(
            validate_persistent_volume_update(&moved, &pv)[0].field,
            "spec.persistentvolumesource"
        );
        assert_eq!(
            validate_persistent_volume(&json!({"spec": {}}))
                .iter()
                .map(|e| e.field.as_str())
                .collect::<Vec<_>>(),
            ["spec.accessModes", "spec.capacity", "spec"]
        );
    }

    #[test]
    fn a_claim_may_grow_and_be_bound_once() {
        let old = json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}});
        let mut new = old.clone();
        new["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
        new["spec"]["volumeName"] = json!("pv-1");
        assert!(validate_persistent_volume_claim_update(&new, &old).is_empty());
        let mut changed = new.clone();
        changed["spec"]["accessModes"] = json!(["ReadWriteMany"]);
        assert_eq!(
            validate_persistent_volume_claim_update(&changed, &old)[0].field,
            "spec"
        );
    }

    #[test]
    fn a_replication_controller_selects_its_template() {
        let rc = json!({"spec": {"replicas": 1, "selector": {"app": "web"},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
        assert!(validate_replication_controller(&rc).is_empty());
        let mut other = rc.clone();
        other["spec"]["selector"] = json!({"app": "db"});
        other["spec"]["replicas"] = json!(-1);
        let errors = validate_replication_controller(&other);
        assert_eq!(
            errors[0].error_body(),
            "Invalid value: -1: must be greater than or equal to 0"
        );
        assert_eq!(errors[1].field, "spec.template.metadata.labels");
    }
}
