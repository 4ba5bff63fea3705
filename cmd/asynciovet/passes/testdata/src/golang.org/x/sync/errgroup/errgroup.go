// Package errgroup is a stub of golang.org/x/sync/errgroup for the
// analyzer's tests.
package errgroup

import (
	"context"
	"sync"
)

type Group struct{ wg sync.WaitGroup }

func WithContext(ctx context.Context) (*Group, context.Context) { return &Group{}, ctx }

func (g *Group) Go(f func() error) {
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		_ = f()
	}()
}

func (g *Group) TryGo(f func() error) bool { g.Go(f); return true }
func (g *Group) SetLimit(n int)            {}

func (g *Group) Wait() error {
	g.wg.Wait()
	return nil
}
