# A pub/sub hub with one bounded asyncio.Queue per subscriber (the shape
# of broadcaster / aiopubsub code): publish() never waits, it put_nowait()s
# to every subscriber, and a subscriber whose queue is full is dropped:
# removed from the hub and its queue shut down, so it drains what it has
# and its loop ends on QueueShutDown. A subscriber joining late sees only
# later messages; close() shuts every queue down.
import asyncio

from probe import d, log, restart


class Hub:
    def __init__(self, maxsize):
        self.maxsize = maxsize
        self.subs = {}
        self.dropped = []

    def subscribe(self, name):
        q = asyncio.Queue(self.maxsize)
        self.subs[name] = q
        return q

    def publish(self, msg):
        for name, q in list(self.subs.items()):
            try:
                q.put_nowait(msg)
            except asyncio.QueueFull:
                log("hub: drops", name, "at", msg, "backlog", q.qsize())
                del self.subs[name]
                self.dropped.append(name)
                q.shutdown()

    def close(self):
        for q in self.subs.values():
            q.shutdown()
        self.subs.clear()


async def subscriber(hub, name, per_msg, delay=0):
    await asyncio.sleep(delay)
    q = hub.subscribe(name)
    got = []
    while True:
        try:
            msg = await q.get()
        except asyncio.QueueShutDown:
            break
        got.append(msg)
        await asyncio.sleep(per_msg)
    log(name, "ends with", got)
    return len(got)


async def main():
    restart()
    hub = Hub(maxsize=3)
    subs = [
        asyncio.create_task(subscriber(hub, "fast", 0.013)),
        asyncio.create_task(subscriber(hub, "medium", 0.155)),
        asyncio.create_task(subscriber(hub, "slow", 0.45)),
        asyncio.create_task(subscriber(hub, "late", 0.013, delay=0.41)),
    ]
    loop = asyncio.get_running_loop()
    start = loop.time() + 0.06
    for i in range(12):
        await asyncio.sleep(start + 0.1 * i - loop.time())
        hub.publish(f"m{i}")
    await asyncio.sleep(0.1)
    log("publisher done, subscribers", list(hub.subs), "dropped", hub.dropped)
    hub.close()
    counts = await asyncio.gather(*subs)
    log("counts", counts)


asyncio.run(main())
