//! # Stage 2: DeltaFIFO (not built yet)
//!
//! This stage will hold client-go's `tools/cache/delta_fifo.go` and `the_real_fifo.go`: the queue of
//! per-key deltas between the Reflector and the informer's indexer, built on stage 1's
//! `KeyListerGetter`. Its issue describes the work; until it lands this crate is empty on purpose.
