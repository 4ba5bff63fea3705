// Package main is a small service ported from asyncio the way a careful
// user would write it: a heartbeat, a worker pool fed by a queue, a
// signal that dumps the task tree and one that shuts down, a config
// loaded off the loop. Any finding here is a false positive.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

type service struct {
	jobs    *asyncio.Queue[string]
	stop    *asyncio.Event
	done    []*asyncio.Task[int]
	results map[string]int
}

func loadConfig(t *asyncio.T, path string) ([]string, error) {
	return asyncio.Go(t, func(ctx context.Context) ([]string, error) {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		return strings.Fields(string(b)), nil
	})
}

func (s *service) heartbeat(t *asyncio.T) (int, error) {
	beats := 0
	for {
		if err := asyncio.Sleep(t, time.Second); err != nil {
			return beats, err
		}
		beats++
		if s.stop.IsSet() {
			return beats, nil
		}
	}
}

func (s *service) worker(t *asyncio.T) (int, error) {
	n := 0
	for {
		job, err := s.jobs.Get(t)
		if err != nil {
			return n, err
		}
		if err := asyncio.Sleep(t, time.Duration(len(job))*time.Millisecond); err != nil {
			return n, err
		}
		s.results[job] = len(job)
		n++
		if err := s.jobs.TaskDone(); err != nil {
			return n, err
		}
	}
}

func (s *service) readLines(t *asyncio.T, r *aio.StreamReader) error {
	for {
		line, err := r.ReadLine(t)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("read: %w", err)
		}
		if err := s.jobs.Put(t, strings.TrimSpace(string(line))); err != nil {
			return err
		}
	}
}

func (s *service) watchSignals(t *asyncio.T) error {
	l := t.Loop()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	go func() {
		for range sigs {
			if err := l.WriteDump(os.Stderr, time.Second); err != nil {
				log.Print(err)
			}
			if _, err := l.CallSoonThreadsafe(s.stop.Set); err != nil {
				log.Print(err)
				return
			}
		}
	}()
	return s.stop.Wait(t)
}

func (s *service) run(t *asyncio.T) (int, error) {
	jobs, err := loadConfig(t, "/etc/jobs")
	if err != nil {
		return 0, err
	}
	for i := 0; i < 4; i++ {
		s.done = append(s.done, asyncio.CreateTask(t, s.worker, asyncio.WithName(fmt.Sprint("worker-", i))))
	}
	hb := asyncio.CreateTask(t, s.heartbeat)
	for _, j := range jobs {
		if err := s.jobs.Put(t, j); err != nil {
			return 0, err
		}
	}
	if err := s.jobs.Join(t); err != nil {
		return 0, err
	}
	for _, tk := range s.done {
		tk.Cancel()
	}
	_, _, err = asyncio.Wait(t, s.done, asyncio.Never, asyncio.AllCompleted)
	if err != nil {
		return 0, err
	}
	s.stop.Set()
	beats, err := hb.Await(t)
	if err != nil {
		return 0, err
	}
	err = asyncio.Timeout(t, time.Second, func(sc *asyncio.TimeoutScope) error {
		return s.watchSignals(t)
	})
	if err != nil && !errors.Is(err, asyncio.ErrTimeout) {
		return beats, err
	}
	return beats, nil
}

func main() {
	s := &service{jobs: asyncio.NewQueue[string](8), stop: asyncio.NewEvent(), results: map[string]int{}}
	if _, err := asyncio.Run(s.run); err != nil {
		log.Fatal(err)
	}
}
