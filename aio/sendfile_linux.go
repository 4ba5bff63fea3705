//go:build linux

package aio

import "golang.org/x/sys/unix"

// haveSendfile: Linux's sendfile(2) sends a file to a socket.
const haveSendfile = true

// sendfileSyscall sends up to n bytes of the file infd from *off to the
// socket outfd, advancing *off; the file's own position is not used. A
// variable so that tests can make it fail.
var sendfileSyscall = unix.Sendfile
