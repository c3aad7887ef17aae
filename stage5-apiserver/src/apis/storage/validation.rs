//! Mirrors the parts of kubernetes' `pkg/apis/storage/validation`
//! `validation.go` the storage kinds meet: `ValidateStorageClass` and its
//! update, `ValidateCSIDriver` and its update, `ValidateCSINode`,
//! `ValidateCSIStorageCapacity` and its update, `ValidateVolumeAttachment` and
//! its update.

use apimachinery::util::validation::field::{ErrorList, FieldError};
use apimachinery::util::validation::is_dns1123_subdomain;
use serde_json::Value;

use crate::apis::{immutable, items, text};

/// Mirrors `ValidateStorageClass`: a provisioner (a qualified name) and a
/// known reclaim policy and binding mode.
pub fn validate_storage_class(class: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let provisioner = text(&class["provisioner"]);
    if provisioner.is_empty() {
        errors.push(FieldError::required("provisioner", ""));
    }
    let reclaim = text(&class["reclaimPolicy"]);
    if !matches!(reclaim, "Delete" | "Retain") {
        errors.push(FieldError::not_supported(
            "reclaimPolicy",
            reclaim,
            &["Delete", "Retain"],
        ));
    }
    let mode = text(&class["volumeBindingMode"]);
    if !matches!(mode, "Immediate" | "WaitForFirstConsumer") {
        errors.push(FieldError::not_supported(
            "volumeBindingMode",
            mode,
            &["Immediate", "WaitForFirstConsumer"],
        ));
    }
    errors
}

/// Mirrors `ValidateStorageClassUpdate`: the parameters, provisioner, reclaim
/// policy and binding mode are fixed.
pub fn validate_storage_class_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_storage_class(new);
    for (field, message) in [
        ("parameters", "updates to parameters are forbidden."),
        ("provisioner", "updates to provisioner are forbidden."),
        ("reclaimPolicy", "updates to reclaimPolicy are forbidden."),
    ] {
        if new[field] != old[field] {
            errors.push(FieldError::forbidden(field, message));
        }
    }
    errors.extend(immutable(
        &new["volumeBindingMode"],
        &old["volumeBindingMode"],
        "volumeBindingMode",
    ));
    errors
}

/// Mirrors `ValidateCSIDriver`'s spec: a known fsGroup policy and lifecycle
/// modes.
pub fn validate_csi_driver(driver: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = &driver["spec"];
    let policy = text(&spec["fsGroupPolicy"]);
    if !policy.is_empty()
        && !matches!(policy, "ReadWriteOnceWithFSType" | "File" | "None")
    {
        errors.push(FieldError::not_supported(
            "spec.fsGroupPolicy",
            policy,
            &["File", "None", "ReadWriteOnceWithFSType"],
        ));
    }
    for (i, mode) in items(&spec["volumeLifecycleModes"]).iter().enumerate() {
        let mode = text(mode);
        if !matches!(mode, "Persistent" | "Ephemeral") {
            errors.push(FieldError::not_supported(
                &format!("spec.volumeLifecycleModes[{i}]"),
                mode,
                &["Ephemeral", "Persistent"],
            ));
        }
    }
    errors
}

/// Mirrors `ValidateCSIDriverUpdate`: whether it attaches, its lifecycle
/// modes and its fsGroup policy are fixed.
pub fn validate_csi_driver_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_csi_driver(new);
    for field in ["attachRequired", "volumeLifecycleModes", "fsGroupPolicy"] {
        errors.extend(immutable(
            &new["spec"][field],
            &old["spec"][field],
            &format!("spec.{field}"),
        ));
    }
    errors
}

/// Mirrors `ValidateCSINode`: every driver has a name (a DNS subdomain, once)
/// and a node ID.
pub fn validate_csi_node(node: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let mut names: Vec<&str> = Vec::new();
    for (i, driver) in items(&node["spec"]["drivers"]).iter().enumerate() {
        let path = format!("spec.drivers[{i}]");
        let name = text(&driver["name"]);
        if name.is_empty() {
            errors.push(FieldError::required(&format!("{path}.name"), ""));
        } else if names.contains(&name) {
            errors.push(FieldError::duplicate(&format!("{path}.name"), name));
        } else {
            for message in is_dns1123_subdomain(name) {
                errors.push(FieldError::invalid(
                    &format!("{path}.name"),
                    name,
                    message,
                ));
            }
        }
        names.push(name);
        if text(&driver["nodeID"]).is_empty() {
            errors.push(FieldError::required(&format!("{path}.nodeID"), ""));
        }
    }
    errors
}

