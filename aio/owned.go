//go:build unix

package aio

import (
	"sync"

	"github.com/go-asyncio/asyncio"
)

// What the package owns on a loop and must release when the loop closes:
// child processes (killed and reaped) and pipe transports (their file
// descriptors closed), so that nothing outlives the loop's Close. One
// table per loop, hooked to Loop.OnClose the first time something is
// registered. Entries are added and removed on the loop; the sync.Map is
// only the way from a loop to its table.

// ownedTables maps a *asyncio.Loop to its *owned.
var ownedTables sync.Map

type owned struct {
	release map[any]func()
}

// releaseAtClose registers release to run, once, when l closes, under
// key; keepUntilClose replaces an earlier registration under the same key.
func releaseAtClose(l *asyncio.Loop, key any, release func()) {
	v, ok := ownedTables.Load(l)
	if !ok {
		o := &owned{release: make(map[any]func())}
		ownedTables.Store(l, o)
		l.OnClose(func() {
			ownedTables.Delete(l)
			for k, fn := range o.release {
				delete(o.release, k)
				fn()
			}
		})
		v = o
	}
	v.(*owned).release[key] = release
}

// forgetAtClose removes key's registration: what it owned was released
// by the ordinary path.
func forgetAtClose(l *asyncio.Loop, key any) {
	if v, ok := ownedTables.Load(l); ok {
		delete(v.(*owned).release, key)
	}
}
