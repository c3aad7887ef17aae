//! structured-merge-diff's `merge` package over the served kinds' schemas
//! (apimachinery's type converter), as upstream's tests run it over real types.

use apimachinery::util::managedfields::typeconverter;
use serde_json::json;
use structured_merge_diff::fieldpath::Set;
use structured_merge_diff::merge::*;
use structured_merge_diff::schema::Schema;

fn deployment() -> &'static Schema {
    &typeconverter::DEPLOYMENT
}

fn paths(set: &Set) -> Vec<String> {
    set.paths().iter().map(ToString::to_string).collect()
}

#[test]
fn apply_then_conflict_then_force() {
    let live = json!({"spec": {"replicas": 1}});
    let config = json!({"spec": {"replicas": 1, "paused": false}});
    let (merged, managers) = apply(
        &live,
        &config,
        deployment(),
        "apps/v1",
        ManagedFields::new(),
        "a",
        false,
    )
    .expect("no conflict");
    let merged = merged.expect("changed");
    assert_eq!(merged, json!({"spec": {"replicas": 1, "paused": false}}));
    assert_eq!(
        paths(&managers["a"].set),
        [".spec.paused", ".spec.replicas"]
    );
    // The same value from another manager: shared ownership.
    let (same, managers) = apply(
        &merged,
        &json!({"spec": {"replicas": 1}}),
        deployment(),
        "apps/v1",
        managers,
        "b",
        false,
    )
    .expect("no conflict");
    assert!(same.is_none(), "nothing changed");
    assert_eq!(paths(&managers["b"].set), [".spec.replicas"]);
    assert_eq!(
        paths(&managers["a"].set),
        [".spec.paused", ".spec.replicas"]
    );
    // A different value: a conflict with a, naming the field.
    let Err(ApplyError::Conflicts(conflicts)) = apply(
        &merged,
        &json!({"spec": {"replicas": 3}}),
        deployment(),
        "apps/v1",
        managers.clone(),
        "b",
        false,
    ) else {
        panic!("a conflict");
    };
    assert_eq!(conflicts.len(), 1);
    assert_eq!(conflicts[0].manager, "a");
    assert_eq!(conflicts[0].path.to_string(), ".spec.replicas");
    // Forced: b takes the field.
    let (forced, managers) = apply(
        &merged,
        &json!({"spec": {"replicas": 3}}),
        deployment(),
        "apps/v1",
        managers,
        "b",
        true,
    )
    .expect("forced");
    assert_eq!(forced.expect("changed")["spec"]["replicas"], 3);
    assert_eq!(paths(&managers["a"].set), [".spec.paused"]);
    assert_eq!(paths(&managers["b"].set), [".spec.replicas"]);
}

#[test]
fn fields_no_longer_applied_are_removed_unless_someone_else_owns_them() {
    let schema = &typeconverter::PLAIN;
    let (obj, managers) = apply(
        &json!({}),
        &json!({"data": {"a": "1", "b": "2", "c": "3"}}),
        schema,
        "v1",
        ManagedFields::new(),
        "a",
        false,
    )
    .expect("applies");
    let obj = obj.expect("changed");
    // Another applier shares c.
    let (_, managers) = apply(
        &obj,
        &json!({"data": {"c": "3"}}),
        schema,
        "v1",
        managers,
        "other",
        false,
    )
    .expect("shared");
    // An updater owns b after changing it.
    let mut updated = obj.clone();
    updated["data"]["b"] = json!("two");
    let (managers, _) =
        update_fields(&obj, &updated, schema, "v1", managers, "editor");
    assert_eq!(paths(&managers["editor"].set), [".data.b"]);
    assert_eq!(paths(&managers["a"].set), [".data.a", ".data.c"]);
    // a applies only a: b is not a's any more and stays, c is shared and stays.
    let (after, managers) = apply(
        &updated,
        &json!({"data": {"a": "1"}}),
        schema,
        "v1",
        managers,
        "a",
        false,
    )
    .expect("applies");
    assert!(after.is_none(), "b is the editor's, c is other's");
    assert_eq!(paths(&managers["a"].set), [".data.a"]);
    // other stops applying c: nobody else owns it, so it goes.
    let (after, managers) = apply(
        &updated,
        &json!({"data": {}}),
        schema,
        "v1",
        managers,
        "other",
        false,
    )
    .expect("applies");
    assert_eq!(
        after.expect("changed")["data"],
        json!({"a": "1", "b": "two"})
    );
    assert_eq!(paths(&managers["other"].set), [".data"]);
}

#[test]
fn updates_take_changed_fields_from_appliers() {
    let schema = &typeconverter::PLAIN;
    let (obj, managers) = apply(
        &json!({}),
        &json!({"data": {"a": "1"}}),
        schema,
        "v1",
        ManagedFields::new(),
        "a",
        false,
    )
    .expect("applies");
    let obj = obj.expect("changed");
    let mut edited = obj.clone();
    edited["data"]["a"] = json!("2");
    let (managers, _) =
        update_fields(&obj, &edited, schema, "v1", managers, "editor");
    assert!(!managers.contains_key("a"), "a's only field was taken");
    let Err(ApplyError::Conflicts(conflicts)) = apply(
        &edited,
        &json!({"data": {"a": "1"}}),
        schema,
        "v1",
        managers,
        "a",
        false,
    ) else {
        panic!("a conflict with the editor");
    };
    assert_eq!(conflicts[0].manager, "editor");
    assert_eq!(conflicts[0].path.to_string(), ".data.a");
}

#[test]
fn an_invalid_configuration_is_refused() {
    let error = apply(
        &json!({}),
        &json!({"spec": {"containers": [{"name": "c"}, {"name": "c"}]}}),
        &typeconverter::POD,
        "v1",
        ManagedFields::new(),
        "a",
        false,
    )
    .expect_err("duplicate");
    assert!(
        matches!(error, ApplyError::Invalid(m) if m.contains("duplicate entries"))
    );
}
