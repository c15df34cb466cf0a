#!/usr/bin/python3
"""The model-zoo benchmark: every corpus model through autopar end to end.

For each model (bench/model_zoo/corpus.py) at one size:
  export   the step with the model's default dropout (python/autopar_export.py)
  import   `autopar graph --graph` reads it (and counts generic-op nodes)
  plan     `autopar plan` on meshes 8, 2x4 and 8x8 (h100; status, step time, seconds)
  run      the step exported again at dropout 0 with PyTorch's values, run on 4 MPI ranks
           under a plan that shards (`--mesh 2x2 --baseline fsdp`) with
           `--check-against-torch` (max error against PyTorch's loss, gradients and
           buffer updates).

Precision of the run: float32, unless PyTorch disagrees with itself there. Before the run
the step is computed by PyTorch with 1 and with 2 threads and with its inputs perturbed by
one float32 rounding; when the gradients move by more than the check's tolerance
(1e-5 + 1e-3 max|ref| per gradient), float32 cannot tell a wrong split from reordered sums
in that model (e.g. batch norm over a handful of values), and the row is exported and
checked in float64 instead, saying so with the measured ratio. A float32 run that fails
the check is run again in float64 (a rounding difference can flip a ReLU mask or a max-pool
choice: a step discontinuity, not a wrong split; a wrong split fails in float64 too), and
the row shows both errors.

Prints a markdown table (one row per model) and a summary line; --json writes the rows.

  /usr/bin/python3 bench/model_zoo/zoo_bench.py OUTDIR [--size tiny|full] [--models ...]
      [--autopar build/tools/autopar/autopar] [--json FILE]
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
sys.path.insert(0, os.path.join(root, "python"))
sys.path.insert(0, here)
import torch  # noqa: E402

import autopar_export  # noqa: E402
import corpus  # noqa: E402

MESHES = ("8", "2x4", "8x8")
RUN_ARGS = ["--mesh", "2x2", "--baseline", "fsdp"]
RANKS = 4
MPIRUN = ["mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(RANKS),
          "-x", "OMP_NUM_THREADS=1", "-x", "OPENBLAS_NUM_THREADS=1"]


def sh(cmd, timeout):
    start = time.time()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout + p.stderr, time.time() - start
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout} s", time.time() - start


def first_error(text):
    for line in text.splitlines():
        if "error" in line.lower():
            return line.strip()[:200]
    return text.strip().splitlines()[-1][:200] if text.strip() else "?"


def export_step(name, size, path, dropout, values_dir, dtype=None):
    ex = corpus.build(name, size, dropout=dropout, dtype=dtype)
    start = time.time()
    obj = autopar_export.export(ex.model, ex.inputs, ex.loss_fn, path,
                                with_values=values_dir is not None, values_dir=values_dir,
                                model_inputs=ex.model_inputs, name=name)
    return obj, time.time() - start


def self_disagreement(name, size):
    """How far PyTorch's own float32 gradients move, in units of the check's tolerance,
    when nothing but rounding changes: 1 vs 2 threads, and the float inputs perturbed
    by one float32 rounding (x * (1 + 2^-23 * randn)). The max of the two ratios."""
    ex = corpus.build(name, size, dropout=0.0)
    params = [p for p in ex.model.parameters() if p.requires_grad]
    buffers = [(b, b.clone()) for b in ex.model.buffers()]
    noise = torch.Generator().manual_seed(1)
    perturbed = [t * (1 + 2.0 ** -23 * torch.randn(t.shape, generator=noise, dtype=t.dtype))
                 if t.is_floating_point() else t for t in ex.inputs]
    threads = torch.get_num_threads()
    grads = []
    try:
        for n, inputs in ((1, ex.inputs), (2, ex.inputs), (1, perturbed)):
            torch.set_num_threads(n)
            out = ex.model(*inputs[:ex.model_inputs])
            loss = ex.loss_fn(out, *inputs[ex.model_inputs:])
            grads.append(torch.autograd.grad(loss, params, allow_unused=True))
            for b, saved in buffers:
                b.copy_(saved)
    finally:
        torch.set_num_threads(threads)
    worst = 0.0
    for base, *others in zip(*grads):
        if base is None:
            continue
        tol = 1e-5 + 1e-3 * base.abs().max().item()
        for other in others:
            worst = max(worst, (base - other).abs().max().item() / tol)
    return worst


def plan_row(autopar, graph, mesh):
    rc, out, seconds = sh([autopar, "plan", "--graph", graph, "--mesh", mesh, "--hardware", "h100",
                           "--quiet", "--format", "json"], timeout=600)
    if rc != 0:
        return {"ok": False, "why": first_error(out), "s": seconds}
    plan = json.loads(out)
    summary = plan.get("summary", {})
    return {"ok": bool(summary.get("fits")), "status": plan["solver"]["status"],
            "step_ms": summary.get("step_time_s", 0) * 1e3, "s": seconds,
            "why": "" if summary.get("fits") else "does not fit"}


def run_once(autopar, name, size, out_dir, dtype):
    graph = os.path.join(out_dir, f"{name}.run.json")
    values = os.path.join(out_dir, f"{name}.run.values")
    export_step(name, size, graph, 0.0, values, dtype)
    rc, out, seconds = sh(MPIRUN + [autopar, "run", "--graph", graph, "--check-against-torch",
                                    values] + RUN_ARGS, timeout=1200)
    line = next((l for l in out.splitlines() if l.startswith("torch check:")), "")
    match = re.search(r"max abs error (\S+)", line)
    row = {"ok": rc == 0 and line.endswith(": OK"), "s": seconds,
           "max_error": float(match.group(1)) if match else None,
           "dtype": "f64" if dtype else "f32"}
    if not row["ok"]:
        row["why"] = line or first_error(out)
    return row


def run_row(autopar, name, size, out_dir):
    """float32 unless PyTorch's own float32 disagrees with itself; a float32 mismatch is
    run again in float64, where rounding cannot flip a ReLU mask, a max-pool choice or a
    batch-norm over a few values: a wrong split fails there too. The row keeps both."""
    worst = self_disagreement(name, size)
    row = run_once(autopar, name, size, out_dir, torch.float64 if worst > 1 else None)
    row["torch_self_ratio"] = worst
    if not row["ok"] and row["dtype"] == "f32" and row["max_error"] is not None:
        f32 = row
        row = run_once(autopar, name, size, out_dir, torch.float64)
        row["torch_self_ratio"] = worst
        row["f32"] = f32
    return row


def bench_model(name, size, out_dir, autopar):
    row = {"model": name}
    path = os.path.join(out_dir, f"{name}.json")
    try:
        obj, seconds = export_step(name, size, path, None, None)
        row["export"] = {"ok": True, "nodes": len(obj["nodes"]), "s": seconds}
    except Exception as e:  # the row says why; the benchmark goes on
        row["export"] = {"ok": False, "why": f"{type(e).__name__}: {str(e)[:200]}"}
        return row
    rc, out, seconds = sh([autopar, "graph", "--graph", path], timeout=120)
    generic = re.search(r"generic op nodes:\s+(\d+)", out)
    row["import"] = {"ok": rc == 0, "s": seconds, "generic": int(generic.group(1)) if generic else 0}
    if rc != 0:
        row["import"]["why"] = first_error(out)
        return row
    row["plan"] = {mesh: plan_row(autopar, path, mesh) for mesh in MESHES}
    try:
        row["run"] = run_row(autopar, name, size, out_dir)
    except Exception as e:
        row["run"] = {"ok": False, "why": f"{type(e).__name__}: {str(e)[:200]}"}
    return row


def passed(row):
    stages = [row.get("export"), row.get("import"), row.get("run")]
    stages += list(row.get("plan", {}).values()) or [None]
    return all(s is not None and s.get("ok") for s in stages)


def cell_plan(p):
    if not p["ok"]:
        return f"FAIL: {p['why']}"
    return f"{p['step_ms']:.3f} ms ({p['status']}, {p['s']:.1f} s)"


def cell_run(r):
    if r is None:
        return "-"
    note = ""
    if "f32" in r:
        note = f" in f64 (f32: {r['f32']['max_error']:.2g}, over the tolerance)"
    elif r.get("dtype") == "f64":
        note = (f" in f64 (PyTorch's own f32 gradients move {r['torch_self_ratio']:.0f}x the "
                "tolerance under rounding)")
    if not r["ok"]:
        return f"FAIL: {r.get('why', '?')}{note}"
    return f"{r['max_error']:.2g}{note} ({r['s']:.0f} s)"


def table(rows):
    out = ["| model | export (nodes, s) | import (generic nodes) | plan 8 | plan 2x4 | plan 8x8 | "
           "4-rank run vs PyTorch: max error | all |",
           "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        e = row.get("export", {})
        export = f"{e['nodes']}, {e['s']:.1f} s" if e.get("ok") else f"FAIL: {e.get('why')}"
        i = row.get("import")
        imp = "-" if i is None else (f"ok ({i['generic']})" if i["ok"] else f"FAIL: {i['why']}")
        plans = [cell_plan(row["plan"][m]) if "plan" in row else "-" for m in MESHES]
        out.append(f"| {row['model']} | {export} | {imp} | " + " | ".join(plans) +
                   f" | {cell_run(row.get('run'))} | {'pass' if passed(row) else 'FAIL'} |")
    return "\n".join(out)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("out")
    p.add_argument("--size", default="tiny", choices=corpus.SIZES)
    p.add_argument("--models", nargs="+", default=list(corpus.MODELS))
    p.add_argument("--autopar", default=os.path.join(root, "build", "tools", "autopar", "autopar"))
    p.add_argument("--json", help="also write the rows here")
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    rows = []
    for name in args.models:
        start = time.time()
        rows.append(bench_model(name, args.size, args.out, args.autopar))
        print(f"{name}: {'pass' if passed(rows[-1]) else 'FAIL'} ({time.time() - start:.0f} s)",
              file=sys.stderr, flush=True)
    print(table(rows))
    ok = sum(passed(r) for r in rows)
    print(f"\n{ok} of {len(rows)} rows pass every column ({100.0 * ok / len(rows):.1f}%).")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
