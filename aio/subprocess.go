//go:build unix

package aio

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// Child processes (asyncio's loop.subprocess_exec / subprocess_shell and
// base_subprocess.py; the high-level Process is in process.go). os/exec
// starts the child: the program lookup, the environment, the working
// directory, SysProcAttr and ExtraFiles are all its own. This file gives
// the child's pipes to pipe transports and watches for its exit on the
// loop: on Linux a pidfd in the selector (no thread per child; see
// subprocess_linux.go), elsewhere one goroutine per child blocked in
// Wait that reports through a pipe in the selector (subprocess_other.go,
// watchOnGoroutine).
//
// Callback order. The protocol gets ConnectionMade first, then
// PipeDataReceived and PipeConnectionLost for each pipe, ProcessExited,
// and last ConnectionLost(nil), once the child has exited and every pipe
// is closed (asyncio's _try_finish). asyncio itself promises nothing
// about ProcessExited against the pipe callbacks (gh-108973: it may come
// first). Here, when the exit is seen, the pipes are read on the spot,
// through EOF: the kernel closes a child's descriptors before it reports
// the exit, so everything the child wrote, and the end of every pipe only
// the child held, is delivered before ProcessExited. A pipe that another
// process still holds (a grandchild in the background), or whose reading
// is paused, is not waited for: ProcessExited never hangs on it. That
// read takes no more than the pipe held when the exit was seen (and one
// read more, for its end), so a grandchild that keeps writing cannot
// hold it either; what it writes comes later, through the pipe's reader.
//
// Wait returns as soon as the exit status is known, not once the pipes
// are closed too: asyncio 3.13 waits for the pipes, and hangs while a
// grandchild holds one, which CPython fixed later (gh-119710).
//
// No zombie: the child is reaped when its exit is seen, also when nobody
// waits for it. A loop that closes with children still running kills
// them (SIGKILL) and reaps them in Close, as asyncio's transport does
// when it is closed (or collected) with its child running.

// Redirect says where a child's standard stream goes (asyncio's stdin=,
// stdout= and stderr= arguments). The zero value is Inherit.
type Redirect struct {
	kind redirectKind
	file *os.File
}

type redirectKind uint8

const (
	redirectInherit redirectKind = iota
	redirectPipe
	redirectDevNull
	redirectStdout
	redirectFile
)

var (
	// Inherit gives the child the parent's own stream (asyncio's None):
	// the default of CreateSubprocessExec and CreateSubprocessShell.
	Inherit = Redirect{}
	// Pipe connects the stream to the parent through a pipe
	// (asyncio.subprocess.PIPE): the default of SubprocessExec and
	// SubprocessShell.
	Pipe = Redirect{kind: redirectPipe}
	// DevNull connects the stream to /dev/null (asyncio.subprocess.DEVNULL).
	DevNull = Redirect{kind: redirectDevNull}
	// Stdout, for stderr only, sends it where stdout goes
	// (asyncio.subprocess.STDOUT).
	Stdout = Redirect{kind: redirectStdout}
)

// File connects the stream to f, an open file of the parent's (asyncio's
// file object or descriptor argument). The parent keeps f and closes it.
// A nil or closed f fails the call with a *ValueError before anything
// starts.
func File(f *os.File) Redirect { return Redirect{kind: redirectFile, file: f} }

// isClosedFile reports whether f was closed (without os.File.Fd, which
// would put an open f in blocking mode): reaching its descriptor fails.
func isClosedFile(f *os.File) bool {
	_, err := fileFD(f)
	return err != nil
}

// String names the redirect as asyncio's constants do.
func (r Redirect) String() string {
	switch r.kind {
	case redirectPipe:
		return "PIPE"
	case redirectDevNull:
		return "DEVNULL"
	case redirectStdout:
		return "STDOUT"
	case redirectFile:
		if r.file == nil {
			return "File(nil)"
		}
		return "File(" + r.file.Name() + ")"
	}
	return "None"
}

// SubprocessProtocol is asyncio.SubprocessProtocol: the callbacks of a
// SubprocessTransport, called on the loop in the order described above.
// fd is 0, 1 or 2 for the child's stdin, stdout and stderr. A protocol
// that also implements WriteFlowControl is paused and resumed by the
// stdin pipe's write buffer.
type SubprocessProtocol interface {
	// ConnectionMade is called first, with the transport.
	ConnectionMade(tr SubprocessTransport)
	// PipeDataReceived is called with what the child wrote on fd.
	PipeDataReceived(fd int, data []byte)
	// PipeConnectionLost is called when the pipe of fd is closed, with
	// nil or the error that closed it.
	PipeConnectionLost(fd int, err error)
	// ProcessExited is called when the child has exited.
	ProcessExited()
	// ConnectionLost is called last, once the child has exited and every
	// pipe is closed.
	ConnectionLost(err error)
}

// SubprocessTransport is asyncio.SubprocessTransport: a child process and
// its pipes. Its methods must be called on the loop.
type SubprocessTransport interface {
	// Pid returns the child's process id.
	Pid() int
	// ReturnCode returns the child's exit status and true once it has
	// exited (asyncio's None while it runs): its exit code, or -N when
	// signal N killed it.
	ReturnCode() (int, bool)
	// PipeTransport returns the transport of the child's fd (0, 1 or 2),
	// or nil when that stream is not a pipe (asyncio's
	// get_pipe_transport). Its ExtraInfo("pipe") (PipeFile) is the
	// parent's end of the pipe, an *os.File the transport owns and
	// closes (asyncio's Popen.stdin, stdout or stderr).
	PipeTransport(fd int) Transport
	// SendSignal sends sig to the child (asyncio's send_signal). Once the
	// child has exited it does nothing; once the transport is finished
	// (ConnectionLost was called) it returns an error matching
	// os.ErrProcessDone and syscall.ESRCH (asyncio's
	// ProcessLookupError).
	SendSignal(sig os.Signal) error
	// Terminate sends SIGTERM.
	Terminate() error
	// Kill sends SIGKILL.
	Kill() error
	// Close closes the pipes and kills the child if it is still running
	// (asyncio's close).
	Close()
	// IsClosing reports whether Close was called.
	IsClosing() bool
	// ExtraInfo returns "subprocess" (the *exec.Cmd) or nil.
	ExtraInfo(name string) any
	// SetProtocol replaces the protocol.
	SetProtocol(p SubprocessProtocol)
	// Protocol returns the protocol.
	Protocol() SubprocessProtocol
}

// subprocessTransport is asyncio's BaseSubprocessTransport.
type subprocessTransport struct {
	loop     *asyncio.Loop
	protocol SubprocessProtocol
	cmd      *exec.Cmd
	pid      int
	pipes    [3]*subprocessPipe // by fd; nil when not a pipe

	returnCode int
	exited     bool        // the child has been reaped and returnCode is set
	closed     bool        // Close was called
	finished   bool        // ConnectionLost is scheduled (asyncio's _finished)
	gone       bool        // ConnectionLost was called (asyncio's _proc is None)
	disown     func() bool // unregisters killAndReap from Loop.OnClose

	exitWaiters []*asyncio.Future[int]
	watch       exitWatch
}

// exitWatch is how the child's exit reaches the loop (one of the two).
type exitWatch struct {
	pidfd    int           // Linux: a pidfd in the selector, -1 when none
	waitDone chan struct{} // elsewhere: closed when the waiting goroutine ends
	exitPipe int           // with waitDone: the read end of its exit pipe, -1 when none
}

var _ SubprocessTransport = (*subprocessTransport)(nil)

// subprocessPipe is asyncio's ReadSubprocessPipeProto /
// WriteSubprocessPipeProto: the protocol of one of the child's pipes,
// which forwards to the subprocess protocol.
type subprocessPipe struct {
	proc         *subprocessTransport
	fd           int
	read         *readPipeTransport  // fd 1, 2
	write        *writePipeTransport // fd 0
	disconnected bool
}

func (p *subprocessPipe) transport() Transport {
	if p.read != nil {
		return p.read
	}
	return p.write
}

func (p *subprocessPipe) ConnectionMade(Transport) {}

// DataReceived passes data on. A panic in PipeDataReceived is reported
// and the pipe goes on reading: asyncio calls pipe_data_received in a
// callback of its own, so its exception never reaches the pipe transport
// (which would close the pipe, and a child still writing would die of
// SIGPIPE).
func (p *subprocessPipe) DataReceived(data []byte) {
	p.proc.callProto("PipeDataReceived", func(sp SubprocessProtocol) { sp.PipeDataReceived(p.fd, data) })
}

func (p *subprocessPipe) EOFReceived() bool { return false }
func (p *subprocessPipe) ConnectionLost(err error) {
	p.disconnected = true
	p.proc.pipeConnectionLost(p.fd, err)
}

// PauseWriting and ResumeWriting pass the stdin pipe's flow control on.
func (p *subprocessPipe) PauseWriting() {
	if w, ok := p.proc.protocol.(WriteFlowControl); ok {
		w.PauseWriting()
	}
}

func (p *subprocessPipe) ResumeWriting() {
	if w, ok := p.proc.protocol.(WriteFlowControl); ok {
		w.ResumeWriting()
	}
}

// subprocessOptions are the Options that shape a child.
type subprocessOptions struct {
	streams [3]*Redirect // stdin, stdout, stderr; nil: the call's default
	dir     *string
	env     []string
	envSet  bool
	setup   func(*exec.Cmd)
}

// check rejects a WithDir or WithEnv that no correct program gives,
// naming it. An empty directory would run the child in the parent's
// (exec.Cmd's default), where Popen(cwd="") fails; an environment entry
// without "=" would reach the child as it is (exec.Cmd passes it on),
// where Popen's env= mapping cannot express one.
func (s *subprocessOptions) check() error {
	if s.dir != nil && *s.dir == "" {
		return &asyncio.ValueError{Msg: `WithDir: empty directory (leave WithDir out to run in the parent's)`}
	}
	for i, kv := range s.env {
		if !strings.Contains(kv, "=") {
			return &asyncio.ValueError{Msg: fmt.Sprintf("WithEnv: entry %d (%q) is not KEY=value", i, kv)}
		}
	}
	return nil
}

// checkRedirects fills in the defaults and rejects what no correct
// program asks for, naming it.
func (o *options) redirects(def Redirect) ([3]Redirect, error) {
	var rs [3]Redirect
	names := [3]string{"stdin", "stdout", "stderr"}
	for i := range rs {
		rs[i] = def
		if r := o.sub.streams[i]; r != nil {
			rs[i] = *r
		}
		switch {
		case rs[i].kind == redirectStdout && i != 2:
			return rs, &asyncio.ValueError{Msg: fmt.Sprintf("%s: Stdout (asyncio's STDOUT) is only for stderr", names[i])}
		case rs[i].kind == redirectFile && rs[i].file == nil:
			return rs, &asyncio.ValueError{Msg: fmt.Sprintf("%s: File(nil)", names[i])}
		case rs[i].kind == redirectFile && isClosedFile(rs[i].file):
			// os/exec would start the child with that stream closed
			// (a closed file's Fd is -1); Popen raises ValueError
			// ("I/O operation on closed file").
			return rs, &asyncio.ValueError{Msg: fmt.Sprintf("%s: %v is closed", names[i], rs[i])}
		}
	}
	return rs, nil
}

// childPipe is one pipe made for the child: the parent's end, non-blocking
// and close-on-exec, and the child's end as the *os.File os/exec passes on.
//
// The parent's end is an *os.File too, parentFile, which its pipe
// transport owns and gives as ExtraInfo("pipe") (asyncio's pipe is the
// Popen's file object). Everything closes the end through parentFile,
// never through the bare fd: the file's finalizer would otherwise close
// the number again later, whatever it then names. The file is made while
// the descriptor is still blocking, so os.NewFile leaves it out of the
// runtime's poller (the loop's selector watches it) and its Fd method
// does not touch the descriptor's mode.
type childPipe struct {
	parent     int
	parentFile *os.File
	child      *os.File
}

func newChildPipe(parentReads bool) (childPipe, error) {
	var p [2]int
	if err := sysPipe(p[:]); err != nil {
		return childPipe{}, os.NewSyscallError("pipe", err)
	}
	parent, child := p[1], p[0]
	parentName, childName := "|1", "|0"
	if parentReads {
		parent, child = p[0], p[1]
		parentName, childName = "|0", "|1"
	}
	parentFile := os.NewFile(uintptr(parent), parentName)
	childFile := os.NewFile(uintptr(child), childName)
	if err := unix.SetNonblock(parent, true); err != nil {
		parentFile.Close()
		childFile.Close()
		return childPipe{}, os.NewSyscallError("fcntl", err)
	}
	return childPipe{parent: parent, parentFile: parentFile, child: childFile}, nil
}

// notFoundError is what starting a program that PATH does not have
// returns: os/exec's error, which names the program, and also
// fs.ErrNotExist, as asyncio raises FileNotFoundError both for that and
// for a path that does not exist.
type notFoundError struct{ err *exec.Error }

func (e *notFoundError) Error() string { return e.err.Error() }

func (e *notFoundError) Unwrap() error { return e.err }

func (e *notFoundError) Is(target error) bool { return target == os.ErrNotExist }

// startError wraps os/exec's start errors where asyncio's differ.
func startError(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) && errors.Is(err, exec.ErrNotFound) {
		return &notFoundError{ee}
	}
	return err
}

// startSubprocess is the body of SubprocessExec and SubprocessShell
// (asyncio's _make_subprocess_transport): start cmd with pipes as o says
// (def is the call's default redirect), wrap it in a transport, and wait
// until the protocol's ConnectionMade has run.
func startSubprocess(t *asyncio.T, factory func() SubprocessProtocol, cmd *exec.Cmd, opts []Option, def Redirect) (*subprocessTransport, SubprocessProtocol, error) {
	if t == nil {
		panic(&asyncio.ValueError{Msg: "subprocess: nil *asyncio.T"})
	}
	if factory == nil {
		return nil, nil, &asyncio.ValueError{Msg: "subprocess: nil protocol factory"}
	}
	o, err := buildOptions("SubprocessExec", opts)
	if err != nil {
		return nil, nil, err
	}
	if err := o.sub.check(); err != nil {
		return nil, nil, err
	}
	rs, err := o.redirects(def)
	if err != nil {
		return nil, nil, err
	}
	if o.sub.dir != nil {
		cmd.Dir = *o.sub.dir
	}
	if o.sub.envSet {
		cmd.Env = o.sub.env
		if cmd.Env == nil {
			// WithEnv(nil) is an empty environment (Popen's env={}), as
			// lookPathIn takes it: exec.Cmd would give a nil Env the
			// parent's whole environment.
			cmd.Env = []string{}
		}
		if !strings.Contains(cmd.Args[0], "/") {
			// exec.Command looked the program up in the parent's PATH;
			// Popen looks in the child's (os.get_exec_path(env)).
			cmd.Path, cmd.Err = lookPathIn(cmd.Args[0], o.sub.env, cmd.Dir)
		}
	}
	if o.sub.setup != nil {
		o.sub.setup(cmd)
		if cmd.Stdin != nil || cmd.Stdout != nil || cmd.Stderr != nil {
			return nil, nil, &asyncio.ValueError{Msg: "WithCmd: set the child's stdin, stdout and stderr with WithStdin, WithStdout and WithStderr"}
		}
	}
	call := "SubprocessExec"
	if len(opts) > 0 && opts[0].via != "" {
		call = opts[0].via
	}
	if err := checkNUL(call, cmd); err != nil {
		return nil, nil, err
	}
	l := t.Loop()

	var pipes [3]childPipe
	made := [3]bool{}
	closeAll := func(parentToo bool) {
		for i, p := range pipes {
			if !made[i] {
				continue
			}
			p.child.Close()
			if parentToo {
				p.parentFile.Close()
			}
		}
	}
	files := [3]*os.File{}
	std := [3]*os.File{os.Stdin, os.Stdout, os.Stderr}
	for i, r := range rs {
		switch r.kind {
		case redirectInherit:
			files[i] = std[i]
		case redirectPipe:
			p, err := newChildPipe(i != 0)
			if err != nil {
				closeAll(true)
				return nil, nil, err
			}
			pipes[i], made[i] = p, true
			files[i] = p.child
		case redirectFile:
			files[i] = r.file
		case redirectStdout:
			files[i] = files[1] // nil for DevNull: os/exec opens it again
		}
		// redirectDevNull: nil, which os/exec opens as /dev/null.
	}
	if files[0] != nil {
		cmd.Stdin = files[0]
	}
	if files[1] != nil {
		cmd.Stdout = files[1]
	}
	if files[2] != nil {
		cmd.Stderr = files[2]
	}
	// As asyncio, the protocol exists before the child: a factory that
	// panics leaves nothing running.
	started := false
	defer func() {
		if !started {
			closeAll(true)
		}
	}()
	proto, err := newProtocol("subprocess", factory)
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, startError(err)
	}
	started = true
	closeAll(false) // the child has its ends now

	tr := &subprocessTransport{loop: l, cmd: cmd, pid: cmd.Process.Pid, protocol: proto, watch: exitWatch{pidfd: -1, exitPipe: -1}}
	tr.disown = l.OnClose(tr.killAndReap) // nothing outlives the loop
	tr.watchExit()
	if l.Debug() {
		slog.Debug(fmt.Sprintf("process %q created: pid %d", cmd.Path, tr.pid))
	}
	for i, p := range pipes {
		if !made[i] {
			continue
		}
		sp := &subprocessPipe{proc: tr, fd: i}
		var err error
		// The transport owns p.parentFile from here on ("pipe").
		if i == 0 {
			sp.write, err = newWritePipeTransport(l, p.parent, p.parentFile, sp, nil)
		} else {
			sp.read, err = newReadPipeTransport(l, p.parent, p.parentFile, sp, nil)
			if sp.read != nil {
				sp.read.raw = true
			}
		}
		if err != nil { // cannot happen for a pipe; do not leak it anyway
			p.parentFile.Close()
			sp.disconnected = true
		}
		tr.pipes[i] = sp
	}
	waiter := asyncio.NewFuture[struct{}](l)
	l.CallSoon(func() {
		// A panic in ConnectionMade is reported and the call still
		// returns the transport: asyncio sets the waiter apart from
		// connection_made, which fails in a callback of its own.
		tr.callProto("ConnectionMade", func(p SubprocessProtocol) { p.ConnectionMade(tr) })
		setDone(waiter)
	})
	if _, err := waiter.Await(t); err != nil {
		// asyncio: close (which kills the child) and wait for it.
		tr.Close()
		tr.wait(t)
		return nil, nil, err
	}
	return tr, tr.protocol, nil
}

