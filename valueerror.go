package asyncio

import "errors"

// The same ValueError is defined by the sync and structured branches; when
// they are merged keep exactly one copy (this file can simply be dropped).

// ErrValue matches every *ValueError.
var ErrValue = errors.New("asyncio: value error")

// ValueError is the analogue of the ValueError asyncio raises for a bad
// argument (a stream limit <= 0, bad write-buffer limits). Msg is
// asyncio's message.
type ValueError struct {
	Msg string
}

func (e *ValueError) Error() string { return "asyncio: " + e.Msg }

// Is reports that every ValueError matches ErrValue.
func (e *ValueError) Is(target error) bool { return target == ErrValue }
