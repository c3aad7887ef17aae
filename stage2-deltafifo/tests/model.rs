//! Model-based: random operations against a plain reference model of the documented
//! DeltaFIFO semantics give the same pops, the same `is_in_initial_list` flags and
//! the same `has_synced`.

mod common;

use common::*;
use proptest::prelude::*;
use stage1_store::{Cache, KeyGetter, KeyLister, Store};
use stage2_deltafifo::{DeltaFifo, DeltaFifoOptions, DeltaType};
use std::convert::Infallible;

#[derive(Debug, Clone)]
enum Op {
    Add(usize),
    Update(usize),
    Delete(usize),
    Replace(Vec<usize>),
    Resync,
    Pop,
}

const KEYS: [&str; 4] = ["a", "b", "c", "d"];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0..KEYS.len()).prop_map(Op::Add),
        2 => (0..KEYS.len()).prop_map(Op::Update),
        2 => (0..KEYS.len()).prop_map(Op::Delete),
        1 => prop::sample::subsequence(vec![0, 1, 2, 3], 0..=4).prop_map(Op::Replace),
        1 => Just(Op::Resync),
        4 => Just(Op::Pop),
    ]
}

/// One queued delta in the model: its type, the value, and whether it is a
/// tombstone.
type ModelDelta = (DeltaType, Option<i32>, bool);

/// The reference model: a list of (key, deltas) in pop order, written as plainly as
/// possible.
#[derive(Default)]
struct Model {
    queue: Vec<(String, Vec<ModelDelta>)>,
    populated: bool,
    initial: usize,
}

impl Model {
    fn queued(&self, key: &str) -> Option<&Vec<ModelDelta>> {
        self.queue.iter().find(|(k, _)| k == key).map(|(_, d)| d)
    }

    fn push(&mut self, key: &str, delta: ModelDelta) {
        match self.queue.iter_mut().find(|(k, _)| k == key) {
            Some((_, deltas)) => {
                deltas.push(delta);
                let n = deltas.len();
                if deltas[n - 2].0 == DeltaType::Deleted
                    && deltas[n - 1].0 == DeltaType::Deleted
                {
                    let newer = deltas.pop().unwrap();
                    if deltas[n - 2].2 {
                        deltas[n - 2] = newer;
                    }
                }
            }
            None => self.queue.push((key.to_string(), vec![delta])),
        }
    }

    fn has_synced(&self) -> bool {
        self.populated && self.initial == 0
    }
}

fn show_model(deltas: &[ModelDelta]) -> Vec<(DeltaType, String)> {
    deltas
        .iter()
        .map(|(t, v, tomb)| {
            let v = v.map_or("?".to_string(), |v| v.to_string());
            (*t, if *tomb { format!("tombstone:{v}") } else { v })
        })
        .collect()
}

fn show_real(deltas: &stage2_deltafifo::Deltas<Obj>) -> Vec<(DeltaType, String)> {
    deltas
        .iter()
        .map(|d| {
            let v = d.object().map_or("?".to_string(), |o| o.val.to_string());
            (
                d.delta_type,
                if d.is_tombstone() {
                    format!("tombstone:{v}")
                } else {
                    v
                },
            )
        })
        .collect()
}

/// What an informer does with a popped item: the newest delta decides the known
/// state.
fn apply(known: &Cache<Obj>, key: &str, newest: (DeltaType, Option<i32>)) {
    match newest {
        (DeltaType::Deleted, _) => {
            if let Some(o) = known.get_by_key(key) {
                known.delete(o).unwrap();
            }
        }
        (_, Some(v)) => known.update(obj(key, v)).unwrap(),
        (_, None) => {}
    }
}

