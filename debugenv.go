package asyncio

import "os"

// DebugEnv is the environment variable that turns debug mode on for every
// loop created while it is set to a non-empty string (any value, "0"
// included), as PYTHONASYNCIODEBUG does for asyncio: GOASYNCIODEBUG=1 go
// run . It is read by NewLoop (and so by Run and NewRunner); SetDebug(false)
// turns debug mode off again for one loop.
const DebugEnv = "GOASYNCIODEBUG"

func debugFromEnv() bool { return os.Getenv(DebugEnv) != "" }