// callProto calls method of the protocol through fn. A panic is
// reported as the loop reports a callback's, but named after the
// protocol's method (asyncio runs each protocol call as a callback of its
// own, named so), and the transport goes on: nothing it still has to do
// is skipped.
func (tr *subprocessTransport) callProto(method string, fn func(p SubprocessProtocol)) {
	p := tr.protocol // fn may replace it (SetProtocol): name the one called
	defer func() {
		if r := recover(); r != nil {
			tr.loop.CallExceptionHandler(asyncio.ExceptionContext{
				Message: "Exception in callback " + methodName(p, method),
				Err:     newPanicError(r),
				Handle:  &asyncio.Handle{}, // asyncio's context has the call_soon handle
			})
		}
	}()
	fn(p)
}

// methodName names method of v as the loop names a method value it runs
// ("pkg.(*T).Method", without the "-fm"), or "%T.Method" for a type
// without a name.
func methodName(v any, method string) string {
	t := reflect.TypeOf(v)
	if t == nil {
		return "<nil>." + method
	}
	if t.Kind() == reflect.Pointer && t.Name() == "" && t.Elem().Name() != "" {
		return t.Elem().PkgPath() + ".(*" + t.Elem().Name() + ")." + method
	}
	if t.Name() != "" {
		return t.PkgPath() + "." + t.Name() + "." + method
	}
	return fmt.Sprintf("%T.%s", v, method)
}

// processExited is asyncio's _process_exited, called on the loop once the
// child is reaped (cmd.ProcessState is set).
func (tr *subprocessTransport) processExited() {
	if tr.exited {
		return
	}
	if tr.watch.waitDone != nil {
		// The waiting goroutine reported: all it has left to do is end.
		<-tr.watch.waitDone
	}
	tr.exited = true
	tr.returnCode = exitCode(tr.cmd.ProcessState, tr.pid)
	if tr.loop.Debug() {
		slog.Info(fmt.Sprintf("%v exited with return code %d", tr, tr.returnCode))
	}
	// Deliver what the child left in its pipes, and the ends of the pipes
	// it alone held, before ProcessExited (see the top of the file).
	for _, p := range tr.pipes[1:] {
		if p != nil && p.read != nil {
			p.read.drain()
		}
	}
	if p := tr.pipes[0]; p != nil && p.write != nil && p.write.connLost == 0 && p.write.peerGone() {
		p.write.readReady()
	}
	// Wait returns now (gh-119710), whatever the pipes do.
	for _, w := range tr.exitWaiters {
		if !w.Done() {
			w.SetResult(tr.returnCode)
		}
	}
	tr.exitWaiters = nil
	tr.loop.CallSoon(func() { tr.callProto("ProcessExited", SubprocessProtocol.ProcessExited) })
	tr.tryFinish()
}

