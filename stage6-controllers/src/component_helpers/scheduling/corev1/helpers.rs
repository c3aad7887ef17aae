//! Mirrors component-helpers'
//! [scheduling/corev1/helpers.go](https://github.com/kubernetes/component-helpers/blob/v0.36.0/scheduling/corev1/helpers.go)
//! (`TolerationsTolerateTaint`, `FindMatchingUntoleratedTaint`) and k8s.io/api's
//! `Toleration.ToleratesTaint`: the taint rules that the scheduler's plugins
//! share.

use k8s_openapi::api::core::v1::{Taint, Toleration};

/// Mirrors `Toleration.ToleratesTaint`: an empty effect matches every effect,
/// an empty key every key; `Exists` matches any value, `Equal` (the default)
/// only the same value.
#[must_use]
pub fn tolerates_taint(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref().filter(|e| !e.is_empty())
        && effect != taint.effect
    {
        return false;
    }
    if let Some(key) = toleration.key.as_deref().filter(|k| !k.is_empty())
        && key != taint.key
    {
        return false;
    }
    match toleration.operator.as_deref().unwrap_or_default() {
        "" | "Equal" => {
            toleration.value.as_deref().unwrap_or_default()
                == taint.value.as_deref().unwrap_or_default()
        }
        "Exists" => true,
        _ => false,
    }
}

/// Mirrors `TolerationsTolerateTaint`: whether any toleration tolerates `taint`.
#[must_use]
pub fn tolerations_tolerate_taint(
    tolerations: &[Toleration],
    taint: &Taint,
) -> bool {
    tolerations.iter().any(|t| tolerates_taint(t, taint))
}

/// Mirrors `FindMatchingUntoleratedTaint` with `DoNotScheduleTaintsFilterFunc`:
/// the first `NoSchedule` or `NoExecute` taint no toleration tolerates.
#[must_use]
pub fn find_matching_untolerated_taint<'a>(
    taints: impl IntoIterator<Item = &'a Taint>,
    tolerations: &[Toleration],
) -> Option<&'a Taint> {
    taints.into_iter().find(|taint| {
        matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute")
            && !tolerations_tolerate_taint(tolerations, taint)
    })
}
