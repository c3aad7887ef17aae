//! # Stage 4: the shared informer (not built yet)
//!
//! This stage will hold client-go's `controller.go`, `shared_informer.go` (sharedProcessor and
//! processorListener), `informers/factory.go` and `listers.go`: one watch per type, fanned out to
//! many event handlers. Its issue describes the work; until it lands this crate is empty on purpose.
