# asyncio-eventloop.rst "Examples": Hello World with call_soon() and
# "Display the current date with call_later()" (every second for 5
# seconds, scaled by 0.1; datetime.now() replaced by the loop-time
# offset), both on a new_event_loop() with run_forever(), as the docs
# write them.
import asyncio

from probe import log, restart


def hello_world(loop):
    """A callback to print 'Hello World' and stop the event loop"""
    restart()
    log('Hello World')
    loop.stop()

loop = asyncio.new_event_loop()

# Schedule a call to hello_world()
loop.call_soon(hello_world, loop)

# Blocking call interrupted by loop.stop()
try:
    loop.run_forever()
finally:
    loop.close()
print("closed", loop.is_closed())


def display_date(end_time, loop):
    log("now")
    if (loop.time() + 0.1) < end_time:
        loop.call_later(0.1, display_date, end_time, loop)
    else:
        loop.stop()


def start(end_time, loop):
    restart()
    display_date(end_time, loop)

loop = asyncio.new_event_loop()

# Schedule the first call to display_date()
end_time = loop.time() + 0.5
loop.call_soon(start, end_time, loop)

# Blocking call interrupted by loop.stop()
try:
    loop.run_forever()
finally:
    loop.close()
print("closed", loop.is_closed())