proptest! {
    #[test]
    fn delta_fifo_matches_the_model(ops in prop::collection::vec(op(), 1..60)) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_time().start_paused(true).build().unwrap();
        let known_store = known(&[]);
        let fifo = DeltaFifo::new(DeltaFifoOptions::new(key_func()).known_objects(as_known(&known_store)));
        let mut model = Model::default();
        let mut next_val = 0;
        for op in ops {
            next_val += 1;
            match op {
                Op::Add(k) | Op::Update(k) => {
                    let t = if matches!(op, Op::Add(_)) { DeltaType::Added } else { DeltaType::Updated };
                    if t == DeltaType::Added { fifo.add(obj(KEYS[k], next_val)).unwrap() } else { fifo.update(obj(KEYS[k], next_val)).unwrap() }
                    model.populated = true;
                    model.push(KEYS[k], (t, Some(next_val), false));
                }
                Op::Delete(k) => {
                    fifo.delete(obj(KEYS[k], next_val)).unwrap();
                    model.populated = true;
                    if model.queued(KEYS[k]).is_some() || known_store.get_by_key(KEYS[k]).is_some() {
                        model.push(KEYS[k], (DeltaType::Deleted, Some(next_val), false));
                    }
                }
                Op::Replace(keys) => {
                    let list: Vec<_> = keys.iter().map(|&k| obj(KEYS[k], next_val)).collect();
                    // Read the known keys in the order the queue will (same map, unchanged).
                    let known_keys = known_store.list_keys();
                    fifo.replace(list, "rv").unwrap();
                    let listed: Vec<&str> = keys.iter().map(|&k| KEYS[k]).collect();
                    for k in &listed {
                        model.push(k, (DeltaType::Sync, Some(next_val), false));
                    }
                    let mut deletions = 0;
                    let queued_keys: Vec<String> = model.queue.iter().map(|(k, _)| k.clone()).collect();
                    for k in queued_keys.iter().filter(|k| !listed.contains(&k.as_str())) {
                        let newest = model.queued(k).unwrap().last().unwrap().1;
                        model.push(k, (DeltaType::Deleted, newest, true));
                        deletions += 1;
                    }
                    for k in known_keys.iter().filter(|k| !listed.contains(&&***k)) {
                        if model.queued(k).is_some() { continue; }
                        let v = known_store.get_by_key(k).map(|o| o.val);
                        model.push(k, (DeltaType::Deleted, v, true));
                        deletions += 1;
                    }
                    if !model.populated {
                        model.populated = true;
                        model.initial = listed.len() + deletions;
                    }
                }
                Op::Resync => {
                    let known_keys = known_store.list_keys();
                    fifo.resync().unwrap();
                    for k in &known_keys {
                        if model.queued(k).is_none() {
                            let v = known_store.get_by_key(k).unwrap().val;
                            model.push(k, (DeltaType::Sync, Some(v), false));
                        }
                    }
                }
                Op::Pop => {
                    if model.queue.is_empty() { continue; }
                    let initial = !model.has_synced();
                    let (key, deltas) = model.queue.remove(0);
                    model.initial = model.initial.saturating_sub(1);
                    let (real, real_initial) = rt.block_on(async {
                        tokio::time::timeout(std::time::Duration::from_secs(1),
                            fifo.pop(|d, i| {
                                let newest = d.newest().map(|n| (n.delta_type, n.object().map(|o| o.val)));
                                if let Some(newest) = newest { apply(&known_store, &key, newest); }
                                Ok::<_, Infallible>((d, i))
                            })).await
                    }).expect("pop hung").unwrap();
                    prop_assert_eq!(show_real(&real), show_model(&deltas));
                    prop_assert_eq!(real_initial, initial);
                }
            }
            prop_assert_eq!(fifo.has_synced(), model.has_synced());
            let real_keys: Vec<String> = fifo.list_keys().iter().map(|k| k.to_string()).collect();
            let model_keys: Vec<String> = model.queue.iter().map(|(k, _)| k.clone()).collect();
            prop_assert_eq!(real_keys, model_keys);
            // `list` is the newest object of each queued key, in pop order.
            let real_list: Vec<i32> = fifo.list().iter().map(|o| o.val).collect();
            let model_list: Vec<i32> = model
                .queue
                .iter()
                .filter_map(|(_, deltas)| deltas.last()?.1)
                .collect();
            prop_assert_eq!(real_list, model_list);
        }
    }
}
