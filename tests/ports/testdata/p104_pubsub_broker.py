# A pub/sub broker over TCP: a client sends "SUB topic name delay" to
# subscribe, or "PUB topic message" to publish (the broker answers with
# the number of subscribers it queued the message for). Each subscriber
# has a bounded queue (maxsize 2) and a sender task that writes one
# message, then waits its delay (its link is slow). Publishing uses
# put_nowait: a subscriber whose queue is full is dropped on the spot --
# its sender task is cancelled, writes DROPPED and closes the connection,
# and the messages still queued are lost; the client reads what it got,
# then DROPPED, then EOF. A subscriber that disconnects (its task is
# cancelled and closes its writer on the way out) is removed when the
# broker reads its EOF. (Without that close CPython's collector would
# close the connection when the cancelled task's writer goes; Go's
# collector does it some time later -- README, STREAM-11.)
import asyncio

from probe import d, log, restart

subs = []


class Subscriber:
    def __init__(self, topic, name, delay, writer):
        self.topic, self.name, self.delay, self.writer = topic, name, delay, writer
        self.queue = asyncio.Queue(maxsize=2)
        self.sender = asyncio.create_task(self.send_loop())

    async def send_loop(self):
        try:
            while True:
                msg = await self.queue.get()
                self.writer.write(msg.encode() + b"\n")
                await self.writer.drain()
                await asyncio.sleep(self.delay)
        except asyncio.CancelledError:
            log("broker: dropping", self.name, "queued", self.queue.qsize())
            self.writer.write(b"DROPPED\n")
            self.writer.close()
            raise


def publish(topic, message):
    n = 0
    for sub in [s for s in subs if s.topic == topic]:
        try:
            sub.queue.put_nowait(message)
            n += 1
        except asyncio.QueueFull:
            subs.remove(sub)
            sub.sender.cancel()
    return n


async def handle(reader, writer):
    me = None
    async for line in reader:
        parts = line.decode().split(maxsplit=3)
        if parts[0] == "SUB":
            me = Subscriber(parts[1], parts[2], float(parts[3]), writer)
            subs.append(me)
            log("broker:", me.name, "subscribed to", me.topic)
        elif parts[0] == "PUB":
            writer.write(f"PUB {publish(parts[1], parts[2].strip())}\n".encode())
    if me is not None:
        if me in subs:
            subs.remove(me)
            me.sender.cancel()
            log("broker:", me.name, "disconnected")
        try:
            await me.sender
        except asyncio.CancelledError:
            pass
    writer.close()
    await writer.wait_closed()


async def subscriber(port, name, delay, got):
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"SUB news {name} {delay}\n".encode())
    try:
        async for line in reader:
            got.append(line.decode().strip())
            log(name, "got", got[-1])
        log(name, "EOF")
    finally:
        writer.close()
        await writer.wait_closed()


async def main():
    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    restart()
    fast_got, slow_got = [], []
    fast = asyncio.create_task(subscriber(port, "fast", 0, fast_got))
    slow = asyncio.create_task(subscriber(port, "slow", 0.35, slow_got))
    await asyncio.sleep(0.06)
    pr, pw = await asyncio.open_connection("127.0.0.1", port)
    for i in range(1, 6):
        pw.write(f"PUB news m{i}\n".encode())
        log("publisher: m%d reached" % i, (await pr.readline()).decode().strip())
        await asyncio.sleep(0.1)
    await slow
    log("slow got", slow_got)
    fast.cancel()
    try:
        await fast
    except asyncio.CancelledError as e:
        log("fast subscriber stopped", d(e))
    await asyncio.sleep(0.1)
    pw.write(b"PUB news m6\n")
    log("publisher: m6 reached", (await pr.readline()).decode().strip(), "subs left", len(subs))
    pw.close()
    await pw.wait_closed()
    server.close()
    await server.wait_closed()
    log("broker closed, fast got", fast_got)


asyncio.run(main())
