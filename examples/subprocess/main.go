//go:build unix

// Command subprocess runs a command as the asyncio docs' subprocess
// example does: it prints the command's output line by line as it comes,
// waits for it and reports its exit code.
//
//	async def run(cmd, timeout):
//	    proc = await asyncio.create_subprocess_exec(*cmd, stdout=PIPE)
//	    try:
//	        async with asyncio.timeout(timeout):
//	            async for line in proc.stdout:
//	                print(line.decode(), end="")
//	            return await proc.wait()
//	    finally:
//	        if proc.returncode is None:
//	            proc.kill()
//	            await proc.wait()
//
// With -timeout, a command still running when the time is up is killed
// (exit status 124, as timeout(1)). Ctrl-C (SIGINT) is asyncio.run's: the
// main task is cancelled, its cleanup kills the child, and the program
// exits with status 130. A child killed by a signal gives 128+N.
//
//	subprocess [-timeout 5s] command [args...]
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/go-asyncio/asyncio"
	"github.com/go-asyncio/asyncio/aio"
)

// runCommand runs name with args, copying its output lines to out, and
// returns its return code. Whatever ends it early (the timeout, a
// cancellation), the child does not outlive it.
func runCommand(t *asyncio.T, name string, args []string, timeout time.Duration, out io.Writer) (rc int, err error) {
	p, err := aio.CreateSubprocessExec(t, name, args, aio.WithStdout(aio.Pipe))
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(out, "started pid %d\n", p.Pid())
	defer func() {
		if _, exited := p.ReturnCode(); !exited {
			p.Kill()
			if _, werr := p.Wait(t); werr != nil && err == nil {
				err = werr // cancelled while reaping: report it
			}
			fmt.Fprintln(out, "killed the child")
		}
	}()
	err = asyncio.Timeout(t, timeout, func(*asyncio.TimeoutScope) error {
		for {
			line, err := p.Stdout.ReadLine(t)
			if err != nil {
				return err
			}
			if len(line) == 0 { // EOF
				break
			}
			fmt.Fprintf(out, "| %s", line)
		}
		_, err := p.Wait(t)
		return err
	})
	rc, _ = p.ReturnCode()
	return rc, err
}

// run is the program: it returns the exit status.
func run(argv []string, out, errOut io.Writer) int {
	fl := flag.NewFlagSet("subprocess", flag.ContinueOnError)
	fl.SetOutput(errOut)
	timeout := fl.Duration("timeout", 0, "kill the command after this long (0: never)")
	if err := fl.Parse(argv); err != nil {
		return 2
	}
	if fl.NArg() == 0 {
		fmt.Fprintln(errOut, "usage: subprocess [-timeout d] command [args...]")
		return 2
	}
	if *timeout <= 0 {
		*timeout = asyncio.Never
	}
	rc, err := asyncio.Run(func(t *asyncio.T) (int, error) {
		return runCommand(t, fl.Arg(0), fl.Args()[1:], *timeout, out)
	})
	switch {
	case errors.Is(err, asyncio.ErrInterrupted):
		fmt.Fprintln(out, "interrupted")
		return 130
	case errors.Is(err, asyncio.ErrTimeout):
		fmt.Fprintln(out, "timed out")
		return 124
	case errors.Is(err, fs.ErrNotExist):
		fmt.Fprintln(errOut, err)
		return 127
	case err != nil:
		fmt.Fprintln(errOut, err)
		return 1
	case rc < 0: // killed by signal -rc
		fmt.Fprintf(out, "killed by signal %d\n", -rc)
		return 128 - rc
	}
	fmt.Fprintf(out, "exit code %d\n", rc)
	return rc
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }
