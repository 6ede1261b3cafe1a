'''The failures of `make test-stress`'s runs, by test name, each with its output.

Reads artifacts/stress/run-N-LANE.log and .status. A Swift Testing failure is a line
`✘ Test NAME recorded an issue at FILE:LINE: …` (its message may go on over the next lines)
or `✘ Test NAME failed …`; an XCTest one is `… error: -[SUITE NAME] : …`. A lane that failed
with no such line (a crash, a ThreadSanitizer report with halt_on_error) is reported with the
last lines of its log. Prints `N passed, N failed` (lanes) last; exits 1 on any failure.
'''
import collections
import os
import re
import sys

MARKS = ('✔', '✘', '◇', '↳', '􀟈', '􀢄', '􁁛', 'Test Suite', 'Test Case')
ISSUE = re.compile(r'✘ Test (?P<name>.+?) recorded an issue at (?P<rest>.*)')
FAILED = re.compile(r'✘ Test (?P<name>.+?) failed after')
XCTEST = re.compile(r'error: -\[(?P<name>[^\]]+)\] : (?P<rest>.*)')


def failures(lines):
    '''(test name, [output lines]) for each failing test of one log, in order.'''
    found = collections.OrderedDict()
    index = 0
    while index < len(lines):
        line = lines[index]
        issue = ISSUE.search(line) or XCTEST.search(line)
        if issue:
            block = [line]
            index += 1
            while index < len(lines) and not lines[index].lstrip().startswith(MARKS):
                block.append(lines[index])
                index += 1
            found.setdefault(issue['name'], []).extend(block)
            continue
        failed = FAILED.search(line)
        if failed:
            found.setdefault(failed['name'], []).append(line)
        index += 1
    return found


def main(folder):
    lanes = sorted(name[:-len('.status')] for name in os.listdir(folder) if name.endswith('.status'))
    passed = failed = 0
    by_test = collections.defaultdict(list)
    for lane in lanes:
        with open(os.path.join(folder, lane + '.status')) as handle:
            status = handle.read().strip()
        with open(os.path.join(folder, lane + '.log'), errors='replace') as handle:
            lines = handle.read().splitlines()
        if status == '0':
            passed += 1
            continue
        failed += 1
        found = failures(lines)
        if not found:
            tsan = [line for line in lines if 'ThreadSanitizer' in line or 'Fatal error' in line]
            found = {'(the lane failed with no test failure: crash or sanitizer report)': tsan[:20] + lines[-30:]}
        for name, output in found.items():
            by_test[name].append((lane, output))
    for name, seen in by_test.items():
        print(f'\n== FAILED {name}: in {len(seen)} lane run(s): {", ".join(lane for lane, _ in seen)}')
        for lane, output in seen:
            print(f'-- {lane}')
            for line in output[:60]:
                print('   ' + line)
    print(f'\nstress lanes: {passed} passed, {failed} failed')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else 'artifacts/stress'))
