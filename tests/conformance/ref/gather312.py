"""Run the shared conformance reference with CPython's own gather().

Two things differ between the shared reference's gather and CPython's:

1. GATHER-7. Since 3.12, gather() handles children that are already done
   synchronously, before it returns (so a gather of finished tasks is done
   at once); 3.11 registers a done callback for them and completes one
   iteration later. On CPython 3.11 this module replaces asyncio.gather with
   the 3.12+ algorithm (the code below is 3.13's tasks.gather); on 3.12+
   the native gather already does this.

2. The outer cancellation's error. The shared reference runs its own copy,
   asyncio_ref.gather_312, whose last step, for a gather whose cancellation
   was requested, calls _make_cancelled_error() on the child whose
   completion ran the callback (the callback's argument). CPython (3.11 to
   3.14) calls it on the LAST CHILD IN THE LIST: in tasks.gather the loop
   `for fut in children:` rebinds `fut` just before
   `exc = fut._make_cancelled_error()`. The two differ when the child that
   finishes last is not the last one listed and the messages differ (or one
   was consumed by an earlier retrieval, FUT-8): corpus cases 066-069 were
   recorded with the copy. This module makes the reference call the real
   gather (asyncio.gather, patched as in 1 on 3.11), so its traces are
   CPython's; tests/conformance/overrides holds the traces it gives for
   066-069 (see the README there).

Usage (what ref/python3 and ref/python-modern do):
    python3 gather312.py SCRIPT [ARGS...]
runs SCRIPT as __main__ with the patched gather; SCRIPT is the shared
ref/asyncio_ref.py or gen.py (which imports asyncio_ref).
"""

import asyncio
import asyncio.tasks as tasks
import os
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
                # `fut` is the last child of the list here (the loop above
                # rebinds it), as in CPython.
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


if sys.version_info < (3, 12):
    asyncio.gather = gather
    tasks.gather = gather


def patch_reference(ref_dir):
    """Import the shared asyncio_ref and make its gather CPython's."""
    sys.path.insert(0, ref_dir)
    import asyncio_ref
    if not hasattr(asyncio_ref, "gather_312"):
        sys.exit("gather312.py: the shared reference has no gather_312 any more: "
                 "check whether this patch is still needed")
    asyncio_ref.gather_312 = asyncio.gather
    return asyncio_ref


if __name__ == "__main__":
    script = os.path.abspath(sys.argv[1])
    sys.argv = sys.argv[1:]
    if os.path.basename(script) == "asyncio_ref.py":
        ref = patch_reference(os.path.dirname(script))
        sys.exit(ref.main(sys.argv[1:]))
    if os.path.basename(script) == "gen.py":
        patch_reference(os.path.join(os.path.dirname(script), "ref"))
    runpy.run_path(script, run_name="__main__")
