// The Go side of the Rust bench `queue_parallel` (stage6-controllers/benches/queue.rs):
// client-go v0.36 has no parallel queue benchmark, so this one is written to the same
// shape. Copy it into client-go's util/workqueue (v0.36) and run
//
//	go test ./util/workqueue -run XXX -bench BenchmarkQueueParallel -count 3 -benchtime 2s
//
// It is not built by cargo.
package workqueue

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// The same shape as the Rust queue_parallel bench: one producer adds b.N
// distinct int keys while `workers` goroutines Get and Done them; the time is
// from the first add until the last key is done.
func BenchmarkQueueParallel(b *testing.B) {
	for _, workers := range []int{1, 2, 8} {
		b.Run(fmt.Sprint(workers), func(b *testing.B) {
			q := NewTyped[int]()
			var processed atomic.Int64
			done := make(chan struct{})
			var wg sync.WaitGroup
			n := int64(b.N)
			for w := 0; w < workers; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						key, shutdown := q.Get()
						if shutdown {
							return
						}
						q.Done(key)
						if processed.Add(1) == n {
							close(done)
						}
					}
				}()
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				q.Add(i)
			}
			<-done
			b.StopTimer()
			q.ShutDown()
			wg.Wait()
		})
	}
}
