# A connection pool guarded by a BoundedSemaphore(2) and a Lock for its
# bookkeeping. Misuse is caught: releasing an unlocked Lock raises
# RuntimeError, releasing the BoundedSemaphore once too often raises
# ValueError (a plain Semaphore lets its count grow instead). A task
# cancelled while waiting for a pool slot takes none; a holder cancelled
# inside `async with` releases on the way out; an exception in the body
# releases too; a waiter cancelled while queued on the Lock leaves it to
# the next one.
import asyncio

from probe import d, log, restart


async def use_conn(name, pool, hold, log_lock=None):
    try:
        async with pool:
            log(name, "got a connection, pool locked", pool.locked())
            await asyncio.sleep(hold)
            if name == "bad":
                raise ConnectionError("reset by peer")
        log(name, "returned its connection")
    except asyncio.CancelledError as e:
        log(name, "cancelled", d(e), "pool locked", pool.locked())
        raise


async def main():
    restart()
    lock = asyncio.Lock()
    try:
        lock.release()
    except RuntimeError as e:
        log("release unlocked:", d(e))

    pool = asyncio.BoundedSemaphore(2)
    users = [
        asyncio.create_task(use_conn("u1", pool, 0.3)),
        asyncio.create_task(use_conn("bad", pool, 0.1)),
        asyncio.create_task(use_conn("u3", pool, 0.1)),
        asyncio.create_task(use_conn("u4", pool, 0.1)),
    ]
    await asyncio.sleep(0.02)
    log("pool locked", pool.locked())
    users[2].cancel("gave up")
    await asyncio.sleep(0.2)
    users[0].cancel("shutdown")
    results = await asyncio.gather(*users, return_exceptions=True)
    log("results", *[d(r) for r in results])
    log("pool locked", pool.locked())
    await pool.acquire()
    pool.release()
    try:
        pool.release()
    except ValueError as e:
        log("bounded over-release:", d(e))
    sem = asyncio.Semaphore(1)
    sem.release()
    await sem.acquire()
    await sem.acquire()
    log("plain semaphore took two, locked", sem.locked())

    restart()

    async def bookkeeper(name, hold):
        try:
            async with lock:
                log(name, "holds the lock")
                await asyncio.sleep(hold)
        except asyncio.CancelledError:
            log(name, "cancelled, lock locked", lock.locked())
            raise

    k1 = asyncio.create_task(bookkeeper("k1", 0.1))
    k2 = asyncio.create_task(bookkeeper("k2", 0.1))
    k3 = asyncio.create_task(bookkeeper("k3", 0.1))
    await asyncio.sleep(0.02)
    k2.cancel()
    await asyncio.gather(k1, k3)
    log("k2 cancelled", k2.cancelled(), "lock locked", lock.locked())


asyncio.run(main())
