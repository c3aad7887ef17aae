//! Snapshots: what a whole-store or whole-queue read hands out.
//!
//! client-go's `List` and `ListKeys` copy every object pointer or string header
//! into a fresh slice. Copying an `Arc` is not free in the same way: each clone
//! and drop is an atomic increment and decrement on a counter that every other
//! reader also writes. Two threads listing 20,000 keys at once spend most of their
//! time handing those cache lines back and forth (issue #16).
//!
//! So a store keeps one [`Snapshot`] of its keys (and one of its objects) in a
//! [`SnapshotCell`]. The first read after a change builds it; every later read
//! shares it with one atomic increment, whatever the store's size. Every change
//! drops it.
//!
//! # Memory usage
//! A built snapshot holds one pointer (16 bytes for an `Arc<str>`, 8 for an
//! `Arc<T>`) per item, and keeps the items it names alive until the last reader
//! drops it. A store that is never listed never builds one.

use std::ops::Deref;
use std::sync::{Arc, OnceLock};

// ANCHOR: snapshot
/// An immutable, shared list of keys or objects: what `list_keys` and `list`
/// return.
///
/// It derefs to a slice, so `snapshot.len()`, `snapshot.iter()` and indexing work,
/// and `for key in &snapshot` iterates. Cloning it is one atomic increment,
/// whatever its length; `to_vec()` makes an owned copy. No client-go counterpart:
/// Go returns a fresh slice.
#[derive(Debug)]
pub struct Snapshot<E>(Arc<[E]>);
// ANCHOR_END: snapshot

impl<E> Clone for Snapshot<E> {
    fn clone(&self) -> Self {
        Self(Arc::clone(&self.0))
    }
}

impl<E> Deref for Snapshot<E> {
    type Target = [E];

    fn deref(&self) -> &[E] {
        &self.0
    }
}

impl<'a, E> IntoIterator for &'a Snapshot<E> {
    type Item = &'a E;
    type IntoIter = std::slice::Iter<'a, E>;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl<E> Default for Snapshot<E> {
    fn default() -> Self {
        Self(Arc::from(Vec::new()))
    }
}

impl<E> From<Vec<E>> for Snapshot<E> {
    fn from(items: Vec<E>) -> Self {
        Self(Arc::from(items))
    }
}

impl<E> FromIterator<E> for Snapshot<E> {
    fn from_iter<I: IntoIterator<Item = E>>(iter: I) -> Self {
        Self(iter.into_iter().collect())
    }
}

impl<E: PartialEq, const N: usize> PartialEq<[E; N]> for Snapshot<E> {
    fn eq(&self, other: &[E; N]) -> bool {
        *self.0 == *other
    }
}

// ANCHOR: snapshot_cell
/// The cached [`Snapshot`] of a store or queue: built by the first read after a
/// change, shared by every read until the next change.
///
/// It lives inside the store's lock. Readers, holding the read lock, call
/// [`get_or_build`](Self::get_or_build); if two race, one builds and the other
/// waits for it. Writers, holding the write lock, call
/// [`invalidate`](Self::invalidate) on every change.
pub struct SnapshotCell<E>(OnceLock<Snapshot<E>>);
// ANCHOR_END: snapshot_cell

impl<E> SnapshotCell<E> {
    /// An empty cell: the first read builds.
    pub const fn new() -> Self {
        Self(OnceLock::new())
    }

    /// The cached snapshot, or the one `build` makes (which is then cached).
    pub fn get_or_build(&self, build: impl FnOnce() -> Snapshot<E>) -> Snapshot<E> {
        self.0.get_or_init(build).clone()
    }

    /// Forgets the cached snapshot, after a change. Readers that hold it keep
    /// their copy.
    pub fn invalidate(&mut self) {
        self.0.take();
    }
}

impl<E> Default for SnapshotCell<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> std::fmt::Debug for SnapshotCell<E> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotCell")
            .field("built", &self.0.get().map(|s| s.len()))
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cell_builds_once_until_invalidated() {
        let mut cell = SnapshotCell::new();
        let mut builds = 0;
        let first = cell.get_or_build(|| {
            builds += 1;
            Snapshot::from(vec![1, 2])
        });
        let second = cell.get_or_build(|| {
            builds += 1;
            Snapshot::from(vec![3])
        });
        assert_eq!(builds, 1);
        assert!(Arc::ptr_eq(&first.0, &second.0), "shared, not copied");
        cell.invalidate();
        let third = cell.get_or_build(|| Snapshot::from(vec![3]));
        assert_eq!(third, [3]);
        assert_eq!(first, [1, 2], "a reader keeps its snapshot");
    }

    #[test]
    fn a_snapshot_iterates_like_a_slice() {
        let snapshot: Snapshot<&str> = ["a", "b"].into_iter().collect();
        let mut seen = Vec::new();
        for item in &snapshot {
            seen.push(*item);
        }
        assert_eq!(seen, ["a", "b"]);
        assert_eq!(snapshot.len(), 2);
        assert!(Snapshot::<u8>::default().is_empty());
    }
}
