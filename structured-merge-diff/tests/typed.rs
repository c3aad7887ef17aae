//! structured-merge-diff's `typed` package over the served kinds' schemas
//! (apimachinery's type converter), as upstream's tests run it over real types.

use apimachinery::util::managedfields::typeconverter;
use serde_json::json;
use structured_merge_diff::fieldpath::{Path, PathElement, Set};
use structured_merge_diff::schema::Schema;
use structured_merge_diff::typed::*;

fn pod() -> &'static Schema {
    &typeconverter::POD
}

#[test]
fn merge_maps_lists_by_key_sets_and_atomics() {
    let live = json!({
        "metadata": {"labels": {"a": "1"}, "finalizers": ["x"]},
        "spec": {
            "containers": [
                {"name": "a", "image": "old", "args": ["1", "2"]},
                {"name": "b", "image": "b"},
            ],
            "nodeSelector": {"disk": "ssd", "zone": "z"},
            "tolerations": [{"key": "k"}],
        },
    });
    let config = json!({
        "metadata": {"labels": {"b": "2"}, "finalizers": ["y"]},
        "spec": {
            "containers": [{"name": "a", "image": "new", "args": ["3"]}, {"name": "c", "image": "c"}],
            "nodeSelector": {"disk": "hdd"},
            "tolerations": [{"key": "t"}],
        },
    });
    let merged = merge(&live, &config, pod());
    assert_eq!(
        merged,
        json!({
            "metadata": {"labels": {"a": "1", "b": "2"}, "finalizers": ["x", "y"]},
            "spec": {
                "containers": [
                    {"name": "a", "image": "new", "args": ["3"]},
                    {"name": "b", "image": "b"},
                    {"name": "c", "image": "c"},
                ],
                "nodeSelector": {"disk": "hdd"},
                "tolerations": [{"key": "t"}],
            },
        })
    );
}

#[test]
fn merge_keeps_the_configurations_order_for_shared_items() {
    let schema = &typeconverter::POD;
    let live = json!({"spec": {"containers": [{"name": "a"}, {"name": "x"}, {"name": "b"}]}});
    let config = json!({"spec": {"containers": [{"name": "b"}, {"name": "a"}]}});
    let merged = merge(&live, &config, schema);
    let names: Vec<&str> = merged["spec"]["containers"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["x", "b", "a"]);
}

#[test]
fn field_sets_name_items_by_key_and_value() {
    let config = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "labels": {"app": "web"}, "finalizers": ["f"], "annotations": {}},
        "spec": {"containers": [{"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}]}]},
    });
    let set = to_field_set(&config, pod(), true).expect("valid");
    assert_eq!(
        set.to_fields_v1(),
        json!({
            "f:apiVersion": {},
            "f:kind": {},
            "f:metadata": {
                "f:annotations": {},
                "f:finalizers": {"v:\"f\"": {}},
                "f:labels": {"f:app": {}},
                "f:name": {},
            },
            "f:spec": {"f:containers": {"k:{\"name\":\"nginx\"}": {
                ".": {},
                "f:image": {},
                "f:name": {},
                "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {
                    ".": {},
                    "f:containerPort": {},
                }},
            }}},
        })
    );
}

#[test]
fn strict_field_sets_refuse_duplicates_and_missing_keys() {
    let dup = json!({"spec": {"containers": [{"name": "c"}, {"name": "c"}]}});
    assert_eq!(
        to_field_set(&dup, pod(), true).expect_err("duplicate"),
        ".spec.containers: duplicate entries for key [name=\"c\"]"
    );
    assert!(
        to_field_set(&dup, pod(), false).is_ok(),
        "live objects may hold duplicates"
    );
    let keyless = json!({"spec": {"containers": [{"image": "x"}]}});
    assert!(
        to_field_set(&keyless, pod(), true)
            .expect_err("no key")
            .contains("omits key field \"name\"")
    );
    let not_list = json!({"spec": {"containers": "x"}});
    assert_eq!(
        to_field_set(&not_list, pod(), true).expect_err("not a list"),
        ".spec.containers: expected list, got string"
    );
}

#[test]
fn compare_reports_added_removed_modified() {
    let old = json!({"spec": {"replicas": 1, "paused": true, "template": {"spec": {"containers": [{"name": "a", "image": "x"}]}}}});
    let new = json!({"spec": {"replicas": 2, "minReadySeconds": 5, "template": {"spec": {"containers": [{"name": "b", "image": "x"}]}}}});
    let c = compare(&old, &new, &typeconverter::DEPLOYMENT);
    let show = |s: &Set| {
        s.paths()
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    assert_eq!(show(&c.modified), [".spec.replicas"]);
    assert_eq!(
        show(&c.added),
        [
            ".spec.minReadySeconds",
            ".spec.template.spec.containers[name=\"b\"]",
            ".spec.template.spec.containers[name=\"b\"].image",
            ".spec.template.spec.containers[name=\"b\"].name",
        ]
    );
    assert_eq!(show(&c.removed).len(), 4);
    assert!(compare(&old, &old, &typeconverter::DEPLOYMENT).is_same());
}

#[test]
fn remove_items_drops_members_only() {
    let value = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"containers": [{"name": "a"}, {"name": "b", "image": "i"}]}});
    let set = Set::from_paths(&[
        Path::fields(&["metadata", "labels", "a"]),
        Path(vec![
            PathElement::field("spec"),
            PathElement::field("containers"),
            PathElement::Key(vec![("name".into(), json!("a"))]),
        ]),
        Path(vec![
            PathElement::field("spec"),
            PathElement::field("containers"),
            PathElement::Key(vec![("name".into(), json!("b"))]),
            PathElement::field("image"),
        ]),
    ]);
    assert_eq!(
        remove_items(&value, &set, pod()),
        json!({"metadata": {"labels": {"b": "2"}}, "spec": {"containers": [{"name": "b"}]}})
    );
}
