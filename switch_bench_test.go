package asyncio

import "testing"

// BenchmarkCreateAwaitSequential creates a task that yields once and
// awaits it, b.N times one after another: each new task can take the
// goroutine the previous one finished on (the pool in switch.go).
func BenchmarkCreateAwaitSequential(b *testing.B) {
	b.ReportAllocs()
	l := NewLoop()
	defer l.Close()
	main := CreateTask(l, func(t *T) (int, error) {
		b.ResetTimer()
		for i := range b.N {
			tk := CreateTask(t, func(t *T) (int, error) { return i, Sleep(t, 0) })
			if _, err := tk.Await(t); err != nil {
				return 0, err
			}
		}
		b.StopTimer()
		return 0, nil
	})
	if err := l.RunUntilComplete(main); err != nil {
		b.Fatal(err)
	}
}
