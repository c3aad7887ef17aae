//! Ownership through a write: mirrors structured-merge-diff's `merge/update.go`
//! (`Updater.Update`, `Updater.Apply`, `prune`) and `merge/conflict.go`.
//!
//! Every manager owns a [`Set`] of fields. A write compares the live object with
//! the new one ([`typed::compare`]):
//!
//! - an **update** (create, `PUT`, a JSON or merge patch) takes every field it
//!   added or changed from whoever owned it, and gives up the removed ones;
//! - an **apply** merges the configuration into the live object, removes what
//!   the same manager applied last time and no longer applies (unless another
//!   applier still claims it), and fails with the list of [`Conflict`]s when it
//!   would change a field another manager owns, unless forced, which moves the
//!   field to the applier. Applying the value a field already has shares it.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::fieldpath::{Path, Set};
use crate::schema::Schema;
use crate::typed::{self, Comparison};

/// Mirrors `fieldpath.VersionedSet`: a manager's fields, the version they were
/// set in, and whether they were applied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VersionedSet {
    /// The fields.
    pub set: Set,
    /// The apiVersion the fields belong to.
    pub api_version: String,
    /// Whether an apply (not an update) set them.
    pub applied: bool,
}

/// Mirrors `fieldpath.ManagedFields`: the sets by manager identifier.
pub type ManagedFields = BTreeMap<String, VersionedSet>;

/// Mirrors `merge.Conflict`: a field another manager owns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Conflict {
    /// The owner's manager identifier.
    pub manager: String,
    /// The field.
    pub path: Path,
}

/// Why an apply failed.
#[derive(Debug)]
pub enum ApplyError {
    /// Fields owned by others would change (`merge.Conflicts`), in manager
    /// then path order.
    Conflicts(Vec<Conflict>),
    /// The configuration is not an object of the schema (a duplicate or keyless
    /// list item).
    Invalid(String),
}

/// Mirrors `Updater.update`: the other managers lose what the change modified
/// or added (a conflict unless `force`) and what it removed.
fn update(
    old: &Value,
    new: &Value,
    schema: &'static Schema,
    managers: &mut ManagedFields,
    workflow: &str,
    force: bool,
) -> Result<Comparison, Vec<Conflict>> {
    let comparison = typed::compare(old, new, schema);
    let changed = comparison.modified.union(&comparison.added);
    let mut conflicts: Vec<(String, Set)> = Vec::new();
    for (manager, owned) in managers.iter() {
        if manager == workflow {
            continue;
        }
        let taken = owned.set.intersection(&changed);
        if !taken.is_empty() {
            conflicts.push((manager.clone(), taken));
        }
    }
    if !force && !conflicts.is_empty() {
        return Err(conflicts
            .into_iter()
            .flat_map(|(manager, set)| {
                set.paths().into_iter().map(move |path| Conflict {
                    manager: manager.clone(),
                    path,
                })
            })
            .collect());
    }
    for (manager, taken) in conflicts {
        if let Some(owned) = managers.get_mut(&manager) {
            owned.set = owned.set.difference(&taken);
        }
    }
    if !comparison.removed.is_empty() {
        for (manager, owned) in managers.iter_mut() {
            if manager != workflow {
                owned.set = owned.set.difference(&comparison.removed);
            }
        }
    }
    managers.retain(|_, owned| !owned.set.is_empty());
    Ok(comparison)
}

/// Mirrors `Updater.Update`: `manager` now owns what it added or changed, and
/// no longer what it removed; the others lose those fields. Also answers what
/// the update added or changed (empty when it only removed fields or changed
/// nothing, which upstream's `managedFieldsUpdater` leaves the time alone for).
pub fn update_fields(
    live: &Value,
    new: &Value,
    schema: &'static Schema,
    api_version: &str,
    mut managers: ManagedFields,
    manager: &str,
) -> (ManagedFields, Set) {
    let Ok(comparison) = update(live, new, schema, &mut managers, manager, true)
    else {
        return (managers, Set::new());
    };
    let touched = comparison.modified.union(&comparison.added);
    let previous = managers.remove(manager).map(|v| v.set).unwrap_or_default();
    let set = previous
        .difference(&comparison.removed)
        .union(&comparison.modified)
        .union(&comparison.added);
    if !set.is_empty() {
        managers.insert(
            manager.to_string(),
            VersionedSet {
                set,
                api_version: api_version.to_string(),
                applied: false,
            },
        );
    }
    (managers, touched)
}

/// Mirrors `Updater.Apply`: the merged object (`None` when applying changed
/// nothing) and the new sets, or the conflicts.
pub fn apply(
    live: &Value,
    config: &Value,
    schema: &'static Schema,
    api_version: &str,
    mut managers: ManagedFields,
    manager: &str,
    force: bool,
) -> Result<(Option<Value>, ManagedFields), ApplyError> {
    let set =
        typed::to_field_set(config, schema, true).map_err(ApplyError::Invalid)?;
    let merged = typed::merge(live, config, schema);
    let last = managers.insert(
        manager.to_string(),
        VersionedSet {
            set,
            api_version: api_version.to_string(),
            applied: true,
        },
    );
    let merged = prune(merged, &managers, last.as_ref(), schema);
    update(live, &merged, schema, &mut managers, manager, force)
        .map_err(ApplyError::Conflicts)?;
    let changed = merged != *live;
    Ok((changed.then_some(merged), managers))
}

/// Mirrors `Updater.prune`: removes what the applier owned last time and does
/// not apply now, unless another applier (or this configuration) claims it
/// (`addBackOwnedItems`), and only what the applier owned
/// (`addBackDanglingItems`).
fn prune(
    merged: Value,
    managers: &ManagedFields,
    last: Option<&VersionedSet>,
    schema: &'static Schema,
) -> Value {
    let Some(last) = last.filter(|l| !l.set.is_empty()) else {
        return merged;
    };
    let field_set =
        |v: &Value| typed::to_field_set(v, schema, false).unwrap_or_default();
    let pruned = typed::remove_items(&merged, &last.set, schema);
    // addBackOwnedItems
    let applied = managers
        .values()
        .filter(|v| v.applied)
        .fold(Set::new(), |all, v| all.union(&v.set));
    let merged_set = field_set(&merged);
    let pruned = typed::remove_items(
        &merged,
        &merged_set.difference(&field_set(&pruned).union(&applied)),
        schema,
    );
    // addBackDanglingItems
    let pruned_set = field_set(&pruned);
    typed::remove_items(
        &merged,
        &merged_set.difference(&pruned_set).intersection(&last.set),
        schema,
    )
}
