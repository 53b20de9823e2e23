"""Retrieval: BM25, embeddings and definitions -> one fused ranking of chunks, symbols and files; `CodeSearch`.

Nothing is imported here: import the modules themselves (`retrieval.bm25`, `retrieval.search`, ...).
"""
