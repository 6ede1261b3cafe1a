'''How long any wait in the peer may last before it counts as hung.

A wait here ends as soon as its condition holds (the value arrived, the link came up), so
this bound costs nothing when things work; it only has to stay above the slowest run CI
makes: ThreadSanitizer beside another CI lane, on 2 cores, with other load on the machine.
It is the Swift tests' own bound (`hangGuardWait` in Tests/HCITestSupport/Eventually.swift):
a wait that is a speed check in disguise fails a loaded machine for nothing.

Only checks that something does NOT happen use a short window of their own, and say so.
'''

HANG_GUARD = 120.0
