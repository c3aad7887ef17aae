//! The example `relist-tombstone`, run as a test: the deltas it pops after the
//! relist are the ones the book describes, and its output is the one the book
//! shows on the chapter's example page, so neither can drift silently.

#[allow(dead_code)]
#[path = "../examples/relist-tombstone.rs"]
mod example;

mod relist_example {
    use pretty_assertions::assert_eq;
    use stage2_deltafifo::DeltaObject;
    use stage2_deltafifo::DeltaType::{Deleted, Replaced, Updated};

    use super::example::relist_story;

    /// The book page that shows the example's output.
    const PAGE: &str =
        concat!(env!("CARGO_MANIFEST_DIR"), "/../book/src/stage2/example.md");

    #[tokio::test]
    async fn the_relist_queues_replaced_deltas_and_a_tombstone() {
        let mut out = String::new();
        let popped = relist_story(&mut out).await.expect("the story runs");

        // web-1 kept its place in line and its pending update; web-0 came back in
        // the list; db-0 was missing, so the queue inferred its deletion.
        let types: Vec<_> = popped.iter().map(|deltas| deltas.types()).collect();
        assert_eq!(
            types,
            vec![vec![Updated, Replaced], vec![Replaced], vec![Deleted]]
        );

        let deleted = popped[2].newest().expect("one delta");
        let DeltaObject::Tombstone(tombstone) = &deleted.object else {
            panic!("db-0's deletion is not a tombstone: {deleted:?}");
        };
        assert_eq!(&*tombstone.key, "default/db-0");
        let last_seen = tombstone.obj.as_ref().expect("the indexer knew db-0");
        assert_eq!(last_seen.metadata.resource_version.as_deref(), Some("101"));
    }

    #[tokio::test]
    async fn the_book_shows_this_output() {
        let mut out = String::new();
        relist_story(&mut out).await.expect("the story runs");
        let page =
            std::fs::read_to_string(PAGE).expect("the chapter's example page");
        assert!(
            page.contains(&format!("```text\n{out}```")),
            "{PAGE} does not show the example's output; it prints:\n{out}"
        );
    }
}
