# asyncio-task.rst "Running Tasks Concurrently": gather over three
# factorial coroutines (sleep(1) scaled to 0.1), then the same with
# return_exceptions and one coroutine failing, as the text around it
# describes.
import asyncio

from probe import d, log, restart


async def factorial(name, number):
    f = 1
    for i in range(2, number + 1):
        log(f"Task {name}: Compute factorial({number}), currently i={i}...")
        await asyncio.sleep(0.1)
        f *= i
    log(f"Task {name}: factorial({number}) = {f}")
    return f


async def fails(name, after):
    await asyncio.sleep(after)
    log(f"Task {name}: raising")
    raise ValueError(name)


async def main():
    restart()
    # Schedule three calls *concurrently*:
    L = await asyncio.gather(
        factorial("A", 2),
        factorial("B", 3),
        factorial("C", 4),
    )
    log(L)

    restart()
    L = await asyncio.gather(
        factorial("A", 2),
        fails("F", 0.16),
        factorial("C", 3),
        return_exceptions=True,
    )
    log([d(x) if isinstance(x, BaseException) else x for x in L])

    restart()
    try:
        await asyncio.gather(factorial("A", 3), fails("F", 0.16))
    except ValueError as e:
        log("gather raised", d(e))
    await asyncio.sleep(0.2)
    log("A was not cancelled: it finished on its own")

asyncio.run(main())
