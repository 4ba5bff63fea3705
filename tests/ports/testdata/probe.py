"""What the programs here print with, as the Go ports do (ports_test.go's
probe): log() prefixes the loop's time since restart(), rounded to 0.1 s;
rel() prints a deadline the same way; d() names an exception."""
import asyncio

_t0 = 0.0


def restart():
    """T0 = loop.time(): log() counts from now."""
    global _t0
    _t0 = asyncio.get_running_loop().time()


def log(*a):
    print(f"{asyncio.get_running_loop().time() - _t0:.1f}", *a)


def rel(when):
    return "None" if when is None else f"{when - _t0:.1f}"


def d(e):
    if isinstance(e, BaseExceptionGroup):
        return f"EG({e.message})[" + ", ".join(d(x) for x in e.exceptions) + "]"
    if isinstance(e, asyncio.CancelledError):
        return f"Cancelled({e.args[0] if e.args else ''})"
    if isinstance(e, TimeoutError):
        return "Timeout"
    if isinstance(e, BaseException):
        return f"{type(e).__name__}({e.args[0] if e.args else ''})"
    return repr(e)
