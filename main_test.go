package asyncio

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if scenario := os.Getenv(helperEnv); scenario != "" {
		run := helperProcesses[scenario]
		if run == nil {
			fmt.Fprintf(os.Stderr, "unknown helper scenario %q\n", scenario)
			os.Exit(2)
		}
		os.Exit(run())
	}
	goleak.VerifyTestMain(m)
}
