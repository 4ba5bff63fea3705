# asyncio-runner.rst: asyncio.run(main()) and the Runner example (two
# runs on one loop, runner.get_loop()); then asyncio-dev.rst "Detect
# never-retrieved exceptions" (bug() raising in a task nobody awaits),
# in debug mode, with an exception handler that prints the report's
# message, exception and task name in place of the default handler's
# log with its traceback.
import asyncio

from probe import d, log, restart


async def main():
    restart()
    await asyncio.sleep(0.1)
    log('hello')

asyncio.run(main())

with asyncio.Runner() as runner:
    loop = runner.get_loop()
    runner.run(main())
    runner.run(main())
    print("same loop", runner.get_loop() is loop, "closed", loop.is_closed())
print("closed after with", loop.is_closed())


def handler(loop, context):
    task = context.get('future')
    print("handler:", context['message'], d(context.get('exception')),
          task.get_name() if task else None)


async def bug():
    raise Exception("not consumed")


async def main():
    asyncio.get_running_loop().set_exception_handler(handler)
    asyncio.create_task(bug(), name="bug")

asyncio.run(main(), debug=True)
print("run returned")
