"""Retrieval: BM25, embeddings and the definitions of the rewrite's hints (the ranking stage orders them).

Nothing is imported here: import the modules themselves (`retrieval.bm25`, `retrieval.definitions`, ...).
"""
