package asyncio

import (
	"errors"
	"testing"
)

// Probes of cross-loop calls (h5): outcomes racing with the target's
// Close, cancellation racing with the outcome, misuse.

// A remote task that finished before its loop closed, but whose done
// callback (which sends the outcome back) was still in the loop's ready
// queue when the loop stopped: the call finished, its effect happened, so
// the caller must get its outcome, not an error saying the target closed
// "before the call finished".
func TestH5_OutcomeOfATaskDoneBeforeItsLoopClosedIsNotReportedAsUndone(t *testing.T) {
	for _, outcome := range []string{"value", "error"} {
		t.Run(outcome, func(t *testing.T) {
			b := NewLoop()
			bDone := make(chan error, 1)
			go func() { bDone <- b.RunForever() }()
			closed := make(chan error, 1)
			boom := errors.New("remote failure")
			_, err := Run(func(tk *T) (struct{}, error) {
				effect := false
				v, err := CallOn(tk, b, func(rt *T) (int, error) {
					// The task's last step: the loop stops after this
					// iteration, before the done callbacks run.
					b.Stop()
					effect = true
					// b is closed from outside once it stopped, while
					// this call is still waiting for its outcome.
					go func() {
						<-bDone
						closed <- b.Close()
					}()
					if outcome == "error" {
						return 0, boom
					}
					return 7, nil
				})
				if !effect {
					t.Fatal("the remote function did not run")
				}
				switch outcome {
				case "value":
					if err != nil || v != 7 {
						t.Errorf("CallOn of a task done before its loop closed: %v, %v; want 7, nil", v, err)
					}
				case "error":
					if !errors.Is(err, boom) || errors.Is(err, ErrLoopClosed) {
						t.Errorf("CallOn of a task failed before its loop closed: %v; want the remote error", err)
					}
				}
				return struct{}{}, nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if err := <-closed; err != nil {
				t.Errorf("b.Close: %v", err)
			}
		})
	}
}