/// Mirrors `ValidateCSINodeUpdate`: the rules of a new one (the drivers may
/// change as a kubelet registers them).
pub fn validate_csi_node_update(new: &Value, _old: &Value) -> ErrorList {
    validate_csi_node(new)
}

/// Mirrors `ValidateCSIStorageCapacity`: a storage class name.
pub fn validate_csi_storage_capacity(capacity: &Value) -> ErrorList {
    let class = text(&capacity["storageClassName"]);
    if class.is_empty() {
        return vec![FieldError::required("storageClassName", "")];
    }
    is_dns1123_subdomain(class)
        .into_iter()
        .map(|message| FieldError::invalid("storageClassName", class, message))
        .collect()
}

/// Mirrors `ValidateCSIStorageCapacityUpdate`: everything but the capacities
/// is fixed.
pub fn validate_csi_storage_capacity_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_csi_storage_capacity(new);
    for field in ["storageClassName", "nodeTopology"] {
        errors.extend(immutable(&new[field], &old[field], field));
    }
    errors
}

/// Mirrors `ValidateVolumeAttachment`: an attacher, a node, and exactly one
/// source (a persistent volume's name or an inline spec).
pub fn validate_volume_attachment(attachment: &Value) -> ErrorList {
    let mut errors = ErrorList::new();
    let spec = &attachment["spec"];
    if text(&spec["attacher"]).is_empty() {
        errors.push(FieldError::required("spec.attacher", ""));
    }
    if text(&spec["nodeName"]).is_empty() {
        errors.push(FieldError::required("spec.nodeName", ""));
    }
    let source = &spec["source"];
    let named = !text(&source["persistentVolumeName"]).is_empty();
    let inline = !source["inlineVolumeSpec"].is_null();
    if named == inline {
        errors.push(FieldError::required(
            "spec.source",
            "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
        ));
    }
    errors
}

/// Mirrors `ValidateVolumeAttachmentUpdate`: the spec is fixed.
pub fn validate_volume_attachment_update(new: &Value, old: &Value) -> ErrorList {
    let mut errors = validate_volume_attachment(new);
    errors.extend(immutable(&new["spec"], &old["spec"], "spec"));
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_storage_class_keeps_its_parameters() {
        let old = json!({"provisioner": "example.com/nfs", "reclaimPolicy": "Delete",
            "volumeBindingMode": "Immediate", "parameters": {"a": "b"}});
        assert!(validate_storage_class(&old).is_empty());
        let mut new = old.clone();
        new["parameters"]["a"] = json!("c");
        assert_eq!(
            validate_storage_class_update(&new, &old)[0].error_body(),
            "Forbidden: updates to parameters are forbidden."
        );
    }

    #[test]
    fn a_csi_node_names_each_driver_once_with_a_node_id() {
        let node = json!({"spec": {"drivers": [
            {"name": "a.csi.io", "nodeID": "n1"},
            {"name": "a.csi.io", "nodeID": "n1"},
            {"name": "b.csi.io"}]}});
        let fields: Vec<String> = validate_csi_node(&node)
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["spec.drivers[1].name", "spec.drivers[2].nodeID"]);
    }

    #[test]
    fn an_attachment_names_one_source_and_stays() {
        let va = json!({"spec": {"attacher": "a.csi.io", "nodeName": "n1",
            "source": {"persistentVolumeName": "pv-1"}}});
        assert!(validate_volume_attachment(&va).is_empty());
        let mut moved = va.clone();
        moved["spec"]["nodeName"] = json!("n2");
        assert_eq!(
            validate_volume_attachment_update(&moved, &va)[0].field,
            "spec"
        );
    }
}
