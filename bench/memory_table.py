#!/usr/bin/python3
"""The measured-against-predicted peak memory of every `autopar run` in a CTest log.

    bench/memory_table.py build/Testing/Temporary/LastTest.log

Every run with --check or --check-against-torch prints `run: MODEL on mesh M (N ranks),
plan LABEL, ...` and `peak memory per rank X MiB ..., plan predicts Y MiB (+Z%); ranks: ...`;
this prints one markdown row per test (the test's name, the run line's model, mesh and plan,
both peaks and the largest per-rank error) for bench/RESULTS.md.
"""
import re
import sys

TEST = re.compile(r'^\d+/\d+ Testing: (\S+)')
RUN = re.compile(r'^run: (\S+) on mesh (\S+) \((\d+) ranks\), plan (\S+),')
PEAK = re.compile(r'^peak memory per rank ([0-9.]+) MiB .*plan predicts ([0-9.]+) MiB \(([-+0-9.]+)%\); ranks: (.*)$')
CHECK = re.compile(r'^memory check: largest \|measured - predicted\| ([0-9.]+)% .*: (\w+)$')


def main(path):
    rows, test, run = [], None, None
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        if m := TEST.match(line):
            test, run = m.group(1), None
        elif m := RUN.match(line):
            run = m.groups()
        elif (m := PEAK.match(line)) and test and run:
            rows.append([test, *run, m.group(2), m.group(1), m.group(4), None, None])
        elif (m := CHECK.match(line)) and rows and rows[-1][0] == test:
            rows[-1][-2:] = [m.group(1), m.group(2)]
    print('| test | model | mesh | ranks | plan | predicted MiB | measured MiB (largest rank) '
          '| every rank MiB | largest error | check |')
    print('|---|---|---|---|---|---|---|---|---|---|')
    for r in rows:
        err = f'{r[8]}%' if r[8] is not None else '-'
        print(f'| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]} | {r[6]} | {r[7]} | {err} | {r[9] or "-"} |')
    return 0 if rows else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
