#!/usr/bin/python3
"""CTest: corpus models (bench/model_zoo/corpus.py) at tiny size, exported with their
default dropout, imported and planned by autopar on meshes 8, 2x4 and 8x8.

  zoo_plan_test.py AUTOPAR MODEL...

Fails naming every model and stage that did not pass; prints a line per model."""
import os
import subprocess
import sys
import tempfile
import time

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "python"))
sys.path.insert(0, os.path.join(here, "..", "..", "bench", "model_zoo"))
import autopar_export  # noqa: E402
import corpus  # noqa: E402

MESHES = ("8", "2x4", "8x8")


def check_model(autopar, name, out):
    ex = corpus.build(name, "tiny")
    path = os.path.join(out, name + ".json")
    try:
        autopar_export.export(ex.model, ex.inputs, ex.loss_fn, path,
                              model_inputs=ex.model_inputs, name=name)
    except Exception as e:
        return [f"{name}: export: {type(e).__name__}: {e}"]
    problems = []
    for mesh in MESHES:
        p = subprocess.run([autopar, "plan", "--graph", path, "--mesh", mesh, "--quiet",
                            "--format", "summary"], capture_output=True, text=True)
        if p.returncode != 0:
            problems.append(f"{name} on {mesh}: {(p.stderr or p.stdout).strip()[:300]}")
        elif "fits" not in p.stdout:
            problems.append(f"{name} on {mesh}: no fitting plan:\n{p.stdout[:300]}")
    return problems


def main():
    autopar, names = sys.argv[1], sys.argv[2:]
    problems = []
    with tempfile.TemporaryDirectory() as out:
        for name in names:
            start = time.time()
            found = check_model(autopar, name, out)
            print(f"{name}: {'FAIL' if found else 'ok'} ({time.time() - start:.1f} s)", flush=True)
            problems += found
    for p in problems:
        print("FAIL:", p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
