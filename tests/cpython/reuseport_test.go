//go:build unix && !solaris

package cpython

import "golang.org/x/sys/unix"

// soReusePort is SO_REUSEPORT where the system has it (asyncio's tests
// that use it are skipped where socket has no SO_REUSEPORT).
const soReusePort = unix.SO_REUSEPORT
