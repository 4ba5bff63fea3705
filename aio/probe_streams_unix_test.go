//go:build unix

package aio

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-asyncio/asyncio"
	"golang.org/x/sys/unix"
)

// TestProbeStreams_UnixConnectFailures: OpenUnixConnection's errors are
// asyncio's OSErrors, by errno. CPython 3.13 (PYENV_VERSION=3.13.0):
//
//	await asyncio.open_unix_connection(p)
//	# missing: FileNotFoundError 2; a regular file, a socket file nobody
//	# listens on, a directory: ConnectionRefusedError 111
//	# a 200-byte name: OSError "AF_UNIX path too long"; "": OSError 22 (EINVAL)
func TestProbeStreams_UnixConnectFailures(t *testing.T) {
	clean(t)
	d := t.TempDir()
	var log []string
	cases := []string{"missing", "regular file", "dead socket", "directory"}
	paths := map[string]string{}
	for _, name := range cases {
		p := filepath.Join(d, strings.ReplaceAll(name, " ", "_"))
		paths[name] = p
		switch name {
		case "regular file":
			if err := os.WriteFile(p, nil, 0o600); err != nil {
				t.Fatal(err)
			}
		case "directory":
			if err := os.Mkdir(p, 0o700); err != nil {
				t.Fatal(err)
			}
		case "dead socket":
			fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
			if err != nil {
				t.Fatal(err)
			}
			err = unix.Bind(fd, &unix.SockaddrUnix{Name: p})
			unix.Close(fd)
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	runVirtual(t, func(at *asyncio.T) error {
		for _, name := range cases {
			_, w, err := OpenUnixConnection(at, paths[name])
			if err == nil {
				w.Close()
			}
			log = append(log, name+" "+describe(err))
		}
		_, _, err := OpenUnixConnection(at, filepath.Join(d, strings.Repeat("x", 200)))
		log = append(log, fmt.Sprintf("too long %v", strings.Contains(fmt.Sprint(err), "AF_UNIX path too long")))
		_, _, err = OpenUnixConnection(at, "")
		log = append(log, "empty "+describe(err))
		return nil
	})
	expectLog(t, []string{
		"missing syscall=connect ENOENT",
		"regular file syscall=connect ECONNREFUSED",
		"dead socket syscall=connect ECONNREFUSED",
		"directory syscall=connect ECONNREFUSED",
		"too long true",
		"empty syscall=connect EINVAL",
	}, log)
}
