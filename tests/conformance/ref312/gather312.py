"""Give CPython 3.11's asyncio the gather() of CPython 3.12+.

The only CPython on our machines is 3.11, but go-asyncio implements
3.12+ semantics. The one visible difference the shared conformance harness
does not screen out is GATHER-7: since 3.12, gather() handles children that
are already done synchronously, before it returns (so a gather of finished
tasks is done at once); 3.11 registers a done callback for them and
completes one iteration later. The reference already runs 3.12's wait_for
for the same reason. This module replaces asyncio.gather with the 3.12
algorithm; everything else is 3.11's own code.

Usage (what tests/conformance/ref312/python3 does):
    python3 gather312.py SCRIPT [ARGS...]
runs SCRIPT as __main__ with the patched gather.
"""

import asyncio
import asyncio.tasks as tasks
import runpy
import sys
from asyncio import exceptions, futures


def gather(*coros_or_futures, return_exceptions=False):
    if not coros_or_futures:
        loop = asyncio.events._get_event_loop()
        outer = loop.create_future()
        outer.set_result([])
        return outer

    def _done_callback(fut):
        nonlocal nfinished
        nfinished += 1
        if outer is None or outer.done():
            if not fut.cancelled():
                fut.exception()  # mark it retrieved
            return
        if not return_exceptions:
            if fut.cancelled():
                outer.set_exception(fut._make_cancelled_error())
                return
            exc = fut.exception()
            if exc is not None:
                outer.set_exception(exc)
                return
        if nfinished == nfuts:
            results = []
            for fut in children:
                if fut.cancelled():
                    res = exceptions.CancelledError(
                        '' if fut._cancel_message is None else fut._cancel_message)
                else:
                    res = fut.exception()
                    if res is None:
                        res = fut.result()
                results.append(res)
            if outer._cancel_requested:
                outer.set_exception(fut._make_cancelled_error())
            else:
                outer.set_result(results)

    arg_to_fut = {}
    children = []
    nfuts = 0
    nfinished = 0
    done_futs = []  # 3.12: children already done, handled below
    loop = None
    outer = None
    for arg in coros_or_futures:
        if arg not in arg_to_fut:
            fut = tasks._ensure_future(arg, loop=loop)
            if loop is None:
                loop = futures._get_loop(fut)
            if fut is not arg:
                fut._log_destroy_pending = False
            nfuts += 1
            arg_to_fut[arg] = fut
            if fut.done():
                done_futs.append(fut)
            else:
                fut.add_done_callback(_done_callback)
        else:
            fut = arg_to_fut[arg]
        children.append(fut)

    outer = tasks._GatheringFuture(children, loop=loop)
    # 3.12: run the callbacks of children done already, now, in order.
    for fut in done_futs:
        _done_callback(fut)
    return outer


asyncio.gather = gather
tasks.gather = gather

if __name__ == "__main__":
    script = sys.argv[1]
    sys.argv = sys.argv[1:]
    runpy.run_path(script, run_name="__main__")
