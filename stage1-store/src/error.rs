//! The errors of stage 1.
//!
//! client-go returns plain `error` values from most store calls and panics when an
//! index function fails during a write. Here every failure is a typed error, and a
//! failed write leaves the store exactly as it was.

use crate::index::BoxError;

// ANCHOR: key_error
/// Mirrors client-go's `KeyError`: a key function could not make a key for an
/// object.
#[derive(Debug, thiserror::Error)]
#[error("couldn't create key for object {object}: {cause}")]
pub struct KeyError {
    /// A short description of the object, such as `Pod in namespace "default" with
    /// no name`.
    pub object: String,
    /// Why no key could be made.
    #[source]
    pub cause: BoxError,
}

impl KeyError {
    /// Creates a key error for the described object.
    pub fn new(object: impl Into<String>, cause: impl Into<BoxError>) -> Self {
        Self {
            object: object.into(),
            cause: cause.into(),
        }
    }
}
// ANCHOR_END: key_error

/// A store key that is neither `name` nor `namespace/name`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unexpected key format: {key:?} (want \"name\" or \"namespace/name\")")]
pub struct InvalidKeyError {
    /// The key as given.
    pub key: String,
}

// ANCHOR: store_error
/// Everything that can go wrong in a stage 1 store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The key function failed for an object.
    #[error(transparent)]
    Key(#[from] KeyError),

    /// A query named an index that the store does not have.
    #[error(
        "index with name {name:?} does not exist; add it with add_indexers first"
    )]
    IndexNotFound {
        /// The index name asked for.
        name: String,
    },

    /// `add_indexers` was given a name that is already registered.
    #[error("indexer conflict: {names:?} already registered")]
    IndexerConflict {
        /// The names present in both the store and the new indexers, sorted.
        names: Vec<String>,
    },

    /// An index function failed (or panicked) for an object. The write was not
    /// applied.
    #[error(
        "unable to calculate an index entry for key {key:?} on index {index:?}: {cause}"
    )]
    IndexFunc {
        /// The index whose function failed.
        index: String,
        /// The store key of the object.
        key: String,
        /// The index function's error.
        #[source]
        cause: BoxError,
    },

    /// A store that builds on this one (a queue, a cache) refused the write for its
    /// own reason, for example a transform function that failed.
    #[error(transparent)]
    Other(BoxError),
}
// ANCHOR_END: store_error
