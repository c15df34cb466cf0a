"""Exports the test models (tiny configs) in one Python process: startup of
torch dominates, so one process for all. Usage: export_models.py OUTDIR [MODEL...]"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "python"))
import autopar_export  # noqa: E402

CONFIGS = {
    "mlp": ["--dim", "16", "--hidden", "32", "--layers", "2", "--classes", "8", "--batch", "8"],
    "transformer_lm": ["--vocab", "32", "--dim", "16", "--heads", "2", "--layers", "2",
                       "--hidden", "32", "--seq", "8", "--batch", "4"],
    "vit_b_16": ["--image", "16", "--patch", "8", "--dim", "16", "--heads", "2", "--layers", "1",
                 "--hidden", "32", "--classes", "8", "--batch", "4"],
}

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name in sys.argv[2:] or CONFIGS:
    autopar_export.main(["--model", name, "--out", os.path.join(out, name + ".json"),
                         "--with-values", os.path.join(out, name + ".values")] + CONFIGS[name])
