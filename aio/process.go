//go:build unix

package aio

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"github.com/go-asyncio/asyncio"
)

// The high-level subprocess API (asyncio/subprocess.py): a Process with
// its standard streams as StreamReader and StreamWriter, over the
// transport of subprocess.go.

// Process is asyncio.subprocess.Process: a child started by
// CreateSubprocessExec or CreateSubprocessShell. Stdin, Stdout and Stderr
// are set for the streams that are a Pipe, nil otherwise. Its methods
// must be called on the loop. The zero Process has no child: its methods
// (but Transport and String) panic with a *asyncio.ValueError.
type Process struct {
	// Stdin writes to the child's stdin (asyncio's process.stdin).
	Stdin *StreamWriter
	// Stdout reads the child's stdout (asyncio's process.stdout).
	Stdout *StreamReader
	// Stderr reads the child's stderr (asyncio's process.stderr).
	Stderr *StreamReader

	transport *subprocessTransport
	protocol  *subprocessStreamProtocol
}

// Pid returns the child's process id (asyncio's pid).
func (p *Process) Pid() int {
	p.checkMade("Process.Pid")
	return p.transport.pid
}

// ReturnCode returns the child's exit status and true once it has exited;
// while it runs, false (asyncio's returncode, None while running). The
// status is the exit code, or -N when signal N killed the child.
func (p *Process) ReturnCode() (int, bool) {
	p.checkMade("Process.ReturnCode")
	return p.transport.ReturnCode()
}

// Wait waits until the child exits and returns its return code (asyncio's
// wait). A cancellation only stops the waiting: the child goes on (kill it
// first if it must stop). Wait returns as soon as the child has exited,
// even if a process it started still holds one of its pipes open; so
// Kill right after it returns nil, not asyncio 3.13's ProcessLookupError,
// until the pipes are closed too (see SubprocessTransport.SendSignal). With
// Pipe streams, read them (or use Communicate) while waiting: a child that
// fills a pipe nobody reads blocks forever, as in asyncio.
func (p *Process) Wait(t *asyncio.T) (int, error) {
	p.checkMade("Process.Wait")
	return p.transport.wait(t)
}

// SendSignal sends sig to the child (asyncio's send_signal); see
// SubprocessTransport.SendSignal for what happens once it has exited.
func (p *Process) SendSignal(sig os.Signal) error {
	p.checkMade("Process.SendSignal")
	return p.transport.SendSignal(sig)
}

// Terminate sends SIGTERM (asyncio's terminate).
func (p *Process) Terminate() error {
	p.checkMade("Process.Terminate")
	return p.transport.Terminate()
}

// Kill sends SIGKILL (asyncio's kill).
func (p *Process) Kill() error {
	p.checkMade("Process.Kill")
	return p.transport.Kill()
}

// Transport returns the subprocess transport under the Process.
func (p *Process) Transport() SubprocessTransport { return p.transport }

// String is asyncio's repr: "<Process PID>".
func (p *Process) String() string {
	if p.transport == nil {
		return "<Process (zero)>"
	}
	return fmt.Sprintf("<Process %d>", p.transport.pid)
}

// checkMade panics with a *asyncio.ValueError naming op when p was not
// started by this package (the zero Process has no child).
func (p *Process) checkMade(op string) {
	if p.transport == nil {
		panic(&asyncio.ValueError{Msg: op + ": zero Process (start one with CreateSubprocessExec or CreateSubprocessShell)"})
	}
}

