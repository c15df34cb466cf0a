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
    # torchvision's own widths (11.2M / 2.2M parameters), small images: graphs only.
    "resnet18": ["--image", "32", "--classes", "8", "--batch", "8"],
    "mobilenet_v2": ["--image", "32", "--classes", "8", "--batch", "8"],
}
GRAPH_ONLY = {"resnet18", "mobilenet_v2"}  # no values: nothing compares their numerics

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
for name in sys.argv[2:] or CONFIGS:
    values = [] if name in GRAPH_ONLY else ["--with-values", os.path.join(out, name + ".values")]
    autopar_export.main(["--model", name, "--out", os.path.join(out, name + ".json")] + values +
                        CONFIGS[name])
