#!/usr/bin/python3
"""The measured-against-predicted peak memory of every `autopar pipeline` run in a CTest log.

    bench/pipeline_memory_table.py build/Testing/Temporary/LastTest.log

Every run prints `pipeline: MODEL on N ranks, S stages, schedule X, M microbatches of R, ...,
OPTIMIZER lr ...`, one `peak memory rank K: ... (held tensors, MEASURED B), model predicts ...
(PREDICTED B, +Z%); ...` line per rank and, with --check, `memory check: ...`; this prints one
markdown row per test (the test's name, the run line's model, schedule and sizes, every rank's
measured and predicted peak in bytes, the largest error and the check) for bench/RESULTS.md.
"""
import re
import sys

TEST = re.compile(r'^\d+/\d+ Testing: (\S+)')
RUN = re.compile(r'^pipeline: (\S+) on (\d+) ranks, (\d+) stages, schedule (\S+), (\d+) microbatches '
                 r'of \d+, \d+ steps, (\w+) lr')
PEAK = re.compile(r'^peak memory rank (\d+): [0-9.]+ MiB \(held tensors, (\d+) B\), model predicts '
                  r'[0-9.]+ MiB \((\d+) B, ([-+0-9.]+)%\); predicted peak at (\S+):')
CHECK = re.compile(r'^memory check: .*: (\w+)$')


def main(path):
    runs, test, run = {}, None, None  # test -> [run fields, measured, predicted, errors, check]
    for line in open(path, errors='replace'):
        line = line.rstrip('\n')
        if m := TEST.match(line):
            test, run = m.group(1), None
        elif m := RUN.match(line):
            run = m.groups()
            runs[test] = [run, [], [], [], '-']
        elif (m := PEAK.match(line)) and test in runs and run:
            _, measured, predicted, error, _ = m.groups()
            r = runs[test]
            r[1].append(measured)
            r[2].append(predicted)
            r[3].append(abs(float(error)))
        elif (m := CHECK.match(line)) and test in runs:
            runs[test][4] = m.group(1)
    print('| test | model | ranks | stages | schedule | M | optimizer | measured B per rank '
          '| predicted B per rank | largest error | check |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    for name in sorted(runs):
        run, measured, predicted, errors, check = runs[name]
        worst = f'{max(errors):.2f}%' if errors else '-'
        print(f'| {name} | ' + ' | '.join(run) + f' | {" ".join(measured)} | {" ".join(predicted)} '
              f'| {worst} | {check} |')
    return 0 if runs else 1


if __name__ == '__main__':
    sys.exit(main(sys.argv[1]))
