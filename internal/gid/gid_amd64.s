#include "textflag.h"

// func getg() uintptr
// The runtime keeps the current g in thread-local storage on amd64; these
// two instructions are what the runtime's get_tls/g macros expand to.
TEXT ·getg(SB), NOSPLIT, $0-8
	MOVQ TLS, CX
	MOVQ 0(CX)(TLS*1), AX
	MOVQ AX, ret+0(FP)
	RET