// exitCode is Python's returncode: the exit status, or -N for signal N.
// A child someone else reaped (a wait for any child elsewhere in the
// program) has no status: 255 with a warning, as asyncio's child watchers
// say.
func exitCode(ps *os.ProcessState, pid int) int {
	if ps == nil {
		slog.Warn(fmt.Sprintf("Unknown child process pid %d, will report returncode 255", pid))
		return 255
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return -int(ws.Signal())
	}
	return ps.ExitCode()
}

// pipeConnectionLost is asyncio's _pipe_connection_lost. A panic in the
// protocol's PipeConnectionLost is only reported: the transport still
// finishes (asyncio runs the two apart).
func (tr *subprocessTransport) pipeConnectionLost(fd int, err error) {
	tr.callProto("PipeConnectionLost", func(p SubprocessProtocol) { p.PipeConnectionLost(fd, err) })
	tr.tryFinish()
}

// tryFinish is asyncio's _try_finish: ConnectionLost once the child has
// exited and every pipe is closed.
func (tr *subprocessTransport) tryFinish() {
	if !tr.exited || tr.finished {
		return
	}
	for _, p := range tr.pipes {
		if p != nil && !p.disconnected {
			return
		}
	}
	tr.finished = true
	tr.loop.CallSoon(tr.callConnectionLost)
}

func (tr *subprocessTransport) callConnectionLost() {
	tr.callProto("ConnectionLost", func(p SubprocessProtocol) { p.ConnectionLost(nil) })
	tr.gone = true
	tr.disown()
}

// wait is asyncio's _wait: the return code, once the child has exited.
func (tr *subprocessTransport) wait(t *asyncio.T) (int, error) {
	if tr.exited {
		return tr.returnCode, nil
	}
	// Drop the waits cancelled meanwhile: a child polled with timeouts
	// (WaitFor(t, d, ...) in a loop) would otherwise keep one future per
	// poll until it exits.
	live := tr.exitWaiters[:0]
	for _, w := range tr.exitWaiters {
		if !w.Done() {
			live = append(live, w)
		}
	}
	clear(tr.exitWaiters[len(live):])
	w := asyncio.NewFuture[int](tr.loop)
	tr.exitWaiters = append(live, w)
	return w.Await(t)
}

// killAndReap runs when the loop closes with the transport unfinished: the
// child, if still running, is killed and reaped, and the pipes are closed
// (no callback can run any more).
func (tr *subprocessTransport) killAndReap() {
	if !tr.exited {
		if tr.loop.Debug() {
			slog.Warn(fmt.Sprintf("Close running child process: kill %v", tr))
		}
		_ = tr.cmd.Process.Kill()
		tr.reapNow()
		tr.exited = true
		tr.returnCode = exitCode(tr.cmd.ProcessState, tr.pid)
	}
	for _, p := range tr.pipes {
		if p != nil && !p.disconnected {
			if p.read != nil {
				p.read.closeFD()
			} else {
				p.write.closeFD()
			}
		}
	}
}

// Pid returns the child's process id.
func (tr *subprocessTransport) Pid() int { return tr.pid }

// ReturnCode returns the exit status once the child has exited.
func (tr *subprocessTransport) ReturnCode() (int, bool) { return tr.returnCode, tr.exited }

// PipeTransport returns the transport of the child's fd, or nil.
func (tr *subprocessTransport) PipeTransport(fd int) Transport {
	if fd < 0 || fd > 2 || tr.pipes[fd] == nil {
		return nil
	}
	return tr.pipes[fd].transport()
}

// processDoneError is asyncio's ProcessLookupError for a finished
// transport.
type processDoneError struct{ pid int }

func (e *processDoneError) Error() string {
	return fmt.Sprintf("asyncio: process %d already finished", e.pid)
}

// Is matches os.ErrProcessDone and syscall.ESRCH (ProcessLookupError).
func (e *processDoneError) Is(target error) bool {
	return target == os.ErrProcessDone || target == syscall.ESRCH
}

