//! # Stage 3: the Reflector (not built yet)
//!
//! This stage will hold client-go's `tools/cache/reflector.go`, `listwatch.go` and `tools/pager`,
//! and apimachinery's `watch.Interface`: the loop that lists, then watches, and writes what it sees
//! into a stage 1 store or a stage 2 DeltaFIFO. Its issue describes the work; until it lands this
//! crate is empty on purpose.
