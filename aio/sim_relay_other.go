//go:build unix && !linux

package aio

import "golang.org/x/sys/unix"

// Elsewhere than on Linux the relay watches the network's ends through
// the loop and reads them whole (nothing is kept: these systems' socket
// pairs report no reset anyway, see sim_relay_linux.go).

func (n *SimNetwork) watchRelay(p *simPipe) error { return n.loop.AddReader(p.in, p.readReady) }

func (n *SimNetwork) unwatchRelay(p *simPipe) { n.loop.RemoveReader(p.in) }

// pauseRelay cannot watch for a reset alone here (nor do these systems'
// socket pairs report one): the caller unwatches.
func (n *SimNetwork) pauseRelay(*simPipe) bool { return false }

func (n *SimNetwork) closeRelayPoller(bool) {}

// take reads up to max bytes of what the sender wrote (none at its
// EOF); the loop tells again while there is more.
func (p *simPipe) take(max int) (data []byte, more bool, err error) {
	buf := p.c.n.relayBuf()[:max]
	k, err := unix.Read(p.in, buf)
	if err != nil {
		return nil, false, err
	}
	return append([]byte(nil), buf[:k]...), false, nil
}

func (p *simPipe) dropKept() {}
