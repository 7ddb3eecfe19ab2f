#!/usr/bin/env python3
"""One row of the local launcher: run its script, leave what a later gov reads.

Usage: row-wrapper.py FOLDER LOCK_FD ARGV...

The local launcher starts this in a session of its own, its cwd, environment,
stdout and stderr already the row's (governance/sweeps/local_launcher.py), with
LOCK_FD an open descriptor on FOLDER/gov-launch.lock that the launcher locked
before starting it: the lock stays held while this process lives, so a gov
that did not start it (its own was killed) can tell it still runs, whatever
pids were reused since (governance/sweeps/launch_record.py).

Before the script starts, FOLDER/gov-launch.json records this process (pid,
kernel start time, start date); when the script ends, FOLDER/gov-exit.json
its exit code (negative: killed by that signal). Both are written atomically
(temporary file, fsync, rename). The script runs in this process's group, so
killing the group ends both. Standard library only; run with `python -I`.
"""

import datetime
import json
import os
import subprocess
import sys

LAUNCH_FILE = "gov-launch.json"
EXIT_FILE = "gov-exit.json"


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")  # noqa: UP017


def start_time(pid):
    with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
        return handle.read().rsplit(")", 1)[-1].split()[19]


def write(path, data):
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as handle:
        json.dump(data, handle)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def main(argv):
    if len(argv) < 4:
        sys.stderr.write("usage: row-wrapper.py FOLDER LOCK_FD ARGV...\n")
        return 2
    folder, lock_fd, command = argv[1], int(argv[2]), argv[3:]
    os.set_inheritable(lock_fd, False)  # the script and its children never hold the lock
    pid = os.getpid()
    write(
        os.path.join(folder, LAUNCH_FILE),
        {"pid": pid, "start_time": start_time(pid), "started_at": now()},
    )
    try:
        child = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    except OSError as exc:
        error = f"cannot start {command[0]}: {exc}"
        sys.stderr.write(error + "\n")
        write(
            os.path.join(folder, EXIT_FILE), {"exit_code": None, "error": error, "ended_at": now()}
        )
        return 127
    code = child.wait()
    write(os.path.join(folder, EXIT_FILE), {"exit_code": code, "error": "", "ended_at": now()})
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