// SendSignal sends sig to the child.
func (tr *subprocessTransport) SendSignal(sig os.Signal) error {
	if tr.gone {
		return &processDoneError{tr.pid}
	}
	if tr.exited {
		return nil // asyncio swallows ProcessLookupError here
	}
	// os.Process signals through its pidfd where it has one, so a pid the
	// system has reused since cannot be hit.
	if err := tr.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return err
	}
	return nil
}

// Terminate sends SIGTERM.
func (tr *subprocessTransport) Terminate() error { return tr.SendSignal(syscall.SIGTERM) }

// Kill sends SIGKILL.
func (tr *subprocessTransport) Kill() error { return tr.SendSignal(syscall.SIGKILL) }

// Close closes the pipes and kills the child if it still runs.
func (tr *subprocessTransport) Close() {
	if tr.closed {
		return
	}
	tr.closed = true
	for _, p := range tr.pipes {
		if p != nil {
			p.transport().Close()
		}
	}
	if !tr.exited {
		if tr.loop.Debug() {
			slog.Warn(fmt.Sprintf("Close running child process: kill %v", tr))
		}
		_ = tr.cmd.Process.Kill()
	}
}

// IsClosing reports whether Close was called.
func (tr *subprocessTransport) IsClosing() bool { return tr.closed }

// ExtraInfo returns "subprocess" (the *exec.Cmd) or nil.
func (tr *subprocessTransport) ExtraInfo(name string) any {
	if name == "subprocess" {
		return tr.cmd
	}
	return nil
}

// SetProtocol replaces the protocol.
func (tr *subprocessTransport) SetProtocol(p SubprocessProtocol) { tr.protocol = p }

// Protocol returns the protocol.
func (tr *subprocessTransport) Protocol() SubprocessProtocol { return tr.protocol }

// String describes the transport as asyncio's repr does.
func (tr *subprocessTransport) String() string {
	s := "<subprocessTransport"
	if tr.closed {
		s += " closed"
	}
	s += fmt.Sprintf(" pid=%d", tr.pid)
	if tr.exited {
		s += fmt.Sprintf(" returncode=%d", tr.returnCode)
	} else {
		s += " running"
	}
	return s + ">"
}

// watchOnGoroutine is the portable exit watch: one goroutine per child
// blocked in cmd.Wait, reporting on the loop.
//
// It reports through a pipe in the loop's selector, whose write end the
// goroutine closes once the child is reaped: to the loop the child is then
// a descriptor that becomes readable when it exits, as with a pidfd. A
// report through CallSoonThreadsafe alone left the loop with nothing to
// wait for, so a loop on virtual time waiting for a child without pipes
// (Wait) reported ErrDeadlock and cancelled its tasks. Should the pipe
// fail (no descriptor left), CallSoonThreadsafe reports.
func (tr *subprocessTransport) watchOnGoroutine() {
	done := make(chan struct{})
	tr.watch.waitDone = done
	l, cmd := tr.loop, tr.cmd
	wfd := -1
	var p [2]int
	if sysPipe(p[:]) == nil {
		if l.AddReader(p[0], tr.exitPipeReady) == nil {
			tr.watch.exitPipe, wfd = p[0], p[1]
		} else {
			unix.Close(p[0])
			unix.Close(p[1])
		}
	}
	go func() {
		defer close(done)
		_ = cmd.Wait() // an *exec.ExitError is an exit status, read on the loop
		if wfd >= 0 {
			unix.Close(wfd) // the read end sees EOF: exitPipeReady
			return
		}
		// A closed loop cannot take it: killAndReap waits for done.
		_, _ = l.CallSoonThreadsafe(tr.processExited)
	}()
}

// exitPipeReady runs when the waiting goroutine has reaped the child.
func (tr *subprocessTransport) exitPipeReady() {
	tr.unwatch(&tr.watch.exitPipe)
	tr.processExited()
}

// unwatch takes an exit watch's descriptor (the pidfd, or the read end of
// the goroutine watch's pipe) out of the selector and closes it; -1: none.
func (tr *subprocessTransport) unwatch(fd *int) {
	if *fd >= 0 {
		tr.loop.RemoveReader(*fd)
		unix.Close(*fd)
		*fd = -1
	}
}

