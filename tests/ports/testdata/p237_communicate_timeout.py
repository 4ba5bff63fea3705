# communicate() under wait_for, killing the child on a timeout, from
# "When communicate() Isn't Enough: Streaming and Timeout in asyncio
# Subprocesses",
# https://runebook.dev/en/docs/python/library/asyncio-subprocess/asyncio.subprocess.Process.communicate
# (run_with_timeout). Adapted: log() instead of print, the pid not
# printed, commands that finish at once or hang ("echo 'Hello'",
# "echo partial; exec sleep 30" with a 0.2 s timeout (exec: a shell
# waiting for its sleep would keep the pipes open after the kill, and 3.13's
# wait() waits for them), a failing command with output on stderr), and
# the return code after the kill. The commands that finish at once get
# timeout=None (wait_for then just awaits): the Go port runs on virtual
# time, where a pending timeout next to a real child fires at once
# (README, "Virtual time for tests"; as p102). The clock restarts before
# each command, so that the real time the children take stays far
# from a rounding edge.
import asyncio

from probe import d, log, restart


async def run_with_timeout(command: str, timeout: float = 5.0):
    log(f"Executing: {command} with a {timeout} second timeout...")
    proc = await asyncio.create_subprocess_shell(
        command,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE
    )
    try:
        stdout_data, stderr_data = await asyncio.wait_for(
            proc.communicate(),
            timeout=timeout
        )
        log(f"Process finished with return code: {proc.returncode}")
        return stdout_data.decode().strip(), stderr_data.decode().strip()
    except asyncio.TimeoutError:
        log("Timeout! Killing process...")
        proc.kill()
        # It's good practice to wait for it to actually terminate after killing
        rc = await proc.wait()
        log("killed, return code", rc)
        raise


async def main():
    restart()
    stdout, stderr = await run_with_timeout("echo 'Hello'", timeout=None)
    log(f"STDOUT: {stdout}")
    restart()
    try:
        await run_with_timeout("echo partial; exec sleep 30", timeout=0.2)
    except asyncio.TimeoutError as e:
        log("Caught the timeout:", d(e))
    restart()
    stdout, stderr = await run_with_timeout("echo out; echo oops >&2; exit 3", timeout=None)
    log(f"STDOUT: {stdout} STDERR: {stderr}")


asyncio.run(main())
