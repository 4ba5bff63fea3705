//go:build solaris

package cpython

// soReusePort is -1 on Solaris and illumos, which have no SO_REUSEPORT:
// there aio.WithReusePort is a *ValueError, as asyncio's reuse_port=True.
const soReusePort = -1
