"""A warm grader for `check` (`infergrade serve`), as mypy's dmypy and Gradle's daemon keep one: a per-user process
that holds torch, the engine, the public checks and the sandbox's zygote, and runs each `check` handed to it in a
fork of itself, with the client's terminal, working folder, umask, environment and arguments, so that its output,
results files, progress file and exit code are the cold command's own.

It starts only when asked (`infergrade serve`), never on a first `check`: started beside a cold check it would
import torch twice more on the same cores and slow that check down, and a resident process of half a gigabyte
should not appear unasked on a shared lab machine, in CI or in a container. `watch` keeps its own warm process.

Walls (folder.py, server.py): the socket lives in a folder of this user's alone, checked before each use and
reached through its opened descriptor; a connection is served only to a peer of the same uid (SO_PEERCRED), and
the client serves itself only from a grader of its uid; a request carries the grader's version, interpreter and a
stamp of its installed files, and one that differs is refused (a grader whose own files changed stops); only
`check` runs (public checks, seed 0), one run at a time, the others queued behind it; Ctrl-C in the client is
forwarded to its run; SIGTERM stops the run and the grader; it exits after 15 minutes without a request.
"""
