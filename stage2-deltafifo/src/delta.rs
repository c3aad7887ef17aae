//! The things a queue holds: deltas, and the tombstone for a deletion nobody saw.
//!
//! Mirrors the types of client-go's [`tools/cache/delta_fifo.go`]: `DeltaType`,
//! `Delta`, `Deltas` (with `Oldest` and `Newest`) and `DeletedFinalStateUnknown`,
//! plus the batch-level entries of the newer `RealFIFO` in atomic mode
//! (`ReplacedAll`, `SyncAll`, `Bookmark`).
//!
//! [`tools/cache/delta_fifo.go`]: https://github.com/kubernetes/client-go/blob/v0.36.0/tools/cache/delta_fifo.go

use std::sync::Arc;

use smallvec::SmallVec;

// ANCHOR: delta_type
/// Mirrors client-go's `DeltaType`: what kind of change a [`Delta`] records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// The object was created (a watch `ADDED`).
    Added,
    /// The object changed (a watch `MODIFIED`).
    Updated,
    /// The object was deleted; the delta holds its last known state, or a tombstone.
    Deleted,
    /// The object was in a relist. It may or may not have changed: the consumer
    /// compares. Emitted instead of `Sync` when `emit_delta_type_replaced` is
    /// set.
    Replaced,
    /// A periodic resync, or a relist when `emit_delta_type_replaced` is off.
    Sync,
    /// Atomic `RealFifo` only: a whole relist as one entry.
    ReplacedAll,
    /// Atomic `RealFifo` only: "resync everything you know", as one entry.
    SyncAll,
    /// Atomic `RealFifo` only: the watch reached a resource version.
    Bookmark,
}
// ANCHOR_END: delta_type

// ANCHOR: delta
/// Mirrors client-go's `Delta`: one change, and the object's state after it.
///
/// For a deletion the object is the last state seen, or a
/// [`DeletedFinalStateUnknown`] tombstone when the deletion was inferred from a
/// relist.
#[derive(Debug)]
pub struct Delta<T> {
    /// What happened.
    pub delta_type: DeltaType,
    /// The object (or tombstone, or batch entry) it happened to.
    pub object: DeltaObject<T>,
}

/// What a [`Delta`] carries. client-go uses `interface{}` and type switches; here it
/// is an enum.
#[derive(Debug)]
pub enum DeltaObject<T> {
    /// An object, shared with the reflector, the indexer and every handler.
    Object(Arc<T>),
    /// A deletion inferred from a relist.
    Tombstone(DeletedFinalStateUnknown<T>),
    /// A whole relist (atomic `RealFifo`).
    ReplacedAll(Arc<ReplacedAllInfo<T>>),
    /// Resync everything (atomic `RealFifo`).
    SyncAll,
    /// A bookmark's resource version (atomic `RealFifo`).
    Bookmark(Arc<str>),
}

/// Mirrors client-go's `DeletedFinalStateUnknown`: an object was deleted while the
/// watch was down, so its final state is unknown. `obj` is the last state this
/// client saw, if any.
#[derive(Debug)]
pub struct DeletedFinalStateUnknown<T> {
    /// The store key of the deleted object.
    pub key: Arc<str>,
    /// The last known state; `None` when the known-objects store had nothing under
    /// the key.
    pub obj: Option<Arc<T>>,
}

/// The payload of an atomic `ReplacedAll` entry: every object of a relist, and its
/// version.
#[derive(Debug)]
pub struct ReplacedAllInfo<T> {
    /// The list's resource version.
    pub resource_version: String,
    /// Every object the list returned.
    pub objects: Vec<Arc<T>>,
}

/// Mirrors client-go's `Deltas`: the changes queued for one key, oldest first.
///
/// One delta per key is the common case, and lives inline without a heap allocation.
#[derive(Debug)]
pub struct Deltas<T>(pub SmallVec<[Delta<T>; 1]>);
// ANCHOR_END: delta

impl<T> Clone for Delta<T> {
    fn clone(&self) -> Self {
        Self {
            delta_type: self.delta_type,
            object: self.object.clone(),
        }
    }
}

impl<T> Clone for DeltaObject<T> {
    fn clone(&self) -> Self {
        match self {
            Self::Object(obj) => Self::Object(Arc::clone(obj)),
            Self::Tombstone(t) => Self::Tombstone(t.clone()),
            Self::ReplacedAll(info) => Self::ReplacedAll(Arc::clone(info)),
            Self::SyncAll => Self::SyncAll,
            Self::Bookmark(rv) => Self::Bookmark(Arc::clone(rv)),
        }
    }
}

impl<T> Clone for DeletedFinalStateUnknown<T> {
    fn clone(&self) -> Self {
        Self {
            key: Arc::clone(&self.key),
            obj: self.obj.clone(),
        }
    }
}

impl<T> Clone for Deltas<T> {
    fn clone(&self) -> Self {
        Self(self.0.clone())
    }
}

impl<T> Delta<T> {
    /// A delta carrying an object.
    pub fn new(delta_type: DeltaType, obj: Arc<T>) -> Self {
        Self {
            delta_type,
            object: DeltaObject::Object(obj),
        }
    }

    /// A `Deleted` delta carrying a tombstone.
    pub fn tombstone(key: Arc<str>, obj: Option<Arc<T>>) -> Self {
        Self {
            delta_type: DeltaType::Deleted,
            object: DeltaObject::Tombstone(DeletedFinalStateUnknown { key, obj }),
        }
    }

    /// The object this delta is about: the object itself, or the tombstone's last
    /// known state. `None` for batch entries and for a tombstone without an
    /// object.
    pub fn object(&self) -> Option<&Arc<T>> {
        match &self.object {
            DeltaObject::Object(obj) => Some(obj),
            DeltaObject::Tombstone(t) => t.obj.as_ref(),
            DeltaObject::ReplacedAll(_)
            | DeltaObject::SyncAll
            | DeltaObject::Bookmark(_) => None,
        }
    }

    /// Whether this delta holds a [`DeletedFinalStateUnknown`].
    pub fn is_tombstone(&self) -> bool {
        matches!(self.object, DeltaObject::Tombstone(_))
    }
}

impl<T> Deltas<T> {
    /// An empty list.
    pub fn new() -> Self {
        Self(SmallVec::new())
    }

    /// Mirrors `Deltas.Oldest`.
    pub fn oldest(&self) -> Option<&Delta<T>> {
        self.0.first()
    }

    /// Mirrors `Deltas.Newest`.
    pub fn newest(&self) -> Option<&Delta<T>> {
        self.0.last()
    }

    /// How many deltas are queued.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there is no delta.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The deltas, oldest first.
    pub fn iter(&self) -> std::slice::Iter<'_, Delta<T>> {
        self.0.iter()
    }

    /// The delta types, oldest first; handy in tests and logs.
    pub fn types(&self) -> Vec<DeltaType> {
        self.0.iter().map(|d| d.delta_type).collect()
    }
}

impl<T> Default for Deltas<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> IntoIterator for Deltas<T> {
    type Item = Delta<T>;
    type IntoIter = smallvec::IntoIter<[Delta<T>; 1]>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl<'a, T> IntoIterator for &'a Deltas<T> {
    type Item = &'a Delta<T>;
    type IntoIter = std::slice::Iter<'a, Delta<T>>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<T> FromIterator<Delta<T>> for Deltas<T> {
    fn from_iter<I: IntoIterator<Item = Delta<T>>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}