// Communicate sends input to stdin, then closes it, while it reads stdout
// and stderr to their end, and then waits for the child to exit (asyncio's
// communicate). Reading both pipes at once is what avoids the deadlock of
// a child blocked on a full pipe. It returns what stdout and stderr held,
// nil for a stream that is not a Pipe. A child that exits without reading
// its stdin is not an error: Communicate ignores the broken pipe, as
// asyncio does. Input for a child whose stdin is not a Pipe is dropped,
// as asyncio's communicate drops it (it feeds stdin only when there is a
// pipe), so a helper may hand its input over whatever the child's stdin.
// A cancellation stops the exchange and is returned; the child goes on
// running.
func (p *Process) Communicate(t *asyncio.T, input []byte) (stdout, stderr []byte, err error) {
	p.checkMade("Process.Communicate")
	noop := func(*asyncio.T) ([]byte, error) { return nil, nil }
	feed, readOut, readErr := noop, noop, noop
	if p.Stdin != nil {
		feed = func(t *asyncio.T) ([]byte, error) { return nil, p.feedStdin(t, input) }
	}
	if p.Stdout != nil {
		readOut = func(t *asyncio.T) ([]byte, error) { return p.readStream(t, 1) }
	}
	if p.Stderr != nil {
		readErr = func(t *asyncio.T) ([]byte, error) { return p.readStream(t, 2) }
	}
	res, err := asyncio.GatherFuncs(t, feed, readOut, readErr).Await(t)
	if err != nil {
		return nil, nil, err
	}
	if _, err := p.Wait(t); err != nil {
		return nil, nil, err
	}
	return res[1], res[2], nil
}

// feedStdin is asyncio's _feed_stdin: write, drain, close; a child that
// does not read its stdin (BrokenPipeError, ConnectionResetError) is fine.
func (p *Process) feedStdin(t *asyncio.T, input []byte) error {
	if len(input) > 0 {
		// The pipe holds on to input without copying it (64 MiB through
		// cat: a quarter faster), and copies what is left of it before
		// Communicate gives the caller input back, however it ends.
		if wp, ok := p.Stdin.transport.(*writePipeTransport); ok {
			defer wp.unborrow()
			wp.send(input, true)
		} else {
			p.Stdin.Write(input)
		}
	}
	if err := p.Stdin.Drain(t); err != nil && !errors.Is(err, syscall.EPIPE) && !errors.Is(err, syscall.ECONNRESET) {
		return err
	}
	p.Stdin.Close()
	return nil
}

// readStream is asyncio's _read_stream: read to EOF, then close the pipe.
func (p *Process) readStream(t *asyncio.T, fd int) ([]byte, error) {
	stream := p.Stdout
	if fd == 2 {
		stream = p.Stderr
	}
	out, err := stream.Read(t, -1)
	if err != nil {
		return nil, err
	}
	p.transport.PipeTransport(fd).Close()
	return out, nil
}

// subprocessStreamProtocol is asyncio's SubprocessStreamProtocol: it
// feeds the readers of stdout and stderr, gives stdin's writer its flow
// control, and closes the transport once the child has exited and its
// output pipes are closed.
type subprocessStreamProtocol struct {
	flowControlMixin
	limit     int
	stdin     *StreamWriter
	stdout    *StreamReader
	stderr    *StreamReader
	transport SubprocessTransport

	processExited bool
	pipeFDs       []int // output pipes not yet closed
	stdinClosed   *asyncio.Future[struct{}]
}

func (p *subprocessStreamProtocol) ConnectionMade(tr SubprocessTransport) {
	p.transport = tr
	if out := tr.PipeTransport(1); out != nil {
		p.stdout = NewStreamReader(p.loop, p.limit)
		p.stdout.setTransport(out)
		p.pipeFDs = append(p.pipeFDs, 1)
	}
	if errp := tr.PipeTransport(2); errp != nil {
		p.stderr = NewStreamReader(p.loop, p.limit)
		p.stderr.setTransport(errp)
		p.pipeFDs = append(p.pipeFDs, 2)
	}
	if in := tr.PipeTransport(0); in != nil {
		p.stdin = &StreamWriter{loop: p.loop, transport: in, protocol: p}
	}
}

func (p *subprocessStreamProtocol) reader(fd int) *StreamReader {
	switch fd {
	case 1:
		return p.stdout
	case 2:
		return p.stderr
	}
	return nil
}

func (p *subprocessStreamProtocol) PipeDataReceived(fd int, data []byte) {
	if r := p.reader(fd); r != nil {
		r.feed(data) // the pipe transport hands over a fresh slice
	}
}

