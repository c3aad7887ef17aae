//! An update whose index value did not change allocates nothing (the bench
//! target, held as a property). Allocations are counted on this thread only, so
//! other tests cannot disturb it.

use std::borrow::Cow;
use std::sync::Arc;

use stage1_store::{ThreadSafeStore, index_func, indexers};

#[test]
fn ex1_update_index_unchanged_update_allocates_nothing() {
    let store = ThreadSafeStore::new(indexers([(
        "identity",
        index_func(|s: &String| Ok(smallvec::smallvec![Cow::Borrowed(s.as_str())])),
    )]));
    let objects: Vec<Arc<String>> = (0..100)
        .map(|i| Arc::new(format!("object-number-{i}")))
        .collect();
    for obj in &objects {
        store.add(obj, Arc::clone(obj)).unwrap();
    }
    let info = workspace_allocator::measure(|| {
        for obj in &objects {
            store.update(obj, Arc::clone(obj)).unwrap();
        }
    });
    assert_eq!(info.count_total, 0, "{info:?}");
    // A changed value does allocate (a new index set), which shows the counter
    // works.
    let info = workspace_allocator::measure(|| {
        store
            .update("object-number-1", Arc::new("moved".to_string()))
            .unwrap();
    });
    assert!(info.count_total > 0, "{info:?}");
}
