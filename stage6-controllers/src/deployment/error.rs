//! The Deployment controller's errors. Upstream returns plain `error`s built
//! with `fmt.Errorf`; here each kind has a variant, and the messages are
//! upstream's.

use stage4_shared_informer::ListerError;

/// What can go wrong in a sync of the Deployment controller.
#[derive(Debug, thiserror::Error)]
pub enum DeploymentError {
    /// A write or fresh read failed; kube's error keeps the API's `Status`.
    #[error(transparent)]
    Api(#[from] kube::Error),
    /// A lister read failed (other than "not found").
    #[error(transparent)]
    Lister(#[from] ListerError),
    /// The Deployment's selector is not a valid label selector.
    #[error("deployment {key} has invalid label selector: {reason}")]
    InvalidSelector {
        /// `namespace/name`.
        key: String,
        /// Why it does not parse.
        reason: String,
    },
    /// A `maxSurge` or `maxUnavailable` that is neither an int nor a
    /// percentage (validation normally refuses it).
    #[error(
        "invalid value for IntOrString: invalid type: string is not a percentage: {value:?}"
    )]
    InvalidIntOrPercent {
        /// The string as written.
        value: String,
    },
    /// A strategy other than `RollingUpdate` or `Recreate`.
    #[error("unexpected deployment strategy type: {0:?}")]
    UnsupportedStrategy(String),
    /// A rollout step that would grow a ReplicaSet it meant to shrink (a
    /// guard upstream keeps against inconsistent caches).
    #[error("when {step}, got invalid request to scale down {rs} {from} -> {to}")]
    InvalidScaleDown {
        /// `cleaning up unhealthy replicas` or `scaling down old RS`.
        step: &'static str,
        /// `namespace/name` of the ReplicaSet.
        rs: String,
        /// Its replicas.
        from: i32,
        /// The size asked for.
        to: i32,
    },
    /// The new ReplicaSet's name is taken by another template: the
    /// Deployment's `collisionCount` went up and the next sync tries another
    /// name (upstream returns the create's `AlreadyExists`).
    #[error(
        "replicasets.apps {0:?} already exists with another template (a hash collision)"
    )]
    HashCollision(String),
    /// A rolling update found no new ReplicaSet after asking for one.
    #[error("deployment {0} has no new replica set")]
    NoNewReplicaSet(String),
}