func (p *subprocessStreamProtocol) PipeConnectionLost(fd int, err error) {
	if fd == 0 {
		if p.stdin != nil {
			p.stdin.Close()
		}
		p.lost(err)
		if err == nil {
			p.stdinClosed.SetResult(struct{}{})
		} else {
			p.stdinClosed.SetException(err)
			_ = p.stdinClosed.Err() // WaitClosed is optional: mark it retrieved
		}
		return
	}
	if r := p.reader(fd); r != nil {
		if err == nil {
			r.FeedEOF()
		} else {
			r.SetException(err)
		}
	}
	for i, x := range p.pipeFDs {
		if x == fd {
			p.pipeFDs = append(p.pipeFDs[:i], p.pipeFDs[i+1:]...)
			break
		}
	}
	p.maybeCloseTransport()
}

func (p *subprocessStreamProtocol) ProcessExited() {
	p.processExited = true
	p.maybeCloseTransport()
}

// ConnectionLost is FlowControlMixin.connection_lost: it wakes Drain.
func (p *subprocessStreamProtocol) ConnectionLost(err error) { p.lost(err) }

func (p *subprocessStreamProtocol) maybeCloseTransport() {
	if len(p.pipeFDs) == 0 && p.processExited && p.transport != nil {
		p.transport.Close()
		p.transport = nil
	}
}

func (p *subprocessStreamProtocol) closeWaiter() *asyncio.Future[struct{}] { return p.stdinClosed }

// createProcess is create_subprocess_exec's body.
func createProcess(t *asyncio.T, cmd *exec.Cmd, opts []Option) (*Process, error) {
	o, err := buildOptions("CreateSubprocessExec", opts)
	if err != nil {
		return nil, err
	}
	l := t.Loop()
	proto := &subprocessStreamProtocol{flowControlMixin: flowControlMixin{loop: l}, limit: o.limit, stdinClosed: asyncio.NewFuture[struct{}](l)}
	tr, _, err := startSubprocess(t, func() SubprocessProtocol { return proto }, cmd, via("CreateSubprocessExec", opts), Inherit)
	if err != nil {
		return nil, err
	}
	return &Process{Stdin: proto.stdin, Stdout: proto.stdout, Stderr: proto.stderr, transport: tr, protocol: proto}, nil
}

// CreateSubprocessExec starts program with args as a child process
// (asyncio.create_subprocess_exec). Its streams are inherited unless
// WithStdin, WithStdout or WithStderr say otherwise (Pipe gives the
// Process a StreamWriter or StreamReaders, with the WithStreamLimit limit,
// default DefaultStreamLimit); WithDir, WithEnv and WithCmd set the rest
// of the exec.Cmd. A program that cannot be found returns os/exec's error,
// which names it and matches os.ErrNotExist (FileNotFoundError); an
// empty program, or a NUL byte in the program, an argument, the
// environment or the directory, is a *ValueError naming it, returned
// before anything is made (Popen's "embedded null byte").
//
// The loop reaps the child when it exits, whether anyone waits for it or
// not. When the loop closes with the child still running, the child is
// killed (SIGKILL) and reaped.
func CreateSubprocessExec(t *asyncio.T, program string, args []string, opts ...Option) (*Process, error) {
	if program == "" {
		return nil, errEmptyProgram("CreateSubprocessExec")
	}
	return createProcess(t, exec.Command(program, args...), opts)
}

// CreateSubprocessShell runs cmd with /bin/sh -c as CreateSubprocessExec
// does (asyncio.create_subprocess_shell). Quote what cmd takes from
// outside: the shell interprets it. An empty cmd runs too (the shell
// exits 0), as in asyncio.
func CreateSubprocessShell(t *asyncio.T, cmd string, opts ...Option) (*Process, error) {
	return CreateSubprocessExec(t, "/bin/sh", []string{"-c", cmd}, via("CreateSubprocessShell", opts)...)
}
