"""Pre-fill the embedding cache for a whole benchmark on a borrowed GPU, in three steps.

Cold chunk embedding is the one step of the Lite grid that does not fit 2 CPU cores (about 237k distinct chunks
at 7-41 chunks/s). The cache is keyed by content hash, so the vectors can be computed anywhere the same model
runs and dropped into it; every later index build then only looks them up.

1. ``export`` (here): read the chunks of already-built indexes (the lexical ones chunk exactly like the hybrid
   ones), keep those whose cache key is missing, build the text exactly as the document embedder does, tokenize
   it with the model's own tokenizer (truncation included), and write shards of token ids plus the model's
   weights in float16 (small enough to travel).
2. ``embed`` (on the GPU machine, plain torch + sentence-transformers): run the model on the token ids in float32
   and write float16 vectors per shard.
3. ``import`` (here): put the vectors into the cache. ``verify`` embeds a sample on this CPU with the product's
   own embedder and reports the cosine against the imported vectors, so the shortcut is checked, not assumed.

Usage::

    python benchmarks/gpu_embed.py export --indexes .bench-cache/indexes/lexical \
        --cache .bench-cache/embedding-cache/vectors.sqlite --out .gpu
    python benchmarks/gpu_embed.py embed --work .gpu --out $OUT            # on the GPU machine
    python benchmarks/gpu_embed.py import --vectors /path/to/returned \
        --cache .bench-cache/embedding-cache/vectors.sqlite
    python benchmarks/gpu_embed.py verify --indexes .bench-cache/indexes/lexical \
        --cache .bench-cache/embedding-cache/vectors.sqlite
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

SHARD_SIZE = 80_000  # token-id shards of ~15 MB: one GPU call carries the model (45 MB) and one shard
VECTORS_PER_FILE = 20_000  # 20k float16 vectors of 384 dims = 15.4 MB: returned files must stay under 16 MiB


def _export(args: argparse.Namespace) -> int:
    from haystack import Document
    from safetensors.numpy import load_file, save_file
    from tqdm import tqdm

    from haystack_integrations.components.code_alias.indexing.index_files import artifact_path
    from haystack_integrations.components.code_alias.indexing.store import read_documents
    from haystack_integrations.components.code_alias.retrieval.embedders import (
        CodeDocumentEmbedder,
        EmbeddingCache,
        resolve_model,
    )

    embedder = CodeDocumentEmbedder(cache_dir="")
    cache = EmbeddingCache(Path(args.cache))
    path, _ = resolve_model(embedder.model)
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(path, device="cpu", local_files_only=True)
    model.max_seq_length = embedder.max_seq_length

    texts: dict[str, str] = {}
    folders = sorted(p for p in Path(args.indexes).iterdir() if artifact_path(p, "documents").is_file())
    total = 0
    for folder in tqdm(folders, desc="reading indexes", unit="index"):
        documents: list[Document] = read_documents(artifact_path(folder, "documents"))
        total += len(documents)
        keys = [embedder.cache_key(d) for d in documents]
        fresh = [(k, d) for k, d in zip(keys, documents, strict=True) if k not in texts]
        known = cache.get_many([k for k, _ in fresh])
        for key, document in fresh:
            if key not in known:
                texts[key] = embedder.text_to_embed(document)
    print(f"{total} chunks in {len(folders)} indexes; {len(texts)} distinct chunks missing from the cache")

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("shard-*.npz"):
        old.unlink()
    items = sorted(texts.items())
    for number, start in enumerate(range(0, len(items), SHARD_SIZE)):
        part = items[start : start + SHARD_SIZE]
        ids: list[np.ndarray] = []
        for batch_start in tqdm(range(0, len(part), 2048), desc=f"tokenizing shard {number}", unit="batch"):
            batch = [t for _, t in part[batch_start : batch_start + 2048]]
            encoded = model.tokenize(batch)
            lengths = encoded["attention_mask"].sum(dim=1).tolist()
            rows = encoded["input_ids"].numpy()
            ids.extend(rows[i, :n].astype(np.uint16) for i, n in enumerate(lengths))
        lengths_array = np.array([len(r) for r in ids], dtype=np.uint16)
        np.savez_compressed(
            out / f"shard-{number}.npz",
            keys=np.array([k for k, _ in part]),
            lengths=lengths_array,
            ids=np.concatenate(ids),
        )
        print(f"shard {number}: {len(part)} chunks, {int(lengths_array.sum())} tokens")

    weights = load_file(str(Path(path) / "model.safetensors"))
    model_out = out / "model"
    model_out.mkdir(exist_ok=True)
    save_file(
        {k: v.astype(np.float16) if v.dtype == np.float32 else v for k, v in weights.items()},
        str(model_out / "model.safetensors"),
    )
    for name in [
        "config.json",
        "modules.json",
        "sentence_bert_config.json",
        "config_sentence_transformers.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
        "vocab.txt",
    ]:
        (model_out / name).write_bytes((Path(path) / name).read_bytes())
    (model_out / "1_Pooling").mkdir(exist_ok=True)
    (model_out / "1_Pooling" / "config.json").write_bytes((Path(path) / "1_Pooling" / "config.json").read_bytes())
    return 0


def _embed(args: argparse.Namespace) -> int:
    import torch
    from sentence_transformers import SentenceTransformer

    torch.backends.cuda.matmul.allow_tf32 = False  # match the CPU's float32 arithmetic
    torch.backends.cudnn.allow_tf32 = False
    work = Path(args.work)
    device = args.device
    model = SentenceTransformer(str(work / "model"), device=device, local_files_only=True).float().eval()
    out = Path(args.out)
    shards = sorted(work.glob("shard-*.npz")) if not args.shards else [work / f"shard-{s}.npz" for s in args.shards]
    for shard in shards:
        started = time.perf_counter()
        data = np.load(shard)
        lengths = data["lengths"].astype(np.int64)[: args.limit or None]
        offsets = np.concatenate([[0], np.cumsum(lengths)])
        ids = data["ids"].astype(np.int64)
        order = np.argsort(-lengths, kind="stable")  # similar lengths together: little padding
        vectors = np.zeros((len(lengths), model.get_sentence_embedding_dimension() or 384), dtype=np.float16)
        with torch.inference_mode():
            for start in range(0, len(order), args.batch_size):
                rows = order[start : start + args.batch_size]
                width = int(lengths[rows].max())
                input_ids = np.zeros((len(rows), width), dtype=np.int64)
                mask = np.zeros((len(rows), width), dtype=np.int64)
                for i, row in enumerate(rows):
                    n = lengths[row]
                    input_ids[i, :n] = ids[offsets[row] : offsets[row] + n]
                    mask[i, :n] = 1
                features = {
                    "input_ids": torch.from_numpy(input_ids).to(device),
                    "attention_mask": torch.from_numpy(mask).to(device),
                    "token_type_ids": torch.zeros((len(rows), width), dtype=torch.int64, device=device),
                }
                embedding = model(features)["sentence_embedding"].float().cpu().numpy()
                vectors[rows] = embedding.astype(np.float16)
        keys = data["keys"][: len(lengths)]
        for part, start in enumerate(range(0, len(keys), VECTORS_PER_FILE)):
            end = start + VECTORS_PER_FILE
            # Keys as 40-byte ASCII, not numpy unicode (4 bytes a character): each file must stay under 16 MiB.
            np.savez(
                out / f"vectors-{shard.stem}-{part}.npz", keys=keys[start:end].astype("S40"), vectors=vectors[start:end]
            )
        print(f"{shard.name}: {len(lengths)} chunks in {time.perf_counter() - started:.1f} s", flush=True)
    return 0


def _import(args: argparse.Namespace) -> int:
    from haystack_integrations.components.code_alias.retrieval.embedders import EmbeddingCache

    cache = EmbeddingCache(Path(args.cache))
    count = 0
    for file in sorted(Path(args.vectors).glob("vectors-*.npz")):
        data = np.load(file)
        vectors = data["vectors"].astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)  # undo float16 rounding of the unit length
        keys = [k.decode() if isinstance(k, bytes) else str(k) for k in data["keys"].tolist()]
        for start in range(0, len(keys), 5000):
            cache.put_many(dict(zip(keys[start : start + 5000], vectors[start : start + 5000].tolist(), strict=True)))
        count += len(keys)
        print(f"{file.name}: {len(keys)} vectors")
    print(f"imported {count} vectors into {args.cache}")
    return 0


def _verify(args: argparse.Namespace) -> int:
    """Embed random chunks on this CPU with the product's own embedder (no cache) and compare with the cache."""
    from haystack import Document

    from haystack_integrations.components.code_alias.indexing.index_files import artifact_path
    from haystack_integrations.components.code_alias.indexing.store import read_documents
    from haystack_integrations.components.code_alias.retrieval.embedders import CodeDocumentEmbedder, EmbeddingCache

    cache = EmbeddingCache(Path(args.cache))
    embedder = CodeDocumentEmbedder(cache_dir="", progress_bar=False)
    rng = np.random.default_rng(0)
    folders = sorted(p for p in Path(args.indexes).iterdir() if artifact_path(p, "documents").is_file())
    sample: list[Document] = []
    for folder in rng.choice(folders, size=min(args.indexes_sampled, len(folders)), replace=False):
        documents = read_documents(artifact_path(Path(folder), "documents"))
        sample.extend(documents[i] for i in rng.choice(len(documents), size=args.sample, replace=False))
    cached = cache.get_many([embedder.cache_key(d) for d in sample])
    fresh = embedder.run(sample)["documents"]
    cosines = []
    for document, embedded in zip(sample, fresh, strict=True):
        vector = cached.get(embedder.cache_key(document))
        if vector is None or embedded.embedding is None:
            continue
        a, b = np.asarray(vector), np.asarray(embedded.embedding)
        cosines.append(float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
    result: dict[str, Any] = {
        "sampled": len(sample),
        "found_in_cache": len(cosines),
        "min_cosine": min(cosines) if cosines else None,
        "median_cosine": float(np.median(cosines)) if cosines else None,
    }
    print(json.dumps(result))
    return 0 if cosines and len(cosines) == len(sample) and min(cosines) > 0.9999 else 1


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    export = sub.add_parser("export")
    export.add_argument("--indexes", required=True)
    export.add_argument("--cache", required=True)
    export.add_argument("--out", required=True)
    embed = sub.add_parser("embed")
    embed.add_argument("--work", required=True)
    embed.add_argument("--out", required=True)
    embed.add_argument("--batch-size", type=int, default=512)
    embed.add_argument("--shards", nargs="*", default=[])
    embed.add_argument("--device", default="cuda")
    embed.add_argument("--limit", type=int, default=0, help="first N chunks of each shard (a local dry run)")
    load = sub.add_parser("import")
    load.add_argument("--vectors", required=True)
    load.add_argument("--cache", required=True)
    verify = sub.add_parser("verify")
    verify.add_argument("--indexes", required=True)
    verify.add_argument("--cache", required=True)
    verify.add_argument("--indexes-sampled", type=int, default=8)
    verify.add_argument("--sample", type=int, default=25, help="chunks per sampled index")
    args = parser.parse_args(argv)
    handlers = {"export": _export, "embed": _embed, "import": _import, "verify": _verify}
    return handlers[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