// SubprocessExec starts program with args as a child process and drives
// it with a protocol from factory (asyncio's loop.subprocess_exec). It
// returns once the protocol's ConnectionMade has run. A panic in a
// protocol callback, ConnectionMade included, goes to the loop's
// exception handler and the transport carries on. The child's streams
// default to Pipe (WithStdin, WithStdout, WithStderr change them);
// WithDir, WithEnv and WithCmd set the rest of the exec.Cmd. A program
// that cannot be found returns os/exec's error, which names it and
// matches os.ErrNotExist (asyncio's FileNotFoundError); an empty program,
// or a NUL byte in the program, an argument, the environment or the
// directory, is a *ValueError naming it, before the factory is called
// (Popen's "embedded null byte"). If t is cancelled
// while waiting for ConnectionMade, the child is killed and reaped and the
// cancellation returned.
func SubprocessExec(t *asyncio.T, factory func() SubprocessProtocol, program string, args []string, opts ...Option) (SubprocessTransport, SubprocessProtocol, error) {
	if program == "" {
		return nil, nil, errEmptyProgram("SubprocessExec")
	}
	tr, p, err := startSubprocess(t, factory, exec.Command(program, args...), opts, Pipe)
	if err != nil {
		return nil, nil, err
	}
	return tr, p, nil
}

// checkNUL rejects a NUL byte in the program, an argument, the
// environment or the working directory with a *ValueError naming which,
// before anything is made (Popen: ValueError "embedded null byte").
// os/exec would only fail in Start, after the protocol factory and the
// pipes, with "fork/exec ...: invalid argument" for an argument, or
// "environment variable contains NUL" for a directory (it adds PWD=dir
// to the environment), neither of which names the mistake.
func checkNUL(call string, cmd *exec.Cmd) error {
	bad := func(what string) error {
		return &asyncio.ValueError{Msg: call + ": embedded null byte in " + what}
	}
	nul := func(s string) bool { return strings.IndexByte(s, 0) >= 0 }
	if nul(cmd.Path) || (len(cmd.Args) > 0 && nul(cmd.Args[0])) {
		return bad("the program")
	}
	for i := 1; i < len(cmd.Args); i++ {
		if nul(cmd.Args[i]) {
			if i == 2 && strings.HasSuffix(call, "Shell") { // /bin/sh -c cmd
				return bad("the command")
			}
			return bad(fmt.Sprintf("argument %d", i))
		}
	}
	for _, kv := range cmd.Env {
		if nul(kv) {
			key, _, _ := strings.Cut(kv, "=")
			return bad(fmt.Sprintf("the environment (variable %q)", key))
		}
	}
	if nul(cmd.Dir) {
		return bad("the working directory")
	}
	return nil
}

// errEmptyProgram is the *ValueError for an empty program, returned
// before anything starts: os/exec's "exec: no command" matches neither
// fs.ErrNotExist nor fs.ErrPermission (asyncio's PermissionError, which
// comes of trying each PATH directory as the program), so nothing could
// tell it apart.
func errEmptyProgram(call string) *asyncio.ValueError {
	return &asyncio.ValueError{Msg: call + ": program is empty"}
}

// SubprocessShell runs cmd with /bin/sh -c as SubprocessExec does
// (asyncio's loop.subprocess_shell). An empty cmd runs too (the shell
// exits 0), as in asyncio.
func SubprocessShell(t *asyncio.T, factory func() SubprocessProtocol, cmd string, opts ...Option) (SubprocessTransport, SubprocessProtocol, error) {
	return SubprocessExec(t, factory, "/bin/sh", []string{"-c", cmd}, via("SubprocessShell", opts)...)
}

// lookPathIn finds program in the PATH of env, as Popen does for a child
// given env= (os.get_exec_path: os.defpath, "/bin:/usr/bin", when env has
// no PATH; the last PATH= entry wins, as exec.Cmd keeps the last of a
// duplicated key). An empty PATH entry is the current directory. A
// relative entry is the child's, relative to dir when it is set (Popen's
// child changes to cwd= before it searches), so the program is looked for
// there and the path returned stays relative: the child resolves it after
// it has changed directory.
func lookPathIn(program string, env []string, dir string) (string, error) {
	path := "/bin:/usr/bin"
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := d + "/" + program
		at := p
		if dir != "" && !filepath.IsAbs(d) {
			at = filepath.Join(dir, p)
		}
		if _, err := exec.LookPath(at); err == nil {
			return p, nil
		}
	}
	return "", &exec.Error{Name: program, Err: exec.ErrNotFound}
}
