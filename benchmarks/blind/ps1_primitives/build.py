"""Build the notebooks: correct.ipynb from src/correct.py, each variant from src/<id>.py
(only the cells a variant lists replace the correct ones). Writes manifest.json."""
import copy, json, pathlib, re, sys

ROOT = pathlib.Path(__file__).resolve().parent
RELEASED = pathlib.Path("/work/sv/assignments/ps1_primitives/ps1_primitives.ipynb")
TASKS = {"impl": "ps1.impl", "abstract_eval": "ps1.abstract_eval", "lowering": "ps1.lowering",
         "jvp": "ps1.jvp", "transpose": "ps1.transpose", "batch": "ps1.batch"}


def parse(path):
    """{cell_id: source}, and the header lines (# task:, # kind:, # what:)."""
    text = path.read_text()
    parts = re.split(r"^# %% (\w+)\n", text, flags=re.M)
    header = parts[0]
    cells = {parts[i]: parts[i + 1].rstrip("\n") for i in range(1, len(parts), 2)}
    meta = dict(re.findall(r"^# (\w+): (.*)$", header, flags=re.M))
    return meta, cells


def write(name, cells):
    nb = json.loads(RELEASED.read_text())
    for cell in nb["cells"]:
        if cell.get("id") in cells:
            assert cell["metadata"]["nbgrader"]["solution"], cell["id"]
            src = cells[cell["id"]]
            cell["source"] = src.splitlines(keepends=True)
    (ROOT / f"{name}.ipynb").write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


def main():
    _, correct = parse(ROOT / "src" / "correct.py")
    assert set(correct) == set(TASKS), correct.keys()
    write("correct", correct)
    manifest = {"correct": {"task": "all", "kind": "correct"}}
    for path in sorted((ROOT / "src").glob("*_[0-9][0-9].py")):
        meta, cells = parse(path)
        vid = path.stem
        kind = vid.split("_")[0]
        kind = {"wrong": "wrong", "alt": "alt", "short": "short"}[kind]
        merged = {**correct, **cells}
        write(vid, merged)
        task = meta.get("task") or (TASKS[next(iter(cells))] if len(cells) == 1 else "all")
        manifest[vid] = {"task": task, "kind": kind}
    (ROOT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(len(manifest), "notebooks")


if __name__ == "__main__":
    main()
