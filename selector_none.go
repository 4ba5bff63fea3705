//go:build !linux && !darwin && !dragonfly && !freebsd && !netbsd && !openbsd && !aix && !solaris

package asyncio

import (
	"errors"
	"fmt"
	"runtime"
)

// selectorName names the compiled-in backend, for test logs.
const selectorName = "none"

// newSelector fails on systems without file descriptor readiness
// (windows, plan9, js, wasip1). The portable core still works there, and
// an idle loop without file descriptors never asks for a selector, so the
// error reaches only a caller of AddReader/AddWriter, at once and by name,
// instead of the whole module failing to build. It wraps
// errors.ErrUnsupported so that callers can test for it.
func newSelector() (selector, error) {
	return nil, fmt.Errorf("asyncio: file descriptor readiness (AddReader/AddWriter) is not supported on %s: %w",
		runtime.GOOS, errors.ErrUnsupported)
}
