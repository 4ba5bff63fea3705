//go:build unix

package main

import (
	"errors"
	"fmt"

	"github.com/go-asyncio/asyncio"
)

// The gather and TaskGroup steps of W4, W6, W7, W7f and W10 use the
// project's asyncio.Gather, asyncio.GatherOutcomes and asyncio.TaskGroup /
// asyncio.Spawn, exactly as the peers use asyncio.gather and
// asyncio.TaskGroup; the variant stays empty.
const (
	gatherVariant    = ""
	taskGroupVariant = ""
)

// gatherInts is `await asyncio.gather(*tasks)`.
func gatherInts(t *asyncio.T, tasks []*asyncio.Task[int]) ([]int, error) {
	aws := make([]asyncio.AwaitableOf[int], len(tasks))
	for i, tk := range tasks {
		aws[i] = tk
	}
	return asyncio.Gather(t, aws...).Await(t)
}

// gatherErrs is `await asyncio.gather(*tasks, return_exceptions=True)`:
// each child's error (nil on success).
func gatherErrs(t *asyncio.T, tasks []*asyncio.Task[struct{}]) ([]error, error) {
	aws := make([]asyncio.AwaitableOf[struct{}], len(tasks))
	for i, tk := range tasks {
		aws[i] = tk
	}
	outs, err := asyncio.GatherOutcomes(t, aws...).Await(t)
	if err != nil {
		return nil, err
	}
	errs := make([]error, len(outs))
	for i, o := range outs {
		errs[i] = o.Err
	}
	return errs, nil
}

// taskGroupSpawn is `async with asyncio.TaskGroup() as tg: for i in
// range(n): tg.create_task(mk(i))`; it returns the children and the
// group's error.
func taskGroupSpawn(t *asyncio.T, n int, mk func(i int) func(*asyncio.T) (int, error)) ([]*asyncio.Task[int], error) {
	tasks := make([]*asyncio.Task[int], 0, n)
	err := asyncio.TaskGroup(t, func(g *asyncio.Group) error {
		for i := range n {
			tk, err := asyncio.Spawn(g, mk(i))
			if err != nil {
				return err
			}
			tasks = append(tasks, tk)
		}
		return nil
	})
	return tasks, err
}

// checkOneValueError is W7f's `except* ValueError` check: an exception
// group holding exactly one error, a ValueError.
func checkOneValueError(err error) error {
	var g *asyncio.ExceptionGroup
	if !errors.As(err, &g) {
		return fmt.Errorf("task group returned %v, want an ExceptionGroup", err)
	}
	var ve *asyncio.ValueError
	if len(g.Errs) != 1 || !errors.As(g.Errs[0], &ve) {
		return fmt.Errorf("exception group holds %v, want exactly one ValueError", g.Errs)
	}
	return nil
}
